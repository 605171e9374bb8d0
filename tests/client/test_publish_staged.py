"""``Session.stage_encoded`` and ``Session.publish_staged``: staged messages published by one
atomic, idempotent broker request (``Broker.publish_staged``; run over STOMP too, by
tests/client_over_stomp)."""

from __future__ import annotations

import threading

import pytest

from jms.broker import Broker, DestinationPolicy
from jms.client import BatchMarker, Connection, Session, StagedRange
from jms.errors import (
    IllegalStateException,
    InvalidDestinationException,
    JMSException,
    MessageFormatException,
    ResourceAllocationException,
)
from jms.message import DeliveryMode, Message, Queue, TemporaryQueue, TextMessage, Topic
from jms.message.codec import encode

STAGING = Queue("staging.p0")
OTHER_STAGING = Queue("staging.p1")
MARKERS = Queue("markers")


OUT = Queue("out")


def _encoded(
    texts: list[str], to: Queue | Topic = OUT, mode: DeliveryMode = DeliveryMode.PERSISTENT
) -> list[bytes]:
    encoded = []
    for text in texts:
        message = TextMessage(text)
        message.set_jms_destination(to)
        message.set_jms_delivery_mode(mode)
        message.set_string_property("text", text)
        message.set_jms_priority(7)
        encoded.append(encode(message))
    return encoded


def _stage(session: Session, queue: Queue, texts: list[str], to: str = "out") -> StagedRange:
    """Stage one TextMessage per text for queue ``to``, in one request: its range."""
    (staged,) = session.stage_encoded(queue, _encoded(texts, Queue(to)))
    return staged


def _texts(session: Session, queue: str) -> list[str]:
    return [m.get_text() for m in session.create_browser(Queue(queue))]  # type: ignore[attr-defined]


def _held(session: Session, queue: Queue) -> int:
    return sum(len(page) for page in session.create_sequence_reader(queue).read(1))


def test_the_named_ranges_are_published_in_order_and_the_staging_queues_consumed(
    session: Session,
) -> None:
    first = _stage(session, STAGING, ["a1", "a2"])
    _stage(session, STAGING, ["orphan"])  # staged by an attempt that failed: not named
    third = _stage(session, STAGING, ["a3"])
    other = _stage(session, OTHER_STAGING, ["b1", "b2"])
    assert (first.first_seq, first.last_seq, third.first_seq, third.last_seq) == (1, 2, 4, 4)
    assert session.publish_staged([first, third, other]) == 5
    published = list(session.create_browser(Queue("out")))
    assert [m.get_text() for m in published] == ["a1", "a2", "a3", "b1", "b2"]  # type: ignore[attr-defined]
    assert all(isinstance(m, TextMessage) for m in published)
    assert [m.get_string_property("text") for m in published] == ["a1", "a2", "a3", "b1", "b2"]
    assert {m.get_jms_priority() for m in published} == {7}
    assert {m.get_jms_delivery_mode() for m in published} == {DeliveryMode.PERSISTENT}
    assert {m.get_jms_redelivered() for m in published} == {False}
    ids = [m.get_jms_message_id() for m in published]
    assert all(i is not None and i.startswith("ID:") for i in ids) and len(set(ids)) == 5
    assert all(m.get_jms_timestamp() > 0 for m in published)
    assert [sorted(m.get_property_names()) for m in published] == [["text"]] * 5
    assert _held(session, STAGING) == 0 and _held(session, OTHER_STAGING) == 0  # orphan too


def test_a_consumer_receives_a_published_batch_in_order(session: Session) -> None:
    consumer = session.create_consumer(Queue("out"))
    texts = [f"m{n}" for n in range(250)]
    assert session.publish_staged([_stage(session, STAGING, texts)]) == 250
    received = [consumer.receive(5000) for _ in texts]
    assert [m.get_text() for m in received if m is not None] == texts  # type: ignore[attr-defined]
    assert consumer.receive_no_wait() is None


def test_a_batch_of_queue_topic_and_non_persistent_messages_keeps_each_destinations_order(
    session: Session,
) -> None:
    subscriber = session.create_shared_durable_consumer(Topic("news"), "reader")
    ranges = session.stage_encoded(STAGING, _encoded(["q1", "q2"]))
    ranges += session.stage_encoded(STAGING, _encoded(["t1"], Topic("news")))
    ranges += session.stage_encoded(STAGING, _encoded(["n1"], mode=DeliveryMode.NON_PERSISTENT))
    ranges += session.stage_encoded(STAGING, _encoded(["q3"]))
    ranges += session.stage_encoded(STAGING, _encoded(["t2"], Topic("news")))
    assert session.publish_staged(ranges) == 6
    assert _texts(session, "out") == ["q1", "q2", "n1", "q3"]
    modes = [m.get_jms_delivery_mode() for m in session.create_browser(Queue("out"))]
    assert modes == [DeliveryMode.PERSISTENT] * 2 + [DeliveryMode.NON_PERSISTENT] + [
        DeliveryMode.PERSISTENT
    ]
    news = [subscriber.receive(5000) for _ in range(2)]
    assert [m.get_text() for m in news if m is not None] == ["t1", "t2"]  # type: ignore[attr-defined]


