"""The broker's storage interface: what must outlive a broker, written as atomic batches of a few
small operations, and read back by sequence number.

Model. A *log* is a destination's sequence space: every message sent to ``queue://orders`` or
``topic://news`` gets the next integer of that log (starting at 1, never reused), so a
``(log, seq)`` pair names one message for good. A *store queue* holds *entries*, each a reference
to one logged message plus the number of failed deliveries it has had: a JMS queue is a store
queue over its own log; a durable subscription is a store queue over its topic's log (one message,
many references — the store keeps the message while any entry refers to it). An entry is keyed by
``(queue, seq)``; a queue's entries in ``seq`` order are its arrival order. A subscription's or
queue's position is the set of entries it still holds, so a range reader's cursor commit is a batch
of ``RemoveEntry``/``RemoveRange`` for the entries it has processed. Messages the store never
sees (NON_PERSISTENT ones) use sequence numbers too; ``ReserveSequences`` records ahead of time
how far a log's numbers may have been handed out, so that numbering stays monotonic across a
crash. An entry's delivery count is the number of deliveries the broker started and that were not
acknowledged: the broker records a delivery before the consumer may see the message.

Writes. The broker describes each change as a batch of operations (a send, an acknowledgement, a
whole transaction, a dead-letter move) and calls ``submit`` once per batch; a store applies a
batch entirely or not at all, and applies batches in submission order. ``submit`` only queues the
batch (it is called under the broker's lock and must not wait for a disk); the returned
``Completion`` is waited on outside the lock, which is how many concurrent senders can share one
fsync. Only what must survive reaches the store: PERSISTENT messages on queues and durable
subscriptions, acknowledgements of those, delivery counts, destinations, durable subscriptions and
sequence reservations. ``MoveEntries`` hands a range of one store queue's entries to another
under new numbers without rewriting their messages: an entry's own ``seq`` orders it in its store
queue, and it names its message by ``(log, message seq)``, which a moved entry keeps. Because batches complete in order, an empty batch is a barrier: once its
completion returns, every batch submitted before it is readable (a store makes that cheap).

Reads. ``load`` returns what a restarting broker needs first (destinations, subscriptions, the last
sequence of every log, the store queues holding entries); ``read_sequences`` lists the sequence
numbers a queue holds (cheap: no message is decoded), and ``read_entries`` pages a queue's entries
by sequence range, for recovery, for paging a backlog in, and for range readers (the Spark source);
``read_encoded_entries`` pages them as ``jms.message.codec`` bytes, which a store that keeps that
encoding returns as it holds them (a range read ships them on without decoding).

A store never decides delivery order, never evaluates selectors, and knows nothing of consumers,
sessions or time: those are the broker's.
"""

from __future__ import annotations

import contextlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from jms.message import Message
from jms.message.codec import encode, header_times

__all__ = [
    "DONE",
    "AddDestination",
    "AppendEncodedRun",
    "AppendMessage",
    "Completion",
    "DeleteSubscription",
    "DurableSubscriptionRecord",
    "EncodedEntry",
    "MessageStore",
    "MoveEntries",
    "RemoveEntry",
    "RemoveRange",
    "ReserveSequences",
    "SaveSubscription",
    "SetDeliveryCount",
    "StoreContents",
    "StoreOperation",
    "StoredEntry",
]


@dataclass(frozen=True, slots=True)
class DurableSubscriptionRecord:
    """A durable subscription as the store remembers it; ``key`` names its store queue."""

    key: str
    client_id: str | None
    name: str
    topic: str
    selector: str | None
    no_local: bool
    shared: bool


@dataclass(frozen=True, slots=True)
class AddDestination:
    """Remember that a (non-temporary) queue or topic exists, by its text form ``queue://orders``."""

    destination: str


@dataclass(frozen=True, slots=True)
class SaveSubscription:
    """Create a durable subscription with an empty store queue (replacing none: delete first)."""

    subscription: DurableSubscriptionRecord


@dataclass(frozen=True, slots=True)
class DeleteSubscription:
    """Forget a durable subscription and every entry of its store queue."""

    key: str


