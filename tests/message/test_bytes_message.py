"""BytesMessage: java.io.DataOutputStream bytes exactly, modified UTF-8, read_bytes, and the
write-only / reset / read-only state machine.

API.md: "BytesMessage is big-endian java.io.DataOutputStream; write_utf is modified UTF-8."
"read_bytes(buffer: bytearray, length=None) -> int fills buffer like Java's readBytes(byte[]) and
returns the count, or -1 at the end."
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from jms import (
    BytesMessage,
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
    MessageNotWriteableException,
)
from jms.types import Byte, Char, Double, Float, Int, Long, Short

READERS = [
    "read_boolean",
    "read_byte",
    "read_unsigned_byte",
    "read_short",
    "read_unsigned_short",
    "read_char",
    "read_int",
    "read_long",
    "read_float",
    "read_double",
    "read_utf",
]
WRITERS = {
    "write_boolean": True,
    "write_byte": 1,
    "write_short": 1,
    "write_char": "c",
    "write_int": 1,
    "write_long": 1,
    "write_float": 1.0,
    "write_double": 1.0,
    "write_utf": "s",
    "write_bytes": b"b",
    "write_object": 1,
}


def body(message: BytesMessage) -> bytes:
    """The whole body, read through the JMS API (reset, get_body_length, read_bytes)."""
    message.reset()
    buffer = bytearray(message.get_body_length())
    assert message.read_bytes(buffer) in (len(buffer), -1)
    message.reset()
    return bytes(buffer)


def written(writer: str, value: Any) -> BytesMessage:
    message = BytesMessage()
    getattr(message, writer)(value)
    return message


# ---------------------------------------------------------------------------------------------
# The exact bytes of java.io.DataOutputStream

EXACT_BYTES = [
    ("write_boolean", True, b"\x01", "read_boolean"),
    ("write_boolean", False, b"\x00", "read_boolean"),
    ("write_byte", -1, b"\xff", "read_byte"),
    ("write_byte", 127, b"\x7f", "read_byte"),
    ("write_byte", -128, b"\x80", "read_byte"),
    ("write_short", 1, b"\x00\x01", "read_short"),
    ("write_short", -2, b"\xff\xfe", "read_short"),
    ("write_short", 0x1234, b"\x12\x34", "read_short"),
    ("write_char", "A", b"\x00A", "read_char"),
    ("write_char", "€", b"\x20\xac", "read_char"),
    ("write_char", "\uffff", b"\xff\xff", "read_char"),
    ("write_char", "\ud800", b"\xd8\x00", "read_char"),  # a lone surrogate is a char
    ("write_int", 1, b"\x00\x00\x00\x01", "read_int"),
    ("write_int", -1, b"\xff\xff\xff\xff", "read_int"),
    ("write_int", 0x12345678, b"\x12\x34\x56\x78", "read_int"),
    ("write_long", 1, b"\x00\x00\x00\x00\x00\x00\x00\x01", "read_long"),
    ("write_long", -2, b"\xff\xff\xff\xff\xff\xff\xff\xfe", "read_long"),
    ("write_long", 2**63 - 1, b"\x7f\xff\xff\xff\xff\xff\xff\xff", "read_long"),
    ("write_float", 1.0, b"\x3f\x80\x00\x00", "read_float"),
    ("write_float", -0.0, b"\x80\x00\x00\x00", "read_float"),
    ("write_float", math.inf, b"\x7f\x80\x00\x00", "read_float"),
    ("write_double", 1.0, b"\x3f\xf0\x00\x00\x00\x00\x00\x00", "read_double"),
    ("write_double", 0.1, b"\x3f\xb9\x99\x99\x99\x99\x99\x9a", "read_double"),
    ("write_double", -math.inf, b"\xff\xf0\x00\x00\x00\x00\x00\x00", "read_double"),
    # writeUTF: a two-byte big-endian length, then modified UTF-8.
    ("write_utf", "", b"\x00\x00", "read_utf"),
    ("write_utf", "A", b"\x00\x01A", "read_utf"),
    ("write_utf", "OReilly", b"\x00\x07OReilly", "read_utf"),
    ("write_utf", "\x00", b"\x00\x02\xc0\x80", "read_utf"),  # NUL is C0 80, never a zero byte
    ("write_utf", "a\x00b", b"\x00\x04a\xc0\x80b", "read_utf"),
    ("write_utf", "é", b"\x00\x02\xc3\xa9", "read_utf"),
    ("write_utf", "\u07ff", b"\x00\x02\xdf\xbf", "read_utf"),
    ("write_utf", "€", b"\x00\x03\xe2\x82\xac", "read_utf"),
    ("write_utf", "\uffff", b"\x00\x03\xef\xbf\xbf", "read_utf"),
    # A supplementary character is two UTF-16 surrogates of three bytes each (not 4-byte UTF-8).
    ("write_utf", "\U0001f600", b"\x00\x06\xed\xa0\xbd\xed\xb8\x80", "read_utf"),
    ("write_utf", "\ud800", b"\x00\x03\xed\xa0\x80", "read_utf"),  # lone surrogates survive
    ("write_utf", "\udfff\ud800", b"\x00\x06\xed\xbf\xbf\xed\xa0\x80", "read_utf"),
]


@pytest.mark.parametrize(("writer", "value", "expected", "reader"), EXACT_BYTES)
def test_dataoutputstream_bytes_exactly(writer, value, expected, reader):
    message = written(writer, value)
    assert body(message) == expected
    read = getattr(message, reader)()
    if isinstance(value, float):
        assert read == value and math.copysign(1, read) == math.copysign(1, value)
    else:
        assert read == value
        assert isinstance(read, bool) == isinstance(value, bool)
    assert message.read_bytes(bytearray(1)) == -1  # nothing left over


def test_float_and_double_nan_round_trip():
    message = BytesMessage()
    message.write_float(math.nan)
    message.write_double(math.nan)
    assert body(message) == b"\x7f\xc0\x00\x00\x7f\xf8\x00\x00\x00\x00\x00\x00"
    assert math.isnan(message.read_float()) and math.isnan(message.read_double())


def test_write_float_rounds_to_32_bits():
    message = written("write_float", 0.1)
    assert body(message) == b"\x3d\xcc\xcc\xcd"
    assert message.read_float() == 0.10000000149011612


def test_unsigned_reads():
    # "readUnsignedByte() and readUnsignedShort() both return an int" (0 to 255, 0 to 65535).
    message = BytesMessage()
    message.write_byte(-1)
    message.write_short(-1)
    message.write_byte(0x7F)
    message.reset()
    assert message.read_unsigned_byte() == 255
    assert message.read_unsigned_short() == 65535
    assert message.read_unsigned_byte() == 127


def test_the_chapters_example():
    # bytesMessage.writeChar('R'); writeInt(10); writeUTF("OReilly"); read back in the same order.
    message = BytesMessage()
    message.write_char("R")
    message.write_int(10)
    message.write_utf("OReilly")
    assert body(message) == b"\x00R\x00\x00\x00\x0a\x00\x07OReilly"
    assert message.read_char() == "R"
    assert message.read_int() == 10
    assert message.read_utf() == "OReilly"


def test_bytes_are_uninterpreted():
    # "A BytesMessage would write the long as 64 bits (8 bytes) of raw data, so that you could
    # later read some of the data as a short, which is only 16 bits (the first 2 bytes of the
    # long)."
    message = BytesMessage()
    message.write_long(0x0102030405060708)
    message.reset()
    assert message.read_short() == 0x0102
    assert message.read_int() == 0x03040506
    assert message.read_unsigned_short() == 0x0708


def test_read_boolean_is_true_for_any_nonzero_byte():
    message = BytesMessage()
    message.write_bytes(b"\x00\x02\xff")
    message.reset()
    assert [message.read_boolean() for _ in range(3)] == [False, True, True]


VALUES = st.one_of(
    st.tuples(st.just("boolean"), st.booleans()),
    st.tuples(st.just("byte"), st.integers(-128, 127)),
    st.tuples(st.just("short"), st.integers(-(2**15), 2**15 - 1)),
    st.tuples(st.just("char"), st.integers(0, 0xFFFF).map(chr)),
    st.tuples(st.just("int"), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just("long"), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just("float"), st.floats(width=32, allow_nan=False)),
    st.tuples(st.just("double"), st.floats(allow_nan=False)),
    st.tuples(st.just("utf"), st.text(st.characters(codec=None, exclude_categories=()))),
)


@given(st.lists(VALUES, max_size=12))
def test_every_write_read_pair_round_trips(values):
    message = BytesMessage()
    for kind, value in values:
        getattr(message, f"write_{kind}")(value)
    message.reset()
    for kind, value in values:
        read = getattr(message, f"read_{kind}")()
        assert read == value and (
            not isinstance(value, float) or math.copysign(1, read) == math.copysign(1, value)
        )
    with pytest.raises(MessageEOFException):
        message.read_byte()


@given(st.binary())
def test_write_bytes_round_trips(data):
    message = BytesMessage()
    message.write_bytes(data)
    assert body(message) == data
    assert message.get_body_length() == len(data)


# ---------------------------------------------------------------------------------------------
# Modified UTF-8: the 65535-byte limit, decoding like DataInputStream.readUTF


@pytest.mark.parametrize(
    ("text", "fits"),
    [
        ("a" * 65535, True),
        ("a" * 65536, False),
        ("€" * 21845, True),  # 3 bytes each: 65535
        ("€" * 21846, False),
        ("\x00" * 32767, True),  # NUL takes 2 bytes in modified UTF-8: 65534
        ("\x00" * 32768, False),
        ("\U0001f600" * 10922, True),  # 6 bytes each: 65532
        ("\U0001f600" * 10923, False),
    ],
)
def test_write_utf_is_limited_to_65535_encoded_bytes(text, fits):
    message = BytesMessage()
    message.write_byte(7)
    if fits:
        message.write_utf(text)
        message.reset()
        assert message.read_byte() == 7
        assert message.read_utf() == text
    else:
        # DataOutputStream throws UTFDataFormatException; nothing is written.
        with pytest.raises(MessageFormatException):
            message.write_utf(text)
        assert body(message) == b"\x07"


def test_read_utf_accepts_a_raw_nul_byte_as_datainputstream_does():
    # DataInputStream.readUTF decodes any 0xxxxxxx byte as that char, 0x00 included; only the
    # writer avoids it.
    message = BytesMessage()
    message.write_bytes(b"\x00\x03a\x00b")
    message.reset()
    assert message.read_utf() == "a\x00b"


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x01\x80",  # a continuation byte first
        b"\x00\x01\xc3",  # a two-byte form cut short
        b"\x00\x02\xc3\x29",  # a bad continuation byte
        b"\x00\x02\xe2\x82",  # a three-byte form cut short
        b"\x00\x01\xf0",  # 1111xxxx never starts a char
        b"\x00\x04\xf0\x9f\x98\x80",  # standard 4-byte UTF-8 is not modified UTF-8
    ],
)
def test_read_utf_of_malformed_bytes_is_refused_and_keeps_the_position(data):
    message = BytesMessage()
    message.write_bytes(data)
    message.reset()
    with pytest.raises(MessageFormatException):
        message.read_utf()
    # "If an exception is thrown while reading the BytesMessage, the pointer in the stream must
    # be reset to the position it had just prior to the read operation that caused the exception."
    assert message.read_unsigned_short() == int.from_bytes(data[:2], "big")


def test_read_utf_past_the_end_is_eof_and_keeps_the_position():
    message = BytesMessage()
    message.write_bytes(b"\x00\x0aabc")
    message.reset()
    with pytest.raises(MessageEOFException):
        message.read_utf()
    assert message.read_short() == 10


def test_read_utf_of_one_byte_is_eof():
    message = written("write_byte", 0)
    message.reset()
    with pytest.raises(MessageEOFException):
        message.read_utf()
    assert message.read_byte() == 0


# ---------------------------------------------------------------------------------------------
# read_bytes


def reading(data: bytes) -> BytesMessage:
    message = BytesMessage()
    message.write_bytes(data)
    message.reset()
    return message


def test_read_bytes_fills_the_buffer_then_returns_less_then_minus_one():
    message = reading(b"abcde")
    buffer = bytearray(3)
    assert message.read_bytes(buffer) == 3 and buffer == b"abc"
    # Fewer bytes than the buffer holds: the rest of the body; the buffer's tail is left alone.
    assert message.read_bytes(buffer) == 2 and buffer == b"dec"
    assert message.read_bytes(buffer) == -1
    assert message.read_bytes(buffer) == -1


def test_read_bytes_of_an_empty_body_is_minus_one_at_once():
    message = reading(b"")
    assert message.read_bytes(bytearray(4)) == -1


def test_read_bytes_with_a_length_reads_at_most_that_many():
    message = reading(b"abcdef")
    buffer = bytearray(b"......")
    assert message.read_bytes(buffer, 2) == 2 and buffer == b"ab...."
    assert message.read_bytes(buffer, 0) == 0
    assert message.read_bytes(buffer, 6) == 4 and buffer == b"cdef.."
    assert message.read_bytes(buffer, 6) == -1


@pytest.mark.parametrize("length", [-1, 4])
def test_read_bytes_with_a_length_outside_the_buffer_is_refused_and_reads_nothing(length):
    # Java: IndexOutOfBoundsException, "No bytes will be read from the stream for this exception
    # case." Here ValueError (docs/semantics.md).
    message = reading(b"abc")
    with pytest.raises(ValueError):
        message.read_bytes(bytearray(3), length)
    assert message.read_byte() == ord("a")


def test_read_bytes_fills_only_a_bytearray():
    message = reading(b"abc")
    with pytest.raises(TypeError):
        message.read_bytes(b"   ")
    assert message.read_byte() == ord("a")


def test_read_bytes_after_typed_reads_continues_from_the_position():
    message = BytesMessage()
    message.write_int(7)
    message.write_bytes(b"xyz")
    message.reset()
    assert message.read_int() == 7
    buffer = bytearray(8)
    assert message.read_bytes(buffer) == 3 and buffer[:3] == b"xyz"


# ---------------------------------------------------------------------------------------------
# Writing: write_bytes ranges, write_object, bad values


def test_write_bytes_with_offset_and_length():
    message = BytesMessage()
    message.write_bytes(b"abcdef", 1, 3)
    message.write_bytes(b"abcdef", 4)
    message.write_bytes(bytearray(b"xy"), 0, 0)
    assert body(message) == b"bcdef"


@pytest.mark.parametrize(("offset", "length"), [(-1, None), (0, -1), (2, 5), (7, None), (6, 1)])
def test_write_bytes_outside_the_value_is_refused_and_writes_nothing(offset, length):
    message = BytesMessage()
    with pytest.raises(ValueError):
        message.write_bytes(b"abcdef", offset, length)
    assert body(message) == b""


def test_write_bytes_copies_a_bytearray():
    value = bytearray(b"abc")
    message = BytesMessage()
    message.write_bytes(value)
    value[0] = ord("z")
    assert body(message) == b"abc"


@pytest.mark.parametrize(
    ("value", "writer", "typed"),
    [
        (True, "write_boolean", True),
        (Byte(-2), "write_byte", -2),
        (Short(300), "write_short", 300),
        (Char("c"), "write_char", "c"),
        (Int(70000), "write_int", 70000),
        (Long(5), "write_long", 5),
        (Float(1.5), "write_float", 1.5),
        (Double(1.5), "write_double", 1.5),
        (5, "write_int", 5),  # a Python int that fits 32 bits is an int
        (2**40, "write_long", 2**40),
        (0.25, "write_double", 0.25),
        ("héllo", "write_utf", "héllo"),  # a String is written with writeUTF
        (b"\x00\x01", "write_bytes", b"\x00\x01"),
        (bytearray(b"\x02"), "write_bytes", b"\x02"),
    ],
)
def test_write_object_writes_like_the_typed_method(value, writer, typed):
    # "This is used for String objects and the primitive wrappers: Byte, Boolean, Character,
    # Short, Integer, Long, Float, Double. When written to the BytesMessage, these values are
    # converted to the byte form of their primitive counterparts."
    assert body(written("write_object", value)) == body(written(writer, typed))


def test_write_object_of_none_is_a_type_error():
    # BytesMessage.writeObject: NullPointerException if the parameter value is null.
    message = BytesMessage()
    with pytest.raises(TypeError):
        message.write_object(None)
    assert body(message) == b""


@pytest.mark.parametrize("value", [[1], {"a": 1}, object(), 2**64, 1j])
def test_write_object_of_another_class_is_a_format_error(value):
    message = BytesMessage()
    with pytest.raises(MessageFormatException):
        message.write_object(value)
    assert body(message) == b""


@pytest.mark.parametrize(
    ("writer", "value", "error"),
    [
        ("write_byte", 128, ValueError),
        ("write_short", 2**15, ValueError),
        ("write_int", 2**31, ValueError),
        ("write_long", -(2**63) - 1, ValueError),
        ("write_float", 1e39, ValueError),
        ("write_char", "ab", ValueError),
        ("write_char", "\U0001f600", ValueError),
        ("write_boolean", 1, TypeError),
        ("write_int", 1.0, TypeError),
        ("write_utf", b"x", TypeError),
        ("write_utf", None, TypeError),
        ("write_bytes", "text", TypeError),
    ],
)
def test_bad_values_are_refused_and_write_nothing(writer, value, error):
    message = BytesMessage()
    with pytest.raises(error):
        getattr(message, writer)(value)
    assert body(message) == b""


# ---------------------------------------------------------------------------------------------
# The state machine


@pytest.mark.parametrize("reader", READERS)
def test_a_new_message_is_write_only(reader):
    message = BytesMessage()
    message.write_long(1)
    with pytest.raises(MessageNotReadableException):
        getattr(message, reader)()


def test_read_bytes_and_get_body_length_need_read_mode():
    # getBodyLength: MessageNotReadableException if the message is in write-only mode.
    message = BytesMessage()
    message.write_bytes(b"abc")
    with pytest.raises(MessageNotReadableException):
        message.read_bytes(bytearray(3))
    with pytest.raises(MessageNotReadableException):
        message.get_body_length()
    message.reset()
    assert message.get_body_length() == 3
    message.read_byte()
    assert message.get_body_length() == 3  # the whole body, wherever the position is


@pytest.mark.parametrize("writer", WRITERS)
def test_after_reset_the_body_is_read_only(writer):
    # "The reset() method returns the stream pointer to the beginning of the stream and puts the
    # BytesMessage in read-only mode so that the contents of its byte stream cannot be further
    # modified."
    message = BytesMessage()
    message.write_int(5)
    message.reset()
    with pytest.raises(MessageNotWriteableException):
        getattr(message, writer)(WRITERS[writer])
    assert message.get_body_length() == 4
    assert message.read_int() == 5


def test_reset_rewinds_to_the_beginning():
    message = BytesMessage()
    message.write_int(1)
    message.write_int(2)
    message.reset()
    assert message.read_int() == 1
    message.reset()
    assert message.read_int() == 1
    assert message.read_int() == 2
    message.reset()
    message.reset()
    assert message.read_int() == 1


@pytest.mark.parametrize(
    ("reader", "size"),
    [(r, s) for r, s in zip(READERS[:-1], [1, 1, 1, 2, 2, 2, 4, 8, 4, 8], strict=True)],
)
def test_reading_past_the_end_is_eof_and_keeps_the_position(reader, size):
    message = BytesMessage()
    message.write_bytes(bytes(range(1, size)))  # one byte short
    message.reset()
    with pytest.raises(MessageEOFException):
        getattr(message, reader)()
    # The position is where it was: the bytes are all still there.
    assert message.read_bytes(bytearray(size)) == size - 1 if size > 1 else True


def test_a_failed_read_in_the_middle_keeps_the_position():
    message = BytesMessage()
    message.write_short(0x0102)
    message.write_byte(3)
    message.reset()
    assert message.read_short() == 0x0102
    with pytest.raises(MessageEOFException):
        message.read_int()
    with pytest.raises(MessageEOFException):
        message.read_short()
    assert message.read_byte() == 3


def test_clear_body_returns_to_an_empty_write_only_body():
    # clearBody: "If this message body was read-only, calling this method leaves the message body
    # in the same state as an empty body in a newly created message."
    message = BytesMessage()
    message.write_int(1)
    message.reset()
    message.read_byte()
    message.clear_body()
    with pytest.raises(MessageNotReadableException):
        message.read_byte()
    with pytest.raises(MessageNotReadableException):
        message.get_body_length()
    message.write_short(2)
    assert body(message) == b"\x00\x02"


def test_clear_body_in_write_mode_empties_the_body():
    message = BytesMessage()
    message.write_int(1)
    message.clear_body()
    message.write_byte(9)
    assert body(message) == b"\x09"


def test_get_body_resets_before_and_after():
    # getBody: "This method will reset the BytesMessage before and after use."
    message = BytesMessage()
    message.write_bytes(b"abcd")
    message.reset()
    assert message.read_short() == 0x6162
    assert message.get_body(bytes) == b"abcd"
    assert message.read_short() == 0x6162  # read from the start again


def test_get_body_of_a_message_being_written_returns_everything_and_resets():
    message = BytesMessage()
    message.write_int(1)
    assert message.get_body(bytes) == b"\x00\x00\x00\x01"
    assert message.read_int() == 1  # reset: read-only mode at the beginning
    with pytest.raises(MessageNotWriteableException):
        message.write_int(2)


# ---------------------------------------------------------------------------------------------
# Every transition, against a model of the spec's state machine


class BytesMessageMachine(RuleBasedStateMachine):
    """A BytesMessage beside a model: a write-only or read-only body, its bytes, a position."""

    def __init__(self) -> None:
        super().__init__()
        self.message = BytesMessage()
        self.reading = False
        self.data = b""
        self.position = 0

    @rule(value=st.integers(-(2**31), 2**31 - 1))
    def write_int(self, value: int) -> None:
        if self.reading:
            with pytest.raises(MessageNotWriteableException):
                self.message.write_int(value)
        else:
            self.message.write_int(value)
            self.data += value.to_bytes(4, "big", signed=True)

    @rule(value=st.binary(max_size=5))
    def write_bytes(self, value: bytes) -> None:
        if self.reading:
            with pytest.raises(MessageNotWriteableException):
                self.message.write_bytes(value)
        else:
            self.message.write_bytes(value)
            self.data += value

    @rule()
    def read_int(self) -> None:
        if not self.reading:
            with pytest.raises(MessageNotReadableException):
                self.message.read_int()
        elif self.position + 4 > len(self.data):
            with pytest.raises(MessageEOFException):
                self.message.read_int()
        else:
            expected = int.from_bytes(
                self.data[self.position : self.position + 4], "big", signed=True
            )
            assert self.message.read_int() == expected
            self.position += 4

    @rule(size=st.integers(0, 6))
    def read_bytes(self, size: int) -> None:
        buffer = bytearray(size)
        if not self.reading:
            with pytest.raises(MessageNotReadableException):
                self.message.read_bytes(buffer)
            return
        remaining = len(self.data) - self.position
        count = self.message.read_bytes(buffer)
        if remaining == 0 and size > 0:
            assert count == -1
        else:
            assert count == min(size, remaining)
            assert bytes(buffer[:count]) == self.data[self.position : self.position + count]
            self.position += count

    @rule()
    def reset(self) -> None:
        self.message.reset()
        self.reading, self.position = True, 0

    @rule()
    def deliver(self) -> None:
        # The provider's hook: "[reset] is always called implicitly when the BytesMessage is
        # delivered."
        self.message._mark_received(None)
        self.reading, self.position = True, 0

    @rule()
    def clear_body(self) -> None:
        self.message.clear_body()
        self.reading, self.data, self.position = False, b"", 0

    @rule()
    def get_body(self) -> None:
        body = self.message.get_body(bytes)
        if self.data:
            assert body == self.data
            self.reading, self.position = True, 0
        else:
            assert body is None

    @invariant()
    def body_length_only_in_read_mode(self) -> None:
        if self.reading:
            assert self.message.get_body_length() == len(self.data)
        else:
            with pytest.raises(MessageNotReadableException):
                self.message.get_body_length()


BytesMessageMachine.TestCase.settings = settings(max_examples=400, stateful_step_count=25)
TestBytesMessageStateMachine = BytesMessageMachine.TestCase
