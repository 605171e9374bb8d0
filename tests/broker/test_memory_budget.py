"""The broker's memory budget (``max_memory``): what it counts, the slow-consumer rule for
non-durable subscriptions, producers held back and let go, stored messages paged rather than
dropped. The same rules against a real ``jms broker`` process: tests/stomp/test_bounded.py."""

from __future__ import annotations

import threading

import pytest

from jms.broker import Broker, ConsumerSpec, DestinationPolicy
from jms.broker.memory import (
    ENTRY_OVERHEAD,
    MIN_MAX_MEMORY,
    check_max_memory,
    message_size,
    parse_memory_size,
)
from jms.errors import JMSException, ResourceAllocationException
from jms.message import (
    BytesMessage,
    DeliveryMode,
    Destination,
    MapMessage,
    Message,
    Queue,
    TextMessage,
    Topic,
)
from jms.store import MemoryStore
from tests.broker.conftest import Recorder

BUDGET = MIN_MAX_MEMORY
BODY = "x" * 1024


def _message(destination: Destination, *, persistent: bool = False, text: str = BODY) -> Message:
    message = TextMessage(text)
    message.set_jms_destination(destination)
    message.set_jms_delivery_mode(
        DeliveryMode.PERSISTENT if persistent else DeliveryMode.NON_PERSISTENT
    )
    return message


def _broker(**options: object) -> Broker:
    return Broker(MemoryStore(), max_memory=BUDGET, **options)  # type: ignore[arg-type]


def test_an_entry_counts_its_overhead_body_and_properties() -> None:
    text = _message(Queue("q"), text="abc")
    assert message_size(text) == message_size(_message(Queue("q"), text="")) + 3
    assert ENTRY_OVERHEAD < message_size(text) < ENTRY_OVERHEAD + 100
    data = BytesMessage()
    data.write_bytes(b"\0" * 5000)
    assert message_size(data) == ENTRY_OVERHEAD + 5000
    labelled = MapMessage()
    labelled.set_string("k", "v" * 300)
    labelled.set_string_property("p", "v")
    assert message_size(labelled) >= message_size(MapMessage()) + 300 + 100


