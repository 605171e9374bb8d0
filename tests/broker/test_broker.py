"""Broker: the core called directly (what the in-process and STOMP front ends rely on)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from jms.broker import (
    DEAD_LETTER_REASON,
    ORIGINAL_DESTINATION,
    Broker,
    ConsumerSpec,
    DestinationPolicy,
    SubscriptionName,
    wall_clock_ms,
)
from jms.broker.destination import SEQUENCE_BLOCK
from jms.errors import (
    IllegalStateException,
    InvalidClientIDException,
    InvalidDestinationException,
    JMSSecurityException,
    ResourceAllocationException,
    TransactionRolledBackException,
)
from jms.message import DeliveryMode, Destination, Queue, TextMessage, Topic
from jms.store import (
    AppendMessage,
    Completion,
    MemoryStore,
    RemoveEntry,
    ReserveSequences,
    SetDeliveryCount,
    StoreOperation,
)
from tests.broker.conftest import Recorder

ORDERS = Queue("orders")
NEWS = Topic("news")


def _message(
    text: str,
    destination: Destination = ORDERS,
    *,
    persistent: bool = True,
    expiration: int = 0,
    delivery_time: int = 0,
) -> TextMessage:
    message = TextMessage(text)
    message.set_jms_destination(destination)
    message.set_jms_delivery_mode(
        DeliveryMode.PERSISTENT if persistent else DeliveryMode.NON_PERSISTENT
    )
    message.set_jms_expiration(expiration)
    message.set_jms_delivery_time(delivery_time)
    return message


class BatchRecorder(MemoryStore):
    """A MemoryStore that remembers every batch submitted to it."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[StoreOperation]] = []

    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        self.batches.append(list(batch))
        return super().submit(batch)


def _wait_for(condition: object, timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)


# -- delivery and requeue ----------------------------------------------------------------------


def test_a_delivery_carries_a_copy_with_the_delivery_count(
    broker: Broker, connection_id: int
) -> None:
    sent = _message("a")
    broker.send(connection_id, sent)
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS), sink)
    (delivery,) = sink.deliveries
    assert delivery.seq == 1
    assert delivery.message is not sent
    assert delivery.message.get_int_property("JMSXDeliveryCount") == delivery.delivery_count == 1
    assert not delivery.message.get_jms_redelivered()


def test_a_read_only_consumer_gets_the_broker_message_and_the_count_beside_it(
    broker: Broker, connection_id: int
) -> None:
    """A consumer that only reads (a STOMP server writing frames) is handed the message the
    broker holds, unchanged, every time; the delivery carries the count the copy would."""
    sent = _message("a")
    broker.send(connection_id, sent)
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS, read_only_messages=True), sink)
    (first,) = sink.take()
    assert first.message is sent
    assert first.delivery_count == 1
    broker.requeue(connection_id, delivered=[first.tag])
    (again,) = sink.take()
    assert again.message is sent
    assert again.delivery_count == 2
    assert sent.get_object_property("JMSXDeliveryCount") is None
    assert not sent.get_jms_redelivered()


def test_requeue_counts_delivered_messages_as_failed_and_undelivered_ones_not(
    broker: Broker, connection_id: int
) -> None:
    for text in ("a", "b"):
        broker.send(connection_id, _message(text))
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS), sink)
    first, second = sink.take()
    broker.requeue(connection_id, delivered=[first.tag], undelivered=[second.tag])
    again = sink.take()
    assert [(d.message.get_text(), d.message.get_jms_redelivered()) for d in again] == [
        ("a", True),
        ("b", False),
    ]
    assert [d.message.get_int_property("JMSXDeliveryCount") for d in again] == [2, 1]


def test_undelivered_messages_give_their_credit_back(broker: Broker, connection_id: int) -> None:
    for text in "abc":
        broker.send(connection_id, _message(text))
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS, prefetch=2), sink)
    assert sink.texts() == ["a", "b"]
    broker.requeue(connection_id, undelivered=[sink.take()[1].tag])
    assert sink.texts() == ["b"]  # the window is full again with b, c waits
    (stats,) = broker.stats()
    assert stats.in_flight == 2


