"""TLS for the broker's listeners and for clients: ``ssl.SSLContext``s built once, checked at
start, with errors that say which file and what is wrong in one line.

``ServerTls(cert, key, client_ca=..., client_certificates=...)`` is the broker side: ``context()``
builds the server context every TLS listener shares (the STOMP one here, and HTTPS/WSS through
aiohttp's ``ssl_context=``), after proving the certificate loads, matches its key and is within
its validity period. ``client_ssl_context(ca, cert, key)`` is a client's: it verifies the server's
certificate and host name against the system trust store, or ``ca`` for a private CA, and
presents ``cert``/``key`` when given. ``certificate_subject`` is the RFC 4514 text of a verified
peer certificate's subject, which the security config maps to users (``jms.broker.security``).

Only TLS 1.2 and later, with the ``ssl`` module's secure defaults (``create_default_context``);
nothing here ever turns verification off.
"""

from __future__ import annotations

import ssl
from contextlib import suppress
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

__all__ = [
    "ClientCertificates",
    "ServerTls",
    "TlsConfigError",
    "certificate_subject",
    "client_ssl_context",
]

#: Short names of subject attributes, as RFC 4514 (and ActiveMQ's X500Principal) writes them.
_ATTRIBUTE_NAMES: Final = {
    "commonName": "CN",
    "countryName": "C",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}


class TlsConfigError(ValueError):
    """TLS settings that cannot be used; the one-line message names the file and the problem."""


class ClientCertificates(StrEnum):
    """Whether a TLS listener asks clients for a certificate."""

    NONE = "none"
    OPTIONAL = "optional"  # asked for; a client without one still connects (and logs in)
    REQUIRED = "required"  # the TLS handshake fails without a certificate from --tls-client-ca


class _EncryptedKey(Exception):
    """Raised by the password callback: keys must be unencrypted (the broker cannot prompt)."""


def _no_password() -> str:
    raise _EncryptedKey


def _load_chain(context: ssl.SSLContext, cert: Path, key: Path, whose: str) -> None:
    for path, what in ((cert, "certificate"), (key, "key")):
        if not path.is_file():
            raise TlsConfigError(f"{whose} {what} {path}: no such file")
    try:
        context.load_cert_chain(cert, key, password=_no_password)
    except _EncryptedKey:
        raise TlsConfigError(
            f"{key}: the private key is encrypted with a passphrase; give an unencrypted key "
            f"(openssl pkey -in {key} -out plain.key), readable only by the broker's user"
        ) from None
    except ssl.SSLError as error:
        if error.reason == "KEY_VALUES_MISMATCH":
            raise TlsConfigError(
                f"{key} is not the private key of the certificate {cert}"
            ) from None
        raise TlsConfigError(
            f"{cert} / {key}: not a PEM certificate and its PEM private key "
            f"(OpenSSL: {error.reason or error})"
        ) from None
    except OSError as error:
        raise TlsConfigError(f"cannot read {cert} / {key}: {error.strerror or error}") from None


def _check_usable(cert: Path, key: Path) -> None:
    """A TLS handshake in memory with a client that trusts nothing but the certificate itself:
    proves it loads, matches its key and is within its validity period (ssl has no public way
    to read a certificate's dates other than verifying it)."""
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _load_chain(server, cert, key, "--tls-cert/--tls-key: the")
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    probe.check_hostname = False
    probe.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # the leaf itself is the trust anchor
    probe.load_verify_locations(cadata=_leaf_pem(cert))
    server_in, server_out, client_in, client_out = (ssl.MemoryBIO() for _ in range(4))
    server_side = server.wrap_bio(server_in, server_out, server_side=True)
    client_side = probe.wrap_bio(client_in, client_out)
    try:
        for _ in range(10):
            try:
                client_side.do_handshake()
                return
            except ssl.SSLWantReadError:
                server_in.write(client_out.read())
            with suppress(ssl.SSLWantReadError):
                server_side.do_handshake()
            client_in.write(server_out.read())
    except ssl.SSLCertVerificationError as error:
        raise TlsConfigError(f"--tls-cert {cert}: {_verify_reason(error)}") from None
    except ssl.SSLError as error:
        raise TlsConfigError(
            f"--tls-cert {cert}: a TLS handshake with it fails: {error.reason or error}"
        ) from None
    raise TlsConfigError(f"--tls-cert {cert}: a TLS handshake with it does not complete")