@pytest.mark.parametrize(
    ("text", "size"),
    [("1048576", 1 << 20), ("64MiB", 64 << 20), ("2048 kib", 2 << 20), ("1GiB", 1 << 30)],
)
def test_sizes_are_bytes_with_an_optional_binary_unit(text: str, size: int) -> None:
    assert parse_memory_size(text, "--max-memory") == size


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("64MB", "'64MB' is not a size; write bytes as a whole number"),
        ("lots", "'lots' is not a size"),
        ("1.5GiB", "'1.5GiB' is not a size"),
        ("1KiB", "--max-memory: the memory budget must be a whole number of bytes of at least"),
    ],
)
def test_a_size_that_is_not_one_says_how_to_write_it(text: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        parse_memory_size(text, "--max-memory")


@pytest.mark.parametrize("value", [0, 1000, True, 2.5e9, "64MiB"])
def test_a_broker_refuses_a_budget_that_is_not_enough_bytes(value: object) -> None:
    with pytest.raises(ValueError, match=r"max_memory: the memory budget must be .* got"):
        check_max_memory(value, "max_memory")


def test_a_stuck_non_durable_subscriber_is_closed_and_its_memory_freed() -> None:
    broker = _broker()
    try:
        told: list[JMSException] = []
        stuck = broker.connect(on_close=told.append)
        # Prefetch 1 and no credit back: a consumer that stopped taking messages.
        broker.add_consumer(stuck, ConsumerSpec(Topic("t"), prefetch=1), Recorder())
        healthy = Recorder()
        reader = broker.connect()
        consumer = broker.add_consumer(reader, ConsumerSpec(Topic("t")), healthy)
        producer = broker.connect()
        sent = 0
        while not told:
            broker.send(producer, _message(Topic("t")))
            sent += 1
            broker.acknowledge(reader, [d.tag for d in healthy.deliveries[-1:]])
            broker.credit(reader, consumer, 1)
            assert sent < 2000, "the stuck subscriber was never closed"
        assert isinstance(told[0], ResourceAllocationException)
        assert "slow consumer: subscriber://" in told[0].reason
        stats = broker.memory_stats()
        assert stats.slow_consumers_closed == 1 and not stats.producers_blocked
        assert stats.used < BUDGET // 8
        with pytest.raises(JMSException, match="is closed"):
            broker.credit(stuck, 1, 1)
        broker.send(producer, _message(Topic("t"), text="after"))
        assert healthy.deliveries[-1].message.get_text() == "after"  # type: ignore[attr-defined]
        assert len(healthy.deliveries) == sent + 1
    finally:
        broker.close()


def test_producers_are_held_back_at_the_budget_and_let_go_below_it() -> None:
    broker = _broker()
    try:
        producer = broker.connect()
        sent = 0
        while not broker.producers_blocked:
            broker.send(producer, _message(Queue("q")))
            sent += 1
            assert sent < 2000, "the budget never held producers back"
        assert broker.memory_stats().used > BUDGET
        released = threading.Event()
        assert broker.when_memory_available(released.set) is False
        # Nothing is refused or dropped while held back; a consumer takes every message.
        broker.send(producer, _message(Queue("q"), text="last"))
        recorder = Recorder()
        reader = broker.connect()
        consumer = broker.add_consumer(reader, ConsumerSpec(Queue("q"), prefetch=100), recorder)
        received = 0
        while received < sent + 1:
            deliveries = recorder.take()
            assert deliveries, f"only {received} of {sent + 1} messages came"
            received += len(deliveries)
            broker.acknowledge(reader, [d.tag for d in deliveries])
            broker.credit(reader, consumer, len(deliveries))
            if broker.memory_stats().used <= BUDGET * 0.875:
                assert released.is_set() and not broker.producers_blocked
        stats = broker.memory_stats()
        assert released.is_set() and stats.producer_blocks == 1 and stats.used == 0
        assert broker.when_memory_available(released.set) is True
    finally:
        broker.close()


def test_stored_messages_page_out_at_the_budget_and_none_is_lost() -> None:
    # A window far above what the budget holds: the budget, not the window, pages them out.
    broker = _broker(default_policy=DestinationPolicy(memory_window=100_000))
    try:
        producer = broker.connect()
        count = 3000
        for number in range(count):
            broker.send(producer, _message(Queue("q"), persistent=True, text=f"{number:04}" * 256))
        stats = broker.memory_stats()
        assert stats.paged_for_memory > 0 and not stats.producers_blocked
        assert stats.used < BUDGET + 1000 * message_size(_message(Queue("q")))
        [queue] = broker.stats()
        assert queue.depth == count and queue.paged == stats.paged_for_memory
        recorder = Recorder()
        reader = broker.connect()
        consumer = broker.add_consumer(reader, ConsumerSpec(Queue("q"), prefetch=500), recorder)
        texts: list[str] = []
        for _ in range(100):
            deliveries = recorder.take()
            if not deliveries and len(texts) == count:
                break
            for delivery in deliveries:
                delivery.recorded.wait()
            texts += [d.message.get_text()[:4] for d in deliveries]  # type: ignore[attr-defined]
            broker.acknowledge(reader, [d.tag for d in deliveries])
            broker.credit(reader, consumer, len(deliveries))
            if not deliveries:
                threading.Event().wait(0.05)  # the pager reads the next page
        assert texts == [f"{number:04}" for number in range(count)]
    finally:
        broker.close()


def test_a_durable_subscriber_is_never_closed_as_a_slow_consumer() -> None:
    broker = _broker()
    try:
        told: list[JMSException] = []
        stuck = broker.connect(client_id="keeper", on_close=told.append)
        spec = ConsumerSpec(Topic("t"), subscription_name="s", durable=True, prefetch=1)
        broker.add_consumer(stuck, spec, Recorder())
        producer = broker.connect()
        for _ in range(1500):
            broker.send(producer, _message(Topic("t")))
        assert not told and broker.producers_blocked
        assert broker.memory_stats().slow_consumers_closed == 0
    finally:
        broker.close()
