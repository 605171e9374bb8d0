"""The incremental STOMP frame parser: bytes in any chunking, frames and heart-beats out.

An end-of-line right after a frame's NUL ends that frame (STOMP's ``NULL *( EOL )``, what
``Frame.to_bytes`` writes and ActiveMQ sends); every other end-of-line between frames is a
heart-beat. A frame ending with a bare NUL reads the same.

``FrameParser(sender)`` reads the frames one peer sends (a server parses ``Role.CLIENT`` frames,
a client ``Role.SERVER`` frames). ``feed(data)`` buffers the bytes and returns a lazy iterator of
the ``Frame`` and ``HeartBeat`` events they complete; because it is lazy, a caller that changes
``parser.version`` while handling a CONNECT or CONNECTED frame has the new escaping apply to the
very next frame, even one that arrived in the same chunk. A frame already whole in the buffer
is read in one pass; one still arriving, and everything to refuse, goes the general,
incremental way, where every refusal is worded. It is the boundary where untrusted
bytes enter: everything STOMP does not allow, and everything past ``FrameLimits``, raises
``StompProtocolError`` naming what and where (never another exception), memory stays bounded by
the limits however the peer misbehaves, and after an error the parser stays failed. It never
touches a socket and knows nothing of connection state beyond the version in force.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum, auto
from typing import Final, NoReturn, cast

from mypy_extensions import mypyc_attr

from jms.stomp.errors import StompProtocolError, quote
from jms.stomp.frames import (
    BODY_COMMANDS,
    CLIENT_COMMANDS,
    SERVER_COMMANDS,
    UNESCAPED_COMMANDS,
    Frame,
    HeartBeat,
    Role,
    Version,
    parse_content_length,
    unescape_header,
)

__all__ = ["FrameLimits", "FrameParser"]

_LF: Final = 0x0A
_CR: Final = 0x0D
_NUL: Final = 0x00
_LONGEST_COMMAND: Final = max(len(command) for command in CLIENT_COMMANDS | SERVER_COMMANDS)
_HEART_BEAT: Final = HeartBeat()
_BLANK_LINE: Final = re.compile(rb"\n\r?\n")
# A Frame made from its fields without the named tuple's __new__, a Python function: one frame
# is made for every frame read.
_new_frame: Final = functools.partial(tuple.__new__, Frame)


# A plain class, not a compiled one: a compiled class would turn True into 1 and refuse 1.5 with
# its own TypeError before __post_init__ could say what is wrong.
@mypyc_attr(native_class=False)
@dataclass(frozen=True, slots=True)
class FrameLimits:
    """How much one frame may hold before the parser refuses it (STOMP 1.2 "Size Limits").

    ``max_header_line_bytes`` counts one header line without its end-of-line;
    ``max_header_section_bytes`` counts the command line, every header line and the blank line
    that ends them, end-of-lines included; ``max_body_bytes`` counts the body without its NUL.
    """

    max_headers: int = 1000
    max_header_line_bytes: int = 16 * 1024
    max_header_section_bytes: int = 64 * 1024
    max_body_bytes: int = 10 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in (
            "max_headers",
            "max_header_line_bytes",
            "max_header_section_bytes",
            "max_body_bytes",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"FrameLimits.{name} must be a positive int, got {value!r}")


class _Expecting(Enum):
    COMMAND = auto()  # between frames: end-of-lines are heart-beats, anything else a command
    HEADER_SECTION = auto()
    BODY = auto()


# Bound once: an Enum member looked up through its class costs ~50 ns, on every frame.
_COMMAND: Final = _Expecting.COMMAND
_HEADER_SECTION: Final = _Expecting.HEADER_SECTION
_BODY: Final = _Expecting.BODY
_V1_0: Final = Version.V1_0


# Subclassed in the tests, to read every frame the general way (compiled classes allow it only
# when told to).
@mypyc_attr(allow_interpreted_subclasses=True)
class FrameParser:
    """Parses the frames one peer sends, incrementally. See the module docstring."""

    def __init__(
        self,
        sender: Role,
        limits: FrameLimits = FrameLimits(),
        version: Version = Version.V1_0,
    ) -> None:
        self.sender = sender
        self.limits = limits
        self.version = version
        # Each command the sender may send, to itself: the frames carry these very strings.
        self._commands = {
            command: command
            for command in (CLIENT_COMMANDS if sender is Role.CLIENT else SERVER_COMMANDS)
        }
        self._other_side_commands = SERVER_COMMANDS if sender is Role.CLIENT else CLIENT_COMMANDS
        self._buffer = bytearray()
        # Where the bytes not yet read start. Only reading between frames leaves it past 0: a
        # frame read in one pass or a heart-beat moves it, and the bytes before it are deleted
        # (_compact) when the next chunk comes or the general path takes over, not per frame.
        self._pos = 0
        self._buffer_offset = 0  # stream offset of _buffer[0], for error messages
        self._scanned = 0  # where to search the buffer next (for a line end, blank line or NUL)
        self._expecting = _COMMAND
        # A frame has just ended: an end-of-line now is its own, not a heart-beat.
        self._frame_ended = False
        self._error: StompProtocolError | None = None
        # The frame being read.
        self._frame_offset = 0
        self._command = ""
        self._escaped = False
        self._headers: list[tuple[str, str]] = []
        self._headers_start = 0  # buffer index of the first header line
        self._line_start = 0  # buffer index of the header line not yet ended by a line feed
        self._content_length: int | None = None

    @property
    def version(self) -> Version:
        """The version whose escaping applies to frames other than CONNECT/STOMP/CONNECTED; set
        it when negotiation decides. Before that, headers read verbatim as in STOMP 1.0."""
        return self._version

    @version.setter
    def version(self, version: Version) -> None:
        self._version = version
        self._unescaping = version is not _V1_0  # what the version means, once, not per frame

    @property
    def buffered_bytes(self) -> int:
        """How many bytes wait for the rest of their frame (or for the next iteration)."""
        return len(self._buffer) - self._pos

    def feed(self, data: bytes) -> Iterator[Frame | HeartBeat]:
        """Take ``data`` and iterate over the events it completes, parsing each when asked for.

        Bytes not yet part of a whole frame wait for the next ``feed``. Raises
        ``StompProtocolError`` (now or while iterating) when the peer broke the protocol.
        """
        if self._error is not None:
            raise self._error
        self._compact()
        self._buffer += data
        return self._events()

    def _events(self) -> Iterator[Frame | HeartBeat]:
        while (event := self._next_event()) is not None:
            yield event

    def _next_event(self) -> Frame | HeartBeat | None:
        """The next event the buffer holds, parsed now, or None until more bytes arrive.

        Raises ``StompProtocolError`` when the peer broke the protocol, and that same error on
        every later call. ``ServerConnection`` calls it directly, one event at a time, so that
        its own checks run before each frame is parsed without a second generator around this
        one."""
        if self._error is not None:
            raise self._error
        try:
            if self._expecting is _COMMAND:
                buffer = self._buffer
                pos = self._pos
                if pos == len(buffer):
                    return None
                if buffer[pos] == _LF or buffer[pos] == _CR:
                    if not self._read_end_of_line():
                        return None  # a CR whose LF is still to come
                    if self._frame_ended:
                        self._frame_ended = False
                        return self._next_event()
                    return _HEART_BEAT
                self._frame_ended = False
                frame = self._read_whole_frame()
                if frame is not None:
                    return frame
                # A cast, for the compiled parser: the type checker would take _expecting to be
                # _COMMAND still, though _read_whole_frame may have changed it.
                if cast(_Expecting, self._expecting) is _BODY:
                    return None  # its headers are read, its body is still arriving
                self._compact()
                self._start_frame()
            if self._expecting is _HEADER_SECTION and not self._read_header_section():
                return None
            return self._read_body()
        except StompProtocolError as error:
            self._error = error
            raise

    def _read_end_of_line(self) -> bool:
        """Read the end-of-line at the read position (a frame's own or a heart-beat); False
        while it is a CR whose LF is still to come."""
        # At the read position, like a frame read in one pass: every frame may end with an
        # end-of-line, and it should not cost a deletion either.
        buffer = self._buffer
        pos = self._pos
        if buffer[pos] == _LF:
            self._pos = pos + 1
            return True
        if len(buffer) - pos < 2:
            return False
        if buffer[pos + 1] == _LF:
            self._pos = pos + 2
            return True
        self._fail_at(
            self._buffer_offset + pos,
            "a carriage return between frames is not followed by a line feed",
        )

    def _read_whole_frame(self) -> Frame | None:
        """The frame at the read position, read in one pass when its header section is all
        there and plain: LF end-of-lines, UTF-8 header lines well within the limits, only the
        escapes its version defines, a content-length its command and the limit allow. When
        its body is still arriving, the general path waits for it (``_await_body``). None for
        any other frame (a header section still arriving, CR LF, anything to refuse), which the
        general path (``_start_frame`` on) then reads from the same bytes and words every
        refusal of. What this reads, the general path would read identically: the property
        tests hold the two equal."""
        buffer = self._buffer
        pos = self._pos
        limits = self.limits
        # A search for LF LF (a bytes search, several times cheaper than the regular expression
        # the general path uses). Past a CR LF blank line it finds a later one, or none, within
        # the limit: either way the text it ends has a CR in it, left to the general path.
        blank_line_start = buffer.find(b"\n\n", pos, pos + limits.max_header_section_bytes)
        if blank_line_start < 0:
            return None
        section_end = blank_line_start + 2  # the body starts here
        try:
            text = buffer[pos:blank_line_start].decode("utf-8")
        except UnicodeDecodeError:
            return None
        if "\r" in text:
            return None
        lines = text.split("\n")
        command = self._commands.get(lines[0])
        if command is None or len(lines) > limits.max_headers + 1:
            return None
        if len(text) > (
            limits.max_header_line_bytes
            if len(text) == blank_line_start - pos
            else limits.max_header_line_bytes // 4  # not all ASCII: up to 4 bytes a character
        ):
            return None  # some line might be too long: the general path measures each
        headers: list[tuple[str, str]] = []
        content_length: str | None = None
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not name or not colon:
                return None
            if content_length is None and name == "content-length":
                # An escape never stands for a letter or a digit, so this is the first
                # content-length header escaped or not, and a value with an escape in it is no
                # count either way.
                content_length = value
            headers.append((name, value))
        if "\\" in text and self._unescaping and command not in UNESCAPED_COMMANDS:
            version = self._version
            try:
                headers = [
                    (unescape_header(name, version), unescape_header(value, version))
                    for name, value in headers
                ]
            except StompProtocolError:
                return None
        if content_length is None:
            length = None
            if command in BODY_COMMANDS:
                end = buffer.find(b"\0", section_end, section_end + limits.max_body_bytes + 1)
                if end < 0:
                    if len(buffer) - section_end > limits.max_body_bytes:
                        return None
                    end = len(buffer)  # the NUL is still to come
            else:
                end = section_end
        else:
            length = parse_content_length(content_length)
            if (
                length is None
                or length > limits.max_body_bytes
                or (length and command not in BODY_COMMANDS)
            ):
                return None
            end = section_end + length
        if end >= len(buffer):
            self._await_body(command, headers, length, section_end)
            return None
        if buffer[end] != _NUL:
            return None
        if end + 1 < len(buffer) and buffer[end + 1] == _LF:
            # Its own end-of-line came with it, as it does from jms and ActiveMQ.
            self._pos = end + 2
        else:
            self._pos = end + 1
            self._frame_ended = True
        # The body copied once, through a view (a slice of the bytearray would be a second copy);
        # the view is released before this returns, so the buffer may be resized again.
        return _new_frame((command, tuple(headers), bytes(memoryview(buffer)[section_end:end])))

    def _await_body(
        self,
        command: str,
        headers: list[tuple[str, str]],
        content_length: int | None,
        section_end: int,
    ) -> None:
        """Leave a frame whose header section was read in one pass, and whose body is still
        arriving, to the general path: as if it had read that header section itself.
        ``section_end`` is where the body starts in the buffer."""
        self._frame_offset = self._buffer_offset + self._pos
        self._pos = section_end
        self._compact()
        self._command = command
        self._headers = headers
        self._content_length = content_length
        self._expecting = _BODY
        self._scanned = 0

    def _start_frame(self) -> None:
        self._expecting = _HEADER_SECTION
        self._frame_offset = self._buffer_offset
        self._command = ""
        self._headers = []
        self._scanned = 0

    def _read_header_section(self) -> bool:
        """Read the command line as soon as it is whole, and the headers once the blank line
        ending them is buffered; True when the header section has been read."""
        buffer = self._buffer
        limits = self.limits
        search_from = self._scanned
        if not self._command:
            line_end = buffer.find(b"\n", search_from)
            if line_end < 0:
                if len(buffer) > _LONGEST_COMMAND + 1:
                    self._fail(
                        f"no STOMP command starts with {quote(bytes(buffer[: _LONGEST_COMMAND + 2]))}"
                    )
                self._scanned = len(buffer)
                return False
            command_end = line_end - 1 if line_end and buffer[line_end - 1] == _CR else line_end
            self._read_command(bytes(buffer[:command_end]))
            self._headers_start = self._line_start = line_end + 1
            search_from = line_end  # the blank line may follow the command line at once
        blank_line = _BLANK_LINE.search(buffer, search_from)
        if blank_line is None:
            last_line_end = buffer.rfind(b"\n", search_from)
            if last_line_end >= self._line_start:
                self._line_start = last_line_end + 1
            if len(buffer) - self._line_start > limits.max_header_line_bytes + 1:
                number = buffer.count(b"\n", self._headers_start, self._line_start) + 1
                self._fail(
                    f"header line {number} is longer than {limits.max_header_line_bytes} bytes"
                )
            if len(buffer) > limits.max_header_section_bytes:
                self._fail(f"the header section exceeds {limits.max_header_section_bytes} bytes")
            # Look again from the last two bytes: a blank line may straddle the next chunk.
            self._scanned = max(len(buffer) - 2, self._headers_start - 1)
            return False
        section_end = blank_line.end()
        if section_end > limits.max_header_section_bytes:
            self._fail(f"the header section exceeds {limits.max_header_section_bytes} bytes")
        if blank_line.start() >= self._headers_start:
            self._read_headers(bytes(buffer[self._headers_start : blank_line.start()]))
        self._consume(section_end)
        self._end_header_section()
        return True

    def _read_command(self, line: bytes) -> None:
        # Latin-1 decodes any bytes; only the ASCII of a command's name can spell one.
        command = self._commands.get(line.decode("latin-1"))
        if command is None:
            text = line.decode("ascii", "replace")
            if text in self._other_side_commands:
                self._fail(
                    f"{text} is a {_opposite(self.sender).value} frame; a {self.sender.value} may not send it"
                )
            self._fail(f"unknown command {quote(line)}")
        self._command = command
        self._escaped = self._unescaping and command not in UNESCAPED_COMMANDS

    def _read_headers(self, section: bytes) -> None:
        """Read the header lines of a whole header section (never empty: a blank line ends it)
        line by line, refusing what STOMP does not allow."""
        limits = self.limits
        max_line_bytes = limits.max_header_line_bytes
        escaped = self._escaped
        version = self._version
        headers = self._headers
        for number, line in enumerate(section.split(b"\n"), 1):
            if line[-1] == _CR:
                line = line[:-1]
            if len(line) > max_line_bytes:
                self._fail(f"header line {number} is longer than {max_line_bytes} bytes")
            if number > limits.max_headers:
                self._fail(f"more than {limits.max_headers} headers")
            name_bytes, colon, value_bytes = line.partition(b":")
            if not colon:
                self._fail(f"header line {number} {quote(line)} has no colon")
            if not name_bytes:
                self._fail(f"header line {number} {quote(line)} has an empty name")
            if line[-1] == _CR:
                self._fail(
                    f"header line {number} {quote(line)} ends with a carriage return before its end-of-line"
                )
            try:
                name = name_bytes.decode("utf-8")
                value = value_bytes.decode("utf-8")
            except UnicodeDecodeError as error:
                self._fail(
                    f"header line {number} {quote(line)} is not UTF-8 ({error.reason} at byte {error.start})"
                )
            if escaped and b"\\" in line:
                try:
                    name = unescape_header(name, version)
                    value = unescape_header(value, version)
                except StompProtocolError as error:
                    self._fail(f"header line {number}: {error.message}")
            headers.append((name, value))

    def _end_header_section(self) -> None:
        self._expecting = _BODY
        self._scanned = 0
        self._content_length = None
        for name, value in self._headers:
            if name == "content-length":
                length = parse_content_length(value)
                if length is None:
                    self._fail(f"content-length {quote(value)} is not a byte count")
                if length > self.limits.max_body_bytes:
                    self._fail(
                        f"content-length {length} exceeds the {self.limits.max_body_bytes}-byte body limit"
                    )
                if length and self._command not in BODY_COMMANDS:
                    self._fail(
                        f"a {self._command} frame may not have a body (content-length {length})"
                    )
                self._content_length = length
                return

    def _read_body(self) -> Frame | None:
        buffer = self._buffer
        length = self._content_length
        if length is not None:
            if len(buffer) <= length:
                return None
            if buffer[length] != _NUL:
                self._fail(
                    f"the {length}-byte body content-length announced is followed by "
                    f"{quote(bytes(buffer[length : length + 1]))}, not NUL"
                )
            end = length
        elif self._command not in BODY_COMMANDS:
            if not buffer:
                return None
            if buffer[0] != _NUL:
                self._fail(
                    f"a {self._command} frame may not have a body; expected NUL after its headers"
                )
            end = 0
        else:
            end = buffer.find(b"\0", self._scanned)
            if end < 0:
                self._scanned = len(buffer)
                if len(buffer) > self.limits.max_body_bytes:
                    self._fail(f"the body exceeds {self.limits.max_body_bytes} bytes without a NUL")
                return None
            if end > self.limits.max_body_bytes:
                self._fail(f"the body exceeds {self.limits.max_body_bytes} bytes")
        # Through a view, the body is copied once (a bytearray slice would copy it twice).
        with memoryview(buffer) as view:
            body = bytes(view[:end])
        frame = Frame(self._command, tuple(self._headers), body)
        self._consume(end + 1)
        self._expecting = _COMMAND
        self._frame_ended = True
        self._headers = []
        return frame

    def _consume(self, count: int) -> None:
        del self._buffer[:count]
        self._buffer_offset += count

    def _compact(self) -> None:
        """Delete the bytes the one-pass path has read (cheap: CPython deletes the start of a
        bytearray without moving the rest), so that the buffer starts where reading goes on."""
        if self._pos:
            self._consume(self._pos)
            self._pos = 0

    def _fail(self, what: str) -> NoReturn:
        where = f"{self._command} frame" if self._command else "frame"
        raise StompProtocolError(f"{where} at byte {self._frame_offset}: {what}")

    def _fail_at(self, offset: int, what: str) -> NoReturn:
        raise StompProtocolError(f"at byte {offset}: {what}")


def _opposite(role: Role) -> Role:
    return Role.SERVER if role is Role.CLIENT else Role.CLIENT
