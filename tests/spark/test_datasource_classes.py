"""The ``jms`` data source's readers and writers driven directly, the way Spark calls them but
without a JVM: partitions planned, partitions read (after a pickle trip, as on an executor),
offsets, commits, staging and idempotent publishing, against a real in-process broker."""

from __future__ import annotations

import pickle
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.datasource import EqualTo, GreaterThan, InputPartition, StringStartsWith
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows
from pyspark.sql.types import BinaryType, IntegerType, StringType, StructField, StructType

from jms.broker import Broker, close_embedded_broker
from jms.client import ConnectionFactory, Session, TopicSubscription
from jms.errors import (
    IllegalStateException,
    InvalidDestinationException,
    JMSException,
    MessageFormatException,
)
from jms.message import MapMessage, Message, Queue, TextMessage, Topic
from jms.spark import MESSAGE_ARROW_SCHEMA, MESSAGE_SCHEMA, from_rows, to_arrow
from jms.spark.datasource import JmsDataSource
from jms.spark.offsets import EARLIEST, LATEST
from jms.spark.options import SinkOptions, SourceOptions
from jms.spark.pipeline import BYTE_LIMIT_SETTING
from jms.spark.sink import (
    COMMITS_PREFIX,
    SLOW_HAND_OVER_ROWS,
    STAGE_REQUEST_BYTES,
    STAGING_PREFIX,
    JmsBatchWriter,
    JmsStreamWriter,
    StagedPartition,
    measures_every_row,
    null_nested_columns,
)
from jms.spark.source import JmsBatchReader, JmsStreamReader, RangePartition
from jms.stomp.service import ServerThread
from jms.stomp.tls import ServerTls
from jms.types import Long, Short
from tests.certificates import make_certificates
from tests.strategies import message_fingerprint


@pytest.fixture
def url() -> Iterator[str]:
    name = f"memory://spark-{uuid.uuid4().hex[:12]}"
    yield name
    close_embedded_broker(name)


@pytest.fixture
def session(url: str) -> Iterator[Session]:
    connection = ConnectionFactory(url).create_connection()
    connection.start()
    yield connection.create_session()
    connection.close()


