"""The writers of ``format("jms")``: a batch of rows published atomically, once per batch id.

Theory of operation (docs/spark.md, "The sink"). Spark runs ``write`` in tasks on executors and
``commit`` once in the driver after every task succeeded; a task may run more than once, and a
streaming batch may run again after a crash. So:

1. **Stage.** Each task attempt sends its messages, each wrapped whole (``jms.message.codec``) in a
   BytesMessage tagged with the attempt's id, to its partition's *staging queue*
   ``jms.spark.staging.<sink>.p<partition>`` — nobody consumes it — and reports (staging queue,
   attempt, count).
2. **Publish.** The driver's ``commit`` reads the staged messages of the reported attempts (range
   reads with a selector on the attempt: orphans of failed attempts are skipped), partition after
   partition, so the rows keep their order (a source's partitions are consecutive ranges), and in
   **one broker transaction** sends each to its destination and, for a named sink, a marker
   carrying the batch id to ``jms.spark.commits.<sink>``. Consumers see the whole batch at once or
   nothing.
3. **Remember.** Before publishing, ``commit`` reads the marker: a batch id at or below the last
   one published is not published again (a re-run batch after a crash, or ``commit`` retried).
4. **Clean up.** After the transaction, the staging queues are consumed through the numbers they
   had reached (orphans included) and older markers are dropped. A crash between 2 and 4 only leaves
   work for the next commit; it never publishes twice, because the marker went with the batch.

A sink is named by the ``sinkId`` option, or for streams by its checkpoint location; an unnamed
batch write stages to a queue of its own and publishes without a marker. One sink must not be
written by two queries at once. This module is the only place the sink touches a broker, always
through ``jms.client``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from jms.broker import wall_clock_ms
from jms.client import Connection, ConnectionFactory, MessageProducer, Session
from jms.errors import JMSException
from jms.message import BytesMessage, Message, Queue
from jms.message.codec import decode, encode
from jms.spark.options import SinkOptions
from jms.spark.outgoing import OutgoingRows

__all__ = [
    "ATTEMPT_PROPERTY",
    "BATCH_PROPERTY",
    "COMMITS_PREFIX",
    "STAGING_PREFIX",
    "JmsBatchWriter",
    "JmsStreamWriter",
    "StagedPartition",
    "last_published_batch",
    "publish",
]

logger = logging.getLogger(__name__)

STAGING_PREFIX: Final = "jms.spark.staging."
COMMITS_PREFIX: Final = "jms.spark.commits."
#: On a staged message: the id of the task attempt that staged it.
ATTEMPT_PROPERTY: Final = "JMS_jms_SparkAttempt"
#: On a commit marker: the batch id published.
BATCH_PROPERTY: Final = "JMS_jms_SparkBatch"
# Staged sends per broker transaction in a task (staging is invisible, so any size is safe).
_STAGE_CHUNK: Final = 1000


@dataclass(frozen=True, slots=True)
class StagedPartition(WriterCommitMessage):
    """What one task attempt staged: ``count`` messages tagged ``attempt`` in ``staging``."""

    staging: str
    attempt: str
    count: int


def _connect(options: SinkOptions) -> Connection:
    return ConnectionFactory(options.url).create_connection(options.user, options.password)


def stage(
    options: SinkOptions, rows: OutgoingRows, prefix: str, batches: Iterator[pa.RecordBatch]
) -> StagedPartition:
    """Send the messages of ``batches`` to this task's partition's staging queue (under
    ``prefix``), tagged with a new attempt id."""
    attempt = uuid.uuid4().hex
    task = TaskContext.get()
    staging = f"{prefix}.p{task.partitionId() if task is not None else 0}"
    count = 0
    with _connect(options) as connection:
        session = connection.create_session(transacted=True)
        producer = session.create_producer(Queue(staging))
        for batch in batches:
            for message in rows.messages(batch):
                wrapper = session.create_bytes_message()
                wrapper.write_bytes(encode(message))
                wrapper.set_string_property(ATTEMPT_PROPERTY, attempt)
                producer.send(wrapper)
                count += 1
                if count % _STAGE_CHUNK == 0:
                    session.commit()
        session.commit()
    return StagedPartition(staging, attempt, count)


def last_published_batch(session: Session, sink_id: str) -> int | None:
    """The highest batch id the sink ``sink_id`` has published, or None if none yet."""
    reader = session.create_sequence_reader(Queue(COMMITS_PREFIX + sink_id))
    found = [
        marker.get_long_property(BATCH_PROPERTY)
        for page in reader.read(1)
        for _, marker in page
        if marker.property_exists(BATCH_PROPERTY)
    ]
    return max(found) if found else None


def _send_final(producer: MessageProducer, message: Message, now: int) -> None:
    """Send a staged message to its destination with its own delivery mode, priority, remaining
    time to live (an expired one still goes, to expire at once as the broker decides) and
    remaining delivery delay."""
    expiration = message.get_jms_expiration()
    time_to_live = 0 if expiration == 0 else max(1, expiration - now)
    delivery_time = message.get_jms_delivery_time()
    producer.set_delivery_delay(max(0, delivery_time - now) if delivery_time else 0)
    producer.send(
        message.get_jms_destination(),
        message,
        delivery_mode=message.get_jms_delivery_mode(),
        priority=message.get_jms_priority(),
        time_to_live=time_to_live,
    )


def publish(
    options: SinkOptions, staged: list[WriterCommitMessage | None], batch_id: int | None
) -> int:
    """Publish what the reported attempts staged, in one transaction (see the module docstring);
    return how many messages went out (0 for a batch id published before)."""
    parts = [part for part in staged if isinstance(part, StagedPartition)]
    expected = sum(part.count for part in parts)
    sink_id = options.sink_id if batch_id is not None else None
    with _connect(options) as connection:
        session = connection.create_session()
        through = {
            name: session.create_sequence_reader(Queue(name)).last_sequence()
            for name in dict.fromkeys(part.staging for part in parts)
        }
        published = 0
        done = last_published_batch(session, sink_id) if sink_id is not None else None
        if done is not None and batch_id is not None and batch_id <= done:
            logger.info("sink %s: batch %d was published before; not again", sink_id, batch_id)
        elif expected or sink_id is not None:
            published = _publish_transaction(connection, options, parts, through, sink_id, batch_id)
            if published != expected:
                raise JMSException(
                    f"the staging queues {', '.join(through)} hold {published} of the {expected} "
                    "messages the batch's tasks staged; nothing was published"
                )
        for name, last in through.items():
            session.create_sequence_reader(Queue(name)).acknowledge_through(last)
        if sink_id is not None:
            commits = session.create_sequence_reader(Queue(COMMITS_PREFIX + sink_id))
            commits.acknowledge_through(commits.last_sequence() - 1)
    return published


def _publish_transaction(
    connection: Connection,
    options: SinkOptions,
    parts: list[StagedPartition],
    through: dict[str, int],
    sink_id: str | None,
    batch_id: int | None,
) -> int:
    """Send the staged messages of ``parts`` (in their order; each staging queue read up to the
    number in ``through``) and the marker in one transaction; return how many messages it sent.
    Rolled back unless every one was found."""
    expected = sum(part.count for part in parts)
    session = connection.create_session(transacted=True)
    sent = 0
    try:
        producer = session.create_producer(None)
        now = wall_clock_ms()
        for part in parts:
            last = through[part.staging]
            if not part.count or not last:
                continue
            reader = session.create_sequence_reader(
                Queue(part.staging), f"{ATTEMPT_PROPERTY} = '{part.attempt}'"
            )
            for page in reader.read(1, last, options.page_size):
                for _, wrapper in page:
                    assert isinstance(wrapper, BytesMessage)
                    _send_final(producer, decode(wrapper.get_body(bytes) or b""), now)
                    sent += 1
        if sent != expected:
            session.rollback()
            return sent
        if sink_id is not None:
            marker = session.create_message()
            marker.set_long_property(BATCH_PROPERTY, batch_id)
            session.create_producer(Queue(COMMITS_PREFIX + sink_id)).send(marker)
        session.commit()
    finally:
        session.close()
    return sent


def discard(options: SinkOptions, staged: list[WriterCommitMessage | None]) -> None:
    """Drop what the reported attempts of a write Spark aborted staged (with whatever else their
    staging queues hold; failed attempts that reported nothing are cleaned by the next commit)."""
    queues = dict.fromkeys(part.staging for part in staged if isinstance(part, StagedPartition))
    if not queues:
        return
    with _connect(options) as connection:
        session = connection.create_session()
        for name in queues:
            reader = session.create_sequence_reader(Queue(name))
            reader.acknowledge_through(reader.last_sequence())


class JmsBatchWriter(DataSourceArrowWriter):
    """``df.write.format("jms")``: all rows of the write published in one transaction; with
    ``sinkId`` and ``batchId`` options (for ``foreachBatch``), at most once per batch id."""

    def __init__(self, options: SinkOptions, schema: StructType) -> None:
        self._options = options
        self._rows = OutgoingRows(schema, options.destination)
        self._prefix = STAGING_PREFIX + (options.sink_id or f"write-{uuid.uuid4().hex}")

    def write(self, iterator: Iterator[pa.RecordBatch]) -> StagedPartition:
        return stage(self._options, self._rows, self._prefix, iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        publish(self._options, messages, self._options.batch_id)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        discard(self._options, messages)


class JmsStreamWriter(DataSourceStreamArrowWriter):
    """``writeStream.format("jms")``: each micro-batch published in one transaction, at most once
    per batch id (the sink is named by ``sinkId`` or the checkpoint location)."""

    def __init__(self, options: SinkOptions, schema: StructType) -> None:
        assert options.sink_id is not None
        self._options = options
        self._rows = OutgoingRows(schema, options.destination)
        self._prefix = STAGING_PREFIX + options.sink_id

    def write(self, iterator: Iterator[pa.RecordBatch]) -> StagedPartition:
        return stage(self._options, self._rows, self._prefix, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        publish(self._options, messages, batchId)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        discard(self._options, messages)
