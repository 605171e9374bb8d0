"""The writers of ``format("jms")``: a batch of rows published atomically, once per batch id.

Theory of operation (docs/spark.md, "The sink"). Spark runs ``write`` in tasks on executors and
``commit`` once in the driver after every task succeeded; a task may run more than once, and a
streaming batch may run again after a crash. So the rows cross the network once, from the tasks
to the broker, are written to its store once, and the driver only says which of them to publish:

1. **Stage.** Each task attempt sends its messages (``jms.broker.staging``) to its partition's
   *staging queue* ``jms.spark.staging.<sink>.p<partition>`` -- nobody consumes it -- an Arrow
   batch at a time, or several small ones together (``Session.stage_encoded``: over STOMP,
   frames of a few MiB of codec encodings). The broker checks and stamps each message, stores
   it there, and answers with the numbers it got; the task reports (staging queue, those
   ranges).
2. **Publish.** The driver's ``commit`` sends one request, ``Session.publish_staged``: the broker
   publishes the reported ranges (what failed attempts staged is not among them), partition after
   partition so the rows keep their order (a source's partitions are consecutive ranges), in
   **one broker transaction** together with, for a named sink, a marker carrying the batch id in
   ``jms.spark.commits.<sink>``; consumers see the whole batch at once or nothing. PERSISTENT
   messages to a queue are moved, not written again. A staged message missing makes the broker
   refuse the whole request.
3. **Remember.** The broker reads the marker in the same step: the last batch id published is
   not published again (a re-run batch after a crash, or ``commit`` retried), and one below it
   is refused (another query under the same name: Spark runs only the last batch again).
4. **Clean up.** In the same transaction the staging queues are consumed whole (what failed
   attempts left included) and the older markers are dropped. So a crash at any point either
   published the batch with its marker or left it staged for the next commit; never both, never
   twice.

A sink is named by the ``sinkId`` option, or for streams by its checkpoint location; an unnamed
batch write stages to a queue of its own and publishes without a marker. One sink must not be
written by two queries at once. This module is the only place the sink touches a broker, always
through ``jms.client``.

The driver's commit also logs a warning when Spark handed the tasks their rows the slow way:
null list or map columns in big Arrow batches it measured after every row (``hand_over_advice``).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from jms.client import (
    BatchMarker,
    Connection,
    StagedRange,
)
from jms.errors import JMSException, MessageFormatException
from jms.message import Destination, Queue
from jms.spark.options import COMMITS_PREFIX, STAGING_PREFIX, SinkOptions, sink_queue_refusal
from jms.spark.outgoing import OutgoingRows
from jms.spark.pipeline import BYTE_LIMIT_SETTING, NO_BYTE_LIMIT

__all__ = [
    "COMMITS_PREFIX",
    "SLOW_HAND_OVER_ROWS",
    "STAGE_REQUEST_BYTES",
    "STAGING_PREFIX",
    "JmsBatchWriter",
    "JmsStreamWriter",
    "StagedPartition",
    "hand_over_advice",
    "measures_every_row",
    "null_nested_columns",
    "publish",
]

logger = logging.getLogger(__name__)

#: A task asks the broker to stage its messages at least this many bytes of encodings at a time
#: (all of them at the end), whatever the size of the Arrow batches Spark hands it: Spark's
#: hand-over is fastest in batches of 1,000 rows or so (docs/spark.md, "Arrow batches"), and
#: each staging request costs the broker a store commit.
STAGE_REQUEST_BYTES: Final = 4 * 1024 * 1024
#: From this many rows in an Arrow batch that Spark measured after every row it added, a list or
#: map column null in every row of the batch makes the driver's commit log a warning: Spark's
#: time for such a column grows with the square of the batch's rows (docs/spark.md, "Why null
#: list and map columns cost the most") -- for a message's ``map`` and ``stream`` about 22 µs of
#: CPU a row in Spark's default batches of 10,000 rows, about 4 at 2,000, against some 24 for the
#: rest of the write of a 1 KiB message.
SLOW_HAND_OVER_ROWS: Final = 2000

_BYTE_UNITS: Final = {
    unit: 2 ** (10 * power)
    for power, units in enumerate(
        (("", "b"), ("k", "kb"), ("m", "mb"), ("g", "gb"), ("t", "tb"), ("p", "pb"))
    )
    for unit in units
}
_BYTE_SIZE: Final = re.compile(r"\s*(-?\d+)\s*([a-z]*)\s*")


@dataclass(frozen=True, slots=True)
class StagedPartition(WriterCommitMessage):
    """What one task attempt staged: the messages numbered ``ranges`` (first, last) in the
    staging queue ``staging``."""

    staging: str
    ranges: tuple[tuple[int, int], ...]
    # Columns null in every row of an Arrow batch of SLOW_HAND_OVER_ROWS rows or more that Spark
    # measured after every row, and the most rows such a batch had.
    slow_columns: tuple[str, ...] = ()
    slow_batch_rows: int = 0


def measures_every_row(byte_limit: str | None) -> bool:
    """Whether Spark measures each Arrow batch it hands to Python after every row it adds, under
    ``byte_limit``, the session's ``spark.sql.execution.arrow.maxBytesPerBatch`` (None: not set,
    so Spark's default, a limit)."""
    if byte_limit is None:
        return True
    found = _BYTE_SIZE.fullmatch(byte_limit.lower())
    if found is None or found.group(2) not in _BYTE_UNITS:
        return True  # not a size: Spark's own reading of it decides, and only "no limit" skips
    return int(found.group(1)) * _BYTE_UNITS[found.group(2)] != NO_BYTE_LIMIT


