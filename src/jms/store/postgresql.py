"""``PostgreSQLStore``: the durable store in a PostgreSQL database, group-committed, owned by one
broker at a time through a session-level advisory lock.

The one module of ``jms.store`` that imports a third-party library (psycopg 3, the
``jms[postgresql]`` extra): a database server has no standard-library client. It is imported
only when a ``postgresql://`` store is opened.

Writes. One writer thread applies the broker's batches in submission order, each group of batches
that arrived while the previous commit was in flight in one PostgreSQL transaction (group commit,
as ``jms.store.sqlite`` does); a batch's ``Completion`` is released only after ``COMMIT``
returned, so a PERSISTENT ``send`` that returned is committed (durable as far as the server's
``synchronous_commit`` and ``fsync`` say: on by default). A group's operations are gathered
(``_GroupWrites``) and written as a few statements over arrays (``unnest``), a handful of round
trips per group whatever its size. If a batch fails, the group is rolled back and applied again
with a savepoint per batch, so that the failing batch fails alone.

Ownership. The writer's connection holds ``pg_advisory_lock`` (``LOCK_KEY``) for as long as the
store is open: the database drops it when that session ends — the broker's process dies, its
host is lost, or the session is terminated — and every commit is made by the session holding
it, so a broker that lost the lock can never commit again. Opening a store whose lock another
session holds is refused, or, with ``on_standby``, waited for (a standby broker). The writer
notices a lost connection at once when the server closes it (it watches the idle socket) and
within ``HEARTBEAT_S`` plus the TCP user timeout otherwise (a query each ``HEARTBEAT_S``); the
store then fails every batch and calls ``on_lost``, whose owner must stop serving. The server
side is told to give up on a silent client later than that (TCP keepalives on the session), so
the lock outlives the broker's notice of the loss.

Schema. The tables live in the PostgreSQL schema ``jms`` (so the database may hold others);
``jms.store_info`` holds the schema version, and opening a store applies the steps from the
version it has to ``SCHEMA_VERSION`` (creating it is the first step); a newer version is refused.
Reads use a connection of their own and see every committed batch.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import select
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any, Final, LiteralString

import psycopg
import psycopg.errors

from jms.errors import IllegalStateException, JMSException, ResourceAllocationException
from jms.message.codec import HEADER_TIMES_AT, decode, with_redelivered
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
from jms.store.pending import PendingBatch
from jms.store.reading import SnapshotReader

__all__ = [
    "HEARTBEAT_S",
    "LOCK_KEY",
    "SCHEMA_VERSION",
    "TAKEOVER_GRACE_S",
    "PostgreSQLSnapshot",
    "PostgreSQLStore",
    "describe_url",
]

logger = logging.getLogger(__name__)

#: The ``pg_advisory_lock`` key of a jms store ("jms_stor" in ASCII): one owner per database.
LOCK_KEY: Final = 0x6A6D735F73746F72
#: How often an idle writer proves its session alive with a query.
HEARTBEAT_S: Final = 1.0
#: How often an idle writer looks at its socket (a terminated session makes it readable).
_WATCH_S: Final = 0.05
#: How long a standby that got the lock waits before it writes: an active broker whose session the
#: server ended notices within ``_WATCH_S`` and stops serving; this lets it finish first.
TAKEOVER_GRACE_S: Final = 0.25
#: How long a standby's lock request waits before it looks whether it was told to stop.
_STANDBY_POLL_MS: Final = 500
# Batches applied in one transaction at most; bounds commit latency under a flood of sends.
_MAX_GROUP: Final = 512
#: Client side: a write unacknowledged this long (ms) breaks the connection. Server side: TCP
#: keepalives that drop a silent broker's session (and its lock) only after that broker has
#: had time to notice the loss itself (HEARTBEAT_S + the user timeout, about 4 s, against 10 s).
_CONNECTION_OPTIONS: Final = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 1,
    "keepalives_count": 3,
    "tcp_user_timeout": 3000,
    "connect_timeout": 10,
    "options": "-c tcp_keepalives_idle=7 -c tcp_keepalives_interval=1 "
    "-c tcp_keepalives_count=3 -c tcp_user_timeout=10000",
}

#: Each step brings the schema from its index to the next version: step 0 creates it.
_SCHEMA_STEPS: Final[tuple[LiteralString, ...]] = (
    """
    CREATE SCHEMA IF NOT EXISTS jms;
    CREATE TABLE jms.store_info (schema_version integer NOT NULL);
    INSERT INTO jms.store_info VALUES (0);
    CREATE TABLE jms.destinations (name text PRIMARY KEY);
    CREATE TABLE jms.subscriptions (
        key text PRIMARY KEY,
        client_id text,
        name text NOT NULL,
        topic text NOT NULL,
        selector text,
        no_local boolean NOT NULL,
        shared boolean NOT NULL
    );
    CREATE TABLE jms.sequences (
        log text PRIMARY KEY,
        last_seq bigint NOT NULL,
        reserved bigint NOT NULL DEFAULT 0
    );
    CREATE TABLE jms.messages (
        log text NOT NULL,
        seq bigint NOT NULL,
        refs integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (log, seq)
    );
    CREATE TABLE jms.entries (
        queue text NOT NULL,
        seq bigint NOT NULL,
        log text NOT NULL,
        delivery_count integer NOT NULL DEFAULT 0,
        PRIMARY KEY (queue, seq)
    );
    """,
    # 2: a moved entry's message's number in its log (``MoveEntries``); NULL: the entry's own.
    "ALTER TABLE jms.entries ADD COLUMN message_seq bigint",
)
SCHEMA_VERSION: Final = len(_SCHEMA_STEPS)

_ENTRY_ROWS: Final = (
    "SELECT e.seq, e.log, e.delivery_count, m.data FROM jms.entries e "
    "JOIN jms.messages m ON m.log = e.log AND m.seq = coalesce(e.message_seq, e.seq) "
    "WHERE e.queue = %s AND e.seq >= %s AND e.seq <= %s ORDER BY e.seq LIMIT %s"
)

# _ENTRY_ROWS, only those whose JMSDeliveryTime is after a moment and that have not expired then
# (8 zero bytes, then the moment as 8 big-endian bytes, twice): bytea compares as bytes, and times of 0 and more
# order as numbers do in big-endian bytes. ``(seq, delivery_count, data)`` rows.
_NOT_DUE_ROWS: Final = (
    "SELECT e.seq, e.delivery_count, m.data FROM jms.entries e "
    "JOIN jms.messages m ON m.log = e.log AND m.seq = coalesce(e.message_seq, e.seq) "
    "WHERE e.queue = %s AND e.seq >= %s AND e.seq <= %s "
    f"AND substring(m.data from {HEADER_TIMES_AT + 9} for 8) > %s "
    f"AND (substring(m.data from {HEADER_TIMES_AT + 1} for 8) = %s "
    f"OR substring(m.data from {HEADER_TIMES_AT + 1} for 8) > %s) ORDER BY e.seq LIMIT %s"
)

# Removing entries releases their messages in the same statement: ``removed`` is a CTE deleting
# entries ``RETURNING`` their messages' ``log, seq``; a message losing all its references is deleted, the others lose
# that many. The two parts touch different rows, so one statement may do both.
_RELEASE: Final = """
    WITH removed AS ({removal}),
    released AS (SELECT log, seq, count(*) AS n FROM removed GROUP BY log, seq),
    dropped AS (
        DELETE FROM jms.messages m USING released r
        WHERE m.log = r.log AND m.seq = r.seq AND m.refs <= r.n
    )
    UPDATE jms.messages m SET refs = m.refs - r.n FROM released r
    WHERE m.log = r.log AND m.seq = r.seq AND m.refs > r.n