def _orders(
    session: Session, count: int, destination: Queue | Topic | None = None
) -> list[Message]:
    producer = session.create_producer(destination or session.create_queue("orders"))
    sent: list[Message] = []
    for number in range(count):
        if number % 3 == 2:
            message: Message = session.create_map_message()
            assert isinstance(message, MapMessage)
            message.set_short("qty", Short(number))
        else:
            message = session.create_text_message(f"order {number}")
        message.set_long_property("n", Long(number))
        message.set_string_property("color", "red" if number % 2 else "blue")
        message.set_jms_type("car" if number < count // 2 else "truck")
        producer.send(message, priority=number % 10)
        sent.append(message)
    return sent


def _content(message: Message) -> tuple[Any, ...]:
    """Class, type, properties and body: what a copy keeps (headers are stamped anew)."""
    fingerprint = message_fingerprint(message)
    return fingerprint[0], fingerprint[8], fingerprint[-2], fingerprint[-1]


def _roundtrip(reader: Any) -> Any:
    """The reader as an executor gets it: pickled and unpickled."""
    return pickle.loads(pickle.dumps(reader))


def _read(reader: Any, partitions: list[InputPartition]) -> list[Message]:
    executor_side = _roundtrip(reader)
    rows: list[dict[str, Any]] = []
    for partition in partitions:
        for batch in executor_side.read(_roundtrip(partition)):
            assert isinstance(batch, pa.RecordBatch)
            assert batch.schema == MESSAGE_ARROW_SCHEMA
            rows += batch.to_pylist()
    return from_rows(rows)


def _texts(session: Session, queue: str) -> list[str]:
    return [
        m.get_text() if isinstance(m, TextMessage) else type(m).__name__
        for m in session.create_browser(session.create_queue(queue))
    ]


def _numbers(session: Session) -> list[int]:
    """The ``n`` of each message queue://orders holds."""
    return [
        m.get_long_property("n") for m in session.create_browser(session.create_queue("orders"))
    ]


def _source(url: str, streaming: bool = False, **options: str) -> SourceOptions:
    return SourceOptions.parse(
        {"url": url, "destination": "queue://orders", **options}, streaming=streaming
    )


# --- batch reads --------------------------------------------------------------------------------


def test_a_batch_read_splits_the_range_and_reads_every_message_without_consuming(
    url: str, session: Session
) -> None:
    sent = _orders(session, 25)
    reader = JmsBatchReader(_source(url, minPartitions="3", pageSize="4"))
    partitions = list(reader.partitions())
    assert [(p.start, p.end) for p in partitions] == [(1, 10), (10, 18), (18, 26)]
    read = _read(reader, partitions)
    assert [message_fingerprint(m) for m in read] == [message_fingerprint(m) for m in sent]
    assert len(_texts(session, "orders")) == 25  # nothing consumed
    assert [len(list(_roundtrip(reader).read(p))) for p in partitions] == [3, 2, 2]  # 4 a page


def test_offsets_bound_a_batch_read_and_an_empty_range_has_no_partitions(
    url: str, session: Session
) -> None:
    _orders(session, 10)
    reader = JmsBatchReader(
        _source(
            url,
            startingOffsets='{"queue://orders": 4}',
            endingOffsets='{"queue://orders": 8}',
            maxOffsetsPerPartition="2",
        )
    )
    partitions = list(reader.partitions())
    assert [(p.start, p.end) for p in partitions] == [(4, 6), (6, 8)]
    assert [m.get_long_property("n") for m in _read(reader, partitions)] == [3, 4, 5, 6]
    assert list(JmsBatchReader(_source(url, startingOffsets="latest")).partitions()) == []
    session.create_sequence_reader(session.create_queue("orders")).acknowledge_through(6)
    earliest = JmsBatchReader(_source(url)).partitions()
    assert [(p.start, p.end) for p in earliest] == [(7, 11)]  # earliest is what is there


def test_the_selector_option_and_pushed_filters_are_applied_by_the_broker(
    url: str, session: Session
) -> None:
    _orders(session, 20)
    reader = JmsBatchReader(_source(url, selector="color = 'red'"))
    offered = [
        EqualTo(("type",), "car"),
        GreaterThan(("priority",), 4),
        EqualTo(("properties",), "x"),  # not a header: stays with Spark
        StringStartsWith(("message_id",), "ID:"),
    ]
    kept = list(reader.pushFilters(offered))
    assert kept == [offered[2]]
    assert reader.selector == (
        "(color = 'red') AND (JMSType = 'car') AND (JMSPriority > 4) AND "
        "(JMSMessageID LIKE 'ID:%' ESCAPE '\\')"
    )
    numbers = [m.get_long_property("n") for m in _read(reader, list(reader.partitions()))]
    assert numbers == [5, 7, 9]


def test_a_durable_subscription_is_read_and_an_unknown_one_is_named(
    url: str, session: Session
) -> None:
    topic = session.create_topic("prices")
    subscriber = ConnectionFactory(url, client_id="archiver").create_connection()
    subscriber.create_session().create_durable_consumer(topic, "archive").close()
    subscriber.close()
    _orders(session, 6, topic)
    options = {
        "destination": "topic://prices",
        "subscriptionName": "archive",
        "clientId": "archiver",
    }
    reader = JmsBatchReader(SourceOptions.parse({"url": url, **options}, streaming=False))
    assert [m.get_long_property("n") for m in _read(reader, list(reader.partitions()))] == list(
        range(6)
    )
    wrong = JmsBatchReader(
        SourceOptions.parse({"url": url, **options, "subscriptionName": "nope"}, streaming=False)
    )
    with pytest.raises(InvalidDestinationException, match="'nope'"):
        list(wrong.partitions())


@pytest.mark.parametrize("store_kind", ["sqlite", "postgresql"])
def test_a_store_is_read_straight_from_its_database(
    request: pytest.FixtureRequest, tmp_path: Path, session: Session, store_kind: str
) -> None:
    # A SQLite directory, or a PostgreSQL database read while its broker runs.
    store = (
        request.getfixturevalue("postgresql_url") if store_kind == "postgresql" else str(tmp_path)
    )
    store_url = f"embedded://{store}"
    try:
        with ConnectionFactory(store_url).create_connection() as connection:
            sent = _orders(connection.create_session(), 7)
        options = SourceOptions.parse(
            {"store": store, "destination": "queue://orders", "minPartitions": "2"},
            streaming=False,
        )
        reader = JmsBatchReader(options)
        partitions = list(reader.partitions())
        assert [(p.start, p.end) for p in partitions] == [(1, 5), (5, 8)]
        read = _read(reader, partitions)
        assert [m.get_jms_message_id() for m in read] == [m.get_jms_message_id() for m in sent]
        assert list(reader.pushFilters([EqualTo(("type",), "car")])) == [
            EqualTo(("type",), "car")
        ]  # no broker to push to: Spark filters
    finally:
        close_embedded_broker(store_url)


# --- streaming reads ----------------------------------------------------------------------------


def _at(
    next_seq: int, stream_start: int = 1, key: str = "queue://orders", selector: str | None = None
) -> dict[str, int | str | None]:
    return {key: next_seq, "selector": selector, "streamStart": stream_start}


def test_a_stream_reads_ranges_and_consumes_them_when_it_plans_the_next_batch(
    url: str, session: Session
) -> None:
    _orders(session, 12)
    options = _source(url, streaming=True, maxOffsetsPerTrigger="5")
    reader = JmsStreamReader(options)
    assert reader.getDefaultReadLimit() == ReadMaxRows(5)
    start = reader.initialOffset()
    assert start == _at(1)  # a queue stream takes the backlog by default
    end = reader.latestOffset(start, reader.getDefaultReadLimit())
    assert end == _at(6)
    assert reader.reportLatestOffset() == {"queue://orders": 13}
    first = _read(reader, list(reader.partitions(start, end)))
    assert [m.get_long_property("n") for m in first] == [0, 1, 2, 3, 4]
    assert len(_texts(session, "orders")) == 12  # reading consumed nothing
    # A task retried reads the same messages again.
    again = _read(reader, list(reader.partitions(start, end)))
    assert [m.get_long_property("n") for m in again] == [0, 1, 2, 3, 4]
    reader.commit(end)  # Spark's late commit consumes nothing
    assert len(_texts(session, "orders")) == 12
    # Spark plans from ``end`` once the batch ending there is in the sink: that consumes it.
    rest_end = reader.latestOffset(end, reader.getDefaultReadLimit())
    assert rest_end == _at(11)
    assert len(_texts(session, "orders")) == 7
    # A restarted query (a new reader, the checkpoint's offset) reads on from there.
    reader.stop()
    restarted = JmsStreamReader(options)
    rest_end = restarted.latestOffset(end, ReadAllAvailable())
    assert rest_end == _at(13)
    rest = _read(restarted, list(restarted.partitions(end, rest_end)))
    assert [m.get_long_property("n") for m in rest] == list(range(5, 12))
    # The planning after the last batch finds nothing new, and consumes the last batch.
    assert restarted.latestOffset(rest_end, ReadAllAvailable()) == rest_end
    assert restarted.partitions(rest_end, rest_end) == []
    assert _texts(session, "orders") == []
    restarted.stop()


def test_a_stream_never_consumes_below_where_it_started(url: str, session: Session) -> None:
    """The backlog a stream skipped with startingOffsets latest (or a number) is left on the
    queue, unread and unconsumed, however far the stream goes."""
    _orders(session, 4)
    reader = JmsStreamReader(_source(url, streaming=True, startingOffsets="latest"))
    start = reader.initialOffset()
    assert start == _at(5, 5)
    _orders(session, 3, session.create_queue("orders"))
    end = reader.latestOffset(start, ReadAllAvailable())
    assert end == _at(8, 5)
    read = _read(reader, list(reader.partitions(start, end)))
    assert [m.get_long_property("n") for m in read] == [0, 1, 2]  # the three sent after it
    assert reader.latestOffset(end, ReadAllAvailable()) == end
    assert _numbers(session) == [0, 1, 2, 3]
    reader.stop()
    numbered = JmsStreamReader(_source(url, streaming=True, startingOffsets='{"queue://orders":3}'))
    start = numbered.initialOffset()
    assert start == _at(3, 3)
    end = numbered.latestOffset(start, ReadAllAvailable())
    assert end == _at(8, 3)
    assert numbered.latestOffset(end, ReadAllAvailable()) == end
    assert _numbers(session) == [0, 1]
    numbered.stop()


def test_an_offset_without_a_stream_start_consumes_from_the_lowest_number(
    url: str, session: Session
) -> None:
    """Checkpoints written before offsets carried streamStart go on as they did."""
    _orders(session, 4)
    reader = JmsStreamReader(_source(url, streaming=True))
    assert reader.latestOffset({"queue://orders": 3}, ReadAllAvailable()) == _at(5, 1)
    assert _numbers(session) == [2, 3]
    reader.stop()


def test_an_offset_without_a_selector_was_read_with_the_selector_option_of_now(
    url: str, session: Session
) -> None:
    """Checkpoints written before offsets carried their selector go on as they did."""
    _orders(session, 4)
    reader = JmsStreamReader(_source(url, streaming=True, selector="n <> 1"))
    old = {"queue://orders": 3, "streamStart": 1}
    assert reader.latestOffset(old, ReadAllAvailable()) == _at(5, 1, selector="n <> 1")
    assert _numbers(session) == [1, 2, 3]
    reader.stop()


def test_a_stream_restarted_with_another_selector_consumes_only_what_it_read(
    url: str, session: Session
) -> None:
    """Each batch is read with the selector it was planned with, and its consumption takes only
    what that matched; a new selector reads on from the stream's offset and never consumes what
    the old one left below it."""
    _orders(session, 6)  # color: n odd is red, even blue
    red = JmsStreamReader(_source(url, streaming=True, selector="color = 'red'"))
    start = red.initialOffset()
    assert start == _at(2, 2, selector="color = 'red'")  # the lowest number it matches
    end = red.latestOffset(start, ReadMaxRows(3))
    assert end == _at(5, 2, selector="color = 'red'")
    red.stop()
    # Restarted with another selector: Spark runs the planned batch again from its offsets.
    blue = JmsStreamReader(_source(url, streaming=True, selector="color = 'blue'"))
    again = _read(blue, list(blue.partitions(start, end)))
    assert [m.get_long_property("n") for m in again] == [1, 3]  # as planned: the red ones
    later = blue.latestOffset(end, ReadAllAvailable())
    assert later == _at(7, 5, selector="color = 'blue'")  # starts over at 5
    assert _numbers(session) == [0, 2, 4, 5]  # the red ones read are consumed, the blue stay
    rest = _read(blue, list(blue.partitions(end, later)))
    assert [m.get_long_property("n") for m in rest] == [4]
    assert blue.latestOffset(later, ReadAllAvailable()) == later
    assert _numbers(session) == [0, 2, 5]  # the blue ones below 5 were never the new one's
    # And back to no selector: from 7 on, everything; below it, nothing.
    _orders(session, 2)
    everything = JmsStreamReader(_source(url, streaming=True))
    last = everything.latestOffset(later, ReadAllAvailable())
    assert last == _at(9, 7)
    assert [
        m.get_long_property("n")
        for m in _read(everything, list(everything.partitions(later, last)))
    ] == [0, 1]
    assert everything.latestOffset(last, ReadAllAvailable()) == last
    assert _numbers(session) == [0, 2, 5]
    blue.stop()
    everything.stop()


def test_a_stream_that_starts_above_the_last_number_waits_for_it(
    url: str, session: Session
) -> None:
    """A startingOffsets number not handed out yet is where the stream starts, not data loss."""
    _orders(session, 3)
    reader = JmsStreamReader(_source(url, streaming=True, startingOffsets='{"queue://orders":6}'))
    start = reader.initialOffset()
    assert start == _at(6, 6)
    assert reader.latestOffset(start, ReadAllAvailable()) == start
    _orders(session, 4)  # numbered 4 to 7
    end = reader.latestOffset(start, ReadAllAvailable())
    assert end == _at(8, 6)
    read = _read(reader, list(reader.partitions(start, end)))
    assert [m.get_long_property("n") for m in read] == [2, 3]
    assert reader.latestOffset(end, ReadAllAvailable()) == end
    assert _numbers(session) == [0, 1, 2, 0, 1]
    reader.stop()


def test_a_stream_from_earliest_starts_at_a_message_not_due_yet(url: str, session: Session) -> None:
    """``earliest`` is the lowest number held, a message whose delivery time is still ahead
    included: a browse hides it, but a stream starting above it would never read it."""
    producer = session.create_producer(session.create_queue("orders"))
    producer.set_delivery_delay(60_000)
    producer.send(session.create_text_message("later"))
    producer.set_delivery_delay(0)
    producer.send(session.create_text_message("now"))
    reader = JmsStreamReader(_source(url, streaming=True))
    start = reader.initialOffset()
    assert start == _at(1)
    assert reader.latestOffset(start, ReadAllAvailable()) == start  # waits for "later"
    reader.stop()


def test_available_now_stops_at_what_was_there(url: str, session: Session) -> None:
    _orders(session, 4)
    reader = JmsStreamReader(_source(url, streaming=True))
    start = reader.initialOffset()
    reader.prepareForTriggerAvailableNow()
    _orders(session, 3, session.create_queue("orders"))
    assert reader.latestOffset(start, ReadAllAvailable()) == _at(5)
    reader.stop()


def test_a_stream_on_a_topic_creates_its_durable_subscription(url: str, session: Session) -> None:
    options = SourceOptions.parse(
        {
            "url": url,
            "destination": "topic://ticks",
            "subscriptionName": "spark",
            "clientId": "pipeline",
            "selector": "n > 0",
        },
        streaming=True,
    )
    reader = JmsStreamReader(options)
    start = reader.initialOffset()
    assert start == _at(1, 1, "topic://ticks", selector="n > 0")
    _orders(session, 3, session.create_topic("ticks"))
    end = reader.latestOffset(start, ReadAllAvailable())
    read = _read(reader, list(reader.partitions(start, end)))
    assert [m.get_long_property("n") for m in read] == [1, 2]  # the subscription's selector
    assert reader.latestOffset(end, ReadAllAvailable()) == end
    source = TopicSubscription(Topic("ticks"), "spark", "pipeline")
    assert list(session.create_sequence_reader(source).read(1)) == []
    reader.stop()


def test_a_stream_with_a_selector_on_a_subscription_consumes_only_what_it_selected(
    url: str, session: Session
) -> None:
    """The selector option on an existing durable subscription (made without it) selects what
    the stream reads, and so what it consumes: the rest stays in the subscription."""
    topic = session.create_topic("ticks")
    session.create_shared_durable_consumer(topic, "all").close()
    _orders(session, 6, topic)
    options = {"destination": "topic://ticks", "subscriptionName": "all", "selector": "n >= 3"}
    reader = JmsStreamReader(SourceOptions.parse({"url": url, **options}, streaming=True))
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadAllAvailable())
    read = _read(reader, list(reader.partitions(start, end)))
    assert [m.get_long_property("n") for m in read] == [3, 4, 5]
    assert reader.latestOffset(end, ReadAllAvailable()) == end
    held = session.create_sequence_reader(TopicSubscription(topic, "all"))
    assert [m.get_long_property("n") for page in held.read(1) for _, m in page] == [0, 1, 2]
    reader.stop()


