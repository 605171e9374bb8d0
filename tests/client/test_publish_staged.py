"""``Session.publish_staged``: staged messages published by one atomic, idempotent broker request
(``Broker.publish_staged``; run over STOMP too, by tests/client_over_stomp)."""

from __future__ import annotations

import pytest

from jms.broker import Broker, DestinationPolicy
from jms.client import BatchMarker, Session, StagedRange
from jms.errors import JMSException, MessageFormatException
from jms.message import DeliveryMode, Message, Queue, TemporaryQueue, TextMessage
from jms.message.codec import encode

STAGING = Queue("staging.p0")
OTHER_STAGING = Queue("staging.p1")
MARKERS = Queue("markers")


def _stage(session: Session, queue: Queue, tag: str, texts: list[str], to: str = "out") -> int:
    """Stage one TextMessage per text for queue ``to``; return the staging queue's last number."""
    encoded = []
    for text in texts:
        message = TextMessage(text)
        message.set_jms_destination(Queue(to))
        message.set_string_property("text", text)
        message.set_jms_priority(7)
        encoded.append(encode(message))
    session.stage_encoded(queue, tag, encoded)
    return session.create_sequence_reader(queue).last_sequence()


def _texts(session: Session, queue: str) -> list[str]:
    return [m.get_text() for m in session.create_browser(Queue(queue))]  # type: ignore[attr-defined]


def _held(session: Session, queue: Queue) -> int:
    return sum(len(page) for page in session.create_sequence_reader(queue).read(1))


def test_the_named_tags_messages_are_published_in_order_and_the_staging_queues_consumed(
    session: Session,
) -> None:
    _stage(session, STAGING, "a", ["a1", "a2"])
    _stage(session, STAGING, "failed", ["orphan"])
    first = _stage(session, STAGING, "a", ["a3"])
    second = _stage(session, OTHER_STAGING, "b", ["b1", "b2"])
    staged = [StagedRange(STAGING, "a", first, 3), StagedRange(OTHER_STAGING, "b", second, 2)]
    assert session.publish_staged(staged) == 5
    published = list(session.create_browser(Queue("out")))
    assert [m.get_text() for m in published] == ["a1", "a2", "a3", "b1", "b2"]  # type: ignore[attr-defined]
    assert all(isinstance(m, TextMessage) for m in published)
    assert [m.get_string_property("text") for m in published] == ["a1", "a2", "a3", "b1", "b2"]
    assert {m.get_jms_priority() for m in published} == {7}
    assert {m.get_jms_delivery_mode() for m in published} == {DeliveryMode.PERSISTENT}
    ids = [m.get_jms_message_id() for m in published]
    assert all(i is not None and i.startswith("ID:") for i in ids) and len(set(ids)) == 5
    assert all(m.get_jms_timestamp() > 0 for m in published)
    assert not any(m.property_exists("JMS_jms_SparkAttempt") for m in published)
    assert _held(session, STAGING) == 0 and _held(session, OTHER_STAGING) == 0  # orphan too


def test_a_marked_batch_is_published_once_and_only_the_newest_marker_stays(
    session: Session,
) -> None:
    through = _stage(session, STAGING, "run-1", ["one", "two"])
    assert (
        session.publish_staged([StagedRange(STAGING, "run-1", through, 2)], BatchMarker(MARKERS, 3))
        == 2
    )
    # The batch ran again (another attempt staged it again), and the publish was retried.
    through = _stage(session, STAGING, "run-2", ["one", "two"])
    assert (
        session.publish_staged([StagedRange(STAGING, "run-2", through, 2)], BatchMarker(MARKERS, 3))
        == 0
    )
    assert _held(session, STAGING) == 0  # the re-run's staged messages are consumed anyway
    assert session.publish_staged([], BatchMarker(MARKERS, 2)) == 0  # an older batch: nothing
    assert _texts(session, "out") == ["one", "two"]
    through = _stage(session, STAGING, "run-3", ["three"])
    assert (
        session.publish_staged([StagedRange(STAGING, "run-3", through, 1)], BatchMarker(MARKERS, 4))
        == 1
    )
    assert _texts(session, "out") == ["one", "two", "three"]
    markers = list(session.create_browser(MARKERS))
    assert [m.get_long_property("JMS_jms_SparkBatch") for m in markers] == [4]
    assert session.publish_staged([], BatchMarker(MARKERS, 5)) == 0  # an empty batch: a marker
    assert [m.get_long_property("JMS_jms_SparkBatch") for m in session.create_browser(MARKERS)] == [
        5
    ]