def _leaf_pem(cert: Path) -> str:
    text = cert.read_text(encoding="ascii", errors="replace")
    end = "-----END CERTIFICATE-----"
    return text[: text.index(end) + len(end)] + "\n"


def _verify_reason(error: ssl.SSLCertVerificationError) -> str:
    reason = error.verify_message or str(error)
    return reason[0].lower() + reason[1:] if reason else reason


@dataclass(frozen=True, slots=True)
class ServerTls:
    """The TLS settings of a broker: its certificate chain and key (PEM files) and, for client
    certificates, the CA that issues them and whether they are required."""

    cert: Path
    key: Path
    client_ca: Path | None = None
    client_certificates: ClientCertificates = ClientCertificates.NONE

    def __post_init__(self) -> None:
        if self.client_certificates is not ClientCertificates.NONE and self.client_ca is None:
            raise TlsConfigError(
                f"client certificates {self.client_certificates.value} needs --tls-client-ca "
                "PEM: the CA whose certificates clients present"
            )

    def context(self) -> ssl.SSLContext:
        """The server context (TLS 1.2+), after checking every file; ``TlsConfigError`` says what
        is wrong in one line."""
        _check_usable(self.cert, self.key)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        _load_chain(context, self.cert, self.key, "--tls-cert/--tls-key: the")
        if self.client_ca is not None:
            if not self.client_ca.is_file():
                raise TlsConfigError(f"--tls-client-ca {self.client_ca}: no such file")
            try:
                context.load_verify_locations(cafile=self.client_ca)
            except ssl.SSLError as error:
                raise TlsConfigError(
                    f"--tls-client-ca {self.client_ca}: not PEM CA certificates "
                    f"(OpenSSL: {error.reason or error})"
                ) from None
            context.verify_mode = (
                ssl.CERT_REQUIRED
                if self.client_certificates is ClientCertificates.REQUIRED
                else ssl.CERT_OPTIONAL
            )
        return context

    def describe(self) -> str:
        """How clients are asked for certificates, for the startup line."""
        if self.client_ca is None or self.client_certificates is ClientCertificates.NONE:
            return "TLS"
        return f"TLS, client certificates {self.client_certificates.value}"


def client_ssl_context(
    ca: str | Path | None = None, cert: str | Path | None = None, key: str | Path | None = None
) -> ssl.SSLContext:
    """A client's context: verifies the server's certificate and host name against ``ca`` (PEM)
    or the system trust store, and presents ``cert``/``key`` when given (both or neither)."""
    if (cert is None) != (key is None):
        raise TlsConfigError("a client certificate needs both its certificate and its key file")
    if ca is not None and not Path(ca).is_file():
        raise TlsConfigError(f"CA file {ca}: no such file")
    try:
        context = ssl.create_default_context(cafile=ca)
    except ssl.SSLError as error:
        raise TlsConfigError(
            f"CA file {ca}: not PEM CA certificates (OpenSSL: {error.reason or error})"
        ) from None
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert is not None and key is not None:
        _load_chain(context, Path(cert), Path(key), "the client")
    return context


def certificate_subject(decoded: dict[str, Any]) -> str:
    """The subject of a certificate as ``getpeercert()`` decodes it, in RFC 4514 form, most
    specific attribute first (``CN=orders,O=Example``), as ``openssl x509 -noout -subject
    -nameopt RFC2253`` prints it."""
    relative_names = []
    for relative in reversed(decoded.get("subject", ())):
        relative_names.append(
            "+".join(
                f"{_ATTRIBUTE_NAMES.get(name, name)}={_escape(value)}" for name, value in relative
            )
        )
    return ",".join(relative_names)


def _escape(value: str) -> str:
    escaped = "".join(f"\\{char}" if char in ',+"\\<>;=' else char for char in value)
    if escaped[:1] in (" ", "#"):
        escaped = "\\" + escaped
    if escaped.endswith(" ") and not escaped.endswith("\\ "):
        escaped = escaped[:-1] + "\\ "
    return escaped
