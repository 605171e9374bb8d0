"""STOMP over TLS with a throwaway CA made by the openssl command: our client and stomp-py
exchange messages; a plain client on the TLS port and a TLS client on the plain port fail with a
clear error; a client that does not trust the CA, or reaches the broker by a name its
certificate does not carry, is refused and told why; client certificates log in as the user the
security config maps their subject to; unusable server certificates are one-line errors at
start; failed logins slow down their client address."""

from __future__ import annotations

import logging
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jms import ConnectionFactory, Queue, TextMessage
from jms.broker import Broker
from jms.broker.security import LoginThrottle, Security, hash_password
from jms.cli import app
from jms.client import client_ssl_context
from jms.errors import IllegalStateException, JMSException, JMSSecurityException
from jms.stomp.server import StompServer
from jms.stomp.tls import ClientCertificates, ServerTls, TlsConfigError
from tests.certificates import CLIENT_SUBJECT, Certificates, make_certificates
from tests.stomp.serving import ServedBroker, broker_process


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def broker() -> Iterator[Broker]:
    broker = Broker()
    try:
        yield broker
    finally:
        broker.close()


def _serve(broker: Broker, tls: ServerTls, **options: Any) -> ServedBroker:
    options.setdefault("port", 0)
    return ServedBroker(broker, tls_port=0, ssl_context=tls.context(), **options)


def _receive_one(url: str, queue: Queue, **options: Any) -> str:
    with ConnectionFactory(url, **options).create_connection() as connection:
        connection.start()
        message = connection.create_session().create_consumer(queue).receive(5.0)
        assert message is not None
        body = (
            message.get_body(str) if isinstance(message, TextMessage) else message.get_body(bytes)
        )
        return body if isinstance(body, str) else body.decode("utf-8")


def test_our_client_and_stomp_py_exchange_messages_over_tls(
    broker: Broker, certificates: Certificates
) -> None:
    stomp = pytest.importorskip("stomp", reason="stomp-py (a dev dependency) is not installed")
    trusted = client_ssl_context(certificates.ca)
    with _serve(broker, ServerTls(certificates.server_cert, certificates.server_key)) as served:
        server = served.server
        assert server is not None
        url = f"stomp+ssl://localhost:{server.tls_port}"
        assert server.urls == [
            f"stomp://127.0.0.1:{server.port}",
            f"stomp+ssl://127.0.0.1:{server.tls_port}",
        ]
        with ConnectionFactory(url, ssl_context=trusted).create_connection() as connection:
            producer = connection.create_session().create_producer(Queue("tls.in"))
            producer.send(TextMessage("from jms over TLS"))

        received: list[str] = []
        client = stomp.Connection12([("localhost", server.tls_port)])
        client.set_ssl(for_hosts=[("localhost", server.tls_port)], ca_certs=str(certificates.ca))

        class Listener(stomp.ConnectionListener):  # type: ignore[misc]
            def on_message(self, frame: Any) -> None:
                received.append(frame.body)

        client.set_listener("collect", Listener())
        client.connect(wait=True)
        try:
            client.subscribe("/queue/tls.in", id="1", ack="auto")
            client.send("/queue/tls.out", "from stomp-py over TLS", receipt="sent")
            deadline = time.monotonic() + 5
            while not received and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            client.disconnect()
        assert received == ["from jms over TLS"]
        assert _receive_one(url, Queue("tls.out"), ssl_context=trusted) == "from stomp-py over TLS"
        assert server.counters.connections_total == 3  # one server counts both listeners