def test_acknowledged_messages_are_gone_and_repeated_acks_are_harmless(
    broker: Broker, connection_id: int, store: MemoryStore
) -> None:
    broker.send(connection_id, _message("a"))
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS), sink)
    tag = sink.tags()[0]
    broker.acknowledge(connection_id, [tag])
    broker.acknowledge(connection_id, [tag])
    assert store.read_entries("queue://orders", 1, None, 10) == []
    (stats,) = broker.stats()
    assert (stats.depth, stats.acknowledged) == (0, 1)


def test_a_connection_cannot_settle_another_connections_deliveries(broker: Broker) -> None:
    owner, other = broker.connect(), broker.connect()
    broker.send(owner, _message("a"))
    sink = Recorder()
    broker.add_consumer(owner, ConsumerSpec(ORDERS), sink)
    broker.acknowledge(other, sink.tags())
    broker.requeue(other, delivered=sink.tags())
    (stats,) = broker.stats()
    assert (stats.depth, stats.in_flight) == (1, 1)


def test_a_failing_sink_does_not_break_the_broker(broker: Broker, connection_id: int) -> None:
    def broken(_delivery: object) -> None:
        raise RuntimeError("sink bug")

    broker.add_consumer(connection_id, ConsumerSpec(ORDERS), broken)
    broker.send(connection_id, _message("a"))
    broker.disconnect(connection_id)
    other = broker.connect()
    sink = Recorder()
    broker.add_consumer(other, ConsumerSpec(ORDERS), sink)
    assert [(d.message.get_text(), d.message.get_jms_redelivered()) for d in sink.deliveries] == [
        ("a", True)
    ]


# -- dead letters, redelivery delay, expiry ----------------------------------------------------


def test_past_max_deliveries_a_message_moves_to_its_dead_letter_queue_in_one_batch() -> None:
    store = BatchRecorder()
    broker = Broker(store, default_policy=DestinationPolicy(max_deliveries=2))
    connection = broker.connect()
    sent = _message("poison", expiration=wall_clock_ms() + 60_000)
    sent.set_string_property("kind", "bad")
    broker.send(connection, sent)
    sink = Recorder()
    broker.add_consumer(connection, ConsumerSpec(ORDERS), sink)
    broker.requeue(connection, delivered=[sink.take()[0].tag])
    broker.requeue(connection, delivered=[sink.take()[0].tag])
    assert sink.deliveries == []
    dead_sink = Recorder()
    broker.add_consumer(connection, ConsumerSpec(Queue("DLQ.orders")), dead_sink)
    (dead,) = dead_sink.deliveries
    assert dead.message.get_text() == "poison"
    assert dead.message.get_string_property("kind") == "bad"
    assert dead.message.get_string_property(ORIGINAL_DESTINATION) == "queue://orders"
    assert "2 times" in dead.message.get_string_property(DEAD_LETTER_REASON)
    assert dead.message.get_jms_destination() == Queue("DLQ.orders")
    assert dead.message.get_jms_expiration() == 0
    move = next(b for b in store.batches if any(isinstance(op, RemoveEntry) for op in b))
    assert [type(op) for op in move] == [RemoveEntry, AppendMessage]
    assert move[1].log == "queue://DLQ.orders"
    dead_letter_queues = {s.name: s.dead_letter_queue for s in broker.stats()}
    assert dead_letter_queues == {"queue://orders": False, "queue://DLQ.orders": True}
    broker.close()


def test_topics_are_known_once_sent_to_or_subscribed_to(broker: Broker, connection_id: int) -> None:
    assert broker.topics() == []
    broker.send(connection_id, _message("x", NEWS))
    broker.add_consumer(connection_id, ConsumerSpec(Topic("sports")), Recorder())
    temporary = broker.create_temporary_topic(connection_id)
    assert broker.topics() == [NEWS, Topic("sports"), temporary]


def test_deliveries_are_recorded_in_the_batch_the_delivery_waits_for() -> None:
    store = BatchRecorder()
    broker = Broker(store)
    connection = broker.connect()
    broker.send(connection, _message("a"))
    broker.send(connection, _message("b", persistent=False))
    sink = Recorder()
    broker.add_consumer(connection, ConsumerSpec(ORDERS), sink)
    # Only the stored message's delivery is recorded: one delivery started, none acknowledged.
    assert store.batches[-1] == [SetDeliveryCount("queue://orders", 1, 1)]
    assert [d.recorded.done() for d in sink.deliveries] == [True, True]
    stored, _ = sink.take()
    broker.requeue(connection, delivered=[stored.tag])  # failed, and delivered again at once
    assert store.batches[-1] == [SetDeliveryCount("queue://orders", 1, 2)]
    assert store.read_entries("queue://orders", 1, None, 1)[0].delivery_count == 2
    broker.requeue(connection, undelivered=sink.tags())  # never seen: the record is undone
    assert store.batches[-1] == [
        SetDeliveryCount("queue://orders", 1, 1),
        SetDeliveryCount("queue://orders", 1, 2),
    ]
    broker.close()