"""
_REMOVE_ENTRIES: Final = _RELEASE.format(
    removal="DELETE FROM jms.entries e USING unnest(%s::text[], %s::bigint[]) AS r(queue, seq) "
    "WHERE e.queue = r.queue AND e.seq = r.seq "
    "RETURNING e.log, coalesce(e.message_seq, e.seq) AS seq"
)
_REMOVE_RANGE: Final = _RELEASE.format(
    removal="DELETE FROM jms.entries WHERE queue = %s AND seq BETWEEN %s AND %s "
    "RETURNING log, coalesce(message_seq, seq) AS seq"
)
_REMOVE_QUEUE: Final = _RELEASE.format(
    removal="DELETE FROM jms.entries WHERE queue = %s "
    "RETURNING log, coalesce(message_seq, seq) AS seq"
)

_STOP: Final = object()


def describe_url(url: str) -> str:
    """``url`` without its password, to show in logs and startup lines."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rpartition("@")[2]
    user = f"{parts.username}@" if parts.username else ""
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}{netloc}"))


class PostgreSQLStore(MessageStore):
    """A ``MessageStore`` in the PostgreSQL database ``url`` names; thread-safe, one owner at a
    time (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        on_standby: Callable[[], None] | None = None,
        stop_waiting: threading.Event | None = None,
        on_lost: Callable[[JMSException], None] | None = None,
    ) -> None:
        """Open (creating its tables if needed) the store in the database ``url`` names
        (``postgresql://user:password@host:port/database``, any libpq URL).

        Another broker holding the store is ``IllegalStateException`` — unless ``on_standby`` is
        given: then it is called once and the store waits for the lock, until it has it or
        ``stop_waiting`` is set (``IllegalStateException``). ``on_lost`` is called once, from the
        writer thread, if the store loses its database session after opening.
        """
        self.url = url
        self.description = describe_url(url)
        self._on_lost = on_lost
        self._writer = self._connect()
        try:
            self._lock(on_standby, stop_waiting)
            self._migrate()
            self._reader = self._connect()
        except BaseException:
            self._writer.close()
            raise
        self._reader_lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[Sequence[StoreOperation], PendingBatch] | object] = (
            queue.SimpleQueue()
        )
        self._closed = False
        self._lost: JMSException | None = None
        self._close_lock = threading.Lock()
        self._completion_lock = threading.Lock()
        # Each log's last appended sequence, as the writer last wrote it (filled lazily).
        self._last_sequences: dict[str, int] = {}
        self._thread = threading.Thread(
            target=self._write_loop, name="jms-store-writer", daemon=True
        )
        self._thread.start()

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(
                self.url,
                autocommit=True,
                # Names this process's sessions in pg_stat_activity (to watch or terminate them).
                application_name=f"jms-store pid {os.getpid()}",
                **_CONNECTION_OPTIONS,
            )
        except psycopg.Error as error:
            raise ResourceAllocationException(
                f"cannot connect to the store database {self.description}: {error}",
                linked_exception=error,
            ) from error

    def _lock(
        self, on_standby: Callable[[], None] | None, stop_waiting: threading.Event | None
    ) -> None:
        execute = self._writer.execute
        (locked,) = execute("SELECT pg_try_advisory_lock(%s)", (LOCK_KEY,)).fetchone()  # type: ignore[misc]
        if locked:
            return
        if on_standby is None:
            raise IllegalStateException(
                f"the store {self.description} is already open in another broker (it holds the "
                "store's advisory lock); stop that broker first"
            )
        on_standby()
        # A lock request granted the moment the holder's session ends; it gives up now and then
        # only to look at ``stop_waiting``.
        execute(f"SET lock_timeout = {_STANDBY_POLL_MS}")
        while stop_waiting is None or not stop_waiting.is_set():
            try:
                execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
            except psycopg.errors.LockNotAvailable:
                continue
            except psycopg.Error as error:
                raise ResourceAllocationException(
                    f"lost the store database {self.description} while waiting for its lock: "
                    f"{error}",
                    linked_exception=error,
                ) from error
            execute("RESET lock_timeout")
            time.sleep(TAKEOVER_GRACE_S)
            return
        raise IllegalStateException(
            f"stopped waiting for the store {self.description} (held by another broker)"
        )

    def _migrate(self) -> None:
        version = _schema_version(self._writer)
        if version > SCHEMA_VERSION:
            raise IllegalStateException(
                f"the store {self.description} has schema version {version}; this jms reads "
                f"version {SCHEMA_VERSION}"
            )
        for step in range(version, SCHEMA_VERSION):
            with self._writer.transaction():
                self._writer.execute(_SCHEMA_STEPS[step])
                self._writer.execute("UPDATE jms.store_info SET schema_version = %s", (step + 1,))

    # -- MessageStore -------------------------------------------------------------------------

    def load(self) -> StoreContents:
        destinations = self._read("SELECT name FROM jms.destinations ORDER BY name", ())
        subscriptions = self._read(
            "SELECT key, client_id, name, topic, selector, no_local, shared "
            "FROM jms.subscriptions ORDER BY key",
            (),
        )
        sequences = self._read("SELECT log, greatest(last_seq, reserved) FROM jms.sequences", ())
        # One index probe per queue rather than a scan of every entry (a backlog may be large).
        queues = self._read(
            "WITH RECURSIVE q AS (SELECT min(queue) AS queue FROM jms.entries UNION ALL "
            "SELECT (SELECT min(queue) FROM jms.entries WHERE queue > q.queue) FROM q "
            "WHERE q.queue IS NOT NULL) SELECT queue FROM q WHERE queue IS NOT NULL",
            (),
        )
        return StoreContents(
            destinations=tuple(name for (name,) in destinations),
            subscriptions=tuple(DurableSubscriptionRecord(*row) for row in subscriptions),
            last_sequences={log: int(last) for log, last in sequences},
            queues_with_entries=tuple(name for (name,) in queues),
        )

    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        self._check_open()
        pending = PendingBatch(self._completion_lock)
        self._queue.put((tuple(batch), pending))
        return pending

    def read_sequences(self, queue: str, start_seq: int, limit: int) -> list[int]:
        rows = self._read(
            "SELECT seq FROM jms.entries WHERE queue = %s AND seq >= %s ORDER BY seq LIMIT %s",
            (queue, start_seq, limit),
        )
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
        return [EncodedEntry(seq, data, count) for seq, _, count, data in rows]

    def _not_due_candidates(
        self, queue: str, start_seq: int, end_seq: int | None, now: int, limit: int
    ) -> list[EncodedEntry]:
        upper = end_seq if end_seq is not None else 2**63 - 1
        # A negative time (which no producer stamps) passes the SQL filter and is judged by the
        # caller's check.
        moment = max(now, 0).to_bytes(8, "big")
        rows = self._read(_NOT_DUE_ROWS, (queue, start_seq, upper, moment, bytes(8), moment, limit))
        return [EncodedEntry(seq, data, count) for seq, count, data in rows]

    def _entry_rows(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[tuple[Any, ...]]:
        upper = end_seq if end_seq is not None else 2**63 - 1
        return self._read(_ENTRY_ROWS, (queue, start_seq, upper, limit))

    def _read(self, query: LiteralString, parameters: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._reader_lock:
            self._check_open()
            try:
                # Binary results: a message's bytea arrives as its bytes, not as hex text.
                return self._reader.execute(query, parameters, binary=True).fetchall()
            except psycopg.Error as error:
                raise ResourceAllocationException(
                    f"cannot read the store {self.description}: {error}", linked_exception=error
                ) from error

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._queue.put(_STOP)
        self._thread.join()
        # The lock is released before the session ends: the server ends a closed session's
        # backend a moment later, and a broker reopening the store at once must find it free.
        # Closing the session releases it too (a lost session, a killed process).
        if self._lost is None:
            with contextlib.suppress(psycopg.Error):
                self._writer.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))
        self._writer.close()
        with self._reader_lock:
            self._reader.close()

    # -- the writer thread --------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException(f"the store {self.description} is closed")

    def _write_loop(self) -> None:
        stopping = False
        last_proof = time.monotonic()
        while not stopping:
            try:
                item = self._queue.get(timeout=_WATCH_S)
            except queue.Empty:
                if self._lost is None and time.monotonic() - last_proof >= HEARTBEAT_S:
                    self._prove_alive()
                    last_proof = time.monotonic()
                elif self._lost is None and self._socket_readable():
                    # An idle session is sent nothing unless the server is ending it.
                    self._prove_alive()
                continue
            group: list[tuple[Sequence[StoreOperation], PendingBatch]] = []
            while True:
                if item is _STOP:
                    stopping = True
                    break
                group.append(item)  # type: ignore[arg-type]
                if len(group) >= _MAX_GROUP:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if group:
                self._commit_group(group)
                last_proof = time.monotonic()

    def _socket_readable(self) -> bool:
        if self._writer.closed:
            return True
        readable, _, _ = select.select([self._writer.fileno()], [], [], 0)
        return bool(readable)

    def _prove_alive(self) -> None:
        try:
            self._writer.execute("SELECT 1")
        except psycopg.Error as error:
            self._lose(error)

    def _lose(self, error: psycopg.Error) -> None:
        """The writer's session is gone, and the lock with it: fail everything from now on."""
        if self._lost is not None:
            return
        self._lost = ResourceAllocationException(
            f"lost the connection to the store database {self.description} (and with it the "
            f"store's lock): {error}",
            linked_exception=error,
        )
        logger.error("%s", self._lost)
        if self._on_lost is not None:
            self._on_lost(self._lost)

    def _commit_group(self, group: list[tuple[Sequence[StoreOperation], PendingBatch]]) -> None:
        outcomes: list[BaseException | None]
        if self._lost is not None:
            outcomes = [self._lost] * len(group)
        elif not any(batch for batch, _ in group):
            # Barriers (empty batches): every earlier group is committed, nothing to write.
            outcomes = [None] * len(group)
        else:
            try:
                outcomes = self._write_group([batch for batch, _ in group])
            except Exception as error:
                # A bug here must fail the group, not end the thread that every waiter needs.
                logger.exception("the store writer failed")
                outcomes = [_as_jms_error(error)] * len(group)
        PendingBatch.finish_all(
            self._completion_lock,
            ((pending, outcome) for (_, pending), outcome in zip(group, outcomes, strict=True)),
        )

    def _write_group(self, batches: list[Sequence[StoreOperation]]) -> list[BaseException | None]:
        execute = self._writer.execute
        try:
            try:
                execute("BEGIN")
                self._write(batches)
                outcomes: list[BaseException | None] = [None] * len(batches)
            except (psycopg.Error, JMSException):
                if self._writer.broken:
                    raise
                # A batch failed (a broker bug, a full disk): start over with a savepoint per
                # batch, so that it fails alone and the others still commit.
                self._roll_back()
                execute("BEGIN")
                outcomes = self._write_batch_by_batch(batches)
            execute("COMMIT")
        except psycopg.Error as error:
            if self._writer.broken:
                # Whether the group committed is unknown; the broker must stop either way.
                self._lose(error)
                assert self._lost is not None
                return [self._lost] * len(batches)
            # The commit itself failed (disk full on the server): nothing of it is durable.
            self._roll_back()
            return [_as_jms_error(error)] * len(batches)
        return outcomes

    def _roll_back(self) -> None:
        self._writer.execute("ROLLBACK")
        self._last_sequences.clear()  # it may hold appends that were just undone

    def _write_batch_by_batch(
        self, batches: list[Sequence[StoreOperation]]
    ) -> list[BaseException | None]:
        execute = self._writer.execute
        outcomes: list[BaseException | None] = []
        for batch in batches:
            execute("SAVEPOINT batch")
            try:
                self._write([batch])
            except (psycopg.Error, JMSException) as error:
                if self._writer.broken:
                    raise
                execute("ROLLBACK TO batch")
                self._last_sequences.clear()
                outcomes.append(_as_jms_error(error))
            else:
                outcomes.append(None)
            execute("RELEASE batch")
        return outcomes

    def _write(self, batches: Sequence[Sequence[StoreOperation]]) -> None:
        """Apply ``batches``: sends, delivery records and acknowledgements are gathered by
        ``_GroupWrites``; any other operation writes what was gathered so far and is applied
        on its own, in order."""
        writes = _GroupWrites(self._writer, self._last_sequences)
        for batch in batches:
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

    def _apply(self, operation: StoreOperation) -> None:
        execute = self._writer.execute
        if isinstance(operation, RemoveRange):
            execute(_REMOVE_RANGE, (operation.queue, operation.start_seq, operation.end_seq))
        elif isinstance(operation, MoveEntries):
            self._move_entries(operation)
        elif isinstance(operation, AppendEncodedRun):
            self._append_run(operation)
        elif isinstance(operation, ReserveSequences):
            execute(
                "INSERT INTO jms.sequences AS s (log, last_seq, reserved) VALUES (%s, 0, %s) "
                "ON CONFLICT (log) DO UPDATE SET reserved = greatest(s.reserved, "
                "excluded.reserved)",
                (operation.log, operation.through),
            )
        elif isinstance(operation, AddDestination):
            execute(
                "INSERT INTO jms.destinations (name) VALUES (%s) ON CONFLICT DO NOTHING",
                (operation.destination,),
            )
        elif isinstance(operation, SaveSubscription):
            record = operation.subscription
            inserted = execute(
                "INSERT INTO jms.subscriptions "
                "(key, client_id, name, topic, selector, no_local, shared) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (
                    record.key,
                    record.client_id,
                    record.name,
                    record.topic,
                    record.selector,
                    record.no_local,
                    record.shared,
                ),
            ).rowcount
            if not inserted:
                raise IllegalStateException(
                    f"store: durable subscription {record.key!r} already exists"
                )
        elif isinstance(operation, DeleteSubscription):
            execute("DELETE FROM jms.subscriptions WHERE key = %s", (operation.key,))
            execute(_REMOVE_QUEUE, (operation.key,))
        else:
            raise IllegalStateException(f"store: unknown operation {operation!r}")

    def _append_run(self, operation: AppendEncodedRun) -> None:
        execute = self._writer.execute
        log, first, last = operation.log, operation.first_seq, operation.last_seq
        grew = execute(
            "INSERT INTO jms.sequences AS s (log, last_seq) VALUES (%s, %s) "
            "ON CONFLICT (log) DO UPDATE SET last_seq = excluded.last_seq "
            "WHERE s.last_seq < %s",
            (log, last, first),
        ).rowcount
        self._last_sequences.pop(log, None)  # the group writes' cache
        if not grew:
            (current,) = execute(
                "SELECT last_seq FROM jms.sequences WHERE log = %s", (log,)
            ).fetchone()
            raise IllegalStateException(
                f"store: sequence {first} of {log} is not above the last one, {current}"
            )
        if not operation.queues:
            return
        seqs = list(range(first, last + 1))
        execute(
            "INSERT INTO jms.messages (log, seq, refs, data) "
            "SELECT %s, seq, %s, data FROM unnest(%s::bigint[], %s::bytea[]) AS u(seq, data)",
            (log, len(operation.queues), seqs, list(operation.encodings)),
        )
        for queue_name in operation.queues:
            execute(
                "INSERT INTO jms.entries (queue, seq, log) "
                "SELECT %s, seq, %s FROM unnest(%s::bigint[]) AS u(seq)",
                (queue_name, log, seqs),
            )

    def _move_entries(self, operation: MoveEntries) -> None:
        execute = self._writer.execute
        count = operation.last_seq - operation.first_seq + 1
        grew = execute(
            "INSERT INTO jms.sequences AS s (log, last_seq) VALUES (%s, %s) "
            "ON CONFLICT (log) DO UPDATE SET last_seq = excluded.last_seq "
            "WHERE s.last_seq < %s",
            (operation.target, operation.target_seq + count - 1, operation.target_seq),
        ).rowcount
        self._last_sequences.pop(operation.target, None)  # the group writes' cache
        if not grew:
            raise IllegalStateException(
                f"store: cannot move entries of {operation.source} to {operation.target} from "
                f"{operation.target_seq} on: that is not above the last number of its log"
            )
        # Each entry keeps naming its message (log, number): the message is not rewritten.
        moved = execute(
            "UPDATE jms.entries SET queue = %s, seq = seq + %s, "
            "message_seq = coalesce(message_seq, seq) "
            "WHERE queue = %s AND seq BETWEEN %s AND %s",
            (
                operation.target,
                operation.target_seq - operation.first_seq,
                operation.source,
                operation.first_seq,
                operation.last_seq,
            ),
        ).rowcount
        if moved != count:
            raise IllegalStateException(
                f"store: cannot move entries {operation.first_seq} to {operation.last_seq} of "
                f"{operation.source} to {operation.target}: {moved} of the {count} are held"
            )


