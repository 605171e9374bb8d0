"""STOMP frames as values, and their exact wire form in each protocol version.

A ``Frame`` is a command, its headers in wire order (repeated names allowed; the first one is
the header's value, as STOMP 1.2 says) and a body of bytes; ``frame.to_bytes(version)`` writes
it with the header escaping of that version (none in 1.0 and for CONNECT/STOMP/CONNECTED; ``\\n
\\c \\\\`` in 1.1, and ``\\r`` too in 1.2), a ``content-length`` header for every body and
``FRAME_END`` after the body, and refuses (``ValueError``) anything the version cannot represent
rather than writing a frame the peer would read differently. ``HeartBeat`` is the lone end-of-line between frames. This module
is pure: it never touches a socket, keeps no state and knows nothing of connections or brokers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Final, NamedTuple

from jms.stomp.errors import StompProtocolError, quote

__all__ = [
    "BODY_COMMANDS",
    "CLIENT_COMMANDS",
    "FRAME_END",
    "SERVER_COMMANDS",
    "SUPPORTED_VERSIONS",
    "UNESCAPED_COMMANDS",
    "Frame",
    "HeartBeat",
    "Role",
    "Version",
    "encode_frame",
    "encode_frame_head",
    "error_frame",
    "escape_header",
    "parse_content_length",
    "receipt_frame",
    "unescape_header",
]


class Version(StrEnum):
    """A STOMP protocol version, spelled as on the wire (``accept-version``, ``version``)."""

    V1_0 = "1.0"
    V1_1 = "1.1"
    V1_2 = "1.2"


SUPPORTED_VERSIONS: Final = (Version.V1_0, Version.V1_1, Version.V1_2)
# Bound once: an Enum member looked up through its class costs ~200 ns on this Python, and
# escape_header runs for several headers of every frame written.
_V1_0: Final = Version.V1_0
_V1_1: Final = Version.V1_1
_V1_2: Final = Version.V1_2


class Role(Enum):
    """Which end of a STOMP connection sends a frame."""

    CLIENT = "client"
    SERVER = "server"


CLIENT_COMMANDS: Final = frozenset(
    {
        "CONNECT",
        "STOMP",
        "SEND",
        "SUBSCRIBE",
        "UNSUBSCRIBE",
        "ACK",
        "NACK",
        "BEGIN",
        "COMMIT",
        "ABORT",
        "DISCONNECT",
    }
)
SERVER_COMMANDS: Final = frozenset({"CONNECTED", "MESSAGE", "RECEIPT", "ERROR"})
# Sent before the version is agreed, so never escaped (STOMP is CONNECT under another name).
UNESCAPED_COMMANDS: Final = frozenset({"CONNECT", "STOMP", "CONNECTED"})
# "Only the SEND, MESSAGE, and ERROR frames MAY have a body."
BODY_COMMANDS: Final = frozenset({"SEND", "MESSAGE", "ERROR"})

# What ends every frame written: the NUL, then an end-of-line, which STOMP allows after it
# (``NULL *( EOL )``) and ActiveMQ and Artemis write too. Clients that split frames on NUL and
# newline (PHP's pecl-stomp, Python's stomper) cannot read frames that end with a bare NUL; every
# reader takes the end-of-line, at worst as a heart-beat (docs/stomp.md, "Framing").
FRAME_END: Final = b"\0\n"

_MAX_CONTENT_LENGTH_DIGITS: Final = 18  # past any body size a limit allows; int() stays cheap


@dataclass(frozen=True, slots=True)
class HeartBeat:
    """One end-of-line received between frames: the peer is alive and had nothing to say."""


class Frame(NamedTuple):
    """One STOMP frame: ``command``, ``headers`` as (name, value) pairs in order, ``body``.

    A named tuple, not a frozen dataclass: one is made for every frame read, and it is built
    several times faster."""

    command: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The value of header ``name``: its first occurrence, or None when absent."""
        for header_name, value in self.headers:
            if header_name == name:
                return value
        return None

    def header_map(self) -> dict[str, str]:
        """Every header name with its value (the first occurrence's, as ``header`` gives)."""
        headers = dict(self.headers)
        if len(headers) != len(self.headers):  # a repeated header: its first value counts
            headers = {}
            for name, value in self.headers:
                headers.setdefault(name, value)
        return headers

    def to_bytes(self, version: Version) -> bytes:
        """The frame on the wire in ``version``, ending with ``FRAME_END`` (see ``encode_frame``)."""
        return encode_frame(self.command, self.headers, self.body, version)