def test_a_missing_staged_message_publishes_nothing_and_says_which(session: Session) -> None:
    through = _stage(session, STAGING, "a", ["a1", "a2"])
    session.create_sequence_reader(STAGING).acknowledge_through(1)  # a1 lost
    with pytest.raises(
        JMSException,
        match=r"queue://staging\.p0 holds 1 of the 2 messages tagged 'a' up to number 2",
    ):
        session.publish_staged([StagedRange(STAGING, "a", through, 2)], BatchMarker(MARKERS, 1))
    assert _texts(session, "out") == []
    assert list(session.create_browser(MARKERS)) == []
    assert _held(session, STAGING) == 1  # nothing consumed either
    with pytest.raises(JMSException, match="holds 1 of the 3 messages"):  # a count too high
        session.publish_staged([StagedRange(STAGING, "a", through, 3)])
    with pytest.raises(JMSException, match="holds 0 of the 1 messages tagged 'a' up to number 1"):
        session.publish_staged([StagedRange(STAGING, "a", 1, 1)])  # a2 is beyond through_seq
    assert session.publish_staged([StagedRange(STAGING, "a", through, 1)]) == 1
    assert _texts(session, "out") == ["a2"]


def test_one_bad_range_among_good_ones_publishes_none_of_them(session: Session) -> None:
    good = _stage(session, STAGING, "a", ["a1"])
    _stage(session, OTHER_STAGING, "b", ["b1"])
    with pytest.raises(JMSException, match="holds 0 of the 1 messages tagged 'c'"):
        session.publish_staged(
            [StagedRange(STAGING, "a", good, 1), StagedRange(OTHER_STAGING, "c", 1, 1)]
        )
    assert _texts(session, "out") == []
    assert _held(session, STAGING) == 1 and _held(session, OTHER_STAGING) == 1


def test_a_staged_message_that_carries_no_message_is_refused(session: Session) -> None:
    session.stage_encoded(STAGING, "a", [b"not a message"])
    with pytest.raises(
        MessageFormatException,
        match=r"staged message 1 of queue://staging\.p0 does not carry a message",
    ):
        session.publish_staged([StagedRange(STAGING, "a", 1, 1)])
    wrong = session.create_text_message("text")
    wrong.set_string_property("JMS_jms_SparkAttempt", "b")
    session.create_producer(STAGING).send(wrong)
    with pytest.raises(MessageFormatException, match="is a TextMessage, not a staged message"):
        session.publish_staged([StagedRange(STAGING, "b", 2, 1)])
    assert _held(session, STAGING) == 2


def test_many_megabytes_are_staged_and_published_whole(session: Session) -> None:
    texts = [f"{n:05}" + "x" * 1500 for n in range(4000)]  # 6 MB: frames of 4 MiB over STOMP
    through = _stage(session, STAGING, "big", texts)
    assert through == 4000
    assert session.publish_staged([StagedRange(STAGING, "big", through, 4000)]) == 4000
    assert _texts(session, "out") == texts


def test_paged_out_staged_messages_are_published_in_order(session: Session, broker: Broker) -> None:
    broker.set_policy("queue://staging.>", DestinationPolicy(memory_window=4))
    through = _stage(session, STAGING, "a", [f"m{n}" for n in range(30)])
    _stage(session, STAGING, "other", ["orphan"])
    assert (
        session.publish_staged([StagedRange(STAGING, "a", through, 30)], BatchMarker(MARKERS, 0))
        == 30
    )
    assert _texts(session, "out") == [f"m{n}" for n in range(30)]
    assert _held(session, STAGING) == 1  # the orphan staged after through_seq stays


