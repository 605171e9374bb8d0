"""Throughput of the Spark pipeline on ``local[2]``: the ``jms`` data source's batch read,
streaming read and sink, each next to the floor — Spark moving the same rows from Parquet to
Parquet — measured in the same run.

A ``jms broker`` process (a fresh SQLite store in a temporary directory, STOMP on a free port)
holds N PERSISTENT TextMessages of ``--size`` bytes with three typed properties. Before any
timing, the same messages are written once as a Parquet file in ``MESSAGE_SCHEMA`` (read from the
queue with one ``SequenceReader`` and decoded with ``jms.spark.columnar.encoded_to_arrow``). Then,
after a warm-up job of each kind (Spark starts its Python workers once per session; that
start-up is not the pipeline's throughput; the writers' warm-ups run two tasks, so that both
workers the timed writes use have started):

- **floor**: ``spark.read.parquet`` of that file → ``write.parquet``: Spark's own speed for the
  rows, the baseline every ratio is taken against (run beside each path, see below);
- **range read, no Spark**: one ``SequenceReader`` over STOMP pages through the queue
  (``read_encoded``, pages of 5000) and decodes each page into Arrow columns — what one Spark task
  does for its range;
- **batch read**: ``spark.read.format("jms")`` → ``write.parquet``; it reads without consuming,
  so it is repeated;
- **streaming read**: ``readStream.format("jms")`` (``startingOffsets`` ``earliest``,
  ``maxOffsetsPerTrigger`` ``--per-trigger`` when given) → a Parquet sink with a checkpoint,
  ``Trigger.AvailableNow``; it consumes, so each of its ``--repeat`` runs reads a queue of its
  own, filled with the same N messages before any timing, and the script checks what each
  Parquet sink holds and that the queues are empty afterwards;
- **Python stream floor**: a Python streaming data source that reads one row and does nothing
  else (``OneRowSource``), → Parquet, ``Trigger.AvailableNow``: what PySpark's machinery for
  Python streaming sources costs a query before any source reads anything (it starts a Python
  process per query that imports PySpark). The streaming read pays it once per query; the
  script prints the streaming figure with it taken out too;
- **sink**: the Parquet file → ``write.format("jms")`` into a fresh queue per run; the script
  checks that N messages arrived;
- **sink, the columns null in every row left out**: the same, with the ``MESSAGE_SCHEMA``
  columns the rows never use dropped first (``map``, ``stream`` and the others of
  ``jms.spark.outgoing.OPTIONAL_COLUMNS`` null in every row), as docs/spark.md recommends for a
  session in Spark's default Arrow settings: Spark hands a null list or map column to a Python
  writer in time that grows with the square of its batches' rows;
- **Python sink floor**: the Parquet file → a Python Arrow writer that takes every batch and does
  nothing with it (``CountingSink``): what PySpark's hand-over of the rows to any Python sink
  costs before the sink does anything. The script prints it next to the sink.

The sink and its Python floor run twice: with the session's default Arrow settings (batches of
10,000 rows, 13 MB of these messages, that Spark measures after every row it adds), and then
with ``jms.spark.pipeline.ARROW_SETTINGS`` (batches of ``ARROW_BATCH_ROWS`` rows, no byte limit,
so no measuring), as ``jms pipeline`` sets them and docs/spark.md recommends for any session that
writes to ``jms``; the floor reads Parquet with no Arrow batches, so those settings do not touch
it.

Each figure is N divided by the wall time of the job, the best of ``--repeat`` runs. The jobs
run in rounds, each job once a round, and every run of the batch read, the streaming read and
the two sinks comes right after a run of the floor; each path's ratio is taken against the best
of the floor runs beside it. This VM's speed moves by up to half within minutes, and Spark's JVM
gets faster at the same job over its first runs (the floor's first full run after a small
warm-up took twice as long as its eighth), so a floor measured once, first, is slower than the
machine the paths later run on. The table shows each path with the floor it was measured beside,
its ratio and its goal; below it, every floor run in order.

For the sinks and their Python floors the script also reads, from ``/proc`` (Linux), the CPU time
each process used during the run: Spark's JVM, Spark's Python workers (the JVM's descendants,
and ``jms-spark-python``'s fork servers for the JVM with theirs) and the broker. Their sum
divided by the cores is the least wall time any overlap of the three could reach; the script
prints it for the best run of each sink, next to the time it took (when the two are close, the
machine was full; when the run took much longer, one process set the pace).

Spark's Python workers run ``jms.spark.worker_python()`` (``jms-spark-python``: PySpark imported
from the installed package, not from Spark's zip, and PySpark's processes forked from a server
that has imported it), as ``jms pipeline`` runs them and docs/spark.md recommends;
``--plain-python`` runs them on this interpreter as is, as a session that leaves
``PYSPARK_PYTHON`` alone does (each Python process Spark starts then compiles PySpark first), and
``JMS_SPARK_PYTHON_FORK=`` (empty) keeps the script but turns its fork server off.

    python bench/pipeline_bench.py [--messages 100000] [--size 1024] [--repeat 2]
                                   [--per-trigger N] [--plain-python]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
from rich.console import Console
from rich.table import Table

from _jms_spark_python import DEFAULT_FORK_PREFIXES, FORK_VARIABLE, fork_server_jvm
from jms.client import ConnectionFactory
from jms.client.stomp_transport import parse_stomp_url
from jms.message import Queue
from jms.spark import MESSAGE_SCHEMA, worker_python
from jms.spark.columnar import encoded_to_arrow
from jms.spark.options import DEFAULT_PAGE_SIZE
from jms.spark.outgoing import OPTIONAL_COLUMNS
from jms.spark.pipeline import ARROW_BATCH_ROWS, ARROW_SETTINGS, StreamTally
from jms.spark.workers import WORKER_PYTHON_SCRIPT
from jms.stomp.admin import AdminClient
from jms.types import Long

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamReader, StreamingQuery

_TRANSACTION = 1000
_WARMUP_MESSAGES = 200


@dataclass(frozen=True, slots=True)
class Figure:
    path: str
    seconds: float
    floor: float  # the floor's seconds measured beside this path, what its ratio is taken against
    goal: float | None  # the least ratio to the floor this path should reach


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _processes() -> dict[int, tuple[int, str, float]]:
    """Every process /proc shows: pid -> (parent pid, command name, CPU seconds used)."""
    found: dict[int, tuple[int, str, float]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                text = stat.read()
        except OSError:
            continue  # ended meanwhile
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        # After the name: state, ppid, ... utime and stime are the 12th and 13th of these.
        found[int(entry.name)] = (
            int(fields[1]),
            name,
            (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS,
        )
    return found


def _fork_server_state(workers: str) -> str:
    """How ``workers`` starts PySpark's processes, for the header."""
    if Path(workers).name != WORKER_PYTHON_SCRIPT:
        return ""
    served = os.environ.get(FORK_VARIABLE, DEFAULT_FORK_PREFIXES)
    return f" (fork server for {served!r})" if served else " (fork server off)"