def test_concurrent_stage_requests_each_get_the_range_of_their_own_messages(
    session: Session, connection: Connection
) -> None:
    texts = {writer: [f"{writer}-{n}" for n in range(40)] for writer in ("a", "b", "c")}
    ranges: dict[str, list[StagedRange]] = {}

    def stage(writer: str) -> None:
        own = connection.create_session()
        ranges[writer] = [
            staged
            for start in range(0, 40, 10)
            for staged in own.stage_encoded(STAGING, _encoded(texts[writer][start : start + 10]))
        ]

    threads = [threading.Thread(target=stage, args=(writer,)) for writer in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    numbers = [
        seq
        for staged in ranges.values()
        for r in staged
        for seq in range(r.first_seq, r.last_seq + 1)
    ]
    assert sorted(numbers) == list(range(1, 121))
    assert session.publish_staged(ranges["b"]) == 40
    assert _texts(session, "out") == texts["b"]
    assert _held(session, STAGING) == 0  # a's and c's too: the queue is consumed whole


def test_a_marked_batch_is_published_once_and_only_the_newest_marker_stays(
    session: Session,
) -> None:
    staged = _stage(session, STAGING, ["one", "two"])
    assert session.publish_staged([staged], BatchMarker(MARKERS, 3)) == 2
    # The batch ran again (another attempt staged it again), and the publish was retried.
    staged = _stage(session, STAGING, ["one", "two"])
    assert session.publish_staged([staged], BatchMarker(MARKERS, 3)) == 0
    assert _held(session, STAGING) == 0  # the re-run's staged messages are consumed anyway
    older = _stage(session, STAGING, ["stale"])
    with pytest.raises(
        IllegalStateException,
        match=r"queue://markers marks batch 3 published, so batch 2 is not a run again of its "
        r"last batch .* Nothing was published",
    ):
        session.publish_staged([older], BatchMarker(MARKERS, 2))  # another writer's
    assert _held(session, STAGING) == 1  # refused whole: the next publish consumes it
    assert _texts(session, "out") == ["one", "two"]
    staged = _stage(session, STAGING, ["three"])
    assert session.publish_staged([staged], BatchMarker(MARKERS, 4)) == 1
    assert _texts(session, "out") == ["one", "two", "three"]
    markers = list(session.create_browser(MARKERS))
    assert [m.get_long_property("JMS_jms_SparkBatch") for m in markers] == [4]
    assert session.publish_staged([], BatchMarker(MARKERS, 5)) == 0  # an empty batch: a marker
    assert [m.get_long_property("JMS_jms_SparkBatch") for m in session.create_browser(MARKERS)] == [
        5
    ]


def test_a_missing_staged_message_publishes_nothing_and_says_which(session: Session) -> None:
    staged = _stage(session, STAGING, ["a1", "a2"])
    session.create_sequence_reader(STAGING).acknowledge_through(1)  # a1 lost
    with pytest.raises(
        JMSException,
        match=r"queue://staging\.p0 holds 1 of the 2 messages staged as numbers 1 to 2",
    ):
        session.publish_staged([staged], BatchMarker(MARKERS, 1))
    assert _texts(session, "out") == []
    assert list(session.create_browser(MARKERS)) == []
    assert _held(session, STAGING) == 1  # nothing consumed either
    with pytest.raises(JMSException, match="holds 1 of the 3 messages staged as numbers 2 to 4"):
        session.publish_staged([StagedRange(STAGING, 2, 4)])  # beyond what was staged
    assert session.publish_staged([StagedRange(STAGING, 2, 2)]) == 1
    assert _texts(session, "out") == ["a2"]


def test_one_bad_range_among_good_ones_publishes_none_of_them(session: Session) -> None:
    good = _stage(session, STAGING, ["a1"])
    _stage(session, OTHER_STAGING, ["b1"])
    with pytest.raises(JMSException, match="holds 0 of the 1 messages staged as numbers 2 to 2"):
        session.publish_staged([good, StagedRange(OTHER_STAGING, 2, 2)])
    assert _texts(session, "out") == []
    assert _held(session, STAGING) == 1 and _held(session, OTHER_STAGING) == 1


def test_a_stage_request_with_a_bad_message_is_refused_whole_naming_it(session: Session) -> None:
    good = _encoded(["fine"])
    with pytest.raises(MessageFormatException, match="staged message 1 is not a message"):
        session.stage_encoded(STAGING, [*good, b"not a message"])
    nowhere = TextMessage("no destination")
    with pytest.raises(
        InvalidDestinationException,
        match="staged message 2 has JMSDestination None: a staged message names the queue",
    ):
        session.stage_encoded(STAGING, [*good, *good, encode(nowhere)])
    assert _held(session, STAGING) == 0
    assert session.create_sequence_reader(STAGING).last_sequence() == 0


def test_many_megabytes_are_staged_and_published_whole(session: Session) -> None:
    texts = [f"{n:05}" + "x" * 1500 for n in range(4000)]  # 6 MB: frames of 4 MiB over STOMP
    ranges = session.stage_encoded(STAGING, _encoded(texts))
    assert ranges[0].first_seq == 1 and ranges[-1].last_seq == 4000
    assert sum(part.count for part in ranges) == 4000
    assert session.publish_staged([StagedRange(STAGING, 1, 4000)]) == 4000
    assert _texts(session, "out") == texts


def test_staged_messages_take_no_memory_until_published(session: Session, broker: Broker) -> None:
    before = broker.memory_stats().used
    _stage(session, STAGING, ["x" * 10_000] * 50)
    assert broker.memory_stats().used - before < 10_000
    (stats,) = [s for s in broker.stats() if s.name == str(STAGING)]
    assert (stats.depth, stats.paged) == (50, 50)


def test_headers_are_stamped_as_a_producer_sending_at_staging_would(session: Session) -> None:
    now = session.create_producer(Queue("clock"))
    now.send(session.create_message())
    (clock,) = session.create_browser(Queue("clock"))
    started = clock.get_jms_timestamp()
    perishable = Message()
    perishable.set_jms_destination(Queue("timed"))
    perishable.set_jms_expiration(started + 600_000)
    perishable.set_jms_delivery_mode(DeliveryMode.NON_PERSISTENT)
    perishable.set_jms_message_id("ID:old")
    perishable.set_jms_timestamp(1)
    perishable.set_jms_redelivered(True)
    ranges = session.stage_encoded(STAGING, [encode(perishable)])
    now.send(session.create_message())
    staged_by = list(session.create_browser(Queue("clock")))[-1].get_jms_timestamp()
    assert session.publish_staged(ranges) == 1
    (published,) = session.create_browser(Queue("timed"))
    assert published.get_jms_expiration() == started + 600_000
    assert published.get_jms_delivery_mode() == DeliveryMode.NON_PERSISTENT
    assert published.get_jms_message_id() not in (None, "ID:old")
    assert started <= published.get_jms_timestamp() <= staged_by
    assert published.get_jms_delivery_time() >= started
    assert published.get_jms_redelivered() is False


def test_bad_requests_are_refused_before_anything_is_sent(session: Session) -> None:
    with pytest.raises(ValueError, match="first_seq must be an int from 1"):
        StagedRange(STAGING, 0, 1)
    with pytest.raises(ValueError, match="a staged range ends at or after its start; got 3 to 2"):
        StagedRange(STAGING, 3, 2)
    with pytest.raises(ValueError, match="a staging queue must be a"):
        StagedRange(TemporaryQueue("t"), 1, 1)
    with pytest.raises(ValueError, match="batch_id must be an int"):
        BatchMarker(MARKERS, True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="staged message 1 is a str; encodings are bytes"):
        session.stage_encoded(STAGING, [b"", "text"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="a staging queue must be a"):
        session.stage_encoded(session.create_temporary_queue(), [b""])
    assert session.stage_encoded(STAGING, []) == []  # nothing to stage: no request
    assert _held(session, STAGING) == 0


def test_the_broker_refuses_an_empty_stage_request(session: Session, broker: Broker) -> None:
    with pytest.raises(ValueError, match="a stage request holds at least one message; got none"):
        broker.stage_encoded(1, STAGING, [])


def test_staging_is_not_bounded_by_max_backlog(session: Session, broker: Broker) -> None:
    """Found in review (28 November): a policy for every queue (``destination = "*"``) bounded
    the staging queues too, and the leftovers of one failed attempt then refused every later
    staging of the writer for good. Only the queues published to are bounded."""
    broker.set_policy(str(STAGING), DestinationPolicy(max_backlog=2))
    _stage(session, STAGING, ["left", "over", "by", "a failed attempt"])
    staged = _stage(session, STAGING, ["a", "b", "c"])
    assert session.publish_staged([staged]) == 3
    assert _texts(session, "out") == ["a", "b", "c"]
    assert _held(session, STAGING) == 0


def test_a_move_that_would_overfill_a_bounded_queue_publishes_nothing(
    session: Session, broker: Broker
) -> None:
    broker.set_policy("queue://out", DestinationPolicy(max_backlog=3))
    staged = _stage(session, STAGING, ["a", "b", "c", "d"])
    with pytest.raises(ResourceAllocationException, match="max_backlog is 3: cannot take 4 more"):
        session.publish_staged([staged])
    assert _texts(session, "out") == []
    assert _held(session, STAGING) == 4