def test_the_wrong_kind_of_client_on_each_port_fails_cleanly(
    broker: Broker, certificates: Certificates
) -> None:
    trusted = client_ssl_context(certificates.ca)
    with _serve(broker, ServerTls(certificates.server_cert, certificates.server_key)) as served:
        server = served.server
        assert server is not None
        with pytest.raises(JMSException, match=r"closed the connection .*\(a TLS port\?\)"):
            ConnectionFactory(f"stomp://127.0.0.1:{server.tls_port}").create_connection()
        with socket.create_connection(("127.0.0.1", server.tls_port), timeout=5) as raw:
            raw.sendall(b"CONNECT\naccept-version:1.2\n\n\0")
            assert b"CONNECTED" not in raw.recv(4096)  # an alert or nothing, then the end
        with pytest.raises(JMSException, match=r"TLS handshake with .* failed.*is it a TLS port"):
            ConnectionFactory(
                f"stomp+ssl://localhost:{server.port}", ssl_context=trusted
            ).create_connection()
        # The listeners serve on after the misfits.
        _send(f"stomp+ssl://localhost:{server.tls_port}", Queue("after"), ssl_context=trusted)
        assert _receive_one(f"stomp://127.0.0.1:{server.port}", Queue("after")) == "hello"


def _send(url: str, queue: Queue, text: str = "hello", **options: Any) -> None:
    with ConnectionFactory(url, **options).create_connection() as connection:
        connection.create_session().create_producer(queue).send(TextMessage(text))


def test_an_unverifiable_server_is_refused_with_the_reason(
    broker: Broker, certificates: Certificates
) -> None:
    tls = ServerTls(certificates.localhost_only_cert, certificates.server_key)
    with _serve(broker, tls, port=None) as served:
        server = served.server
        assert server is not None
        port = server.tls_port
        with pytest.raises(JMSException, match=r"unable to get local issuer.*--ca CA_PEM"):
            ConnectionFactory(f"stomp+ssl://localhost:{port}").create_connection()  # system CAs
        trusted = client_ssl_context(certificates.ca)
        with pytest.raises(JMSException, match=r"(?i)address mismatch.*names\)"):
            ConnectionFactory(
                f"stomp+ssl://127.0.0.1:{port}", ssl_context=trusted
            ).create_connection()
        _send(f"stomp+ssl://localhost:{port}", Queue("verified"), ssl_context=trusted)
        with pytest.raises(IllegalStateException, match="no plain STOMP listener"):
            _ = server.port


def test_tls_options_never_downgrade_silently(certificates: Certificates) -> None:
    with pytest.raises(JMSException, match="ssl_context option is for stomp\\+ssl"):
        ConnectionFactory("stomp://localhost:61613", ssl_context=ssl.create_default_context())
    with pytest.raises(TypeError, match=r"ssl_context must be an ssl\.SSLContext"):
        ConnectionFactory("stomp+ssl://localhost:61614", ssl_context="yes")
    with pytest.raises(TlsConfigError, match=r"needs both its certificate and its key"):
        client_ssl_context(certificates.ca, cert=certificates.client_cert)
    with pytest.raises(TlsConfigError, match=r"CA file .*missing\.pem: no such file"):
        client_ssl_context(certificates.ca.with_name("missing.pem"))


def _certificate_security() -> Security:
    return Security.from_mapping(
        {
            "allow_anonymous": False,
            "users": {
                "orders": {"certificate": CLIENT_SUBJECT},
                "alice": {"password": hash_password("secret", scheme="pbkdf2_sha256")},
            },
            "permissions": [
                {"destination": "queue://orders.*", "send": ["orders"], "receive": ["alice"]},
            ],
        }
    )


