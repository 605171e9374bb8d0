"""Hypothesis strategies for Java-typed values and whole JMS messages, shared by the test suites
(codec round trips, Spark conversions, selector differential tests)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from jms.message import (
    BytesMessage,
    Destination,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    StreamMessage,
    TemporaryQueue,
    TemporaryTopic,
    TextMessage,
    Topic,
)
from jms.types import (
    BYTE_RANGE,
    INT_RANGE,
    LONG_RANGE,
    SHORT_RANGE,
    Byte,
    Char,
    Double,
    Float,
    Int,
    Long,
    Short,
)

# Any Python str, lone surrogates included: Java strings may hold them and must survive.
java_strings = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)

java_bytes = st.integers(*BYTE_RANGE).map(Byte)
java_shorts = st.integers(*SHORT_RANGE).map(Short)
java_ints = st.integers(*INT_RANGE).map(Int)
java_longs = st.integers(*LONG_RANGE).map(Long)
java_floats = st.floats(width=32, allow_nan=True, allow_infinity=True).map(Float)
java_doubles = st.floats(allow_nan=True, allow_infinity=True).map(Double)
java_chars = st.integers(0, 0xFFFF).map(lambda code: Char(chr(code)))


def property_values_of(strings: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """Values of every property type, Strings drawn from ``strings``."""
    return st.one_of(
        st.booleans(),
        java_bytes,
        java_shorts,
        java_ints,
        java_longs,
        java_floats,
        java_doubles,
        strings,
    )


property_values = property_values_of(java_strings)
body_values = st.one_of(property_values, java_chars, st.binary(max_size=40), st.none())

# Names that are valid selector identifiers, ASCII and not, never reserved words.
_name_start = st.sampled_from("abcxyzABCXYZ_$éλ名")
_name_part = st.sampled_from("abcxyzABCXYZ_$0129éλ名")
property_names = st.builds(
    lambda first, rest: first + rest, _name_start, st.text(_name_part, max_size=10)
).filter(
    lambda name: (
        name.upper()
        not in {
            "NULL",
            "TRUE",
            "FALSE",
            "NOT",
            "AND",
            "OR",
            "BETWEEN",
            "LIKE",
            "IN",
            "IS",
            "ESCAPE",
        }
    )
)


def destinations_named(names: st.SearchStrategy[str]) -> st.SearchStrategy[Destination]:
    return st.one_of(
        st.builds(Queue, names),
        st.builds(Topic, names),
        st.builds(TemporaryQueue, names),
        st.builds(TemporaryTopic, names),
    )


destinations = destinations_named(st.text(min_size=1, max_size=20))

_pickleable = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text()),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=10,
)


def messages_of(
    strings: st.SearchStrategy[str], chars: st.SearchStrategy[Char]
) -> st.SearchStrategy[Message]:
    """Arbitrary messages of all six classes, every header and property drawn, with every String
    (header, property, body, destination name) from ``strings`` and chars from ``chars``."""
    values = property_values_of(strings)
    in_bodies = st.one_of(values, chars, st.binary(max_size=40), st.none())
    places = destinations_named(strings.filter(bool))

    @st.composite
    def build(draw: st.DrawFn) -> Message:
        kind = draw(st.sampled_from(["message", "text", "bytes", "map", "stream", "object"]))
        message: Any
        if kind == "message":
            message = Message()
        elif kind == "text":
            message = TextMessage(draw(st.none() | strings))
        elif kind == "bytes":
            message = BytesMessage()
            message.write_bytes(draw(st.binary(max_size=64)))
            if draw(st.booleans()):
                message.reset()
        elif kind == "map":
            message = MapMessage()
            for name, value in draw(
                st.dictionaries(strings.filter(bool), in_bodies, max_size=6)
            ).items():
                message.set_object(name, value)
        elif kind == "stream":
            message = StreamMessage()
            for value in draw(st.lists(in_bodies, max_size=6)):
                message.write_object(value)
        else:
            message = ObjectMessage(draw(_pickleable))
        message.set_jms_message_id(draw(st.none() | strings.map(lambda s: "ID:" + s)))
        message.set_jms_timestamp(draw(st.integers(*LONG_RANGE)))
        if draw(st.booleans()):
            message.set_jms_correlation_id(draw(st.none() | strings))
        else:
            message.set_jms_correlation_id_as_bytes(draw(st.binary(max_size=16)))
        message.set_jms_reply_to(draw(st.none() | places))
        message.set_jms_destination(draw(st.none() | places))
        message.set_jms_delivery_mode(draw(st.sampled_from([1, 2])))
        message.set_jms_redelivered(draw(st.booleans()))
        message.set_jms_type(draw(st.none() | strings))
        message.set_jms_expiration(draw(st.integers(*LONG_RANGE)))
        message.set_jms_delivery_time(draw(st.integers(*LONG_RANGE)))
        message.set_jms_priority(draw(st.integers(0, 9)))
        for name, value in draw(st.dictionaries(property_names, values, max_size=8)).items():
            message.set_object_property(name, value)
        if draw(st.booleans()):
            message.set_object_property("JMSXDeliveryCount", draw(java_ints))
        if draw(st.booleans()):
            message.set_object_property("JMSXGroupID", draw(strings))
        return message

    return build()


def messages() -> st.SearchStrategy[Message]:
    """An arbitrary message of any of the six classes, every header and property drawn."""
    return messages_of(java_strings, java_chars)


def _value_key(value: Any) -> Any:
    """A key equal only for values of the same Java type and bits (NaN equals NaN, -0.0 ≠ 0.0)."""
    import struct

    if isinstance(value, float):
        return (type(value).__name__, struct.pack(">d", value))
    return (type(value).__name__, value)


def message_fingerprint(message: Message) -> tuple[Any, ...]:
    """Everything a message carries, in a form that compares exactly (types included)."""
    if isinstance(message, BytesMessage):
        body: Any = message._content()
    elif isinstance(message, TextMessage):
        body = message.get_text()
    elif isinstance(message, MapMessage):
        body = sorted((name, _value_key(value)) for name, value in message._map.items())
    elif isinstance(message, StreamMessage):
        body = [_value_key(value) for value in message._values]
    elif isinstance(message, ObjectMessage):
        body = message.get_serialized_object()
    else:
        body = None
    correlation = message._correlation_id
    return (
        type(message).__name__,
        message.get_jms_message_id(),
        message.get_jms_timestamp(),
        (type(correlation).__name__, correlation),
        repr(message.get_jms_reply_to()),
        repr(message.get_jms_destination()),
        message.get_jms_delivery_mode(),
        message.get_jms_redelivered(),
        message.get_jms_type(),
        message.get_jms_expiration(),
        message.get_jms_delivery_time(),
        message.get_jms_priority(),
        sorted((name, _value_key(value)) for name, value in message._properties.items()),
        body,
    )
