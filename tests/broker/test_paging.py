"""Paging beyond the memory window, delivery records and sequence reservations, on both stores."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from jms.broker import (
    ORIGINAL_DESTINATION,
    Broker,
    ConsumerSpec,
    Delivery,
    DestinationPolicy,
    StagedRange,
    SubscriptionName,
    wall_clock_ms,
)
from jms.client import MessageConsumer, Session
from jms.client.connection import Connection
from jms.client.inprocess import InProcessTransport
from jms.client.options import ClientOptions
from jms.errors import JMSException
from jms.message import DeliveryMode, Destination, Queue, TextMessage, Topic
from jms.message.codec import encode
from jms.store import (
    AppendMessage,
    Completion,
    EncodedEntry,
    MemoryStore,
    MessageStore,
    RemoveEntry,
    StoreOperation,
)
from jms.store.sqlite import SQLiteStore

ORDERS = Queue("orders")
NEWS = Topic("news")


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MessageStore]:
    opened: MessageStore = MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path)
    yield opened
    opened.close()


def _broker(store: MessageStore, window: int, **policy: object) -> Broker:
    return Broker(store, default_policy=DestinationPolicy(memory_window=window, **policy))  # type: ignore[arg-type]


def _message(
    text: str, destination: Destination = ORDERS, *, persistent: bool = True, expiration: int = 0
) -> TextMessage:
    message = TextMessage(text)
    message.set_jms_destination(destination)
    message.set_jms_delivery_mode(
        DeliveryMode.PERSISTENT if persistent else DeliveryMode.NON_PERSISTENT
    )
    message.set_jms_expiration(expiration)
    return message


def _consume(
    broker: Broker, connection: int, spec: ConsumerSpec, count: int, timeout: float = 10.0
) -> list[Delivery]:
    """Receive ``count`` deliveries like a client would: wait for each one's record, acknowledge
    it and give its credit back."""
    pending: list[Delivery] = []
    arrived = threading.Condition()

    def sink(delivery: Delivery) -> None:
        with arrived:
            pending.append(delivery)
            arrived.notify()

    consumer = broker.add_consumer(connection, spec, sink)
    received: list[Delivery] = []
    deadline = time.monotonic() + timeout
    while len(received) < count:
        with arrived:
            assert arrived.wait_for(lambda: pending, deadline - time.monotonic()), (
                f"only {len(received)} of {count} deliveries arrived"
            )
            batch = pending[:]
            pending.clear()
        for delivery in batch:
            delivery.recorded.wait()
        received.extend(batch)
        broker.acknowledge(connection, [d.tag for d in batch])
        broker.credit(connection, consumer, len(batch))
    broker.remove_consumer(connection, consumer)
    return received


def _texts(deliveries: Sequence[Delivery]) -> list[str]:
    return [d.message.get_text() for d in deliveries]  # type: ignore[attr-defined]


def _stats(broker: Broker, name: str = "queue://orders") -> tuple[int, int]:
    (stats,) = [s for s in broker.stats() if s.name == name]
    return stats.depth, stats.paged


def test_a_backlog_beyond_the_window_waits_in_the_store_and_comes_back_in_order(
    store: MessageStore,
) -> None:
    broker = _broker(store, 10)
    connection = broker.connect()
    for n in range(100):
        broker.send(connection, _message(f"m{n}"))
    assert _stats(broker) == (100, 90)
    received = _consume(broker, connection, ConsumerSpec(ORDERS, prefetch=7), 100)
    assert _texts(received) == [f"m{n}" for n in range(100)]
    assert [d.seq for d in received] == sorted(d.seq for d in received)
    assert _stats(broker) == (0, 0)
    (stats,) = broker.stats()
    assert (stats.enqueued, stats.acknowledged) == (100, 100)
    assert store.read_sequences("queue://orders", 1, 10) == []
    broker.close()


def test_non_persistent_messages_stay_in_memory_and_may_pass_paged_ones(
    store: MessageStore,
) -> None:
    broker = _broker(store, 4)
    connection = broker.connect()
    for n in range(10):
        broker.send(connection, _message(f"p{n}"))
    broker.send(connection, _message("n0", persistent=False))
    broker.send(connection, _message("p10"))
    assert _stats(broker) == (12, 7)
    texts = _texts(_consume(broker, connection, ConsumerSpec(ORDERS, prefetch=2), 12))
    assert [t for t in texts if t.startswith("p")] == [f"p{n}" for n in range(11)]
    assert texts.index("n0") < texts.index("p4")  # the non-persistent one was in memory
    broker.close()


def test_browse_reads_paged_out_messages_from_the_store(store: MessageStore) -> None:
    broker = _broker(store, 5)
    connection = broker.connect()
    for n in range(1, 21):
        message = _message(f"m{n}", persistent=n != 3)
        message.set_boolean_property("even", n % 2 == 0)
        broker.send(connection, message)
    seen: list[int] = []
    start = 1
    while True:
        page = broker.browse(connection, ORDERS, start_seq=start, limit=7)
        seen.extend(seq for seq, _ in page.messages)
        if page.next_seq is None:
            break
        start = page.next_seq
    assert seen == list(range(1, 21))
    evens = broker.browse(connection, ORDERS, "even = TRUE", start_seq=4, end_seq=17, limit=5)
    assert [m.get_text() for _, m in evens.messages] == ["m4", "m6", "m8", "m10", "m12"]
    assert evens.next_seq == 13
    assert _stats(broker)[0] == 20  # nothing consumed
    broker.close()


def test_acknowledge_through_consumes_paged_out_entries_in_one_range(
    store: MessageStore,
) -> None:
    broker = _broker(store, 5)
    connection = broker.connect()
    for n in range(1, 21):
        broker.send(connection, _message(f"m{n}"))
    holder = broker.add_consumer(connection, ConsumerSpec(ORDERS, prefetch=1), lambda d: None)
    broker.remove_consumer(connection, holder)  # m1 stays in flight, unacknowledged
    assert broker.acknowledge_through(connection, ORDERS, 15) == 14
    assert store.read_sequences("queue://orders", 1, 100) == [1, 16, 17, 18, 19, 20]
    assert _stats(broker)[0] == 6  # m1 in memory, m16..m20 paged out or on their way in
    broker.disconnect(connection)  # m1 goes back, as a failed delivery
    again = broker.connect()
    received = _consume(broker, again, ConsumerSpec(ORDERS), 6)
    assert _texts(received) == ["m1", "m16", "m17", "m18", "m19", "m20"]
    assert received[0].message.get_jms_redelivered()
    broker.close()


def test_acknowledge_through_from_a_start_leaves_what_is_numbered_below_it(
    store: MessageStore,
) -> None:
    """A range reader that started at a number consumes nothing below it, in memory or paged
    out, with or without a selector (the stream that starts at ``latest`` never read them)."""
    broker = _broker(store, 5)
    connection = broker.connect()
    for n in range(1, 21):
        message = _message(f"m{n}")
        message.set_boolean_property("even", n % 2 == 0)
        broker.send(connection, message)
    assert broker.acknowledge_through(connection, ORDERS, 8, None, 3) == 6  # m3..m8
    assert broker.acknowledge_through(connection, ORDERS, 14, None, 12) == 3  # paged: m12..m14
    assert broker.acknowledge_through(connection, ORDERS, 18, "even = TRUE", 16) == 2  # m16, m18
    assert broker.acknowledge_through(connection, ORDERS, 18, None, 19) == 0
    kept = [1, 2, 9, 10, 11, 15, 17, 19, 20]
    assert store.read_sequences("queue://orders", 1, 100) == kept
    received = _consume(broker, broker.connect(), ConsumerSpec(ORDERS), len(kept))
    assert _texts(received) == [f"m{n}" for n in kept]
    broker.close()


def test_acknowledge_through_with_a_selector_consumes_only_matching_paged_out_entries(
    store: MessageStore,
) -> None:
    broker = _broker(store, 5)
    connection = broker.connect()
    for n in range(1, 21):
        message = _message(f"m{n}")
        message.set_boolean_property("even", n % 2 == 0)
        broker.send(connection, message)
    assert broker.acknowledge_through(connection, ORDERS, 15, "even = TRUE") == 7
    assert broker.acknowledge_through(connection, ORDERS, 15, "even = TRUE") == 0
    odd = [f"m{n}" for n in range(1, 16, 2)]
    assert _stats(broker)[0] == 13
    received = _consume(broker, broker.connect(), ConsumerSpec(ORDERS), 13)
    assert _texts(received) == odd + [f"m{n}" for n in range(16, 21)]
    broker.close()


def test_the_first_message_not_yet_due_is_found_in_memory_and_paged_out(
    store: MessageStore,
) -> None:
    broker = _broker(store, 3)
    connection = broker.connect()
    for n in range(1, 11):
        message = _message(f"m{n}")
        message.set_int_property("n", n)
        if n in (2, 8, 9):
            message.set_jms_delivery_time(int(time.time() * 1000) + 60_000)
        broker.send(connection, message)
    assert broker.first_not_due(connection, ORDERS) == 2
    assert broker.first_not_due(connection, ORDERS, None, 3) == 8  # paged out
    assert broker.first_not_due(connection, ORDERS, "n > 8", 3) == 9
    assert broker.first_not_due(connection, ORDERS, None, 3, 7) is None
    assert broker.first_not_due(connection, ORDERS, None, 10) is None
    broker.close()


def test_the_store_is_searched_for_a_message_not_yet_due_only_when_one_may_be_paged_out(
    tmp_path: Path,
) -> None:
    # A queue knows the latest delivery time among the entries it paged out; after a restart it
    # does not (the store is searched until those entries are gone).
    store = SQLiteStore(tmp_path)
    searches: list[int] = []
    search = store.read_not_due_entries

    def counted(*arguments: object) -> list[EncodedEntry]:
        searches.append(1)
        return search(*arguments)  # type: ignore[arg-type]

    store.read_not_due_entries = counted  # type: ignore[method-assign]
    broker = _broker(store, 3)
    connection = broker.connect()
    for n in range(1, 11):
        broker.send(connection, _message(f"m{n}"))
    assert broker.first_not_due(connection, ORDERS) is None
    assert searches == []
    later = _message("later")
    later.set_jms_delivery_time(int(time.time() * 1000) + 60_000)
    broker.send(connection, later)
    assert broker.first_not_due(connection, ORDERS) == 11
    assert searches
    broker.close()

    restarted = _broker(SQLiteStore(tmp_path), 3)
    assert restarted.first_not_due(restarted.connect(), ORDERS) == 11
    restarted.close()


def test_a_consumed_range_leaves_the_messages_in_flight_inside_it_stored(tmp_path: Path) -> None:
    # acknowledge_through writes a consumed range as a few store ranges around the entries in
    # flight: after a crash those come back (redelivered), and nothing consumed does.
    broker = _broker(SQLiteStore(tmp_path), 4)
    connection = broker.connect()
    for n in range(1, 13):
        message = _message(f"m{n}")
        message.set_int_property("n", n)
        broker.send(connection, message)
    held: list[Delivery] = []
    broker.add_consumer(connection, ConsumerSpec(ORDERS, selector="n BETWEEN 3 AND 4"), held.append)
    deadline = time.monotonic() + 10
    while len(held) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(d.message.get_int_property("n") for d in held) == [3, 4]
    assert broker.acknowledge_through(broker.connect(), ORDERS, 11) == 9
    broker._store.close()  # a crash: the deliveries of 3 and 4 are never acknowledged

    restarted = _broker(SQLiteStore(tmp_path), 4)
    received = _consume(restarted, restarted.connect(), ConsumerSpec(ORDERS), 3)
    assert _texts(received) == ["m3", "m4", "m12"]
    assert [d.message.get_jms_redelivered() for d in received] == [True, True, False]
    restarted.close()


def test_a_restarted_broker_loads_only_its_window_and_keeps_delivery_counts() -> None:
    store = MemoryStore()
    first = _broker(store, 10)
    connection = first.connect()
    for n in range(50):
        first.send(connection, _message(f"m{n}"))
    first.add_consumer(connection, ConsumerSpec(ORDERS, prefetch=3), lambda d: None)
    # A crash: the three deliveries were recorded, never acknowledged.

    second = _broker(store, 10)
    assert _stats(second) == (50, 40)
    again = second.connect()
    received = _consume(second, again, ConsumerSpec(ORDERS, prefetch=4), 50)
    assert _texts(received) == [f"m{n}" for n in range(50)]
    assert [
        (d.message.get_jms_redelivered(), d.message.get_int_property("JMSXDeliveryCount"))
        for d in received[:4]
    ] == [(True, 2), (True, 2), (True, 2), (False, 1)]
    second.close()


class _BatchRecorder(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[StoreOperation]] = []

    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        if batch:
            self.batches.append(list(batch))
        return super().submit(batch)


def test_a_paged_out_message_that_expired_moves_in_one_batch_when_paged_in() -> None:
    store = _BatchRecorder()
    broker = _broker(store, 2, expiry_queue="EXPIRED")
    connection = broker.connect()
    for n in range(2):
        broker.send(connection, _message(f"keep{n}"))
    broker.send(connection, _message("stale", expiration=wall_clock_ms() + 30))
    broker.send(connection, _message("keep2"))
    assert _stats(broker) == (4, 2)
    time.sleep(0.06)
    received = _consume(broker, connection, ConsumerSpec(ORDERS, prefetch=1), 3)
    assert _texts(received) == ["keep0", "keep1", "keep2"]
    (moved,) = _consume(broker, connection, ConsumerSpec(Queue("EXPIRED")), 1)
    assert moved.message.get_string_property(ORIGINAL_DESTINATION) == "queue://orders"
    (move,) = [b for b in store.batches if RemoveEntry("queue://orders", 3) in b]
    assert any(isinstance(op, AppendMessage) and op.log == "queue://EXPIRED" for op in move)
    broker.close()


def test_durable_subscriptions_page_too(store: MessageStore) -> None:
    broker = _broker(store, 5)
    connection = broker.connect(client_id="app")
    for name in ("a", "b"):
        spec = ConsumerSpec(NEWS, subscription_name=name, durable=True)
        broker.remove_consumer(connection, broker.add_consumer(connection, spec, lambda d: None))
    for n in range(30):
        broker.send(connection, _message(f"n{n}", NEWS))
    assert {s.name: (s.depth, s.paged) for s in broker.stats()} == {
        "durable://app/a": (30, 25),
        "durable://app/b": (30, 25),
    }
    page = broker.browse(connection, SubscriptionName("b", "app"), start_seq=1, limit=100)
    assert len(page.messages) == 30
    for name in ("a", "b"):
        spec = ConsumerSpec(NEWS, subscription_name=name, durable=True, prefetch=3)
        assert _texts(_consume(broker, connection, spec, 30)) == [f"n{n}" for n in range(30)]
    broker.close()


def test_without_a_window_everything_stays_in_memory(store: MessageStore) -> None:
    broker = Broker(store, default_policy=DestinationPolicy(memory_window=None))
    connection = broker.connect()
    for n in range(30):
        broker.send(connection, _message(f"m{n}"))
    assert _stats(broker) == (30, 0)
    broker.close()


@pytest.mark.parametrize("window", [0, 1, 2.5, "10"])
def test_a_window_is_an_int_of_at_least_two(window: object) -> None:
    with pytest.raises(ValueError, match="memory_window must be an int of at least 2"):
        DestinationPolicy(memory_window=window)  # type: ignore[arg-type]


# -- sequence numbers and delivery records --------------------------------------------------------


def test_sequences_stay_monotonic_across_restarts_without_persistent_messages() -> None:
    store = MemoryStore()
    first = Broker(store)
    connection = first.connect()
    sink: list[Delivery] = []
    first.add_consumer(connection, ConsumerSpec(ORDERS), sink.append)
    for n in range(3):
        first.send(connection, _message(f"n{n}", persistent=False))
    last_before = sink[-1].seq
    # A crash: non-persistent messages are gone, their numbers must not come back.
    second = Broker(store)
    again = second.connect()
    after: list[Delivery] = []
    second.add_consumer(again, ConsumerSpec(ORDERS), after.append)
    second.send(again, _message("n3", persistent=False))
    assert after[0].seq > last_before
    assert second.last_sequence(ORDERS) == after[0].seq
    second.close()


class _Held(Completion):
    def __init__(self) -> None:
        self.event = threading.Event()

    def wait(self) -> None:
        assert self.event.wait(10), "a held batch was never released"

    def done(self) -> bool:
        return self.event.is_set()


class _HeldStore(MemoryStore):
    """A MemoryStore whose batches, while ``holding``, become durable only at ``release``."""

    def __init__(self) -> None:
        super().__init__()
        self.holding = False
        self.held: list[_Held] = []

    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        completion = super().submit(batch)
        if not self.holding:
            return completion
        held = _Held()
        self.held.append(held)
        return held

    def release(self) -> None:
        self.holding = False
        for held in self.held:
            held.event.set()


def test_a_message_whose_number_is_not_durably_reserved_waits_for_the_reservation() -> None:
    store = _HeldStore()
    broker = Broker(store)
    connection = broker.connect()
    sink: list[Delivery] = []
    broker.add_consumer(connection, ConsumerSpec(ORDERS), sink.append)
    store.holding = True
    broker.send(connection, _message("first", persistent=False))  # reserves a block: held
    (delivery,) = sink
    assert not delivery.recorded.done()
    store.release()
    assert delivery.recorded.done()
    store.holding = True
    broker.send(connection, _message("second", persistent=False))  # inside the durable block
    assert sink[-1].recorded.done()
    broker.close()


def _held_store_consumer() -> tuple[_HeldStore, Broker, Connection, MessageConsumer, int]:
    """A broker on a ``_HeldStore``, a started in-process client with a CLIENT_ACKNOWLEDGE
    consumer of ORDERS (receiving waits for no acknowledgement) that got a first message, and
    a broker connection to send with."""
    store = _HeldStore()
    broker = Broker(store)
    connection = Connection(
        lambda on_lost, _: InProcessTransport(broker, None, None, None, on_lost), ClientOptions()
    )
    connection.start()
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    consumer = session.create_consumer(ORDERS)
    sender = broker.connect()
    broker.send(sender, _message("first"))  # reserves the queue's first block of numbers
    assert consumer.receive(1000) is not None
    return store, broker, connection, consumer, sender


def _receive_in_thread(consumer: MessageConsumer) -> tuple[threading.Thread, list[object]]:
    received: list[object] = []
    receiving = threading.Thread(target=lambda: received.append(consumer.receive(5000)))
    receiving.start()
    return receiving, received


def test_the_client_hands_over_a_message_only_once_its_delivery_is_recorded() -> None:
    store, broker, connection, consumer, sender = _held_store_consumer()
    store.holding = True
    # A transaction's commit appends its message and records its delivery in one batch, not
    # durable yet: a crash now could lose the record while the message stays.
    transaction = broker.begin(sender)
    broker.send(sender, _message("a"), transaction)
    committing = threading.Thread(target=broker.commit, args=(sender, transaction))
    committing.start()
    receiving, received = _receive_in_thread(consumer)
    receiving.join(0.3)
    assert receiving.is_alive() and received == []  # delivered by the broker, not handed over
    store.release()
    receiving.join(5)
    committing.join(5)
    assert [m.get_text() for m in received] == ["a"]  # type: ignore[attr-defined]
    connection.close()
    broker.close()


def test_a_plain_sends_message_is_handed_over_before_its_batch_is_durable() -> None:
    store, broker, connection, consumer, sender = _held_store_consumer()
    store.holding = True
    # The send's batch appends the message and records its delivery: both are durable
    # together or not at all, so the consumer need not wait (a crash would take the message
    # too, and its sender never heard it was stored).
    sending = threading.Thread(target=broker.send, args=(sender, _message("a")))
    sending.start()
    receiving, received = _receive_in_thread(consumer)
    receiving.join(5)
    assert [m.get_text() for m in received] == ["a"]  # type: ignore[attr-defined]
    assert sending.is_alive()  # the PERSISTENT send still waits for its batch
    store.release()
    sending.join(5)
    connection.close()
    broker.close()


def test_priority_orders_the_window_and_a_paged_out_message_waits_its_turn() -> None:
    broker = _broker(MemoryStore(), 3)
    connection = broker.connect()
    for n in range(4):
        broker.send(connection, _message(f"low{n}"))
    urgent = _message("urgent")
    urgent.set_jms_priority(9)
    broker.send(connection, urgent)  # beyond the window: paged out behind low3
    received = _consume(broker, connection, ConsumerSpec(ORDERS, prefetch=1), 5)
    assert _texts(received) == ["low0", "low1", "low2", "low3", "urgent"]
    broker.close()


def test_non_persistent_sends_and_credit_never_wait_for_the_store() -> None:
    store = _HeldStore()
    broker = Broker(store)
    connection = broker.connect()
    broker.send(connection, _message("stored"))
    sink: list[Delivery] = []
    consumer = broker.add_consumer(connection, ConsumerSpec(ORDERS, prefetch=1), sink.append)
    broker.send(connection, _message("stored too"))
    store.holding = True  # from here on nothing becomes durable until release()
    finished = threading.Event()

    def calls() -> None:
        broker.send(connection, _message("fast", Queue("elsewhere"), persistent=False))
        broker.credit(connection, consumer, 1)  # dispatches "stored too": its record is held
        finished.set()

    threading.Thread(target=calls, daemon=True).start()
    assert finished.wait(5), "a non-persistent send or a credit waited for the store"
    assert _texts(sink) == ["stored", "stored too"]
    assert not sink[-1].recorded.done()
    store.release()
    broker.close()


def test_a_staged_batch_published_beyond_the_window_comes_back_whole_in_order_after_a_restart(
    tmp_path: Path,
) -> None:
    staging = Queue("staging.p0")
    texts = [f"m{n}" for n in range(40)]
    encoded = []
    for text in texts:
        message = _message(text)
        message.set_string_property("text", text)
        encoded.append(encode(message))
    first = _broker(SQLiteStore(tmp_path), 4)
    connection = first.connect()
    first.send(connection, _message("before"))
    for start in range(0, 40, 15):  # three staging requests, moved to the queue paged out
        first.stage_encoded(connection, staging, encoded[start : start + 15])
    assert first.publish_staged(connection, [StagedRange(staging, 1, 40)]) == 40
    assert _stats(first)[0] == 41  # the pager may be bringing the first page in meanwhile
    first.close()

    second = _broker(SQLiteStore(tmp_path), 4)
    assert _stats(second) == (41, 37)
    assert _stats(second, "queue://staging.p0") == (0, 0)
    again = second.connect()
    received = _consume(second, again, ConsumerSpec(ORDERS, prefetch=3), 41)
    assert _texts(received) == ["before", *texts]
    assert [d.message.get_string_property("text") for d in received[1:]] == texts
    ids = [d.message.get_jms_message_id() for d in received[1:]]  # stamped when staged
    assert len(set(ids)) == 40 and all(i is not None and i.startswith("ID:") for i in ids)
    second.close()


def test_ranges_named_out_of_order_are_moved_in_that_order_without_reading_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requests that follow each other make one run in the broker, however the writer reports
    their ranges (out of order when two were in flight and the second answered first, or apart
    from a failed attempt's leftovers before them): each range is moved as the part of the run
    it names, nothing read back from the store."""
    staging = Queue("staging.p0")
    broker = _broker(SQLiteStore(tmp_path), 4)
    connection = broker.connect()
    texts = [f"m{n}" for n in range(30)]
    leftover, first, second = (
        broker.stage_encoded(connection, staging, [encode(_message(t)) for t in part])
        for part in (texts[:5], texts[5:20], texts[20:])
    )
    assert (leftover.last_seq, first.first_seq, second.last_seq) == (5, 6, 30)

    def refuse(*arguments: object) -> None:
        raise AssertionError("the publish read staged messages back from the store")

    monkeypatch.setattr(broker._store, "read_encoded_entries", refuse)
    assert broker.publish_staged(connection, [second, first]) == 25
    assert _stats(broker, "queue://staging.p0") == (0, 0)  # the leftovers consumed too
    received = _consume(broker, connection, ConsumerSpec(ORDERS, prefetch=3), 25)
    assert _texts(received) == [*texts[20:], *texts[5:20]]
    broker.close()


