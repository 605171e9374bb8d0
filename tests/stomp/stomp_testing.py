"""Helpers and hypothesis strategies shared by the STOMP tests: frames any version can carry,
streams of them with heart-beats between, and feeding bytes to a parser in chosen chunks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise

from hypothesis import strategies as st

from jms.stomp import (
    BODY_COMMANDS,
    CLIENT_COMMANDS,
    SERVER_COMMANDS,
    UNESCAPED_COMMANDS,
    Frame,
    FrameParser,
    HeartBeat,
    Role,
    Version,
)

COMMANDS_BY_ROLE = {Role.CLIENT: sorted(CLIENT_COMMANDS), Role.SERVER: sorted(SERVER_COMMANDS)}

# Header text rich in what escaping is about, plus any other encodable character.
_header_characters = st.one_of(
    st.sampled_from(["\\", ":", "\n", "\r", "\x00", " ", "c", "n", "r", "é", "名"]),
    st.characters(codec="utf-8"),
)
# Each text ends with one of the characters whose place at the end of a line matters, often.
_header_texts = st.tuples(
    st.text(_header_characters, max_size=12), st.sampled_from(["", "\\", ":", "\n", "\r", " "])
).map("".join)


def writable(command: str, version: Version, name: str, value: str) -> bool:
    """Whether ``version`` can carry header ``name``:``value`` in a ``command`` frame."""
    if not name or name == "content-length":  # content-length is generated on purpose only
        return False
    escaped = version is not Version.V1_0 and command not in UNESCAPED_COMMANDS
    if not escaped:
        return "\n" not in name + value and ":" not in name and not value.endswith("\r")
    return version is Version.V1_2 or not value.endswith("\r")


@st.composite
def frames(draw: st.DrawFn, role: Role, version: Version) -> Frame:
    """A frame ``role`` may send that ``version`` can carry, with a ``content-length`` header
    exactly when the parser will report one (serialising adds it to every body)."""
    command = draw(st.sampled_from(COMMANDS_BY_ROLE[role]))
    names = st.one_of(st.sampled_from(["destination", "receipt", "id", "x"]), _header_texts)
    headers = draw(
        st.lists(
            st.tuples(names, _header_texts).filter(lambda pair: writable(command, version, *pair)),
            max_size=6,
        )
    )
    body = draw(st.binary(max_size=40)) if command in BODY_COMMANDS else b""
    if body or draw(st.booleans()):
        position = draw(st.integers(0, len(headers)))
        headers.insert(position, ("content-length", str(len(body))))
    return Frame(command, tuple(headers), body)


heart_beats = st.sampled_from([b"\n", b"\r\n"])


@st.composite
def streams(draw: st.DrawFn, role: Role, version: Version) -> tuple[bytes, list[Frame | HeartBeat]]:
    """Bytes of several frames with heart-beats before, between and after, and the events a
    parser reading them in ``version`` must produce."""
    data = bytearray()
    events: list[Frame | HeartBeat] = []
    for frame in draw(st.lists(frames(role, version), min_size=1, max_size=4)):
        for heart_beat in draw(st.lists(heart_beats, max_size=2)):
            data += heart_beat
            events.append(HeartBeat())
        data += frame.to_bytes(version)
        events.append(frame)
    for heart_beat in draw(st.lists(heart_beats, max_size=2)):
        data += heart_beat
        events.append(HeartBeat())
    return bytes(data), events


def chunked(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    """``data`` split at the positions ``cuts`` (taken modulo its length, in any order)."""
    positions = sorted({cut % (len(data) + 1) for cut in cuts} | {0, len(data)})
    return [data[start:end] for start, end in pairwise(positions)]


def parse_chunks(parser: FrameParser, chunks: Sequence[bytes]) -> list[Frame | HeartBeat]:
    """Every event ``parser`` produces when fed ``chunks`` one after another."""
    events: list[Frame | HeartBeat] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    return events


def parse(
    data: bytes, role: Role = Role.CLIENT, version: Version = Version.V1_2
) -> list[Frame | HeartBeat]:
    """The events a fresh parser for ``role`` in ``version`` reads from ``data`` in one chunk."""
    return list(FrameParser(role, version=version).feed(data))


def one_byte_at_a_time(data: bytes) -> list[bytes]:
    return [data[index : index + 1] for index in range(len(data))]
