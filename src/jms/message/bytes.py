"""``BytesMessage``: an uninterpreted byte stream, written and read like Java's Data streams.

Values are encoded exactly as ``java.io.DataOutputStream`` does (big-endian, ``write_utf`` in
modified UTF-8 with a two-byte length), so a Java peer reading the same bytes gets the same values.
The body follows the spec's state machine: a new or cleared message is write-only; ``reset()`` (or
delivery) makes it read-only and rewinds; a read that fails leaves the position where it was.
"""

from __future__ import annotations

import struct
from typing import Any, Final

from jms.errors import (
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
    MessageNotWriteableException,
)
from jms.message.byte_arrays import read_length, slice_of
from jms.message.conversions import typed_value
from jms.message.message import Message
from jms.types import Byte, Char, Double, Float, Int, Long, Short

__all__ = ["BytesMessage", "decode_modified_utf8", "encode_modified_utf8"]

_BOOL: Final = struct.Struct(">?")
_BYTE: Final = struct.Struct(">b")
_UBYTE: Final = struct.Struct(">B")
_SHORT: Final = struct.Struct(">h")
_USHORT: Final = struct.Struct(">H")
_INT: Final = struct.Struct(">i")
_LONG: Final = struct.Struct(">q")
_FLOAT: Final = struct.Struct(">f")
_DOUBLE: Final = struct.Struct(">d")


def encode_modified_utf8(text: str) -> bytes:
    """Java's modified UTF-8: UTF-16 code units, U+0000 as C0 80, surrogates as 3 bytes each."""
    if text.isascii() and "\x00" not in text:
        return text.encode("ascii")
    units = text.encode("utf-16-be", "surrogatepass")
    out = bytearray()
    for (unit,) in struct.iter_unpack(">H", units):
        if 0 < unit < 0x80:
            out.append(unit)
        elif unit < 0x800:
            out += bytes((0xC0 | (unit >> 6), 0x80 | (unit & 0x3F)))
        else:
            out += bytes((0xE0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3F), 0x80 | (unit & 0x3F)))
    return bytes(out)


def decode_modified_utf8(data: bytes) -> str:
    """Inverse of :func:`encode_modified_utf8`, decoding as ``DataInputStream.readUTF`` does (which
    also takes a raw zero byte as U+0000); malformed input raises ``ValueError``."""
    if data.isascii():
        return data.decode("ascii")
    units = bytearray()
    index, length = 0, len(data)
    while index < length:
        first = data[index]
        if first < 0x80:
            unit, index = first, index + 1
        elif first >> 5 == 0b110 and index + 1 < length and data[index + 1] >> 6 == 0b10:
            unit = ((first & 0x1F) << 6) | (data[index + 1] & 0x3F)
            index += 2
        elif (
            first >> 4 == 0b1110
            and index + 2 < length
            and data[index + 1] >> 6 == 0b10
            and data[index + 2] >> 6 == 0b10
        ):
            unit = (
                ((first & 0x0F) << 12) | ((data[index + 1] & 0x3F) << 6) | (data[index + 2] & 0x3F)
            )
            index += 3
        else:
            raise ValueError(f"malformed modified UTF-8 at byte {index} (0x{first:02x})")
        units += _USHORT.pack(unit)
    return units.decode("utf-16-be", "surrogatepass")


