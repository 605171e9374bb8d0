"""The parser's two paths agree: a whole frame already buffered is read in one pass, anything
else by the general, incremental path, and on any bytes, in any chunking, within any limits,
both give the same events, the same error and the same bytes left over."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jms.stomp import (
    BODY_COMMANDS,
    Frame,
    FrameLimits,
    FrameParser,
    HeartBeat,
    Role,
    StompProtocolError,
    Version,
)
from tests.stomp.stomp_testing import COMMANDS_BY_ROLE, chunked, streams
from tests.stomp.test_stomp_properties import mutated_streams, stomp_like_bytes


class GeneralPathParser(FrameParser):
    """A parser that never takes the one-pass path."""

    def _read_whole_frame(self) -> Frame | None:
        return None


class OnePassCountingParser(FrameParser):
    """A parser that counts the frames its one-pass path reads."""

    def __init__(self, sender: Role) -> None:
        super().__init__(sender)
        self.read_in_one_pass = 0

    def _read_whole_frame(self) -> Frame | None:
        frame = super()._read_whole_frame()
        self.read_in_one_pass += frame is not None
        return frame


Outcome = tuple[list[Frame | HeartBeat], str | None, int]


def outcome(
    parser: FrameParser, chunks: list[bytes], version_after_connect: Version | None
) -> Outcome:
    """The events ``parser`` reads from ``chunks``, its error message and what it still buffers;
    the version changes after a CONNECT/CONNECTED frame, as negotiation changes it."""
    events: list[Frame | HeartBeat] = []
    try:
        for chunk in chunks:
            for event in parser.feed(chunk):
                events.append(event)
                if (
                    version_after_connect is not None
                    and isinstance(event, Frame)
                    and event.command in ("CONNECT", "STOMP", "CONNECTED")
                ):
                    parser.version = version_after_connect
    except StompProtocolError as error:
        return events, error.message, parser.buffered_bytes
    return events, None, parser.buffered_bytes


roles = st.sampled_from([Role.CLIENT, Role.SERVER])
versions = st.sampled_from([Version.V1_0, Version.V1_1, Version.V1_2])
# Each limit at its default or small, so that some bind while others leave the one-pass path open.
limits = st.builds(
    FrameLimits,
    max_headers=st.one_of(st.just(1000), st.integers(1, 6)),
    max_header_line_bytes=st.one_of(st.just(16 * 1024), st.integers(1, 128)),
    max_header_section_bytes=st.one_of(st.just(64 * 1024), st.integers(1, 200)),
    max_body_bytes=st.one_of(st.just(10 * 1024 * 1024), st.integers(1, 48)),
)
cuts = st.lists(st.integers(min_value=0), max_size=8)

# Frames close to valid ones: each part is usually right, and sometimes wrong in one of the ways
# the parser refuses; the right ones are rich in what must be read carefully (escapes, colons in
# values, multi-byte characters, content-length, NUL in bodies).
_names = st.sampled_from(
    [b"destination", b"receipt", b"x", b"content-length", b"caf\xc3\xa9", b"a\\cb", b"\\\\"]
)
_values = st.one_of(
    st.sampled_from([b"", b"0", b"3", b"003", b"ID:1", b"a\\cb\\\\", b"a\\nb", b"a\\r", b"\\c"]),
    st.text(st.sampled_from("xé名\U0001d11e\U0001d11e:"), max_size=30).map(str.encode),
)
_defective_lines = st.sampled_from(
    [
        b":v",
        b"no-colon",
        b"k:v\r",
        b"k:\xff",
        b"\xc3:v",
        b"k:a\\tb",
        b"k:a\\",
        b"content-length:-1",
        b"content-length:99",
        b"content-length:" + b"9" * 30,
    ]
)
_valid_lines = st.one_of(
    st.tuples(_names, _values).map(b":".join),
    st.sampled_from([b"content-length:0", b"content-length:3", b"content-length:003"]),
)
_header_lines = st.one_of(*[_valid_lines] * 6, _defective_lines)
_end_of_lines = st.sampled_from([b"\n"] * 6 + [b"\r\n"])
_defective_commands = st.sampled_from([b"send", b"SEND ", b"X", b"MESSAGE", b"SEND", b""])


@st.composite
def near_frames(draw: st.DrawFn, role: Role) -> bytes:
    commands = st.sampled_from([command.encode() for command in COMMANDS_BY_ROLE[role]])
    command = draw(st.one_of(*[commands] * 8, _defective_commands))
    lines = [command, *draw(st.lists(_header_lines, max_size=5))]
    head = b"".join(line + draw(_end_of_lines) for line in lines) + draw(_end_of_lines)
    if command.decode("latin-1") in BODY_COMMANDS or draw(st.integers(0, 2)) == 0:
        body = draw(st.sampled_from([b"", b"abc", b"a\x00c", b"x" * 40]))
    else:
        body = b""
    end = draw(st.sampled_from([b"\x00"] * 6 + [b"\x00\n", b"", b"?"]))
    return head + body + end


def near_streams(role: Role) -> st.SearchStrategy[bytes]:
    return st.lists(near_frames(role), min_size=1, max_size=3).map(b"".join)


def check_paths_agree(
    role: Role,
    frame_limits: FrameLimits,
    version: Version,
    data: bytes,
    cut_at: list[int],
    negotiated: Version | None = None,
) -> None:
    chunks = chunked(data, cut_at)
    one_pass = outcome(FrameParser(role, frame_limits, version), chunks, negotiated)
    general = outcome(GeneralPathParser(role, frame_limits, version), chunks, negotiated)
    assert one_pass == general


@settings(max_examples=300)
@given(st.data(), roles, limits, versions, cuts)
def test_valid_streams_read_alike(
    data: st.DataObject, role: Role, frame_limits: FrameLimits, version: Version, cut_at: list[int]
) -> None:
    stream, _ = data.draw(streams(role, version))
    check_paths_agree(role, frame_limits, version, stream, cut_at)


@settings(max_examples=1000)
@given(st.data(), roles, limits, versions, cuts, st.none() | versions)
def test_frames_near_valid_ones_read_alike(
    data: st.DataObject,
    role: Role,
    frame_limits: FrameLimits,
    version: Version,
    cut_at: list[int],
    negotiated: Version | None,
) -> None:
    stream = data.draw(near_streams(role))
    check_paths_agree(role, frame_limits, version, stream, cut_at, negotiated)


@settings(max_examples=400)
@given(roles, limits, versions, stomp_like_bytes, cuts, st.none() | versions)
def test_random_bytes_read_alike(
    role: Role,
    frame_limits: FrameLimits,
    version: Version,
    data: bytes,
    cut_at: list[int],
    negotiated: Version | None,
) -> None:
    check_paths_agree(role, frame_limits, version, data, cut_at, negotiated)


@settings(max_examples=300)
@given(st.data(), roles, limits, versions, cuts)
def test_mutated_streams_read_alike(
    data: st.DataObject, role: Role, frame_limits: FrameLimits, version: Version, cut_at: list[int]
) -> None:
    stream = data.draw(mutated_streams(role, version))
    check_paths_agree(role, frame_limits, version, stream, cut_at)


def test_frames_a_client_usually_sends_are_read_in_one_pass() -> None:
    frames = [
        Frame(
            "SEND",
            (("destination", "/queue/a"), ("reply-to", "ID:host:1"), ("content-length", "1024")),
            b"x" * 1024,
        ),
        Frame("SEND", (("destination", "/queue/a"), ("name", "caf\u00e9")), b""),
        Frame("SUBSCRIBE", (("id", "1"), ("destination", "/queue/a"), ("ack", "client"))),
        Frame("ACK", (("id", "ID:host:1"),)),
        Frame("DISCONNECT", (("receipt", "bye"),)),
    ]
    stream = b"".join(frame.to_bytes(Version.V1_2) for frame in frames)
    parser = OnePassCountingParser(Role.CLIENT)
    parser.version = Version.V1_2
    body_ended_by_nul = b"SEND\ndestination:/queue/a\n\nhello\x00"
    assert [*parser.feed(stream + body_ended_by_nul)] == [
        *frames,
        Frame("SEND", (("destination", "/queue/a"),), b"hello"),
    ]
    assert parser.read_in_one_pass == len(frames) + 1


def test_a_frame_whose_body_is_still_arriving_is_finished_by_the_general_path() -> None:
    frame = Frame("SEND", (("destination", "/queue/a"), ("content-length", "5")), b"hello")
    data = frame.to_bytes(Version.V1_2)
    parser = OnePassCountingParser(Role.CLIENT)
    assert [*parser.feed(data[:-3]), *parser.feed(data[-3:])] == [frame]
    assert parser.read_in_one_pass == 0


@pytest.mark.parametrize(
    ("frame_limits", "data", "accepted"),
    [
        (FrameLimits(max_headers=2), b"SEND\nk:1\nk:2\n\n\x00", True),
        (FrameLimits(max_headers=2), b"SEND\nk:1\nk:2\nk:3\n\n\x00", False),
        (FrameLimits(max_header_line_bytes=16), b"SEND\nk:34567890123456\n\n\x00", True),
        (FrameLimits(max_header_line_bytes=16), b"SEND\nk:345678901234567\n\n\x00", False),
        (
            FrameLimits(max_header_line_bytes=14),
            "SEND\nk:é\U0001d11eé\U0001d11e\n\n\0".encode(),
            True,
        ),
        (
            FrameLimits(max_header_line_bytes=13),
            "SEND\nk:é\U0001d11eé\U0001d11e\n\n\0".encode(),
            False,
        ),
        (FrameLimits(max_header_section_bytes=16), b"SEND\nk:1\nk:234\n\n\x00", True),
        (FrameLimits(max_header_section_bytes=16), b"SEND\nk:1\nk:2345\n\n\x00", False),
        (FrameLimits(max_body_bytes=4), b"SEND\n\n1234\x00", True),
        (FrameLimits(max_body_bytes=4), b"SEND\n\n12345\x00", False),
        (FrameLimits(max_body_bytes=4), b"SEND\ncontent-length:4\n\n1234\x00", True),
        (FrameLimits(max_body_bytes=4), b"SEND\ncontent-length:5\n\n12345\x00", False),
    ],
)
def test_limits_hold_to_the_byte_on_both_paths(
    frame_limits: FrameLimits, data: bytes, accepted: bool
) -> None:
    for cut in range(len(data) + 1):
        check_paths_agree(Role.CLIENT, frame_limits, Version.V1_2, data, [cut])
    _, error, _ = outcome(FrameParser(Role.CLIENT, frame_limits), [data], None)
    assert (error is None) is accepted, error


@pytest.mark.parametrize(
    "line",
    [b":v", b"no-colon", b"k:v\r", b"k:\xff", b"\xc3:v", b"k:a\\tb", b"k:a\\", b"content-length:x"],
)
@pytest.mark.parametrize("version", [Version.V1_0, Version.V1_1, Version.V1_2])
def test_each_refused_header_line_is_refused_alike(line: bytes, version: Version) -> None:
    data = b"SEND\ndestination:/q\n" + line + b"\n\n\x00"
    for cut in range(len(data) + 1):
        check_paths_agree(Role.CLIENT, FrameLimits(), version, data, [cut])


@pytest.mark.parametrize(
    "data",
    [
        b"ACK\nid:1\ncontent-length:1\n\nx\x00",  # a body where none may be
        b"ACK\nid:1\n\nx\x00",
        b"SEND\ncontent-length:1\ncontent-length:3\n\na\x00b\x00",  # the first one counts
        b"SEND\ncontent-length:3\n\nabcd\x00",  # no NUL where content-length says
        b"SEND\n\na\x00SEND\ncontent-length:3\n\nabcd\x00",  # the same, after a frame read
        b"SEND\n\nab\x00c\x00",  # the body ends at the first NUL
        b"CONNECT\nlogin:a\\cb\\\\\n\n\x00SEND\nk:a\\cb\n\n\x00",  # CONNECT is verbatim
    ],
)
@pytest.mark.parametrize("version", [Version.V1_0, Version.V1_1, Version.V1_2])
def test_frames_with_a_twist_read_alike(data: bytes, version: Version) -> None:
    for cut in range(len(data) + 1):
        check_paths_agree(Role.CLIENT, FrameLimits(), version, data, [cut])


def test_a_long_line_of_four_byte_characters_is_measured_in_bytes() -> None:
    line_limit = FrameLimits(max_header_line_bytes=120)
    data = b"SEND\nk:" + "\U0001d11e".encode() * 30 + b"\n\n\x00"  # 40 characters, 127 bytes
    check_paths_agree(Role.CLIENT, line_limit, Version.V1_2, data, [])
    _, error, _ = outcome(FrameParser(Role.CLIENT, line_limit), [data], None)
    assert error == "SEND frame at byte 0: header line 1 is longer than 120 bytes"
