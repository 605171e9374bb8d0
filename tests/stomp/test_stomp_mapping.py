"""The JMS ⇄ STOMP mapping as pure functions: destinations, header names that are not property
names, typed JMSX headers, and round trips of text and bytes messages through frame headers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jms import (
    BytesMessage,
    InvalidDestinationException,
    MessageFormatException,
    Queue,
    TextMessage,
)
from jms.broker.delivery import DELIVERY_COUNT, delivered_copy
from jms.message import Destination, Message, Topic
from jms.message.message import property_name_error
from jms.stomp import Version, encode_frame
from jms.stomp.mapping import (
    DestinationName,
    MessageFrames,
    frame_for_message,
    header_for_property,
    message_from_frame,
    parse_destination,
    property_for_header,
)
from jms.types import Int
from tests.strategies import java_strings, messages


def _name_of(destination: Destination) -> str:
    return f"/{'queue' if isinstance(destination, Queue) else 'topic'}/{destination.name}"


def _resolve(text: str) -> Destination:
    parsed = parse_destination(text)
    return Queue(parsed.name) if parsed.kind == "queue" else Topic(parsed.name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/queue/orders", DestinationName("queue", "orders")),
        ("/topic/a/b", DestinationName("topic", "a/b")),
        ("/temp-queue/r", DestinationName("temp-queue", "r")),
        ("/remote-temp-topic/x.1", DestinationName("remote-temp-topic", "x.1")),
    ],
)
def test_destinations(text: str, expected: DestinationName) -> None:
    assert parse_destination(text) == expected


@pytest.mark.parametrize("text", ["orders", "/queue/", "queue://orders", "/queues/x", ""])
def test_a_destination_outside_the_namespaces_is_refused(text: str) -> None:
    with pytest.raises(InvalidDestinationException, match="is not a destination"):
        parse_destination(text)


@given(st.text(min_size=1, max_size=30))
def test_any_header_name_survives_as_a_property(name: str) -> None:
    property_name = property_for_header(name)
    assert property_name_error(property_name) is None
    assert header_for_property(property_name) == name


def test_header_names_that_are_property_names_stay_as_they_are() -> None:
    assert property_for_header("colour") == "colour"
    assert property_for_header("content-type") == "JMS_jms_STOMP_content_2d_type"
    assert property_for_header("x_y-z") == "JMS_jms_STOMP_x__y_2d_z"


def test_a_text_message_round_trips_through_frame_headers() -> None:
    sent = TextMessage("héllo")
    sent.set_jms_destination(Queue("orders"))
    sent.set_jms_priority(8)
    sent.set_jms_expiration(123)
    sent.set_jms_timestamp(100)
    sent.set_jms_correlation_id("c")
    sent.set_jms_reply_to(Topic("replies"))
    sent.set_jms_type("t")
    sent.set_string_property("colour", "red")
    sent.set_string_property("timestamp", "a property named like a header")
    sent.set_object_property("JMSXGroupSeq", 4)
    headers, body = frame_for_message(sent, _name_of)
    back = message_from_frame(dict(headers), body, Queue("orders"), _resolve, 0)
    assert isinstance(back, TextMessage) and back.get_text() == "héllo"
    assert (back.get_jms_priority(), back.get_jms_expiration(), back.get_jms_timestamp()) == (
        8,
        123,
        100,
    )
    assert back.get_jms_correlation_id() == "c" and back.get_jms_type() == "t"
    assert back.get_jms_reply_to() == Topic("replies")
    assert back.get_string_property("colour") == "red"
    assert back.get_string_property("timestamp") == "a property named like a header"
    assert back.get_object_property("JMSXGroupSeq") == 4


def test_a_bytes_message_round_trips() -> None:
    sent = BytesMessage()
    sent.write_bytes(b"\x00\xff")
    sent.set_jms_destination(Queue("q"))
    headers, body = frame_for_message(sent, _name_of)
    back = message_from_frame(
        {**dict(headers), "content-length": "2"}, body, Queue("q"), _resolve, 0
    )
    assert isinstance(back, BytesMessage) and back.get_body(bytes) == b"\x00\xff"


@pytest.mark.parametrize(
    ("header", "value", "complaint"),
    [
        ("expires", "soon", "is not a whole number of milliseconds"),
        ("expires", "99999999999999999999", "is not a whole number of milliseconds"),
        ("timestamp", "1.5", "is not a whole number of milliseconds"),
        ("priority", "10", "is not a priority from 0 to 9"),
        ("JMSXDeliveryCount", "many", "JMSXDeliveryCount"),
    ],
)
def test_a_header_the_mapping_cannot_read_is_refused(
    header: str, value: str, complaint: str
) -> None:
    with pytest.raises(MessageFormatException, match=complaint):
        message_from_frame({header: value}, b"", Queue("q"), _resolve, 0)


def test_an_unresolvable_reply_to_is_kept_as_a_header() -> None:
    message = message_from_frame({"reply-to": "somewhere"}, b"", Queue("q"), _resolve, 0)
    assert message.get_jms_reply_to() is None
    assert message.get_string_property("JMS_jms_STOMP_reply_2d_to") == "somewhere"


# Property names that are header names of the mapping, or that stand for header names that are
# empty or need escaping.
_TRICKY_PROPERTY_NAMES = st.sampled_from(
    ["type", "priority", "receipt", "JMS_jms_STOMP_", "JMS_jms_STOMP_a_3a_b", "JMS_jms_STOMP_x_d_"]
)


@settings(max_examples=400)
@given(
    messages(),
    st.dictionaries(_TRICKY_PROPERTY_NAMES, java_strings, max_size=2),
    st.sampled_from(list(Version)),
    java_strings,
    java_strings,
    st.none() | st.integers(0, 2**63),
    st.none() | java_strings,
)
def test_message_frames_are_the_general_encoding_of_the_mapping(
    message: Message,
    tricky_properties: dict[str, str],
    version: Version,
    subscription: str,
    message_id: str,
    ack: int | None,
    other_destination: str | None,
) -> None:
    """``MessageFrames`` writes a frame straight from the message; it must give the same bytes
    as ``frame_for_message`` + ``encode_frame`` (or refuse with the same error)."""
    for name, value in tricky_properties.items():
        message.set_string_property(name, value)
    own = [
        ("subscription", subscription),
        ("message-id", "ID:" + message_id),
        ("destination", "/queue/a:b" if other_destination is None else other_destination),
    ]
    if ack is not None:
        own.append(("ack", str(ack)))
    mapped, body = frame_for_message(message, _name_of)
    try:
        expected = encode_frame("MESSAGE", (*own, *mapped), body, version)
    except ValueError as error:
        expected = error
    try:
        frames = MessageFrames(version, subscription, "/queue/a:b", _name_of)
        written = b"".join(frames.frame_parts(message, "ID:" + message_id, ack, other_destination))
    except ValueError as error:
        assert isinstance(expected, ValueError)
        assert str(error) == str(expected)
        return
    assert written == expected


@settings(max_examples=300)
@given(
    messages(),
    st.dictionaries(_TRICKY_PROPERTY_NAMES, java_strings, max_size=2),
    st.sampled_from(list(Version)),
    st.integers(1, 2**31 - 1),
    st.booleans(),
    st.none() | java_strings,
)
def test_a_broker_message_is_written_as_its_delivered_copy(
    message: Message,
    tricky_properties: dict[str, str],
    version: Version,
    delivery_count: int,
    carries_a_count: bool,
    other_destination: str | None,
) -> None:
    """Given the broker's own message and the delivery's count (a read-only consumer's
    delivery), ``MessageFrames`` writes the frame of ``delivered_copy`` — the message a consumer
    that copies gets — byte for byte (or refuses it with the same error), also when the message
    carries a JMSXDeliveryCount of its own, which the delivery's replaces; the message is left
    as it was."""
    for name, value in tricky_properties.items():
        message.set_string_property(name, value)
    if carries_a_count:
        message._properties[DELIVERY_COUNT] = Int(7)
    before = dict(message._properties), message._redelivered
    frames = MessageFrames(version, "s-1", "/queue/a:b", _name_of)
    try:
        expected: bytes | ValueError = b"".join(
            frames.frame_parts(
                delivered_copy(message, delivery_count), "ID:1", 5, other_destination
            )
        )
    except ValueError as error:
        expected = error
    try:
        written = b"".join(
            frames.frame_parts(message, "ID:1", 5, other_destination, delivery_count)
        )
    except ValueError as error:
        assert isinstance(expected, ValueError)
        assert str(error) == str(expected)
    else:
        assert written == expected
    assert (dict(message._properties), message._redelivered) == before


def test_message_frames_refuse_an_empty_header_name_every_time() -> None:
    """The escaped header of each property name is remembered, except an empty one: the next
    message with that property is refused again, not written with an empty header name."""
    frames = MessageFrames(Version.V1_2, "s", "/queue/q", _name_of)
    message = TextMessage("x")
    message.set_string_property("JMS_jms_STOMP_", "stands for an empty header name")
    for _ in range(2):
        with pytest.raises(ValueError, match="empty name"):
            frames.frame_parts(message, "ID:1", 1)