class CpuMeter:
    """CPU seconds of this script's descendants, as Spark's JVM, Spark's Python workers and the
    broker (Linux only: ``available`` is False elsewhere)."""

    def __init__(self, broker_pid: int) -> None:
        self.broker_pid = broker_pid
        self.available = os.path.isdir("/proc/self")

    def sample(self) -> dict[int, tuple[str, float]]:
        processes = _processes()
        children: dict[int, list[int]] = {}
        for pid, (parent, _, _) in processes.items():
            children.setdefault(parent, []).append(pid)
        kinds: dict[int, tuple[str, float]] = {}

        def walk(pending: list[tuple[int, bool]]) -> None:
            while pending:
                pid, under_jvm = pending.pop()
                _, name, seconds = processes[pid]
                if pid == self.broker_pid:
                    kind = "broker"
                elif name == "java":
                    kind, under_jvm = "jvm", True
                else:
                    kind = "workers" if under_jvm else "other"
                kinds[pid] = (kind, seconds)
                pending += [(child, under_jvm) for child in children.get(pid, [])]

        walk([(pid, False) for pid in children.get(os.getpid(), [])])
        # jms-spark-python's fork servers run detached; they and their children work for a JVM.
        walk(
            [
                (pid, True)
                for pid in processes
                if pid not in kinds and kinds.get(fork_server_jvm(pid) or 0, ("",))[0] == "jvm"
            ]
        )
        return kinds

    @staticmethod
    def used(
        before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
    ) -> dict[str, float]:
        """CPU seconds each kind used between two samples (a process that ended meanwhile is
        not counted: Spark's workers and the broker live through a run)."""
        used: dict[str, float] = {}
        for pid, (kind, seconds) in after.items():
            used[kind] = used.get(kind, 0.0) + seconds - before.get(pid, (kind, 0.0))[1]
        return used