@dataclass(frozen=True, slots=True)
class AppendMessage:
    """Log ``message`` as ``(log, seq)`` and add an entry for it to each of ``queues``.

    The store may keep ``message`` itself: the broker never changes it after submitting.
    ``encoded``, when given, is ``jms.message.codec.encode(message)`` already made: a store that
    keeps encodings keeps it instead of encoding again.
    """

    log: str
    seq: int
    message: Message
    queues: tuple[str, ...]
    encoded: bytes | None = None

    def encoding(self) -> bytes:
        """The message's ``jms.message.codec`` encoding: ``encoded``, or made now."""
        return self.encoded if self.encoded is not None else encode(self.message)


@dataclass(frozen=True, slots=True)
class AppendEncodedRun:
    """Log the messages ``encodings`` holds (``jms.message.codec`` bytes, which the broker
    checked without decoding them) as ``(log, first_seq)``, ``(log, first_seq + 1)``, … and add
    an entry for each to each of ``queues``: an ``AppendMessage`` of each, as one operation (a
    staging request, ``jms.broker.staging``), so that a store writes a run of thousands without
    a step per message. A store that keeps messages decodes them."""

    log: str
    first_seq: int
    encodings: Sequence[bytes]
    queues: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.encodings:
            raise ValueError(f"a run appended to {self.log} at {self.first_seq} holds no message")

    @property
    def last_seq(self) -> int:
        return self.first_seq + len(self.encodings) - 1


@dataclass(frozen=True, slots=True)
class RemoveEntry:
    """Drop the entry ``seq`` from ``queue`` (acknowledged, expired or moved to another queue)."""

    queue: str
    seq: int


@dataclass(frozen=True, slots=True)
class RemoveRange:
    """Drop every entry of ``queue`` with ``start_seq <= seq <= end_seq`` (a cursor commit)."""

    queue: str
    start_seq: int
    end_seq: int


@dataclass(frozen=True, slots=True)
class MoveEntries:
    """Move the entries of the store queue ``source`` numbered ``first_seq`` to ``last_seq`` --
    every number of that range must be one, none consumed -- to the store queue ``target``,
    renumbered in order from ``target_seq`` on, which must be above every number of the log
    ``target`` (a queue's own log): those numbers of that log are then used, as by an append.
    Their messages stay as they are, where they are (not a byte rewritten), and their delivery
    counts go with them. How a batch of staged messages is published (``jms.broker.staging``)."""

    source: str
    first_seq: int
    last_seq: int
    target: str
    target_seq: int


@dataclass(frozen=True, slots=True)
class SetDeliveryCount:
    """Record that the entry ``seq`` of ``queue`` has had ``count`` unacknowledged deliveries."""

    queue: str
    seq: int
    count: int


@dataclass(frozen=True, slots=True)
class ReserveSequences:
    """Record that sequence numbers of ``log`` up to ``through`` may be in use, so that ``load``
    reports at least ``through`` as its last sequence even if no message of it was appended."""

    log: str
    through: int


StoreOperation = (
    AddDestination
    | SaveSubscription
    | DeleteSubscription
    | AppendMessage
    | AppendEncodedRun
    | RemoveEntry
    | RemoveRange
    | MoveEntries
    | SetDeliveryCount
    | ReserveSequences
)


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """One entry read back: the entry ``seq`` of ``queue``, whose message is in the log ``log``
    (under ``seq`` too, unless the entry was moved: ``MoveEntries``)."""

    queue: str
    log: str
    seq: int
    message: Message
    delivery_count: int


class EncodedEntry(NamedTuple):
    """One entry read back as the ``jms.message.codec`` encoding of its message (as appended:
    its JMSRedelivered flag is the sender's, not the entry's). A named tuple: range reads make
    one per message, and it is built several times faster than a dataclass."""

    seq: int
    data: bytes
    delivery_count: int


