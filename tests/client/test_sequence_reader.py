"""``SequenceReader``: range reads of a queue or durable subscription by sequence number, which
consume nothing (``read`` as messages, ``read_encoded`` as their codec bytes), and the cursor
commit ``acknowledge_through`` (run over STOMP too, by tests/client_over_stomp)."""

from __future__ import annotations

import threading
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jms.broker import Broker, DestinationPolicy
from jms.client import ConnectionFactory, Session, TopicSubscription
from jms.errors import IllegalStateException, InvalidDestinationException, InvalidSelectorException
from jms.message import Message, Queue, TextMessage, Topic
from jms.message.codec import decode, encode
from tests.strategies import java_chars, messages_of


def _send(session: Session, destination: Queue | Topic, count: int, start: int = 0) -> None:
    producer = session.create_producer(destination)
    for number in range(start, start + count):
        message = session.create_text_message(f"m{number}")
        message.set_int_property("n", number)
        producer.send(message)


def _texts(pages: object) -> list[str]:
    return [message.get_text() for page in pages for _, message in page]  # type: ignore[attr-defined]


def test_a_range_read_returns_the_numbered_messages_in_pages_and_consumes_nothing(
    session: Session,
) -> None:
    queue = session.create_queue("ranges")
    _send(session, queue, 10)
    reader = session.create_sequence_reader(queue)
    assert reader.last_sequence() == 10
    assert reader.first_sequence() == 1
    pages = list(reader.read(3, 8, page_size=4))
    assert [[seq for seq, _ in page] for page in pages] == [[3, 4, 5, 6], [7, 8]]
    assert _texts(pages) == ["m2", "m3", "m4", "m5", "m6", "m7"]
    assert all(isinstance(m, TextMessage) for page in pages for _, m in page)
    # Nothing was consumed: the same range reads the same, and a browser sees all ten.
    assert _texts(reader.read(3, 8)) == _texts(pages)
    assert len(list(session.create_browser(queue))) == 10
    assert _texts(reader.read(9)) == ["m8", "m9"]
    assert list(reader.read(11)) == []


def test_the_selector_is_applied_by_the_broker(session: Session) -> None:
    queue = session.create_queue("selected-ranges")
    _send(session, queue, 10)
    reader = session.create_sequence_reader(queue, "n >= 4 AND n < 7")
    assert reader.get_message_selector() == "n >= 4 AND n < 7"
    assert [seq for page in reader.read(1) for seq, _ in page] == [5, 6, 7]
    assert reader.first_sequence() == 5
    with pytest.raises(InvalidSelectorException):
        session.create_sequence_reader(queue, "n >>> 3")


def test_acknowledge_through_consumes_up_to_the_number_and_only_that(session: Session) -> None:
    queue = session.create_queue("cursor")
    _send(session, queue, 6)
    reader = session.create_sequence_reader(queue)
    assert reader.acknowledge_through(4) == 4
    assert reader.acknowledge_through(4) == 0  # repeating it is harmless
    assert reader.acknowledge_through(0) == 0
    assert reader.first_sequence() == 5
    assert _texts(reader.read(1)) == ["m4", "m5"]
    _send(session, queue, 2, start=6)
    assert reader.last_sequence() == 8
    consumer = session.create_consumer(queue)
    received = [consumer.receive(2000) for _ in range(4)]
    assert [m.get_text() for m in received if m is not None] == ["m4", "m5", "m6", "m7"]


def test_acknowledge_through_from_a_start_consumes_only_from_there(session: Session) -> None:
    queue = session.create_queue("cursor-from")
    _send(session, queue, 8)
    reader = session.create_sequence_reader(queue)
    assert reader.acknowledge_through(6, start_seq=4) == 3  # m3, m4, m5
    assert reader.acknowledge_through(6, start_seq=4) == 0
    assert reader.acknowledge_through(3, start_seq=4) == 0  # an empty range
    assert _texts(reader.read(1)) == ["m0", "m1", "m2", "m6", "m7"]
    with pytest.raises(ValueError, match="start_seq must be an int of at least 1; got 0"):
        reader.acknowledge_through(6, start_seq=0)


def test_a_reader_with_a_selector_consumes_only_what_it_matches(session: Session) -> None:
    queue = session.create_queue("selected-cursor")
    _send(session, queue, 6)
    reader = session.create_sequence_reader(queue, "n >= 2")
    assert reader.acknowledge_through(5) == 3  # m2, m3, m4
    assert reader.acknowledge_through(5) == 0
    assert _texts(reader.read(1)) == ["m5"]
    consumer = session.create_consumer(queue)
    received = [consumer.receive(2000) for _ in range(3)]
    assert [m.get_text() for m in received if m is not None] == ["m0", "m1", "m5"]


def test_first_not_due_names_the_first_message_a_read_hides_until_its_time(
    session: Session,
) -> None:
    queue = session.create_queue("delayed-ranges")
    _send(session, queue, 2)
    producer = session.create_producer(queue)
    producer.set_delivery_delay(60_000)
    for number in (2, 3):
        message = session.create_text_message(f"m{number}")
        message.set_int_property("n", number)
        producer.send(message)
    _send(session, queue, 1, start=4)
    reader = session.create_sequence_reader(queue)
    assert _texts(reader.read(1)) == ["m0", "m1", "m4"]
    assert reader.first_not_due() == 3
    assert reader.first_not_due(4) == 4
    assert reader.first_not_due(1, 2) is None
    assert reader.first_not_due(5) is None
    assert session.create_sequence_reader(queue, "n = 3").first_not_due() == 4
    with pytest.raises(ValueError, match="start_seq"):
        reader.first_not_due(0)


