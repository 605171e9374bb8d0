"""What only the PostgreSQL store promises: durability across reopen, one owner at a time through
the advisory lock (a standby waits for it), group commit, a versioned schema, and stopping at once
when its database session is lost. The ``MessageStore`` contract itself is
``test_store_contract.py``, run on this store too."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from jms.errors import (
    IllegalStateException,
    InvalidDestinationException,
    ResourceAllocationException,
)
from jms.message import BytesMessage, TextMessage, Topic
from jms.message.codec import decode
from jms.store import (
    AppendMessage,
    DurableSubscriptionRecord,
    RemoveEntry,
    ReserveSequences,
    SaveSubscription,
    SetDeliveryCount,
)
from jms.store.postgresql import (
    SCHEMA_VERSION,
    PostgreSQLSnapshot,
    PostgreSQLStore,
    describe_url,
)
from tests.postgresql_server import PASSWORD, PostgreSQLServer
from tests.store.test_sqlite_store import _one_group


def test_everything_survives_reopening(postgresql_url: str) -> None:
    store = PostgreSQLStore(postgresql_url)
    record = DurableSubscriptionRecord("c:s", "c", "s", "topic://t", None, False, False)
    message = BytesMessage()
    message.write_bytes(b"\x00\x01")
    store.submit([SaveSubscription(record)]).wait()
    store.submit([AppendMessage("topic://t", 3, message, ("c:s",))]).wait()
    store.submit([AppendMessage("queue://q", 1, TextMessage("a"), ("queue://q",))]).wait()
    store.submit([SetDeliveryCount("c:s", 3, 2)]).wait()
    store.close()

    reopened = PostgreSQLStore(postgresql_url)
    contents = reopened.load()
    assert contents.subscriptions == (record,)
    assert dict(contents.last_sequences) == {"topic://t": 3, "queue://q": 1}
    assert sorted(contents.queues_with_entries) == ["c:s", "queue://q"]
    (entry,) = reopened.read_entries("c:s", 1, None, 10)
    assert entry.delivery_count == 2
    assert entry.message.get_body(bytes) == b"\x00\x01"
    reopened.close()


def test_a_second_owner_is_refused_while_the_first_is_open(postgresql_url: str) -> None:
    first = PostgreSQLStore(postgresql_url)
    with pytest.raises(IllegalStateException, match="already open in another broker"):
        PostgreSQLStore(postgresql_url)
    first.close()
    PostgreSQLStore(postgresql_url).close()


def test_a_standby_waits_for_the_lock_and_takes_over_when_the_owner_closes(
    postgresql_url: str,
) -> None:
    first = PostgreSQLStore(postgresql_url)
    first.submit([AppendMessage("queue://q", 1, TextMessage("a"), ("queue://q",))]).wait()
    waiting = threading.Event()
    opened: list[PostgreSQLStore] = []
    standby = threading.Thread(
        target=lambda: opened.append(PostgreSQLStore(postgresql_url, on_standby=waiting.set))
    )
    standby.start()
    assert waiting.wait(10), "the standby never said it waits"
    time.sleep(0.3)
    assert not opened, "the standby opened the store while its owner had it"
    closed_at = time.monotonic()
    first.close()
    standby.join(10)
    assert opened, "the standby did not take over"
    assert time.monotonic() - closed_at < 2
    assert [e.message.get_text() for e in opened[0].read_entries("queue://q", 1, None, 9)] == ["a"]  # type: ignore[attr-defined]
    opened[0].close()


def test_a_standby_stops_waiting_when_told(postgresql_url: str) -> None:
    owner = PostgreSQLStore(postgresql_url)
    stop = threading.Event()
    stop.set()
    with pytest.raises(IllegalStateException, match="stopped waiting"):
        PostgreSQLStore(postgresql_url, on_standby=lambda: None, stop_waiting=stop)
    owner.close()


def test_a_lost_session_fails_every_batch_and_is_reported_at_once(
    postgresql_server: PostgreSQLServer, postgresql_url: str
) -> None:
    lost: list[Exception] = []
    heard = threading.Event()

    def on_lost(error: Exception) -> None:
        lost.append(error)
        heard.set()

    store = PostgreSQLStore(postgresql_url, on_lost=on_lost)
    store.submit([AppendMessage("queue://q", 1, TextMessage("a"), ("queue://q",))]).wait()
    cut_at = time.monotonic()
    assert postgresql_server.terminate_sessions(postgresql_url) >= 1
    assert heard.wait(5), "the store did not notice its session was terminated"
    assert time.monotonic() - cut_at < 1.0, "an idle store noticed the loss late"
    assert "lost the connection" in str(lost[0])
    with pytest.raises(ResourceAllocationException, match="lost the connection"):
        store.submit([AppendMessage("queue://q", 2, TextMessage("b"), ("queue://q",))]).wait()
    store.close()
    # The lock went with the session: another owner opens the store at once.
    PostgreSQLStore(postgresql_url).close()


def test_a_newer_schema_is_refused(postgresql_url: str) -> None:
    PostgreSQLStore(postgresql_url).close()
    with psycopg.connect(postgresql_url, autocommit=True) as database:
        database.execute("UPDATE jms.store_info SET schema_version = 99")
    with pytest.raises(IllegalStateException, match="schema version 99"):
        PostgreSQLStore(postgresql_url)


def test_the_tables_are_in_the_jms_schema_and_inspectable(postgresql_url: str) -> None:
    store = PostgreSQLStore(postgresql_url)
    store.submit([AppendMessage("queue://q", 1, TextMessage("a"), ("queue://q",))]).wait()
    store.submit([AppendMessage("queue://q", 2, TextMessage("b"), ("queue://q",))]).wait()
    store.submit([RemoveEntry("queue://q", 1)]).wait()
    with psycopg.connect(postgresql_url) as inspector:
        assert inspector.execute("SELECT schema_version FROM jms.store_info").fetchall() == [
            (SCHEMA_VERSION,)
        ]
        assert inspector.execute("SELECT queue, seq FROM jms.entries").fetchall() == [
            ("queue://q", 2)
        ]
        # An acknowledged message is deleted, not kept.
        assert inspector.execute("SELECT seq FROM jms.messages").fetchall() == [(2,)]
    store.close()


def test_a_wrong_address_or_password_is_a_clear_error(
    postgresql_server: PostgreSQLServer,
) -> None:
    wrong = postgresql_server.url().replace(PASSWORD, "not-the-password")
    with pytest.raises(ResourceAllocationException, match="cannot connect to the store") as info:
        PostgreSQLStore(wrong)
    assert "not-the-password" not in str(info.value)


def test_the_password_is_left_out_of_descriptions() -> None:
    assert describe_url("postgresql://jms:s3cret@db.example:5432/jms") == (
        "postgresql://jms@db.example:5432/jms"
    )
    assert describe_url("postgresql://db.example/jms") == "postgresql://db.example/jms"


def test_concurrent_batches_share_commits(postgresql_url: str) -> None:
    store = PostgreSQLStore(postgresql_url)
    commits: list[int] = []
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
        for _ in range(20):
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
    assert sum(commits) == 320
    assert len(commits) < 320, "16 concurrent senders never shared a commit"
    store.close()


def test_a_group_writes_what_its_batches_would_one_by_one(postgresql_url: str) -> None:
    store = PostgreSQLStore(postgresql_url)
    record = DurableSubscriptionRecord("c:s", "c", "s", "topic://t", None, False, False)
    store.submit([SaveSubscription(record)]).wait()
    for seq in (1, 2):
        store.submit([AppendMessage("queue://q", seq, TextMessage(str(seq)), ("queue://q",))])
    store.submit([AppendMessage("topic://t", 1, TextMessage("t1"), ("c:s", "other"))]).wait()
    completions = _one_group(
        store,  # type: ignore[arg-type]
        [
            [SetDeliveryCount("queue://q", 1, 1)],
            [RemoveEntry("queue://q", 2), RemoveEntry("queue://q", 99)],
            [RemoveEntry("c:s", 1)],
            [AppendMessage("queue://q", 3, TextMessage("3"), ("queue://q",))],
            [SetDeliveryCount("queue://q", 3, 1)],
            [RemoveEntry("queue://q", 3)],
            [AppendMessage("queue://q", 4, TextMessage("4"), ("queue://q",))],
            [SetDeliveryCount("queue://q", 4, 2)],
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
    with psycopg.connect(postgresql_url) as inspector:
        stored = inspector.execute("SELECT log, seq, refs FROM jms.messages ORDER BY log, seq")
        assert stored.fetchall() == [("queue://q", 1, 1), ("queue://q", 4, 1), ("topic://t", 2, 1)]
    store.close()


def test_a_failing_batch_in_a_group_fails_alone(postgresql_url: str) -> None:
    store = PostgreSQLStore(postgresql_url)
    completions = _one_group(
        store,  # type: ignore[arg-type]
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
    store.submit([AppendMessage("queue://q", 3, TextMessage("3"), ("queue://q",))]).wait()
    with pytest.raises(IllegalStateException, match="not above"):
        store.submit([AppendMessage("queue://q", 2, TextMessage("x"), ("queue://q",))]).wait()
    store.close()


def test_a_snapshot_reads_a_live_store_as_the_broker_would_show_it(postgresql_url: str) -> None:
    store = PostgreSQLStore(postgresql_url)
    record = DurableSubscriptionRecord("c:s", "c", "s", "topic://t", None, False, False)
    store.submit([SaveSubscription(record)]).wait()
    for seq in (1, 2, 3):
        store.submit([AppendMessage("topic://t", seq, TextMessage(str(seq)), ("c:s",))]).wait()
    store.submit([SetDeliveryCount("c:s", 2, 1)]).wait()
    with PostgreSQLSnapshot(postgresql_url) as snapshot:  # the store stays open meanwhile
        key = snapshot.queue_key(Topic("t"), "s", "c")
        assert key == "c:s"
        assert snapshot.sequence_bounds(key) == (1, 3)
        assert snapshot.sequence_bounds("queue://none") is None
        read = [(seq, decode(data)) for seq, data in snapshot.read_encoded(key, 2, 3, 10)]
        assert [(seq, m.get_text(), m.get_jms_redelivered()) for seq, m in read] == [  # type: ignore[attr-defined]
            (2, "2", True),
            (3, "3", False),
        ]
        with pytest.raises(InvalidDestinationException, match="it is on topic://t"):
            snapshot.queue_key(Topic("other"), "s", "c")
        with pytest.raises(InvalidDestinationException, match="no durable subscription 'x'"):
            snapshot.queue_key(Topic("t"), "x", "c")
    store.close()
    with psycopg.connect(postgresql_url, autocommit=True) as database:
        database.execute("UPDATE jms.store_info SET schema_version = 7")
    with pytest.raises(IllegalStateException, match="schema version 7"):
        PostgreSQLSnapshot(postgresql_url)


def test_a_snapshot_of_a_database_without_a_store_says_so(postgresql_url: str) -> None:
    with pytest.raises(IllegalStateException, match="holds no jms store"):
        PostgreSQLSnapshot(postgresql_url)