@pytest.mark.parametrize("required", [False, True])
def test_a_client_certificate_logs_in_as_its_user_whose_permissions_apply(
    broker: Broker, certificates: Certificates, required: bool
) -> None:
    tls = ServerTls(
        certificates.server_cert,
        certificates.server_key,
        certificates.ca,
        ClientCertificates.REQUIRED if required else ClientCertificates.OPTIONAL,
    )
    with _serve(broker, tls, port=None, security=_certificate_security()) as served:
        assert served.server is not None
        url = f"stomp+ssl://localhost:{served.server.tls_port}"
        with_cert = client_ssl_context(
            certificates.ca, certificates.client_cert, certificates.client_key
        )
        _send(url, Queue("orders.new"), "by certificate", ssl_context=with_cert)
        with (
            ConnectionFactory(url, ssl_context=with_cert).create_connection() as connection,
            pytest.raises(JMSSecurityException),
        ):
            connection.create_session().create_producer(Queue("audit")).send(TextMessage("x"))
        with pytest.raises(JMSSecurityException, match="certificate stands for user 'orders'"):
            ConnectionFactory(url, ssl_context=with_cert).create_connection("alice", "secret")
        other_ca = client_ssl_context(
            certificates.ca, certificates.other_client_cert, certificates.other_client_key
        )
        with pytest.raises(JMSException, match=r"closed the connection .*refuses this client's"):
            ConnectionFactory(url, ssl_context=other_ca).create_connection()
        no_cert = client_ssl_context(certificates.ca)
        if required:
            with pytest.raises(JMSException, match=r"closed the connection .*or the lack of one"):
                ConnectionFactory(url, ssl_context=no_cert).create_connection("alice", "secret")
        else:
            with pytest.raises(JMSSecurityException, match="does not accept anonymous"):
                ConnectionFactory(url, ssl_context=no_cert).create_connection()
            assert (
                _receive_one(
                    url, Queue("orders.new"), ssl_context=no_cert, user="alice", password="secret"
                )
                == "by certificate"
            )


@pytest.mark.parametrize(
    ("cert", "key", "complaint"),
    [
        ("expired_cert", "server_key", r"--tls-cert .*expired.pem: certificate has expired"),
        ("server_cert", "client_key", r"client.key is not the private key of the certificate"),
        ("ca", "ca", r"not a PEM certificate and its PEM private key|not the private key"),
        ("server_cert", "missing", r"--tls-key: the key .*missing: no such file"),
        ("server_cert", "encrypted_key", r"encrypted.key: the private key is encrypted"),
    ],
)
def test_unusable_server_certificates_are_one_line_errors_at_start(
    certificates: Certificates, tmp_path: Path, cert: str, key: str, complaint: str
) -> None:
    def path(name: str) -> Path:
        return tmp_path / "missing" if name == "missing" else getattr(certificates, name)

    with pytest.raises(TlsConfigError, match=complaint) as caught:
        ServerTls(path(cert), path(key)).context()
    assert "\n" not in str(caught.value)
    result = CliRunner().invoke(
        app,
        [
            *("broker", "--memory", "--tls-only", "--tls-port", "0"),
            *("--tls-cert", str(path(cert)), "--tls-key", str(path(key))),
        ],
    )
    assert result.exit_code == 1
    assert "error:" in result.output


def test_client_certificates_need_the_ca_that_issues_them(certificates: Certificates) -> None:
    with pytest.raises(TlsConfigError, match="required needs --tls-client-ca"):
        ServerTls(
            certificates.server_cert, certificates.server_key, None, ClientCertificates.REQUIRED
        )


def test_failed_logins_slow_down_their_address_and_are_logged(
    broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    security = Security.from_mapping({"users": {"alice": {"password": hash_password("secret")}}})
    throttle = LoginThrottle(first_delay_s=0.15, max_delay_s=0.6)
    with (
        caplog.at_level(logging.WARNING, logger="jms.stomp.server"),
        ServedBroker(broker, security=security, login_throttle=throttle) as served,
    ):
        factory = ConnectionFactory(served.url)

        def attempt(password: str) -> float:
            started = time.monotonic()
            with suppress(JMSSecurityException):
                factory.create_connection("alice", password).close()
            return time.monotonic() - started

        first = attempt("guess-1")
        # Each failure doubles the wait of the next login: 0.15, 0.3, 0.6 (the most) s.
        waits = [attempt(f"guess-{n}") for n in range(2, 5)]
        right = attempt("secret")  # waits its turn too, then clears the address
        after = attempt("secret")
    assert waits[2] > first + 0.3, (first, waits)  # the first login did not wait
    assert waits[0] >= 0.1 and waits[1] >= 0.25 and waits[2] >= 0.5, waits
    assert right >= 0.5 and after < right, (right, after)
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refusals) == 4
    assert "4 failed login(s) in a row from 127.0.0.1: its logins now wait 0.6 s" in refusals[-1]
    assert "secret" not in " ".join(refusals) and "guess" not in " ".join(refusals)