def test_a_dead_letter_queue_does_not_dead_letter_again(connection_id: int, broker: Broker) -> None:
    broker.set_policy("*", DestinationPolicy(max_deliveries=1))
    broker.send(connection_id, _message("x", Queue("DLQ.orders")))
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(Queue("DLQ.orders")), sink)
    for _ in range(3):
        broker.requeue(connection_id, delivered=[sink.take()[0].tag])
    assert sink.deliveries[0].message.get_int_property("JMSXDeliveryCount") == 4
    assert [s.name for s in broker.stats()] == ["queue://DLQ.orders"]


def test_the_consumer_limit_overrides_the_policy(broker: Broker, connection_id: int) -> None:
    broker.send(connection_id, _message("x"))
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS, max_deliveries=1), sink)
    broker.requeue(connection_id, delivered=sink.tags())
    depth = {s.name: s.depth for s in broker.stats()}
    assert depth == {"queue://orders": 0, "queue://DLQ.orders": 1}


def test_redelivery_waits_for_the_policy_delay(broker: Broker, connection_id: int) -> None:
    broker.set_policy("queue://orders", DestinationPolicy(redelivery_delay_ms=150))
    broker.send(connection_id, _message("a"))
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS), sink)
    began = time.monotonic()
    broker.requeue(connection_id, delivered=[sink.take()[0].tag])
    assert sink.deliveries == []
    _wait_for(lambda: sink.deliveries)
    assert time.monotonic() - began >= 0.14
    assert sink.deliveries[0].message.get_jms_redelivered()


def test_expired_messages_move_to_the_expiry_queue_when_configured(
    broker: Broker, connection_id: int
) -> None:
    broker.set_policy("queue://orders", DestinationPolicy(expiry_queue="EXPIRED"))
    broker.send(connection_id, _message("stale", expiration=wall_clock_ms() + 50))
    _wait_for(lambda: {s.name: s.depth for s in broker.stats()}.get("queue://EXPIRED") == 1)
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(Queue("EXPIRED")), sink)
    (moved,) = sink.deliveries
    assert moved.message.get_string_property(ORIGINAL_DESTINATION) == "queue://orders"
    assert moved.message.get_string_property(DEAD_LETTER_REASON).startswith("expired")
    assert moved.message.get_jms_expiration() == 0
    assert {s.name: s.expired for s in broker.stats()}["queue://orders"] == 1


def test_delayed_messages_become_deliverable_on_time(broker: Broker, connection_id: int) -> None:
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS), sink)
    broker.send(connection_id, _message("later", delivery_time=wall_clock_ms() + 100))
    broker.send(connection_id, _message("now"))
    assert sink.texts() == ["now"]
    _wait_for(lambda: len(sink.deliveries) == 2)
    assert sink.texts() == ["now", "later"]


# -- transactions ------------------------------------------------------------------------------


def test_a_commit_is_one_store_batch_and_sends_are_invisible_before_it() -> None:
    store = BatchRecorder()
    broker = Broker(store)
    connection = broker.connect()
    broker.send(connection, _message("in"))
    sink = Recorder()
    broker.add_consumer(connection, ConsumerSpec(ORDERS), sink)
    transaction = broker.begin(connection)
    broker.send(connection, _message("out", Queue("shipped")), transaction)
    broker.acknowledge(connection, sink.tags(), transaction)
    assert {s.name: s.depth for s in broker.stats()} == {"queue://orders": 1, "queue://shipped": 0}
    before = len(store.batches)
    broker.commit(connection, transaction)
    # Besides the reservation of queue://shipped's first sequence numbers, one batch.
    reservation, batch = store.batches[before:]
    assert reservation == [ReserveSequences("queue://shipped", 1 + SEQUENCE_BLOCK)]
    assert [type(op) for op in batch] == [AppendMessage, RemoveEntry]
    assert {s.name: s.depth for s in broker.stats()} == {"queue://orders": 0, "queue://shipped": 1}
    broker.close()


