"""``MessageQueue``: the messages one queue or one topic subscription holds, and which consumer
gets which of them next.

Order: higher ``JMSPriority`` first; within a priority, messages coming back from a consumer
(requeued, in sequence order) before fresh ones, and fresh ones in the order they became
deliverable — so a single consumer without a selector sees exact FIFO per priority, recovered
and rolled-back messages included. Messages whose ``JMSDeliveryTime`` (or redelivery delay) is in
the future wait in a heap until then; messages with a ``JMSExpiration`` are also in an expiry heap
so that an expired message is found when it expires, not when someone looks.

Dispatch: consumers take turns (round robin) among those with credit whose selector matches; a
message with a ``JMSXGroupID`` goes to the consumer that owns the group, and the first consumer to
take a group's message owns the group until it detaches. A message no consumer can take now is
skipped, not blocking the ones behind it. ``select`` keeps a *settled* flag: once a pass found no
further match, a newly arriving message is tried alone instead of rescanning the backlog — the
pass is repeated only when credit, consumers or requeued messages change.

Paging: a queue with a large backlog keeps only a window of its stored (PERSISTENT) entries in
memory; the others are *paged out* — only their sequence numbers are kept here (8 bytes each, in
order), and their messages stay in the store until the broker pages them in. Every entry in
memory that the store holds has a lower sequence number than every paged-out one, so paging in
by sequence keeps their order. Entries the store does not hold (NON_PERSISTENT ones, or any on a
temporary queue) are always in memory. ``entries`` is therefore not in sequence order once a
page came in behind them; whoever needs that order sorts.

This is a plain data structure: no locks (the broker's lock guards it), no store, no clock (``now``
is passed in), no calls to consumers' sinks. It returns what it decided and the broker acts.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left, bisect_right
from typing import Final

from jms.broker.consumer import Consumer
from jms.broker.memory import MemoryBudget
from jms.message import Destination, Message
from jms.selector import Selector
from jms.store import Completion

__all__ = ["Entry", "EntryState", "MessageQueue"]


class EntryState:
    """Where an entry is: waiting to be deliverable, deliverable, with a consumer, or gone."""

    SCHEDULED: Final = 0
    READY: Final = 1
    IN_FLIGHT: Final = 2
    GONE: Final = 3


class Entry:
    """One message held by one queue or subscription, with its delivery bookkeeping.

    ``delivery_count`` counts failed deliveries (so the next delivery's ``JMSXDeliveryCount`` is
    one more); ``stored`` says whether the store holds this entry too. ``gate``, when set, is the
    reservation of its sequence number: a store batch that must be durable before anyone may see
    the entry, when no later batch is waited for (each later delivery of a stored entry waits
    for the batch that records it, which comes after).
    ``size`` is what it counts against the broker's memory budget while in memory
    (``jms.broker.memory.message_size``).
    """

    __slots__ = (
        "consumer",
        "delivery_count",
        "delivery_time",
        "expiration",
        "gate",
        "group_id",
        "message",
        "not_before",
        "priority",
        "returned",
        "seq",
        "size",
        "state",
        "stored",
    )

    def __init__(
        self,
        seq: int,
        message: Message,
        *,
        delivery_count: int = 0,
        stored: bool,
        size: int,
        gate: Completion | None = None,
    ) -> None:
        self.seq = seq
        self.message = message
        self.size = size
        # The header slots are read directly: one entry is made per message and queue, and the
        # getters would cost as much as the rest of this constructor.
        self.priority = message._priority
        self.expiration = message._expiration
        self.delivery_time = self.not_before = message._delivery_time
        self.group_id: str | None = message._properties.get("JMSXGroupID")
        self.delivery_count = delivery_count
        self.stored = stored
        self.state = EntryState.SCHEDULED
        self.returned = delivery_count > 0
        self.consumer: Consumer | None = None
        self.gate = gate

    def expired(self, now: int) -> bool:
        return self.expiration != 0 and self.expiration <= now

    def __lt__(self, other: Entry) -> bool:
        # Heap items are (time, seq, entry); equal times and seqs are the same entry pushed twice.
        return self.seq < other.seq

    def __repr__(self) -> str:
        return f"<Entry seq={self.seq} priority={self.priority} state={self.state}>"


_PRIORITIES: Final = 10
# Consumed paged-out sequence numbers are cut off the front of the array in chunks this large.
_COMPACT_AT: Final = 4096


class MessageQueue:
    """The entries and consumers of one queue or subscription (see the module docstring)."""

    def __init__(
        self,
        name: str,
        destination: Destination,
        store_key: str | None,
        budget: MemoryBudget | None = None,
    ) -> None:
        self.name = name
        self.destination = destination
        self.store_key = store_key
        self.entries: dict[int, Entry] = {}  # every entry not yet gone, in sequence order
        # Sums the sizes of the entries in memory of every queue of the broker.
        self._budget = budget if budget is not None else MemoryBudget(None)
        # No entry in memory has a higher number (entries leaving do not lower it): a browse
        # starting above it has nothing in memory to look at.
        self._highest_seq = 0
        self._fresh: list[dict[int, Entry]] = [{} for _ in range(_PRIORITIES)]
        self._returned: list[dict[int, Entry]] = [{} for _ in range(_PRIORITIES)]
        # Highest priority first; within one, returned entries before fresh ones.
        self._lanes = [
            lane
            for priority in reversed(range(_PRIORITIES))
            for lane in (self._returned[priority], self._fresh[priority])
        ]
        self._scheduled: list[tuple[int, int, Entry]] = []
        self._expiring: list[tuple[int, int, Entry]] = []
        self.consumers: list[Consumer] = []
        self._next_consumer = 0
        self._groups: dict[str, Consumer] = {}
        self._credit = 0
        self._settled = True
        self.in_flight = 0
        self.deleted = False
        #: The earliest deadline the broker is already watching for this queue.
        self.watched_deadline: int | None = None
        self.enqueued = 0
        self.acknowledged = 0
        self.purged = 0
        self.expired = 0
        self.dead_lettered = 0
        # Sequence numbers of paged-out entries, ascending, from index _paged_head on.
        self._paged = array("q")
        self._paged_head = 0
        # No paged-out entry has a delivery time after this (None: unknown, as after recovery).
        self._paged_due_by: int | None = 0
        #: Whether a page-in of this queue is on its way (the broker asks for one at a time).
        self.paging_in = False

    def __repr__(self) -> str:
        return f"<MessageQueue {self.name} depth={self.depth} in_flight={self.in_flight}>"

    @property
    def depth(self) -> int:
        """Entries held, in memory or paged out."""
        return len(self.entries) + len(self._paged) - self._paged_head

    @property
    def memory(self) -> int:
        """Bytes the entries in memory are counted for (summed when asked: the broker asks only
        when its memory budget is reached)."""
        return sum(entry.size for entry in self.entries.values())

    @property
    def waiting(self) -> int:
        """Entries in memory that are not in flight (ready or scheduled): what the window bounds."""
        return len(self.entries) - self.in_flight

    # -- entries coming in -------------------------------------------------------------------

    def add(
        self, entry: Entry, now: int, *, arrived: bool = True
    ) -> tuple[list[Entry], list[Entry]]:
        """Take a new (``arrived``) or paged-in unexpired entry; return (assigned, expired) like
        ``select``."""
        self.entries[entry.seq] = entry
        self._budget.used += entry.size
        if entry.seq > self._highest_seq:
            self._highest_seq = entry.seq
        if arrived:
            self.enqueued += 1
        if entry.expiration:
            heapq.heappush(self._expiring, (entry.expiration, entry.seq, entry))
        if entry.not_before > now:
            self._schedule(entry, entry.not_before)
            return [], []
        entry.state = EntryState.READY
        if self._settled and self._credit:
            consumer = self._choose(entry)
            if consumer is not None:
                self._assign(entry, consumer)
                return [entry], []
        if entry.returned:
            self._insert_returned(entry)
        else:
            self._fresh[entry.priority][entry.seq] = entry
        if not self._settled and self._credit:
            return self.select(now)
        return [], []

    def put_back(self, entry: Entry, now: int, not_before: int) -> None:
        """Return an in-flight entry (requeued) to be dispatched again, at ``not_before`` at the
        earliest; the caller runs ``select`` afterwards."""
        self.in_flight -= 1
        entry.consumer = None
        entry.returned = True
        if entry.expiration:
            heapq.heappush(self._expiring, (entry.expiration, entry.seq, entry))
        if not_before > now:
            self._schedule(entry, not_before)
        else:
            entry.state = EntryState.READY
            self._insert_returned(entry)
            self._settled = False

    def _schedule(self, entry: Entry, not_before: int) -> None:
        entry.state = EntryState.SCHEDULED
        entry.not_before = not_before
        heapq.heappush(self._scheduled, (not_before, entry.seq, entry))

    def _insert_returned(self, entry: Entry) -> None:
        lane = self._returned[entry.priority]
        out_of_order = bool(lane) and next(reversed(lane)) > entry.seq
        lane[entry.seq] = entry
        if out_of_order:
            ordered = sorted(lane.items())
            lane.clear()
            lane.update(ordered)

    # -- dispatch ------------------------------------------------------------------------------

    def select(self, now: int) -> tuple[list[Entry], list[Entry]]:
        """Assign ready entries to consumers with credit, in order; return (assigned, expired).

        Expired entries met on the way are removed from the queue and returned for the broker to
        discard or move.
        """
        assigned: list[Entry] = []
        expired: list[Entry] = []
        if not self._credit:
            return assigned, expired
        exhausted = False
        for lane in self._lanes:
            if not lane:
                continue
            taken: list[int] = []
            for seq, entry in lane.items():
                if entry.expiration and entry.expiration <= now:
                    taken.append(seq)
                    expired.append(entry)
                    continue
                consumer = self._choose(entry)
                if consumer is None:
                    continue
                taken.append(seq)
                self._assign(entry, consumer)
                assigned.append(entry)
                if not self._credit:
                    exhausted = True
                    break
            for seq in taken:
                del lane[seq]
            if exhausted:
                break
        for entry in expired:
            self.remove(entry)
        self._settled = not exhausted
        return assigned, expired

    def _choose(self, entry: Entry) -> Consumer | None:
        message = entry.message
        group = entry.group_id
        if group is not None:
            owner = self._groups.get(group)
            if owner is not None:
                return owner if owner.credit and owner.accepts(message) else None
        consumers = self.consumers
        count = len(consumers)
        start = self._next_consumer
        for offset in range(count):
            index = (start + offset) % count
            consumer = consumers[index]
            if not consumer.credit:
                continue
            # consumer.accepts(message), spelled out: this runs once per message dispatched.
            selector = consumer.selector
            if selector is None or selector.matches(message):
                self._next_consumer = (index + 1) % count
                if group is not None:
                    self._groups[group] = consumer
                return consumer
        return None

    def _assign(self, entry: Entry, consumer: Consumer) -> None:
        entry.state = EntryState.IN_FLIGHT
        entry.consumer = consumer
        consumer.credit -= 1
        self._credit -= 1
        self.in_flight += 1

    # -- consumers and credit ------------------------------------------------------------------

    def attach(self, consumer: Consumer) -> None:
        consumer.credit = consumer.spec.prefetch
        self._credit += consumer.credit
        self.consumers.append(consumer)
        self._settled = False

    def detach(self, consumer: Consumer) -> None:
        """Stop dispatching to ``consumer``; the groups it owned go to whoever takes them next."""
        self.consumers.remove(consumer)
        self._credit -= consumer.credit
        consumer.credit = 0
        self._next_consumer = 0
        for group in [g for g, owner in self._groups.items() if owner is consumer]:
            del self._groups[group]
        self._settled = False

    def add_credit(self, consumer: Consumer, count: int) -> None:
        granted = min(consumer.spec.prefetch - consumer.credit, count)
        if granted > 0:
            consumer.credit += granted
            self._credit += granted
            self._settled = False

    def group_owner(self, group_id: str) -> Consumer | None:
        return self._groups.get(group_id)

    # -- entries going out ---------------------------------------------------------------------

    def remove(self, entry: Entry) -> None:
        """Take an in-flight entry out for good (acknowledged, dead-lettered or expired)."""
        if entry.state == EntryState.IN_FLIGHT:
            self.in_flight -= 1
        elif entry.state == EntryState.READY:
            lane = self._returned[entry.priority]
            if lane.pop(entry.seq, None) is None:
                self._fresh[entry.priority].pop(entry.seq, None)
        # A scheduled entry stays in its heap; the GONE state makes that heap item stale.
        entry.state = EntryState.GONE
        entry.consumer = None
        if self.entries.pop(entry.seq, None) is not None:
            self._budget.used -= entry.size

    def drain(self) -> list[Entry]:
        """Delete the queue: remove and return every entry in memory not in flight, and forget
        the paged-out ones. In-flight entries stay until acknowledged; requeueing them into a
        deleted queue discards them."""
        self.deleted = True
        drained = [e for e in self.entries.values() if e.state != EntryState.IN_FLIGHT]
        for entry in drained:
            self.remove(entry)
        self._paged = array("q")
        self._paged_head = 0
        return drained

    # -- time ----------------------------------------------------------------------------------

    def process_due(self, now: int) -> tuple[list[Entry], list[Entry]]:
        """Make due scheduled entries deliverable and expire due ones; return (assigned, expired)."""
        became_ready = False
        while self._scheduled and self._scheduled[0][0] <= now:
            not_before, _, entry = heapq.heappop(self._scheduled)
            if entry.state != EntryState.SCHEDULED or entry.not_before != not_before:
                continue
            entry.state = EntryState.READY
            if entry.returned:
                self._insert_returned(entry)
            else:
                self._fresh[entry.priority][entry.seq] = entry
            became_ready = True
        expired: list[Entry] = []
        while self._expiring and self._expiring[0][0] <= now:
            _, _, entry = heapq.heappop(self._expiring)
            if entry.state in (EntryState.READY, EntryState.SCHEDULED):
                self.remove(entry)
                expired.append(entry)
        if became_ready:
            self._settled = False
            assigned, more_expired = self.select(now)
            return assigned, expired + more_expired
        return [], expired

    def next_deadline(self) -> int | None:
        """When ``process_due`` next has something to do, or None."""
        while self._scheduled and self._stale(self._scheduled[0]):
            heapq.heappop(self._scheduled)
        while self._expiring and self._expiring[0][2].state not in (
            EntryState.READY,
            EntryState.SCHEDULED,
        ):
            heapq.heappop(self._expiring)
        deadlines = [heap[0][0] for heap in (self._scheduled, self._expiring) if heap]
        return min(deadlines) if deadlines else None

    @staticmethod
    def _stale(item: tuple[int, int, Entry]) -> bool:
        not_before, _, entry = item
        return entry.state != EntryState.SCHEDULED or entry.not_before != not_before

    # -- paging --------------------------------------------------------------------------------

    @property
    def paged(self) -> int:
        """How many entries are paged out."""
        return len(self._paged) - self._paged_head

    def page_out(self, seq: int, delivery_time: int | None) -> None:
        """Count a new stored entry that stays in the store only (above every entry in memory);
        ``delivery_time`` is its message's JMSDeliveryTime (None: not known)."""
        self.page_out_run(seq, 1, delivery_time)

    def page_out_run(self, first_seq: int, count: int, due_by: int | None) -> None:
        """``page_out`` of ``count`` entries numbered from ``first_seq`` on, whose messages'
        latest JMSDeliveryTime is ``due_by`` (None: not known)."""
        if self.paged and self._paged[-1] >= first_seq:
            raise ValueError(
                f"{self.name}: paged-out sequence {first_seq} is not above the last one, "
                f"{self._paged[-1]}"
            )
        known = self._paged_due_by if self.paged else 0
        self._paged_due_by = None if known is None or due_by is None else max(known, due_by)
        self._paged.extend(range(first_seq, first_seq + count))
        self.enqueued += count

    def paged_between(self, start_seq: int, end_seq: int) -> int:
        """How many paged-out entries are numbered ``start_seq`` to ``end_seq``."""
        head = self._paged_head
        begin = bisect_left(self._paged, start_seq, head)
        return bisect_right(self._paged, end_seq, begin) - begin

    def paged_all_due_at(self, now: int) -> bool:
        """Whether every paged-out entry is known to be due at ``now`` (a range reader then
        need not look in the store for one that is not)."""
        due_by = self._paged_due_by if self.paged else 0
        return due_by is not None and due_by <= now

    def paged_front(self, count: int) -> tuple[int, int, int]:
        """``(first_seq, last_seq, n)`` of the first ``count`` paged-out entries (n <= count)."""
        head = self._paged_head
        n = min(count, self.paged)
        return self._paged[head], self._paged[head + n - 1], n

    def first_paged(self) -> int | None:
        return self._paged[self._paged_head] if self.paged else None

    def take_paged(self, seq: int) -> tuple[bool, int]:
        """Paging in ``seq``: take it off the front of the paged-out entries. Returns whether it
        was there, and how many paged-out entries below it were skipped (not in the store)."""
        skipped = self.skip_paged_below(seq)
        found = bool(self.paged) and self._paged[self._paged_head] == seq
        if found:
            self._paged_head += 1
            self._compact()
        return found, skipped

    def skip_paged_below(self, seq: int) -> int:
        """Forget the paged-out entries below ``seq`` that a page did not bring; return how many."""
        head = self._paged_head
        end = bisect_left(self._paged, seq, head)
        self._paged_head = end
        self._compact()
        return end - head

    def drop_paged_between(self, start_seq: int, end_seq: int) -> tuple[int, int, int]:
        """Forget the paged-out entries numbered ``start_seq`` to ``end_seq`` (consumed in the
        store by a range); return ``(first_seq, last_seq, count)`` of those dropped (count 0:
        none)."""
        head = self._paged_head
        begin = bisect_left(self._paged, start_seq, head)
        end = bisect_right(self._paged, end_seq, begin)
        if end == begin:
            return 0, 0, 0
        first, last = self._paged[begin], self._paged[end - 1]
        if begin == head:
            self._paged_head = end
            self._compact()
        else:
            del self._paged[begin:end]
        return first, last, end - begin

    def drop_paged(self, seq: int) -> bool:
        """Forget the paged-out entry ``seq`` (consumed in the store on its own); return whether
        it was there."""
        index = bisect_left(self._paged, seq, self._paged_head)
        if index == len(self._paged) or self._paged[index] != seq:
            return False
        if index == self._paged_head:
            self._paged_head += 1
            self._compact()
        else:
            del self._paged[index]
        return True

    def is_paged(self, seq: int) -> bool:
        """Whether ``seq`` is one of the paged-out entries."""
        index = bisect_left(self._paged, seq, self._paged_head)
        return index < len(self._paged) and self._paged[index] == seq

    def _compact(self) -> None:
        if self._paged_head >= _COMPACT_AT and self._paged_head * 2 >= len(self._paged):
            del self._paged[: self._paged_head]
            self._paged_head = 0

    # -- reading -------------------------------------------------------------------------------

    def browse(
        self,
        now: int,
        start_seq: int,
        end_seq: int | None,
        limit: int,
        selector: Selector | None,
    ) -> list[Entry]:
        """Entries in memory, present and due, not expired, matching ``selector``, in sequence
        order (paged-out ones are the broker's to read from the store)."""
        if start_seq > self._highest_seq:
            return []
        upper = end_seq if end_seq is not None else float("inf")
        found: list[Entry] = []
        for seq in sorted(s for s in self.entries if start_seq <= s <= upper):
            entry = self.entries[seq]
            if entry.expired(now) or entry.delivery_time > now:
                continue
            if selector is not None and not selector.matches(entry.message):
                continue
            found.append(entry)
            if len(found) >= limit:
                break
        return found

    def entries_between(self, start_seq: int, end_seq: int) -> list[Entry]:
        """Entries in memory numbered ``start_seq`` to ``end_seq`` that are not in flight."""
        return [
            entry
            for entry in self.entries.values()
            if start_seq <= entry.seq <= end_seq and entry.state != EntryState.IN_FLIGHT
        ]
