"""Properties over generated input: every frame round-trips in every version under any chunking,
and hostile bytes only ever produce frames or ``StompProtocolError``, in bounded memory."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jms.stomp import (
    ConnectRequest,
    Frame,
    FrameLimits,
    FrameParser,
    HeartBeat,
    Role,
    ServerConnection,
    StompProtocolError,
    Version,
    escape_header,
    unescape_header,
)
from tests.stomp.stomp_testing import COMMANDS_BY_ROLE, chunked, parse_chunks, streams

roles = st.sampled_from([Role.CLIENT, Role.SERVER])
versions = st.sampled_from([Version.V1_0, Version.V1_1, Version.V1_2])
cuts = st.lists(st.integers(min_value=0), max_size=8)


@settings(max_examples=300)
@given(st.data(), roles, versions, cuts)
def test_streams_round_trip_under_any_chunking(
    data: st.DataObject, role: Role, version: Version, cut_at: list[int]
) -> None:
    stream, events = data.draw(streams(role, version))
    parsed = parse_chunks(FrameParser(role, version=version), chunked(stream, cut_at))
    assert parsed == events


@settings(max_examples=60)
@given(st.data(), roles, versions)
def test_a_stream_fed_one_byte_at_a_time_reads_the_same(
    data: st.DataObject, role: Role, version: Version
) -> None:
    stream, events = data.draw(streams(role, version))
    parser = FrameParser(role, version=version)
    assert (
        parse_chunks(parser, [stream[index : index + 1] for index in range(len(stream))]) == events
    )
    assert parser.buffered_bytes == 0


@given(st.text(st.characters(codec="utf-8")), st.sampled_from([Version.V1_1, Version.V1_2]))
def test_escaping_round_trips_and_leaves_no_line_breaks_or_colons(
    text: str, version: Version
) -> None:
    escaped = escape_header(text, version)
    assert unescape_header(escaped, version) == text
    assert "\n" not in escaped and ":" not in escaped
    if version is Version.V1_2:
        assert "\r" not in escaped


# Hostile input ------------------------------------------------------------------------------

FUZZ_LIMITS = FrameLimits(
    max_headers=6, max_header_line_bytes=32, max_header_section_bytes=96, max_body_bytes=32
)
MOST_BUFFERED = FUZZ_LIMITS.max_header_section_bytes + FUZZ_LIMITS.max_body_bytes + 1

_tokens = st.sampled_from(
    [
        *(command.encode() for commands in COMMANDS_BY_ROLE.values() for command in commands),
        b"\n",
        b"\r\n",
        b"\r",
        b":",
        b"\x00",
        b"\\",
        b"\\c",
        b"\\t",
        b"content-length:",
        b"content-length:3",
        b"accept-version:1.2",
        b"receipt:r",
        b"7",
        b"\xff",
        b"x" * 24,
    ]
)
stomp_like_bytes = st.lists(st.one_of(_tokens, st.binary(max_size=6)), max_size=120).map(b"".join)


@st.composite
def mutated_streams(draw: st.DrawFn, role: Role, version: Version) -> bytes:
    """A valid stream with a few bytes flipped, dropped, inserted or repeated."""
    stream = bytearray(draw(streams(role, version))[0])
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(stream)))
        mutation = draw(st.sampled_from(["flip", "drop", "insert", "repeat"]))
        if mutation == "flip" and position < len(stream):
            stream[position] = draw(st.integers(0, 255))
        elif mutation == "drop":
            del stream[position : position + draw(st.integers(1, 8))]
        elif mutation == "insert":
            stream[position:position] = draw(st.one_of(_tokens, st.binary(min_size=1, max_size=8)))
        else:
            stream[position:position] = stream[position : position + draw(st.integers(1, 40))]
    return bytes(stream)


def check_parser_on(role: Role, version: Version, data: bytes, cut_at: list[int]) -> None:
    parser = FrameParser(role, FUZZ_LIMITS, version)
    try:
        for chunk in chunked(data, cut_at):
            for event in parser.feed(chunk):
                assert isinstance(event, HeartBeat | Frame)
                if isinstance(event, Frame):
                    assert event.command in COMMANDS_BY_ROLE[role]
                    assert len(event.headers) <= FUZZ_LIMITS.max_headers
                    assert len(event.body) <= FUZZ_LIMITS.max_body_bytes
            assert parser.buffered_bytes <= MOST_BUFFERED
    except StompProtocolError as error:
        assert error.message
        assert len(error.message) < 400


@settings(max_examples=400)
@given(roles, versions, stomp_like_bytes, cuts)
def test_random_bytes_give_frames_or_a_protocol_error(
    role: Role, version: Version, data: bytes, cut_at: list[int]
) -> None:
    check_parser_on(role, version, data, cut_at)


@settings(max_examples=250)
@given(st.data(), roles, versions, cuts)
def test_mutated_streams_give_frames_or_a_protocol_error(
    data: st.DataObject, role: Role, version: Version, cut_at: list[int]
) -> None:
    check_parser_on(role, version, data.draw(mutated_streams(role, version)), cut_at)


@settings(max_examples=300)
@given(
    st.sampled_from([b"", b"CONNECT\naccept-version:1.0,1.1,1.2\nhost:h\n\n\x00"]),
    stomp_like_bytes,
    cuts,
)
def test_a_server_connection_answers_any_client_bytes_with_events_or_a_writable_error(
    connect: bytes, data: bytes, cut_at: list[int]
) -> None:
    connection = ServerConnection(limits=FUZZ_LIMITS)
    try:
        for chunk in chunked(connect + data, cut_at):
            for event in connection.feed(chunk):
                if isinstance(event, ConnectRequest):
                    connection.accept()
                else:
                    assert isinstance(event, HeartBeat | Frame)
    except StompProtocolError as error:
        version = connection.version or Version.V1_0
        answer = connection.send_error(error)
        [frame] = parse_chunks(FrameParser(Role.SERVER, version=version), [answer])
        assert isinstance(frame, Frame) and frame.command == "ERROR"
        assert frame.header("receipt-id") == error.receipt