def test_without_a_client_id_a_stream_creates_a_shared_durable_subscription(
    url: str, session: Session
) -> None:
    options = {"url": url, "destination": "topic://news", "subscriptionName": "everyone"}
    reader = JmsStreamReader(SourceOptions.parse(options, streaming=True))
    start = reader.initialOffset()
    _orders(session, 2, session.create_topic("news"))
    end = reader.latestOffset(start, ReadAllAvailable())
    assert len(_read(reader, list(reader.partitions(start, end)))) == 2
    shared = session.create_shared_durable_consumer(session.create_topic("news"), "everyone")
    assert shared.receive(2000) is not None  # the same subscription, shared
    shared.close()
    reader.stop()


def test_numbering_that_went_backwards_is_data_loss(url: str, session: Session) -> None:
    _orders(session, 2)
    reader = JmsStreamReader(_source(url, streaming=True))
    with pytest.raises(ValueError, match="numbering started over"):
        reader.latestOffset(_at(50), ReadAllAvailable())
    tolerant = JmsStreamReader(_source(url, streaming=True, failOnDataLoss="false"))
    assert tolerant.latestOffset(_at(50), ReadAllAvailable()) == _at(50)
    assert len(_texts(session, "orders")) == 2  # a stream that waits consumes nothing
    with pytest.raises(ValueError, match="not an offset of queue://orders"):
        reader.partitions({"queue://other": 1}, {"queue://other": 2})
    with pytest.raises(ValueError, match="1 <= streamStart <= the next sequence number"):
        reader.partitions(_at(3, 4), _at(5, 4))
    reader.stop()
    tolerant.stop()