def test_rollback_redelivers_what_the_transaction_acknowledged(
    broker: Broker, connection_id: int
) -> None:
    broker.send(connection_id, _message("a"))
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS), sink)
    transaction = broker.begin(connection_id)
    broker.send(connection_id, _message("discarded", Queue("other")), transaction)
    broker.acknowledge(connection_id, [sink.take()[0].tag], transaction)
    broker.rollback(connection_id, transaction)
    assert [(d.message.get_text(), d.message.get_jms_redelivered()) for d in sink.deliveries] == [
        ("a", True)
    ]
    assert {s.name: s.enqueued for s in broker.stats()}["queue://other"] == 0


def test_a_commit_that_cannot_apply_rolls_back_and_says_why(broker: Broker) -> None:
    owner = broker.connect()
    sender = broker.connect()
    temporary = broker.create_temporary_queue(owner)
    broker.send(sender, _message("a"))
    sink = Recorder()
    broker.add_consumer(sender, ConsumerSpec(ORDERS), sink)
    transaction = broker.begin(sender)
    broker.send(sender, _message("reply", temporary), transaction)
    broker.acknowledge(sender, [sink.take()[0].tag], transaction)
    broker.disconnect(owner)  # deletes the temporary queue
    with pytest.raises(TransactionRolledBackException, match="does not exist"):
        broker.commit(sender, transaction)
    assert [d.message.get_jms_redelivered() for d in sink.deliveries] == [True]


def test_a_transaction_belongs_to_its_connection(broker: Broker) -> None:
    owner, other = broker.connect(), broker.connect()
    transaction = broker.begin(owner)
    with pytest.raises(IllegalStateException, match=f"transaction {transaction} is not open"):
        broker.commit(other, transaction)


# -- connections and client IDs ----------------------------------------------------------------


def test_client_ids_are_unique_and_freed_on_disconnect(broker: Broker) -> None:
    first = broker.connect(client_id="app")
    with pytest.raises(InvalidClientIDException, match="'app' is already in use"):
        broker.connect(client_id="app")
    second = broker.connect()
    with pytest.raises(InvalidClientIDException):
        broker.set_client_id(second, "app")
    broker.disconnect(first)
    broker.set_client_id(second, "app")
    with pytest.raises(IllegalStateException, match="already has client ID"):
        broker.set_client_id(second, "other")
    with pytest.raises(InvalidClientIDException, match="non-empty"):
        broker.connect(client_id="")


def test_the_authenticator_decides_who_connects() -> None:
    broker = Broker(authenticator=lambda user, password: (user, password) == ("ann", "secret"))
    broker.connect("ann", "secret")
    with pytest.raises(JMSSecurityException, match="refused user 'bob'"):
        broker.connect("bob", "secret")
    broker.close()


def test_disconnect_redelivers_held_messages_and_deletes_temporaries(broker: Broker) -> None:
    connection = broker.connect()
    temporary = broker.create_temporary_queue(connection)
    broker.send(connection, _message("a"))
    broker.add_consumer(connection, ConsumerSpec(ORDERS), Recorder())
    broker.disconnect(connection)
    other = broker.connect()
    sink = Recorder()
    broker.add_consumer(other, ConsumerSpec(ORDERS), sink)
    assert sink.deliveries[0].message.get_int_property("JMSXDeliveryCount") == 2
    with pytest.raises(InvalidDestinationException, match="does not exist"):
        broker.send(other, _message("x", temporary))


def test_a_closed_broker_refuses_work_and_tells_its_connections() -> None:
    broker = Broker(name="shut")
    told: list[Exception] = []
    connection = broker.connect(on_close=told.append)
    broker.close()
    assert len(told) == 1 and "broker 'shut' was closed" in str(told[0])
    with pytest.raises(IllegalStateException, match="broker 'shut' is closed"):
        broker.send(connection, _message("a"))
    with pytest.raises(IllegalStateException):
        broker.connect()
    broker.close()


# -- flow control ------------------------------------------------------------------------------


def test_a_slow_consumer_holds_at_most_its_prefetch(broker: Broker, connection_id: int) -> None:
    slow, fast = Recorder(), Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS, prefetch=3), slow)
    for n in range(10):
        broker.send(connection_id, _message(str(n)))
    assert len(slow.deliveries) == 3
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS, prefetch=100), fast)
    assert len(fast.deliveries) == 7


