"""``SQLiteStore``: the embedded durable store — one SQLite database in WAL mode, group-committed.

Every batch the broker submits is applied inside one SQLite transaction by a single writer
thread; batches that arrive while a commit is in flight are applied together in the next one, so
concurrent senders share one fsync (group commit) while each batch stays atomic on its own (a
savepoint per batch: a batch that fails rolls back alone and its ``Completion`` raises). With
``journal_mode=WAL`` and ``synchronous=FULL`` a commit is on disk when it returns, and only then
are the batch's completions released — so a PERSISTENT ``send`` that returned survives ``kill -9``.
Reads use their own connection and see every committed batch. The directory is locked
(``fcntl.flock``) so two brokers can never open the same store; the OS drops the lock when a
process dies. The schema and how to inspect or back up a live store are in docs/storage.md. This
module never decides delivery order and never holds messages in memory beyond the batch being
written: paging is done by ``read_sequences`` and ``read_entries``.
"""

from __future__ import annotations

import fcntl
import os
import queue
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from jms.errors import IllegalStateException, JMSException, ResourceAllocationException
from jms.message.codec import decode, encode
from jms.store.base import (
    AddDestination,
    AppendMessage,
    Completion,
    DeleteSubscription,
    DurableSubscriptionRecord,
    MessageStore,
    RemoveEntry,
    RemoveRange,
    ReserveSequences,
    SaveSubscription,
    SetDeliveryCount,
    StoreContents,
    StoredEntry,
    StoreOperation,
)

__all__ = ["DATABASE_NAME", "SCHEMA_VERSION", "SQLiteStore"]

