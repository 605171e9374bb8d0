"""Hostile and broken clients against the STOMP server: each malformed frame is answered with an
ERROR and that connection closes, the server stays up, no bug surfaces as an internal error, and
a well-behaved client keeps working throughout. A client that stops reading holds only a bounded
part of a large queue."""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jms import ConnectionFactory, Queue, TextMessage
from jms.broker import Broker
from jms.stomp import FrameLimits
from tests.stomp.serving import RawClient, ServedBroker

LIMITS = FrameLimits(
    max_headers=20, max_header_line_bytes=256, max_header_section_bytes=1024, max_body_bytes=4096
)
CONNECT = b"CONNECT\naccept-version:1.2\nhost:x\n\n\0"

# Each is sent on a fresh connection; True when it follows a valid CONNECT.
HOSTILE: list[tuple[str, bool, bytes]] = [
    ("garbage before connect", False, b"\x00\x01\x02 hello"),
    ("send before connect", False, b"SEND\ndestination:/queue/a\n\nx\0"),
    ("unknown command", True, b"PUBLISH\ndestination:/queue/a\n\nx\0"),
    ("lower-case command", True, b"send\ndestination:/queue/a\n\nx\0"),
    ("overlong command", True, b"X" * 100),
    ("header without colon", True, b"SEND\ndestination\n\nx\0"),
    ("empty header name", True, b"SEND\n:value\ndestination:/queue/a\n\nx\0"),
    ("undefined escape", True, b"SEND\ndestination:/queue/a\\t\n\nx\0"),
    ("header line too long", True, b"SEND\ndestination:" + b"a" * 400 + b"\n\n\0"),
    ("header section too long", True, b"SEND\n" + b"h:v\n" * 300),
    ("too many headers", True, b"SEND\ndestination:/queue/a\n" + b"h:v\n" * 30 + b"\n\0"),
    ("non-UTF-8 header", True, b"SEND\ndestination:/queue/\xff\n\n\0"),
    ("content-length not a number", True, b"SEND\ndestination:/queue/a\ncontent-length:-1\n\nx\0"),
    (
        "content-length past the limit",
        True,
        b"SEND\ndestination:/queue/a\ncontent-length:99999\n\n",
    ),
    ("content-length too short", True, b"SEND\ndestination:/queue/a\ncontent-length:1\n\nxyz\0"),
    ("body past the limit", True, b"SEND\ndestination:/queue/a\n\n" + b"x" * 5000),
    ("body on an ACK", True, b"ACK\nid:1\n\nbody\0"),
    ("second CONNECT", True, CONNECT),
    ("SEND without destination", True, b"SEND\n\nx\0"),
    ("SUBSCRIBE with a bad ack", True, b"SUBSCRIBE\ndestination:/queue/a\nid:1\nack:maybe\n\n\0"),
    ("ACK of nothing", True, b"ACK\nid:42\n\n\0"),
    ("bad accept-version", False, b"CONNECT\naccept-version:9.9\nhost:x\n\n\0"),
    ("bad heart-beat", False, b"CONNECT\naccept-version:1.2\nheart-beat:often\n\n\0"),
    ("carriage return between frames", True, b"\rX"),
    ("destination outside the namespaces", True, b"SEND\ndestination:orders\n\nx\0"),
    ("bad selector", True, b"SUBSCRIBE\ndestination:/queue/a\nid:1\nselector:a ==\n\n\0"),
    ("bad prefetch", True, b"SUBSCRIBE\ndestination:/queue/a\nid:1\nactivemq.prefetchSize:0\n\n\0"),
    ("unknown admin command", True, b"SEND\ndestination:/admin/shutdown\n\n\0"),
]


@pytest.fixture
def fuzzed(broker: Broker) -> Iterator[ServedBroker]:
    with ServedBroker(broker, limits=LIMITS, connect_timeout_s=2.0) as served:
        yield served


