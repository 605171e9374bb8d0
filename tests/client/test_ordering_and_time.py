"""Priority, expiry and delivery delay, on queues and topics; message groups."""

from __future__ import annotations

import time

import pytest

from jms.broker import Broker, DestinationPolicy
from jms.client import Connection, MessageConsumer, Session
from jms.message import Destination, Message, Queue, TextMessage, Topic

ORDERS = Queue("orders")
NEWS = Topic("news")
DESTINATIONS = [pytest.param(ORDERS, id="queue"), pytest.param(NEWS, id="topic")]


def _texts(consumer: MessageConsumer, timeout_ms: int = 50) -> list[str]:
    texts = []
    while (message := consumer.receive(timeout_ms)) is not None:
        texts.append(message.get_text())  # type: ignore[attr-defined]
    return texts


def _stopped_consumer(connection: Connection, destination: Destination) -> MessageConsumer:
    """A consumer that exists (so a topic subscription exists) while delivery is stopped."""
    connection.stop()
    return connection.create_session().create_consumer(destination)


# -- priority ----------------------------------------------------------------------------------


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_higher_priority_first_fifo_within_a_priority(
    connection: Connection, destination: Destination
) -> None:
    consumer = _stopped_consumer(connection, destination)
    producer = connection.create_session().create_producer(destination)
    for text, priority in [
        ("low-1", 1),
        ("high-1", 9),
        ("normal-1", 4),
        ("high-2", 9),
        ("low-2", 1),
    ]:
        producer.send(TextMessage(text), priority=priority)
    connection.start()
    assert _texts(consumer) == ["high-1", "high-2", "normal-1", "low-1", "low-2"]


def test_priority_applies_to_a_backlog_not_yet_prefetched(url: str) -> None:
    from jms.client import ConnectionFactory

    with ConnectionFactory(url, prefetch=1).create_connection() as connection:
        session = connection.create_session()
        producer = session.create_producer(ORDERS)
        consumer = session.create_consumer(ORDERS)
        producer.send(TextMessage("first"), priority=0)  # prefetched at once
        producer.send(TextMessage("low"), priority=0)
        producer.send(TextMessage("urgent"), priority=9)
        connection.start()
        assert _texts(consumer) == ["first", "urgent", "low"]


# -- expiry ------------------------------------------------------------------------------------


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_an_expired_message_is_never_delivered(
    connection: Connection, destination: Destination, broker: Broker
) -> None:
    consumer = _stopped_consumer(connection, destination)
    producer = connection.create_session().create_producer(destination)
    producer.send(TextMessage("short-lived"), time_to_live=30)
    producer.send(TextMessage("durable"))
    time.sleep(0.08)
    connection.start()
    assert _texts(consumer) == ["durable"]
    assert sum(s.expired for s in broker.stats()) == 1


def test_an_expired_message_is_removed_even_with_no_consumer(
    connection: Connection, broker: Broker
) -> None:
    connection.create_session().create_producer(ORDERS).send(TextMessage("x"), time_to_live=30)
    deadline = time.monotonic() + 2
    while {s.name: s.depth for s in broker.stats()}["queue://orders"]:
        assert time.monotonic() < deadline, "the expired message was not removed"
        time.sleep(0.01)
    assert {s.name: s.expired for s in broker.stats()}["queue://orders"] == 1


def test_expired_messages_can_go_to_an_expiry_queue(connection: Connection, broker: Broker) -> None:
    broker.set_policy("queue://orders", DestinationPolicy(expiry_queue="ExpiryQueue"))
    connection.create_session().create_producer(ORDERS).send(TextMessage("x"), time_to_live=20)
    expired = connection.create_session().create_consumer(Queue("ExpiryQueue")).receive(2000)
    assert expired.get_text() == "x"  # type: ignore[union-attr]
    assert expired.get_string_property("JMS_jms_OriginalDestination") == "queue://orders"


def test_a_prefetched_message_that_expires_is_not_handed_to_the_application(
    connection: Connection, broker: Broker
) -> None:
    session = connection.create_session()
    consumer = session.create_consumer(ORDERS)
    session.create_producer(ORDERS).send(TextMessage("x"), time_to_live=40)
    time.sleep(0.08)  # it sits in the consumer's buffer meanwhile
    assert consumer.receive(50) is None
    assert {s.name: s.expired for s in broker.stats()}["queue://orders"] == 1


# -- delivery delay ----------------------------------------------------------------------------


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_no_delivery_before_the_delivery_time(
    connection: Connection, destination: Destination
) -> None:
    session = connection.create_session()
    consumer = session.create_consumer(destination)
    producer = session.create_producer(destination)
    producer.set_delivery_delay(150)
    message = TextMessage("delayed")
    producer.send(message)
    assert consumer.receive(50) is None
    received = consumer.receive(2000)
    assert received is not None
    assert time.time() * 1000 >= message.get_jms_delivery_time()
    assert received.get_jms_delivery_time() == message.get_jms_delivery_time()


def test_a_browser_does_not_show_a_message_before_its_delivery_time(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    producer.set_delivery_delay(10_000)
    producer.send(TextMessage("later"))
    assert list(session.create_browser(ORDERS)) == []


# -- message groups ----------------------------------------------------------------------------


def _grouped(text: str, group: str, seq: int) -> Message:
    message = TextMessage(text)
    message.set_string_property("JMSXGroupID", group)
    message.set_int_property("JMSXGroupSeq", seq)
    return message


def test_a_group_goes_to_one_consumer_and_keeps_its_sequence(connection: Connection) -> None:
    first = connection.create_session().create_consumer(ORDERS)
    second = connection.create_session().create_consumer(ORDERS)
    producer = connection.create_session().create_producer(ORDERS)
    for n in range(1, 5):
        producer.send(_grouped(f"a{n}", "A", n))
        producer.send(_grouped(f"b{n}", "B", n))
    got = {tuple(_texts(first)), tuple(_texts(second))}
    assert got == {("a1", "a2", "a3", "a4"), ("b1", "b2", "b3", "b4")}


def test_the_group_sequence_property_arrives_unchanged(session: Session) -> None:
    session.create_producer(ORDERS).send(_grouped("x", "G", 7))
    received = session.create_consumer(ORDERS).receive(1000)
    assert (
        received.get_string_property("JMSXGroupID"),
        received.get_object_property("JMSXGroupSeq"),
    ) == (
        "G",
        7,
    )


def test_closing_the_owner_reassigns_the_group(connection: Connection) -> None:
    owner_session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    owner = owner_session.create_consumer(ORDERS)
    producer = connection.create_session().create_producer(ORDERS)
    producer.send(_grouped("g1", "G", 1))
    owner_message = owner.receive(1000)
    other = connection.create_session().create_consumer(ORDERS)
    producer.send(_grouped("g2", "G", 2))
    assert other.receive(50) is None  # the group belongs to the first consumer
    assert owner.receive(1000).get_text() == "g2"
    owner_message.acknowledge()
    owner.close()
    producer.send(_grouped("g3", "G", 3))
    assert other.receive(1000).get_text() == "g3"
