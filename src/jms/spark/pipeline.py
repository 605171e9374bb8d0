"""Pipelines from a destination to Parquet files or to another destination, batch or streaming:
what ``jms pipeline`` runs, for Python callers too.

``Pipeline`` says what to run; ``run_pipeline(spark, pipeline, on_progress)`` runs it in the given
session and reports ``Progress`` while it runs: Spark's task counts for a batch job, each finished
micro-batch for a stream. A batch pipeline reads what the source holds now without consuming it
(a browse by offset range) and writes it once. A streaming pipeline consumes: each micro-batch is
committed to the target first and then acknowledged in the source (``commit`` of the stream
reader), so with its checkpoint it can be stopped or killed and started again without losing or
repeating a message. Stopped by ``stop`` (or Ctrl-C in the CLI), it finishes cleanly; with
``until_idle`` it stops by itself once it has caught up. ``check_broker(pipeline)`` connects and
logs in once, so that a caller can refuse a pipeline whose broker is down before it starts Spark.
Apart from that check, this module only composes DataFrames; reading and writing messages is the
``jms`` data source's.
"""

from __future__ import annotations

import ssl
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from jms.client import TopicSubscription
from jms.errors import InvalidDestinationException, JMSException, JMSSecurityException
from jms.message import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from jms.selector import Selector
from jms.spark.options import BrokerAddress

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

__all__ = [
    "ARROW_BATCH_ROWS",
    "ARROW_SETTINGS",
    "BYTE_LIMIT_SETTING",
    "NO_BYTE_LIMIT",
    "SESSION_SETTINGS",
    "Pipeline",
    "PipelineResult",
    "Progress",
    "StreamTally",
    "check_broker",
    "run_pipeline",
]

_PARQUET = "parquet:"

#: Rows in each Arrow batch PySpark hands a Python writer under ``ARROW_SETTINGS``.
ARROW_BATCH_ROWS: Final = 1000
#: The most bytes of an Arrow batch PySpark hands to Python; at any value but ``NO_BYTE_LIMIT``
#: (its default included) Spark measures each batch after every row it adds to it.
BYTE_LIMIT_SETTING: Final = "spark.sql.execution.arrow.maxBytesPerBatch"
#: Spark's "no limit" for ``BYTE_LIMIT_SETTING``: ``Int.MaxValue``.
NO_BYTE_LIMIT: Final = 2**31 - 1

#: The Arrow settings best for a session that writes to a ``jms`` sink (docs/spark.md, "Arrow
#: batches"): batches of ``ARROW_BATCH_ROWS`` rows, and no byte limit on them. Spark measures a
#: batch after every row it adds whenever ``maxBytesPerBatch`` is anything but its "no limit",
#: ``Int.MaxValue``, and that measurement costs more than the rows themselves for nested columns
#: (a message's properties): with it, Spark's JVM spent 3.2-3.6 CPU-seconds handing 100,000 rows
#: of 1 KiB messages to a Python writer in its default batches, 1.3-1.8 in batches of 2 MiB, and
#: 0.6-0.7 under these. ``jms pipeline`` sets them in the session it starts.
ARROW_SETTINGS: Final[Mapping[str, str]] = {
    "spark.sql.execution.arrow.maxRecordsPerBatch": str(ARROW_BATCH_ROWS),
    BYTE_LIMIT_SETTING: str(NO_BYTE_LIMIT),
}

#: The settings of a session ``jms pipeline`` starts for itself (one it joins is left as it is).
SESSION_SETTINGS: Final[Mapping[str, str]] = {
    "spark.ui.showConsoleProgress": "false",  # the CLI shows its own progress
    **ARROW_SETTINGS,
}