def test_a_login_that_would_wait_past_the_connect_timeout_is_refused_at_once(
    broker: Broker,
) -> None:
    security = Security.from_mapping({"users": {"alice": {"password": hash_password("secret")}}})
    throttle = LoginThrottle(first_delay_s=5.0, max_delay_s=5.0)
    with ServedBroker(
        broker, security=security, login_throttle=throttle, connect_timeout_s=1.0
    ) as served:
        factory = ConnectionFactory(served.url)
        with pytest.raises(JMSSecurityException, match="wrong user name or password"):
            factory.create_connection("alice", "guess")
        started = time.monotonic()
        with pytest.raises(
            JMSSecurityException,
            match=r"too many failed logins from 127.0.0.1: try again in [45] s",
        ):
            factory.create_connection("alice", "secret")
        assert time.monotonic() - started < 1.0


def test_the_command_line_over_tls(certificates: Certificates, tmp_path: Path) -> None:
    config = tmp_path / "broker.toml"
    config.write_text(
        f'allow_anonymous = false\n[users.orders]\ncertificate = "{CLIENT_SUBJECT}"\n'
        '[[permissions]]\ndestination = "*"\nsend = ["orders"]\nreceive = ["orders"]\n'
        'browse = ["orders"]\nadmin = ["orders"]\n'
    )
    server_files = ("--tls-cert", str(certificates.server_cert))
    server_files += ("--tls-key", str(certificates.server_key))
    with broker_process(
        *("--memory", "--port", "0", "--tls-port", "0", "--config", str(config)),
        *(*server_files, "--tls-client-ca", str(certificates.ca), "--tls-client-certs", "required"),
    ) as (process, line):
        found = re.search(
            r"listening on stomp://127\.0\.0\.1:\d+ \(plain\), "
            r"stomp\+ssl://127\.0\.0\.1:(\d+) \(TLS, client certificates required\) \|",
            line,
        )
        assert found, line
        url = f"stomp+ssl://localhost:{found.group(1)}"
        client = ("--url", url, "--ca", str(certificates.ca))
        client += ("--cert", str(certificates.client_cert), "--key", str(certificates.client_key))
        runner = CliRunner()
        sent = runner.invoke(app, ["send", "orders", "over TLS", *client])
        assert sent.exit_code == 0, sent.output
        stats = runner.invoke(app, ["stats", "--interval", "0.1", *client], env={"COLUMNS": "200"})
        assert stats.exit_code == 0 and "queue://orders" in stats.output, stats.output
        received = runner.invoke(app, ["receive", "orders", *client])
        assert received.exit_code == 0 and received.output.splitlines()[0] == "over TLS"
        untrusted = runner.invoke(app, ["receive", "orders", "--url", url])
        assert untrusted.exit_code == 1 and "cannot be verified" in untrusted.output
        plain = runner.invoke(
            app, ["receive", "orders", "--url", "stomp://127.0.0.1:1", *client[2:]]
        )
        assert plain.exit_code == 2  # a usage error
        assert "--ca, --cert, --key: for stomp+ssl:// URLs only" in plain.output
        assert process.poll() is None


def test_a_server_needs_a_listener_and_says_which_it_lacks(broker: Broker) -> None:
    with pytest.raises(ValueError, match="needs a port, an ssl_context, or both"):
        StompServer(broker, port=None)
    with pytest.raises(IllegalStateException, match="not listening"):
        _ = StompServer(broker).url
    runner = CliRunner()
    result = runner.invoke(app, ["broker", "--memory", "--tls-only"])
    assert (
        result.exit_code == 1 and "needs a TLS one: give --tls-cert and --tls-key" in result.output
    )
    result = runner.invoke(app, ["broker", "--memory", "--tls-cert", "server.pem"])
    assert result.exit_code == 1 and "needs both --tls-cert and --tls-key" in result.output