def test_headers_are_stamped_as_a_producer_sending_now_would(session: Session) -> None:
    now = session.create_producer(Queue("clock"))
    now.send(session.create_message())
    (clock,) = session.create_browser(Queue("clock"))
    started = clock.get_jms_timestamp()
    perishable = Message()
    perishable.set_jms_destination(Queue("timed"))
    perishable.set_jms_expiration(started + 600_000)
    perishable.set_jms_delivery_mode(DeliveryMode.NON_PERSISTENT)
    perishable.set_jms_message_id("ID:old")
    session.stage_encoded(STAGING, "a", [encode(perishable)])
    assert session.publish_staged([StagedRange(STAGING, "a", 1, 1)]) == 1
    (published,) = session.create_browser(Queue("timed"))
    assert published.get_jms_expiration() == started + 600_000
    assert published.get_jms_delivery_mode() == DeliveryMode.NON_PERSISTENT
    assert published.get_jms_message_id() not in (None, "ID:old")
    assert published.get_jms_timestamp() >= started
    assert published.get_jms_delivery_time() >= started


def test_bad_requests_are_refused_before_anything_is_sent(session: Session) -> None:
    with pytest.raises(ValueError, match="count must be an int from 0"):
        StagedRange(STAGING, "a", 1, -1)
    with pytest.raises(ValueError, match="a staging tag is a non-empty string"):
        StagedRange(STAGING, "", 1, 1)
    with pytest.raises(ValueError, match="a staging queue must be a"):
        StagedRange(TemporaryQueue("t"), "a", 1, 1)
    with pytest.raises(ValueError, match="batch_id must be an int"):
        BatchMarker(MARKERS, True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="staged message 1 is a str; encodings are bytes"):
        session.stage_encoded(STAGING, "a", [b"", "text"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="a staging tag is a non-empty string"):
        session.stage_encoded(STAGING, "", [b""])
    with pytest.raises(ValueError, match="a staging queue must be a"):
        session.stage_encoded(session.create_temporary_queue(), "a", [b""])
    assert _held(session, STAGING) == 0


def test_paged_out_staged_messages_of_several_requests_among_other_tags_are_published(
    session: Session, broker: Broker
) -> None:
    # Each request's staged messages share a head (tag, timestamp): published ones are read back
    # as bytes, each request's head decoded once, the other tags' heads skipped.
    broker.set_policy("queue://staging.>", DestinationPolicy(memory_window=2))
    expected: list[str] = []
    for request in range(3):
        texts = [f"r{request}-{n}" for n in range(5)]
        _stage(session, STAGING, "a", texts)
        expected += texts
        _stage(session, STAGING, f"other-{request}", [f"orphan-{request}"])
    through = _stage(session, STAGING, "a", ["last"])
    published = session.publish_staged([StagedRange(STAGING, "a", through, 16)])
    assert published == 16
    assert _texts(session, "out") == [*expected, "last"]
    assert _held(session, STAGING) == 0


def test_a_paged_out_staged_message_that_carries_no_message_is_refused(
    session: Session, broker: Broker
) -> None:
    broker.set_policy("queue://staging.>", DestinationPolicy(memory_window=2))
    _stage(session, STAGING, "a", ["a1", "a2", "a3"])
    session.stage_encoded(STAGING, "a", [b"not a message"])
    with pytest.raises(
        MessageFormatException,
        match=r"staged message 4 of queue://staging\.p0 does not carry a message",
    ):
        session.publish_staged([StagedRange(STAGING, "a", 4, 4)])
    wrong = session.create_text_message("text")
    wrong.set_string_property("JMS_jms_SparkAttempt", "b")
    session.create_producer(STAGING).send(wrong)
    with pytest.raises(MessageFormatException, match="is a TextMessage, not a staged message"):
        session.publish_staged([StagedRange(STAGING, "b", 5, 1)])
    assert _texts(session, "out") == []
    assert _held(session, STAGING) == 5