@dataclass(frozen=True, slots=True)
class Pipeline:
    """From ``source`` (``queue://x``, or ``topic://x`` with ``subscription_name``) to ``target``
    (``parquet:/path`` or a destination), keeping the messages ``selector`` selects."""

    source: str
    target: str
    url: str
    selector: str | None = None
    stream: bool = False
    checkpoint: str | None = None
    until_idle: bool = False
    subscription_name: str | None = None
    client_id: str | None = None
    user: str | None = None
    password: str | None = None
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    max_offsets_per_trigger: int | None = None
    trigger_seconds: float = 1.0

    def __post_init__(self) -> None:
        source = _parse_destination(self.source, "--from")
        if isinstance(source, Topic) and not self.subscription_name:
            raise ValueError(
                f"--from {self.source} is a topic: name the durable subscription to read with "
                "--subscription (and --client-id if it has one)"
            )
        if isinstance(source, Queue):
            for option, value in (
                ("--subscription", self.subscription_name),
                ("--client-id", self.client_id),
            ):
                if value is not None:
                    raise ValueError(
                        f"{option} {value!r} names a durable subscription of a topic, but "
                        f"--from {self.source} is a queue"
                    )
        if self.parquet_path is None:
            _parse_destination(self.target, "--to")
            if self.target.strip() == self.source.strip():
                raise ValueError(f"--to {self.target} is the source itself")
        elif not self.parquet_path:
            raise ValueError(f"--to {self.target!r} names no directory; use parquet:/some/path")
        if self.selector:
            try:
                Selector(self.selector)
            except JMSException as error:
                raise ValueError(f"--selector {self.selector!r}: {error}") from None
        if self.stream and not self.checkpoint:
            raise ValueError(
                "--stream needs --checkpoint DIR: the checkpoint is what lets a stopped or "
                "killed pipeline carry on without losing or repeating messages"
            )
        if not self.stream and (self.checkpoint or self.until_idle):
            raise ValueError("--checkpoint and --until-idle are for --stream pipelines")
        if self.max_offsets_per_trigger is not None and not self.stream:
            raise ValueError("--max-per-trigger is for --stream pipelines")

    @property
    def broker_options(self) -> dict[str, str]:
        """The options of the jms source and sink that say how to reach the broker."""
        options = {
            "url": self.url,
            "user": self.user,
            "password": self.password,
            "ca": self.ca,
            "cert": self.cert,
            "key": self.key,
        }
        return {name: value for name, value in options.items() if value is not None}

    @property
    def parquet_path(self) -> str | None:
        """The directory of a ``parquet:`` target, None for a destination."""
        text = self.target.strip()
        return text[len(_PARQUET) :] if text.startswith(_PARQUET) else None


def _parse_destination(text: str, option: str) -> Queue | Topic:
    try:
        destination = Destination.parse(text.strip())
    except JMSException:
        raise ValueError(
            f"{option} {text!r} is not a destination; expected queue://NAME or topic://NAME"
            + (" (or parquet:/path)" if option == "--to" else "")
        ) from None
    if isinstance(destination, TemporaryQueue | TemporaryTopic):
        raise ValueError(f"{option} {text!r}: a pipeline cannot use a temporary destination")
    assert isinstance(destination, Queue | Topic)
    return destination