def encode_frame(
    command: str, headers: Iterable[tuple[str, str]], body: bytes, version: Version
) -> bytes:
    """The bytes of a ``command`` frame with ``headers`` and ``body`` in ``version``, ending
    with ``FRAME_END`` (what ``Frame.to_bytes`` writes, without building a ``Frame``).

    A non-empty body gets a ``content-length`` header unless the frame has one (which must
    then match the body). Raises ``ValueError`` for an unknown command, a body on a frame
    that may not have one, or a header the version cannot carry (an empty name; a line feed
    or, in a name, a colon where nothing is escaped; a value ending in a carriage return
    where carriage returns are not escaped).
    """
    return b"".join((encode_frame_head(command, headers, len(body), version), body, FRAME_END))


def encode_frame_head(
    command: str, headers: Iterable[tuple[str, str]], body_length: int, version: Version
) -> bytes:
    """What ``encode_frame`` writes before a body of ``body_length`` bytes (the body and
    ``FRAME_END`` follow), for a writer that sends a large body from its parts instead of joining it
    first. The same checks and ``ValueError`` as ``encode_frame``."""
    if command not in CLIENT_COMMANDS and command not in SERVER_COMMANDS:
        raise ValueError(f"unknown STOMP command {command!r}")
    if body_length and command not in BODY_COMMANDS:
        raise ValueError(f"a {command} frame may not have a body ({body_length} bytes given)")
    headers = tuple(headers)
    if version is _V1_0 or command in UNESCAPED_COMMANDS:
        lines = _unescaped_lines(command, headers, version)
    else:
        lines = _escaped_lines(command, headers, version)
    if lines.startswith("content-length:") or "\ncontent-length:" in lines:
        stated = next(value for name, value in headers if name == "content-length")
        if parse_content_length(stated) != body_length:
            raise ValueError(
                f"{command} frame says content-length:{quote(stated)} but its body has "
                f"{body_length} bytes"
            )
    elif body_length:
        lines += f"content-length:{body_length}\n"
    try:
        return f"{command}\n{lines}\n".encode()
    except UnicodeEncodeError as error:
        raise ValueError(f"{command} frame headers are not valid Unicode: {error}") from error


# Stand-ins for ":" and the line feed while a header block is one string, so that escaping it
# is a few passes over the whole block instead of checks on every name and value.
_NAME_END: Final = "\x01"
_LINE_END: Final = "\x00"


def _escaped_lines(command: str, headers: tuple[tuple[str, str], ...], version: Version) -> str:
    """The header lines of ``headers``, escaped as ``version`` says."""
    if not headers:
        return ""
    block = _LINE_END.join([f"{name}{_NAME_END}{value}" for name, value in headers])
    if block.count(_NAME_END) != len(headers) or block.count(_LINE_END) != len(headers) - 1:
        # A name or value holds a stand-in character itself: escape header by header.
        _check_escapable(command, headers, version)
        return "".join(
            f"{escape_header(name, version)}:{escape_header(value, version)}\n"
            for name, value in headers
        )
    if (
        block.startswith(_NAME_END)
        or _LINE_END + _NAME_END in block
        or (version is _V1_1 and (block.endswith("\r") or "\r" + _LINE_END in block))
    ):
        _check_escapable(command, headers, version)  # raises, naming the header
    block = escape_header(block, version)
    return block.replace(_NAME_END, ":").replace(_LINE_END, "\n") + "\n"


def _check_escapable(command: str, headers: tuple[tuple[str, str], ...], version: Version) -> None:
    for name, value in headers:
        if not name:
            raise ValueError(f"{command} frame has a header with an empty name")
        if version is _V1_1 and value.endswith("\r"):
            raise ValueError(_unrepresentable(command, name, value, version))


