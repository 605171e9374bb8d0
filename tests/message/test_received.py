"""A received message: read-only properties and body until cleared, writable headers, the
acknowledge callback, and independent copies. Driven through the provider's hook
``message._mark_received(acknowledger)``.

Message javadoc: "When a client receives a message, its properties are in read-only mode. If a
client attempts to set properties at this point, a MessageNotWriteableException is thrown. If
clearProperties is called, the properties can now be both read from and written to. Note that
header fields are distinct from properties. Header fields are never in read-only mode."
Chapter: "When messages are delivered, the body of the message is made read-only. Any attempt to
alter a message body after it has been delivered results in a javax.jms.MessageNotWriteableException.
The only way to change the body of a message after it has been delivered is to invoke the
clearBody() method".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from jms import (
    BytesMessage,
    IllegalStateException,
    MapMessage,
    Message,
    MessageNotReadableException,
    MessageNotWriteableException,
    ObjectMessage,
    Queue,
    StreamMessage,
    TextMessage,
    Topic,
)
from jms.types import Int

PROPERTY_SETTERS = {
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

HEADER_SETTERS = {
    "set_jms_message_id": "ID:new",
    "set_jms_timestamp": 99,
    "set_jms_correlation_id": "corr",
    "set_jms_correlation_id_as_bytes": b"corr",
    "set_jms_reply_to": Queue("replies"),
    "set_jms_destination": Topic("t"),
    "set_jms_delivery_mode": 1,
    "set_jms_redelivered": True,
    "set_jms_type": "type",
    "set_jms_expiration": 5,
    "set_jms_delivery_time": 6,
    "set_jms_priority": 9,
}


def text() -> TextMessage:
    return TextMessage("hello")


def bytes_message() -> BytesMessage:
    message = BytesMessage()
    message.write_int(7)
    message.write_utf("x")
    return message


def map_message() -> MapMessage:
    message = MapMessage()
    message.set_int("n", 7)
    return message


def stream_message() -> StreamMessage:
    message = StreamMessage()
    message.write_int(7)
    message.write_string("x")
    return message


def object_message() -> ObjectMessage:
    return ObjectMessage({"n": 7})


FACTORIES: dict[str, Callable[[], Message]] = {
    "message": Message,
    "text": text,
    "bytes": bytes_message,
    "map": map_message,
    "stream": stream_message,
    "object": object_message,
}

# One body write per type, and what a reader sees of the original body.
BODY_WRITES: dict[str, Callable[[Any], None]] = {
    "text": lambda m: m.set_text("changed"),
    "bytes": lambda m: m.write_int(1),
    "map": lambda m: m.set_int("n", 1),
    "stream": lambda m: m.write_int(1),
    "object": lambda m: m.set_object("changed"),
}


def body_of(message: Message) -> Any:
    if isinstance(message, TextMessage):
        return message.get_text()
    if isinstance(message, BytesMessage):
        return (message.read_int(), message.read_utf())
    if isinstance(message, MapMessage):
        return message.get_int("n")
    if isinstance(message, StreamMessage):
        return (message.read_int(), message.read_string())
    if isinstance(message, ObjectMessage):
        return message.get_object()
    return None


ORIGINAL_BODY = {
    "message": None,
    "text": "hello",
    "bytes": (7, "x"),
    "map": 7,
    "stream": (7, "x"),
    "object": {"n": 7},
}


def received(kind: str, acknowledger: Callable[[], None] | None = None) -> Message:
    message = FACTORIES[kind]()
    message.set_int_property("p", 1)
    message._mark_received(acknowledger)
    return message


@pytest.mark.parametrize("kind", FACTORIES)
@pytest.mark.parametrize("setter", PROPERTY_SETTERS)
def test_properties_of_a_received_message_are_read_only(kind, setter):
    message = received(kind)
    with pytest.raises(MessageNotWriteableException):
        getattr(message, setter)("q", PROPERTY_SETTERS[setter])
    with pytest.raises(MessageNotWriteableException):
        getattr(message, setter)("p", PROPERTY_SETTERS[setter])  # nor overwritten
    assert message.get_property_names() == ["p"]
    assert message.get_int_property("p") == 1  # still readable


def test_removing_a_property_of_a_received_message_is_refused_too():
    message = received("text")
    with pytest.raises(MessageNotWriteableException):
        message.set_string_property("p", None)
    assert message.property_exists("p")


@pytest.mark.parametrize("kind", FACTORIES)
def test_clear_properties_makes_them_writable(kind):
    message = received(kind)
    message.clear_properties()
    assert message.get_property_names() == []
    message.set_int_property("q", 2)
    message.set_string_property("JMSXGroupID", "g")
    assert message.get_int_property("q") == 2


@pytest.mark.parametrize("kind", BODY_WRITES)
def test_body_of_a_received_message_is_read_only(kind):
    message = received(kind)
    with pytest.raises(MessageNotWriteableException):
        BODY_WRITES[kind](message)
    assert body_of(message) == ORIGINAL_BODY[kind]


@pytest.mark.parametrize(
    "write",
    [
        lambda m: m.set_boolean("b", True),
        lambda m: m.set_bytes("b", b"x"),
        lambda m: m.set_object("b", 1),
        lambda m: m.set_string("b", None),
    ],
)
def test_every_map_setter_is_refused_when_received(write):
    message = received("map")
    with pytest.raises(MessageNotWriteableException):
        write(message)
    assert message.get_map_names() == ["n"]


@pytest.mark.parametrize("kind", ["bytes", "stream"])
@pytest.mark.parametrize(
    "writer", ["write_boolean", "write_byte", "write_bytes", "write_object", "write_char"]
)
def test_every_bytes_and_stream_writer_is_refused_when_received(kind, writer):
    value = {"write_boolean": True, "write_bytes": b"x", "write_char": "c"}.get(writer, 1)
    message = received(kind)
    with pytest.raises(MessageNotWriteableException):
        getattr(message, writer)(value)
    assert body_of(message) == ORIGINAL_BODY[kind]


@pytest.mark.parametrize("kind", ["bytes", "stream"])
def test_bytes_and_stream_are_reset_for_reading_on_delivery(kind):
    # "[reset] is called automatically when the message is delivered to the client."
    message = FACTORIES[kind]()
    message.reset()
    message.read_int()  # a position part way through: delivery starts over
    message._mark_received(None)
    assert body_of(message) == ORIGINAL_BODY[kind]
    # "... it may need to be called directly by the consuming client when a message is redelivered"
    message.reset()
    assert body_of(message) == ORIGINAL_BODY[kind]


@pytest.mark.parametrize("kind", ["bytes", "stream"])
def test_a_message_still_being_written_is_readable_once_delivered(kind):
    message = FACTORIES[kind]()
    message._mark_received(None)
    assert body_of(message) == ORIGINAL_BODY[kind]


@pytest.mark.parametrize("kind", BODY_WRITES)
def test_clear_body_makes_the_body_writable_and_empty(kind):
    # "The clearBody() method empties the message's payload so that a new payload can be added."
    message = received(kind)
    message.clear_body()
    assert kind == "stream" or message.get_body(object) is None
    BODY_WRITES[kind](message)
    with pytest.raises(MessageNotWriteableException):
        message.set_int_property("q", 1)  # properties stay read-only


@pytest.mark.parametrize("kind", ["bytes", "stream"])
def test_after_clear_body_a_received_bytes_or_stream_is_write_only(kind):
    message = received(kind)
    message.clear_body()
    with pytest.raises(MessageNotReadableException):
        message.read_int()
    message.write_int(3)
    message.reset()
    assert message.read_int() == 3


@pytest.mark.parametrize("kind", FACTORIES)
@pytest.mark.parametrize("setter", HEADER_SETTERS)
def test_headers_of_a_received_message_stay_writable(kind, setter):
    # "Header fields are never in read-only mode."
    message = received(kind)
    getattr(message, setter)(HEADER_SETTERS[setter])
    getter = setter.replace("set_", "get_", 1)
    assert getattr(message, getter)() == HEADER_SETTERS[setter]


def test_acknowledge_calls_the_providers_callback():
    calls = []
    message = received("text", lambda: calls.append("ack"))
    message.acknowledge()
    message.acknowledge()
    assert calls == ["ack", "ack"]


def test_acknowledge_of_a_message_never_received_does_nothing():
    Message().acknowledge()
    received("map", None).acknowledge()


def test_acknowledge_passes_on_the_providers_error():
    # acknowledge: "IllegalStateException - if this method is called on a closed session."
    def closed() -> None:
        raise IllegalStateException("the session is closed")

    with pytest.raises(IllegalStateException):
        received("text", closed).acknowledge()


@pytest.mark.parametrize("kind", FACTORIES)
def test_copy_is_independent_and_writable(kind):
    calls = []
    original = FACTORIES[kind]()
    original.set_jms_type("t")
    original.set_jms_correlation_id_as_bytes(b"c")
    original.set_short_property("s", 3)
    original._mark_received(lambda: calls.append("original"))
    copy = original._copy()
    assert type(copy) is type(original)
    # Same headers, typed properties and body ...
    assert copy.get_jms_type() == "t" and copy.get_jms_correlation_id_as_bytes() == b"c"
    assert type(copy.get_object_property("s")) is type(original.get_object_property("s"))
    if kind in ("bytes", "stream"):
        copy.reset()
    assert body_of(copy) == ORIGINAL_BODY[kind]
    # ... but its own: writable, not acknowledged through the original's callback.
    copy.set_jms_type("other")
    copy.set_int_property("new", 1)
    copy.acknowledge()
    assert calls == []
    assert original.get_jms_type() == "t" and not original.property_exists("new")
    copy.clear_body()
    if kind in BODY_WRITES:
        BODY_WRITES[kind](copy)
    assert body_of(original) == ORIGINAL_BODY[kind]


def test_copy_of_a_message_being_written_keeps_writing_apart():
    for kind, more in [("bytes", lambda m: m.write_int(9)), ("stream", lambda m: m.write_int(9))]:
        original = FACTORIES[kind]()
        copy = original._copy()
        more(copy)
        original.reset()
        copy.reset()
        assert body_of(original) == ORIGINAL_BODY[kind]
        assert body_of(copy) == ORIGINAL_BODY[kind] and copy.read_int() == 9


def test_copy_of_a_map_does_not_share_entries():
    original = map_message()
    copy = original._copy()
    copy.set_int("extra", 1)
    assert original.get_map_names() == ["n"]
    assert type(copy.get_object("n")) is Int