class BytesMessage(Message):
    """A stream of uninterpreted bytes with typed read/write helpers (JMS ``BytesMessage``)."""

    __slots__ = ("_buffer", "_data", "_position", "_reading")
    body_type = "bytes"

    def __init__(self) -> None:
        super().__init__()
        self._buffer = bytearray()  # the body while writing
        self._data = b""  # the body while reading
        self._position = 0
        self._reading = False

    @classmethod
    def _holding(cls, data: bytes) -> BytesMessage:
        """A message whose body is ``data`` (shared: bytes never change), already in read mode
        as ``reset`` leaves it: what a provider builds for a body it received, in one call."""
        message = object.__new__(cls)
        Message.__init__(message)
        message._buffer = bytearray()
        message._data = data
        message._position = 0
        message._reading = True
        return message

    # -- state machine ------------------------------------------------------------------------

    def reset(self) -> None:
        """Make the body read-only and rewind to its first byte."""
        if not self._reading:
            self._data = bytes(self._buffer)
            self._buffer = bytearray()
            self._reading = True
        self._position = 0

    def _clear_body_content(self) -> None:
        self._buffer = bytearray()
        self._data = b""
        self._position = 0
        self._reading = False

    def _prepare_body_for_reading(self) -> None:
        self.reset()

    def _content(self) -> bytes:
        return self._data if self._reading else bytes(self._buffer)

    def _writable(self) -> bytearray:
        if self._reading or self._body_read_only:
            raise MessageNotWriteableException(
                "this BytesMessage is in read-only mode (after reset() or delivery); "
                "call clear_body() to write"
            )
        return self._buffer

    def _take(self, count: int, what: str) -> bytes:
        if not self._reading:
            raise MessageNotReadableException(
                f"cannot read {what}: this BytesMessage is write-only; call reset() first"
            )
        end = self._position + count
        if end > len(self._data):
            remaining = len(self._data) - self._position
            raise MessageEOFException(
                f"cannot read {what} ({count} bytes) at offset {self._position}: "
                f"only {remaining} bytes remain"
            )
        chunk = self._data[self._position : end]
        self._position = end
        return chunk

    def get_body_length(self) -> int:
        """Number of bytes in the body; only in read-only mode, as the spec says."""
        if not self._reading:
            raise MessageNotReadableException(
                "get_body_length needs the body in read-only mode; call reset() first"
            )
        return len(self._data)

    # -- reads --------------------------------------------------------------------------------

    def read_boolean(self) -> bool:
        return self._take(1, "a boolean")[0] != 0

    def read_byte(self) -> int:
        return _BYTE.unpack(self._take(1, "a byte"))[0]

    def read_unsigned_byte(self) -> int:
        return self._take(1, "an unsigned byte")[0]

    def read_short(self) -> int:
        return _SHORT.unpack(self._take(2, "a short"))[0]

    def read_unsigned_short(self) -> int:
        return _USHORT.unpack(self._take(2, "an unsigned short"))[0]

    def read_char(self) -> str:
        return Char(chr(_USHORT.unpack(self._take(2, "a char"))[0]))

    def read_int(self) -> int:
        return _INT.unpack(self._take(4, "an int"))[0]

    def read_long(self) -> int:
        return _LONG.unpack(self._take(8, "a long"))[0]

    def read_float(self) -> float:
        return _FLOAT.unpack(self._take(4, "a float"))[0]

    def read_double(self) -> float:
        return _DOUBLE.unpack(self._take(8, "a double"))[0]

    def read_utf(self) -> str:
        start = self._position
        (length,) = _USHORT.unpack(self._take(2, "a UTF string length"))
        try:
            return decode_modified_utf8(self._take(length, f"a UTF string of {length} bytes"))
        except MessageEOFException:
            self._position = start
            raise
        except ValueError as error:
            self._position = start
            raise MessageFormatException(f"read_utf at offset {start}: {error}") from None

    def read_bytes(self, buffer: bytearray, length: int | None = None) -> int:
        """Fill ``buffer[:length]`` (default: all of it) from the body; return the count read,
        which is less than asked only at the end, or -1 if the body is already exhausted."""
        wanted = read_length(buffer, length, "read_bytes")
        if not self._reading:
            raise MessageNotReadableException(
                "cannot read bytes: this BytesMessage is write-only; call reset() first"
            )
        available = len(self._data) - self._position
        if available == 0 and wanted > 0:
            return -1
        count = min(wanted, available)
        buffer[:count] = self._data[self._position : self._position + count]
        self._position += count
        return count

    # -- writes -------------------------------------------------------------------------------

    def write_boolean(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"write_boolean takes a bool, got {value!r}")
        self._writable().append(1 if value else 0)

    def write_byte(self, value: int) -> None:
        self._writable().append(Byte(value) & 0xFF)

    def write_short(self, value: int) -> None:
        self._writable().extend(_SHORT.pack(Short(value)))

    def write_char(self, value: str) -> None:
        self._writable().extend(_USHORT.pack(ord(Char(value))))

    def write_int(self, value: int) -> None:
        self._writable().extend(_INT.pack(Int(value)))

    def write_long(self, value: int) -> None:
        self._writable().extend(_LONG.pack(Long(value)))

    def write_float(self, value: float) -> None:
        self._writable().extend(_FLOAT.pack(Float(value)))

    def write_double(self, value: float) -> None:
        self._writable().extend(_DOUBLE.pack(Double(value)))

    def write_utf(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"write_utf takes a str, got {type(value).__name__}")
        encoded = encode_modified_utf8(value)
        if len(encoded) > 0xFFFF:
            raise MessageFormatException(
                f"write_utf: the string encodes to {len(encoded)} bytes of modified UTF-8; "
                "the limit is 65535 (UTFDataFormatException)"
            )
        buffer = self._writable()
        buffer += _USHORT.pack(len(encoded))
        buffer += encoded

    def write_bytes(
        self, value: bytes | bytearray, offset: int = 0, length: int | None = None
    ) -> None:
        self._writable().extend(slice_of(value, offset, length, "write_bytes"))

    def write_object(self, value: object) -> None:
        """Write a boxed primitive, String (as UTF), Char or bytes with its own write method."""
        if value is None:
            raise TypeError(
                "write_object(None): a BytesMessage cannot hold null (NullPointerException)"
            )
        typed = typed_value(value, "write_object", allow_body_types=True)
        writer = _WRITERS[type(typed)]
        writer(self, typed)

    # -- body as a whole ----------------------------------------------------------------------

    def _has_body(self) -> bool:
        return len(self._content()) > 0

    def _body_value(self) -> Any:
        # "This method will reset the BytesMessage before and after use."
        self.reset()
        return self._data

    def _body_is_instance_of(self, cls: type) -> bool:
        return issubclass(bytes, cls)

    def _copy_body_into(self, clone: Any) -> None:
        clone._buffer = bytearray() if self._reading else bytearray(self._buffer)
        clone._data = self._data
        clone._position = 0
        clone._reading = self._reading


_WRITERS: Final[dict[type, Any]] = {
    bool: BytesMessage.write_boolean,
    Byte: BytesMessage.write_byte,
    Short: BytesMessage.write_short,
    Char: BytesMessage.write_char,
    Int: BytesMessage.write_int,
    Long: BytesMessage.write_long,
    Float: BytesMessage.write_float,
    Double: BytesMessage.write_double,
    str: BytesMessage.write_utf,
    bytes: BytesMessage.write_bytes,
}
