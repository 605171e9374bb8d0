"""The ``MessageStore`` contract (jms.store.base), held by every implementation alike."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jms.errors import IllegalStateException
from jms.message import TextMessage
from jms.message.codec import decode, encode
from jms.store import (
    AddDestination,
    AppendEncodedRun,
    AppendMessage,
    DeleteSubscription,
    DurableSubscriptionRecord,
    EncodedEntry,
    MemoryStore,
    MessageStore,
    MoveEntries,
    RemoveEntry,
    RemoveRange,
    ReserveSequences,
    SaveSubscription,
    SetDeliveryCount,
)
from jms.store.sqlite import SQLiteStore
from jms.types import Double

StoreFactory = Callable[[], MessageStore]


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MessageStore]:
    opened: MessageStore
    if request.param == "memory":
        opened = MemoryStore()
    elif request.param == "sqlite":
        opened = SQLiteStore(tmp_path)
    else:
        from jms.store.postgresql import PostgreSQLStore

        opened = PostgreSQLStore(request.getfixturevalue("postgresql_url"))
    yield opened
    opened.close()


def _message(text: str) -> TextMessage:
    message = TextMessage(text)
    message.set_jms_message_id(f"ID:{text}")
    return message


def _texts(store: MessageStore, queue: str, start: int = 1, end: int | None = None) -> list[str]:
    return [entry.message.get_text() for entry in store.read_entries(queue, start, end, 1000)]  # type: ignore[attr-defined]


def test_append_then_read_in_sequence_order(store: MessageStore) -> None:
    for seq in (1, 2, 3):
        store.submit([AppendMessage("queue://q", seq, _message(f"m{seq}"), ("queue://q",))]).wait()
    assert _texts(store, "queue://q") == ["m1", "m2", "m3"]
    assert _texts(store, "queue://q", 2) == ["m2", "m3"]
    assert _texts(store, "queue://q", 1, 2) == ["m1", "m2"]
    assert [e.seq for e in store.read_entries("queue://q", 1, None, 2)] == [1, 2]


def test_a_run_of_encodings_reads_back_as_its_messages_numbered_from_its_first(
    store: MessageStore,
) -> None:
    """Staged messages reach the store as a run of encodings (the broker checked them without
    decoding them): every store reads them back as those messages, and as those bytes."""
    data = [encode(_message(f"staged{n}")) for n in range(3)]
    store.submit([AppendEncodedRun("queue://s", 5, data, ("queue://s",))]).wait()
    assert _texts(store, "queue://s") == ["staged0", "staged1", "staged2"]
    encoded = store.read_encoded_entries("queue://s", 1, None, 10)
    assert [(entry.seq, entry.data) for entry in encoded] == list(zip((5, 6, 7), data, strict=True))
    assert store.load().last_sequences["queue://s"] == 7
    store.submit([AppendMessage("queue://s", 8, _message("after"), ("queue://s",))]).wait()
    assert _texts(store, "queue://s", 7) == ["staged2", "after"]


def test_a_run_applies_in_order_with_the_sends_and_acknowledgements_around_it(
    store: MessageStore,
) -> None:
    data = [encode(_message(f"r{n}")) for n in range(3)]
    store.submit(
        [
            AppendMessage("queue://s", 1, _message("before"), ("queue://s",)),
            RemoveEntry("queue://s", 1),
            AppendEncodedRun("queue://s", 2, data, ("queue://s",)),
            RemoveEntry("queue://s", 3),
            SetDeliveryCount("queue://s", 4, 2),
            AppendMessage("queue://s", 5, _message("after"), ("queue://s",)),
        ]
    ).wait()
    assert _texts(store, "queue://s") == ["r0", "r2", "after"]
    assert [entry.delivery_count for entry in store.read_entries("queue://s", 1, None, 10)] == [
        0,
        2,
        0,
    ]


def test_a_run_in_two_queues_keeps_each_message_until_both_entries_go(
    store: MessageStore,
) -> None:
    data = [encode(_message(f"t{n}")) for n in range(2)]
    store.submit([AppendEncodedRun("topic://t", 1, data, ("sub-a", "sub-b"))]).wait()
    store.submit([RemoveEntry("sub-a", 1), RemoveEntry("sub-a", 2)]).wait()
    assert _texts(store, "sub-b") == ["t0", "t1"]
    assert _texts(store, "sub-a") == []


def test_a_run_not_above_its_logs_last_number_is_refused_with_its_batch(
    store: MessageStore,
) -> None:
    store.submit([AppendMessage("queue://s", 3, _message("m3"), ("queue://s",))]).wait()
    with pytest.raises(
        IllegalStateException, match="sequence 3 of queue://s is not above the last one, 3"
    ):
        store.submit(
            [
                AppendMessage("queue://other", 1, _message("o1"), ("queue://other",)),
                AppendEncodedRun("queue://s", 3, [encode(_message("late"))], ("queue://s",)),
            ]
        ).wait()
    assert _texts(store, "queue://s") == ["m3"]
    assert _texts(store, "queue://other") == []
    store.submit(
        [AppendEncodedRun("queue://s", 4, [encode(_message("m4"))], ("queue://s",))]
    ).wait()
    assert _texts(store, "queue://s") == ["m3", "m4"]


def test_a_run_holds_at_least_one_message() -> None:
    with pytest.raises(ValueError, match="a run appended to queue://s at 1 holds no message"):
        AppendEncodedRun("queue://s", 1, [], ("queue://s",))


def test_entries_keep_message_and_delivery_count(store: MessageStore) -> None:
    message = _message("x")
    message.set_int_property("weight", 3000)
    store.submit([AppendMessage("queue://q", 1, message, ("queue://q",))]).wait()
    store.submit([SetDeliveryCount("queue://q", 1, 3)]).wait()
    (entry,) = store.read_entries("queue://q", 1, None, 10)
    assert (entry.queue, entry.log, entry.seq, entry.delivery_count) == (
        "queue://q",
        "queue://q",
        1,
        3,
    )
    assert entry.message.get_int_property("weight") == 3000


def test_remove_entry_acknowledges(store: MessageStore) -> None:
    for seq in (1, 2):
        store.submit([AppendMessage("queue://q", seq, _message(f"m{seq}"), ("queue://q",))]).wait()
    store.submit([RemoveEntry("queue://q", 1)]).wait()
    assert _texts(store, "queue://q") == ["m2"]


def test_one_message_many_subscriptions_lives_until_the_last_reference(store: MessageStore) -> None:
    subs = ("sub-a", "sub-b")
    for key in subs:
        store.submit(
            [
                SaveSubscription(
                    DurableSubscriptionRecord(key, "c1", key, "topic://t", None, False, False)
                )
            ]
        ).wait()
    store.submit([AppendMessage("topic://t", 1, _message("news"), subs)]).wait()
    store.submit([RemoveEntry("sub-a", 1)]).wait()
    assert _texts(store, "sub-a") == []
    assert _texts(store, "sub-b") == ["news"]
    store.submit([RemoveEntry("sub-b", 1)]).wait()
    assert store.load().queues_with_entries == ()


def test_sequences_are_remembered_even_without_entries(store: MessageStore) -> None:
    store.submit([AppendMessage("topic://t", 7, _message("nobody listens"), ())]).wait()
    assert store.load().last_sequences == {"topic://t": 7}


def test_a_sequence_that_does_not_grow_is_refused(store: MessageStore) -> None:
    store.submit([AppendMessage("queue://q", 5, _message("a"), ("queue://q",))]).wait()
    with pytest.raises(IllegalStateException, match="not above"):
        store.submit([AppendMessage("queue://q", 5, _message("b"), ("queue://q",))]).wait()


def test_a_failing_batch_applies_nothing(store: MessageStore) -> None:
    store.submit([AppendMessage("queue://q", 5, _message("a"), ("queue://q",))]).wait()
    bad_batch = [
        AddDestination("queue://other"),
        AppendMessage("queue://q", 6, _message("b"), ("queue://q",)),
        AppendMessage("queue://q", 6, _message("c"), ("queue://q",)),
    ]
    with pytest.raises(IllegalStateException):
        store.submit(bad_batch).wait()
    assert _texts(store, "queue://q") == ["a"]
    assert store.load().destinations == ()
    store.submit([AppendMessage("queue://q", 6, _message("d"), ("queue://q",))]).wait()
    assert _texts(store, "queue://q") == ["a", "d"]


def _stage(store: MessageStore, texts: list[str], first_seq: int = 1) -> None:
    encodings = [encode(_message(text)) for text in texts]
    store.submit(
        [AppendEncodedRun("queue://staging", first_seq, encodings, ("queue://staging",))]
    ).wait()


def test_moved_entries_are_the_targets_under_new_numbers_with_their_messages_and_counts(
    store: MessageStore,
) -> None:
    store.submit([AppendMessage("queue://out", 1, _message("before"), ("queue://out",))]).wait()
    _stage(store, ["orphan", "s1", "s2", "s3", "later"])
    store.submit([SetDeliveryCount("queue://staging", 3, 2)]).wait()
    store.submit([MoveEntries("queue://staging", 2, 4, "queue://out", 8)]).wait()
    assert _texts(store, "queue://out") == ["before", "s1", "s2", "s3"]
    moved = store.read_entries("queue://out", 2, None, 10)
    assert [(e.seq, e.delivery_count) for e in moved] == [(8, 0), (9, 2), (10, 0)]
    assert [e.data for e in store.read_encoded_entries("queue://out", 9, 9, 1)] == [
        encode(_message("s2"))
    ]
    assert _texts(store, "queue://staging") == ["orphan", "later"]
    assert store.read_sequences("queue://staging", 1, 10) == [1, 5]
    assert store.load().last_sequences["queue://out"] == 10
    with pytest.raises(IllegalStateException, match="not above"):
        store.submit([AppendMessage("queue://out", 10, _message("x"), ("queue://out",))]).wait()
    store.submit([AppendMessage("queue://out", 11, _message("after"), ("queue://out",))]).wait()
    store.submit([RemoveEntry("queue://out", 9), RemoveRange("queue://out", 1, 8)]).wait()
    assert _texts(store, "queue://out") == ["s3", "after"]
    # The staging log's numbers are its own still: a later staged message goes above them.
    _stage(store, ["s6"], 6)
    assert _texts(store, "queue://staging") == ["orphan", "later", "s6"]


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        (MoveEntries("queue://staging", 1, 4, "queue://out", 5), "3 of the 4 are held"),
        (MoveEntries("queue://staging", 1, 3, "queue://out", 2), "not above the last number"),
    ],
    ids=["a-number-missing", "not-above-the-target-log"],
)
def test_a_move_that_cannot_be_made_fails_its_whole_batch(
    store: MessageStore, move: MoveEntries, reason: str
) -> None:
    store.submit([AppendMessage("queue://out", 2, _message("before"), ("queue://out",))]).wait()
    _stage(store, ["s1", "s2", "s3"])
    with pytest.raises(IllegalStateException, match=reason):
        store.submit([AddDestination("queue://other"), move]).wait()
    assert _texts(store, "queue://out") == ["before"]
    assert _texts(store, "queue://staging") == ["s1", "s2", "s3"]
    assert "queue://other" not in store.load().destinations
    store.submit([MoveEntries("queue://staging", 1, 3, "queue://out", 3)]).wait()
    assert _texts(store, "queue://out") == ["before", "s1", "s2", "s3"]


def test_a_consumed_range_is_not_moved(store: MessageStore) -> None:
    _stage(store, ["s1", "s2", "s3"])
    store.submit([RemoveRange("queue://staging", 2, 2)]).wait()
    with pytest.raises(IllegalStateException, match="2 of the 3 are held"):
        store.submit([MoveEntries("queue://staging", 1, 3, "queue://out", 1)]).wait()
    assert _texts(store, "queue://staging") == ["s1", "s3"]
    assert _texts(store, "queue://out") == []


def test_subscriptions_and_destinations_are_loaded(store: MessageStore) -> None:
    record = DurableSubscriptionRecord(
        "c1:s", "c1", "s", "topic://t", "color = 'blue'", True, False
    )
    store.submit(
        [AddDestination("queue://q"), AddDestination("queue://q"), SaveSubscription(record)]
    ).wait()
    contents = store.load()
    assert contents.destinations == ("queue://q",)
    assert contents.subscriptions == (record,)
    with pytest.raises(IllegalStateException, match="already exists"):
        store.submit([SaveSubscription(record)]).wait()


def test_deleting_a_subscription_drops_its_entries(store: MessageStore) -> None:
    record = DurableSubscriptionRecord("k", None, "s", "topic://t", None, False, True)
    store.submit([SaveSubscription(record)]).wait()
    store.submit([AppendMessage("topic://t", 1, _message("x"), ("k",))]).wait()
    store.submit([DeleteSubscription("k")]).wait()
    contents = store.load()
    assert contents.subscriptions == ()
    assert contents.queues_with_entries == ()


def test_batches_apply_in_submission_order_across_threads(store: MessageStore) -> None:
    completions = []
    lock = threading.Lock()
    next_seq = iter(range(1, 401))

    def producer() -> None:
        for _ in range(100):
            with lock:  # the broker assigns sequences and submits under its lock, like this
                seq = next(next_seq)
                completions.append(
                    store.submit(
                        [AppendMessage("queue://q", seq, _message(str(seq)), ("queue://q",))]
                    )
                )

    threads = [threading.Thread(target=producer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    for completion in completions:
        completion.wait()
    assert [e.seq for e in store.read_entries("queue://q", 1, None, 1000)] == list(range(1, 401))


def test_closed_store_refuses_work(store: MessageStore) -> None:
    store.close()
    with pytest.raises(IllegalStateException, match="closed"):
        store.load()
    with pytest.raises(IllegalStateException, match="closed"):
        store.submit([AddDestination("queue://q")])


def test_remove_range_drops_the_entries_in_it_and_releases_their_messages(
    store: MessageStore,
) -> None:
    subs = ("sub-a", "sub-b")
    for key in subs:
        store.submit(
            [
                SaveSubscription(
                    DurableSubscriptionRecord(key, "c1", key, "topic://t", None, False, False)
                )
            ]
        ).wait()
    for seq in range(1, 6):
        store.submit([AppendMessage("topic://t", seq, _message(f"m{seq}"), subs)]).wait()
    store.submit([RemoveRange("sub-a", 2, 4)]).wait()
    assert _texts(store, "sub-a") == ["m1", "m5"]
    assert _texts(store, "sub-b") == ["m1", "m2", "m3", "m4", "m5"]
    store.submit([RemoveRange("sub-b", 1, 4)]).wait()
    assert _texts(store, "sub-b") == ["m5"]
    store.submit([RemoveRange("sub-a", 1, 10), RemoveRange("sub-b", 5, 5)]).wait()
    assert store.load().queues_with_entries == ()


def test_reserved_sequences_count_as_used_but_appends_only_need_to_grow(
    store: MessageStore,
) -> None:
    store.submit([AppendMessage("queue://q", 3, _message("a"), ("queue://q",))]).wait()
    store.submit([ReserveSequences("queue://q", 1000), ReserveSequences("topic://t", 50)]).wait()
    store.submit([ReserveSequences("queue://q", 500)]).wait()  # never lowers a reservation
    assert store.load().last_sequences == {"queue://q": 1000, "topic://t": 50}
    store.submit([AppendMessage("queue://q", 4, _message("b"), ("queue://q",))]).wait()
    store.submit([AppendMessage("queue://q", 1200, _message("c"), ("queue://q",))]).wait()
    assert store.load().last_sequences == {"queue://q": 1200, "topic://t": 50}


def test_read_sequences_lists_a_queue_without_its_messages(store: MessageStore) -> None:
    for seq in (2, 5, 7, 9):
        store.submit([AppendMessage("queue://q", seq, _message(str(seq)), ("queue://q",))]).wait()
    assert store.read_sequences("queue://q", 1, 100) == [2, 5, 7, 9]
    assert store.read_sequences("queue://q", 5, 2) == [5, 7]
    assert store.read_sequences("queue://other", 1, 100) == []


def test_a_returned_completion_is_done(store: MessageStore) -> None:
    completion = store.submit([AddDestination("queue://q")])
    completion.wait()
    assert completion.done()


def test_encoded_entries_are_the_codec_bytes_of_the_entries_read(store: MessageStore) -> None:
    messages = [_message(f"m{seq}") for seq in range(1, 6)]
    messages[2].set_jms_redelivered(True)  # as appended: the entry's count says the rest
    messages[3].set_double_property("weight", Double(2.5))
    for seq, message in enumerate(messages, 1):
        store.submit([AppendMessage("queue://q", seq, message, ("queue://q",))]).wait()
    store.submit([SetDeliveryCount("queue://q", 2, 3), RemoveEntry("queue://q", 4)]).wait()
    encoded = store.read_encoded_entries("queue://q", 2, 5, 2)
    assert encoded == [
        EncodedEntry(2, encode(messages[1]), 3),
        EncodedEntry(3, encode(messages[2]), 0),
    ]
    assert [entry.seq for entry in store.read_encoded_entries("queue://q", 3, None, 10)] == [3, 5]
    assert store.read_encoded_entries("queue://q", 6, None, 10) == []
    assert store.read_encoded_entries("queue://other", 1, None, 10) == []
    store.close()
    with pytest.raises(IllegalStateException):
        store.read_encoded_entries("queue://q", 1, None, 10)


def test_read_not_due_entries_finds_exactly_the_messages_a_browse_hides_until_later(
    store: MessageStore,
) -> None:
    # (JMSDeliveryTime, JMSExpiration) at now = 1000: a message is hidden until later when its
    # delivery time is after now (not at it) and it has not expired (expiration 0, or after now).
    # Negative times, which no producer stamps, are judged as numbers all the same.
    now = 1000
    times = {
        1: (0, 0),
        2: (1000, 0),  # due at now
        3: (1001, 0),  # hidden
        4: (5000, 1000),  # expired at now
        5: (5000, 1001),  # hidden
        6: (-5, 0),
        7: (5000, -3),  # expired long ago
        8: (2**62, 0),  # hidden
        9: (999, 2000),
    }
    for seq, (delivery_time, expiration) in times.items():
        message = _message(f"m{seq}")
        message.set_jms_delivery_time(delivery_time)
        message.set_jms_expiration(expiration)
        store.submit([AppendMessage("queue://q", seq, message, ("queue://q",))]).wait()

    def hidden(start: int, end: int | None, limit: int) -> list[int]:
        return [e.seq for e in store.read_not_due_entries("queue://q", start, end, now, limit)]

    assert hidden(1, None, 100) == [3, 5, 8]
    assert hidden(4, 7, 100) == [5]
    assert hidden(1, None, 2) == [3, 5]
    assert hidden(9, None, 100) == []
    assert hidden(1, None, 1) == [3]
    assert hidden(6, None, 1) == [8]  # what passes a store's own filter wrongly is not all
    (entry,) = store.read_not_due_entries("queue://q", 8, 8, now, 1)
    assert decode(entry.data).get_text() == "m8"  # type: ignore[attr-defined]
