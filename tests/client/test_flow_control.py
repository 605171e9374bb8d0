"""Flow control: bounded prefetch, slow consumers, bounded backlogs, receive and listeners."""

from __future__ import annotations

import threading
import time

import pytest

from jms.broker import Broker, DestinationPolicy
from jms.client import Connection, ConnectionFactory
from jms.errors import ResourceAllocationException
from jms.message import Message, Queue, TextMessage, Topic

ORDERS = Queue("orders")
NEWS = Topic("news")


def _in_flight(broker: Broker, name: str) -> int:
    return {s.name: s.in_flight for s in broker.stats()}[name]


def test_a_consumer_never_holds_more_than_its_prefetch(url: str, broker: Broker) -> None:
    with ConnectionFactory(url, prefetch=5).create_connection() as connection:
        session = connection.create_session()
        session.create_consumer(ORDERS)  # never receives
        producer = session.create_producer(ORDERS)
        for n in range(100):
            producer.send(TextMessage(str(n)))
        assert _in_flight(broker, "queue://orders") == 5
        assert {s.name: s.depth for s in broker.stats()}["queue://orders"] == 100


def test_a_slow_consumer_does_not_hold_back_a_fast_one(url: str, broker: Broker) -> None:
    with ConnectionFactory(url, prefetch=2).create_connection() as connection:
        connection.start()
        slow = connection.create_session().create_consumer(ORDERS)
        fast = connection.create_session().create_consumer(ORDERS)
        producer = connection.create_session().create_producer(ORDERS)
        for n in range(50):
            producer.send(TextMessage(str(n)))
        received = 0
        while fast.receive(100) is not None:
            received += 1
        assert received == 48  # all but the two the slow consumer holds
        assert slow.receive(100) is not None


def test_credit_returns_as_the_application_takes_messages(url: str, broker: Broker) -> None:
    with ConnectionFactory(url, prefetch=4).create_connection() as connection:
        connection.start()
        session = connection.create_session()
        consumer = session.create_consumer(ORDERS)
        producer = session.create_producer(ORDERS)
        for n in range(20):
            producer.send(TextMessage(str(n)))
        texts = [consumer.receive(1000).get_text() for _ in range(20)]  # type: ignore[union-attr]
        assert texts == [str(n) for n in range(20)]
        assert _in_flight(broker, "queue://orders") == 0


def test_a_bounded_queue_refuses_a_producer_instead_of_growing(
    connection: Connection, broker: Broker
) -> None:
    broker.set_policy("queue://orders", DestinationPolicy(max_backlog=10))
    producer = connection.create_session().create_producer(ORDERS)
    for n in range(10):
        producer.send(TextMessage(str(n)))
    with pytest.raises(ResourceAllocationException, match="max_backlog is 10"):
        producer.send(TextMessage("one too many"))
    connection.create_session().create_consumer(ORDERS).receive(1000)
    producer.send(TextMessage("room again"))


def test_a_slow_topic_subscriber_makes_publishing_fail_rather_than_grow_without_bound(
    url: str, broker: Broker
) -> None:
    broker.set_policy("topic://news", DestinationPolicy(max_backlog=20))
    with ConnectionFactory(url, prefetch=5).create_connection() as connection:
        connection.start()
        session = connection.create_session()
        session.create_consumer(NEWS)  # a subscriber that never reads
        fast = connection.create_session().create_consumer(NEWS)
        producer = session.create_producer(NEWS)
        sent = 0
        with pytest.raises(ResourceAllocationException, match="subscriber://"):
            while sent < 1000:
                producer.send(TextMessage(str(sent)))
                sent += 1
                assert fast.receive(1000) is not None
        assert sent == 20
        assert max(s.depth for s in broker.stats()) == 20


def test_listeners_and_timed_receives_both_work_under_load(connection: Connection) -> None:
    listened: list[str] = []
    done = threading.Event()

    def listener(message: Message) -> None:
        listened.append(message.get_text())  # type: ignore[attr-defined]
        if len(listened) == 300:
            done.set()

    connection.create_session().create_consumer(Queue("events")).set_message_listener(listener)
    receiver = connection.create_session().create_consumer(ORDERS)
    producer = connection.create_session().create_producer(None)
    for n in range(300):
        producer.send(Queue("events"), TextMessage(str(n)))
        producer.send(ORDERS, TextMessage(str(n)))
    received = [receiver.receive(1000).get_text() for _ in range(300)]  # type: ignore[union-attr]
    assert done.wait(5)
    assert listened == received == [str(n) for n in range(300)]
    began = time.monotonic()
    assert receiver.receive(80) is None
    assert 0.07 <= time.monotonic() - began < 1


def test_many_threads_exactly_once(url: str) -> None:
    factory = ConnectionFactory(url, prefetch=10)
    results: list[str] = []
    lock = threading.Lock()
    with factory.create_connection() as connection:
        connection.start()

        def consume() -> None:
            consumer = connection.create_session().create_consumer(ORDERS)
            while (message := consumer.receive(300)) is not None:
                with lock:
                    results.append(message.get_text())  # type: ignore[attr-defined]

        def produce(worker: int) -> None:
            producer = connection.create_session().create_producer(ORDERS)
            for n in range(250):
                producer.send(TextMessage(f"{worker}-{n}"))

        threads = [threading.Thread(target=consume) for _ in range(3)]
        threads += [threading.Thread(target=produce, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
            assert not thread.is_alive()
    assert sorted(results) == sorted(f"{w}-{n}" for w in range(4) for n in range(250))
