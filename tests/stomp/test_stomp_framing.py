"""How frames end on the wire (docs/stomp.md, "Framing"): every frame this package writes ends with
NUL and a line feed, as ActiveMQ's and Artemis' do, because clients that split frames on both
(PHP's pecl-stomp, Python's stomper) misread a bare NUL; and the parser reads a frame the same
whether it ends with a bare NUL, NUL LF or NUL CR LF, in any chunking, with only the end-of-lines
after the first counted as heart-beats."""

from __future__ import annotations

import socket

import pytest

from jms import Queue, TextMessage
from jms.broker import Broker
from jms.stomp import FRAME_END, Frame, FrameParser, HeartBeat, Role, ServerConnection, Version
from jms.stomp.mapping import MessageFrames
from jms.stomp.server import EXTENSIONS_HEADER
from tests.stomp.serving import ServedBroker

SEND = Frame("SEND", (("destination", "/queue/a"), ("content-length", "2")), b"hi")


def test_the_frame_end_is_nul_and_a_line_feed() -> None:
    assert FRAME_END == b"\0\n"


@pytest.mark.parametrize("version", list(Version))
@pytest.mark.parametrize(
    "frame",
    [
        Frame("CONNECTED", (("version", "1.2"),)),
        Frame("MESSAGE", (("destination", "/q"), ("message-id", "1"), ("subscription", "0")), b"x"),
        Frame("RECEIPT", (("receipt-id", "r"),)),
        Frame("ERROR", (("message", "no"),), b"no"),
        SEND,
        Frame("DISCONNECT"),
    ],
    ids=lambda frame: frame.command,
)
def test_every_frame_written_ends_with_the_frame_end(frame: Frame, version: Version) -> None:
    assert frame.to_bytes(version).endswith(b"\0\n")


def test_a_message_written_straight_from_a_jms_message_ends_with_the_frame_end() -> None:
    message = TextMessage("hello")
    message.set_jms_destination(Queue("a"))
    for version in Version:
        frames = MessageFrames(version, "s-1", "/queue/a", lambda destination: "/queue/a")
        assert b"".join(frames.frame_parts(message, "m-1", 7)).endswith(b"hello\0\n")


def test_a_server_connection_writes_the_frame_end_after_each_message() -> None:
    connection = ServerConnection()
    list(connection.feed(b"CONNECT\naccept-version:1.2\nhost:h\n\n\0"))
    connection.accept()
    headers = (("destination", "/q"), ("message-id", "1"), ("subscription", "0"))
    assert connection.message(headers, b"body").endswith(b"body\0\n")


@pytest.mark.parametrize("end", [b"\0", b"\0\n", b"\0\r\n"], ids=["NUL", "NUL LF", "NUL CR LF"])
@pytest.mark.parametrize("chunk_size", [1, 2, 3, 1000])
def test_the_parser_reads_a_frame_the_same_however_it_ends(end: bytes, chunk_size: int) -> None:
    data = (SEND.to_bytes(Version.V1_2).removesuffix(FRAME_END) + end) * 3 + b"\n"
    parser = FrameParser(Role.CLIENT, version=Version.V1_2)
    events = [
        event
        for start in range(0, len(data), chunk_size)
        for event in parser.feed(data[start : start + chunk_size])
    ]
    # The last line feed is the last frame's own end-of-line when that frame ended with a bare
    # NUL, and a heart-beat when it had one already.
    last = [] if end == b"\0" else [HeartBeat()]
    assert events == [SEND, SEND, SEND, *last]
    assert parser.buffered_bytes == 0


def test_only_the_first_end_of_line_after_a_frame_is_its_own() -> None:
    data = SEND.to_bytes(Version.V1_2) + b"\n\r\n" + SEND.to_bytes(Version.V1_2)
    events = list(FrameParser(Role.CLIENT, version=Version.V1_2).feed(data))
    assert events == [SEND, HeartBeat(), HeartBeat(), SEND]


def test_a_lone_carriage_return_after_a_frame_is_still_refused() -> None:
    parser = FrameParser(Role.CLIENT, version=Version.V1_2)
    with pytest.raises(Exception, match="a carriage return between frames is not followed"):
        list(parser.feed(SEND.to_bytes(Version.V1_2).removesuffix(b"\n") + b"\rSEND"))


def _frames_with_their_ends(data: bytes) -> list[tuple[Frame, bytes]]:
    """Each frame in ``data`` (a server's output) with the two bytes that end it on the wire."""
    parser = FrameParser(Role.SERVER, version=Version.V1_2)
    frames = []
    for index in range(len(data)):
        for event in parser.feed(data[index : index + 1]):
            assert isinstance(event, Frame), f"a heart-beat at byte {index}"
            frames.append((event, data[index : index + 2]))
    return frames


def test_every_frame_the_server_writes_ends_with_nul_and_a_line_feed(broker: Broker) -> None:
    """CONNECTED, RECEIPT, a MESSAGE, packed MESSAGEs of a browse, and ERROR: each kind of frame
    the server writes, from each of the places that write them."""
    with (
        ServedBroker(broker) as served,
        socket.create_connection(("127.0.0.1", served.port)) as raw,
    ):
        raw.settimeout(5)
        frames = [
            Frame("CONNECT", (("accept-version", "1.2"), ("host", "h"), (EXTENSIONS_HEADER, "1"))),
            Frame("SEND", (("destination", "/queue/f"), ("receipt", "r-1")), b"one\0two"),
            Frame("SUBSCRIBE", (("destination", "/queue/f"), ("id", "take"))),
            Frame("SEND", (("destination", "/queue/g"),), b"kept"),
            Frame(
                "SUBSCRIBE",
                (
                    ("destination", "/queue/g"),
                    ("id", "look"),
                    ("browser", "true"),
                    ("jms-browse-format", "packed"),
                ),
            ),
        ]
        raw.sendall(b"".join(frame.to_bytes(Version.V1_2) for frame in frames))
        data = b""
        while data.count(b"browser:end") < 1:
            data += raw.recv(65536)
        raw.sendall(b"NOPE\n\n\0")
        while chunk := raw.recv(65536):
            data += chunk
    frames_and_ends = _frames_with_their_ends(data)
    commands = [frame.command for frame, _ in frames_and_ends]
    assert commands == ["CONNECTED", "RECEIPT", "MESSAGE", "MESSAGE", "MESSAGE", "ERROR"]
    assert any(
        frame.header("content-type") == "application/x-jms-packed" for frame, _ in frames_and_ends
    )
    assert {end for _, end in frames_and_ends} == {b"\0\n"}