DATABASE_NAME: Final = "jms-store.sqlite3"
_LOCK_NAME: Final = "jms-store.lock"
#: 2: ``sequences.reserved``; ``messages`` is a rowid table (its rows are kilobytes).
SCHEMA_VERSION: Final = 2
# Batches applied in one transaction at most; bounds commit latency under a flood of sends.
_MAX_GROUP: Final = 512

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS destinations (name TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS subscriptions (
    key TEXT PRIMARY KEY,
    client_id TEXT,
    name TEXT NOT NULL,
    topic TEXT NOT NULL,
    selector TEXT,
    no_local INTEGER NOT NULL,
    shared INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sequences (
    log TEXT PRIMARY KEY,
    last_seq INTEGER NOT NULL,
    reserved INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
    log TEXT NOT NULL,
    seq INTEGER NOT NULL,
    refs INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (log, seq)
);
CREATE TABLE IF NOT EXISTS entries (
    queue TEXT NOT NULL,
    seq INTEGER NOT NULL,
    log TEXT NOT NULL,
    delivery_count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (queue, seq)
) WITHOUT ROWID;
"""


class _Pending(Completion):
    """A batch waiting for its group's commit."""

    __slots__ = ("_done", "_error")

    def __init__(self) -> None:
        self._done = threading.Event()
        self._error: BaseException | None = None

    def finish(self, error: BaseException | None) -> None:
        self._error = error
        self._done.set()

    def wait(self) -> None:
        self._done.wait()
        if self._error is not None:
            raise self._error

    def done(self) -> bool:
        return self._done.is_set()


_STOP: Final = object()


class SQLiteStore(MessageStore):
    """A ``MessageStore`` in ``directory/jms-store.sqlite3``; thread-safe, one owner at a time."""

    def __init__(self, directory: str | os.PathLike[str], *, fsync_per_batch: bool = False) -> None:
        """Open (creating if needed) the store in ``directory``.

        ``fsync_per_batch`` turns group commit off (one transaction and fsync per batch); it
        exists to measure what group commit buys, not for production use.
        """
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._lock_file = open(self.directory / _LOCK_NAME, "a+b")  # noqa: SIM115 - held open
        except OSError as error:
            raise ResourceAllocationException(
                f"cannot open the store directory {str(self.directory)!r}: {error}",
                linked_exception=error,
            ) from error
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            raise IllegalStateException(
                f"the store in {str(self.directory)!r} is already open in another broker "
                "(its lock file is held); stop that broker first"
            ) from None
        self._group_limit = 1 if fsync_per_batch else _MAX_GROUP
        path = str(self.directory / DATABASE_NAME)
        self._writer = self._connect(path)
        self._writer.executescript(_SCHEMA)
        self._check_schema_version()
        self._reader = self._connect(path)
        self._reader_lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[Sequence[StoreOperation], _Pending] | object] = (
            queue.SimpleQueue()
        )
        self._closed = False
        self._close_lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._write_loop, name="jms-store-writer", daemon=True
        )
        self._thread.start()

    @staticmethod
    def _connect(path: str) -> sqlite3.Connection:
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("PRAGMA busy_timeout=10000")
        return connection

    def _check_schema_version(self) -> None:
        (version,) = self._writer.execute("PRAGMA user_version").fetchone()
        if version == 0:
            self._writer.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        elif version != SCHEMA_VERSION:
            raise IllegalStateException(
                f"the store in {str(self.directory)!r} has schema version {version}; this jms "
                f"reads version {SCHEMA_VERSION}"
            )

    # -- MessageStore -------------------------------------------------------------------------

    def load(self) -> StoreContents:
        with self._reader_lock:
            self._check_open()
            read = self._reader.execute
            return StoreContents(
                destinations=tuple(row[0] for row in read("SELECT name FROM destinations")),
                subscriptions=tuple(
                    DurableSubscriptionRecord(
                        key, client_id, name, topic, selector, bool(nl), bool(sh)
                    )
                    for key, client_id, name, topic, selector, nl, sh in read(
                        "SELECT key, client_id, name, topic, selector, no_local, shared "
                        "FROM subscriptions"
                    )
                ),
                last_sequences=dict(
                    read("SELECT log, max(last_seq, reserved) FROM sequences").fetchall()
                ),
                queues_with_entries=self._queues_with_entries(),
            )

    def _queues_with_entries(self) -> tuple[str, ...]:
        # One index probe per queue rather than a scan of every entry (a backlog may be large).
        queues: list[str] = []
        (queue_name,) = self._reader.execute("SELECT min(queue) FROM entries").fetchone()
        while queue_name is not None:
            queues.append(queue_name)
            (queue_name,) = self._reader.execute(
                "SELECT min(queue) FROM entries WHERE queue > ?", (queue_name,)
            ).fetchone()
        return tuple(queues)

    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        self._check_open()
        pending = _Pending()
        self._queue.put((tuple(batch), pending))
        return pending

    def read_sequences(self, queue: str, start_seq: int, limit: int) -> list[int]:
        with self._reader_lock:
            self._check_open()
            rows = self._reader.execute(
                "SELECT seq FROM entries WHERE queue = ? AND seq >= ? ORDER BY seq LIMIT ?",
                (queue, start_seq, limit),
            ).fetchall()
        return [seq for (seq,) in rows]

    def read_entries(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[StoredEntry]:
        upper = end_seq if end_seq is not None else 2**63 - 1
        with self._reader_lock:
            self._check_open()
            rows = self._reader.execute(
                "SELECT e.seq, e.log, e.delivery_count, m.data FROM entries e "
                "JOIN messages m ON m.log = e.log AND m.seq = e.seq "
                "WHERE e.queue = ? AND e.seq >= ? AND e.seq <= ? ORDER BY e.seq LIMIT ?",
                (queue, start_seq, upper, limit),
            ).fetchall()
        return [StoredEntry(queue, log, seq, decode(data), count) for seq, log, count, data in rows]

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._queue.put(_STOP)
        self._thread.join()
        self._writer.close()
        with self._reader_lock:
            self._reader.close()
        fcntl.flock(self._lock_file, fcntl.LOCK_UN)
        self._lock_file.close()

    # -- the writer thread --------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException(f"the store in {str(self.directory)!r} is closed")

    def _write_loop(self) -> None:
        stopping = False
        while not stopping:
            group: list[tuple[Sequence[StoreOperation], _Pending]] = []
            item = self._queue.get()
            while True:
                if item is _STOP:
                    stopping = True
                    break
                group.append(item)  # type: ignore[arg-type]
                if len(group) >= self._group_limit:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if group:
                self._commit_group(group)

    def _commit_group(self, group: list[tuple[Sequence[StoreOperation], _Pending]]) -> None:
        if not any(batch for batch, _ in group):
            # Barriers (empty batches): every earlier group is committed, nothing to write.
            for _, pending in group:
                pending.finish(None)
            return
        outcomes: list[BaseException | None] = []
        execute = self._writer.execute
        try:
            execute("BEGIN IMMEDIATE")
            for batch, _ in group:
                execute("SAVEPOINT batch")
                try:
                    for operation in batch:
                        self._apply(operation)
                except (sqlite3.Error, JMSException) as error:
                    execute("ROLLBACK TO batch")
                    outcomes.append(_as_jms_error(error))
                else:
                    outcomes.append(None)
                execute("RELEASE batch")
            execute("COMMIT")
        except sqlite3.Error as error:
            # The commit itself failed (disk full, I/O error): nothing of the group is durable.
            if self._writer.in_transaction:
                self._writer.execute("ROLLBACK")
            failure = _as_jms_error(error)
            outcomes = [failure] * len(group)
        for (_, pending), outcome in zip(group, outcomes, strict=True):
            pending.finish(outcome)

    def _apply(self, operation: StoreOperation) -> None:
        execute = self._writer.execute
        if isinstance(operation, AppendMessage):
            grew = execute(
                "INSERT INTO sequences (log, last_seq) VALUES (?, ?) "
                "ON CONFLICT (log) DO UPDATE SET last_seq = excluded.last_seq "
                "WHERE excluded.last_seq > sequences.last_seq",
                (operation.log, operation.seq),
            ).rowcount
            if not grew:
                (last,) = execute(
                    "SELECT last_seq FROM sequences WHERE log = ?", (operation.log,)
                ).fetchone()
                raise IllegalStateException(
                    f"store: sequence {operation.seq} of {operation.log} is not above the last "
                    f"one, {last}"
                )
            if operation.queues:
                execute(
                    "INSERT INTO messages (log, seq, refs, data) VALUES (?, ?, ?, ?)",
                    (
                        operation.log,
                        operation.seq,
                        len(operation.queues),
                        encode(operation.message),
                    ),
                )
                self._writer.executemany(
                    "INSERT INTO entries (queue, seq, log) VALUES (?, ?, ?)",
                    [(queue_name, operation.seq, operation.log) for queue_name in operation.queues],
                )
        elif isinstance(operation, RemoveEntry):
            self._remove_entry(operation.queue, operation.seq)
        elif isinstance(operation, RemoveRange):
            removed = execute(
                "DELETE FROM entries WHERE queue = ? AND seq BETWEEN ? AND ? RETURNING log, seq",
                (operation.queue, operation.start_seq, operation.end_seq),
            ).fetchall()
            self._release_messages(removed)
        elif isinstance(operation, ReserveSequences):
            execute(
                "INSERT INTO sequences (log, last_seq, reserved) VALUES (?, 0, ?) "
                "ON CONFLICT (log) DO UPDATE SET reserved = max(reserved, excluded.reserved)",
                (operation.log, operation.through),
            )
        elif isinstance(operation, SetDeliveryCount):
            execute(
                "UPDATE entries SET delivery_count = ? WHERE queue = ? AND seq = ?",
                (operation.count, operation.queue, operation.seq),
            )
        elif isinstance(operation, AddDestination):
            execute(
                "INSERT OR IGNORE INTO destinations (name) VALUES (?)", (operation.destination,)
            )
        elif isinstance(operation, SaveSubscription):
            record = operation.subscription
            if execute("SELECT 1 FROM subscriptions WHERE key = ?", (record.key,)).fetchone():
                raise IllegalStateException(
                    f"store: durable subscription {record.key!r} already exists"
                )
            execute(
                "INSERT INTO subscriptions (key, client_id, name, topic, selector, no_local, shared) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    record.key,
                    record.client_id,
                    record.name,
                    record.topic,
                    record.selector,
                    int(record.no_local),
                    int(record.shared),
                ),
            )
        elif isinstance(operation, DeleteSubscription):
            execute("DELETE FROM subscriptions WHERE key = ?", (operation.key,))
            removed = execute(
                "DELETE FROM entries WHERE queue = ? RETURNING log, seq", (operation.key,)
            ).fetchall()
            self._release_messages(removed)
        else:
            raise IllegalStateException(f"store: unknown operation {operation!r}")

    def _remove_entry(self, queue_name: str, seq: int) -> None:
        row = self._writer.execute(
            "DELETE FROM entries WHERE queue = ? AND seq = ? RETURNING log", (queue_name, seq)
        ).fetchone()
        if row is not None:
            self._release_messages([(row[0], seq)])

    def _release_messages(self, references: list[tuple[str, int]]) -> None:
        """Drop one reference to each ``(log, seq)`` message, deleting those left with none."""
        execute = self._writer.execute
        for log, seq in references:
            # The usual case, a queue's message with its only reference, is a single statement.
            if not execute(
                "DELETE FROM messages WHERE log = ? AND seq = ? AND refs <= 1", (log, seq)
            ).rowcount:
                execute("UPDATE messages SET refs = refs - 1 WHERE log = ? AND seq = ?", (log, seq))


def _as_jms_error(error: BaseException) -> JMSException:
    if isinstance(error, JMSException):
        return error
    return ResourceAllocationException(
        f"the store could not write: {error}", linked_exception=error
    )