def _unescaped_lines(command: str, headers: tuple[tuple[str, str], ...], version: Version) -> str:
    """The header lines of ``headers`` where nothing is escaped (what cannot be said refused)."""
    lines = []
    for name, value in headers:
        if not name:
            raise ValueError(f"{command} frame has a header with an empty name")
        if "\n" in name or ":" in name or "\n" in value or value.endswith("\r"):
            raise ValueError(_unrepresentable(command, name, value, version))
        lines.append(f"{name}:{value}\n")
    return "".join(lines)


def _unrepresentable(command: str, name: str, value: str, version: Version) -> str:
    return (
        f"{command} frame header {quote(name)}:{quote(value)} cannot be written in STOMP {version}"
        f"{' (CONNECT/STOMP/CONNECTED headers are never escaped)' if command in UNESCAPED_COMMANDS else ''}"
    )


_ESCAPES: Final = {
    Version.V1_1: {"\\": "\\\\", "\n": "\\n", ":": "\\c"},
    Version.V1_2: {"\\": "\\\\", "\r": "\\r", "\n": "\\n", ":": "\\c"},
}
_UNESCAPES: Final = {
    version: {escape[1]: character for character, escape in table.items()}
    for version, table in _ESCAPES.items()
}
_BACKSLASH: Final = "\\"
_ESCAPE_SEQUENCE: Final = re.compile(r"\\(.?)", re.DOTALL)


def escape_header(text: str, version: Version) -> str:
    """``text`` with the escapes of ``version`` applied (1.0 has none: ``text`` is returned)."""
    if version is _V1_0:
        return text
    # Backslashes first, so that the backslashes of the other escapes stay as they are. A few
    # passes of str.replace beat one str.translate, which maps character by character in Python
    # objects once any replacement is longer than one character.
    text = text.replace("\\", "\\\\").replace("\n", "\\n").replace(":", "\\c")
    return text.replace("\r", "\\r") if version is _V1_2 else text


def unescape_header(text: str, version: Version) -> str:
    """The header text an escaped ``text`` stands for in ``version``.

    Raises ``StompProtocolError`` for an escape the version does not define (``\\t``, ``\\r`` in
    1.1, a lone trailing backslash): STOMP makes those a fatal protocol error.
    """
    if "\\" not in text or version is _V1_0:
        return text
    table = _UNESCAPES[version]

    def replace(match: re.Match[str]) -> str:
        character = table.get(match.group(1))
        if character is None:
            defined = ", ".join(repr(_BACKSLASH + code) for code in table)
            raise StompProtocolError(
                f"undefined escape sequence {match.group(0)!r} in {quote(text)} "
                f"(STOMP {version} defines {defined})"
            )
        return character

    return _ESCAPE_SEQUENCE.sub(replace, text)


def parse_content_length(text: str) -> int | None:
    """The byte count a ``content-length`` value states, or None when it is not one.

    Only ASCII decimal digits are a count (no sign, no spaces); leading zeros are allowed.
    Absurdly long counts read as larger than any limit rather than costing time to convert.
    """
    if not text or not text.isascii() or not text.isdigit():
        return None
    if len(text) <= _MAX_CONTENT_LENGTH_DIGITS:
        return int(text)
    significant = text.lstrip("0")
    if len(significant) > _MAX_CONTENT_LENGTH_DIGITS:
        return 10**_MAX_CONTENT_LENGTH_DIGITS
    return int(significant or "0")


def error_frame(
    message: str,
    *,
    receipt: str | None = None,
    extra_headers: Iterable[tuple[str, str]] = (),
) -> Frame:
    """The ERROR frame that reports ``message`` to the peer.

    Its ``message`` header is ``message`` on one line (line breaks become spaces, so it can be
    written before any version is agreed); the body is ``message`` in full as UTF-8 text.
    ``receipt`` (the offending frame's ``receipt`` header) becomes ``receipt-id``.
    """
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")
    headers = [("message", " ".join(message.splitlines()))]
    if receipt is not None:
        headers.append(("receipt-id", receipt))
    headers.extend(extra_headers)
    headers.append(("content-type", "text/plain"))
    return Frame("ERROR", tuple(headers), message.encode("utf-8"))


def receipt_frame(receipt_id: str) -> Frame:
    """The RECEIPT frame acknowledging the client frame whose ``receipt`` header was ``receipt_id``."""
    return Frame("RECEIPT", (("receipt-id", receipt_id),))