def null_nested_columns(batch: pa.RecordBatch) -> list[str]:
    """The list and map columns of ``batch`` that are null in every row of it."""
    return [
        field.name
        for field, column in zip(batch.schema, batch.columns, strict=True)
        if (pa.types.is_list(field.type) or pa.types.is_map(field.type))
        and column.null_count == batch.num_rows
    ]


def _connect(options: SinkOptions) -> Connection:
    return options.broker.connect()


def stage(
    options: SinkOptions, rows: OutgoingRows, prefix: str, batches: Iterator[pa.RecordBatch]
) -> StagedPartition:
    """Send the messages of ``batches`` to this task's partition's staging queue (under
    ``prefix``); report the ranges they got there."""
    task = TaskContext.get()
    partition = task.partitionId() if task is not None else 0
    staging_queue = _staging_queue(prefix, partition)
    measured = task is not None and measures_every_row(task.getLocalProperty(BYTE_LIMIT_SETTING))
    slow_columns: dict[str, None] = {}
    slow_batch_rows = 0
    ranges: list[StagedRange] = []
    rows_read = 0  # the partition's rows so far: errors name a row by its number in it

    def staged(request: Future[list[StagedRange]], first_row: int, count: int) -> None:
        try:
            ranges.extend(request.result())
        except JMSException as error:
            raise type(error)(
                f"partition {partition}, staging its rows {first_row} to "
                f"{first_row + count - 1}: {error.reason}",
                linked_exception=error,
            ) from None

    # One batch is staged by a sender thread while the next is encoded here: waiting for the
    # broker (its store's commit) then overlaps with the work of this task. The session is
    # used by one thread at a time: the sender's call ends before the next one starts.
    with _connect(options) as connection, ThreadPoolExecutor(1, "jms-sink-stage") as sender:
        session = connection.create_session()
        in_flight: tuple[Future[list[StagedRange]], int, int] | None = None
        encoded: list[bytes] = []
        size = 0
        for batch in batches:
            if (
                measured
                and batch.num_rows >= SLOW_HAND_OVER_ROWS
                and (slow := null_nested_columns(batch))
            ):
                slow_columns.update(dict.fromkeys(slow))
                slow_batch_rows = max(slow_batch_rows, batch.num_rows)
            try:
                _refuse_sink_queues(options, batch, rows_read)
                more = rows.encoded(batch, rows_read)
            except MessageFormatException as error:
                raise MessageFormatException(
                    f"partition {partition}, {error.reason}", linked_exception=error
                ) from None
            rows_read += batch.num_rows
            encoded += more
            size += sum(map(len, more))
            if size < STAGE_REQUEST_BYTES:
                continue  # small Arrow batches are staged together: fewer requests and commits
            if in_flight is not None:
                staged(*in_flight)
            request = sender.submit(session.stage_encoded, staging_queue, encoded)
            in_flight = (request, rows_read - len(encoded), len(encoded))
            encoded, size = [], 0
        if in_flight is not None:
            staged(*in_flight)
        if encoded:
            request = sender.submit(session.stage_encoded, staging_queue, encoded)
            staged(request, rows_read - len(encoded), len(encoded))
    # Requests that follow each other (nothing else staged between them) make one range.
    merged: list[list[int]] = []
    for part in ranges:
        if merged and merged[-1][1] + 1 == part.first_seq:
            merged[-1][1] = part.last_seq
        else:
            merged.append([part.first_seq, part.last_seq])
    return StagedPartition(
        staging_queue.get_queue_name(),
        tuple((first, last) for first, last in merged),
        tuple(slow_columns),
        slow_batch_rows,
    )


