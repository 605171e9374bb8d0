"""MessageQueue: delivery order, scheduling, expiry, consumer choice, groups and credit."""

from __future__ import annotations

from jms.broker.consumer import Consumer, ConsumerSpec
from jms.broker.message_queue import Entry, EntryState, MessageQueue
from jms.message import Queue, TextMessage
from jms.selector import Selector

QUEUE = Queue("q")


def _entry(
    seq: int,
    priority: int = 4,
    *,
    group: str | None = None,
    expiration: int = 0,
    delivery_time: int = 0,
    color: str | None = None,
) -> Entry:
    message = TextMessage(f"m{seq}")
    message.set_jms_priority(priority)
    message.set_jms_expiration(expiration)
    message.set_jms_delivery_time(delivery_time)
    if group is not None:
        message.set_string_property("JMSXGroupID", group)
    if color is not None:
        message.set_string_property("color", color)
    return Entry(seq, message, stored=False, size=1)


def _consumer(
    queue: MessageQueue, consumer_id: int, prefetch: int = 100, selector: str | None = None
) -> Consumer:
    spec = ConsumerSpec(QUEUE, selector=selector, prefetch=prefetch)
    consumer = Consumer(
        consumer_id, 1, spec, Selector(selector) if selector else None, lambda d: None, queue, None
    )
    queue.attach(consumer)
    return consumer


def _seqs(entries: list[Entry]) -> list[int]:
    return [entry.seq for entry in entries]


def test_higher_priority_first_and_fifo_within_a_priority() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    for seq, priority in [(1, 4), (2, 9), (3, 0), (4, 9), (5, 4)]:
        queue.add(_entry(seq, priority), now=0)
    _consumer(queue, 1)
    assigned, expired = queue.select(now=0)
    assert _seqs(assigned) == [2, 4, 1, 5, 3]
    assert expired == []


def test_returned_entries_come_back_before_fresh_ones_in_sequence_order() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    entries = [_entry(seq) for seq in range(1, 6)]
    for entry in entries:
        queue.add(entry, now=0)
    consumer = _consumer(queue, 1, prefetch=3)
    first = _seqs(queue.select(now=0)[0])
    assert first == [1, 2, 3]
    for entry in (entries[2], entries[0]):  # returned out of order
        queue.put_back(entry, now=0, not_before=0)
        queue.add_credit(consumer, 1)
    assert _seqs(queue.select(now=0)[0]) == [1, 3]


def test_scheduled_entry_waits_for_its_time() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    _consumer(queue, 1)
    assigned, _ = queue.add(_entry(1, delivery_time=100), now=0)
    assert assigned == []
    assert queue.next_deadline() == 100
    assert queue.process_due(now=99) == ([], [])
    assigned, _ = queue.process_due(now=100)
    assert _seqs(assigned) == [1]


def test_expired_entries_are_found_by_deadline_and_by_select() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    queue.add(_entry(1, expiration=50), now=0)
    queue.add(_entry(2, expiration=500), now=0)
    assert queue.next_deadline() == 50
    assigned, expired = queue.process_due(now=60)
    assert (assigned, _seqs(expired)) == ([], [1])
    assert list(queue.entries) == [2]
    _consumer(queue, 1)
    assigned, expired = queue.select(now=600)
    assert (assigned, _seqs(expired)) == ([], [2])
    assert queue.entries == {}


def test_in_flight_entries_do_not_expire_in_the_queue() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    _consumer(queue, 1)
    entry = _entry(1, expiration=50)
    queue.add(entry, now=0)
    assert entry.state == EntryState.IN_FLIGHT
    assert queue.process_due(now=100) == ([], [])
    assert entry.state == EntryState.IN_FLIGHT


def test_consumers_take_turns() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    first, second = _consumer(queue, 1), _consumer(queue, 2)
    owners = [queue.add(_entry(seq), now=0)[0][0].consumer for seq in range(1, 5)]
    assert owners == [first, second, first, second]


def test_a_message_no_consumer_selects_does_not_block_the_ones_behind_it() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    _consumer(queue, 1, selector="color = 'red'")
    queue.add(_entry(1, color="blue"), now=0)
    assigned, _ = queue.add(_entry(2, color="red"), now=0)
    assert _seqs(assigned) == [2]
    assert queue.entries[1].state == EntryState.READY


def test_a_new_consumer_gets_the_skipped_backlog() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    _consumer(queue, 1, selector="color = 'red'")
    queue.add(_entry(1, color="blue"), now=0)
    queue.add(_entry(2, color="blue"), now=0)
    blue = _consumer(queue, 2, selector="color = 'blue'")
    assigned, _ = queue.select(now=0)
    assert _seqs(assigned) == [1, 2]
    assert {entry.consumer for entry in assigned} == {blue}


def test_credit_bounds_what_is_handed_out() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    consumer = _consumer(queue, 1, prefetch=2)
    handed = [queue.add(_entry(seq), now=0)[0] for seq in range(1, 6)]
    assert [_seqs(h) for h in handed] == [[1], [2], [], [], []]
    assert consumer.credit == 0
    queue.add_credit(consumer, 5)  # capped at the prefetch
    assert consumer.credit == 2
    assert _seqs(queue.select(now=0)[0]) == [3, 4]


def test_a_group_sticks_to_its_consumer_until_it_detaches() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    first, second = _consumer(queue, 1), _consumer(queue, 2)
    owners = [queue.add(_entry(seq, group="g"), now=0)[0][0].consumer for seq in range(1, 4)]
    assert owners == [first, first, first]
    assert queue.add(_entry(4), now=0)[0][0].consumer is second
    queue.detach(first)
    assert queue.group_owner("g") is None
    assert queue.add(_entry(5, group="g"), now=0)[0][0].consumer is second
    assert queue.group_owner("g") is second


def test_a_group_waits_for_its_owner_when_the_owner_has_no_credit() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    owner = _consumer(queue, 1, prefetch=1)
    _consumer(queue, 2)
    queue.add(_entry(1, group="g"), now=0)
    assigned, _ = queue.add(_entry(2, group="g"), now=0)
    assert assigned == []
    queue.add_credit(owner, 1)
    assigned, _ = queue.select(now=0)
    assert [(e.seq, e.consumer) for e in assigned] == [(2, owner)]


def test_remove_and_drain() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    _consumer(queue, 1, prefetch=1)
    in_flight = _entry(1)
    queue.add(in_flight, now=0)
    queue.add(_entry(2), now=0)
    queue.add(_entry(3, delivery_time=10), now=0)
    assert _seqs(queue.drain()) == [2, 3]
    assert queue.deleted and list(queue.entries) == [1]
    queue.remove(in_flight)
    assert queue.entries == {} and queue.in_flight == 0


def test_browse_is_in_sequence_order_and_skips_what_is_not_due_or_expired() -> None:
    queue = MessageQueue("queue://q", QUEUE, None)
    queue.add(_entry(1, priority=0), now=0)
    queue.add(_entry(2, priority=9), now=0)
    queue.add(_entry(3, delivery_time=100), now=0)
    queue.add(_entry(4, expiration=5), now=0)
    queue.add(_entry(5, color="red"), now=0)
    assert _seqs(queue.browse(10, 1, None, 100, None)) == [1, 2, 5]
    assert _seqs(queue.browse(10, 2, 4, 100, None)) == [2]
    assert _seqs(queue.browse(10, 1, None, 1, None)) == [1]
    assert _seqs(queue.browse(10, 1, None, 100, Selector("color = 'red'"))) == [5]
