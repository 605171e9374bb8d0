"""Every cell of the two conversion tables, allowed and refused, and the null rules.

Message javadoc: "Message properties support the following conversion table. The marked cases must
be supported. The unmarked cases must throw a JMSException. The String-to-primitive conversions
may throw a runtime exception if the primitive's valueOf method does not accept the String as a
valid representation of the primitive. A value written as the row type can be read as the column
type."

Message types chapter, Table 3.1 (StreamMessage; "The conversion rules defined for the
StreamMessage apply to the MapMessage"): "A JMSException is thrown by the accessor methods to
indicate that the original type could not be converted to the type requested."

The refused cells raise ``MessageFormatException`` (the JMSException the API names for "this type
conversion is invalid"); String → primitive failures raise ``ValueError`` (NumberFormatException).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jms import MapMessage, Message, MessageFormatException, StreamMessage
from jms.types import Byte, Char, Double, Float, Int, Long, Short

PROPERTY_TYPES = ["boolean", "byte", "short", "int", "long", "float", "double", "String"]
BODY_TYPES = [
    "boolean",
    "byte",
    "short",
    "char",
    "int",
    "long",
    "float",
    "double",
    "String",
    "byte[]",
]

# The property table of the Message javadoc, row (written) → columns (readable), as marked there:
#                boolean byte short int long float double String
#     boolean       X                                      X
#     byte                X    X     X    X                X
#     short                    X     X    X                X
#     int                            X    X                X
#     long                                X                X
#     float                                    X     X     X
#     double                                         X     X
#     String        X     X    X     X    X    X     X     X
PROPERTY_TABLE = {
    "boolean": {"boolean", "String"},
    "byte": {"byte", "short", "int", "long", "String"},
    "short": {"short", "int", "long", "String"},
    "int": {"int", "long", "String"},
    "long": {"long", "String"},
    "float": {"float", "double", "String"},
    "double": {"double", "String"},
    "String": set(PROPERTY_TYPES),
}

# Table 3.1, write<TYPE>() → read<TYPE>(), in the chapter's words:
#   boolean: boolean, String          byte: byte, short, int, long, String
#   short: short, int, long, String   char: char, String
#   long: long, String                int: int, long, String
#   float: float, double, String      double: double, String
#   String: String, boolean, byte, short, int, long, float, double
#   byte[]: byte[]
# (The chapter's prose after the table says char cannot be read as String; its own table and the
# StreamMessage javadoc's table say it can. jms follows the tables: docs/semantics.md.)
BODY_TABLE = {
    "boolean": {"boolean", "String"},
    "byte": {"byte", "short", "int", "long", "String"},
    "short": {"short", "int", "long", "String"},
    "char": {"char", "String"},
    "int": {"int", "long", "String"},
    "long": {"long", "String"},
    "float": {"float", "double", "String"},
    "double": {"double", "String"},
    "String": {"String", "boolean", "byte", "short", "int", "long", "float", "double"},
    "byte[]": {"byte[]"},
}

FLOAT_POINT_ONE = 0.10000000149011612  # (double) 0.1f: float → double widening is exact

# What each row type is written as, and what each allowed cell reads back.
WRITTEN: dict[str, Any] = {
    "boolean": True,
    "byte": -7,
    "short": -300,
    "char": "x",
    "int": 70000,
    "long": 2**40,
    "float": 0.1,
    "double": 1e-5,
    "byte[]": b"\x00\x01\xff",
}
READ_BACK: dict[tuple[str, str], Any] = {
    ("boolean", "boolean"): True,
    ("boolean", "String"): "true",
    **{("byte", t): -7 for t in ("byte", "short", "int", "long")},
    ("byte", "String"): "-7",
    **{("short", t): -300 for t in ("short", "int", "long")},
    ("short", "String"): "-300",
    ("char", "char"): "x",
    ("char", "String"): "x",
    **{("int", t): 70000 for t in ("int", "long")},
    ("int", "String"): "70000",
    ("long", "long"): 2**40,
    ("long", "String"): "1099511627776",
    ("float", "float"): FLOAT_POINT_ONE,
    ("float", "double"): FLOAT_POINT_ONE,
    ("float", "String"): "0.1",
    ("double", "double"): 1e-5,
    ("double", "String"): "1.0E-5",
    ("byte[]", "byte[]"): b"\x00\x01\xff",
}
# A String is read through the column type's valueOf, so each column gets a text it accepts.
STRING_TEXT = {
    "boolean": ("TRUE", True),
    "byte": ("-12", -12),
    "short": ("1234", 1234),
    "int": ("-70000", -70000),
    "long": ("9007199254740993", 9007199254740993),
    "float": ("0.1", FLOAT_POINT_ONE),
    "double": ("1e3", 1000.0),
    "String": ("hello", "hello"),
    "char": ("x", None),  # refused
    "byte[]": ("x", None),  # refused
}
PYTHON_TYPE = {
    "boolean": bool,
    "byte": int,
    "short": int,
    "char": str,
    "int": int,
    "long": int,
    "float": float,
    "double": float,
    "String": str,
    "byte[]": bytes,
}
TYPED = {
    "boolean": bool,
    "byte": Byte,
    "short": Short,
    "char": Char,
    "int": Int,
    "long": Long,
    "float": Float,
    "double": Double,
    "String": str,
    "byte[]": bytes,
}


def written_value(row: str, column: str) -> Any:
    return STRING_TEXT[column][0] if row == "String" else WRITTEN[row]


def expected_value(row: str, column: str) -> Any:
    return STRING_TEXT[column][1] if row == "String" else READ_BACK[(row, column)]


def assert_read(value: Any, row: str, column: str) -> None:
    expected = expected_value(row, column)
    assert isinstance(value, PYTHON_TYPE[column]), (row, column, value)
    assert value == expected and type(expected)(value) == expected, (row, column, value)


def cells(table: dict[str, set[str]], types: list[str]) -> list[Any]:
    return [
        pytest.param(row, column, column in table[row], id=f"{row}->{column}")
        for row in types
        for column in types
    ]


# ---------------------------------------------------------------------------------------------
# Properties: 8 x 8

PROPERTY_SETTERS = {t: f"set_{t.lower()}_property" for t in PROPERTY_TYPES}
PROPERTY_GETTERS = {t: f"get_{t.lower()}_property" for t in PROPERTY_TYPES}


def set_property(message: Message, row: str, value: Any, how: str) -> None:
    if how == "typed":
        getattr(message, PROPERTY_SETTERS[row])("p", value)
    else:
        # setObjectProperty: "They support the same property value conversions."
        message.set_object_property("p", TYPED[row](value))


@pytest.mark.parametrize("how", ["typed", "object"])
@pytest.mark.parametrize(("row", "column", "allowed"), cells(PROPERTY_TABLE, PROPERTY_TYPES))
def test_property_conversion_cell(row, column, allowed, how):
    message = Message()
    set_property(message, row, written_value(row, column), how)
    getter = getattr(message, PROPERTY_GETTERS[column])
    if allowed:
        assert_read(getter("p"), row, column)
    else:
        with pytest.raises(MessageFormatException):
            getter("p")
    # A refused read changes nothing: the value is still there as set.
    assert type(message.get_object_property("p")) is TYPED[row]


def test_property_table_counts_match_the_javadoc_marks():
    # The javadoc marks 2, 5, 4, 3, 2, 3, 2 and 8 cells in its eight rows.
    assert [len(PROPERTY_TABLE[t]) for t in PROPERTY_TYPES] == [2, 5, 4, 3, 2, 3, 2, 8]


# ---------------------------------------------------------------------------------------------
# MapMessage: 10 x 10

MAP_SETTERS = {t: f"set_{t.lower()}" for t in BODY_TYPES if t != "byte[]"} | {"byte[]": "set_bytes"}
MAP_GETTERS = {t: f"get_{t.lower()}" for t in BODY_TYPES if t != "byte[]"} | {"byte[]": "get_bytes"}


@pytest.mark.parametrize("how", ["typed", "object"])
@pytest.mark.parametrize(("row", "column", "allowed"), cells(BODY_TABLE, BODY_TYPES))
def test_map_conversion_cell(row, column, allowed, how):
    message = MapMessage()
    value = written_value(row, column)
    if how == "typed":
        getattr(message, MAP_SETTERS[row])("v", value)
    else:
        message.set_object("v", TYPED[row](value))
    getter = getattr(message, MAP_GETTERS[column])
    if allowed:
        assert_read(getter("v"), row, column)
    else:
        with pytest.raises(MessageFormatException):
            getter("v")
    assert type(message.get_object("v")) is TYPED[row]


# ---------------------------------------------------------------------------------------------
# StreamMessage: 10 x 10

STREAM_WRITERS = {t: f"write_{t.lower()}" for t in BODY_TYPES if t != "byte[]"} | {
    "byte[]": "write_bytes"
}
STREAM_READERS = {t: f"read_{t.lower()}" for t in BODY_TYPES if t != "byte[]"}


def stream_read(message: StreamMessage, column: str) -> Any:
    if column == "byte[]":
        buffer = bytearray(16)
        count = message.read_bytes(buffer)
        return bytes(buffer[:count])
    return getattr(message, STREAM_READERS[column])()


@pytest.mark.parametrize("how", ["typed", "object"])
@pytest.mark.parametrize(("row", "column", "allowed"), cells(BODY_TABLE, BODY_TYPES))
def test_stream_conversion_cell(row, column, allowed, how):
    message = StreamMessage()
    value = written_value(row, column)
    if how == "typed":
        getattr(message, STREAM_WRITERS[row])(value)
    else:
        message.write_object(TYPED[row](value))
    message.write_string("after")
    message.reset()
    if allowed:
        assert_read(stream_read(message, column), row, column)
        if column == "byte[]":
            assert message.read_bytes(bytearray(16)) == -1  # the end of the byte[] field
    else:
        with pytest.raises(MessageFormatException):
            stream_read(message, column)
        # "If an exception is thrown while reading the StreamMessage, the pointer in the stream
        # is reset to the position it had just prior to the read operation that caused the
        # exception."
        assert type(message.read_object()) is TYPED[row]
    assert message.read_string() == "after"


def test_stream_reading_a_long_as_a_short_is_refused():
    # The chapter's own example: "an exception would be thrown if you tried to read a long value
    # as a short".
    message = StreamMessage()
    message.write_long(2938302)
    message.reset()
    with pytest.raises(MessageFormatException):
        message.read_short()
    assert message.read_long() == 2938302


def test_read_object_returns_the_wrapper_of_the_written_type():
    # "The readObject() method returns the appropriate object wrapper for primitive values, or a
    # String or a byte array, depending on the type that was written to the stream. For example,
    # if a value was written as a primitive int, it can be read as a java.lang.Integer object."
    stream, map_message = StreamMessage(), MapMessage()
    for row in BODY_TYPES:
        value = written_value(row, "String")
        getattr(stream, STREAM_WRITERS[row])(value)
        getattr(map_message, MAP_SETTERS[row])(row, value)
    stream.reset()
    for row in BODY_TYPES:
        from_stream, from_map = stream.read_object(), map_message.get_object(row)
        assert type(from_stream) is TYPED[row] and type(from_map) is TYPED[row]
        assert from_stream == from_map


# ---------------------------------------------------------------------------------------------
# String → primitive through valueOf: NumberFormatException is ValueError

BAD_TEXTS = [
    ("byte", "128"),
    ("byte", "1.0"),
    ("byte", "x"),
    ("short", "40000"),
    ("short", ""),
    ("int", "1e3"),
    ("int", " 1"),
    ("int", "1_000"),
    ("int", "2147483648"),
    ("long", "1L"),
    ("long", "0x10"),
    ("float", "abc"),
    ("float", "1,5"),
    ("float", ""),
    ("double", "0x1"),
    ("double", "one"),
]


@pytest.mark.parametrize(("column", "text"), BAD_TEXTS)
def test_bad_string_to_primitive_is_a_value_error_for_properties(column, text):
    message = Message()
    message.set_string_property("p", text)
    with pytest.raises(ValueError):
        getattr(message, PROPERTY_GETTERS[column])("p")


@pytest.mark.parametrize(("column", "text"), BAD_TEXTS)
def test_bad_string_to_primitive_is_a_value_error_for_maps(column, text):
    # "String values can be converted to any primitive value type if they are formatted
    # correctly; the accessor will throw a java.lang.NumberFormatException if they aren't."
    message = MapMessage()
    message.set_string("v", text)
    with pytest.raises(ValueError):
        getattr(message, MAP_GETTERS[column])("v")


@pytest.mark.parametrize(("column", "text"), BAD_TEXTS)
def test_bad_string_to_primitive_is_a_value_error_for_streams_and_keeps_the_position(column, text):
    # "If the String value cannot be converted to the primitive type requested, a
    # java.lang.NumberFormatException is thrown."
    message = StreamMessage()
    message.write_string(text)
    message.reset()
    with pytest.raises(ValueError):
        getattr(message, STREAM_READERS[column])()
    assert message.read_string() == text


@pytest.mark.parametrize("text", ["yes", "1", "", " true", "t"])
def test_string_to_boolean_never_fails(text):
    # Boolean.valueOf accepts any String: only "true" (any case) is true.
    message = Message()
    message.set_string_property("p", text)
    assert message.get_boolean_property("p") is False


# ---------------------------------------------------------------------------------------------
# Null and missing values

NUMERIC_PROPERTY_TYPES = ["byte", "short", "int", "long", "float", "double"]


def test_missing_property_reads_as_null():
    # "Getting a property value for a name which has not been set returns a null value. Only the
    # getStringProperty and getObjectProperty methods can return a null value. Attempting to read a
    # null value as a primitive type must be treated as calling the primitive's corresponding
    # valueOf(String) conversion method with a null value."
    message = Message()
    assert message.get_boolean_property("missing") is False  # Boolean.valueOf(null) is false
    assert message.get_string_property("missing") is None
    assert message.get_object_property("missing") is None


@pytest.mark.parametrize("column", NUMERIC_PROPERTY_TYPES)
def test_missing_property_as_a_number_is_a_value_error(column):
    # API.md: reading a missing value as any numeric type, float/double included, is ValueError.
    with pytest.raises(ValueError):
        getattr(Message(), PROPERTY_GETTERS[column])("missing")


def map_with_nulls() -> MapMessage:
    message = MapMessage()
    message.set_string("string", None)
    message.set_bytes("bytes", None)
    message.set_object("object", None)
    return message


@pytest.mark.parametrize("name", ["missing", "string", "bytes", "object"])
def test_map_null_or_missing_value(name):
    # "If a JMS client attempts to read a name-value pair that doesn't exist, the value is treated
    # as if it was null. ... the getBoolean() method returns false for null values; the getString()
    # returns a null value ...; and the getChar() method throws a NullPointerException."
    message = map_with_nulls()
    assert message.get_boolean(name) is False
    assert message.get_string(name) is None
    assert message.get_bytes(name) is None
    assert message.get_object(name) is None
    with pytest.raises(TypeError):
        message.get_char(name)
    for column in NUMERIC_PROPERTY_TYPES:
        # "most primitive accessors throw the java.lang.NumberFormatException if a null value or
        # nonexistent mapping is read"
        with pytest.raises(ValueError):
            getattr(message, MAP_GETTERS[column])(name)


def test_map_null_values_exist_and_missing_ones_do_not():
    message = map_with_nulls()
    assert all(message.item_exists(name) for name in ("string", "bytes", "object"))
    assert not message.item_exists("missing")


@pytest.mark.parametrize("write_null", ["write_string", "write_object"])
def test_stream_null_value(write_null):
    # "If a JMS client attempts to read a null value using the readObject() method, null is
    # returned. ... The readBoolean() method returns false for null values, while the other
    # primitive property methods throw the java.lang.NumberFormatException. The readString()
    # method returns null ... The readChar() method throws a NullPointerException."
    message = StreamMessage()
    for _ in range(4):
        getattr(message, write_null)(None)
    message.reset()
    for column in NUMERIC_PROPERTY_TYPES:
        with pytest.raises(ValueError):
            getattr(message, STREAM_READERS[column])()
    with pytest.raises(TypeError):
        message.read_char()
    # Each failed read left the position on the first null.
    assert message.read_boolean() is False
    assert message.read_string() is None
    assert message.read_object() is None
    # "If the byte array field value is null, readBytes returns -1." (StreamMessage javadoc)
    assert message.read_bytes(bytearray(4)) == -1


def test_stream_null_is_read_as_each_type_in_turn():
    message = StreamMessage()
    message.write_object(None)
    message.write_int(5)
    message.reset()
    with pytest.raises(ValueError):
        message.read_double()
    assert message.read_object() is None
    assert message.read_int() == 5


def test_float_widened_to_double_is_the_exact_float_value():
    message = Message()
    message.set_float_property("f", 0.1)
    assert message.get_double_property("f") == FLOAT_POINT_ONE != 0.1
    assert message.get_float_property("f") == FLOAT_POINT_ONE


@pytest.mark.parametrize(
    ("text", "value"),
    [("3.4028235E38", 3.4028234663852886e38), ("NaN", math.nan), ("-Infinity", -math.inf)],
)
def test_string_property_read_as_float_follows_float_valueof(text, value):
    message = Message()
    message.set_string_property("p", text)
    result = message.get_float_property("p")
    assert (math.isnan(result) and math.isnan(value)) or result == value


# ---------------------------------------------------------------------------------------------
# Property-based: the tables hold for every value, not just the samples above

TYPED_VALUES = {
    "boolean": st.booleans(),
    "byte": st.integers(-128, 127).map(Byte),
    "short": st.integers(-(2**15), 2**15 - 1).map(Short),
    "int": st.integers(-(2**31), 2**31 - 1).map(Int),
    "long": st.integers(-(2**63), 2**63 - 1).map(Long),
    "float": st.floats(width=32).map(Float),
    "double": st.floats().map(Double),
    "String": st.text(st.characters(codec=None, exclude_categories=())),
    "char": st.integers(0, 0xFFFF).map(lambda code: Char(chr(code))),
    "byte[]": st.binary(),
}


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b


@given(st.sampled_from(PROPERTY_TYPES).flatmap(lambda t: st.tuples(st.just(t), TYPED_VALUES[t])))
def test_any_property_read_as_string_and_back_is_the_same_value(typed):
    # Every row reads as String, and a String reads as every column by valueOf: the String form
    # of a value must read back as that value (Float/Double.toString against Float/Double.valueOf).
    row, value = typed
    message = Message()
    message.set_object_property("p", value)
    text = message.get_string_property("p")
    message.set_string_property("p", text)
    assert same_value(getattr(message, PROPERTY_GETTERS[row])("p"), value)


@given(
    st.sampled_from([t for t in BODY_TYPES if t not in ("char", "byte[]")]).flatmap(
        lambda t: st.tuples(st.just(t), TYPED_VALUES[t])
    )
)
def test_any_map_and_stream_value_read_as_string_and_back_is_the_same_value(typed):
    row, value = typed
    map_message, stream_message = MapMessage(), StreamMessage()
    map_message.set_object("v", value)
    stream_message.write_object(value)
    stream_message.reset()
    text = stream_message.read_string()
    assert text == map_message.get_string("v")
    map_message.set_string("v", text)
    again = StreamMessage()
    again.write_string(text)
    again.reset()
    assert same_value(getattr(map_message, MAP_GETTERS[row])("v"), value)
    assert same_value(getattr(again, STREAM_READERS[row])(), value)


WIDENINGS = [(row, column) for row in PROPERTY_TYPES for column in PROPERTY_TABLE[row]]
WIDENINGS = [(r, c) for r, c in WIDENINGS if r != c and "String" not in (r, c)]


@given(
    st.sampled_from(WIDENINGS).flatmap(lambda cell: st.tuples(st.just(cell), TYPED_VALUES[cell[0]]))
)
def test_any_widening_keeps_the_value(typed):
    (_row, column), value = typed
    message = Message()
    message.set_object_property("p", value)
    assert same_value(getattr(message, PROPERTY_GETTERS[column])("p"), value)


REFUSED = [(r, c) for r in BODY_TYPES for c in BODY_TYPES if c not in BODY_TABLE[r]]


@given(
    st.sampled_from(REFUSED).flatmap(lambda cell: st.tuples(st.just(cell), TYPED_VALUES[cell[0]]))
)
def test_any_refused_cell_refuses_every_value(typed):
    (_row, column), value = typed
    map_message, stream_message = MapMessage(), StreamMessage()
    map_message.set_object("v", value)
    stream_message.write_object(value)
    stream_message.reset()
    with pytest.raises(MessageFormatException):
        getattr(map_message, MAP_GETTERS[column])("v")
    with pytest.raises(MessageFormatException):
        stream_read(stream_message, column)
    assert same_value(stream_message.read_object(), value)