def _refuse_sink_queues(options: SinkOptions, batch: pa.RecordBatch, first_row: int) -> None:
    """Refuse rows addressed to a sink's own queues (``jms.spark.staging.*``,
    ``jms.spark.commits.*``): a row there could forge a batch marker or a staged range."""
    if options.destination is not None or "destination" not in batch.schema.names:
        return  # the option was checked when it was read
    column = batch.column("destination")
    for value in pc.unique(column).to_pylist():
        if value is None:
            continue
        try:
            refusal = sink_queue_refusal(Destination.parse(value.strip()))
        except JMSException:
            continue  # not a destination: the row's conversion says so
        if refusal:
            row = first_row + pc.index(column, value).as_py()
            raise MessageFormatException(f"row {row} has destination {value!r}, {refusal}")


def _staging_queue(prefix: str, partition: int) -> Queue:
    """The staging queue of a partition of the sink whose staging queues are under ``prefix``."""
    return Queue(f"{prefix}.p{partition}")


def publish(
    options: SinkOptions, staged: list[WriterCommitMessage | None], batch_id: int | None
) -> int:
    """Have the broker publish what the reported attempts staged, in one transaction (see the
    module docstring); return how many messages went out (0 for a batch id published before)."""
    parts = [part for part in staged if isinstance(part, StagedPartition)]
    sink_id = options.sink_id
    marker = (
        BatchMarker(Queue(COMMITS_PREFIX + sink_id), batch_id)
        if sink_id is not None and batch_id is not None
        else None
    )
    if not any(part.ranges for part in parts) and marker is None:
        return 0
    with _connect(options) as connection:
        published = connection.create_session().publish_staged(
            [
                StagedRange(Queue(part.staging), first, last)
                for part in parts
                for first, last in part.ranges
            ],
            marker,
        )
    logger.info("sink %s: batch %s published %d messages", sink_id, batch_id, published)
    if published == 0 and any(part.ranges for part in parts):
        logger.warning(
            "jms sink %s: batch %s was published before, so its rows were not published again "
            "(a batch run again after a failure; or two writes of one batch under one sinkId, "
            "of which only the first is published: give each write its own sinkId)",
            sink_id,
            batch_id,
        )
    if slow := [part for part in parts if part.slow_columns]:
        logger.warning("%s", hand_over_advice(options, slow))
    return published


def hand_over_advice(options: SinkOptions, slow: list[StagedPartition]) -> str:
    """What the driver logs when tasks report Arrow batches whose hand-over cost Spark time that
    grows with the square of their rows (``SLOW_HAND_OVER_ROWS``), and what to do about it."""
    # Columns the sink took null in every row may be left out: of the list and map columns, a
    # message's map and stream (a null properties map is refused, and simple rows have none).
    columns = list(dict.fromkeys(name for part in slow for name in part.slow_columns))
    dropped = ", ".join(repr(name) for name in columns)
    target = options.destination if options.destination is not None else "the rows' destinations"
    return (
        f"jms sink to {target}: Spark handed the rows to the sink in Arrow batches of up to "
        f"{max(part.slow_batch_rows for part in slow):,} rows, measuring each batch after every "
        f"row it added ({BYTE_LIMIT_SETTING} is not {NO_BYTE_LIMIT}), with the column(s) "
        f"{', '.join(columns)} null in every row of a batch: Spark's time for such a column grows "
        "with the square of a batch's rows (in its default batches of 10,000 rows, about as much "
        f"CPU again as the write itself). To avoid it, leave out {', '.join(columns)} "
        f"(df.drop({dropped})) or write in the session settings jms.spark.pipeline.ARROW_SETTINGS "
        '(docs/spark.md, "Arrow batches").'
    )


def discard(options: SinkOptions, prefix: str, staged: list[WriterCommitMessage | None]) -> None:
    """Drop what every attempt of a write Spark aborted staged: the staging queues under
    ``prefix`` of all its partitions (``staged`` has an entry per partition, None where the
    task failed, and a failed attempt may have staged part of its rows)."""
    if not staged:
        return
    with _connect(options) as connection:
        session = connection.create_session()
        for partition in range(len(staged)):
            reader = session.create_sequence_reader(_staging_queue(prefix, partition))
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
        discard(self._options, self._prefix, messages)


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
        discard(self._options, self._prefix, messages)
