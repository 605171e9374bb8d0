"""MapMessage: names, typed values, item_exists, get_map_names, bytes copies, clear_body.

The conversion cells and null rules are in test_conversion_tables.py.
"""

from __future__ import annotations

import pytest

from jms import MapMessage, MessageFormatException
from jms.types import Byte, Char, Double, Float, Int, Long, Short

SETTERS = {
    "set_boolean": True,
    "set_byte": 1,
    "set_short": 1,
    "set_char": "c",
    "set_int": 1,
    "set_long": 1,
    "set_float": 1.0,
    "set_double": 1.0,
    "set_string": "s",
    "set_bytes": b"b",
    "set_object": 1,
}
GETTERS = [
    "get_boolean",
    "get_byte",
    "get_short",
    "get_char",
    "get_int",
    "get_long",
    "get_float",
    "get_double",
    "get_string",
    "get_bytes",
    "get_object",
]


def test_the_chapters_example():
    # mapMessage.setInt("Age", 88); setFloat("Weight", 234); setString("Name", "Smith");
    # setObject("Height", new Double(150.32)); ... getInt, getFloat, getString, getObject.
    message = MapMessage()
    message.set_int("Age", 88)
    message.set_float("Weight", 234)
    message.set_string("Name", "Smith")
    message.set_object("Height", Double(150.32))
    assert message.get_int("Age") == 88
    assert message.get_float("Weight") == 234.0
    assert message.get_string("Name") == "Smith"
    height = message.get_object("Height")
    assert type(height) is Double and height == 150.32


@pytest.mark.parametrize(
    ("setter", "value", "java_type"),
    [
        ("set_boolean", True, bool),
        ("set_byte", -128, Byte),
        ("set_short", 300, Short),
        ("set_char", "\u20ac", Char),
        ("set_int", 70000, Int),
        ("set_long", 2**40, Long),
        ("set_float", 0.5, Float),
        ("set_double", 0.1, Double),
        ("set_string", "s", str),
        ("set_bytes", b"\x00\x01", bytes),
    ],
)
def test_setters_store_their_java_type(setter, value, java_type):
    # "The primitive wrappers are converted to their corresponding primitive types when set."
    message = MapMessage()
    getattr(message, setter)("k", value)
    stored = message.get_object("k")
    assert type(stored) is java_type and stored == value


@pytest.mark.parametrize("setter", SETTERS)
@pytest.mark.parametrize("name", [None, ""])
def test_null_or_empty_name_is_refused_by_setters(setter, name):
    # MapMessage javadoc: IllegalArgumentException "if the name is null or if the name is an empty
    # string".
    message = MapMessage()
    with pytest.raises(ValueError):
        getattr(message, setter)(name, SETTERS[setter])
    assert message.get_map_names() == []


@pytest.mark.parametrize("getter", GETTERS)
@pytest.mark.parametrize("name", [None, ""])
def test_null_or_empty_name_is_refused_by_getters(getter, name):
    with pytest.raises(ValueError):
        getattr(MapMessage(), getter)(name)


@pytest.mark.parametrize("name", ["a b", "1st", "JMSType", "NULL", "ключ", "x.y", " "])
def test_any_non_empty_string_is_a_name(name):
    # Silent choice (docs/semantics.md): map names are any non-empty strings ("The name must be a
    # String object"); unlike property names they need not be selector identifiers.
    message = MapMessage()
    message.set_int(name, 1)
    assert message.get_int(name) == 1 and message.item_exists(name)


def test_item_exists_and_get_map_names():
    # "To avoid reading nonexistent name-value pairs, the MapMessage provides an itemExists() test
    # method. In addition, the getMapNames() method lets a JMS client enumerate the names."
    message = MapMessage()
    assert not message.item_exists("a") and message.get_map_names() == []
    message.set_int("a", 1)
    message.set_string("b", None)
    assert message.item_exists("a") and message.item_exists("b") and not message.item_exists("c")
    assert sorted(message.get_map_names()) == ["a", "b"]
    names = message.get_map_names()
    names.append("z")
    assert sorted(message.get_map_names()) == ["a", "b"]


def test_setting_a_name_again_replaces_value_and_type():
    message = MapMessage()
    message.set_int("k", 1)
    message.set_string("k", "one")
    assert message.get_object("k") == "one" and message.get_map_names() == ["k"]
    with pytest.raises(ValueError):
        message.get_int("k")