def check_broker(pipeline: Pipeline) -> None:
    """Connect to the pipeline's broker with its login, check that the durable subscription a
    batch pipeline reads exists (a stream creates it), and close again, raising ``ValueError``
    with one line saying what to do when the broker is down, refuses the login or has no such
    subscription — so that the CLI says so before it spends seconds starting Spark, whose tasks
    would fail on it anyway."""
    try:
        with BrokerAddress.parse(pipeline.broker_options).connect() as connection:
            source = _parse_destination(pipeline.source, "--from")
            if isinstance(source, Topic) and not pipeline.stream:
                assert pipeline.subscription_name is not None
                subscription = TopicSubscription(
                    source, pipeline.subscription_name, pipeline.client_id
                )
                try:
                    connection.create_session().create_sequence_reader(
                        subscription
                    ).first_sequence()
                except InvalidDestinationException:
                    raise ValueError(
                        f"--from {pipeline.source} has no durable subscription named "
                        f"{pipeline.subscription_name!r}"
                        + (
                            f" for --client-id {pipeline.client_id!r}"
                            if pipeline.client_id is not None
                            else " without a client ID"
                        )
                        + "; check --subscription and --client-id (a --stream pipeline "
                        "creates it)"
                    ) from None
    except JMSSecurityException as error:
        raise ValueError(f"{error.reason}; check --user and --password") from None
    except JMSException as error:
        cause = error.get_linked_exception()
        if isinstance(cause, OSError) and not isinstance(cause, ssl.SSLError):
            reason = (cause.strerror or str(cause)).lower()
            raise ValueError(
                f"cannot reach the broker at {pipeline.url} ({reason}); "
                "is `jms broker` running there?"
            ) from None
        raise ValueError(error.reason) from None


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a running pipeline is: ``messages`` written so far, finished micro-batches, the
    tasks of the running Spark stages (batch jobs), the last batch's rate (streams)."""

    messages: int
    batches: int
    tasks_done: int
    tasks_total: int
    rate: float | None


@dataclass(frozen=True, slots=True)
class PipelineResult:
    messages: int
    batches: int
    seconds: float


def _source_frame(spark: SparkSession, pipeline: Pipeline) -> DataFrame:
    reader: Any = spark.readStream if pipeline.stream else spark.read
    options = {
        **pipeline.broker_options,
        "destination": pipeline.source.strip(),
        "selector": pipeline.selector,
        "subscriptionName": pipeline.subscription_name,
        "clientId": pipeline.client_id,
        "startingOffsets": "earliest",
        "minPartitions": str(spark.sparkContext.defaultParallelism),
        "maxOffsetsPerTrigger": (
            None
            if pipeline.max_offsets_per_trigger is None
            else str(pipeline.max_offsets_per_trigger)
        ),
    }
    reader = reader.format("jms")
    for name, value in options.items():
        if value is not None:
            reader = reader.option(name, value)
    return reader.load()


def _jms_options(pipeline: Pipeline) -> dict[str, str]:
    return {**pipeline.broker_options, "destination": pipeline.target.strip()}


def run_pipeline(
    spark: SparkSession,
    pipeline: Pipeline,
    on_progress: Callable[[Progress], None] | None = None,
    stop: threading.Event | None = None,
    poll_seconds: float = 0.5,
) -> PipelineResult:
    """Run ``pipeline`` in ``spark`` (``jms.spark.register`` must have been called) until it is
    done — a batch job's end, a stream caught up (``until_idle``) or ``stop`` set."""
    started = time.monotonic()
    report = on_progress or (lambda progress: None)
    frame = _source_frame(spark, pipeline)
    if pipeline.stream:
        messages, batches = _run_stream(frame, pipeline, report, stop, poll_seconds)
    else:
        messages, batches = _run_batch(spark, frame, pipeline, report, poll_seconds), 1
    return PipelineResult(messages, batches, time.monotonic() - started)


def _run_batch(
    spark: SparkSession,
    frame: DataFrame,
    pipeline: Pipeline,
    report: Callable[[Progress], None],
    poll_seconds: float,
) -> int:
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    observation = Observation("jms-pipeline")
    observed = frame.observe(observation, F.count(F.lit(1)).alias("messages"))
    group = f"jms-pipeline-{uuid.uuid4().hex[:12]}"
    failure: list[BaseException] = []

    def write() -> None:
        try:
            spark.sparkContext.setJobGroup(group, f"jms pipeline to {pipeline.target}")
            path = pipeline.parquet_path
            if path is not None:
                observed.write.mode("append").parquet(path)
            else:
                writer = observed.write.format("jms").mode("append")
                for name, value in _jms_options(pipeline).items():
                    writer = writer.option(name, value)
                writer.save()
        except BaseException as error:  # handed to the caller's thread below
            failure.append(error)

    worker = threading.Thread(target=write, name="jms-pipeline-batch", daemon=True)
    worker.start()
    tracker = spark.sparkContext.statusTracker()
    while worker.is_alive():
        worker.join(poll_seconds)
        done = total = 0
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job is not None else ():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    done += stage.numCompletedTasks
                    total += stage.numTasks
        report(Progress(0, 0, done, total, None))
    if failure:
        raise failure[0]
    messages = int(observation.get.get("messages", 0))
    report(Progress(messages, 1, 1, 1, None))
    return messages


