"""Throwaway certificates made with the ``openssl`` command, for TLS tests.

``make_certificates(directory)`` writes a test CA, a server certificate for ``localhost`` (and
127.0.0.1) signed by it, a client certificate signed by it, a second CA with a client
certificate of its own, an expired server certificate and the paths of them all. Tests call
``require_openssl()`` first: without the command they skip and say so.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["CLIENT_SUBJECT", "Certificates", "make_certificates", "require_openssl"]

#: The subject of the client certificate the test CA issues, as RFC 4514 writes it.
CLIENT_SUBJECT = "CN=orders-service,O=Example"


@dataclass(frozen=True, slots=True)
class Certificates:
    ca: Path
    server_cert: Path
    server_key: Path
    localhost_only_cert: Path  # names only localhost: 127.0.0.1 does not match it
    expired_cert: Path
    encrypted_key: Path  # server_key under the passphrase "secret"
    client_cert: Path
    client_key: Path
    other_ca: Path
    other_client_cert: Path
    other_client_key: Path


def require_openssl() -> str:
    found = shutil.which("openssl")
    if found is None:
        pytest.skip("the openssl command is not installed: it makes the throwaway CA of TLS tests")
    return found


def _run(*arguments: str | Path, cwd: Path) -> None:
    subprocess.run(
        [require_openssl(), *map(str, arguments)],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=60,
    )


def _ca(directory: Path, name: str) -> tuple[Path, Path]:
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    _run(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", key, "-out", cert, "-days", "2", "-subj", f"/CN={name}",
        cwd=directory,
    )  # fmt: skip
    return cert, key


def _issue(
    directory: Path,
    name: str,
    subject: str,
    ca: tuple[Path, Path],
    *,
    extensions: str,
    days: int = 1,
    key: Path | None = None,
) -> tuple[Path, Path]:
    cert = directory / f"{name}.pem"
    key = key or directory / f"{name}.key"
    request = directory / f"{name}.csr"
    new_key = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key)
    _run(
        "req", "-new", *(new_key if not key.exists() else ("-key", key)), "-out", request,
        "-subj", subject,
        cwd=directory,
    )  # fmt: skip
    extension_file = directory / f"{name}.ext"
    extension_file.write_text(extensions, encoding="ascii")
    _run(
        "x509", "-req", "-in", request, "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial",
        "-out", cert, "-days", str(days), "-extfile", extension_file,
        cwd=directory,
    )  # fmt: skip
    return cert, key


def make_certificates(directory: Path) -> Certificates:
    require_openssl()
    ca = _ca(directory, "test-ca")
    other_ca = _ca(directory, "other-ca")
    server = "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
    client = "extendedKeyUsage=clientAuth\n"
    server_cert, server_key = _issue(
        directory, "server", "/O=Example/CN=localhost", ca, extensions=server
    )
    localhost_only, _ = _issue(
        directory,
        "localhost-only",
        "/CN=localhost",
        ca,
        extensions="subjectAltName=DNS:localhost\n",
        key=server_key,
    )
    expired, _ = _issue(
        directory, "expired", "/CN=localhost", ca, extensions=server, days=-1, key=server_key
    )
    client_cert, client_key = _issue(
        directory, "client", "/O=Example/CN=orders-service", ca, extensions=client
    )
    other_cert, other_key = _issue(
        directory, "other-client", "/O=Example/CN=orders-service", other_ca, extensions=client
    )
    encrypted_key = directory / "encrypted.key"
    _run(
        "pkey", "-in", server_key, "-aes128", "-passout", "pass:secret", "-out", encrypted_key,
        cwd=directory,
    )  # fmt: skip
    return Certificates(
        ca=ca[0],
        server_cert=server_cert,
        server_key=server_key,
        localhost_only_cert=localhost_only,
        expired_cert=expired,
        encrypted_key=encrypted_key,
        client_cert=client_cert,
        client_key=client_key,
        other_ca=other_ca[0],
        other_client_cert=other_cert,
        other_client_key=other_key,
    )