def start_broker(store: Path) -> tuple[subprocess.Popen[str], str]:
    """A ``jms broker`` process on ``store``, and its URL."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from jms.cli import main; main()",
            "broker",
            "--store",
            str(store),
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"listening on (stomp://\S+)", line)
    if found is None:
        process.kill()
        raise RuntimeError(f"the broker did not start: {line!r}")
    return process, found.group(1)


def produce(url: str, queue: str, count: int, size: int) -> float:
    """Send ``count`` messages in transactions of 1000; return the seconds it took."""
    body = "x" * size
    began = time.perf_counter()
    with ConnectionFactory(url).create_connection() as connection:
        session = connection.create_session(transacted=True)
        producer = session.create_producer(Queue(queue))
        for number in range(count):
            message = session.create_text_message(body)
            message.set_long_property("n", Long(number))
            message.set_string_property("region", ("eu", "us", "apac")[number % 3])
            message.set_boolean_property("urgent", number % 10 == 0)
            producer.send(message)
            if number % _TRANSACTION == _TRANSACTION - 1:
                session.commit()
        session.commit()
    return time.perf_counter() - began


def range_read(url: str, queue: str) -> tuple[pa.Table, float]:
    """The whole queue read with one SequenceReader into Arrow, and the seconds it took."""
    began = time.perf_counter()
    pages = []
    with ConnectionFactory(url).create_connection() as connection:
        reader = connection.create_session().create_sequence_reader(Queue(queue))
        for page in reader.read_encoded(1, None, DEFAULT_PAGE_SIZE):
            pages.append(encoded_to_arrow(page.messages))
    return pa.Table.from_batches(pages), time.perf_counter() - began


def depths(url: str) -> dict[str, int]:
    """How many messages each queue holds (by ``queue://NAME``), from the broker's admin
    statistics."""
    host, port, _ = parse_stomp_url(url)
    with AdminClient(host, port) as admin:
        rows = admin.stats()["destinations"]
    return {row["name"]: int(row["depth"]) for row in rows}


def best(runs: int, job: Callable[[int], float]) -> float:
    """The fewest seconds of ``runs`` runs of ``job(run)`` (infinity for none)."""
    return min((job(run) for run in range(runs)), default=float("inf"))


def in_rounds(
    rounds: int, floor: Callable[[], float], paths: dict[str, tuple[bool, Callable[[int], float]]]
) -> tuple[dict[str, float], dict[str, float], list[float]]:
    """Run each of ``paths`` (name: (measured beside the floor?, job(round) returning seconds))
    once a round, in order, for ``rounds`` rounds; each path measured beside the floor runs
    right after a run of ``floor``. Returns each path's fewest seconds, the fewest seconds of the
    floor runs beside each such path, and every floor run in order.

    The VM's speed moves within minutes and Spark's JVM keeps getting faster at the same job for
    its first runs, so a path's ratio is taken against the floor measured beside it, and rounds
    (rather than all runs of one path, then of the next) give each path a run as warm as any."""
    best: dict[str, float] = {}
    beside: dict[str, float] = {}
    floors: list[float] = []
    for run in range(rounds):
        for name, (paired, job) in paths.items():
            if paired:
                floors.append(floor())
                beside[name] = min(beside.get(name, math.inf), floors[-1])
            best[name] = min(best.get(name, math.inf), job(run))
    return best, beside, floors


def one_row_source() -> type:
    """A Python streaming data source of one row, with nothing but PySpark imported (defined in
    ``__main__``, so Spark ships it by value: its workers import nothing of this script)."""
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

    class OneRowReader(DataSourceStreamReader):
        def initialOffset(self) -> dict[str, int]:
            return {"rows": 0}

        def latestOffset(self) -> dict[str, int]:
            return {"rows": 1}

        def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
            return [InputPartition(0)] if start["rows"] < end["rows"] else []

        def read(self, partition: InputPartition) -> Iterator[tuple[int]]:
            yield (1,)

    class OneRowSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "one-row"

        def schema(self) -> str:
            return "n int"

        def streamReader(self, schema: object) -> OneRowReader:
            return OneRowReader()

    return OneRowSource


def counting_sink() -> type:
    """A Python data source whose writer takes every Arrow batch Spark hands it and does
    nothing with it (defined in ``__main__``, so Spark ships it by value)."""
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class CountingWriter(DataSourceArrowWriter):
        def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
            for _batch in iterator:  # taken from Spark (the hand-over measured) and dropped
                pass
            return WriterCommitMessage()

    class CountingSink(DataSource):
        @classmethod
        def name(cls) -> str:
            return "counting"

        def writer(self, schema: object, overwrite: bool) -> CountingWriter:
            return CountingWriter()

    return CountingSink


class Jobs:
    """The timed Spark jobs of one session against the broker at ``url``; each returns seconds."""

    def __init__(self, spark: SparkSession, url: str) -> None:
        self.spark = spark
        self.url = url

    def parquet_to_parquet(self, source: Path, output: Path) -> float:
        began = time.perf_counter()
        self.spark.read.parquet(str(source)).write.mode("overwrite").parquet(str(output))
        return time.perf_counter() - began

    def batch_read(self, queue: str, output: Path) -> float:
        began = time.perf_counter()
        (
            self.spark.read.format("jms")
            .option("url", self.url)
            .option("destination", f"queue://{queue}")
            .option("minPartitions", "2")
            .load()
            .write.mode("overwrite")
            .parquet(str(output))
        )
        return time.perf_counter() - began

    def streaming_read(
        self, queue: str, output: Path, per_trigger: int | None
    ) -> tuple[float, int]:
        """Seconds, and how many micro-batches ran."""
        reader = (
            self.spark.readStream.format("jms")
            .option("url", self.url)
            .option("destination", f"queue://{queue}")
            .option("startingOffsets", "earliest")
            .option("minPartitions", "2")
        )
        if per_trigger is not None:
            reader = reader.option("maxOffsetsPerTrigger", str(per_trigger))
        seconds, query = self._stream_to_parquet(reader, output)
        tally = StreamTally()
        for progress in query.recentProgress:
            tally.add(progress)
        return seconds, tally.batches

    def python_stream_floor(self, output: Path) -> float:
        """Seconds of an AvailableNow query from a one-row Python streaming source to Parquet."""
        return self._stream_to_parquet(self.spark.readStream.format("one-row"), output)[0]

    @staticmethod
    def _stream_to_parquet(reader: DataStreamReader, output: Path) -> tuple[float, StreamingQuery]:
        """Seconds of an AvailableNow query from ``reader`` to Parquet files in ``output``, and
        the query (its failure raised)."""
        began = time.perf_counter()
        query = (
            reader.load()
            .writeStream.format("parquet")
            .option("path", str(output))
            .option("checkpointLocation", str(output.with_name(output.name + "-checkpoint")))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        seconds = time.perf_counter() - began
        error = query.exception()
        if error is not None:
            raise error
        return seconds, query

    def _rows(self, source: Path, partitions: int | None) -> DataFrame:
        """The Parquet rows of ``source``, in ``partitions`` partitions when given."""
        rows = self.spark.read.parquet(str(source))
        return rows if partitions is None else rows.repartition(partitions)

    def sink(
        self,
        source: Path,
        queue: str,
        partitions: int | None = None,
        leave_out: Sequence[str] = (),
    ) -> float:
        began = time.perf_counter()
        (
            self._rows(source, partitions)
            .drop(*leave_out)
            .write.format("jms")
            .mode("append")
            .option("url", self.url)
            .option("destination", f"queue://{queue}")
            .save()
        )
        return time.perf_counter() - began

    def python_sink_floor(self, source: Path, partitions: int | None = None) -> float:
        began = time.perf_counter()
        self._rows(source, partitions).write.format("counting").mode("append").save()
        return time.perf_counter() - began

    def rows(self, output: Path) -> int:
        return self.spark.read.parquet(str(output)).count()


_CPU_JOBS = {
    "sink": "sink",
    "python sink": "its Python floor",
    "trimmed sink": "sink without the null columns",
    "pipeline sink": f"sink in {ARROW_BATCH_ROWS:,}-row batches",
    "pipeline python sink": "its Python floor",
}


def cpu_line(cpu_of_best: dict[str, tuple[float, dict[str, float]]]) -> str:
    """What each kind of process used in the best run of each sink job, and the least wall time
    that CPU allows on this machine's cores however well the processes overlap."""
    if not cpu_of_best:
        return "CPU per process: not measured (no /proc on this system)"
    cores = os.cpu_count() or 1
    parts = []
    for name, label in _CPU_JOBS.items():
        seconds, used = cpu_of_best[name]
        jvm, workers, broker, other = (
            used.get(kind, 0.0) for kind in ("jvm", "workers", "broker", "other")
        )
        besides = f" + {other:.2f} other processes of this script" if other >= 0.01 else ""
        total = jvm + workers + broker + other
        parts.append(
            f"{label} {jvm:.2f} / {workers:.2f} / {broker:.2f}{besides} (all {total:.2f}: "
            f"≥ {total / cores:.2f} s on {cores} cores; took {seconds:.2f} s)"
        )
    return (
        "CPU-seconds in the best run of each, Spark's JVM / its Python workers / the broker: "
        + "; ".join(parts)
    )


def report(figures: list[Figure], messages: int, checks: list[str], console: Console) -> None:
    table = Table(
        title=f"{messages:,} PERSISTENT messages, local[2]; each path's msg/s against the floor "
        "measured beside it"
    )
    for column in ("path", "msg/s", "seconds", "floor s", "× floor", "goal", "met"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for figure in figures:
        ratio = figure.floor / figure.seconds
        met = "" if figure.goal is None else "yes" if ratio >= figure.goal else "NOT MET"
        table.add_row(
            figure.path,
            f"{messages / figure.seconds:,.0f}",
            f"{figure.seconds:.2f}",
            f"{figure.floor:.2f}",
            f"{math.floor(ratio * 100) / 100:.2f}",  # cut, not rounded: 0.496 is not ≥ 0.50
            "" if figure.goal is None else f"≥ {figure.goal:.1f}",
            met,
        )
    console.print(table)
    for line in checks:
        console.print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000, help="N, the messages moved")
    parser.add_argument("--size", type=int, default=1024, help="body bytes per message")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each repeatable figure")
    parser.add_argument(
        "--per-trigger", type=int, default=None, help="maxOffsetsPerTrigger of the stream"
    )
    parser.add_argument(
        "--plain-python",
        action="store_true",
        help="Spark's Python workers on this interpreter as is (PySpark from Spark's zip)",
    )
    args = parser.parse_args()
    messages: int = args.messages
    workers = sys.executable if args.plain_python else worker_python()
    os.environ["PYSPARK_PYTHON"] = workers
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    import jms.spark

    console = Console(highlight=False, soft_wrap=True, width=120)
    with tempfile.TemporaryDirectory(prefix="jms-pipeline-bench-") as temporary:
        root = Path(temporary)
        broker, url = start_broker(root / "store")
        spark = None
        try:
            seconds = produce(url, "bench", messages, args.size)
            # A stream consumes what it reads: each of its runs gets a queue of its own (the
            # batch read reads "bench" in every round).
            stream_queues = [f"stream-{run}" for run in range(args.repeat)]
            for queue in stream_queues:
                produce(url, queue, messages, args.size)
            produce(url, "warmup", _WARMUP_MESSAGES, args.size)
            console.print(
                f"{messages:,} messages of {args.size} B in the broker "
                f"({messages / seconds:,.0f} msg/s to produce, transactions of {_TRANSACTION}); "
                f"Spark's Python workers run {workers}{_fork_server_state(workers)}"
            )
            table, first_seconds = range_read(url, "bench")
            assert table.num_rows == messages, table.num_rows
            range_seconds = min(
                first_seconds, best(args.repeat - 1, lambda run: range_read(url, "bench")[1])
            )

            spark = (
                SparkSession.builder.master("local[2]")
                .appName("jms-pipeline-bench")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.ui.showConsoleProgress", "false")
                .getOrCreate()
            )
            spark.sparkContext.setLogLevel("ERROR")
            jms.spark.register(spark)
            spark.dataSource.register(one_row_source())
            spark.dataSource.register(counting_sink())
            jobs = Jobs(spark, url)
            rows = root / "rows.parquet"
            spark.createDataFrame(table, schema=MESSAGE_SCHEMA).write.parquet(str(rows))
            null_columns = [
                name for name in OPTIONAL_COLUMNS if table[name].null_count == table.num_rows
            ]
            del table

            # One small job of each kind first: Python workers, classes, the checkpoint code.
            jobs.batch_read("warmup", root / "warmup")
            jobs.parquet_to_parquet(root / "warmup", root / "warmup-copy")
            # The writers' warm-ups run two tasks, as the timed writes do, so that both Python
            # workers have started and imported what a writer needs before any timing.
            jobs.sink(root / "warmup", "warmup-sink", partitions=2)
            jobs.streaming_read("warmup", root / "warmup-stream", args.per_trigger)
            jobs.python_stream_floor(root / "warmup-one-row")
            jobs.python_sink_floor(root / "warmup", partitions=2)

            def floor_run() -> float:
                return jobs.parquet_to_parquet(rows, root / "floor")

            floor_run()  # Spark's Parquet paths warmed at full size

            stream_batches: list[int] = []

            def stream_run(run: int) -> float:
                queue = stream_queues[run]
                seconds, batches = jobs.streaming_read(
                    queue, root / f"stream-{queue}", args.per_trigger
                )
                stream_batches.append(batches)
                return seconds

            meter = CpuMeter(broker.pid)
            # Per job: the seconds of its fastest run and the CPU each kind of process used in it.
            cpu_of_best: dict[str, tuple[float, dict[str, float]]] = {}

            def metered(name: str, job: Callable[[int], float]) -> Callable[[int], float]:
                def run(number: int) -> float:
                    before = meter.sample() if meter.available else {}
                    seconds = job(number)
                    if meter.available and seconds < cpu_of_best.get(name, (math.inf, {}))[0]:
                        cpu_of_best[name] = (seconds, meter.used(before, meter.sample()))
                    return seconds

                return run

            def in_pipeline_settings(job: Callable[[int], float]) -> Callable[[int], float]:
                def run(number: int) -> float:
                    for setting, value in ARROW_SETTINGS.items():
                        spark.conf.set(setting, value)
                    try:
                        return job(number)
                    finally:
                        for setting in ARROW_SETTINGS:
                            spark.conf.unset(setting)

                return run

            paths: dict[str, tuple[bool, Callable[[int], float]]] = {
                "batch": (True, lambda run: jobs.batch_read("bench", root / "batch")),
                "stream": (True, stream_run),
                "python stream": (
                    False,
                    lambda run: jobs.python_stream_floor(root / f"one-row-{run}"),
                ),
                "sink": (True, lambda run: jobs.sink(rows, f"sink-{run}")),
                "python sink": (False, lambda run: jobs.python_sink_floor(rows)),
                "trimmed sink": (
                    True,
                    lambda run: jobs.sink(rows, f"trimmed-sink-{run}", leave_out=null_columns),
                ),
                "pipeline sink": (
                    True,
                    in_pipeline_settings(lambda run: jobs.sink(rows, f"pipeline-sink-{run}")),
                ),
                "pipeline python sink": (
                    False,
                    in_pipeline_settings(lambda run: jobs.python_sink_floor(rows)),
                ),
            }
            best_of, beside, floors = in_rounds(
                args.repeat,
                floor_run,
                {
                    name: (paired, metered(name, job) if name in _CPU_JOBS else job)
                    for name, (paired, job) in paths.items()
                },
            )
            assert jobs.rows(root / "floor") == messages
            batch_rows = jobs.rows(root / "batch")
            assert batch_rows == messages, batch_rows
            streamed = [jobs.rows(root / f"stream-{queue}") for queue in stream_queues]
            after = depths(url)
            left = sum(after.get(f"queue://{queue}", 0) for queue in stream_queues)
            sunk = [
                (queue, after.get(f"queue://{queue}", 0))
                for run in range(args.repeat)
                for queue in (f"sink-{run}", f"trimmed-sink-{run}", f"pipeline-sink-{run}")
            ]
        finally:
            if spark is not None:
                spark.stop()
            broker.terminate()
            broker.wait(30)

    per_trigger = "no limit" if args.per_trigger is None else f"at most {args.per_trigger:,}"
    floor = min(floors)
    stream, stream_floor = best_of["stream"], beside["stream"]
    sink, sink_floor, python_sink = best_of["sink"], beside["sink"], best_of["python sink"]
    pipeline_sink, pipeline_sink_floor = best_of["pipeline sink"], beside["pipeline sink"]
    pipeline_python_sink, python_floor = best_of["pipeline python sink"], best_of["python stream"]
    figures = [
        Figure("floor: Parquet → Parquet (Spark alone), best run", floor, floor, None),
        Figure("range read, 1 SequenceReader → Arrow, no Spark", range_seconds, floor, None),
        Figure('batch read: read.format("jms") → Parquet', best_of["batch"], beside["batch"], 0.5),
        Figure(
            f"streaming read → Parquet, AvailableNow, {max(stream_batches)} batch(es)",
            stream,
            stream_floor,
            0.4,
        ),
        Figure('sink: Parquet → write.format("jms")', sink, sink_floor, 0.3),
        Figure(
            "sink, the columns null in every row left out",
            best_of["trimmed sink"],
            beside["trimmed sink"],
            0.3,
        ),
        Figure(
            f"sink, {ARROW_BATCH_ROWS:,}-row Arrow batches (jms pipeline)",
            pipeline_sink,
            pipeline_sink_floor,
            0.3,
        ),
    ]
    beyond = stream - python_floor
    checks = [
        f"floor runs, in the order measured: {', '.join(f'{seconds:.2f}' for seconds in floors)} s "
        f"(slowest/fastest {max(floors) / floor:.2f})",
        f"Python stream floor: a one-row Python streaming source → Parquet, AvailableNow, runs "
        f"{python_floor:.2f} s (PySpark's per-query cost for any Python source); the streaming "
        f"read without it: {beyond:.2f} s, "
        + (f"{stream_floor / beyond:.2f}× the floor" if beyond > 0 else "no more than it"),
        f"streaming read, {len(streamed)} run(s) on queues of their own: the Parquet sinks hold "
        + ", ".join(f"{rows:,}" for rows in streamed)
        + " rows "
        + (
            "(all of them)"
            if all(rows == messages for rows in streamed)
            else f"[red](expected {messages:,} each)[/red]"
        )
        + f"; offsets per trigger: {per_trigger}; the queues hold {left:,} afterwards "
        + ("(every message consumed)" if left == 0 else "[red](not every message consumed)[/red]"),
        f"Python sink floor: the Parquet rows handed to a Python Arrow writer that does nothing "
        f"with them take {python_sink:.2f} s, {sink_floor / python_sink:.2f}× the floor (PySpark's "
        f"hand-over of the rows to any Python sink); the sink took {sink - python_sink:.2f} s "
        f"more. In Arrow batches of {ARROW_BATCH_ROWS:,} rows with no byte limit (jms pipeline): "
        f"{pipeline_python_sink:.2f} s, {pipeline_sink_floor / pipeline_python_sink:.2f}× the floor; the sink took "
        f"{pipeline_sink - pipeline_python_sink:.2f} s more",
        cpu_line(cpu_of_best),
        "sink: "
        + ", ".join(f"queue://{queue} received {count:,}" for queue, count in sunk)
        + (
            " (all of them)"
            if all(count == messages for _, count in sunk)
            else f" [red](expected {messages:,} each)[/red]"
        ),
    ]
    report(figures, messages, checks, console)


if __name__ == "__main__":
    main()