def test_staged_ranges_staged_before_a_restart_are_published_after_it(tmp_path: Path) -> None:
    """A broker that did not stage them reads the staged messages back to publish them: the
    runs it remembers are gone with the process that staged them."""
    staging = Queue("staging.p0")
    first = _broker(SQLiteStore(tmp_path), 4)
    connection = first.connect()
    texts = [f"m{n}" for n in range(30)]
    # m25 is NON_PERSISTENT: sent again, not moved, between the runs moved around it.
    ranges = [
        first.stage_encoded(connection, staging, [encode(_message(t)) for t in texts[:20]]),
        first.stage_encoded(
            connection,
            staging,
            [encode(_message(t, persistent=t != "m25")) for t in texts[20:]],
        ),
    ]
    first.close()
    second = _broker(SQLiteStore(tmp_path), 4)
    again = second.connect()
    assert second.publish_staged(again, ranges) == 30
    assert _stats(second, "queue://staging.p0") == (0, 0)
    received = _consume(second, again, ConsumerSpec(ORDERS, prefetch=3), 30)
    # PERSISTENT ones in order; the NON_PERSISTENT one, in memory, may pass the paged-out ones.
    assert sorted(_texts(received)) == sorted(texts)
    assert [t for t in _texts(received) if t != "m25"] == [t for t in texts if t != "m25"]
    second.close()


def test_a_staged_message_that_expires_after_a_restart_fails_the_publish_saying_so(
    tmp_path: Path,
) -> None:
    """A restarted broker pages a staging queue's first messages in, where one that expires is
    gone: the publish refuses the range whole and says why."""
    clock = [1_000_000]
    policy = DestinationPolicy(memory_window=4)
    staging = Queue("staging.p0")
    first = Broker(SQLiteStore(tmp_path), default_policy=policy, clock=lambda: clock[0])
    connection = first.connect()
    perishable = _message("perishable", expiration=clock[0] + 100)
    staged = first.stage_encoded(connection, staging, [encode(perishable), encode(_message("x"))])
    first.close()
    clock[0] += 200
    second = Broker(SQLiteStore(tmp_path), default_policy=policy, clock=lambda: clock[0])
    again = second.connect()
    with pytest.raises(JMSException, match=r"holds 1 of the 2 .*\(1 of its messages expired"):
        second.publish_staged(again, [staged])
    assert second.last_sequence(ORDERS) == 0
    second.close()
