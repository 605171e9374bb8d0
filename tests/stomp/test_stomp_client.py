"""``StompClient`` against scripted servers (a thread answering from a plain socket) and against
ours: connecting and refusals, heart-beats both ways, a server that falls silent or goes away,
ERRORs answering requests, and refusals a jms broker answers in a RECEIPT."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from jms.errors import IllegalStateException, JMSException, JMSSecurityException
from jms.stomp import Frame, HeartBeatOffer
from jms.stomp.client import StompClient
from tests.stomp.serving import ServedBroker

Script = Callable[[socket.socket], None]


@contextmanager
def scripted_server(script: Script) -> Iterator[int]:
    """A one-client server on a free port that runs ``script`` on the accepted socket."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            script(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        listener.close()
        thread.join(10)


def _read_frame(connection: socket.socket) -> bytes:
    data = b""
    while b"\0" not in data:
        chunk = connection.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def _until_closed(connection: socket.socket) -> None:
    """Say nothing until the client hangs up (at most 5 s)."""
    connection.settimeout(5)
    try:
        while connection.recv(4096):
            pass
    except OSError:
        pass


def _silent_after_connect(heart_beat: str) -> Script:
    def script(connection: socket.socket) -> None:
        _read_frame(connection)
        connection.sendall(f"CONNECTED\nversion:1.2\nheart-beat:{heart_beat}\n\n\0".encode())
        _until_closed(connection)

    return script


def test_a_server_silent_past_its_heart_beat_promise_is_lost() -> None:
    lost: list[JMSException] = []
    with scripted_server(_silent_after_connect("100,0")) as port:
        client = StompClient(
            "127.0.0.1", port, heart_beat=HeartBeatOffer(0, 100), on_lost=lost.append
        )
        deadline = time.monotonic() + 2
        while not lost and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(lost) == 1 and "promised heart-beats every 100 ms" in lost[0].reason
        with pytest.raises(JMSException, match="is lost"):
            client.send(Frame("SEND", (("destination", "/queue/a"),)))
        client.close()


def test_the_client_beats_while_idle() -> None:
    received: list[bytes] = []

    def script(connection: socket.socket) -> None:
        _read_frame(connection)
        connection.sendall(b"CONNECTED\nversion:1.2\nheart-beat:0,100\n\n\0")
        connection.settimeout(1)
        end = time.monotonic() + 0.7
        while time.monotonic() < end:
            try:
                received.append(connection.recv(100))
            except TimeoutError:
                break

    with scripted_server(script) as port:
        client = StompClient("127.0.0.1", port, heart_beat=HeartBeatOffer(100, 0))
        time.sleep(0.8)
        client.close(timeout_s=0.2)
    assert b"".join(received).count(b"\n") >= 3


def test_a_server_that_goes_away_is_reported_once() -> None:
    def script(connection: socket.socket) -> None:
        _read_frame(connection)
        connection.sendall(b"CONNECTED\nversion:1.2\n\n\0")
        _read_frame(connection)  # the request, then hang up without answering

    lost: list[JMSException] = []
    with scripted_server(script) as port:
        client = StompClient("127.0.0.1", port, on_lost=lost.append)
        with pytest.raises(JMSException, match="closed the connection"):
            client.request(Frame("SEND", (("destination", "/queue/a"),)), timeout_s=5)
        client.close()
    assert len(lost) == 1


def test_connecting_nowhere_says_where() -> None:
    with socket.create_server(("127.0.0.1", 0)) as placeholder:
        port = placeholder.getsockname()[1]
    with pytest.raises(JMSException, match=f"cannot connect to stomp://127.0.0.1:{port}"):
        StompClient("127.0.0.1", port)


def test_a_refused_connect_raises_the_exception_the_error_names() -> None:
    def script(connection: socket.socket) -> None:
        _read_frame(connection)
        connection.sendall(
            b"ERROR\nmessage:login 'x' refused\njms-exception:JMSSecurityException\n\n\0"
        )

    with scripted_server(script) as port, pytest.raises(JMSSecurityException, match="refused"):
        StompClient("127.0.0.1", port)


def test_a_server_that_never_answers_connect_times_out() -> None:
    with (
        scripted_server(_until_closed) as port,
        pytest.raises(JMSException, match=r"did not answer CONNECT within 0\.3 s"),
    ):
        StompClient("127.0.0.1", port, connect_timeout_s=0.3)


def test_refusals_and_errors_from_our_broker(served: ServedBroker) -> None:
    lost: list[JMSException] = []
    client = StompClient(
        "127.0.0.1", served.port, extra_headers=(("jms-extensions", "1"),), on_lost=lost.append
    )
    try:
        assert client.connected.header("jms-extensions") == "1"
        assert client.server.startswith("jms/")
        with pytest.raises(IllegalStateException, match="needs a client ID"):
            client.request(
                Frame(
                    "SUBSCRIBE",
                    (
                        ("destination", "/topic/t"),
                        ("id", "1"),
                        ("jms-subscription-name", "d"),
                        ("jms-durable", "true"),
                    ),
                )
            )
        client.request(Frame("SEND", (("destination", "/queue/a"),), b"still connected"))
        with pytest.raises(JMSException, match="transaction 'nope' was not begun"):
            client.request(Frame("COMMIT", (("transaction", "nope"),)))
        deadline = time.monotonic() + 5  # a protocol mistake ends the connection
        while not lost and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(lost) == 1 and "transaction 'nope'" in lost[0].reason
    finally:
        client.close()
