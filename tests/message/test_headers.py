"""The eleven header fields, their defaults and the Message constants."""

from __future__ import annotations

import pytest

from jms import (
    BytesMessage,
    DeliveryMode,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    StreamMessage,
    TemporaryTopic,
    TextMessage,
    Topic,
)
from jms.types import Byte, Int, Long

ALL_MESSAGE_TYPES = [Message, TextMessage, BytesMessage, MapMessage, StreamMessage, ObjectMessage]


def test_message_constants():
    # "The message producer's default delivery mode is PERSISTENT." "... default priority is 4."
    # "... default time to live is unlimited" (0) "... default delivery delay is zero."
    assert DeliveryMode.NON_PERSISTENT == 1 and DeliveryMode.PERSISTENT == 2
    assert Message.DEFAULT_DELIVERY_MODE == DeliveryMode.PERSISTENT
    assert Message.DEFAULT_PRIORITY == 4
    assert Message.DEFAULT_TIME_TO_LIVE == 0
    assert Message.DEFAULT_DELIVERY_DELAY == 0


@pytest.mark.parametrize("factory", ALL_MESSAGE_TYPES)
def test_new_message_header_defaults(factory):
    # Silent choice (docs/semantics.md): before it is sent a message has the producer defaults
    # (PERSISTENT, priority 4), null IDs/type/destinations, zero times, not redelivered.
    message = factory()
    assert message.get_jms_message_id() is None
    assert message.get_jms_timestamp() == 0
    assert message.get_jms_correlation_id() is None
    assert message.get_jms_correlation_id_as_bytes() is None
    assert message.get_jms_reply_to() is None
    assert message.get_jms_destination() is None
    assert message.get_jms_delivery_mode() == DeliveryMode.PERSISTENT
    assert message.get_jms_redelivered() is False
    assert message.get_jms_type() is None
    assert message.get_jms_expiration() == 0
    assert message.get_jms_delivery_time() == 0
    assert message.get_jms_priority() == 4


HEADER_VALUES = [
    ("jms_message_id", "ID:42"),
    ("jms_message_id", None),  # "these messages must have the message ID set to null"
    ("jms_timestamp", 1_700_000_000_123),
    ("jms_correlation_id", "order-7"),
    ("jms_reply_to", Queue("replies")),
    ("jms_reply_to", TemporaryTopic("t1")),
    ("jms_destination", Topic("prices")),
    ("jms_delivery_mode", DeliveryMode.NON_PERSISTENT),
    ("jms_redelivered", True),
    ("jms_type", "car"),
    ("jms_expiration", 2**63 - 1),
    ("jms_delivery_time", -1),
    ("jms_priority", 0),
    ("jms_priority", 9),
]


@pytest.mark.parametrize(("header", "value"), HEADER_VALUES)
def test_header_set_and_get(header, value):
    message = TextMessage()
    getattr(message, f"set_{header}")(value)
    assert getattr(message, f"get_{header}")() == value


@pytest.mark.parametrize(
    ("header", "value", "error"),
    [
        ("jms_priority", 10, ValueError),
        ("jms_priority", -1, ValueError),
        ("jms_priority", True, ValueError),
        ("jms_delivery_mode", 0, ValueError),
        ("jms_delivery_mode", 3, ValueError),
        ("jms_timestamp", 2**63, ValueError),
        ("jms_expiration", -(2**63) - 1, ValueError),
        ("jms_delivery_time", 1.5, TypeError),
        ("jms_timestamp", True, TypeError),
        ("jms_redelivered", 1, TypeError),
        ("jms_type", 5, TypeError),
        ("jms_message_id", b"ID:1", TypeError),
        ("jms_correlation_id", 7, TypeError),
        ("jms_reply_to", "queue://replies", TypeError),
        ("jms_destination", "orders", TypeError),
    ],
)
def test_header_refuses_values_outside_its_java_type(header, value, error):
    # Silent choice (docs/semantics.md): JMSPriority is one of the ten levels 0-9 ("The Jakarta
    # Messaging API defines ten levels of priority value, with 0 as the lowest priority and 9 as
    # the highest"), JMSDeliveryMode one of the two DeliveryMode values, time headers Java longs.
    message = Message()
    before = getattr(message, f"get_{header}")()
    with pytest.raises(error):
        getattr(message, f"set_{header}")(value)
    assert getattr(message, f"get_{header}")() == before


def test_int_headers_take_typed_ints():
    # jms.types: "a value stored as Int(5) *is* the int 5 for every Python purpose".
    message = Message()
    message.set_jms_priority(Int(7))
    message.set_jms_delivery_mode(Byte(1))
    message.set_jms_timestamp(Long(5))
    assert message.get_jms_priority() == 7 and type(message.get_jms_priority()) is int
    assert message.get_jms_delivery_mode() == DeliveryMode.NON_PERSISTENT
    assert message.get_jms_timestamp() == 5


@pytest.mark.parametrize("value", [1.0, 2.0, "2", None])
def test_delivery_mode_must_be_an_int(value):
    with pytest.raises(ValueError):
        Message().set_jms_delivery_mode(value)