# --- writes -------------------------------------------------------------------------------------

_SIMPLE = StructType(
    [
        StructField("value", StringType()),
        StructField("destination", StringType()),
        StructField("priority", IntegerType()),
        StructField("region", StringType()),
        StructField("qty", IntegerType()),
    ]
)


def _simple_batch(rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    names = _SIMPLE.fieldNames()
    return pa.RecordBatch.from_pylist(
        [dict(zip(names, row, strict=True)) for row in rows],
        schema=pa.schema(
            [
                ("value", pa.string()),
                ("destination", pa.string()),
                ("priority", pa.int32()),
                ("region", pa.string()),
                ("qty", pa.int32()),
            ]
        ),
    )


def test_a_batch_write_publishes_simple_rows_atomically_and_skips_failed_attempts(
    url: str, session: Session
) -> None:
    writer = JmsBatchWriter(SinkOptions.parse({"url": url}, streaming=False), _SIMPLE)
    executor_side = _roundtrip(writer)
    first = executor_side.write(
        iter([_simple_batch([("a", "queue://eu", 7, "eu", 1), ("b", "queue://us", 4, "us", None)])])
    )
    _roundtrip(writer).write(iter([_simple_batch([("orphan", "queue://eu", 4, "eu", 9)])]))
    second = executor_side.write(iter([_simple_batch([("c", "queue://eu", 1, None, 3)])]))
    assert _texts(session, "eu") == []  # staged, not visible
    writer.commit([first, None, second])  # the middle attempt failed: no commit message
    eu = list(session.create_browser(session.create_queue("eu")))
    assert [(m.get_text(), m.get_jms_priority()) for m in eu] == [("a", 7), ("c", 1)]
    assert eu[0].get_int_property("qty") == 1 and eu[0].get_string_property("region") == "eu"
    assert not eu[1].property_exists("region")
    assert _texts(session, "us") == ["b"]
    staging = f"{writer._prefix}.p0"
    assert staging.startswith(STAGING_PREFIX)
    assert _texts(session, staging) == []  # orphan cleaned up too


def test_small_arrow_batches_are_staged_together_and_large_ones_each_at_once(
    url: str, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests: list[int] = []
    stage_encoded = Session.stage_encoded

    def counted(self: Session, queue: Queue, encoded: Any) -> Any:
        requests.append(len(encoded))
        return stage_encoded(self, queue, encoded)

    monkeypatch.setattr(Session, "stage_encoded", counted)
    writer = JmsBatchWriter(SinkOptions.parse({"url": url}, streaming=False), _SIMPLE)
    small = [_simple_batch([(f"m{n}", "queue://small", 4, "eu", n)]) for n in range(40)]
    writer.commit([_roundtrip(writer).write(iter(small))])
    assert requests == [40]  # 40 one-row batches: one request, at the end
    assert _texts(session, "small") == [f"m{n}" for n in range(40)]

    requests.clear()
    body = "x" * (STAGE_REQUEST_BYTES // 3)
    large = [
        _simple_batch([(f"{n}:{k}:{body}", "queue://large", 4, None, k) for k in range(3)])
        for n in range(3)
    ]
    writer.commit([_roundtrip(writer).write(iter(large))])
    assert requests == [3, 3, 3]  # each batch holds a request's worth: staged as it comes
    assert [text.partition(body)[0] for text in _texts(session, "large")] == [
        f"{n}:{k}:" for n in range(3) for k in range(3)
    ]


@pytest.mark.parametrize(
    ("byte_limit", "measured"),
    [
        (None, True),  # not set: Spark's default limit
        ("67108864", True),
        ("64m", True),
        ("2g", True),
        ("2147483647", False),  # Int.MaxValue, Spark's "no limit"
        ("2147483647b", False),
        (" 2147483647B ", False),
    ],
)
def test_spark_measures_every_row_unless_the_byte_limit_is_int_max(
    byte_limit: str | None, measured: bool
) -> None:
    assert measures_every_row(byte_limit) is measured


def test_null_nested_columns_are_the_list_and_map_columns_null_in_every_row() -> None:
    batch = pa.record_batch(
        {
            "map": pa.array([None, None], pa.map_(pa.string(), pa.int32())),
            "stream": pa.array([None, None], pa.list_(pa.int32())),
            "some": pa.array([None, [1]], pa.list_(pa.int32())),
            "text": pa.array([None, None], pa.string()),
            "record": pa.array([None, None], pa.struct([("a", pa.int32())])),
        }
    )
    assert null_nested_columns(batch) == ["map", "stream"]


class _Task:
    """What the sink asks of Spark's TaskContext, with the session's byte limit as given."""

    def __init__(self, byte_limit: str | None, partition: int = 0) -> None:
        self._byte_limit = byte_limit
        self._partition = partition

    def partitionId(self) -> int:
        return self._partition

    def getLocalProperty(self, key: str) -> str | None:
        return self._byte_limit if key == BYTE_LIMIT_SETTING else None


@pytest.mark.parametrize(
    ("rows", "byte_limit", "columns", "advised"),
    [
        (SLOW_HAND_OVER_ROWS, None, MESSAGE_SCHEMA.fieldNames(), True),
        (SLOW_HAND_OVER_ROWS - 1, None, MESSAGE_SCHEMA.fieldNames(), False),
        (SLOW_HAND_OVER_ROWS, "2147483647", MESSAGE_SCHEMA.fieldNames(), False),
        (SLOW_HAND_OVER_ROWS, None, [n for n in MESSAGE_SCHEMA.fieldNames() if n != "map"], True),
        (
            SLOW_HAND_OVER_ROWS,
            None,
            [n for n in MESSAGE_SCHEMA.fieldNames() if n not in ("map", "stream")],
            False,
        ),
    ],
)
def test_the_commit_warns_of_batches_spark_handed_over_in_time_square_in_their_rows(
    url: str,
    session: Session,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    rows: int,
    byte_limit: str | None,
    columns: list[str],
    advised: bool,
) -> None:
    sent = [session.create_text_message(f"t{n}") for n in range(rows)]
    batch = to_arrow(sent).select(columns).combine_chunks().to_batches()
    schema = StructType([MESSAGE_SCHEMA[name] for name in columns])
    writer = JmsBatchWriter(
        SinkOptions.parse({"url": url, "destination": "queue://copies"}, streaming=False), schema
    )
    monkeypatch.setattr("jms.spark.sink.TaskContext.get", lambda: _Task(byte_limit))
    staged = _roundtrip(writer).write(iter(batch))
    with caplog.at_level("WARNING", logger="jms.spark.sink"):
        writer.commit([staged])
    assert _texts(session, "copies") == [f"t{n}" for n in range(rows)]
    advice = [record.getMessage() for record in caplog.records]
    if not advised:
        assert advice == []
        return
    null_columns = [name for name in ("map", "stream") if name in columns]
    assert advice == [
        f"jms sink to queue://copies: Spark handed the rows to the sink in Arrow batches of up "
        f"to {rows:,} rows, measuring each batch after every row it added "
        f"(spark.sql.execution.arrow.maxBytesPerBatch is not 2147483647), with the column(s) "
        f"{', '.join(null_columns)} null in every row of a batch: Spark's time for such a column "
        "grows with the square of a batch's rows (in its default batches of 10,000 rows, about "
        f"as much CPU again as the write itself). To avoid it, leave out {', '.join(null_columns)} "
        f"(df.drop({', '.join(map(repr, null_columns))})) or write in the session settings "
        'jms.spark.pipeline.ARROW_SETTINGS (docs/spark.md, "Arrow batches").'
    ]


def test_a_stream_warns_for_each_micro_batch_spark_handed_over_so(
    url: str, session: Session, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    sent = [session.create_text_message(f"t{n}") for n in range(SLOW_HAND_OVER_ROWS)]
    batches = to_arrow(sent).combine_chunks().to_batches()
    options = SinkOptions.parse(
        {"url": url, "destination": "queue://streamed", "sinkId": "slow-hand-over"},
        streaming=True,
    )
    writer = JmsStreamWriter(options, MESSAGE_SCHEMA)
    monkeypatch.setattr("jms.spark.sink.TaskContext.get", lambda: _Task(None))
    with caplog.at_level("WARNING", logger="jms.spark.sink"):
        for batch_id in range(2):
            writer.commit([_roundtrip(writer).write(iter(batches))], batch_id)
    assert len(_texts(session, "streamed")) == 2 * SLOW_HAND_OVER_ROWS
    assert [record.getMessage().partition(": ")[0] for record in caplog.records] == [
        "jms sink to queue://streamed"
    ] * 2


def test_message_schema_rows_are_republished_with_their_types(url: str, session: Session) -> None:
    sent = _orders(session, 5)
    rows = to_arrow(sent).to_batches()
    writer = JmsBatchWriter(
        SinkOptions.parse({"url": url, "destination": "queue://copy"}, streaming=False),
        MESSAGE_SCHEMA,
    )
    writer.commit([_roundtrip(writer).write(iter(rows))])
    copies = list(session.create_browser(session.create_queue("copy")))
    assert [_content(m) for m in copies] == [_content(m) for m in sent]
    assert [m.get_jms_priority() for m in copies] == [m.get_jms_priority() for m in sent]
    assert [str(m.get_jms_destination()) for m in copies] == ["queue://copy"] * 5


def test_a_stream_batch_is_published_once_per_batch_id(url: str, session: Session) -> None:
    options = SinkOptions.parse(
        {"url": url, "destination": "queue://out", "checkpointLocation": "/tmp/x"}, streaming=True
    )
    schema = StructType([StructField("text", StringType())])
    writer = JmsStreamWriter(options, schema)
    batch = pa.RecordBatch.from_pylist([{"text": "one"}, {"text": "two"}])
    staged = _roundtrip(writer).write(iter([batch]))
    writer.commit([staged], 0)
    writer.commit([staged], 0)  # the driver retried the commit
    rerun = _roundtrip(writer).write(iter([batch]))  # the batch ran again after a crash
    JmsStreamWriter(options, schema).commit([rerun], 0)
    assert _texts(session, "out") == ["one", "two"]
    assert _texts(session, f"{writer._prefix}.p0") == []
    JmsStreamWriter(options, schema).commit([_roundtrip(writer).write(iter([batch]))], 1)
    assert _texts(session, "out") == ["one", "two", "one", "two"]
    markers = list(session.create_browser(session.create_queue(COMMITS_PREFIX + options.sink_id)))
    assert [m.get_long_property("JMS_jms_SparkBatch") for m in markers] == [1]


def test_a_batch_id_below_the_sinks_last_is_refused_not_dropped(
    url: str, session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    """Found in review (28 November): a second query under one sinkId (or one started over)
    had every batch it wrote quietly dropped as "published before"; a jms-to-jms stream then
    consumed those messages from its source. Spark runs only a sink's last batch again, so an
    older batch id is another writer's and is refused; the last one again is a re-run."""
    options = SinkOptions.parse(
        {"url": url, "destination": "queue://out", "sinkId": "shared"}, streaming=True
    )
    schema = StructType([StructField("text", StringType())])
    writer = JmsStreamWriter(options, schema)

    def staged(text: str) -> StagedPartition:
        batch = pa.RecordBatch.from_pylist([{"text": text}])
        return _roundtrip(writer).write(iter([batch]))

    writer.commit([staged("first query, batch 5")], 5)
    with caplog.at_level("WARNING", logger="jms.spark.sink"):
        writer.commit([staged("batch 5 run again")], 5)
    assert [record.getMessage() for record in caplog.records] == [
        "jms sink shared: batch 5 was published before, so its rows were not published again "
        "(a batch run again after a failure; or two writes of one batch under one sinkId, of "
        "which only the first is published: give each write its own sinkId)"
    ]
    with pytest.raises(
        IllegalStateException,
        match=r"queue://jms\.spark\.commits\.shared marks batch 5 published, so batch 0 is "
        r"not a run again of its last batch .* Nothing was published",
    ):
        JmsStreamWriter(options, schema).commit([staged("second query, batch 0")], 0)
    assert _texts(session, "out") == ["first query, batch 5"]


def test_one_checkpoint_spelled_several_ways_names_one_sink() -> None:
    """Found in review: a trailing / or a file: URI named another sink, so a batch run again
    after a crash was published twice."""

    def sink_id(location: str) -> str | None:
        options = {"url": "memory://", "checkpointLocation": location}
        return SinkOptions.parse(options, streaming=True).sink_id

    same = {sink_id(spelling) for spelling in ("/data/ckpt", "/data/ckpt/", "file:///data/ckpt")}
    assert same == {sink_id("file:/data//ckpt")} and len(same) == 1
    assert sink_id("/data/other") not in same
    assert sink_id("hdfs://nn/data/ckpt/") == sink_id("HDFS://nn/data/ckpt")


def test_a_refused_row_is_named_by_its_partition_and_its_number_in_it(
    url: str, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in review: the row number counted from the start of its Arrow batch."""
    writer = JmsBatchWriter(SinkOptions.parse({"url": url}, streaming=False), _SIMPLE)
    rows = [(f"m{n}", "queue://out", 10 if n == 23 else 4, "eu", n) for n in range(30)]
    batches = [_simple_batch(rows[start : start + 10]) for start in (0, 10, 20)]
    monkeypatch.setattr("jms.spark.sink.TaskContext.get", lambda: _Task(None, partition=3))
    with pytest.raises(
        MessageFormatException, match=r"partition 3, row 23 does not make a message: .*10"
    ):
        _roundtrip(writer).write(iter(batches))


def test_an_aborted_write_drops_what_every_partition_staged(
    url: str, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in review: the staged rows of a task that failed stayed on the broker for good."""
    writer = JmsBatchWriter(SinkOptions.parse({"url": url}, streaming=False), _SIMPLE)
    done = _simple_batch([("a", "queue://out", 4, "eu", 1)])
    monkeypatch.setattr("jms.spark.sink.TaskContext.get", lambda: _Task(None, partition=0))
    first = _roundtrip(writer).write(iter([done]))

    def failing() -> Iterator[pa.RecordBatch]:
        yield _simple_batch([("b" * 1000, "queue://out", 4, "eu", 2)] * 5000)  # 4 MiB+: staged
        raise RuntimeError("the task failed")

    monkeypatch.setattr("jms.spark.sink.TaskContext.get", lambda: _Task(None, partition=1))
    with pytest.raises(RuntimeError):
        _roundtrip(writer).write(failing())
    assert _texts(session, f"{writer._prefix}.p1") != []
    writer.abort([first, None])
    assert _texts(session, f"{writer._prefix}.p0") == []
    assert _texts(session, f"{writer._prefix}.p1") == []
    assert _texts(session, "out") == []


def test_rows_cannot_be_published_to_the_sinks_own_queues(url: str, session: Session) -> None:
    """Found in review: a row could go to jms.spark.commits.<sink> and forge a batch marker."""
    writer = JmsBatchWriter(SinkOptions.parse({"url": url}, streaming=False), _SIMPLE)
    rows = [("ok", "queue://out", 4, "eu", 1), ("forged", "queue://jms.spark.commits.v", 4, "", 1)]
    with pytest.raises(
        MessageFormatException,
        match=r"partition 0, row 1 has destination 'queue://jms\.spark\.commits\.v', a queue of "
        r"the jms sink's own",
    ):
        _roundtrip(writer).write(iter([_simple_batch(rows)]))
    with pytest.raises(
        ValueError, match=r"option destination is queue://jms\.spark\.staging\.x, a"
    ):
        SinkOptions.parse(
            {"url": url, "destination": "queue://jms.spark.staging.x"}, streaming=False
        )


def test_a_commit_that_misses_staged_messages_publishes_nothing(url: str, session: Session) -> None:
    options = SinkOptions.parse({"url": url, "destination": "queue://out"}, streaming=False)
    schema = StructType([StructField("value", BinaryType())])
    writer = JmsBatchWriter(options, schema)
    staged = writer.write(iter([pa.RecordBatch.from_pylist([{"value": b"\x01"}])]))
    session.create_sequence_reader(
        session.create_queue(f"{writer._prefix}.p0")
    ).acknowledge_through(10)
    with pytest.raises(JMSException, match="holds 0 of the 1 messages staged as numbers 1 to 1"):
        writer.commit([staged])
    assert _texts(session, "out") == []


# --- options and schemas ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "streaming", "message"),
    [
        ({"destination": "queue://a"}, False, "option url is missing"),
        (
            {"url": "memory://", "destination": "queues://a"},
            False,
            "option destination is 'queues://a'",
        ),
        ({"url": "memory://", "destination": "topic://t"}, False, "option subscriptionName"),
        (
            {"url": "memory://", "destination": "queue://a", "clientId": "c"},
            False,
            "option clientId \\('c'\\) names a durable subscription",
        ),
        (
            {"url": "memory://", "destination": "queue://a", "startingOffsets": "soon"},
            False,
            "option startingOffsets is 'soon'",
        ),
        (
            {"url": "memory://", "destination": "queue://a", "startingOffsets": '{"queue://b": 3}'},
            False,
            "names \\['queue://b'\\]",
        ),
        (
            {"url": "memory://", "destination": "queue://a", "endingOffsets": '{"queue://a": -2}'},
            False,
            "offset -2",
        ),
        (
            {"url": "memory://", "destination": "queue://a", "endingOffsets": "earliest"},
            False,
            "option endingOffsets is 'earliest'",
        ),
        (
            {"url": "memory://", "destination": "queue://a", "minPartitions": "0"},
            False,
            "option minPartitions is '0'; it must be at least 1",
        ),
        (
            {"url": "memory://", "destination": "queue://a", "maxOffsetsPerTrigger": "5"},
            False,
            "is for streaming reads",
        ),
        (
            {"url": "memory://", "destination": "queue://a", "endingOffsets": "latest"},
            True,
            "option endingOffsets \\('latest'\\) is for batch reads",
        ),
        (
            {"url": "memory://", "destination": "queue://a", "failOnDataLoss": "maybe"},
            True,
            "option failOnDataLoss is 'maybe'; expected true or false",
        ),
        (
            {"url": "memory://", "destination": "queue://a", "selector": "a >"},
            True,
            "option selector is 'a >'",
        ),
        (
            {"url": "memory://", "destination": "queue://a", "startingOffsets": ""},
            True,
            'option startingOffsets is \'\'; expected "earliest", "latest" or JSON',
        ),
        (
            {"url": "memory://", "destination": "queue://a", "endingOffsets": ""},
            False,
            "option endingOffsets is ''; expected \"latest\" or JSON",
        ),
        (
            {
                "url": "memory://",
                "destination": "queue://a",
                "startingOffsets": '{"queue://a": 3, "queue://a": 1}',
            },
            False,
            "which gives queue://a twice; give each destination once",
        ),
        ({"store": "/x", "destination": "queue://a"}, True, "option store \\('/x'\\) is for batch"),
        (
            {"store": "/x", "destination": "queue://a", "selector": "a = 1"},
            False,
            "selector_to_column",
        ),
    ],
)
def test_bad_source_options_name_the_option_and_value(
    options: dict[str, str], streaming: bool, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        SourceOptions.parse(options, streaming=streaming)


@pytest.mark.parametrize(
    ("parse", "options", "message"),
    [
        (
            SourceOptions.parse,
            {"startingOffset": "latest"},
            r'option startingoffset is not an option of format\("jms"\) reads; did you mean '
            r"startingOffsets\? they take url, user, password",
        ),
        (
            SourceOptions.parse,
            {"SELECTR": "a = 1"},
            "option selectr is .* did you mean selector\\?",
        ),
        (SourceOptions.parse, {"sinkId": "s"}, "option sinkid is not an option of .* reads; they"),
        (SourceOptions.parse, {"path": "queue://a"}, "reads take no path .* 'queue://a'"),
        (SinkOptions.parse, {"destinaton": "queue://a"}, "writes; did you mean destination\\?"),
        (SinkOptions.parse, {"selector": "a = 1"}, "option selector is not an option of .* writes"),
        (SinkOptions.parse, {"path": "/p"}, "writes take no path"),
    ],
)
def test_unknown_options_are_refused_with_the_closest_known_name(
    parse: Any, options: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        parse({"url": "memory://", "destination": "queue://a", **options}, streaming=False)


def test_a_streaming_write_takes_what_spark_adds_to_its_options() -> None:
    spark_adds = {"checkpointlocation": "/tmp/ckpt", "queryname": "q"}
    options = SinkOptions.parse({"url": "memory://", **spark_adds}, streaming=True)
    assert options.sink_id is not None and options.sink_id.startswith("ckpt-")


@pytest.mark.parametrize(
    ("options", "streaming", "message"),
    [
        ({"url": "memory://"}, True, "needs option sinkId or option checkpointLocation"),
        ({"url": "memory://", "sinkId": "a b"}, False, "option sinkId is 'a b'"),
        ({"url": "memory://", "batchId": "3"}, False, "option batchId \\(3\\) needs option sinkId"),
        ({"url": "memory://", "sinkId": "s", "batchId": "2"}, True, "is for batch writes"),
        (
            {"url": "memory://", "sinkId": "s", "batchId": str(2**63)},
            False,
            "option batchId is '9223372036854775808'; it must be at most 9223372036854775807",
        ),
        ({"url": "memory://", "destination": "temp-queue://x"}, False, "temporary destination"),
        ({"url": "stomp://h:1", "ca": "/ca.pem"}, False, "option ca .* is for a stomp\\+ssl://"),
        ({"url": "stomp+ssl://h:1", "cert": "/c.pem"}, False, "options cert and key go together"),
    ],
)
def test_bad_sink_options_name_the_option_and_value(
    options: dict[str, str], streaming: bool, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        SinkOptions.parse(options, streaming=streaming)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (StructType([StructField("body", StringType())]), "exactly one body column"),
        (
            StructType(
                [StructField("text", BinaryType()), StructField("destination", StringType())]
            ),
            "column text is binary; it must be string",
        ),
        (
            StructType([StructField("value", StringType()), StructField("when", StructType())]),
            "column when is struct<>, which no message property can hold",
        ),
        (
            StructType([StructField("value", StringType()), StructField("priority", StringType())]),
            "column priority \\(the JMS header\\) is string; it must be int",
        ),
        (
            StructType([StructField("value", StringType()), StructField("bad-name", StringType())]),
            "column bad-name cannot be a message property",
        ),
        (StructType([StructField("value", StringType())]), "say where the messages go"),
        (
            StructType([StructField("body_type", StringType())]),
            "written as MESSAGE_SCHEMA rows, but it lacks timestamp, delivery_mode, priority, "
            "expiration, delivery_time, redelivered, properties \\(only columns that may be null "
            "in every row can be left out: message_id, correlation_id,",
        ),
    ],
)
def test_unwritable_schemas_are_refused_naming_the_column(schema: StructType, message: str) -> None:
    options = SinkOptions.parse({"url": "memory://"}, streaming=False)
    with pytest.raises(ValueError, match=message):
        JmsBatchWriter(options, schema)


def test_the_data_source_reads_only_message_schema_and_only_appends() -> None:
    source = JmsDataSource({"url": "memory://", "destination": "queue://a"})
    assert source.name() == "jms" and source.schema() == MESSAGE_SCHEMA
    with pytest.raises(ValueError, match=r"do not give \.schema"):
        source.reader(StructType([StructField("x", StringType())]))
    with pytest.raises(ValueError, match="only appends"):
        source.writer(MESSAGE_SCHEMA, True)
    assert isinstance(source.reader(MESSAGE_SCHEMA), JmsBatchReader)
    assert isinstance(source.streamReader(MESSAGE_SCHEMA), JmsStreamReader)
    partition = RangePartition(3, 9, None)
    assert pickle.loads(pickle.dumps(partition)).end == 9


# --- choices documented in docs/semantics.md, "Spark pipeline" ----------------------------------


def test_streams_and_batch_reads_start_at_earliest_unless_told(url: str) -> None:
    assert _source(url, streaming=True).starting == EARLIEST
    assert _source(url, streaming=True, startingOffsets="latest").starting == LATEST
    topic = {"destination": "topic://t", "subscriptionName": "s", "url": url}
    assert SourceOptions.parse(topic, streaming=True).starting == EARLIEST
    assert _source(url).starting == EARLIEST
    assert _source(url).ending == LATEST


def test_a_stream_commit_with_a_selector_leaves_unselected_messages_on_the_queue(
    url: str, session: Session
) -> None:
    _orders(session, 6)
    reader = JmsStreamReader(_source(url, streaming=True, selector="n < 2"))
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadAllAvailable())
    assert [
        m.get_long_property("n") for m in _read(reader, list(reader.partitions(start, end)))
    ] == [0, 1]
    assert reader.latestOffset(end, ReadAllAvailable()) == end  # consumes the batch
    assert reader.latestOffset(end, ReadAllAvailable()) == end  # again: still nothing lost
    consumer = session.create_consumer(session.create_queue("orders"))
    received = [consumer.receive(2000) for _ in range(4)]
    assert sorted(m.get_long_property("n") for m in received if m is not None) == [2, 3, 4, 5]
    assert consumer.receive_no_wait() is None
    consumer.close()
    assert reader.latestOffset(end, ReadAllAvailable()) == end  # nothing new for the stream
    reader.stop()


def test_a_delayed_message_is_read_in_a_later_batch_exactly_once(
    url: str, session: Session
) -> None:
    producer = session.create_producer(session.create_queue("orders"))
    producer.send(session.create_text_message("first"))
    producer.set_delivery_delay(800)
    producer.send(session.create_text_message("later"))
    producer.set_delivery_delay(0)
    producer.send(session.create_text_message("now"))
    reader = JmsStreamReader(_source(url, streaming=True))
    start = reader.initialOffset()
    assert start == _at(1)
    batches: list[list[str]] = []
    deadline = time.monotonic() + 20
    while sum(map(len, batches)) < 3 and time.monotonic() < deadline:
        end = reader.latestOffset(start, ReadAllAvailable())
        read = _read(reader, list(reader.partitions(start, end)))
        batches.append([m.get_text() for m in read if isinstance(m, TextMessage)])
        start = end
        time.sleep(0.1)
    batches = [batch for batch in batches if batch]
    assert batches == [["first"], ["later", "now"]]  # the stream waited for "later"
    assert reader.latestOffset(start, ReadAllAvailable()) == start  # consumes the last batch
    assert _texts(session, "orders") == []
    reader.stop()


def test_a_deleted_subscription_is_data_loss_unless_told_otherwise(
    url: str, session: Session
) -> None:
    options = {
        "url": url,
        "destination": "topic://feed",
        "subscriptionName": "spark",
        "clientId": "feeder",
    }
    reader = JmsStreamReader(SourceOptions.parse(options, streaming=True))
    start = reader.initialOffset()  # creates the subscription
    owner = ConnectionFactory(url, client_id="feeder").create_connection()
    owner.create_session().unsubscribe("spark")
    owner.close()
    with pytest.raises(InvalidDestinationException, match="deleted while this stream read it"):
        reader.latestOffset(start, ReadAllAvailable())
    tolerant = JmsStreamReader(
        SourceOptions.parse({**options, "failOnDataLoss": "false"}, streaming=True)
    )
    assert tolerant.latestOffset(start, ReadAllAvailable()) == start  # subscribed again
    source = TopicSubscription(Topic("feed"), "spark", "feeder")
    assert list(session.create_sequence_reader(source).read(1)) == []
    reader.stop()
    tolerant.stop()


def test_a_republished_message_keeps_its_remaining_time_to_live(url: str, session: Session) -> None:
    producer = session.create_producer(session.create_queue("orders"))
    producer.send(session.create_text_message("perishable"), time_to_live=600_000)
    (sent,) = list(session.create_browser(session.create_queue("orders")))
    writer = JmsBatchWriter(
        SinkOptions.parse({"url": url, "destination": "queue://copy"}, streaming=False),
        MESSAGE_SCHEMA,
    )
    writer.commit([writer.write(iter(to_arrow([sent]).to_batches()))])
    (copy,) = list(session.create_browser(session.create_queue("copy")))
    assert copy.get_jms_message_id() != sent.get_jms_message_id()
    assert abs(copy.get_jms_expiration() - sent.get_jms_expiration()) < 5_000


def test_a_batch_read_and_write_over_stomp_ssl(tmp_path: Path) -> None:
    certificates = make_certificates(tmp_path)
    tls = ServerTls(certificates.server_cert, certificates.server_key)
    broker = Broker()
    try:
        with ServerThread(broker, port=None, tls_port=0, ssl_context=tls.context()) as served:
            assert served.server is not None
            broker_options = {
                "url": f"stomp+ssl://localhost:{served.server.tls_port}",
                "ca": str(certificates.ca),
            }
            writer = JmsBatchWriter(
                SinkOptions.parse(
                    {**broker_options, "destination": "queue://orders"}, streaming=False
                ),
                _SIMPLE,
            )
            staged = _roundtrip(writer).write(
                iter([_simple_batch([("over TLS", "queue://orders", 4, "eu", 1)])])
            )
            writer.commit([staged])
            reader = JmsBatchReader(_source(broker_options["url"], ca=broker_options["ca"]))
            read = _read(reader, list(reader.partitions()))
            assert [m.get_body(str) for m in read] == ["over TLS"]
            untrusting = JmsBatchReader(_source(broker_options["url"]))
            with pytest.raises(JMSException, match="unable to get local issuer"):
                list(untrusting.partitions())
    finally:
        broker.close()