class StreamTally:
    """Messages and micro-batches a streaming query has run, from its progress reports
    (``query.recentProgress``, fed whole on every poll: ``add`` skips what it has counted).

    A report's ``batchId`` is not enough to tell batches apart: while a stream waits for data,
    Spark reports idle triggers under the id of the batch it has not run yet, with 0 rows, and
    later that batch itself under the same id. So the last report for an id is the one that
    counts, and an id is done once a report for a later id arrives (batches run in order)."""

    def __init__(self) -> None:
        self._done_messages = 0
        self._done_batches = 0
        self._open_id: int | None = None
        self._open: Mapping[str, Any] = {}
        self._rate: float | None = None

    def add(self, progress: Mapping[str, Any]) -> None:
        batch_id = int(progress["batchId"])
        if self._open_id is not None and batch_id < self._open_id:
            return
        if self._open_id is not None and batch_id > self._open_id:
            self._done_messages += _rows(self._open)
            self._done_batches += _ran(self._open)
        self._open_id, self._open = batch_id, progress
        if _ran(progress) and _rows(progress):
            self._rate = float(progress.get("processedRowsPerSecond") or 0.0)

    @property
    def messages(self) -> int:
        """The rows read by the batches that ran."""
        return self._done_messages + _rows(self._open)

    @property
    def batches(self) -> int:
        """The micro-batches that ran (idle triggers are not batches)."""
        return self._done_batches + _ran(self._open)

    @property
    def rate(self) -> float | None:
        """Rows per second of the last batch that read any, None before one has."""
        return self._rate


def _rows(progress: Mapping[str, Any]) -> int:
    return int(progress.get("numInputRows") or 0)


def _ran(progress: Mapping[str, Any]) -> int:
    """1 for the report of a batch that ran, 0 for an idle trigger's (it has no addBatch)."""
    return int("addBatch" in (progress.get("durationMs") or {}))


def _run_stream(
    frame: DataFrame,
    pipeline: Pipeline,
    report: Callable[[Progress], None],
    stop: threading.Event | None,
    poll_seconds: float,
) -> tuple[int, int]:
    assert pipeline.checkpoint is not None
    path = pipeline.parquet_path
    writer = frame.writeStream.option("checkpointLocation", pipeline.checkpoint)
    if path is not None:
        writer = writer.format("parquet").option("path", path)
    else:
        writer = writer.format("jms")
        for name, value in _jms_options(pipeline).items():
            writer = writer.option(name, value)
    if pipeline.until_idle:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{pipeline.trigger_seconds} seconds")
    query: StreamingQuery = writer.queryName(f"jms-pipeline-{uuid.uuid4().hex[:8]}").start()
    tally = StreamTally()
    try:
        while True:
            active = query.isActive
            before = (tally.messages, tally.batches)
            for progress in query.recentProgress:
                tally.add(progress)
            if (tally.messages, tally.batches) != before:
                report(Progress(tally.messages, tally.batches, 0, 0, tally.rate))
            if not active:
                break
            if stop is not None and stop.is_set():
                query.stop()
            else:
                query.awaitTermination(poll_seconds)
    finally:
        if query.isActive:
            query.stop()
    error = query.exception()
    if error is not None:
        raise error
    return tally.messages, tally.batches
