"""``MemoryStore``: the storage of ``memory://`` brokers — everything in dicts, nothing on disk.

It implements the ``jms.store.base`` contract exactly (atomic ordered batches, per-log sequences,
shared messages referenced by several store queues, paging by sequence), so that the broker's
recovery path can be exercised by handing one MemoryStore to a second broker, and so that the
SQLite store can be tested against it. It must never pretend to durability: a process exit loses
everything, and ``submit`` applies each batch before returning.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from jms.errors import IllegalStateException
from jms.message import Message
from jms.message.codec import decode, encode
from jms.store.base import (
    DONE,
    AddDestination,
    AppendEncodedRun,
    AppendMessage,
    Completion,
    DeleteSubscription,
    DurableSubscriptionRecord,
    EncodedEntry,
    MessageStore,
    MoveEntries,
    RemoveEntry,
    RemoveRange,
    ReserveSequences,
    SaveSubscription,
    SetDeliveryCount,
    StoreContents,
    StoredEntry,
    StoreOperation,
)

__all__ = ["MemoryStore"]


@dataclass(slots=True)
class _LoggedMessage:
    log: str
    message: Message
    references: int


@dataclass(slots=True)
class _Entry:
    log: str
    delivery_count: int
    message_seq: int  # its message's number in ``log``: its own, unless it was moved


class MemoryStore(MessageStore):
    """An in-memory ``MessageStore``; a batch is validated whole before any of it is applied."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False
        self._destinations: dict[str, None] = {}
        self._subscriptions: dict[str, DurableSubscriptionRecord] = {}
        self._last_sequences: dict[str, int] = {}
        self._reserved: dict[str, int] = {}
        self._messages: dict[tuple[str, int], _LoggedMessage] = {}
        # queue -> seq -> entry, in seq order (appends and moves only ever add numbers above).
        self._entries: dict[str, dict[int, _Entry]] = {}

    def load(self) -> StoreContents:
        with self._lock:
            self._check_open()
            return StoreContents(
                destinations=tuple(self._destinations),
                subscriptions=tuple(self._subscriptions.values()),
                last_sequences={
                    log: max(self._last_sequences.get(log, 0), self._reserved.get(log, 0))
                    for log in self._last_sequences.keys() | self._reserved.keys()
                },
                queues_with_entries=tuple(q for q, entries in self._entries.items() if entries),
            )

    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        with self._lock:
            self._check_open()
            planned_sequences: dict[str, int] = {}
            planned_subscriptions = set(self._subscriptions)
            for operation in batch:
                self._validate(operation, planned_sequences, planned_subscriptions)
            for operation in batch:
                self._apply(operation)
        return DONE

    def read_sequences(self, queue: str, start_seq: int, limit: int) -> list[int]:
        with self._lock:
            self._check_open()
            seqs = list(self._entries.get(queue, ()))
            begin = bisect_left(seqs, start_seq)
            return seqs[begin : begin + limit]

    def read_entries(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[StoredEntry]:
        with self._lock:
            self._check_open()
            entries = self._entries.get(queue)
            if not entries:
                return []
            seqs = list(entries)  # in seq order: appends and moves only ever add numbers above
            result: list[StoredEntry] = []
            for seq in seqs[bisect_left(seqs, start_seq) :]:
                if (end_seq is not None and seq > end_seq) or len(result) >= limit:
                    break
                entry = entries[seq]
                message = self._messages[(entry.log, entry.message_seq)].message
                result.append(StoredEntry(queue, entry.log, seq, message, entry.delivery_count))
            return result

    def read_encoded_entries(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[EncodedEntry]:
        # This store keeps messages, not bytes: encode (outside the lock; they never change).
        return [
            EncodedEntry(entry.seq, encode(entry.message), entry.delivery_count)
            for entry in self.read_entries(queue, start_seq, end_seq, limit)
        ]

    def close(self) -> None:
        with self._lock:
            self._closed = True

    # -- internals -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("this MemoryStore is closed")

    def _validate(
        self,
        operation: StoreOperation,
        planned_sequences: dict[str, int],
        planned_subscriptions: set[str],
    ) -> None:
        """Refuse a batch that contradicts the store, before applying any of it (atomicity).
        The ``planned_*`` arguments follow the batch's own effects: its appends must grow too,
        and a subscription it deletes may be saved again (a replaced durable subscription)."""
        if isinstance(operation, AppendMessage | AppendEncodedRun):
            first, through = (
                (operation.seq, operation.seq)
                if isinstance(operation, AppendMessage)
                else (operation.first_seq, operation.last_seq)
            )
            last = planned_sequences.get(operation.log, self._last_sequences.get(operation.log, 0))
            if first <= last:
                raise IllegalStateException(
                    f"store: sequence {first} of {operation.log} is not above the last one, {last}"
                )
            planned_sequences[operation.log] = through
        elif isinstance(operation, MoveEntries):
            self._validate_move(operation, planned_sequences)
        elif isinstance(operation, SaveSubscription):
            key = operation.subscription.key
            if key in planned_subscriptions:
                raise IllegalStateException(f"store: durable subscription {key!r} already exists")
            planned_subscriptions.add(key)
        elif isinstance(operation, DeleteSubscription):
            planned_subscriptions.discard(operation.key)

    def _append(self, log: str, seq: int, message: Message, queues: tuple[str, ...]) -> None:
        self._last_sequences[log] = seq
        if queues:
            self._messages[(log, seq)] = _LoggedMessage(log, message, len(queues))
            for queue in queues:
                self._entries.setdefault(queue, {})[seq] = _Entry(log, 0, seq)

    def _validate_move(self, operation: MoveEntries, planned_sequences: dict[str, int]) -> None:
        last = planned_sequences.get(
            operation.target, self._last_sequences.get(operation.target, 0)
        )
        if operation.target_seq <= last:
            raise IllegalStateException(
                f"store: cannot move entries of {operation.source} to {operation.target} from "
                f"{operation.target_seq} on: that is not above the last number of its log ({last})"
            )
        entries = self._entries.get(operation.source, {})
        wanted = operation.last_seq - operation.first_seq + 1
        held = sum(
            1 for seq in range(operation.first_seq, operation.last_seq + 1) if seq in entries
        )
        if held != wanted:
            raise IllegalStateException(
                f"store: cannot move entries {operation.first_seq} to {operation.last_seq} of "
                f"{operation.source} to {operation.target}: {held} of the {wanted} are held"
            )
        planned_sequences[operation.target] = operation.target_seq + wanted - 1

    def _apply(self, operation: StoreOperation) -> None:
        if isinstance(operation, AppendMessage):
            self._append(operation.log, operation.seq, operation.message, operation.queues)
        elif isinstance(operation, AppendEncodedRun):
            for seq, data in enumerate(operation.encodings, operation.first_seq):
                self._append(operation.log, seq, decode(data), operation.queues)
        elif isinstance(operation, MoveEntries):
            source = self._entries[operation.source]
            target = self._entries.setdefault(operation.target, {})
            offset = operation.target_seq - operation.first_seq
            for seq in range(operation.first_seq, operation.last_seq + 1):
                target[seq + offset] = source.pop(seq)
            self._last_sequences[operation.target] = operation.last_seq + offset
        elif isinstance(operation, RemoveEntry):
            self._remove_entry(operation.queue, operation.seq)
        elif isinstance(operation, RemoveRange):
            entries = self._entries.get(operation.queue, {})
            for seq in [s for s in entries if operation.start_seq <= s <= operation.end_seq]:
                self._remove_entry(operation.queue, seq)
        elif isinstance(operation, ReserveSequences):
            if operation.through > self._reserved.get(operation.log, 0):
                self._reserved[operation.log] = operation.through
        elif isinstance(operation, SetDeliveryCount):
            entry = self._entries.get(operation.queue, {}).get(operation.seq)
            if entry is not None:
                entry.delivery_count = operation.count
        elif isinstance(operation, AddDestination):
            self._destinations[operation.destination] = None
        elif isinstance(operation, SaveSubscription):
            self._subscriptions[operation.subscription.key] = operation.subscription
            self._entries.setdefault(operation.subscription.key, {})
        elif isinstance(operation, DeleteSubscription):
            self._subscriptions.pop(operation.key, None)
            for seq in list(self._entries.get(operation.key, {})):
                self._remove_entry(operation.key, seq)
            self._entries.pop(operation.key, None)

    def _remove_entry(self, queue: str, seq: int) -> None:
        entry = self._entries.get(queue, {}).pop(seq, None)
        if entry is None:
            return
        key = (entry.log, entry.message_seq)
        logged = self._messages[key]
        logged.references -= 1
        if logged.references == 0:
            del self._messages[key]