class GoodClient:
    """A JMS client exchanging messages over the server on its own thread the whole time."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sent = 0
        self.received: list[str] = []
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> GoodClient:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(20)

    def _run(self) -> None:
        try:
            with ConnectionFactory(self.url).create_connection() as connection:
                connection.start()
                session = connection.create_session()
                producer = session.create_producer(Queue("good"))
                consumer = session.create_consumer(Queue("good"))
                while not self._stop.is_set():
                    producer.send(TextMessage(str(self.sent)))
                    self.sent += 1
                    message = consumer.receive(5000)
                    assert isinstance(message, TextMessage)
                    self.received.append(message.get_text() or "")
                    time.sleep(0.002)
        except BaseException as error:
            self.error = error


def _attack(port: int, connect_first: bool, data: bytes) -> list[str]:
    """Send ``data``; return the commands of the frames the server answered before closing."""
    with RawClient(port, timeout_s=5) as raw:
        if connect_first:
            raw.connect()
        try:
            raw.write(data)
        except OSError:
            return ["<reset while writing>"]
        commands = []
        try:
            while True:
                commands.append(raw.read(5).command)
        except EOFError:
            return commands
        except ConnectionResetError:
            return [*commands, "<reset>"]


def test_each_hostile_frame_gets_an_error_and_only_its_connection_closes(
    fuzzed: ServedBroker, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR), GoodClient(fuzzed.url) as good:
        for name, connect_first, data in HOSTILE:
            commands = _attack(fuzzed.port, connect_first, data)
            assert commands[-1:] == ["ERROR"] or commands[-1:] == ["<reset>"], (name, commands)
            assert "ERROR" in commands, (name, commands)
        time.sleep(0.1)
    assert good.error is None, good.error
    assert good.sent > 0 and good.received == [str(n) for n in range(good.sent)]
    assert not [r for r in caplog.records if "internal error" in r.getMessage()]
    deadline = time.monotonic() + 5
    while fuzzed.call(lambda: fuzzed.server.connection_count) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fuzzed.call(lambda: fuzzed.server.connection_count) == 0


def test_a_client_that_hangs_up_mid_frame_is_cleaned_up(fuzzed: ServedBroker) -> None:
    cuts = (b"SEND\ndestinat", b"SEND\ndestination:/queue/a\ncontent-length:100\n\nabc")
    for cut in cuts:
        raw = socket.create_connection(("127.0.0.1", fuzzed.port))
        raw.sendall(CONNECT + cut)
        raw.close()

    def counts() -> tuple[int, int]:
        server = fuzzed.server
        assert server is not None
        return server.counters.connections_total, server.connection_count

    deadline = time.monotonic() + 5
    while fuzzed.call(counts) != (len(cuts), 0) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fuzzed.call(counts) == (len(cuts), 0)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=64),
            st.sampled_from(
                [
                    b"SEND\n",
                    b"SUBSCRIBE\n",
                    b"ACK\n",
                    b"destination:/queue/a\n",
                    b"id:1\n",
                    b"content-length:3\n",
                    b"\n",
                    b"\0",
                    b"\r\n",
                    b"\\",
                    b":",
                    b"receipt:r\n",
                ]
            ),
        ),
        max_size=12,
    )
)
def test_random_bytes_after_connect_never_break_the_server(
    fuzzed: ServedBroker, pieces: list[bytes]
) -> None:
    data = b"".join(pieces)
    with RawClient(fuzzed.port, timeout_s=1) as raw:
        raw.connect()
        raw.write(data + b"\0\n")
        try:
            while True:
                frame = raw.read(0.3)
                assert frame.command in ("RECEIPT", "MESSAGE", "ERROR"), frame
                assert frame.command != "ERROR" or "internal error" not in (
                    frame.header("message") or ""
                ), frame
        except (TimeoutError, EOFError, ConnectionResetError):
            pass
    with RawClient(fuzzed.port) as probe:  # and it still serves
        probe.connect()
        probe.send("SEND", {"destination": "/queue/probe", "receipt": "ok"}, b"x")
        assert probe.read().header("receipt-id") == "ok"


def test_a_client_that_stops_reading_holds_only_a_bounded_part_of_a_queue(
    served: ServedBroker, broker: Broker
) -> None:
    body = random.Random(7).randbytes(10_000)
    with RawClient(served.port) as filler:
        filler.connect()
        for _ in range(3000):  # 30 MB
            filler.send("SEND", {"destination": "/queue/big"}, body)
        filler.send("SEND", {"destination": "/queue/big", "receipt": "filled"}, b"")
        assert filler.read(30).header("receipt-id") == "filled"
    sleeper = socket.create_connection(("127.0.0.1", served.port))
    sleeper.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    try:
        sleeper.sendall(
            CONNECT + b"SUBSCRIBE\ndestination:/queue/big\nid:s\nactivemq.prefetchSize:50\n\n\0"
        )
        time.sleep(1.0)  # it reads nothing
        taken = {s.name: s.acknowledged for s in broker.stats()}["queue://big"]
        assert 0 < taken < 1000, taken  # the write buffer and the socket's, not 30 MB
        with ConnectionFactory(served.url).create_connection() as other:  # others are unaffected
            other.start()
            session = other.create_session()
            session.create_producer(Queue("small")).send(TextMessage("quick"))
            received = session.create_consumer(Queue("small")).receive(2000)
            assert isinstance(received, TextMessage) and received.get_text() == "quick"
    finally:
        sleeper.close()
