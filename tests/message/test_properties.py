"""Message properties: names, types, set_object_property, names and existence, clear_properties.

The conversion table itself is in test_conversion_tables.py; read-only properties of a received
message in test_received.py.
"""

from __future__ import annotations

import decimal

import pytest

from jms import (
    BytesMessage,
    MapMessage,
    Message,
    MessageFormatException,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from jms.message import JMSX_PROPERTY_TYPES
from jms.types import Byte, Char, Double, Float, Int, Long, Short

SETTERS = {
    "set_boolean_property": True,
    "set_byte_property": 1,
    "set_short_property": 1,
    "set_int_property": 1,
    "set_long_property": 1,
    "set_float_property": 1.0,
    "set_double_property": 1.0,
    "set_string_property": "v",
    "set_object_property": "v",
}


# ---------------------------------------------------------------------------------------------
# Names


@pytest.mark.parametrize("setter", SETTERS)
@pytest.mark.parametrize("name", [None, ""])
def test_null_or_empty_name_is_a_value_error(setter, name):
    # "Property names must not be null, and must not be empty strings. If a property name is set
    # and it is either null or an empty string, an IllegalArgumentException must be thrown."
    message = Message()
    with pytest.raises(ValueError):
        getattr(message, setter)(name, SETTERS[setter])
    assert message.get_property_names() == []


@pytest.mark.parametrize(
    "name", ["1abc", "a-b", "a b", "a.b", "x=1", "NULL", "true", "And", "between", "IS", "escape"]
)
@pytest.mark.parametrize("setter", ["set_int_property", "set_string_property"])
def test_name_that_is_not_a_selector_identifier_is_a_value_error(setter, name):
    # "Property names must obey the rules for a message selector identifier."
    message = Message()
    with pytest.raises(ValueError):
        getattr(message, setter)(name, SETTERS[setter])
    assert not message.property_exists(name)


@pytest.mark.parametrize(
    "name", ["a", "_a", "$a", "a1", "größe", "名前", "NULLS", "Island", "JMS_acme_x"]
)
def test_selector_identifiers_are_valid_names(name):
    message = Message()
    message.set_int_property(name, 7)
    assert message.get_int_property(name) == 7


def test_names_are_case_sensitive():
    # "Identifiers are case-sensitive."
    message = Message()
    message.set_int_property("weight", 1)
    message.set_int_property("Weight", 2)
    assert message.get_int_property("weight") == 1 and message.get_int_property("Weight") == 2
    assert sorted(message.get_property_names()) == ["Weight", "weight"]


@pytest.mark.parametrize("name", ["JMSType", "JMSPriority", "JMSCorrelationID", "JMSfoo", "JMS"])
def test_jms_prefix_is_reserved(name):
    # Silent choice (docs/semantics.md): "Any name that does not begin with 'JMS' is an
    # application-specific property name"; a name starting with JMS must be a JMSX property the spec
    # defines or a provider's JMS_<vendor>_ name.
    with pytest.raises(ValueError):
        Message().set_string_property(name, "x")


def test_undefined_jmsx_name_is_refused():
    # "The Jakarta Messaging API reserves the JMSX property name prefix for Jakarta Messaging
    # defined properties."
    with pytest.raises(ValueError):
        Message().set_string_property("JMSXFoo", "x")


def test_provider_specific_names_are_allowed():
    # "The Jakarta Messaging API reserves the JMS_vendor_name property name prefix for
    # provider-specific properties."
    message = Message()
    message.set_string_property("JMS_jms_OriginalDestination", "queue://orders")
    assert message.get_string_property("JMS_jms_OriginalDestination") == "queue://orders"


JMSX_ALLOWED = [
    ("JMSXUserID", "set_string_property", "alice"),
    ("JMSXAppID", "set_string_property", "app"),
    ("JMSXDeliveryCount", "set_int_property", 2),
    ("JMSXGroupID", "set_string_property", "orders-42"),
    ("JMSXGroupSeq", "set_int_property", 3),
    ("JMSXProducerTXID", "set_string_property", "tx1"),
    ("JMSXConsumerTXID", "set_string_property", "tx2"),
    ("JMSXRcvTimestamp", "set_long_property", 1_700_000_000_000),
    ("JMSXState", "set_int_property", 1),
    ("JMSXGroupSeq", "set_object_property", 3),  # a Python int in 32 bits is an int
    ("JMSXRcvTimestamp", "set_object_property", Long(5)),
]


@pytest.mark.parametrize(("name", "setter", "value"), JMSX_ALLOWED)
def test_jmsx_property_with_its_type(name, setter, value):
    # "JMSXGroupID and JMSXGroupSeq are standard properties that clients should use if they want to
    # group messages. All providers must support them."
    message = Message()
    getattr(message, setter)(name, value)
    assert message.get_object_property(name) == value
    assert type(message.get_object_property(name)) is JMSX_PROPERTY_TYPES[name]


JMSX_WRONG_TYPE = [
    ("JMSXGroupID", "set_int_property", 1),
    ("JMSXGroupSeq", "set_long_property", 1),
    ("JMSXGroupSeq", "set_string_property", "1"),
    ("JMSXGroupSeq", "set_object_property", 2**40),
    ("JMSXDeliveryCount", "set_short_property", 1),
    ("JMSXRcvTimestamp", "set_int_property", 1),
    ("JMSXUserID", "set_boolean_property", True),
]


@pytest.mark.parametrize(("name", "setter", "value"), JMSX_WRONG_TYPE)
def test_jmsx_property_with_another_type_is_refused(name, setter, value):
    # Silent choice (docs/semantics.md): the JMSX properties keep the types the spec gives them
    # (JMSXGroupID String, JMSXGroupSeq int, ...); another type is a MessageFormatException.
    message = Message()
    with pytest.raises(MessageFormatException):
        getattr(message, setter)(name, value)
    assert not message.property_exists(name)


def test_the_defined_jmsx_names_and_types():
    defined = {
        "JMSXUserID": str,
        "JMSXAppID": str,
        "JMSXDeliveryCount": Int,
        "JMSXGroupID": str,
        "JMSXGroupSeq": Int,
        "JMSXProducerTXID": str,
        "JMSXConsumerTXID": str,
        "JMSXRcvTimestamp": Long,
        "JMSXState": Int,
    }
    assert defined == JMSX_PROPERTY_TYPES


# ---------------------------------------------------------------------------------------------
# Values and their Java types


@pytest.mark.parametrize(
    ("setter", "value", "java_type"),
    [
        ("set_boolean_property", False, bool),
        ("set_byte_property", -128, Byte),
        ("set_short_property", 32767, Short),
        ("set_int_property", -(2**31), Int),
        ("set_long_property", 2**63 - 1, Long),
        ("set_float_property", 0.5, Float),
        ("set_double_property", 0.5, Double),
        ("set_string_property", "", str),
    ],
)
def test_typed_setter_stores_its_java_type(setter, value, java_type):
    # getObjectProperty: "if the property was set as an int, an Integer is returned"
    message = Message()
    getattr(message, setter)("p", value)
    stored = message.get_object_property("p")
    assert type(stored) is java_type and stored == value


@pytest.mark.parametrize(
    ("setter", "value"),
    [
        ("set_byte_property", 128),
        ("set_short_property", -32769),
        ("set_int_property", 2**31),
        ("set_long_property", 2**63),
        ("set_float_property", 1e39),
    ],
)
def test_typed_setter_out_of_range_is_a_value_error(setter, value):
    message = Message()
    with pytest.raises(ValueError):
        getattr(message, setter)("p", value)
    assert not message.property_exists("p")


@pytest.mark.parametrize(
    ("setter", "value"),
    [
        ("set_boolean_property", 1),
        ("set_int_property", 1.5),
        ("set_int_property", "1"),
        ("set_double_property", "1.0"),
        ("set_string_property", 5),
    ],
)
def test_typed_setter_of_another_python_type_is_a_type_error(setter, value):
    with pytest.raises(TypeError):
        getattr(Message(), setter)("p", value)


def test_float_property_is_rounded_to_32_bits():
    message = Message()
    message.set_float_property("f", 0.1)
    assert message.get_object_property("f") == 0.10000000149011612


@pytest.mark.parametrize(
    ("value", "java_type"),
    [
        (True, bool),
        (5, Int),
        (2**31 - 1, Int),
        (-(2**31), Int),
        (2**31, Long),
        (-(2**31) - 1, Long),
        (-(2**63), Long),
        (1.5, Double),
        ("s", str),
        (Byte(1), Byte),
        (Short(1), Short),
        (Int(1), Int),
        (Long(1), Long),
        (Float(1.5), Float),
        (Double(1.5), Double),
    ],
)
def test_set_object_property_maps_python_values_to_java_types(value, java_type):
    # API.md: bool→boolean, int→int if it fits 32 bits else long, float→double, str→String,
    # a jms.types value → its type.
    message = Message()
    message.set_object_property("p", value)
    stored = message.get_object_property("p")
    assert type(stored) is java_type and stored == value


@pytest.mark.parametrize(
    "value",
    [
        *[2**63, -(2**63) - 1, None, b"x", bytearray(b"x"), Char("c"), [1], {"a": 1}],
        *[object(), decimal.Decimal(1), 1j],
    ],
)
def test_set_object_property_refuses_other_classes(value):
    # "The setObjectProperty method accepts values of class Boolean, Byte, Short, Integer, Long,
    # Float, Double, and String. An attempt to use any other class must throw a JMSException."
    message = Message()
    with pytest.raises(MessageFormatException):
        message.set_object_property("p", value)
    assert not message.property_exists("p")


def test_setting_a_name_again_replaces_value_and_type():
    message = Message()
    message.set_int_property("p", 1)
    message.set_string_property("p", "two")
    assert message.get_object_property("p") == "two"
    assert message.get_property_names() == ["p"]


def test_set_string_property_none_removes_the_property():
    # Silent choice (docs/semantics.md): a null String property is exactly an absent one ("Getting
    # a property value for a name which has not been set returns a null value").
    message = Message()
    message.set_int_property("p", 1)
    message.set_string_property("p", None)
    assert not message.property_exists("p")
    assert message.get_property_names() == []
    assert message.get_string_property("p") is None
    message.set_string_property("never_set", None)
    assert not message.property_exists("never_set")


def test_set_string_property_none_still_checks_the_name():
    with pytest.raises(ValueError):
        Message().set_string_property("", None)


# ---------------------------------------------------------------------------------------------
# Names, existence, clearing


def test_get_property_names_lists_properties_and_not_headers():
    # getPropertyNames: "Note that Jakarta Messaging standard header fields are not considered
    # properties and are not returned in this enumeration."
    message = Message()
    message.set_jms_type("car")
    message.set_jms_correlation_id("c")
    message.set_int_property("a", 1)
    message.set_string_property("b", "x")
    message.set_string_property("JMSXGroupID", "g")
    assert sorted(message.get_property_names()) == ["JMSXGroupID", "a", "b"]
    assert not message.property_exists("JMSType")


def test_get_property_names_is_a_snapshot():
    message = Message()
    message.set_int_property("a", 1)
    names = message.get_property_names()
    names.append("b")
    message.set_int_property("c", 2)
    assert names == ["a", "b"]
    assert sorted(message.get_property_names()) == ["a", "c"]


def test_property_exists():
    message = Message()
    assert not message.property_exists("a")
    message.set_boolean_property("a", False)
    assert message.property_exists("a")
    assert not message.property_exists("A")


def test_iter_properties_gives_typed_pairs():
    message = Message()
    message.set_short_property("s", 3)
    message.set_string_property("t", "x")
    assert dict(message.iter_properties()) == {"s": 3, "t": "x"}
    assert type(dict(message.iter_properties())["s"]) is Short


@pytest.mark.parametrize(
    "factory",
    [Message, lambda: TextMessage("body"), BytesMessage, MapMessage, StreamMessage, ObjectMessage],
)
def test_clear_properties_keeps_headers_and_body(factory):
    # clearProperties: "Clears a message's properties. The message's header fields and body are
    # not cleared." "This leaves the message with an empty set of properties."
    message = factory()
    message.set_jms_type("car")
    message.set_jms_priority(7)
    message.set_int_property("a", 1)
    message.set_string_property("JMSXGroupID", "g")
    if isinstance(message, MapMessage):
        message.set_int("k", 1)
    message.clear_properties()
    assert message.get_property_names() == []
    assert not message.property_exists("a") and not message.property_exists("JMSXGroupID")
    assert message.get_jms_type() == "car" and message.get_jms_priority() == 7
    if isinstance(message, TextMessage):
        assert message.get_text() == "body"
    if isinstance(message, MapMessage):
        assert message.get_int("k") == 1


def test_properties_work_on_every_message_type():
    # "All messages support the same set of header fields" and each contains "a built-in
    # facility for supporting application-defined property values".
    for message in (TextMessage(), BytesMessage(), MapMessage(), StreamMessage(), ObjectMessage()):
        message.set_double_property("d", 2.5)
        assert message.get_string_property("d") == "2.5"


def test_errors_name_the_property_and_the_value():
    # API.md: each exception "carries a message a person can act on (what, where, and the bad
    # value)".
    message = Message()
    message.set_string_property("weight", "heavy")
    message.set_long_property("count", 12345678901)
    with pytest.raises(ValueError, match=r"weight.*heavy|heavy.*weight"):
        message.get_int_property("weight")
    with pytest.raises(MessageFormatException, match=r"count.*12345678901.*int"):
        message.get_int_property("count")
    with pytest.raises(ValueError, match="1abc"):
        message.set_int_property("1abc", 1)
    with pytest.raises(MessageFormatException, match="list"):
        message.set_object_property("p", [1])