class PostgreSQLSnapshot(SnapshotReader):
    """The PostgreSQL store at ``url``, read-only, for readers such as the Spark source: what
    ``jms.store.snapshot.StoreSnapshot`` is to a SQLite directory, on a live store. It reads in
    one read-only transaction (a consistent snapshot of committed batches), takes no lock, and
    refuses a schema version other than the one this jms reads. A context manager."""

    def __init__(self, url: str) -> None:
        self.description = describe_url(url)
        self.label = f"the store {self.description}"
        try:
            self._db = psycopg.connect(url, **_CONNECTION_OPTIONS)
            self._db.read_only = True
            self._db.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            version = _schema_version(self._db)
        except psycopg.Error as error:
            raise IllegalStateException(
                f"cannot read the store {self.description}: {error}"
            ) from error
        if version == 0:
            self._db.close()
            raise IllegalStateException(
                f"{self.description} holds no jms store: there is no table jms.store_info"
            )
        self._require_schema(version, SCHEMA_VERSION)

    def close(self) -> None:
        self._db.close()

    def _subscription(
        self, subscription_name: str | None, client_id: str | None
    ) -> tuple[str, str] | None:
        row = self._db.execute(
            "SELECT key, topic FROM jms.subscriptions "
            "WHERE name = %s AND client_id IS NOT DISTINCT FROM %s",
            (subscription_name, client_id),
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def sequence_bounds(self, key: str) -> tuple[int, int] | None:
        row = self._db.execute(
            "SELECT min(seq), max(seq) FROM jms.entries WHERE queue = %s", (key,)
        ).fetchone()
        return None if row is None or row[0] is None else (int(row[0]), int(row[1]))

    def read_encoded(
        self, key: str, start_seq: int, end_seq: int, limit: int
    ) -> list[tuple[int, bytes]]:
        rows = self._db.execute(
            _ENTRY_ROWS, (key, start_seq, end_seq, limit), binary=True
        ).fetchall()
        return [(int(seq), with_redelivered(data, count > 0)) for seq, _, count, data in rows]


class _GroupWrites:
    """The net effect of a run of sends, delivery records and acknowledgements, written with one
    statement per table: a message acknowledged in the run it was sent in is never written, a
    delivery record of a message sent in the run is its entry's initial count.

    It equals applying the operations one by one because an appended entry is always new (its
    ``seq`` grows its log, and a store queue's entries are numbered in its own log's numbers, a
    moved entry's too: ``MoveEntries`` is written on its own), so the changes to
    entries that existed before the run (updates, then removals) commute with the run's appends.
    """

    __slots__ = (
        "_appended",
        "_count_updates",
        "_entries",
        "_last_sequences",
        "_messages",
        "_writer",
    )

    def __init__(self, writer: psycopg.Connection[Any], last_sequences: dict[str, int]) -> None:
        self._writer = writer
        self._last_sequences = last_sequences
        self._appended: dict[str, int] = {}  # log -> its last sequence appended in this run
        # (log, seq) -> [references, operation]; (queue, seq) -> [log, delivery count]
        self._messages: dict[tuple[str, int], list[Any]] = {}
        self._entries: dict[tuple[str, int], list[Any]] = {}
        # (queue, seq) -> delivery count, or None for a removal, of entries written before.
        self._count_updates: dict[tuple[str, int], int | None] = {}

    def append(self, operation: AppendMessage) -> None:
        log, seq = operation.log, operation.seq
        last = self._last_sequences.get(log)
        if last is None:
            row = self._writer.execute(
                "SELECT last_seq FROM jms.sequences WHERE log = %s", (log,)
            ).fetchone()
            last = 0 if row is None else int(row[0])
        if seq <= last:
            raise IllegalStateException(
                f"store: sequence {seq} of {log} is not above the last one, {last}"
            )
        self._last_sequences[log] = self._appended[log] = seq
        if operation.queues:
            self._messages[(log, seq)] = [len(operation.queues), operation]
            for queue_name in operation.queues:
                self._entries[(queue_name, seq)] = [log, 0]

    def set_delivery_count(self, operation: SetDeliveryCount) -> None:
        key = (operation.queue, operation.seq)
        entry = self._entries.get(key)
        if entry is not None:
            entry[1] = operation.count
        elif self._count_updates.get(key, 0) is not None:
            self._count_updates[key] = operation.count

    def remove_entry(self, operation: RemoveEntry) -> None:
        key = (operation.queue, operation.seq)
        entry = self._entries.pop(key, None)
        if entry is None:
            self._count_updates[key] = None
            return
        message_key = (entry[0], operation.seq)  # appended in this run: numbered as its entry
        message = self._messages[message_key]
        message[0] -= 1
        if not message[0]:
            del self._messages[message_key]

    def flush(self) -> None:
        """Write what was gathered and start gathering afresh."""
        execute = self._writer.execute
        updates = [(key, count) for key, count in self._count_updates.items() if count is not None]
        if updates:
            execute(
                "UPDATE jms.entries e SET delivery_count = u.count FROM "
                "unnest(%s::text[], %s::bigint[], %s::integer[]) AS u(queue, seq, count) "
                "WHERE e.queue = u.queue AND e.seq = u.seq",
                _columns([(queue, seq, count) for (queue, seq), count in updates], 3),
            )
        removals = [key for key, count in self._count_updates.items() if count is None]
        if removals:
            execute(_REMOVE_ENTRIES, _columns(removals, 2))
        self._count_updates = {}
        if self._messages:
            execute(
                "INSERT INTO jms.messages (log, seq, refs, data) "
                "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::integer[], %s::bytea[])",
                _columns(
                    [
                        (log, seq, references, append.encoding())
                        for (log, seq), (references, append) in self._messages.items()
                    ],
                    4,
                ),
            )
            self._messages = {}
        if self._entries:
            execute(
                "INSERT INTO jms.entries (queue, seq, log, delivery_count) "
                "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::integer[])",
                _columns(
                    [
                        (queue, seq, log, count)
                        for (queue, seq), (log, count) in self._entries.items()
                    ],
                    4,
                ),
            )
            self._entries = {}
        if self._appended:
            execute(
                "INSERT INTO jms.sequences (log, last_seq) "
                "SELECT * FROM unnest(%s::text[], %s::bigint[]) "
                "ON CONFLICT (log) DO UPDATE SET last_seq = excluded.last_seq",
                _columns(list(self._appended.items()), 2),
            )
            self._appended = {}


def _schema_version(connection: psycopg.Connection[Any]) -> int:
    """The schema version of the store in ``connection``'s database; 0 where there is none."""
    row = connection.execute("SELECT to_regclass('jms.store_info')").fetchone()
    if row is None or row[0] is None:
        return 0
    (version,) = connection.execute("SELECT schema_version FROM jms.store_info").fetchone()  # type: ignore[misc]
    return int(version)


def _columns(rows: list[tuple[Any, ...]], width: int) -> tuple[list[Any], ...]:
    """``rows`` as ``width`` column lists, the parameters of an ``unnest`` of arrays."""
    if not rows:
        return tuple([] for _ in range(width))
    return tuple(list(column) for column in zip(*rows, strict=True))


def _as_jms_error(error: BaseException) -> JMSException:
    if isinstance(error, JMSException):
        return error
    return ResourceAllocationException(
        f"the store could not write: {error}", linked_exception=error
    )
