"""What only the SQLite store promises: durability across reopen, one owner, group commit."""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest

from jms.errors import IllegalStateException
from jms.message import BytesMessage, TextMessage
from jms.message.codec import encode
from jms.store import (
    AddDestination,
    AppendEncodedRun,
    AppendMessage,
    Completion,
    DeleteSubscription,
    DurableSubscriptionRecord,
    MoveEntries,
    RemoveEntry,
    RemoveRange,
    ReserveSequences,
    SaveSubscription,
    SetDeliveryCount,
    StoreOperation,
)
from jms.store.sqlite import _RECLAIM_CHUNK, DATABASE_NAME, PAGE_BYTES, SQLiteStore


def test_everything_survives_reopening(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    record = DurableSubscriptionRecord("c:s", "c", "s", "topic://t", None, False, False)
    message = BytesMessage()
    message.write_bytes(b"\x00\x01")
    store.submit([SaveSubscription(record)]).wait()
    store.submit([AppendMessage("topic://t", 3, message, ("c:s",))]).wait()
    store.submit([AppendMessage("queue://q", 1, TextMessage("a"), ("queue://q",))]).wait()
    store.submit([SetDeliveryCount("c:s", 3, 2)]).wait()
    store.close()

    reopened = SQLiteStore(tmp_path)
    contents = reopened.load()
    assert contents.subscriptions == (record,)
    assert dict(contents.last_sequences) == {"topic://t": 3, "queue://q": 1}
    assert sorted(contents.queues_with_entries) == ["c:s", "queue://q"]
    (entry,) = reopened.read_entries("c:s", 1, None, 10)
    assert entry.delivery_count == 2
    assert entry.message.get_body(bytes) == b"\x00\x01"
    reopened.close()


def test_a_second_owner_is_refused_while_the_first_is_open(tmp_path: Path) -> None:
    first = SQLiteStore(tmp_path)
    with pytest.raises(IllegalStateException, match="already open"):
        SQLiteStore(tmp_path)
    first.close()
    SQLiteStore(tmp_path).close()


def test_the_database_is_in_wal_mode_and_inspectable(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    store.submit([AppendMessage("queue://q", 1, TextMessage("a"), ("queue://q",))]).wait()
    with sqlite3.connect(tmp_path / DATABASE_NAME) as inspector:
        assert inspector.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert inspector.execute("SELECT queue, seq FROM entries").fetchall() == [("queue://q", 1)]
    store.close()


def test_a_new_store_has_16_kib_pages_and_an_older_store_keeps_its_own(tmp_path: Path) -> None:
    assert PAGE_BYTES == 16384
    SQLiteStore(tmp_path / "new").close()
    with closing(sqlite3.connect(tmp_path / "new" / DATABASE_NAME)) as inspector:
        assert inspector.execute("PRAGMA page_size").fetchone() == (PAGE_BYTES,)

    older = tmp_path / "older"
    older.mkdir()
    with closing(sqlite3.connect(older / DATABASE_NAME)) as creator:  # as SQLite's default made
        creator.execute("PRAGMA page_size=4096")
        creator.execute("PRAGMA journal_mode=WAL")
    store = SQLiteStore(older)
    store.submit([AppendMessage("queue://q", 1, TextMessage("kept"), ("queue://q",))]).wait()
    store.close()
    reopened = SQLiteStore(older)
    (entry,) = reopened.read_entries("queue://q", 1, None, 10)
    assert entry.message.get_body(str) == "kept"
    reopened.close()
    with closing(sqlite3.connect(older / DATABASE_NAME)) as inspector:
        assert inspector.execute("PRAGMA page_size").fetchone() == (4096,)


def test_checkpoints_are_made_beside_the_writer_while_the_store_is_open(tmp_path: Path) -> None:
    """A commit only appends to the log: the checkpointer thread copies the pages into the
    database file. 2 MB is below the writer's own checkpoint threshold (and SQLite's default),
    so without that thread the file would stay small until the store closes."""
    store = SQLiteStore(tmp_path)
    database = tmp_path / DATABASE_NAME
    with closing(sqlite3.connect(database)) as inspector:
        (page_size,) = inspector.execute("PRAGMA page_size").fetchone()
    assert 1000 * page_size > 20 * 100_000  # below SQLite's default threshold too
    body = "x" * 100_000
    store.submit(
        [AppendMessage("queue://q", seq, TextMessage(body), ("queue://q",)) for seq in range(1, 21)]
    ).wait()
    deadline = time.monotonic() + 10
    while database.stat().st_size < 20 * 100_000:
        assert time.monotonic() < deadline, f"not checkpointed in 10 s: {database.stat()}"
        time.sleep(0.01)
    store.close()
    reopened = SQLiteStore(tmp_path)
    assert [entry.seq for entry in reopened.read_entries("queue://q", 1, None, 100)] == list(
        range(1, 21)
    )
    reopened.close()


def test_a_run_longer_than_one_statement_takes_is_written_in_parts_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jms.store.sqlite._RUN_PART_BYTES", 300)
    encodings = [encode(TextMessage("x" * size)) for size in (0, 500, 3, 120, 77, 900, 1)]
    store = SQLiteStore(tmp_path)
    store.submit([AppendEncodedRun("queue://q", 4, encodings, ("queue://q",))]).wait()
    read = store.read_encoded_entries("queue://q", 1, None, 100)
    assert [(entry.seq, entry.data) for entry in read] == list(
        zip(range(4, 11), encodings, strict=True)
    )
    store.close()


def test_acknowledged_messages_are_deleted_from_disk(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    store.submit([AppendMessage("queue://q", 1, TextMessage("a"), ("queue://q",))]).wait()
    store.submit([RemoveEntry("queue://q", 1)]).wait()
    with sqlite3.connect(tmp_path / DATABASE_NAME) as inspector:
        assert inspector.execute("SELECT count(*) FROM messages").fetchone() == (0,)
    store.close()


def _wait_until_reclaimed(directory: Path) -> None:
    """Until the store's background reclaim has deleted every consumed range (10 s at most)."""
    deadline = time.monotonic() + 10
    while True:
        with closing(sqlite3.connect(directory / DATABASE_NAME)) as inspector:
            (left,) = inspector.execute("SELECT count(*) FROM consumed").fetchone()
        if not left:
            return
        assert time.monotonic() < deadline, f"{left} consumed ranges not reclaimed in 10 s"
        time.sleep(0.01)


def test_consumed_ranges_delete_exactly_the_messages_left_without_references(
    tmp_path: Path,
) -> None:
    # Long runs are deleted by one range statement each: a topic's messages in such a run that
    # another subscription still holds must stay (their count drops), and so must messages next
    # to the run and those of a gap inside it.
    store = SQLiteStore(tmp_path)
    store.submit(
        [
            AppendMessage("queue://q", seq, TextMessage(str(seq)), ("queue://q",))
            for seq in range(1, 201)
            if seq != 150
        ]
    ).wait()
    store.submit(
        [
            AppendMessage("topic://t", seq, TextMessage(str(seq)), ("a", "b"))
            for seq in range(1, 101)
        ]
    ).wait()

    def remaining(log: str) -> list[tuple[int, int]]:
        _wait_until_reclaimed(tmp_path)
        with closing(sqlite3.connect(tmp_path / DATABASE_NAME)) as inspector:
            query = "SELECT seq, refs FROM messages WHERE log = ? ORDER BY seq"
            return inspector.execute(query, (log,)).fetchall()

    store.submit([RemoveRange("queue://q", 11, 190), RemoveRange("a", 1, 60)]).wait()
    assert [seq for seq, _ in remaining("queue://q")] == [*range(1, 11), *range(191, 201)]
    assert remaining("topic://t") == [(seq, 2 if seq > 60 else 1) for seq in range(1, 101)]
    store.submit([RemoveRange("b", 1, 80), RemoveRange("a", 61, 100)]).wait()
    assert remaining("topic://t") == [(seq, 1) for seq in range(81, 101)]
    store.submit([RemoveRange("b", 81, 100), RemoveRange("queue://q", 1, 200)]).wait()
    assert remaining("topic://t") == remaining("queue://q") == []
    store.close()


def test_concurrent_batches_share_commits(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    commits = []
    original = store._commit_group

    def counting(group):  # type: ignore[no-untyped-def]
        commits.append(len(group))
        original(group)

    store._commit_group = counting  # type: ignore[method-assign]
    lock = threading.Lock()
    sequence = iter(range(1, 10_001))
    barrier = threading.Barrier(16)

    def sender() -> None:
        barrier.wait(timeout=10)
        for _ in range(50):
            with lock:
                seq = next(sequence)
                completion = store.submit(
                    [AppendMessage("queue://q", seq, TextMessage("x"), ("queue://q",))]
                )
            completion.wait()

    threads = [threading.Thread(target=sender) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sum(commits) == 800
    assert len(commits) < 800, "16 concurrent senders never shared a commit"
    store.close()


def test_fsync_per_batch_mode_commits_each_batch_alone(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, fsync_per_batch=True)
    commits = []
    original = store._commit_group

    def counting(group):  # type: ignore[no-untyped-def]
        commits.append(len(group))
        original(group)

    store._commit_group = counting  # type: ignore[method-assign]
    completions = [
        store.submit([AppendMessage("queue://q", seq, TextMessage("x"), ("queue://q",))])
        for seq in range(1, 51)
    ]
    for completion in completions:
        completion.wait()
    assert commits == [1] * 50
    store.close()


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    SQLiteStore(tmp_path).close()
    with sqlite3.connect(tmp_path / DATABASE_NAME) as database:
        database.execute("PRAGMA user_version=99")
    with pytest.raises(IllegalStateException, match="schema version 99"):
        SQLiteStore(tmp_path)


def test_an_empty_batch_is_a_barrier_that_writes_nothing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    original = store._commit_group

    def slow(group):  # type: ignore[no-untyped-def]
        if any(batch for batch, _ in group):
            time.sleep(0.05)  # a slow disk: the barrier must still wait for these
        original(group)

    store._commit_group = slow  # type: ignore[method-assign]
    for seq in range(1, 201):
        store.submit([AppendMessage("queue://q", seq, TextMessage("x"), ("queue://q",))])
    barrier = store.submit(())
    barrier.wait()
    assert len(store.read_entries("queue://q", 1, None, 1000)) == 200
    store.close()


def test_a_live_store_can_be_backed_up_and_the_copy_opened(tmp_path: Path) -> None:
    live = tmp_path / "live"
    store = SQLiteStore(live)
    for seq in range(1, 51):
        store.submit([AppendMessage("queue://q", seq, TextMessage(str(seq)), ("queue://q",))])
    store.submit(()).wait()
    copy = tmp_path / "copy"
    copy.mkdir()
    # What docs/storage.md shows: SQLite's online backup, while the broker keeps writing.
    with (
        closing(sqlite3.connect(live / DATABASE_NAME)) as source,
        closing(sqlite3.connect(copy / DATABASE_NAME)) as target,
    ):
        source.backup(target)
    store.submit([RemoveEntry("queue://q", 1)]).wait()
    store.close()
    restored = SQLiteStore(copy)
    assert [e.seq for e in restored.read_entries("queue://q", 1, None, 100)] == list(range(1, 51))
    restored.close()


def _one_group(store: SQLiteStore, batches: list[list[StoreOperation]]) -> list[Completion]:
    """Submit ``batches`` while the writer is held, so that they are written as one group."""
    held = threading.Event()
    groups: list[int] = []
    original = store._commit_group

    def holding(group):  # type: ignore[no-untyped-def]
        held.wait(10)
        groups.append(len(group))
        original(group)

    store._commit_group = holding  # type: ignore[method-assign]
    store.submit([AddDestination("queue://holder")])
    time.sleep(0.05)  # the writer takes the holder alone and waits in ``holding``
    completions = [store.submit(batch) for batch in batches]
    held.set()
    store.submit(()).wait()  # a barrier, in the same group
    assert groups[-1] == len(batches) + 1, f"not written as one group: {groups}"
    return completions


def test_a_group_writes_what_its_batches_would_one_by_one(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    record = DurableSubscriptionRecord("c:s", "c", "s", "topic://t", None, False, False)
    store.submit([SaveSubscription(record)]).wait()
    for seq in (1, 2):
        store.submit([AppendMessage("queue://q", seq, TextMessage(str(seq)), ("queue://q",))])
    store.submit([AppendMessage("topic://t", 1, TextMessage("t1"), ("c:s", "other"))]).wait()
    completions = _one_group(
        store,
        [
            # delivered, acknowledged: entries written before this group
            [SetDeliveryCount("queue://q", 1, 1)],
            [RemoveEntry("queue://q", 2), RemoveEntry("queue://q", 99)],
            # one reference of two released: the message stays
            [RemoveEntry("c:s", 1)],
            # sent, delivered, then acknowledged within the group: never written
            [AppendMessage("queue://q", 3, TextMessage("3"), ("queue://q",))],
            [SetDeliveryCount("queue://q", 3, 1)],
            [RemoveEntry("queue://q", 3)],
            # sent and delivered within the group
            [AppendMessage("queue://q", 4, TextMessage("4"), ("queue://q",))],
            [SetDeliveryCount("queue://q", 4, 2)],
            # another kind of operation between them
            [ReserveSequences("queue://q", 1000)],
            [AppendMessage("topic://t", 2, TextMessage("t2"), ("c:s", "other"))],
            [RemoveEntry("other", 2), RemoveEntry("other", 1)],
        ],
    )
    for completion in completions:
        completion.wait()
    entries = [
        (e.queue, e.seq, e.delivery_count) for e in store.read_entries("queue://q", 1, None, 9)
    ]
    assert entries == [("queue://q", 1, 1), ("queue://q", 4, 2)]
    assert [e.seq for e in store.read_entries("c:s", 1, None, 9)] == [2]
    assert store.read_entries("other", 1, None, 9) == []
    assert dict(store.load().last_sequences) == {"queue://q": 1000, "topic://t": 2}
    with sqlite3.connect(tmp_path / DATABASE_NAME) as inspector:
        stored = inspector.execute("SELECT log, seq, refs FROM messages ORDER BY log, seq")
        assert stored.fetchall() == [("queue://q", 1, 1), ("queue://q", 4, 1), ("topic://t", 2, 1)]
    store.close()


def test_a_failing_batch_in_a_group_fails_alone(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    completions = _one_group(
        store,
        [
            [AppendMessage("queue://q", 1, TextMessage("1"), ("queue://q",))],
            [AppendMessage("queue://q", 1, TextMessage("again"), ("queue://q",))],
            [AppendMessage("queue://q", 2, TextMessage("2"), ("queue://q",))],
        ],
    )
    completions[0].wait()
    with pytest.raises(IllegalStateException, match="not above"):
        completions[1].wait()
    completions[2].wait()
    assert [e.message.get_text() for e in store.read_entries("queue://q", 1, None, 9)] == ["1", "2"]  # type: ignore[attr-defined]
    # The writer's view of the last sequence survived the retry: 3 follows, 2 is refused.
    store.submit([AppendMessage("queue://q", 3, TextMessage("3"), ("queue://q",))]).wait()
    with pytest.raises(IllegalStateException, match="not above"):
        store.submit([AppendMessage("queue://q", 2, TextMessage("x"), ("queue://q",))]).wait()
    store.close()


def test_a_waiting_thread_and_a_callback_both_hear_of_the_commit(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    heard: list[str] = []
    completions = _one_group(
        store,
        [[AppendMessage("queue://q", seq, TextMessage("x"), ("queue://q",))] for seq in (1, 2)],
    )
    completions[0].call_when_done(lambda: heard.append("callback"))
    waiter = threading.Thread(target=lambda: (completions[1].wait(), heard.append("waiter")))
    waiter.start()
    waiter.join(10)
    assert sorted(heard) == ["callback", "waiter"]
    store.close()


def test_a_consumed_range_is_one_row_at_once_and_reclaimed_in_chunks_later(
    tmp_path: Path,
) -> None:
    # RemoveRange commits a row in ``consumed``; no read sees the range from then on, and the
    # writer deletes its entries and messages between groups, a chunk at a time, until the row
    # goes too.
    store = SQLiteStore(tmp_path)
    count = 2 * _RECLAIM_CHUNK + 7
    store.submit(
        [
            AppendMessage("queue://q", seq, TextMessage(str(seq)), ("queue://q",))
            for seq in range(1, count + 1)
        ]
    ).wait()
    store.submit([RemoveRange("queue://q", 2, count - 1)]).wait()
    assert store.read_sequences("queue://q", 1, 10) == [1, count]
    assert [e.seq for e in store.read_encoded_entries("queue://q", 1, None, 10)] == [1, count]
    _wait_until_reclaimed(tmp_path)
    with closing(sqlite3.connect(tmp_path / DATABASE_NAME)) as inspector:
        assert inspector.execute("SELECT seq FROM entries ORDER BY seq").fetchall() == [
            (1,),
            (count,),
        ]
        assert inspector.execute("SELECT count(*) FROM messages").fetchone() == (2,)
    store.close()


def test_consumed_ranges_left_by_a_closed_store_stay_consumed_and_are_reclaimed_on_open(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path)
    store.submit(
        [
            AppendMessage("queue://q", seq, TextMessage(str(seq)), ("queue://q",))
            for seq in range(1, 11)
        ]
    ).wait()
    store.close()
    with closing(sqlite3.connect(tmp_path / DATABASE_NAME)) as database:  # as a crash leaves it
        database.execute("INSERT INTO consumed VALUES ('queue://q', 3, 8)")
        database.commit()
    reopened = SQLiteStore(tmp_path)
    assert reopened.read_sequences("queue://q", 1, 100) == [1, 2, 9, 10]
    assert reopened.load().queues_with_entries == ("queue://q",)
    _wait_until_reclaimed(tmp_path)
    assert reopened.read_sequences("queue://q", 1, 100) == [1, 2, 9, 10]
    reopened.submit([RemoveRange("queue://q", 1, 10)]).wait()
    assert reopened.load().queues_with_entries == ()
    reopened.close()


def test_deleting_a_subscription_drops_its_consumed_ranges(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    record = DurableSubscriptionRecord("c:s", "c", "s", "topic://t", None, False, False)
    store.submit([SaveSubscription(record)]).wait()
    store.submit(
        [AppendMessage("topic://t", seq, TextMessage(str(seq)), ("c:s",)) for seq in range(1, 6)]
    ).wait()
    store.submit([RemoveRange("c:s", 1, 3), DeleteSubscription("c:s")]).wait()
    _wait_until_reclaimed(tmp_path)
    store.submit([SaveSubscription(record)]).wait()  # the same key again, and new messages
    store.submit(
        [AppendMessage("topic://t", seq, TextMessage(str(seq)), ("c:s",)) for seq in (6, 7)]
    ).wait()
    assert store.read_sequences("c:s", 1, 10) == [6, 7]
    with closing(sqlite3.connect(tmp_path / DATABASE_NAME)) as inspector:
        assert inspector.execute("SELECT count(*) FROM messages").fetchone() == (2,)
    store.close()


def _reopened_from(directory: Path, queue: str, older_schema: str) -> SQLiteStore:
    """A store holding the message "kept" in ``queue``, turned back into an older schema version
    by the SQL script ``older_schema``, opened again (so upgraded)."""
    store = SQLiteStore(directory)
    store.submit([AppendMessage(queue, 1, TextMessage("kept"), (queue,))]).wait()
    store.close()
    with closing(sqlite3.connect(directory / DATABASE_NAME)) as database:
        database.executescript(older_schema)
    return SQLiteStore(directory)


def test_a_store_of_schema_version_2_is_upgraded_to_4(tmp_path: Path) -> None:
    reopened = _reopened_from(
        tmp_path,
        "queue://q",
        "DROP VIEW live_entries; DROP TABLE consumed; PRAGMA user_version = 2;",
    )
    assert [e.message.get_text() for e in reopened.read_entries("queue://q", 1, None, 5)] == [  # type: ignore[attr-defined]
        "kept"
    ]
    reopened.submit([RemoveRange("queue://q", 1, 1)]).wait()
    assert reopened.read_sequences("queue://q", 1, 5) == []
    reopened.close()
    with closing(sqlite3.connect(tmp_path / DATABASE_NAME)) as database:
        assert database.execute("PRAGMA user_version").fetchone() == (4,)


def test_a_store_of_schema_version_3_is_upgraded_to_4_and_then_moves_entries(
    tmp_path: Path,
) -> None:
    reopened = _reopened_from(
        tmp_path,
        "queue://s",
        "ALTER TABLE entries DROP COLUMN message_seq; PRAGMA user_version = 3;",
    )
    reopened.submit([MoveEntries("queue://s", 1, 1, "queue://q", 1)]).wait()
    assert [e.message.get_text() for e in reopened.read_entries("queue://q", 1, None, 5)] == [  # type: ignore[attr-defined]
        "kept"
    ]
    reopened.close()
    with closing(sqlite3.connect(tmp_path / DATABASE_NAME)) as database:
        assert database.execute("PRAGMA user_version").fetchone() == (4,)


def test_moved_messages_are_written_once_survive_a_reopen_and_go_when_consumed(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path)
    store.submit(
        [
            AppendMessage("queue://s", seq, TextMessage(f"m{seq}"), ("queue://s",))
            for seq in (1, 2, 3)
        ]
    ).wait()
    store.submit([MoveEntries("queue://s", 1, 3, "queue://q", 1)]).wait()
    with closing(sqlite3.connect(tmp_path / DATABASE_NAME)) as inspector:
        # Not a byte of a message moved: they are where they were staged.
        assert inspector.execute("SELECT log, seq FROM messages ORDER BY seq").fetchall() == [
            ("queue://s", 1),
            ("queue://s", 2),
            ("queue://s", 3),
        ]
    store.close()
    reopened = SQLiteStore(tmp_path)
    assert reopened.load().queues_with_entries == ("queue://q",)
    assert [e.message.get_text() for e in reopened.read_entries("queue://q", 1, None, 5)] == [  # type: ignore[attr-defined]
        "m1",
        "m2",
        "m3",
    ]
    reopened.submit([RemoveEntry("queue://q", 2)]).wait()
    reopened.submit([RemoveRange("queue://q", 1, 3)]).wait()
    deadline = time.monotonic() + 10
    with closing(sqlite3.connect(tmp_path / DATABASE_NAME)) as inspector:
        while inspector.execute("SELECT count(*) FROM messages").fetchone() != (0,):
            assert time.monotonic() < deadline, "the consumed range was never reclaimed"
            time.sleep(0.05)
    reopened.close()


def test_a_slow_commit_is_logged_naming_the_file_and_the_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Every commit counts as slow here; the line comes at most once per interval.
    monkeypatch.setattr("jms.store.sqlite.SLOW_COMMIT_S", 0.0)
    store = SQLiteStore(tmp_path)
    with caplog.at_level(logging.WARNING, logger="jms.store.sqlite"):
        for seq in (1, 2, 3):
            store.submit([AppendMessage("queue://q", seq, TextMessage("a"), ("queue://q",))]).wait()
    store.close()
    slow = [r.getMessage() for r in caplog.records if "slow store commit" in r.getMessage()]
    assert len(slow) == 1, slow
    assert str(tmp_path / DATABASE_NAME) in slow[0]
    assert re.search(r"1 batch\(es\) took \d+\.\d\d s", slow[0])


def test_a_file_a_killed_checkpoint_left_short_opens_from_its_log_and_without_it_is_refused(
    tmp_path: Path,
) -> None:
    """A checkpoint writes page 1 (with the new page count) before the pages that lengthen the
    file: killed between the two, it leaves a file shorter than its header says while the
    write-ahead log still holds the missing pages. That is a store SQLite recovers, not a
    truncated copy; the same short file without its log is one."""
    store = SQLiteStore(tmp_path / "live")
    store.submit([AppendMessage("queue://q", 1, TextMessage("old"), ("queue://q",))]).wait()
    store.close()  # checkpointed: the file holds everything, the log is gone
    database = tmp_path / "live" / DATABASE_NAME
    with closing(sqlite3.connect(database, isolation_level=None)) as writer:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("BEGIN")
        writer.executemany(
            "INSERT INTO messages (log, seq, refs, data) VALUES ('queue://filler', ?, 0, ?)",
            [(seq, bytes(2000)) for seq in range(1, 40)],
        )
        writer.execute("COMMIT")
        crashed = tmp_path / "crashed"
        crashed.mkdir()
        for name in (DATABASE_NAME, DATABASE_NAME + "-wal"):
            (crashed / name).write_bytes((database.parent / name).read_bytes())
    copy = crashed / DATABASE_NAME
    data = bytearray(copy.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    data[28:32] = (len(data) // page_size + 3).to_bytes(4, "big")  # page 1 already checkpointed
    copy.write_bytes(bytes(data))

    reopened = SQLiteStore(crashed)
    assert [e.message.get_text() for e in reopened.read_entries("queue://q", 1, None, 5)] == [  # type: ignore[attr-defined]
        "old"
    ]
    reopened.close()

    copy.write_bytes(bytes(data))  # the short file again, its log gone (closing checkpointed)
    (crashed / (DATABASE_NAME + "-wal")).unlink(missing_ok=True)
    with pytest.raises(IllegalStateException, match="is truncated"):
        SQLiteStore(crashed)