def test_correlation_id_as_bytes_is_copied_on_set():
    # setJMSCorrelationIDAsBytes: "The array is copied before the method returns, so future
    # modifications to the array will not alter this message header."
    message = Message()
    value = bytearray(b"\x01\x02\x03")
    message.set_jms_correlation_id_as_bytes(value)
    value[0] = 0xFF
    assert message.get_jms_correlation_id_as_bytes() == b"\x01\x02\x03"
    assert type(message.get_jms_correlation_id_as_bytes()) is bytes  # immutable: nothing to alter


def test_correlation_id_string_and_bytes_replace_each_other():
    message = Message()
    message.set_jms_correlation_id_as_bytes(b"raw")
    message.set_jms_correlation_id("text")
    assert message.get_jms_correlation_id() == "text"
    message.set_jms_correlation_id_as_bytes(b"\x00\x01")
    assert message.get_jms_correlation_id_as_bytes() == b"\x00\x01"
    message.set_jms_correlation_id(None)
    assert message.get_jms_correlation_id() is None
    assert message.get_jms_correlation_id_as_bytes() is None
    message.set_jms_correlation_id_as_bytes(b"x")
    message.set_jms_correlation_id_as_bytes(None)
    assert message.get_jms_correlation_id() is None


def test_correlation_id_bytes_read_as_string_are_decoded_as_utf8():
    # Silent choice (docs/semantics.md): getJMSCorrelationID of a byte[] value is its UTF-8
    # decoding, invalid bytes replaced by U+FFFD.
    message = Message()
    message.set_jms_correlation_id_as_bytes("grüße".encode())
    assert message.get_jms_correlation_id() == "grüße"
    message.set_jms_correlation_id_as_bytes(b"ab\xffcd")
    assert message.get_jms_correlation_id() == "ab\ufffdcd"


def test_correlation_id_string_read_as_bytes_is_its_utf8_encoding():
    # Silent choice (docs/semantics.md): getJMSCorrelationIDAsBytes of a String is its UTF-8.
    message = Message()
    message.set_jms_correlation_id("ID:é")
    assert message.get_jms_correlation_id_as_bytes() == b"ID:\xc3\xa9"


def test_correlation_id_as_bytes_takes_only_bytes():
    with pytest.raises(TypeError):
        Message().set_jms_correlation_id_as_bytes("text")


def test_headers_are_not_properties():
    # "Note that header fields are distinct from properties."
    message = Message()
    message.set_jms_type("car")
    message.set_jms_priority(5)
    assert message.get_property_names() == []
    assert message.get_string_property("JMSType") is None


@pytest.mark.parametrize("factory", ALL_MESSAGE_TYPES)
def test_every_message_type_has_every_header(factory):
    # "All messages support the same set of header fields."
    message = factory()
    message.set_jms_destination(Queue("q"))
    message.set_jms_delivery_time(5)
    assert message.get_jms_destination() == Queue("q")
    assert message.get_jms_delivery_time() == 5


def test_clear_body_keeps_headers():
    # clearBody: "Clearing a message's body does not clear its header values or property entries."
    message = TextMessage("hi")
    message.set_jms_type("t")
    message.set_jms_message_id("ID:1")
    message.set_int_property("n", 1)
    message.clear_body()
    assert message.get_text() is None
    assert message.get_jms_type() == "t" and message.get_jms_message_id() == "ID:1"
    assert message.get_int_property("n") == 1


def _names(pattern: str, verbs: tuple[str, ...], types: str) -> list[str]:
    return [pattern.format(verb, kind) for verb in verbs for kind in types.split()]


PROPERTY_TYPES = "boolean byte short int long float double string object"
BODY_TYPES = "boolean byte short char int long float double string bytes object"
API_METHODS = {
    Message: [
        *_names("{}_jms_{}", ("get", "set"), "message_id timestamp correlation_id reply_to"),
        *_names("{}_jms_{}", ("get", "set"), "correlation_id_as_bytes destination delivery_mode"),
        *_names("{}_jms_{}", ("get", "set"), "redelivered type expiration delivery_time priority"),
        *_names("{}_{}_property", ("get", "set"), PROPERTY_TYPES),
        "clear_properties",
        "property_exists",
        "get_property_names",
        "acknowledge",
        "clear_body",
        "get_body",
        "is_body_assignable_to",
    ],
    TextMessage: ["get_text", "set_text"],
    ObjectMessage: ["get_object", "set_object"],
    BytesMessage: [
        *_names("{}_{}", ("read", "write"), "boolean byte short char int long float double"),
        *_names("{}_{}", ("read", "write"), "utf bytes"),
        "read_unsigned_byte",
        "read_unsigned_short",
        "write_object",
        "get_body_length",
        "reset",
    ],
    MapMessage: [*_names("{}_{}", ("get", "set"), BODY_TYPES), "get_map_names", "item_exists"],
    StreamMessage: [*_names("{}_{}", ("read", "write"), BODY_TYPES), "reset"],
}


@pytest.mark.parametrize("cls", API_METHODS, ids=lambda c: c.__name__)
def test_every_method_of_the_spec_under_its_snake_case_name(cls):
    # API.md: "Every method of the Jakarta Messaging API that the spec describes exists under its
    # snake_case name."
    missing = [name for name in API_METHODS[cls] if not callable(getattr(cls, name, None))]
    assert missing == []
    assert len(API_METHODS[cls]) > 1
