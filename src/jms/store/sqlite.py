"""``SQLiteStore``: the embedded durable store — one SQLite database in WAL mode, group-committed.

Every batch the broker submits is applied inside one SQLite transaction by a single writer
thread; batches that arrive while a commit is in flight are applied together in the next one, so
concurrent senders share one fsync (group commit). A group's sends, delivery records and
acknowledgements are written with a few ``executemany`` calls (``_CoalescedWrites``); each batch
still stays atomic on its own: if one fails, the group is rolled back and applied again with a
savepoint per batch, so that the failing batch rolls back alone and its ``Completion`` raises. With
``journal_mode=WAL`` and ``synchronous=FULL`` a commit is on disk when it returns, and only then
are the batch's completions released — so a PERSISTENT ``send`` that returned survives ``kill -9``.
Reads use their own connection and see every committed batch. Copying the log's pages into the
database file (a checkpoint) is done by a thread of its own with its own connection
(``jms-store-checkpointer``), so a commit only appends to the log and fsyncs it. The directory
is locked (``fcntl.flock``) so two brokers can never open the same store; the OS drops the lock
when a process dies. The schema and how to inspect or back up a live store are in
docs/storage.md. This module never decides delivery order and never holds messages in memory
beyond the batch being written: paging is done by ``read_sequences`` and ``read_entries``.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import queue
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from jms.errors import IllegalStateException, JMSException, ResourceAllocationException
from jms.message.codec import HEADER_TIMES_AT, decode
from jms.store import integrity
from jms.store.base import (
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
from jms.store.pending import PendingBatch as _Pending

__all__ = ["DATABASE_NAME", "ENTRY_ROWS", "SCHEMA_VERSION", "SLOW_COMMIT_S", "SQLiteStore"]

logger = logging.getLogger(__name__)

# An entry's message is numbered ``message_seq`` in its log if the entry was moved, else ``seq``.
_MESSAGE_SEQ_OF_ENTRY: Final = "coalesce(message_seq, seq)"
_MESSAGE_SEQ: Final = "coalesce(e.message_seq, e.seq)"

#: A queue's entries with their stored messages, in sequence order, as ``(seq, log,
#: delivery_count, data)`` rows; its parameters are ``(queue, start_seq, end_seq, limit)``.
ENTRY_ROWS: Final = (
    "SELECT e.seq, e.log, e.delivery_count, m.data FROM live_entries e "
    f"JOIN messages m ON m.log = e.log AND m.seq = {_MESSAGE_SEQ} "
    "WHERE e.queue = ? AND e.seq >= ? AND e.seq <= ? ORDER BY e.seq LIMIT ?"
)

_EXPIRATION: Final = f"substr(m.data, {HEADER_TIMES_AT + 1}, 8)"
_DELIVERY_TIME: Final = f"substr(m.data, {HEADER_TIMES_AT + 9}, 8)"
# ENTRY_ROWS, only those whose delivery time is after a moment and that have not expired then
# (the moment as 8 big-endian bytes, twice), as ``(seq, delivery_count, data)`` rows.
_NOT_DUE_ROWS: Final = (
    "SELECT e.seq, e.delivery_count, m.data FROM live_entries e "
    f"JOIN messages m ON m.log = e.log AND m.seq = {_MESSAGE_SEQ} "
    f"WHERE e.queue = ? AND e.seq >= ? AND e.seq <= ? AND {_DELIVERY_TIME} > ? "
    f"AND ({_EXPIRATION} = zeroblob(8) OR {_EXPIRATION} > ?) ORDER BY e.seq LIMIT ?"
)

DATABASE_NAME: Final = "jms-store.sqlite3"
_LOCK_NAME: Final = "jms-store.lock"
#: 2: ``sequences.reserved``; ``messages`` is a rowid table (its rows are kilobytes).
#: 3: ``consumed`` ranges and the ``live_entries`` view.
#: 4: ``entries.message_seq`` (moved entries, ``MoveEntries``).
SCHEMA_VERSION: Final = 4
#: A group commit taking this long or longer is logged as slow (senders wait for it).
SLOW_COMMIT_S: Final = 1.0
_SLOW_COMMIT_LOG_EVERY_S: Final = 10.0
# Entries a background reclaim deletes per transaction: short enough not to hold up commits.
_RECLAIM_CHUNK: Final = 2000
# Batches applied in one transaction at most; bounds commit latency under a flood of sends.
_MAX_GROUP: Final = 512
# The page size of a new store (an existing one keeps its own). SQLite's default, 4 KiB, holds
# three messages of 1 KiB a page; in 16 KiB pages staging 100,000 such messages took about 12%
# less CPU (the inserts alone 30% less), and commits of a few messages cost the same
# (docs/storage.md).
PAGE_BYTES: Final = 16384
# Log bytes from which the writer checkpoints by itself, a backstop for when the checkpointer
# thread falls behind; SQLite's default, 1000 pages, would have the writer copy most commits of
# big messages a second time itself.
_WRITER_CHECKPOINT_BYTES: Final = 64 * 2**20
# Checkpoints start at most this often: each one fsyncs the database file.
_CHECKPOINT_EVERY_S: Final = 0.05
_CHECKPOINT_FAILURE_LOG_EVERY_S: Final = 60.0
# Consecutive released messages from which one range statement beats a statement per message.
_RUN_WORTH_A_RANGE: Final = 16

# A run's messages from one blob (their encodings back to back) and a JSON array of their
# lengths: ?1 log, ?2 the first one's number, ?3 references, ?4 the blob, ?5 the lengths.
_INSERT_RUN: Final = (
    "INSERT INTO messages (log, seq, refs, data) "
    "SELECT ?1, ?2 + key, ?3, substr(?4, 1 + sum(value) OVER (ORDER BY key) - value, value) "
    "FROM json_each(?5)"
)
# A run's entries: ?1 queue, ?2 first number, ?3 last number, ?4 log.
_INSERT_RUN_ENTRIES: Final = (
    "WITH RECURSIVE numbers(seq) AS (SELECT ?2 UNION ALL SELECT seq + 1 FROM numbers "
    "WHERE seq < ?3) INSERT INTO entries (queue, seq, log) SELECT ?1, seq, ?4 FROM numbers"
)
# Bytes of encodings one statement of a run inserts at most.
_RUN_PART_BYTES: Final = 16 * 2**20

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
    message_seq INTEGER,
    PRIMARY KEY (queue, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS consumed (
    queue TEXT NOT NULL,
    start_seq INTEGER NOT NULL,
    end_seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS consumed_by_queue ON consumed (queue, start_seq);
CREATE VIEW IF NOT EXISTS live_entries AS
    SELECT * FROM entries e WHERE NOT EXISTS (
        SELECT 1 FROM consumed c
        WHERE c.queue = e.queue AND e.seq BETWEEN c.start_seq AND c.end_seq
    );
"""