def test_a_full_queue_refuses_sends(broker: Broker, connection_id: int) -> None:
    broker.set_policy("queue://orders", DestinationPolicy(max_backlog=2))
    broker.send(connection_id, _message("1"))
    broker.send(connection_id, _message("2"))
    with pytest.raises(ResourceAllocationException, match="queue://orders holds 2 messages"):
        broker.send(connection_id, _message("3"))


def test_send_many_sends_in_order_in_one_store_batch_delivering_before_the_commit() -> None:
    store = BatchRecorder()
    broker = Broker(store)
    connection = broker.connect()
    sink = Recorder()
    broker.add_consumer(connection, ConsumerSpec(ORDERS), sink)
    batches_before = len(store.batches)
    messages = [_message("a"), _message("b", persistent=False), _message("c")]
    assert broker.send_many(connection, messages) == (3, None)
    # The first send reserves a block of sequence numbers on its own, as a single send does.
    reservation, batch = store.batches[batches_before:]
    assert [type(operation) for operation in reservation] == [ReserveSequences]
    assert [type(operation).__name__ for operation in batch] == [
        "AppendMessage",
        "AppendMessage",
        "SetDeliveryCount",
        "SetDeliveryCount",
    ]
    assert sink.texts() == ["a", "b", "c"]
    # Delivered with their records in the batch that stores them: none waits for another.
    assert all(delivery.recorded.done() for delivery in sink.deliveries)
    broker.close()


def test_send_many_stops_at_the_first_refused_message_and_sends_those_before_it(
    broker: Broker, connection_id: int
) -> None:
    broker.set_policy("queue://orders", DestinationPolicy(max_backlog=2))
    messages = [_message(text) for text in ("1", "2", "3", "4")]
    sent, refusal = broker.send_many(connection_id, messages)
    assert sent == 2
    assert isinstance(refusal, ResourceAllocationException)
    assert "queue://orders holds 2 messages" in str(refusal)
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS), sink)
    assert sink.texts() == ["1", "2"]


def test_send_many_on_a_closed_connection_sends_nothing(broker: Broker) -> None:
    connection = broker.connect()
    broker.disconnect(connection)
    sent, refusal = broker.send_many(connection, [_message("a")])
    assert sent == 0
    assert isinstance(refusal, IllegalStateException)
    assert f"connection {connection} to broker 'test' is closed" in str(refusal)


def test_a_full_subscription_refuses_the_publish_for_every_subscriber(
    broker: Broker, connection_id: int
) -> None:
    broker.set_policy("topic://news", DestinationPolicy(max_backlog=1))
    slow, fast = Recorder(), Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(NEWS, prefetch=1), slow)
    broker.add_consumer(connection_id, ConsumerSpec(NEWS, prefetch=1000), fast)
    broker.send(connection_id, _message("1", NEWS))
    with pytest.raises(ResourceAllocationException, match="subscriber://"):
        broker.send(connection_id, _message("2", NEWS))
    assert (slow.texts(), fast.texts()) == (["1"], ["1"])


# -- subscriptions, browsing, ranges -----------------------------------------------------------


def test_a_topic_message_with_no_subscription_goes_nowhere(
    broker: Broker, connection_id: int
) -> None:
    broker.send(connection_id, _message("lost", NEWS))
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(NEWS), sink)
    assert sink.deliveries == []
    assert broker.last_sequence(NEWS) == 1


def test_browse_pages_by_sequence_and_reads_durable_subscriptions(broker: Broker) -> None:
    connection = broker.connect(client_id="reader")
    spec = ConsumerSpec(NEWS, subscription_name="s", durable=True)
    consumer = broker.add_consumer(connection, spec, Recorder())
    broker.remove_consumer(connection, consumer)
    for n in range(1, 6):
        broker.send(connection, _message(f"n{n}", NEWS))
        broker.send(connection, _message(f"o{n}"))
    page = broker.browse(connection, ORDERS, start_seq=2, limit=2)
    assert [(seq, m.get_text()) for seq, m in page.messages] == [(2, "o2"), (3, "o3")]
    assert page.next_seq == 4
    last = broker.browse(connection, ORDERS, start_seq=4, end_seq=5)
    assert [seq for seq, _ in last.messages] == [4, 5] and last.next_seq is None
    subscription = SubscriptionName("s", "reader")
    assert [m.get_text() for _, m in broker.browse(connection, subscription).messages] == [
        f"n{n}" for n in range(1, 6)
    ]
    assert broker.browse(connection, Queue("never-used")).messages == ()