def test_one_tls_connection_carries_large_messages_both_ways_at_once(
    broker: Broker, certificates: Certificates
) -> None:
    """The reader thread takes deliveries while the application sends large messages on the
    same connection: TLS records split across reads, writes that wait for room, one lock."""
    count, body = 200, "x" * 65536
    with _serve(broker, ServerTls(certificates.server_cert, certificates.server_key)) as served:
        assert served.server is not None
        url = f"stomp+ssl://localhost:{served.server.tls_port}"
        factory = ConnectionFactory(url, ssl_context=client_ssl_context(certificates.ca))
        with factory.create_connection() as connection:
            session = connection.create_session()
            received: list[str] = []
            done = threading.Event()

            def on_message(message: Any) -> None:
                received.append(message.get_body(str))
                if len(received) == count:
                    done.set()

            session.create_consumer(Queue("duplex")).set_message_listener(on_message)
            connection.start()
            producer = connection.create_session().create_producer(Queue("duplex"))
            for number in range(count):
                producer.send(TextMessage(f"{number}:{body}"))
            assert done.wait(60), len(received)
    assert [text.partition(":")[0] for text in received] == [str(n) for n in range(count)]


def test_a_tls_port_in_use_is_named_and_the_server_can_start_again(
    broker: Broker, certificates: Certificates
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        server_files = ("--tls-cert", str(certificates.server_cert))
        server_files += ("--tls-key", str(certificates.server_key))
        result = CliRunner().invoke(
            app, ["broker", "--memory", "--port", "0", "--tls-port", str(busy), *server_files]
        )
        assert result.exit_code == 1
        assert f"127.0.0.1:{busy}: the port is in use" in result.output
        assert "--port or --tls-port" in result.output

        tls = ServerTls(certificates.server_cert, certificates.server_key).context()
        with pytest.raises(OSError):
            ServedBroker(broker, port=0, tls_port=busy, ssl_context=tls).start()
    served = ServedBroker(broker, port=0, tls_port=0, ssl_context=tls).start()
    try:
        assert served.server is not None and len(served.server.urls) == 2
    finally:
        served.stop()


def test_the_http_port_serves_https_and_wss_with_the_same_certificate(
    certificates: Certificates,
) -> None:
    # With --tls-cert, the console, /metrics and STOMP over WebSocket are HTTPS and WSS with the
    # broker's certificate; a client that does not trust its CA is refused, a plain one fails.
    import asyncio

    import aiohttp

    arguments = ["--memory", "--port", "0", "--http-port", "0", "--tls-port", "0"]
    arguments += ["--tls-cert", str(certificates.server_cert)]
    arguments += ["--tls-key", str(certificates.server_key)]
    with broker_process(*arguments) as (process, line):
        found = re.search(r"console: (https://127\.0\.0\.1:\d+)/ \| websocket: (wss://\S+)", line)
        assert found is not None, line
        https_url, wss_url = found.groups()

        async def exchange() -> tuple[str, str]:
            trusted = ssl.create_default_context(cafile=str(certificates.ca))
            async with aiohttp.ClientSession() as session:
                async with session.get(f"{https_url}/metrics", ssl=trusted) as response:
                    metrics = await response.text()
                async with session.ws_connect(
                    wss_url, protocols=("v12.stomp",), ssl=trusted
                ) as socket_:
                    await socket_.send_str("CONNECT\naccept-version:1.2\nhost:x\n\n\0")
                    connected = await socket_.receive(timeout=10)
                with pytest.raises(aiohttp.ClientConnectorCertificateError):
                    await session.get(f"{https_url}/metrics", ssl=ssl.create_default_context())
                plain = https_url.replace("https://", "http://")
                with pytest.raises(aiohttp.ClientError):
                    await session.get(f"{plain}/metrics")
            return metrics, str(connected.data)

        metrics, connected = asyncio.run(exchange())
        assert "# TYPE jms_stomp_connections gauge" in metrics
        assert connected.startswith("CONNECTED\n")
        process.terminate()