@dataclass(frozen=True, slots=True)
class StoreContents:
    """What a broker reads when it opens a store; entries are then paged with ``read_entries``."""

    destinations: tuple[str, ...]
    subscriptions: tuple[DurableSubscriptionRecord, ...]
    #: Per log, the highest sequence number appended or reserved: new numbers start above it.
    last_sequences: Mapping[str, int]
    queues_with_entries: tuple[str, ...]


class Completion(ABC):
    """The outcome of one submitted batch: ``wait`` returns once it is durable, or raises."""

    @abstractmethod
    def wait(self) -> None:
        """Block until the batch is applied as durably as the store promises; raise its error."""

    @abstractmethod
    def done(self) -> bool:
        """Whether ``wait`` would return (or raise) at once."""

    def call_when_done(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once ``done()`` is true, failed or not: here and now if it already
        is, else on whichever thread finishes the batch — so it must be quick. Stores override
        this; the default waits on a thread of its own."""
        if self.done():
            callback()
            return

        def wait_then_call() -> None:
            with contextlib.suppress(Exception):
                self.wait()
            callback()

        threading.Thread(target=wait_then_call, name="jms-completion", daemon=True).start()


class _Done(Completion):
    def wait(self) -> None:
        return None

    def done(self) -> bool:
        return True

    def call_when_done(self, callback: Callable[[], None]) -> None:
        callback()


#: The completion of a batch that was applied before ``submit`` returned.
DONE: Completion = _Done()


class MessageStore(ABC):
    """Storage behind one broker. Thread-safe; owned by exactly one open broker at a time."""

    @abstractmethod
    def load(self) -> StoreContents:
        """What the store holds, for a broker starting on it."""

    @abstractmethod
    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        """Queue ``batch`` to be applied atomically, after every batch submitted before it.

        Must not block on I/O: callers hold the broker's lock. Failures surface from ``wait``.
        """

    @abstractmethod
    def read_sequences(self, queue: str, start_seq: int, limit: int) -> list[int]:
        """Up to ``limit`` sequence numbers of ``queue``'s entries from ``start_seq`` on, in order,
        as of every batch whose ``Completion`` has returned."""

    @abstractmethod
    def read_entries(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[StoredEntry]:
        """Up to ``limit`` entries of ``queue`` with ``start_seq <= seq`` (and ``seq <= end_seq``
        when given), in ``seq`` order, as of every batch whose ``Completion`` has returned."""

    @abstractmethod
    def read_encoded_entries(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[EncodedEntry]:
        """What ``read_entries`` returns, each message in its ``jms.message.codec`` encoding."""

    def read_not_due_entries(
        self, queue: str, start_seq: int, end_seq: int | None, now: int, limit: int
    ) -> list[EncodedEntry]:
        """Up to ``limit`` of the entries ``read_encoded_entries`` returns whose message's
        JMSDeliveryTime is after ``now`` and that has not expired at ``now`` (JMSExpiration 0 or
        after ``now``), in ``seq`` order: the messages a browse hides now but will show later."""
        found: list[EncodedEntry] = []
        while len(found) < limit:
            page = self._not_due_candidates(queue, start_seq, end_seq, now, limit)
            found += [entry for entry in page if _not_yet_due(entry.data, now)]
            if len(page) < limit:
                break
            start_seq = page[-1].seq + 1
        return found[:limit]

    def _not_due_candidates(
        self, queue: str, start_seq: int, end_seq: int | None, now: int, limit: int
    ) -> list[EncodedEntry]:
        """Up to ``limit`` entries from ``start_seq`` on, in ``seq`` order, among which are all
        those ``read_not_due_entries`` wants there (others may be too: each is checked). This
        one reads every entry; a store that can filter where it keeps them does better."""
        return self.read_encoded_entries(queue, start_seq, end_seq, limit)

    @abstractmethod
    def close(self) -> None:
        """Finish pending batches and release resources; the store is unusable afterwards."""


def _not_yet_due(encoded: bytes, now: int) -> bool:
    """Whether the encoded message's JMSDeliveryTime is after ``now`` and it has not expired at
    ``now``: a message a browse hides now but will show later."""
    expiration, delivery_time = header_times(encoded)
    return delivery_time > now and not (expiration and expiration <= now)
