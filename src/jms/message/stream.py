"""``StreamMessage``: a sequence of typed values, written and read in order.

Unlike a BytesMessage the stream remembers each value's Java type, and reads convert by the
spec's Stream table (a long cannot be read as a short). It follows the same write-only / reset /
read-only state machine; a failed read (bad conversion, end of stream) leaves the position where
it was. A ``byte[]`` value may be read in chunks with ``read_bytes``; once started, the field must
be read to its last byte before another value is read ("the full value of the field must be read
before it is valid to read the next field"); a further ``read_bytes`` then returns -1.
"""

from __future__ import annotations

from typing import Any

from jms.errors import (
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
    MessageNotWriteableException,
)
from jms.message.byte_arrays import read_length, slice_of
from jms.message.conversions import convert, typed_value
from jms.message.message import Message
from jms.types import Byte, Char, Double, Float, Int, Long, Short, a_java_type

__all__ = ["StreamMessage"]

_NOT_IN_BYTES_FIELD = -1


class StreamMessage(Message):
    """A stream of typed values (JMS ``StreamMessage``)."""

    __slots__ = ("_bytes_read", "_index", "_reading", "_values")
    body_type = "stream"

    def __init__(self) -> None:
        super().__init__()
        self._values: list[Any] = []
        self._reading = False
        self._index = 0
        self._bytes_read = _NOT_IN_BYTES_FIELD

    # -- state machine ------------------------------------------------------------------------

    def reset(self) -> None:
        """Make the body read-only and rewind to the first value."""
        self._reading = True
        self._index = 0
        self._bytes_read = _NOT_IN_BYTES_FIELD

    def _clear_body_content(self) -> None:
        self._values = []
        self._reading = False
        self._index = 0
        self._bytes_read = _NOT_IN_BYTES_FIELD

    def _prepare_body_for_reading(self) -> None:
        self.reset()

    def _write(self, value: object) -> None:
        if self._reading or self._body_read_only:
            raise MessageNotWriteableException(
                "this StreamMessage is in read-only mode (after reset() or delivery); "
                "call clear_body() to write"
            )
        self._values.append(value)

    def _next_index(self, target: str) -> int:
        """Where the value the next read of a ``target`` gets is; raises if there is none."""
        if not self._reading:
            raise MessageNotReadableException(
                f"cannot read a {target}: this StreamMessage is write-only; call reset() first"
            )
        index = self._index
        if self._bytes_read != _NOT_IN_BYTES_FIELD:
            if self._bytes_read < len(self._values[index]):
                raise MessageFormatException(
                    f"cannot read a {target}: the byte[] value at position {index} was only "
                    "partly read; call read_bytes until it has all been read first"
                )
            index += 1  # that byte[] value was read to its last byte: it is done
        if index >= len(self._values):
            raise MessageEOFException(
                f"cannot read a {target}: the stream has no value at position {index} "
                f"(it holds {len(self._values)})"
            )
        return index

    def _read(self, target: str) -> Any:
        index = self._next_index(target)
        # convert raises before the position moves, so a failed read can be retried as another type.
        value = convert(self._values[index], target, f"stream value {index}")
        self._index, self._bytes_read = index + 1, _NOT_IN_BYTES_FIELD
        return value

    # -- reads --------------------------------------------------------------------------------

    def read_boolean(self) -> bool:
        return self._read("boolean")

    def read_byte(self) -> int:
        return int(self._read("byte"))

    def read_short(self) -> int:
        return int(self._read("short"))

    def read_char(self) -> str:
        return self._read("char")

    def read_int(self) -> int:
        return int(self._read("int"))

    def read_long(self) -> int:
        return int(self._read("long"))

    def read_float(self) -> float:
        return float(self._read("float"))

    def read_double(self) -> float:
        return float(self._read("double"))

    def read_string(self) -> str | None:
        return self._read("String")

    def read_object(self) -> Any:
        """The next value as written, typed (``Int(5)``, ``Char('x')``, ``bytes``), or None."""
        index = self._next_index("object")
        self._index, self._bytes_read = index + 1, _NOT_IN_BYTES_FIELD
        return self._values[index]

    def read_bytes(self, buffer: bytearray, length: int | None = None) -> int:
        """Read the next chunk of the current byte[] value into ``buffer[:length]`` (default: all
        of it).

        Returns the number of bytes copied; once the value has been read to its end the next call
        returns -1 and moves to the following value. A null value returns -1 at once, an empty
        one 0 and then -1.
        """
        wanted = read_length(buffer, length, "read_bytes")
        if not self._reading:
            raise MessageNotReadableException(
                "cannot read bytes: this StreamMessage is write-only; call reset() first"
            )
        if self._bytes_read == _NOT_IN_BYTES_FIELD:
            if self._index >= len(self._values):
                raise MessageEOFException(
                    f"cannot read bytes: the stream has no value at position {self._index}"
                )
            value = self._values[self._index]
            if value is None:
                self._index += 1
                return -1
            if type(value) is not bytes:
                raise MessageFormatException(
                    f"stream value {self._index} holds {a_java_type(value)}, "
                    "which cannot be read as byte[]"
                )
            self._bytes_read = 0
        elif self._bytes_read == len(self._values[self._index]):
            self._bytes_read = _NOT_IN_BYTES_FIELD
            self._index += 1
            return -1
        field = self._values[self._index]
        count = min(wanted, len(field) - self._bytes_read)
        buffer[:count] = field[self._bytes_read : self._bytes_read + count]
        self._bytes_read += count
        return count

    # -- writes -------------------------------------------------------------------------------

    def write_boolean(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"write_boolean takes a bool, got {value!r}")
        self._write(value)

    def write_byte(self, value: int) -> None:
        self._write(Byte(value))

    def write_short(self, value: int) -> None:
        self._write(Short(value))

    def write_char(self, value: str) -> None:
        self._write(Char(value))

    def write_int(self, value: int) -> None:
        self._write(Int(value))

    def write_long(self, value: int) -> None:
        self._write(Long(value))

    def write_float(self, value: float) -> None:
        self._write(Float(value))

    def write_double(self, value: float) -> None:
        self._write(Double(value))

    def write_string(self, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise TypeError(f"write_string takes a str or None, got {type(value).__name__}")
        self._write(None if value is None else str(value))

    def write_bytes(
        self, value: bytes | bytearray, offset: int = 0, length: int | None = None
    ) -> None:
        """Append a copy of ``value[offset:offset+length]`` as one byte[] value."""
        self._write(slice_of(value, offset, length, "write_bytes"))

    def write_object(self, value: object) -> None:
        self._write(typed_value(value, "write_object", allow_body_types=True))

    # -- body as a whole ----------------------------------------------------------------------

    def get_body(self, cls: type) -> Any:
        raise MessageFormatException("get_body is not supported for a StreamMessage (JMS 2.0)")

    def is_body_assignable_to(self, cls: type) -> bool:
        return False

    def _has_body(self) -> bool:
        return bool(self._values)

    def _copy_body_into(self, clone: Any) -> None:
        clone._values = list(self._values)
        clone._reading = self._reading
        clone._index = 0
        clone._bytes_read = _NOT_IN_BYTES_FIELD
