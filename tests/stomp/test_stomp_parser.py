"""The incremental parser: one rule per test, then limits and hostile streams."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jms.stomp import Frame, FrameLimits, FrameParser, HeartBeat, Role, StompProtocolError, Version
from tests.stomp.stomp_testing import one_byte_at_a_time, parse, parse_chunks

SEND = Frame("SEND", (("destination", "/queue/a"),), b"hello")
SEND_BYTES = b"SEND\ndestination:/queue/a\n\nhello\x00"


def test_a_frame_without_content_length_ends_at_the_first_nul() -> None:
    assert parse(SEND_BYTES) == [SEND]


def test_content_length_reads_a_body_with_nul_inside() -> None:
    data = b"SEND\ncontent-length:5\n\na\x00b\x00c\x00"
    assert parse(data) == [Frame("SEND", (("content-length", "5"),), b"a\x00b\x00c")]


def test_content_length_zero_is_an_empty_body() -> None:
    assert parse(b"SEND\ncontent-length:0\n\n\x00") == [Frame("SEND", (("content-length", "0"),))]


def test_a_body_not_followed_by_nul_where_content_length_says_is_refused() -> None:
    with pytest.raises(StompProtocolError, match=r"3-byte body .* followed by b'd', not NUL"):
        parse(b"SEND\ncontent-length:3\n\nabcd\x00")


@pytest.mark.parametrize("version", [Version.V1_0, Version.V1_1, Version.V1_2])
def test_crlf_ends_every_line_in_every_version(version: Version) -> None:
    data = b"\r\nSEND\r\ndestination:/queue/a\r\n\r\nhello\x00\r\n\r\n"
    assert parse(data, version=version) == [HeartBeat(), SEND, HeartBeat()]


def test_end_of_lines_between_frames_are_heart_beats() -> None:
    # The end-of-line right after a NUL is that frame's own; the others are heart-beats.
    data = b"\n\n" + SEND_BYTES + b"\n\r\n\n" + SEND_BYTES + b"\r\n\n"
    assert parse(data) == [
        HeartBeat(),
        HeartBeat(),
        SEND,
        HeartBeat(),
        HeartBeat(),
        SEND,
        HeartBeat(),
    ]


def test_a_carriage_return_split_from_its_line_feed_is_still_a_heart_beat() -> None:
    parser = FrameParser(Role.CLIENT)
    assert list(parser.feed(b"\r")) == []
    assert list(parser.feed(b"\n")) == [HeartBeat()]


def test_a_lone_carriage_return_between_frames_is_refused() -> None:
    with pytest.raises(StompProtocolError, match="at byte 0: a carriage return between frames"):
        parse(b"\rSEND\n\n\x00")


def test_a_lone_carriage_return_after_frames_and_heart_beats_names_its_own_offset() -> None:
    with pytest.raises(StompProtocolError, match="at byte 10: a carriage return between frames"):
        parse(b"SEND\n\nab\x00\n\rSEND\n\n\x00")


@pytest.mark.parametrize(
    "data",
    [
        SEND_BYTES,
        b"\r\n\nSEND\r\nk:a\\cb\\\\\\r\\n\r\ncontent-length:4\r\n\r\n\x00\x00\n\x00\x00\r\n",
        b"CONNECT\naccept-version:1.2\nhost:a\\b\n\n\x00SUBSCRIBE\nid:1\ndestination:/q\n\n\x00",
        b"SEND\nfoo:1\nfoo:2\n\nbody\x00\n",
    ],
)
def test_any_chunking_gives_the_same_events(data: bytes) -> None:
    whole = parse(data)
    assert whole
    assert (
        parse_chunks(FrameParser(Role.CLIENT, version=Version.V1_2), one_byte_at_a_time(data))
        == whole
    )
    for cut in range(len(data) + 1):
        parser = FrameParser(Role.CLIENT, version=Version.V1_2)
        assert parse_chunks(parser, [data[:cut], data[cut:]]) == whole, cut


def test_repeated_headers_are_all_kept_and_the_first_counts() -> None:
    [frame] = parse(b"MESSAGE\nfoo:World\nfoo:Hello\n\n\x00", Role.SERVER)
    assert frame.headers == (("foo", "World"), ("foo", "Hello"))
    assert frame.header("foo") == "World"


def test_the_first_content_length_is_the_one_that_frames_the_body() -> None:
    [frame] = parse(b"SEND\ncontent-length:3\ncontent-length:5\n\nab\x00\x00\x00")
    assert frame.body == b"ab\x00"


@pytest.mark.parametrize(
    ("version", "line", "header"),
    [
        (Version.V1_0, b"a\\cb:c\\nd\\\\", ("a\\cb", "c\\nd\\\\")),
        (Version.V1_1, b"a\\cb:c\\nd\\\\", ("a:b", "c\nd\\")),
        (Version.V1_2, b"a\\cb:c\\nd\\\\\\r", ("a:b", "c\nd\\\r")),
    ],
)
def test_headers_are_unescaped_by_the_version_in_force(
    version: Version, line: bytes, header: tuple[str, str]
) -> None:
    [frame] = parse(b"SEND\n" + line + b"\n\n\x00", version=version)
    assert frame.headers == (header,)


@pytest.mark.parametrize(
    ("role", "command"),
    [(Role.CLIENT, b"CONNECT"), (Role.CLIENT, b"STOMP"), (Role.SERVER, b"CONNECTED")],
)
def test_connect_frames_are_read_verbatim_in_every_version(role: Role, command: bytes) -> None:
    [frame] = parse(command + b"\npasscode:a\\tb\\c\n\n\x00", role, Version.V1_2)
    assert frame.headers == (("passcode", "a\\tb\\c"),)


@pytest.mark.parametrize(
    ("version", "escape"), [(Version.V1_1, b"\\r"), (Version.V1_2, b"\\t"), (Version.V1_2, b"\\")]
)
def test_an_undefined_escape_is_refused_with_where_it_was(version: Version, escape: bytes) -> None:
    data = b"\nSEND\ndestination:/q\nkey:a" + escape + b"\n\n\x00"
    with pytest.raises(
        StompProtocolError, match=r"^SEND frame at byte 1: header line 2: undefined escape sequence"
    ):
        parse(data, version=version)


def test_a_version_set_while_iterating_applies_to_the_next_frame_of_the_same_chunk() -> None:
    parser = FrameParser(Role.CLIENT)
    events = parser.feed(b"CONNECT\naccept-version:1.2\n\n\x00SEND\nk:a\\cb\n\n\x00")
    assert next(events).command == "CONNECT"
    parser.version = Version.V1_2
    assert list(events) == [Frame("SEND", (("k", "a:b"),))]


def test_a_colon_inside_a_value_belongs_to_the_value() -> None:
    [frame] = parse(b"SEND\nmessage-id:ID:host:1\nempty:\n\n\x00")
    assert frame.headers == (("message-id", "ID:host:1"), ("empty", ""))


def test_a_carriage_return_inside_a_value_is_kept() -> None:
    [frame] = parse(b"SEND\nk:a\rb\n\n\x00", version=Version.V1_1)
    assert frame.headers == (("k", "a\rb"),)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (
            b"SEND\nno-colon\n\n\x00",
            r"SEND frame at byte 0: header line 1 b'no-colon' has no colon",
        ),
        (b"SEND\n:value\n\n\x00", r"header line 1 b':value' has an empty name"),
        (b"SEND\nk:v\r\r\n\n\x00", r"header line 1 b'k:v\\r' ends with a carriage return"),
        (b"SEND\nk:\xff\n\n\x00", r"header line 1 b'k:\\xff' is not UTF-8"),
        (b"SEND\nk\xc3:v\n\n\x00", r"is not UTF-8"),
    ],
)
def test_malformed_header_lines_are_refused(data: bytes, reason: str) -> None:
    with pytest.raises(StompProtocolError, match=reason):
        parse(data)


@pytest.mark.parametrize(
    ("role", "data", "reason"),
    [
        (Role.CLIENT, b"FETCH\n\n\x00", r"frame at byte 0: unknown command b'FETCH'"),
        (Role.CLIENT, b"send\n\n\x00", r"unknown command b'send'"),
        (Role.CLIENT, b"SEND \n\n\x00", r"unknown command b'SEND '"),
        (Role.CLIENT, b"SEND\r\r\n\n\x00", r"unknown command b'SEND\\r'"),
        (Role.CLIENT, b"MESSAGE\n\n\x00", r"MESSAGE is a server frame; a client may not send it"),
        (Role.SERVER, b"SEND\n\n\x00", r"SEND is a client frame; a server may not send it"),
        (Role.SERVER, b"\x00\n", r"unknown command b'\\x00'"),
    ],
)
def test_commands_are_checked_for_the_sender(role: Role, data: bytes, reason: str) -> None:
    with pytest.raises(StompProtocolError, match=reason):
        parse(data, role)


def test_a_command_line_longer_than_any_command_is_refused_before_its_end() -> None:
    parser = FrameParser(Role.CLIENT)
    with pytest.raises(StompProtocolError, match="no STOMP command starts with"):
        for byte in one_byte_at_a_time(b"X" * 14):
            list(parser.feed(byte))


@pytest.mark.parametrize(
    "data",
    [b"SUBSCRIBE\nid:1\n\nx", b"ACK\nid:1\ncontent-length:1\n\nx\x00", b"CONNECTED\n\nx\x00"],
)
@pytest.mark.parametrize("version", [Version.V1_0, Version.V1_1, Version.V1_2])
def test_only_send_message_and_error_may_have_a_body(data: bytes, version: Version) -> None:
    role = Role.SERVER if data.startswith(b"CONNECTED") else Role.CLIENT
    with pytest.raises(StompProtocolError, match="may not have a body"):
        parse(data, role, version)


def test_an_empty_content_length_body_is_fine_on_any_frame() -> None:
    assert parse(b"ACK\nid:1\ncontent-length:0\n\n\x00") == [
        Frame("ACK", (("id", "1"), ("content-length", "0")))
    ]


@pytest.mark.parametrize("value", [b"", b"-1", b"+1", b" 1", b"1 ", b"0x1", b"abc"])
def test_a_content_length_that_is_not_a_count_is_refused(value: bytes) -> None:
    with pytest.raises(StompProtocolError, match="is not a byte count"):
        parse(b"SEND\ncontent-length:" + value + b"\n\n\x00")


def test_after_an_error_the_parser_stays_failed() -> None:
    parser = FrameParser(Role.CLIENT)
    with pytest.raises(StompProtocolError, match="unknown command") as first:
        list(parser.feed(b"NOPE\n\n\x00"))
    with pytest.raises(StompProtocolError) as second:
        list(parser.feed(SEND_BYTES))
    assert second.value is first.value


def test_error_offsets_count_from_the_start_of_the_stream() -> None:
    parser = FrameParser(Role.CLIENT)
    assert list(parser.feed(SEND_BYTES + b"\n\n")) == [SEND, HeartBeat()]
    with pytest.raises(
        StompProtocolError, match=rf"^SEND frame at byte {len(SEND_BYTES) + 2}: header line 1"
    ):
        list(parser.feed(b"SEND\nbroken\n\n\x00"))


# Limits -------------------------------------------------------------------------------------

SMALL = FrameLimits(
    max_headers=3, max_header_line_bytes=16, max_header_section_bytes=40, max_body_bytes=8
)


def parse_small(data: bytes) -> list[Frame | HeartBeat]:
    return parse_chunks(FrameParser(Role.CLIENT, SMALL), [data])


def test_limits_must_be_positive_ints() -> None:
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="max_headers must be a positive int"):
            FrameLimits(max_headers=bad)  # type: ignore[arg-type]


def test_frames_at_every_limit_are_accepted() -> None:
    data = (
        b"SEND\nheader:890123456\nb:1\nc:1\n\n12345678\x00"  # 16-byte line, 3 headers, 8-byte body
    )
    headers = (("header", "890123456"), ("b", "1"), ("c", "1"))
    assert parse_small(data) == [Frame("SEND", headers, b"12345678")]
    section = b"SEND\nheader:890123456\nheader:890123456\n\n\x00"  # 40 bytes before the NUL
    assert len(parse_small(section)) == 1


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"SEND\na:1\nb:1\nc:1\nd:1\n\n\x00", "more than 3 headers"),
        (b"SEND\nheader:8901234567\n\n\x00", "header line 1 is longer than 16 bytes"),
        (b"SEND\nheader:89012345678", "header line 1 is longer than 16 bytes"),  # before its end
        (b"SEND\nheader:890123456\r\n\n\x00", None),  # the CR belongs to the end-of-line
        (
            b"SEND\nabcdefghij:1\nabcdefghij:2\nabcdefghij:3\n\n\x00",
            "header section exceeds 40 bytes",
        ),
        (b"SEND\nabcdefghij:1\nabcdefghij:2\nabcdefghij", "header section exceeds 40 bytes"),
        (b"SEND\n\n123456789\x00", "body exceeds 8 bytes"),
        (b"SEND\n\n123456789", "body exceeds 8 bytes without a NUL"),
        (b"SEND\ncontent-length:9\n\n", "content-length 9 exceeds the 8-byte body limit"),
    ],
)
def test_frames_past_a_limit_are_refused(data: bytes, reason: str | None) -> None:
    if reason is None:
        assert len(parse_small(data)) == 1
        return
    with pytest.raises(StompProtocolError, match=reason):
        parse_small(data)


def endless(prefix: bytes, filler: bytes, chunk_size: int = 64 * 1024) -> Iterator[bytes]:
    yield prefix
    chunk = filler * (chunk_size // len(filler))
    while True:
        yield chunk


@pytest.mark.parametrize(
    ("prefix", "filler", "reason"),
    [
        (b"SEND\n\n", b"x", "body exceeds 10485760 bytes without a NUL"),
        (b"SEND\nk:", b"v", "header line 1 is longer than 16384 bytes"),
        (b"SEND\n", b"k:" + b"v" * 97 + b"\n", "header section exceeds 65536 bytes"),
        (b"", b"SEND", "no STOMP command starts with"),
    ],
)
def test_an_endless_stream_is_refused_once_past_the_default_limit(
    prefix: bytes, filler: bytes, reason: str
) -> None:
    parser = FrameParser(Role.CLIENT)
    fed = 0
    with pytest.raises(StompProtocolError, match=reason):
        for chunk in endless(prefix, filler):
            fed += len(chunk)
            list(parser.feed(chunk))
            assert fed < 11 * 1024 * 1024, "still buffering past every limit"


def test_the_header_count_limit_holds_at_its_default() -> None:
    headers = b"k:v\n" * 1001
    with pytest.raises(StompProtocolError, match="more than 1000 headers"):
        parse(b"SEND\n" + headers + b"\n\x00")
    assert len(parse(b"SEND\n" + headers[4:] + b"\n\x00")[0].headers) == 1000


def test_a_flood_of_heart_beats_buffers_nothing() -> None:
    parser = FrameParser(Role.CLIENT)
    for _ in range(16):
        assert len(list(parser.feed(b"\n" * 65536))) == 65536
    assert list(parser.feed(SEND_BYTES)) == [SEND]
