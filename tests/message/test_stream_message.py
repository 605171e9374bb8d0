"""StreamMessage: typed values in order, the write-only / reset / read-only state machine, chunked
byte[] reads, null values, and the position after a failed read.

The conversion cells of Table 3.1 are in test_conversion_tables.py. The chapter: "The
StreamMessage keeps track of the order and types of primitives written to the stream, so formal
conversion rules apply."
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from jms import (
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
    MessageNotWriteableException,
    StreamMessage,
)
from jms.types import Byte, Char, Double, Float, Int, Long, Short

READERS = [
    "read_boolean",
    "read_byte",
    "read_short",
    "read_char",
    "read_int",
    "read_long",
    "read_float",
    "read_double",
    "read_string",
    "read_object",
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
    "write_string": "s",
    "write_bytes": b"b",
    "write_object": 1,
}


def stream(*values: Any) -> StreamMessage:
    """A stream of these values (written with write_object), reset for reading."""
    message = StreamMessage()
    for value in values:
        message.write_object(value)
    message.reset()
    return message


def read(message: StreamMessage, reader: str) -> Any:
    if reader == "read_bytes":
        return message.read_bytes(bytearray(4))
    return getattr(message, reader)()


# ---------------------------------------------------------------------------------------------
# State machine


@pytest.mark.parametrize("reader", [*READERS, "read_bytes"])
def test_a_new_stream_is_write_only(reader):
    message = StreamMessage()
    message.write_bytes(b"x")
    with pytest.raises(MessageNotReadableException):
        read(message, reader)


@pytest.mark.parametrize("writer", WRITERS)
def test_after_reset_the_stream_is_read_only(writer):
    # "The reset() method returns the stream pointer to the beginning of the stream and puts the
    # message in a read-only mode."
    message = StreamMessage()
    message.write_int(5)
    message.reset()
    with pytest.raises(MessageNotWriteableException):
        getattr(message, writer)(WRITERS[writer])
    assert message.read_int() == 5
    with pytest.raises(MessageEOFException):
        message.read_object()


def test_reset_rewinds():
    message = stream(Int(1), "two", b"three")
    assert message.read_int() == 1
    assert message.read_string() == "two"
    message.reset()
    assert message.read_int() == 1
    assert message.read_object() == "two"
    assert message.read_object() == b"three"


def test_reset_in_the_middle_of_a_byte_array_starts_over():
    message = stream(b"abcdef", Int(2))
    message.read_bytes(bytearray(2))
    message.reset()
    assert message.read_object() == b"abcdef"
    assert message.read_int() == 2


def test_clear_body_returns_to_an_empty_write_only_stream():
    # clearBody: "If this message body was read-only, calling this method leaves the message body
    # in the same state as an empty body in a newly created message."
    message = stream(Int(1), Int(2))
    message.read_int()
    message.clear_body()
    with pytest.raises(MessageNotReadableException):
        message.read_int()
    message.write_string("new")
    message.reset()
    assert message.read_string() == "new"
    with pytest.raises(MessageEOFException):
        message.read_int()


@pytest.mark.parametrize("reader", [*READERS, "read_bytes"])
def test_reading_past_the_end_is_eof_and_keeps_the_position(reader):
    message = stream(Int(1))
    assert message.read_int() == 1
    with pytest.raises(MessageEOFException):
        read(message, reader)
    message.reset()
    assert message.read_int() == 1


def test_empty_stream_is_eof_at_once():
    message = stream()
    with pytest.raises(MessageEOFException):
        message.read_object()


# ---------------------------------------------------------------------------------------------
# Values round trip with their types

TYPED_VALUES = st.one_of(
    st.booleans(),
    st.integers(-128, 127).map(Byte),
    st.integers(-(2**15), 2**15 - 1).map(Short),
    st.integers(0, 0xFFFF).map(lambda c: Char(chr(c))),
    st.integers(-(2**31), 2**31 - 1).map(Int),
    st.integers(-(2**63), 2**63 - 1).map(Long),
    st.floats(width=32).map(Float),
    st.floats().map(Double),
    st.text(st.characters(codec=None, exclude_categories=())),
    st.binary(),
    st.none(),
)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b) and type(a) is type(b)
    return type(a) is type(b) and a == b


@given(st.lists(TYPED_VALUES, max_size=10))
def test_write_object_then_read_object_round_trips_value_and_type(values):
    # "The readObject() method returns the appropriate object wrapper for primitive values, or a
    # String or a byte array, depending on the type that was written to the stream."
    message = stream(*values)
    for value in values:
        assert same(message.read_object(), value)
    with pytest.raises(MessageEOFException):
        message.read_object()


@pytest.mark.parametrize(
    ("writer", "value", "reader", "expected"),
    [
        ("write_boolean", False, "read_boolean", False),
        ("write_byte", -128, "read_byte", -128),
        ("write_short", 32767, "read_short", 32767),
        ("write_char", "\ud800", "read_char", "\ud800"),
        ("write_int", -(2**31), "read_int", -(2**31)),
        ("write_long", 2**63 - 1, "read_long", 2**63 - 1),
        ("write_float", 0.1, "read_float", 0.10000000149011612),
        ("write_double", -0.0, "read_double", -0.0),
        ("write_string", "", "read_string", ""),
        ("write_string", "\U0001f600", "read_string", "\U0001f600"),
    ],
)
def test_each_typed_write_read_pair(writer, value, reader, expected):
    message = StreamMessage()
    getattr(message, writer)(value)
    message.reset()
    result = getattr(message, reader)()
    assert result == expected and str(result) == str(expected)


@pytest.mark.parametrize(
    ("value", "java_type"),
    [
        (5, Int),
        (2**31, Long),
        (1.5, Double),
        ("s", str),
        (bytearray(b"ab"), bytes),
        (memoryview(b"ab"), bytes),
        (Char("c"), Char),
        (True, bool),
    ],
)
def test_write_object_maps_python_values(value, java_type):
    # API.md: bool→boolean, int→int if it fits 32 bits else long, float→double, str→String,
    # bytes/bytearray→byte[], a jms.types value → its type, None → null.
    message = stream(value)
    assert type(message.read_object()) is java_type


@pytest.mark.parametrize("value", [2**64, [1], {"a": 1}, object(), 1j])
def test_write_object_refuses_other_classes(value):
    message = StreamMessage()
    with pytest.raises(MessageFormatException):
        message.write_object(value)
    message.reset()
    with pytest.raises(MessageEOFException):
        message.read_object()


@pytest.mark.parametrize(
    ("writer", "value", "error"),
    [
        ("write_byte", 128, ValueError),
        ("write_int", 2**31, ValueError),
        ("write_float", 1e39, ValueError),
        ("write_char", "ab", ValueError),
        ("write_boolean", 0, TypeError),
        ("write_string", 5, TypeError),
        ("write_bytes", "text", TypeError),
        ("write_bytes", None, TypeError),
    ],
)
def test_bad_values_are_refused_and_write_nothing(writer, value, error):
    message = StreamMessage()
    with pytest.raises(error):
        getattr(message, writer)(value)
    message.reset()
    with pytest.raises(MessageEOFException):
        message.read_object()


def test_null_values_can_be_written():
    # "The StreamMessage also allows null values to be written to the stream."
    message = StreamMessage()
    message.write_string(None)
    message.write_object(None)
    message.reset()
    assert message.read_object() is None
    assert message.read_string() is None


# ---------------------------------------------------------------------------------------------
# Position after a failed read


def test_failed_conversion_keeps_the_position():
    # "If an exception is thrown while reading the StreamMessage, the pointer in the stream is
    # reset to the position it had just prior to the read operation that caused the exception.
    # This allows the JMS client to recover gracefully from exceptions without losing the
    # pointer's position in the stream."
    message = stream(Long(2938302), "abc", Int(3))
    with pytest.raises(MessageFormatException):
        message.read_short()
    with pytest.raises(MessageFormatException):
        message.read_bytes(bytearray(4))
    assert message.read_long() == 2938302
    with pytest.raises(ValueError):  # String → int: NumberFormatException
        message.read_int()
    with pytest.raises(MessageFormatException):
        message.read_char()
    assert message.read_string() == "abc"
    assert message.read_int() == 3


# ---------------------------------------------------------------------------------------------
# byte[] fields: chunked read_bytes


def test_read_bytes_in_chunks_then_minus_one():
    message = stream(b"abcdefg", "next")
    buffer = bytearray(3)
    assert message.read_bytes(buffer) == 3 and buffer == b"abc"
    assert message.read_bytes(buffer) == 3 and buffer == b"def"
    assert message.read_bytes(buffer) == 1 and buffer[:1] == b"g"
    assert message.read_bytes(buffer) == -1  # the end of this byte[] field
    assert message.read_string() == "next"


def test_read_bytes_of_a_field_that_fills_the_buffer_exactly_needs_one_more_call():
    # StreamMessage javadoc: "If readBytes returns a value equal to the length of the buffer, a
    # subsequent readBytes call must be made. If there are no more bytes to be read, this call
    # returns -1."
    message = stream(b"abcdef", b"gh")
    buffer = bytearray(3)
    assert message.read_bytes(buffer) == 3
    assert message.read_bytes(buffer) == 3 and buffer == b"def"
    assert message.read_bytes(buffer) == -1
    assert message.read_bytes(buffer) == 2 and buffer[:2] == b"gh"
    assert message.read_bytes(buffer) == -1
    with pytest.raises(MessageEOFException):
        message.read_bytes(buffer)


def test_each_write_bytes_is_its_own_field():
    message = StreamMessage()
    message.write_bytes(b"ab")
    message.write_bytes(b"cdef", 1, 2)
    message.reset()
    buffer = bytearray(10)
    assert message.read_bytes(buffer) == 2 and buffer[:2] == b"ab"
    assert message.read_bytes(buffer) == -1
    assert message.read_bytes(buffer) == 2 and buffer[:2] == b"de"
    assert message.read_bytes(buffer) == -1


def test_once_read_to_its_last_byte_the_next_field_may_be_read():
    # StreamMessage javadoc: "To read the field value, readBytes should be successively called
    # until it returns a value less than the length of the read buffer." "Once the first readBytes
    # call on a byte[] field value has been made, the full value of the field must be read before
    # it is valid to read the next field." A client that stops at the short read has read it all.
    message = stream(b"abcde", Int(7), b"xyz", "last")
    buffer = bytearray(4)
    assert message.read_bytes(buffer) == 4
    assert message.read_bytes(buffer) == 1
    assert message.read_int() == 7
    assert message.read_bytes(bytearray(3)) == 3  # all of it, though the buffer is full
    assert message.read_object() == "last"


@pytest.mark.parametrize("reader", READERS)
def test_reading_another_type_in_the_middle_of_a_byte_array_is_refused(reader):
    # "An attempt to read the next field before that has been done will throw a
    # MessageFormatException."
    message = stream(b"abcdef", "s")
    buffer = bytearray(2)
    assert message.read_bytes(buffer) == 2
    with pytest.raises(MessageFormatException):
        getattr(message, reader)()
    # ... and the position is kept: the rest of the field is still there.
    assert message.read_bytes(bytearray(10)) == 4
    assert message.read_bytes(buffer) == -1
    assert message.read_string() == "s"


def test_null_byte_array_reads_as_minus_one():
    # "If the byte array field value is null, readBytes returns -1."
    message = stream(None, Int(1))
    assert message.read_bytes(bytearray(4)) == -1
    assert message.read_int() == 1


def test_empty_byte_array_reads_zero_bytes_once_then_minus_one():
    # "If the byte array field value is empty, readBytes returns 0." Silent choice
    # (docs/semantics.md): the next call returns -1, like the end of any byte[] field.
    message = stream(b"", Int(1))
    buffer = bytearray(4)
    assert message.read_bytes(buffer) == 0
    assert message.read_bytes(buffer) == -1
    assert message.read_int() == 1


def test_empty_byte_array_then_the_next_field():
    message = stream(b"", b"z")
    assert message.read_bytes(bytearray(4)) == 0
    assert message.read_object() == b"z"


def test_read_object_gives_the_whole_byte_array():
    # "To read the byte field value into a new byte[] object, use the readObject method."
    data = bytes(range(256)) * 4
    message = stream(data)
    assert message.read_object() == data


def test_write_bytes_copies_its_argument():
    value = bytearray(b"abc")
    message = StreamMessage()
    message.write_bytes(value)
    value[0] = ord("z")
    message.reset()
    assert message.read_object() == b"abc"


def test_read_bytes_with_a_length():
    # API.md: read_bytes(buffer: bytearray, length=None) -> int, for Stream as for Bytes.
    message = stream(b"abcdef")
    buffer = bytearray(b"........")
    assert message.read_bytes(buffer, 2) == 2 and buffer == b"ab......"
    assert message.read_bytes(buffer, 8) == 4 and buffer == b"cdef...."
    assert message.read_bytes(buffer, 8) == -1


@pytest.mark.parametrize("length", [-1, 5])
def test_read_bytes_with_a_length_outside_the_buffer_is_refused(length):
    message = stream(b"abc")
    with pytest.raises(ValueError):
        message.read_bytes(bytearray(4), length)
    assert message.read_object() == b"abc"


def test_read_bytes_fills_only_a_bytearray():
    message = stream(b"abc")
    with pytest.raises(TypeError):
        message.read_bytes(b"    ")
    assert message.read_object() == b"abc"


# ---------------------------------------------------------------------------------------------
# Every transition, against a model of the spec's state machine

MODEL_VALUES = st.one_of(
    st.integers(-(2**31), 2**31 - 1).map(Int),
    st.text(max_size=3),
    st.binary(max_size=5),
    st.none(),
)


class StreamMessageMachine(RuleBasedStateMachine):
    """A StreamMessage beside a model: write-only or read-only, its values, the index of the next
    one, and how much of a byte[] value read_bytes has taken (None: not inside one)."""

    def __init__(self) -> None:
        super().__init__()
        self.message = StreamMessage()
        self.reading = False
        self.values: list[Any] = []
        self.index = 0
        self.taken: int | None = None

    def _next(self) -> int | None:
        """The index the next non-byte[] read uses, or None if a byte[] value is half read."""
        if self.taken is None:
            return self.index
        return self.index + 1 if self.taken == len(self.values[self.index]) else None

    @rule(value=MODEL_VALUES)
    def write_object(self, value: Any) -> None:
        if self.reading:
            with pytest.raises(MessageNotWriteableException):
                self.message.write_object(value)
        else:
            self.message.write_object(value)
            self.values.append(value)

    @rule()
    def read_object(self) -> None:
        if not self.reading:
            with pytest.raises(MessageNotReadableException):
                self.message.read_object()
            return
        index = self._next()
        if index is None:
            with pytest.raises(MessageFormatException):
                self.message.read_object()
        elif index >= len(self.values):
            with pytest.raises(MessageEOFException):
                self.message.read_object()
        else:
            assert same(self.message.read_object(), self.values[index])
            self.index, self.taken = index + 1, None

    @rule(size=st.integers(0, 4))
    def read_bytes(self, size: int) -> None:
        buffer = bytearray(size)
        if not self.reading:
            with pytest.raises(MessageNotReadableException):
                self.message.read_bytes(buffer)
            return
        if self.taken is None:
            if self.index >= len(self.values):
                with pytest.raises(MessageEOFException):
                    self.message.read_bytes(buffer)
                return
            value = self.values[self.index]
            if value is None:
                assert self.message.read_bytes(buffer) == -1
                self.index += 1
                return
            if not isinstance(value, bytes):
                with pytest.raises(MessageFormatException):
                    self.message.read_bytes(buffer)
                return
            self.taken = 0
        elif self.taken == len(self.values[self.index]):
            assert self.message.read_bytes(buffer) == -1  # the end of this byte[] value
            self.index, self.taken = self.index + 1, None
            return
        field = self.values[self.index]
        count = self.message.read_bytes(buffer)
        expected = field[self.taken : self.taken + size]
        assert count == len(expected) and bytes(buffer[:count]) == expected
        self.taken += count

    @rule()
    def reset(self) -> None:
        self.message.reset()
        self.reading, self.index, self.taken = True, 0, None

    @rule()
    def deliver(self) -> None:
        self.message._mark_received(None)
        self.reading, self.index, self.taken = True, 0, None

    @rule()
    def clear_body(self) -> None:
        self.message.clear_body()
        self.reading, self.values, self.index, self.taken = False, [], 0, None


StreamMessageMachine.TestCase.settings = settings(max_examples=400, stateful_step_count=25)
TestStreamMessageStateMachine = StreamMessageMachine.TestCase


def test_a_value_that_is_not_bytes_is_named_with_its_article() -> None:
    message = StreamMessage()
    message.write_int(3)
    message.reset()
    with pytest.raises(MessageFormatException, match="stream value 0 holds an int, which"):
        message.read_bytes(bytearray(3))
