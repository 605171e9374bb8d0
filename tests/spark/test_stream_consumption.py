"""What a stream consumes, and when, against a real ``jms broker`` process: only what it read into
a batch its sink committed (never the backlog below where it started), all of it once a run has
ended normally (the last batch of an ``availableNow`` run too), and by default the backlog of a
queue or durable subscription (docs/spark.md, "Exactly once: streaming reads")."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import jms.spark
from jms.client import Connection, ConnectionFactory, Session, TopicSubscription
from jms.message import Message, Queue, Topic
from jms.types import Long
from tests.broker_process import BrokerProcess

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def broker_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with BrokerProcess(tmp_path_factory.mktemp("stream-broker")) as broker:
        yield broker.url


@pytest.fixture(scope="module")
def jms_spark(spark: SparkSession) -> SparkSession:
    jms.spark.register(spark)
    return spark


@pytest.fixture
def connection(broker_url: str) -> Iterator[Connection]:
    with ConnectionFactory(broker_url).create_connection() as connection:
        connection.start()
        yield connection


@pytest.fixture
def session(connection: Connection) -> Session:
    return connection.create_session()


def _send(
    connection: Connection, destination: Queue | Topic, count: int, start: int = 0
) -> list[str]:
    """Send ``count`` messages numbered from ``start`` (``n``; ``color`` red when odd, blue when
    even) in one transaction; their message IDs."""
    transacted = connection.create_session(transacted=True)
    producer = transacted.create_producer(destination)
    sent: list[Message] = []
    for number in range(start, start + count):
        message = transacted.create_text_message(f"m{number}")
        message.set_long_property("n", Long(number))
        message.set_string_property("color", "red" if number % 2 else "blue")
        producer.send(message)
        sent.append(message)
    transacted.commit()
    transacted.close()
    return [m.get_jms_message_id() or "" for m in sent]


def _depth(session: Session, queue: str) -> int:
    return sum(1 for _ in session.create_browser(Queue(queue)))


def _run(spark: SparkSession, url: str, output: Path, checkpoint: Path, **options: str) -> None:
    """One ``availableNow`` run of a stream to Parquet, to its normal end."""
    reader = spark.readStream.format("jms").option("url", url)
    for name, value in options.items():
        reader = reader.option(name, value)
    query = (
        reader.load()
        .writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180), "the availableNow run did not end within 180 s"
    assert query.exception() is None


def _archived(spark: SparkSession, output: Path) -> Counter[str]:
    if not output.exists():
        return Counter()
    return Counter(row.message_id for row in spark.read.parquet(str(output)).collect())


def test_a_stream_from_latest_never_consumes_the_backlog_it_skipped(
    jms_spark: SparkSession,
    broker_url: str,
    connection: Connection,
    session: Session,
    tmp_path: Path,
) -> None:
    """Issue 12, 1a, as reported: 300 messages, a stream from ``latest`` (0 rows), 10 more, the
    same checkpoint again: the sink gets the 10 and the queue still holds the 300."""
    queue = f"latest-{uuid.uuid4().hex[:8]}"
    backlog = _send(connection, Queue(queue), 300)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    options = {"destination": f"queue://{queue}", "startingOffsets": "latest"}
    _run(jms_spark, broker_url, output, checkpoint, **options)
    assert _archived(jms_spark, output) == Counter()
    assert _depth(session, queue) == 300
    later = _send(connection, Queue(queue), 10, start=300)
    _run(jms_spark, broker_url, output, checkpoint, **options)
    assert _archived(jms_spark, output) == Counter(later)
    remaining = [m.get_jms_message_id() for m in session.create_browser(Queue(queue))]
    assert remaining == backlog  # unread and unconsumed; the 10 the stream wrote are gone


def test_an_available_now_run_consumes_everything_it_wrote_its_last_batch_included(
    jms_spark: SparkSession,
    broker_url: str,
    connection: Connection,
    session: Session,
    tmp_path: Path,
) -> None:
    """Issue 12, 1b: after a run that ended normally nothing it wrote is left on the queue, in
    several batches or in one; a run with nothing new changes nothing."""
    queue = f"drain-{uuid.uuid4().hex[:8]}"
    sent = _send(connection, Queue(queue), 250)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    options = {"destination": f"queue://{queue}", "maxOffsetsPerTrigger": "100"}
    _run(jms_spark, broker_url, output, checkpoint, **options)  # three batches
    assert _archived(jms_spark, output) == Counter(sent)
    assert _depth(session, queue) == 0
    sent += _send(connection, Queue(queue), 2000, start=250)
    _run(jms_spark, broker_url, output, checkpoint, destination=f"queue://{queue}")  # one batch
    assert _archived(jms_spark, output) == Counter(sent)
    assert _depth(session, queue) == 0
    _run(jms_spark, broker_url, output, checkpoint, destination=f"queue://{queue}")
    assert _archived(jms_spark, output) == Counter(sent)


def test_a_stream_with_a_selector_consumes_only_what_it_selected(
    jms_spark: SparkSession,
    broker_url: str,
    connection: Connection,
    session: Session,
    tmp_path: Path,
) -> None:
    queue = f"selected-{uuid.uuid4().hex[:8]}"
    sent = _send(connection, Queue(queue), 60)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    _run(
        jms_spark,
        broker_url,
        output,
        checkpoint,
        destination=f"queue://{queue}",
        selector="n < 20",
    )
    assert _archived(jms_spark, output) == Counter(sent[:20])
    left = [m.get_long_property("n") for m in session.create_browser(Queue(queue))]
    assert left == list(range(20, 60))


def test_streams_take_the_backlog_of_a_queue_and_a_durable_subscription_by_default(
    jms_spark: SparkSession,
    broker_url: str,
    connection: Connection,
    session: Session,
    tmp_path: Path,
) -> None:
    """Issue 12, 1c: ``earliest`` is the default starting point of a stream."""
    queue = f"backlog-{uuid.uuid4().hex[:8]}"
    queued = _send(connection, Queue(queue), 40)
    _run(jms_spark, broker_url, tmp_path / "q", tmp_path / "q-ckpt", destination=f"queue://{queue}")
    assert _archived(jms_spark, tmp_path / "q") == Counter(queued)
    assert _depth(session, queue) == 0

    topic = Topic(f"ticks-{uuid.uuid4().hex[:8]}")
    subscriber = session.create_shared_durable_consumer(topic, "archive")
    subscriber.close()  # the subscription keeps what is published while nobody reads it
    published = _send(connection, topic, 30)
    options = {"destination": str(topic), "subscriptionName": "archive"}
    _run(jms_spark, broker_url, tmp_path / "t", tmp_path / "t-ckpt", **options)
    assert _archived(jms_spark, tmp_path / "t") == Counter(published)
    reader = session.create_sequence_reader(TopicSubscription(topic, "archive"))
    assert list(reader.read(1)) == []


def test_a_stream_restarted_with_another_selector_loses_nothing(
    jms_spark: SparkSession,
    broker_url: str,
    connection: Connection,
    session: Session,
    tmp_path: Path,
) -> None:
    """Found in review (28 November): a run with ``color = 'red'``, then the same checkpoint with
    ``color = 'blue'`` consumed the blue messages below the offset without reading them. Now the
    new selector reads on from the offset; what the old one skipped stays on the queue."""
    queue = Queue(f"recolored-{uuid.uuid4().hex[:8]}")
    first = _send(connection, queue, 10)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    red = {"destination": str(queue), "selector": "color = 'red'"}
    blue = {"destination": str(queue), "selector": "color = 'blue'"}
    _run(jms_spark, broker_url, output, checkpoint, **red)
    assert _archived(jms_spark, output) == Counter(first[1::2])
    _run(jms_spark, broker_url, output, checkpoint, **blue)
    assert _archived(jms_spark, output) == Counter(first[1::2])
    second = _send(connection, queue, 4, start=10)
    _run(jms_spark, broker_url, output, checkpoint, **blue)
    assert _archived(jms_spark, output) == Counter(first[1::2] + second[0::2])
    left = [m.get_jms_message_id() for m in session.create_browser(queue)]
    assert left == first[0::2] + second[1::2]  # every message is archived or still queued


def test_a_stream_with_a_selector_on_an_existing_subscription_leaves_the_rest_in_it(
    jms_spark: SparkSession,
    broker_url: str,
    connection: Connection,
    session: Session,
    tmp_path: Path,
) -> None:
    """Found in review: on a durable subscription made without a selector, a stream with one read
    the matches and consumed the whole subscription."""
    topic = Topic(f"everything-{uuid.uuid4().hex[:8]}")
    session.create_shared_durable_consumer(topic, "sub").close()
    published = _send(connection, topic, 10)
    options = {"destination": str(topic), "subscriptionName": "sub", "selector": "n >= 5"}
    _run(jms_spark, broker_url, tmp_path / "out", tmp_path / "ckpt", **options)
    assert _archived(jms_spark, tmp_path / "out") == Counter(published[5:])
    held = session.create_sequence_reader(TopicSubscription(topic, "sub"))
    assert [m.get_jms_message_id() for page in held.read(1) for _, m in page] == published[:5]


def test_a_stream_from_earliest_reads_a_delayed_message_at_the_head(
    jms_spark: SparkSession,
    broker_url: str,
    connection: Connection,
    session: Session,
    tmp_path: Path,
) -> None:
    """Found in review: ``earliest`` started above a message not due yet, so the stream never
    read it. Now the stream starts at it and waits for it."""
    queue = Queue(f"delayed-{uuid.uuid4().hex[:8]}")
    producer = session.create_producer(queue)
    producer.set_delivery_delay(5000)
    delayed = session.create_text_message("later")
    producer.send(delayed)
    due = time.monotonic() + 5
    producer.set_delivery_delay(0)
    now = [session.create_text_message(text) for text in ("a", "b")]
    for message in now:
        producer.send(message)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    _run(jms_spark, broker_url, output, checkpoint, destination=str(queue))
    time.sleep(max(0.0, due - time.monotonic()) + 0.5)
    _run(jms_spark, broker_url, output, checkpoint, destination=str(queue))
    sent = [m.get_jms_message_id() for m in (delayed, *now)]
    assert _archived(jms_spark, output) == Counter(sent)
    assert _depth(session, queue.get_queue_name()) == 0


def test_a_stream_that_starts_above_the_last_number_waits_for_it(
    jms_spark: SparkSession,
    broker_url: str,
    connection: Connection,
    session: Session,
    tmp_path: Path,
) -> None:
    """Found in review: a ``startingOffsets`` number not handed out yet failed the stream as
    data loss. The stream waits for it instead, and never consumes what lies below it."""
    queue = Queue(f"ahead-{uuid.uuid4().hex[:8]}")
    backlog = _send(connection, queue, 5)  # numbered 1 to 5
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    options = {"destination": str(queue), "startingOffsets": f'{{"{queue}": 8}}'}
    _run(jms_spark, broker_url, output, checkpoint, **options)
    assert _archived(jms_spark, output) == Counter()
    later = _send(connection, queue, 5, start=5)  # numbered 6 to 10
    _run(jms_spark, broker_url, output, checkpoint, **options)
    assert _archived(jms_spark, output) == Counter(later[2:])
    left = [m.get_jms_message_id() for m in session.create_browser(queue)]
    assert left == backlog + later[:2]