def test_a_durable_subscription_is_read_by_its_topics_numbers(
    factory: ConnectionFactory, session: Session
) -> None:
    topic = session.create_topic("ranged-topic")
    subscriber = ConnectionFactory(factory.url, client_id="ranger").create_connection()
    try:
        subscriber.create_session().create_durable_consumer(topic, "archive", "n <> 1").close()
    finally:
        subscriber.close()
    _send(session, topic, 4)
    source = TopicSubscription(topic, "archive", "ranger")
    reader = session.create_sequence_reader(source)
    assert reader.get_source() == source
    assert reader.last_sequence() == 4
    assert [(seq, m.get_text()) for page in reader.read(1) for seq, m in page] == [
        (1, "m0"),
        (3, "m2"),
        (4, "m3"),
    ]
    assert [seq for page in reader.read(2, 3) for seq, _ in page] == [3]
    (page,) = reader.read_encoded(2, 4)
    assert page.seqs == [3, 4]
    assert [decode(data).get_text() for data in page.messages] == ["m2", "m3"]  # type: ignore[attr-defined]
    assert reader.acknowledge_through(3) == 2
    assert _texts(reader.read(1)) == ["m3"]


def test_an_unknown_durable_subscription_is_named_in_the_error(session: Session) -> None:
    source = TopicSubscription(session.create_topic("t"), "nobody", "no-such-client")
    reader = session.create_sequence_reader(source)
    with pytest.raises(InvalidDestinationException, match="'nobody'"):
        list(reader.read(1))
    assert reader.last_sequence() == 0


def test_bad_arguments_and_closed_readers_are_refused(session: Session) -> None:
    queue = session.create_queue("bad")
    with pytest.raises(InvalidDestinationException, match="TopicSubscription"):
        session.create_sequence_reader(session.create_topic("plain-topic"))  # type: ignore[arg-type]
    with pytest.raises(InvalidDestinationException):
        session.create_sequence_reader(session.create_temporary_queue())
    reader = session.create_sequence_reader(queue)
    with pytest.raises(ValueError, match="start_seq must be an int of at least 1; got 0"):
        reader.read(0)
    with pytest.raises(ValueError, match="page_size"):
        reader.read(1, page_size=0)
    with pytest.raises(ValueError, match="start_seq must be an int of at least 1; got 0"):
        reader.read_encoded(0)
    with pytest.raises(ValueError, match=r"page_size must be an int of at least 1; got 1\.5"):
        reader.read_encoded(1, page_size=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="end_seq must be an int or None; got '9'"):
        reader.read_encoded(1, "9")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seq must be an int of at least 0; got -1"):
        reader.acknowledge_through(-1)
    reader.close()
    with pytest.raises(IllegalStateException, match="SequenceReader of queue://bad is closed"):
        reader.last_sequence()
    with pytest.raises(IllegalStateException, match="SequenceReader of queue://bad is closed"):
        reader.read_encoded(1)
    session.close()
    with pytest.raises(IllegalStateException):
        session.create_sequence_reader(queue)


def test_read_encoded_fetches_ahead_yet_stops_where_it_is_told(session: Session) -> None:
    """``read_encoded`` fetches the next page while the caller works on one: the pages are the
    same as one at a time, a reader closed between pages fails at the next one, and a read left
    unfinished leaves no thread behind."""
    queue = session.create_queue("ahead")
    _send(session, queue, 9)
    reader = session.create_sequence_reader(queue)
    assert [page.seqs for page in reader.read_encoded(2, 8, 3)] == [[2, 3, 4], [5, 6, 7], [8]]
    pages = reader.read_encoded(1, None, 4)
    assert next(pages).seqs == [1, 2, 3, 4]
    reader.close()
    with pytest.raises(IllegalStateException, match="SequenceReader of queue://ahead is closed"):
        next(pages)
    unfinished = session.create_sequence_reader(queue).read_encoded(1, None, 2)
    assert next(unfinished).seqs == [1, 2]
    unfinished.close()  # what dropping it does: the page fetched ahead is waited for
    assert not [t for t in threading.enumerate() if t.name.startswith("jms-read-ahead")]


# Strings a STOMP frame header can carry (the STOMP transport names JMSReplyTo in a SEND
# frame's headers, which are UTF-8): no lone surrogates.
_sendable = messages_of(st.text(st.characters(exclude_categories=("Cs",)), max_size=20), java_chars)


@given(st.lists(_sendable, min_size=1, max_size=6), st.integers(1, 4))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_read_encoded_gives_the_codec_bytes_of_the_messages_read_gives(
    broker: Broker, session: Session, sent: list[Message], page_size: int
) -> None:
    # Two stored messages a queue in memory: the others are read from the store.
    broker.set_policy("queue://kinds.*", DestinationPolicy(memory_window=2))
    queue = session.create_queue(f"kinds.{uuid.uuid4().hex[:12]}")
    producer = session.create_producer(queue)
    for message in sent:
        producer.send(message)
    reader = session.create_sequence_reader(queue)
    pages = list(reader.read_encoded(1, None, page_size))
    assert all(len(page.seqs) == len(page.messages) <= page_size for page in pages)
    read = [item for page in reader.read(1, None, page_size) for item in page]
    assert [seq for page in pages for seq in page.seqs] == [seq for seq, _ in read]
    assert len(read) == len(sent)
    assert [data for page in pages for data in page.messages] == [encode(m) for _, m in read]
    # A browse shows JMSRedelivered from the delivery count, whatever the sender left in it.
    assert not any(decode(data).get_jms_redelivered() for page in pages for data in page.messages)