def test_set_bytes_copies_and_takes_a_range():
    value = bytearray(b"abcdef")
    message = MapMessage()
    message.set_bytes("all", value)
    message.set_bytes("part", value, 2, 3)
    message.set_bytes("tail", value, 4)
    value[:] = b"zzzzzz"
    assert message.get_bytes("all") == b"abcdef"
    assert message.get_bytes("part") == b"cde"
    assert message.get_bytes("tail") == b"ef"


@pytest.mark.parametrize(("offset", "length"), [(-1, None), (0, -1), (4, 3), (7, None)])
def test_set_bytes_outside_the_value_is_refused(offset, length):
    message = MapMessage()
    with pytest.raises(ValueError):
        message.set_bytes("k", b"abcdef", offset, length)
    assert not message.item_exists("k")


def test_set_bytes_none_stores_null():
    message = MapMessage()
    message.set_bytes("k", None)
    assert message.item_exists("k") and message.get_bytes("k") is None


@pytest.mark.parametrize(
    ("value", "java_type"),
    [
        (5, Int),
        (-(2**31) - 1, Long),
        (1.5, Double),
        ("s", str),
        (bytearray(b"x"), bytes),
        (Char("c"), Char),
        (Short(2), Short),
        (Float(2.5), Float),
        (False, bool),
    ],
)
def test_set_object_maps_python_values(value, java_type):
    # "The setObject() method writes a Java primitive wrapper type, String object, or byte array."
    message = MapMessage()
    message.set_object("k", value)
    assert type(message.get_object("k")) is java_type


def test_set_object_none_stores_null():
    message = MapMessage()
    message.set_object("k", None)
    assert message.item_exists("k") and message.get_object("k") is None


@pytest.mark.parametrize("value", [[1], {"a": 1}, object(), 2**64, 1j, {1}])
def test_set_object_refuses_other_classes(value):
    message = MapMessage()
    with pytest.raises(MessageFormatException):
        message.set_object("k", value)
    assert not message.item_exists("k")


@pytest.mark.parametrize(
    ("setter", "value", "error"),
    [
        ("set_byte", 128, ValueError),
        ("set_short", -32769, ValueError),
        ("set_int", 2**31, ValueError),
        ("set_long", 2**63, ValueError),
        ("set_float", 1e39, ValueError),
        ("set_char", "ab", ValueError),
        ("set_char", 65, TypeError),
        ("set_boolean", 1, TypeError),
        ("set_string", b"s", TypeError),
        ("set_bytes", "s", TypeError),
    ],
)
def test_bad_values_are_refused(setter, value, error):
    message = MapMessage()
    with pytest.raises(error):
        getattr(message, setter)("k", value)
    assert not message.item_exists("k")


def test_reading_needs_no_reset_and_does_not_consume():
    message = MapMessage()
    message.set_long("k", 5)
    assert message.get_long("k") == 5
    assert message.get_long("k") == 5
    assert message.get_string("k") == "5"
    message.set_long("j", 6)  # still writable after reads
    assert message.get_long("j") == 6


def test_clear_body_removes_every_entry():
    message = MapMessage()
    message.set_int("a", 1)
    message.set_bytes("b", b"x")
    message.clear_body()
    assert message.get_map_names() == [] and not message.item_exists("a")
    assert message.get_object("a") is None
    message.set_int("c", 3)
    assert message.get_map_names() == ["c"]


def test_get_body_is_a_copy_of_the_map():
    message = MapMessage()
    message.set_int("a", 1)
    message.set_bytes("b", b"x")
    body = message.get_body(dict)
    assert body == {"a": 1, "b": b"x"} and type(body["a"]) is Int
    body["c"] = 3
    assert not message.item_exists("c")


def test_a_value_read_as_the_wrong_type_is_named_in_its_java_form() -> None:
    message = MapMessage()
    message.set_int("n", 3)
    message.set_float("f", 0.1)
    with pytest.raises(MessageFormatException, match=r"'n' holds an int \(3\), which cannot be"):
        message.get_boolean("n")
    with pytest.raises(MessageFormatException, match=r"'f' holds a float \(0\.1\), which cannot"):
        message.get_int("f")