def test_acknowledge_through_consumes_a_prefix_except_what_is_in_flight(
    broker: Broker, connection_id: int, store: MemoryStore
) -> None:
    for n in range(1, 6):
        broker.send(connection_id, _message(str(n)))
    sink = Recorder()
    consumer = broker.add_consumer(connection_id, ConsumerSpec(ORDERS, prefetch=1), sink)
    broker.remove_consumer(connection_id, consumer)  # message 1 stays in flight, unacknowledged
    assert broker.acknowledge_through(connection_id, ORDERS, 3) == 2
    assert [e.seq for e in store.read_entries("queue://orders", 1, None, 10)] == [1, 4, 5]


def test_sequences_are_per_destination_and_never_reused(broker: Broker, connection_id: int) -> None:
    for text in "ab":
        broker.send(connection_id, _message(text))
    broker.send(connection_id, _message("c", Queue("other")))
    assert (broker.last_sequence(ORDERS), broker.last_sequence(Queue("other"))) == (2, 1)
    sink = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(ORDERS), sink)
    broker.acknowledge(connection_id, sink.tags())
    broker.send(connection_id, _message("d"))
    assert sink.deliveries[-1].seq == 3


# -- recovery from the store -------------------------------------------------------------------


def test_a_new_broker_on_the_same_store_recovers_what_was_stored(store: MemoryStore) -> None:
    first = Broker(store)
    connection = first.connect(client_id="app")
    spec = ConsumerSpec(NEWS, subscription_name="audit", durable=True, selector="keep = TRUE")
    first.remove_consumer(connection, first.add_consumer(connection, spec, Recorder()))
    for n, persistent in [(1, True), (2, False), (3, True), (4, True)]:
        message = _message(f"q{n}", persistent=persistent)
        first.send(connection, message)
        news = _message(f"t{n}", NEWS, persistent=persistent)
        news.set_boolean_property("keep", n != 4)
        first.send(connection, news)
    sink = Recorder()
    first.add_consumer(connection, ConsumerSpec(ORDERS, prefetch=2), sink)
    q1, q2 = sink.take()
    first.acknowledge(connection, [q2.tag])  # the non-persistent one
    first.requeue(connection, delivered=[q1.tag])  # q1 failed once; it is dispatched again

    # A crash: the first broker is abandoned, a second one opens the same store.
    reserved = store.load().last_sequences["queue://orders"]
    assert reserved >= 4
    second = Broker(store)
    again = second.connect(client_id="app-2")
    queue_sink = Recorder()
    second.add_consumer(again, ConsumerSpec(ORDERS), queue_sink)
    assert [
        (d.message.get_text(), d.message.get_jms_redelivered(), d.seq)
        for d in queue_sink.deliveries
    ] == [("q1", True, 1), ("q3", False, 3), ("q4", False, 4)]
    assert queue_sink.deliveries[0].message.get_int_property("JMSXDeliveryCount") == 2
    browse = second.browse(again, SubscriptionName("audit", "app"))
    assert [m.get_text() for _, m in browse.messages] == ["t1", "t3"]
    second.send(again, _message("q5"))
    # Numbering continues above whatever the first broker may have handed out.
    assert queue_sink.deliveries[-1].seq == reserved + 1
    second.close()


def test_concurrent_senders_and_consumers_lose_and_double_nothing(broker: Broker) -> None:
    received: list[str] = []
    lock = threading.Lock()
    consumer_connection = broker.connect()

    def sink(delivery: object) -> None:
        with lock:
            received.append(delivery.message.get_text())  # type: ignore[attr-defined]

    for _ in range(3):
        broker.add_consumer(consumer_connection, ConsumerSpec(ORDERS, prefetch=10_000), sink)

    def produce(worker: int) -> None:
        connection = broker.connect()
        for n in range(500):
            broker.send(connection, _message(f"{worker}-{n}"))

    threads = [threading.Thread(target=produce, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(received) == sorted(f"{w}-{n}" for w in range(4) for n in range(500))
