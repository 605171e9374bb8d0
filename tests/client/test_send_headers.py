"""What send stamps on a message, and what a received message looks like (read-only, JMSX)."""

from __future__ import annotations

import pytest

from jms.broker import wall_clock_ms
from jms.client import Connection, Session
from jms.errors import InvalidDestinationException, MessageNotWriteableException
from jms.message import (
    BytesMessage,
    DeliveryMode,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    StreamMessage,
    TextMessage,
    Topic,
)
from jms.types import Int, Long

ORDERS = Queue("orders")


def test_send_stamps_every_header_jms_says_it_sets(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    producer.set_time_to_live(60_000)
    producer.set_delivery_delay(0)
    message = TextMessage("hello")
    before = wall_clock_ms()
    producer.send(message)
    after = wall_clock_ms()
    assert message.get_jms_message_id().startswith("ID:")
    assert before <= message.get_jms_timestamp() <= after
    assert message.get_jms_destination() == ORDERS
    assert message.get_jms_delivery_mode() == DeliveryMode.PERSISTENT
    assert message.get_jms_priority() == 4
    assert message.get_jms_expiration() == message.get_jms_timestamp() + 60_000
    assert message.get_jms_delivery_time() == message.get_jms_timestamp()


def test_message_ids_are_unique(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    ids = set()
    for _ in range(200):
        message = TextMessage("x")
        producer.send(message)
        ids.add(message.get_jms_message_id())
    assert len(ids) == 200


def test_no_time_to_live_means_no_expiration_and_delay_sets_the_delivery_time(
    session: Session,
) -> None:
    producer = session.create_producer(ORDERS)
    producer.set_delivery_delay(5_000)
    message = TextMessage("later")
    producer.send(message)
    assert message.get_jms_expiration() == 0
    assert message.get_jms_delivery_time() == message.get_jms_timestamp() + 5_000


def test_per_send_arguments_override_the_producer_defaults(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    producer.set_priority(1)
    message = TextMessage("x")
    producer.send(message, delivery_mode=DeliveryMode.NON_PERSISTENT, priority=8, time_to_live=10)
    assert (message.get_jms_delivery_mode(), message.get_jms_priority()) == (1, 8)
    assert message.get_jms_expiration() == message.get_jms_timestamp() + 10
    assert producer.get_priority() == 1


def test_disabled_message_id_and_timestamp_hints_are_honoured(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    producer.set_disable_message_id(True)
    producer.set_disable_message_timestamp(True)
    message = TextMessage("x")
    message.set_jms_message_id("ID:stale")
    producer.send(message)
    assert message.get_jms_message_id() is None
    assert message.get_jms_timestamp() == 0
    received = session.create_consumer(ORDERS).receive(1000)
    assert received.get_jms_message_id() is None
    assert received.get_jms_timestamp() == 0


def test_the_sent_message_stays_writable_and_later_changes_do_not_travel(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    message = TextMessage("original")
    message.set_string_property("state", "before")
    producer.send(message)
    message.set_text("changed")
    message.set_string_property("state", "after")
    received = session.create_consumer(ORDERS).receive(1000)
    assert received.get_text() == "original"
    assert received.get_string_property("state") == "before"


def test_received_messages_are_read_only_until_cleared(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    message = TextMessage("body")
    message.set_int_property("n", 1)
    producer.send(message)
    received = session.create_consumer(ORDERS).receive(1000)
    assert isinstance(received, TextMessage)
    with pytest.raises(MessageNotWriteableException):
        received.set_int_property("n", 2)
    with pytest.raises(MessageNotWriteableException):
        received.set_text("other")
    received.set_jms_correlation_id("headers stay writable")
    received.clear_properties()
    received.set_int_property("n", 2)
    received.clear_body()
    received.set_text("other")
    assert (received.get_text(), received.get_int_property("n")) == ("other", 2)


def test_jmsx_delivery_count_is_a_visible_int_property(session: Session) -> None:
    session.create_producer(ORDERS).send(TextMessage("x"))
    received = session.create_consumer(ORDERS).receive(1000)
    assert "JMSXDeliveryCount" in received.get_property_names()
    assert received.get_object_property("JMSXDeliveryCount") == 1
    assert type(received.get_object_property("JMSXDeliveryCount")).__name__ == "Int"
    assert received.property_exists("JMSXDeliveryCount")


def test_every_body_type_arrives_ready_to_read(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    bytes_message = BytesMessage()
    bytes_message.write_int(7)
    stream_message = StreamMessage()
    stream_message.write_string("s")
    map_message = MapMessage()
    map_message.set_long("big", 2**40)
    for message in (Message(), bytes_message, stream_message, map_message, ObjectMessage([1, 2])):
        producer.send(message)
    consumer = session.create_consumer(ORDERS)
    received = [consumer.receive(1000) for _ in range(5)]
    assert type(received[0]) is Message
    assert received[1].read_int() == 7
    assert received[2].read_string() == "s"
    assert received[3].get_long("big") == 2**40
    assert received[4].get_object() == [1, 2]


def test_producer_arguments_are_checked(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    with pytest.raises(ValueError, match="priority must be an int from 0 to 9; got 10"):
        producer.set_priority(10)
    with pytest.raises(ValueError, match="delivery mode"):
        producer.send(TextMessage("x"), delivery_mode=3)
    with pytest.raises(ValueError, match="time to live must be an int of milliseconds"):
        producer.set_time_to_live(-1)
    with pytest.raises(TypeError, match="jms Message"):
        producer.send("not a message")


def test_destination_rules_for_identified_and_anonymous_producers(
    session: Session, connection: Connection
) -> None:
    identified = session.create_producer(ORDERS)
    with pytest.raises(InvalidDestinationException, match="this producer sends to queue://orders"):
        identified.send(Topic("t"), TextMessage("x"))
    anonymous = session.create_producer(None)
    with pytest.raises(InvalidDestinationException, match="created without a destination"):
        anonymous.send(TextMessage("x"))
    anonymous.send(ORDERS, TextMessage("x"))
    assert session.create_consumer(ORDERS).receive(1000).get_text() == "x"


def test_producer_settings_take_java_typed_ints_but_not_booleans(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    producer.set_priority(Int(7))
    producer.set_time_to_live(Long(1000))
    assert (producer.get_priority(), producer.get_time_to_live()) == (7, 1000)
    with pytest.raises(ValueError, match="got True"):
        producer.set_priority(True)
    with pytest.raises(ValueError, match=r"got 2\.0"):
        producer.set_delivery_mode(2.0)
