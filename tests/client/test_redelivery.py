"""Redelivery limits, back-off and dead-letter queues, through the client API."""

from __future__ import annotations

import time

import pytest

from jms.broker import DEAD_LETTER_REASON, ORIGINAL_DESTINATION, Broker, DestinationPolicy
from jms.client import Connection, ConnectionFactory, Session
from jms.message import Message, Queue, TextMessage, Topic

ORDERS = Queue("orders")
NEWS = Topic("news")


def _fail_until_gone(session: Session, consumer_destination: Queue) -> list[int]:
    """Receive and roll back until nothing comes; return the delivery counts seen."""
    consumer = session.create_consumer(consumer_destination)
    counts = []
    while (message := consumer.receive(100)) is not None:
        counts.append(message.get_int_property("JMSXDeliveryCount"))
        session.rollback()
    consumer.close()
    return counts


def _dead_letter(connection: Connection, queue_name: str) -> Message:
    message = connection.create_session().create_consumer(Queue(queue_name)).receive(1000)
    assert message is not None, f"nothing in {queue_name}"
    return message


def test_a_message_is_delivered_ten_times_then_dead_lettered(connection: Connection) -> None:
    sent = TextMessage("poison")
    sent.set_string_property("customer", "c-42")
    connection.create_session().create_producer(ORDERS).send(sent)
    counts = _fail_until_gone(connection.create_session(True), ORDERS)
    assert counts == list(range(1, 11))
    dead = _dead_letter(connection, "DLQ.orders")
    assert dead.get_text() == "poison"  # type: ignore[attr-defined]
    assert dead.get_string_property("customer") == "c-42"
    assert dead.get_jms_message_id() == sent.get_jms_message_id()
    assert dead.get_string_property(ORIGINAL_DESTINATION) == "queue://orders"
    reason = dead.get_string_property(DEAD_LETTER_REASON)
    assert reason == "delivered 10 times without being acknowledged (max_deliveries 10)"


def test_the_factory_option_sets_the_limit(url: str) -> None:
    with ConnectionFactory(url, max_deliveries=2).create_connection() as connection:
        connection.start()
        connection.create_session().create_producer(ORDERS).send(TextMessage("x"))
        assert _fail_until_gone(connection.create_session(True), ORDERS) == [1, 2]
        _dead_letter(connection, "DLQ.orders")


def test_a_destination_policy_sets_the_limit(connection: Connection, broker: Broker) -> None:
    broker.set_policy("queue://orders", DestinationPolicy(max_deliveries=3))
    connection.create_session().create_producer(ORDERS).send(TextMessage("x"))
    assert _fail_until_gone(connection.create_session(True), ORDERS) == [1, 2, 3]


def test_one_shared_dead_letter_queue_when_configured(
    connection: Connection, broker: Broker
) -> None:
    broker.set_policy("*", DestinationPolicy(max_deliveries=1, dead_letter_queue="DEAD"))
    session = connection.create_session()
    for name in ("a", "b"):
        session.create_producer(Queue(name)).send(TextMessage(name))
        _fail_until_gone(connection.create_session(True), Queue(name))
    consumer = session.create_consumer(Queue("DEAD"))
    origins = {consumer.receive(1000).get_string_property(ORIGINAL_DESTINATION) for _ in "ab"}
    assert origins == {"queue://a", "queue://b"}


def test_recover_and_session_close_count_toward_the_limit(
    connection: Connection, broker: Broker
) -> None:
    broker.set_policy("queue://orders", DestinationPolicy(max_deliveries=2))
    connection.create_session().create_producer(ORDERS).send(TextMessage("x"))
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    consumer = session.create_consumer(ORDERS)
    assert consumer.receive(1000).get_int_property("JMSXDeliveryCount") == 1
    session.recover()
    assert consumer.receive(1000).get_int_property("JMSXDeliveryCount") == 2
    session.close()
    assert _dead_letter(connection, "DLQ.orders").get_text() == "x"  # type: ignore[attr-defined]


def test_a_durable_subscriptions_dead_letters_name_the_topic(factory: ConnectionFactory) -> None:
    connection = factory.create_connection()
    connection.set_client_id("reader")
    connection.start()
    session = connection.create_session(True)
    consumer = session.create_durable_consumer(NEWS, "feed")
    connection.create_session().create_producer(NEWS).send(TextMessage("bad news"))
    for _ in range(10):
        assert consumer.receive(1000) is not None
        session.rollback()
    assert consumer.receive(100) is None
    dead = _dead_letter(connection, "DLQ.news")
    assert dead.get_string_property(ORIGINAL_DESTINATION) == "topic://news"
    connection.close()


def test_redelivery_backs_off(connection: Connection, broker: Broker) -> None:
    broker.set_policy(
        "queue://orders",
        DestinationPolicy(redelivery_delay_ms=60, redelivery_backoff=2.0, max_deliveries=None),
    )
    connection.create_session().create_producer(ORDERS).send(TextMessage("x"))
    session = connection.create_session(True)
    consumer = session.create_consumer(ORDERS)
    consumer.receive(1000)
    gaps = []
    for _ in range(2):
        began = time.monotonic()
        session.rollback()
        assert consumer.receive(2000) is not None
        gaps.append(time.monotonic() - began)
    # Deadlines are whole milliseconds of the wall clock: allow one for rounding.
    assert gaps[0] >= 0.059
    assert gaps[1] >= 0.119


@pytest.mark.parametrize("mode", [Session.AUTO_ACKNOWLEDGE, Session.DUPS_OK_ACKNOWLEDGE])
def test_a_listener_failing_forever_ends_in_the_dead_letter_queue(
    connection: Connection, broker: Broker, mode: int
) -> None:
    broker.set_policy("queue://orders", DestinationPolicy(max_deliveries=3))
    session = connection.create_session(False, mode)

    def listener(message: Message) -> None:
        raise ValueError("cannot process")

    session.create_consumer(ORDERS).set_message_listener(listener)
    connection.create_session().create_producer(ORDERS).send(TextMessage("x"))
    assert _dead_letter(connection, "DLQ.orders").get_text() == "x"  # type: ignore[attr-defined]