_STOP: Final = object()


class SQLiteStore(MessageStore):
    """A ``MessageStore`` in ``directory/jms-store.sqlite3``; thread-safe, one owner at a time."""

    def __init__(self, directory: str | os.PathLike[str], *, fsync_per_batch: bool = False) -> None:
        """Open (creating if needed) the store in ``directory``.

        ``fsync_per_batch`` turns group commit off (one transaction and fsync per batch); it
        exists to measure what group commit buys, not for production use.
        """
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise ResourceAllocationException(
                f"the store directory {str(self.directory)!r} is a file; give a directory "
                "(it is created if missing)"
            )
        had_store = (self.directory / _LOCK_NAME).exists()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._lock_file = open(self.directory / _LOCK_NAME, "a+b")  # noqa: SIM115 - held open
        except OSError as error:
            raise ResourceAllocationException(
                f"cannot open the store directory {str(self.directory)!r}: "
                f"{error.strerror or error}",
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
        database = self.directory / DATABASE_NAME
        path = str(database)
        try:
            self._writer = self._open_writer(database, had_store)
        except BaseException:
            self._lock_file.close()
            raise
        self._reader = self._connect(path)
        self._reader_lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[Sequence[StoreOperation], _Pending] | object] = (
            queue.SimpleQueue()
        )
        self._closed = False
        self._close_lock = threading.Lock()
        self._completion_lock = threading.Lock()
        # Each log's last appended sequence, as the writer thread last wrote it (filled lazily).
        self._last_sequences: dict[str, int] = {}
        self._slow_commits = 0  # slow group commits not yet logged (the writer thread's)
        self._slow_logged_at = -_SLOW_COMMIT_LOG_EVERY_S
        # Whether consumed ranges wait to be reclaimed (the writer thread's alone once started).
        self._reclaiming = (
            self._writer.execute("SELECT 1 FROM consumed LIMIT 1").fetchone() is not None
        )
        self._thread = threading.Thread(
            target=self._write_loop, name="jms-store-writer", daemon=True
        )
        self._log_grew = threading.Event()
        self._checkpoints_stop = threading.Event()
        self._checkpointer = threading.Thread(
            target=self._checkpoint_loop,
            args=(self._connect(path),),
            name="jms-store-checkpointer",
            daemon=True,
        )
        self._thread.start()
        self._checkpointer.start()

    @classmethod
    def _open_writer(cls, database: Path, had_store: bool) -> sqlite3.Connection:
        """The writer's connection to ``database``, checked (``jms.store.integrity``) and at the
        current schema version."""
        integrity.check_file(database, had_store=had_store)
        if had_store and not database.exists():
            logger.warning(
                "the store directory %s held a store but has no %s: starting an empty store",
                database.parent,
                DATABASE_NAME,
            )
        writer: sqlite3.Connection | None = None
        try:
            writer = cls._connect(str(database))
            (page_bytes,) = writer.execute("PRAGMA page_size").fetchone()
            writer.execute(f"PRAGMA wal_autocheckpoint={_WRITER_CHECKPOINT_BYTES // page_bytes}")
            integrity.check_pages(writer, database)
            writer.executescript(_SCHEMA)
            integrity.upgrade_schema(writer, database, SCHEMA_VERSION)
        except BaseException as error:
            if writer is not None:
                writer.close()
            if isinstance(error, sqlite3.DatabaseError):
                raise integrity.damaged(database, error) from None
            raise
        return writer

    @staticmethod
    def _connect(path: str) -> sqlite3.Connection:
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        # Takes effect only on a database not yet written (which WAL mode writes): a new store.
        connection.execute(f"PRAGMA page_size={PAGE_BYTES}")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        # Debian's SQLite overwrites deleted rows with zeros (SECURE_DELETE), which rewrites every
        # page of consumed messages; FAST zeroes only where that costs no extra I/O.
        connection.execute("PRAGMA secure_delete=FAST")
        connection.execute("PRAGMA busy_timeout=10000")
        return connection

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
        (queue_name,) = self._reader.execute("SELECT min(queue) FROM live_entries").fetchone()
        while queue_name is not None:
            queues.append(queue_name)
            (queue_name,) = self._reader.execute(
                "SELECT min(queue) FROM live_entries WHERE queue > ?", (queue_name,)
            ).fetchone()
        return tuple(queues)

    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        self._check_open()
        pending = _Pending(self._completion_lock)
        self._queue.put((tuple(batch), pending))
        return pending

    def read_sequences(self, queue: str, start_seq: int, limit: int) -> list[int]:
        with self._reader_lock:
            self._check_open()
            rows = self._reader.execute(
                "SELECT seq FROM live_entries WHERE queue = ? AND seq >= ? ORDER BY seq LIMIT ?",
                (queue, start_seq, limit),
            ).fetchall()
        return [seq for (seq,) in rows]

    def read_entries(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[StoredEntry]:
        rows = self._entry_rows(queue, start_seq, end_seq, limit)
        return [StoredEntry(queue, log, seq, decode(data), count) for seq, log, count, data in rows]

    def read_encoded_entries(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[EncodedEntry]:
        rows = self._entry_rows(queue, start_seq, end_seq, limit)
        # The messages table holds codec bytes: they go out as stored.
        return [EncodedEntry(seq, data, count) for seq, _, count, data in rows]

    def _not_due_candidates(
        self, queue: str, start_seq: int, end_seq: int | None, now: int, limit: int
    ) -> list[EncodedEntry]:
        upper = end_seq if end_seq is not None else 2**63 - 1
        # Compared as big-endian bytes, times of 0 and more order as numbers do: SQLite skips
        # the due and expired messages without handing them to Python. A negative time (which
        # no producer stamps) passes the filter and is judged by the caller's check.
        moment = max(now, 0).to_bytes(8, "big")
        with self._reader_lock:
            self._check_open()
            rows = self._reader.execute(
                _NOT_DUE_ROWS, (queue, start_seq, upper, moment, moment, limit)
            ).fetchall()
        return [EncodedEntry(seq, data, count) for seq, count, data in rows]

    def _entry_rows(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[tuple[int, str, int, bytes]]:
        upper = end_seq if end_seq is not None else 2**63 - 1
        with self._reader_lock:
            self._check_open()
            return self._reader.execute(ENTRY_ROWS, (queue, start_seq, upper, limit)).fetchall()

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._queue.put(_STOP)
        self._thread.join()
        self._checkpoints_stop.set()
        self._log_grew.set()
        self._checkpointer.join()
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
            if self._reclaiming:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    self._reclaim()
                    continue
            else:
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

    def _checkpoint_loop(self, connection: sqlite3.Connection) -> None:
        """Copy committed log pages into the database file while the writer goes on (PASSIVE:
        it never waits for the writer or a reader) whenever the writer committed, at most
        every ``_CHECKPOINT_EVERY_S``; a failure is logged and the next commit tries again."""
        failure_logged_at = -_CHECKPOINT_FAILURE_LOG_EVERY_S
        try:
            while True:
                self._log_grew.wait()
                if self._checkpoints_stop.is_set():
                    return
                self._log_grew.clear()
                try:
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    now = time.monotonic()
                    if now - failure_logged_at >= _CHECKPOINT_FAILURE_LOG_EVERY_S:
                        failure_logged_at = now
                        logger.exception(
                            "a checkpoint of %s failed; the log grows until one succeeds",
                            self.directory / DATABASE_NAME,
                        )
                if self._checkpoints_stop.wait(_CHECKPOINT_EVERY_S):
                    return
        finally:
            connection.close()

    def _reclaim(self) -> None:
        """Delete up to ``_RECLAIM_CHUNK`` entries of a consumed range, and the messages left
        without references, in one transaction (between groups: a group waits at most for
        one chunk); once no range is left, stop reclaiming. A failure leaves the range for the
        next store that opens the file."""
        execute = self._writer.execute
        try:
            execute("BEGIN IMMEDIATE")
            row = execute(
                "SELECT rowid, queue, start_seq, end_seq FROM consumed LIMIT 1"
            ).fetchone()
            if row is None:
                self._reclaiming = False
            else:
                rowid, queue_name, start_seq, end_seq = row
                chunk_end = execute(
                    "SELECT seq FROM entries WHERE queue = ? AND seq BETWEEN ? AND ? "
                    "ORDER BY seq LIMIT 1 OFFSET ?",
                    (queue_name, start_seq, end_seq, _RECLAIM_CHUNK - 1),
                ).fetchone()
                through = end_seq if chunk_end is None else chunk_end[0]
                removed = execute(
                    "DELETE FROM entries WHERE queue = ? AND seq BETWEEN ? AND ? "
                    f"RETURNING log, {_MESSAGE_SEQ_OF_ENTRY}",
                    (queue_name, start_seq, through),
                ).fetchall()
                self._release_messages(removed)
                if through >= end_seq:
                    execute("DELETE FROM consumed WHERE rowid = ?", (rowid,))
                else:
                    execute(
                        "UPDATE consumed SET start_seq = ? WHERE rowid = ?", (through + 1, rowid)
                    )
            execute("COMMIT")
        except sqlite3.Error:
            logger.exception("reclaiming consumed messages in %s failed", self.directory)
            self._roll_back()
            self._reclaiming = False

    def _commit_group(self, group: list[tuple[Sequence[StoreOperation], _Pending]]) -> None:
        if not any(batch for batch, _ in group):
            # Barriers (empty batches): every earlier group is committed, nothing to write.
            _Pending.finish_all(self._completion_lock, ((pending, None) for _, pending in group))
            return
        execute = self._writer.execute
        outcomes: list[BaseException | None]
        began = time.monotonic()
        try:
            try:
                execute("BEGIN IMMEDIATE")
                self._write_coalesced(group)
                outcomes = [None] * len(group)
            except (sqlite3.Error, JMSException):
                # A batch failed (a broker bug, a full disk): start over with a savepoint per
                # batch, so that it fails alone and the others still commit.
                self._roll_back()
                execute("BEGIN IMMEDIATE")
                outcomes = self._write_batch_by_batch(group)
            execute("COMMIT")
            self._log_grew.set()
        except sqlite3.Error as error:
            # The commit itself failed (disk full, I/O error): nothing of the group is durable.
            self._roll_back()
            outcomes = [_as_jms_error(error)] * len(group)
        self._note_commit_time(time.monotonic() - began, len(group))
        _Pending.finish_all(
            self._completion_lock,
            ((pending, outcome) for (_, pending), outcome in zip(group, outcomes, strict=True)),
        )

    def _note_commit_time(self, seconds: float, batches: int) -> None:
        """Log a group that took ``SLOW_COMMIT_S`` or more (senders waited that long for their
        receipts): at most one line per ``_SLOW_COMMIT_LOG_EVERY_S``, counting the others."""
        if seconds < SLOW_COMMIT_S:
            return
        self._slow_commits += 1
        now = time.monotonic()
        if now - self._slow_logged_at < _SLOW_COMMIT_LOG_EVERY_S:
            return
        logger.warning(
            "slow store commit: %d batch(es) took %.2f s to write and fsync in %s (%d slow "
            "commits since the last such line); is the disk slow, busy or nearly full?",
            batches,
            seconds,
            self.directory / DATABASE_NAME,
            self._slow_commits,
        )
        self._slow_commits = 0
        self._slow_logged_at = now

    def _roll_back(self) -> None:
        if self._writer.in_transaction:
            self._writer.execute("ROLLBACK")
        self._last_sequences.clear()  # it may hold appends that were just undone

    def _write_coalesced(self, group: list[tuple[Sequence[StoreOperation], _Pending]]) -> None:
        """Apply ``group`` with a few ``executemany`` calls: sends, delivery records and
        acknowledgements (nearly all batches) are gathered by ``_CoalescedWrites``; any other
        operation writes what was gathered so far and is applied on its own, in order."""
        writes = _CoalescedWrites(self._writer, self._last_sequences)
        for batch, _ in group:
            for operation in batch:
                kind = type(operation)
                if kind is AppendMessage:
                    writes.append(operation)  # type: ignore[arg-type]
                elif kind is SetDeliveryCount:
                    writes.set_delivery_count(operation)  # type: ignore[arg-type]
                elif kind is RemoveEntry:
                    writes.remove_entry(operation)  # type: ignore[arg-type]
                else:
                    writes.flush()
                    self._apply(operation)
        writes.flush()

    def _write_batch_by_batch(
        self, group: list[tuple[Sequence[StoreOperation], _Pending]]
    ) -> list[BaseException | None]:
        execute = self._writer.execute
        outcomes: list[BaseException | None] = []
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
        return outcomes

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
                        operation.encoding(),
                    ),
                )
                self._writer.executemany(
                    "INSERT INTO entries (queue, seq, log) VALUES (?, ?, ?)",
                    [(queue_name, operation.seq, operation.log) for queue_name in operation.queues],
                )
        elif isinstance(operation, AppendEncodedRun):
            self._append_run(operation)
        elif isinstance(operation, RemoveEntry):
            self._remove_entry(operation.queue, operation.seq)
        elif isinstance(operation, MoveEntries):
            self._move_entries(operation)
        elif isinstance(operation, RemoveRange):
            # A range is consumed by one small row; its entries and messages are deleted in the
            # background (``_reclaim``), and until then no read sees them (``live_entries``).
            execute(
                "INSERT INTO consumed (queue, start_seq, end_seq) VALUES (?, ?, ?)",
                (operation.queue, operation.start_seq, operation.end_seq),
            )
            self._reclaiming = True
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
            execute("DELETE FROM consumed WHERE queue = ?", (operation.key,))
            removed = execute(
                f"DELETE FROM entries WHERE queue = ? RETURNING log, {_MESSAGE_SEQ_OF_ENTRY}",
                (operation.key,),
            ).fetchall()
            self._release_messages(removed)
        else:
            raise IllegalStateException(f"store: unknown operation {operation!r}")

    def _append_run(self, operation: AppendEncodedRun) -> None:
        execute = self._writer.execute
        log, first, last = operation.log, operation.first_seq, operation.last_seq
        grew = execute(
            "INSERT INTO sequences (log, last_seq) VALUES (?, ?) "
            "ON CONFLICT (log) DO UPDATE SET last_seq = excluded.last_seq "
            "WHERE sequences.last_seq < ?",
            (log, last, first),
        ).rowcount
        self._last_sequences.pop(log, None)  # the coalesced writes' cache
        if not grew:
            (current,) = execute("SELECT last_seq FROM sequences WHERE log = ?", (log,)).fetchone()
            raise IllegalStateException(
                f"store: sequence {first} of {log} is not above the last one, {current}"
            )
        queues = operation.queues
        if not queues:
            return
        # One statement per part of the run, not a row per call: executemany takes the
        # interpreter lock back after every row, and with the broker's other threads busy each
        # of those waits up to a switch interval (measured: 24 -> 14,500 us a message beside a
        # busy thread; one statement: 16 -> 24). Parts stay far below SQLite's largest blob.
        start = 0
        encodings = operation.encodings
        while start < len(encodings):
            end, size = start, 0
            while end < len(encodings) and (end == start or size < _RUN_PART_BYTES):
                size += len(encodings[end])
                end += 1
            part = encodings[start:end]
            execute(
                _INSERT_RUN,
                (log, first + start, len(queues), b"".join(part), json.dumps(list(map(len, part)))),
            )
            start = end
        for queue_name in queues:
            execute(_INSERT_RUN_ENTRIES, (queue_name, first, last, log))

    def _move_entries(self, operation: MoveEntries) -> None:
        execute = self._writer.execute
        count = operation.last_seq - operation.first_seq + 1
        last = operation.target_seq + count - 1
        grew = execute(
            "INSERT INTO sequences (log, last_seq) VALUES (?, ?) "
            "ON CONFLICT (log) DO UPDATE SET last_seq = excluded.last_seq "
            "WHERE sequences.last_seq < ?",
            (operation.target, last, operation.target_seq),
        ).rowcount
        self._last_sequences.pop(operation.target, None)  # the coalesced writes' cache
        (held,) = execute(
            "SELECT count(*) FROM live_entries WHERE queue = ? AND seq BETWEEN ? AND ?",
            (operation.source, operation.first_seq, operation.last_seq),
        ).fetchone()
        if not grew:
            raise IllegalStateException(
                f"store: cannot move entries of {operation.source} to {operation.target} from "
                f"{operation.target_seq} on: that is not above the last number of its log"
            )
        if held != count:
            raise IllegalStateException(
                f"store: cannot move entries {operation.first_seq} to {operation.last_seq} of "
                f"{operation.source} to {operation.target}: {held} of the {count} are held"
            )
        # Each entry keeps naming its message (log, number): the message is not rewritten. A copy
        # and a range delete, not an UPDATE of the key: SQLite moves each updated row within the
        # index on its own, which took twice as long for a run of 100,000 (docs/storage.md).
        source = (operation.source, operation.first_seq, operation.last_seq)
        execute(
            "INSERT INTO entries (queue, seq, log, delivery_count, message_seq) "
            f"SELECT ?, seq + ?, log, delivery_count, {_MESSAGE_SEQ_OF_ENTRY} FROM entries "
            "WHERE queue = ? AND seq BETWEEN ? AND ?",
            (operation.target, operation.target_seq - operation.first_seq, *source),
        )
        execute("DELETE FROM entries WHERE queue = ? AND seq BETWEEN ? AND ?", source)

    def _remove_entry(self, queue_name: str, seq: int) -> None:
        row = self._writer.execute(
            f"DELETE FROM entries WHERE queue = ? AND seq = ? RETURNING log, {_MESSAGE_SEQ_OF_ENTRY}",
            (queue_name, seq),
        ).fetchone()
        if row is not None:
            self._release_messages([(row[0], row[1])])

    def _release_messages(self, references: Iterable[tuple[str, int]]) -> None:
        _release_messages(self._writer, Counter(references))


def _release_messages(writer: sqlite3.Connection, released: Counter[tuple[str, int]]) -> None:
    """Drop ``released[(log, seq)]`` references to each message, deleting those left with none."""
    singles: list[tuple[str, int, int]] = []
    for log, first, last in _single_reference_runs(released):
        if last - first + 1 < _RUN_WORTH_A_RANGE:
            singles += [(log, seq, 1) for seq in range(first, last + 1)]
            continue
        # A consumed range (the common case: a queue's messages each have one reference) is one
        # statement, not one per message.
        deleted = writer.execute(
            "DELETE FROM messages WHERE log = ? AND seq BETWEEN ? AND ? AND refs <= 1",
            (log, first, last),
        ).rowcount
        if deleted < last - first + 1:  # some are a topic's, held by other subscriptions too
            writer.execute(
                "UPDATE messages SET refs = refs - 1 WHERE log = ? AND seq BETWEEN ? AND ?",
                (log, first, last),
            )
    rows = singles + [(log, seq, count) for (log, seq), count in released.items() if count > 1]
    if not rows:
        return
    deleted = writer.executemany(
        "DELETE FROM messages WHERE log = ? AND seq = ? AND refs <= ?", rows
    ).rowcount
    if deleted < len(rows):
        # Some keep references (a topic's message held by other subscriptions); the deleted
        # ones match nothing here.
        writer.executemany(
            "UPDATE messages SET refs = refs - ? WHERE log = ? AND seq = ?",
            [(count, log, seq) for log, seq, count in rows],
        )


def _single_reference_runs(released: Counter[tuple[str, int]]) -> list[tuple[str, int, int]]:
    """The ``(log, first, last)`` runs of consecutive sequences of one log that each lose one
    reference in ``released``."""
    runs: list[tuple[str, int, int]] = []
    for log, seq in sorted(key for key, count in released.items() if count == 1):
        if runs and runs[-1][0] == log and runs[-1][2] == seq - 1:
            runs[-1] = (log, runs[-1][1], seq)
        else:
            runs.append((log, seq, seq))
    return runs


class _CoalescedWrites:
    """What a run of sends, delivery records and acknowledgements changes, gathered in memory
    and written with a few ``executemany`` calls: a message acknowledged in the run it was sent
    in is never written, a delivery record of a message sent in the run is its entry's initial
    count, and each log's last sequence is written once.

    The net effect is that of applying the operations one by one because an appended entry is
    always new — its ``seq`` grows its log, and a store queue's entries are numbered in its own
    log's numbers (a moved entry too, ``MoveEntries``, which is written on its own) — so
    operations on entries that existed before the run (written first, updates then removals)
    commute with the run's appends. A run is all-or-nothing: the writer rolls back on any error.
    """

    __slots__ = (
        "_appended",
        "_count_updates",
        "_entries",
        "_last_sequences",
        "_messages",
        "_removals",
        "_writer",
    )

    def __init__(self, writer: sqlite3.Connection, last_sequences: dict[str, int]) -> None:
        self._writer = writer
        # The writer thread's cache of each log's last appended sequence (it is the only writer).
        self._last_sequences = last_sequences
        self._appended: dict[str, int] = {}  # log -> its last sequence appended in this run
        # (log, seq) -> [log, seq, references, message]; (queue, seq) -> [queue, seq, log, count]
        self._messages: dict[tuple[str, int], list[Any]] = {}
        self._entries: dict[tuple[str, int], list[Any]] = {}
        self._count_updates: list[tuple[int, str, int]] = []
        self._removals: dict[str, list[int]] = {}  # queue -> seqs of entries written before

    def append(self, operation: AppendMessage) -> None:
        log, seq = operation.log, operation.seq
        last = self._last_sequences.get(log)
        if last is None:
            row = self._writer.execute(
                "SELECT last_seq FROM sequences WHERE log = ?", (log,)
            ).fetchone()
            last = 0 if row is None else row[0]
        if seq <= last:
            raise IllegalStateException(
                f"store: sequence {seq} of {log} is not above the last one, {last}"
            )
        self._last_sequences[log] = self._appended[log] = seq
        if operation.queues:
            self._messages[(log, seq)] = [log, seq, len(operation.queues), operation]
            for queue_name in operation.queues:
                self._entries[(queue_name, seq)] = [queue_name, seq, log, 0]

    def set_delivery_count(self, operation: SetDeliveryCount) -> None:
        entry = self._entries.get((operation.queue, operation.seq))
        if entry is not None:
            entry[3] = operation.count
        else:
            self._count_updates.append((operation.count, operation.queue, operation.seq))

    def remove_entry(self, operation: RemoveEntry) -> None:
        entry = self._entries.pop((operation.queue, operation.seq), None)
        if entry is None:
            self._removals.setdefault(operation.queue, []).append(operation.seq)
            return
        key = (entry[2], operation.seq)
        message = self._messages[key]
        message[2] -= 1
        if not message[2]:
            del self._messages[key]

    def flush(self) -> None:
        """Write what was gathered and start gathering afresh."""
        execute, executemany = self._writer.execute, self._writer.executemany
        if self._count_updates:
            executemany(
                "UPDATE entries SET delivery_count = ? WHERE queue = ? AND seq = ?",
                self._count_updates,
            )
            self._count_updates = []
        if self._removals:
            released: Counter[tuple[str, int]] = Counter()
            for queue_name, seqs in self._removals.items():
                # One statement per queue: its seqs travel as a JSON array.
                released.update(
                    execute(
                        "DELETE FROM entries WHERE queue = ? AND seq IN "
                        f"(SELECT value FROM json_each(?)) RETURNING log, {_MESSAGE_SEQ_OF_ENTRY}",
                        (queue_name, json.dumps(seqs)),
                    ).fetchall()
                )
            _release_messages(self._writer, released)
            self._removals = {}
        if self._messages:
            executemany(
                "INSERT INTO messages (log, seq, refs, data) VALUES (?, ?, ?, ?)",
                [
                    (log, seq, references, append.encoding())
                    for log, seq, references, append in self._messages.values()
                ],
            )
            self._messages = {}
        if self._entries:
            executemany(
                "INSERT INTO entries (queue, seq, log, delivery_count) VALUES (?, ?, ?, ?)",
                self._entries.values(),
            )
            self._entries = {}
        if self._appended:
            executemany(
                "INSERT INTO sequences (log, last_seq) VALUES (?, ?) "
                "ON CONFLICT (log) DO UPDATE SET last_seq = excluded.last_seq",
                self._appended.items(),
            )
            self._appended = {}


def _as_jms_error(error: BaseException) -> JMSException:
    if isinstance(error, JMSException):
        return error
    return ResourceAllocationException(
        f"the store could not write: {error}", linked_exception=error
    )
