"""Throughput of the Spark pipeline: messages per second from a broker to Parquet files on
``local[2]``, batch and streaming, next to the reads without Spark.

A ``jms broker`` process (its own SQLite store in a temporary directory, STOMP on a free port)
holds N PERSISTENT TextMessages of ``--size`` bytes with three typed properties. In the same run:

- **range read, no Spark**: one ``SequenceReader`` over STOMP pages through the queue (what one
  Spark task does for its range) and converts each page to Arrow — the per-task ceiling;
- **batch**: ``spark.read.format("jms")`` (``minPartitions`` 2) ``.write.parquet`` — reads
  without consuming, so it can be repeated; the best of ``--repeat`` runs is reported;
- **streaming**: ``readStream.format("jms")`` to a Parquet sink with a checkpoint,
  ``maxOffsetsPerTrigger`` ``--per-trigger``, ``availableNow``: every message read, written, and
  consumed from the queue by the commits, once.

Each figure is N divided by the wall time of the job, after a warm-up job (Spark starts its Python
workers once per session; that start-up is not the pipeline's throughput).

    python bench/pipeline_bench.py [--messages 50000] [--size 1024] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jms.client import ConnectionFactory
from jms.message import Queue
from jms.spark import to_arrow
from jms.types import Long

_TRANSACTION = 1000


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


def range_read(url: str, queue: str) -> tuple[int, float]:
    """Read the whole queue with one SequenceReader into Arrow; (messages, seconds)."""
    began = time.perf_counter()
    read = 0
    with ConnectionFactory(url).create_connection() as connection:
        reader = connection.create_session().create_sequence_reader(Queue(queue))
        for page in reader.read(1, None, 1000):
            read += to_arrow(message for _, message in page).num_rows
    return read, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--per-trigger", type=int, default=10_000)
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    import jms.spark

    with tempfile.TemporaryDirectory(prefix="jms-pipeline-bench-") as temporary:
        root = Path(temporary)
        broker, url = start_broker(root / "store")
        spark = None
        try:
            seconds = produce(url, "bench", args.messages, args.size)
            produce(url, "warmup", 100, args.size)
            print(
                f"{args.messages:,} messages of {args.size} B in the broker "
                f"({args.messages / seconds:,.0f} msg/s to produce, transactions of 1000)"
            )
            read, seconds = range_read(url, "bench")
            assert read == args.messages, read
            print(f"range read, no Spark (1 reader):  {read / seconds:>10,.0f} msg/s")

            spark = (
                SparkSession.builder.master("local[2]")
                .appName("jms-pipeline-bench")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .getOrCreate()
            )
            spark.sparkContext.setLogLevel("ERROR")
            jms.spark.register(spark)

            def batch(queue: str, output: Path) -> float:
                began = time.perf_counter()
                (
                    spark.read.format("jms")
                    .option("url", url)
                    .option("destination", f"queue://{queue}")
                    .option("minPartitions", "2")
                    .load()
                    .write.mode("overwrite")
                    .parquet(str(output))
                )
                return time.perf_counter() - began

            batch("warmup", root / "warmup")
            best = min(batch("bench", root / f"batch-{run}") for run in range(args.repeat))
            rows = spark.read.parquet(str(root / "batch-0")).count()
            assert rows == args.messages, rows
            print(f"batch, local[2] -> Parquet:        {args.messages / best:>10,.0f} msg/s")

            began = time.perf_counter()
            query = (
                spark.readStream.format("jms")
                .option("url", url)
                .option("destination", "queue://bench")
                .option("startingOffsets", "earliest")
                .option("minPartitions", "2")
                .option("maxOffsetsPerTrigger", str(args.per_trigger))
                .load()
                .writeStream.format("parquet")
                .option("path", str(root / "stream"))
                .option("checkpointLocation", str(root / "checkpoint"))
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination()
            seconds = time.perf_counter() - began
            batches = len(query.recentProgress)
            rows = spark.read.parquet(str(root / "stream")).count()
            assert rows == args.messages, rows
            print(
                f"streaming, local[2] -> Parquet:    {args.messages / seconds:>10,.0f} msg/s "
                f"({batches} micro-batches of at most {args.per_trigger:,} offsets, consumed)"
            )
        finally:
            if spark is not None:
                spark.stop()
            broker.terminate()
            broker.wait(30)


if __name__ == "__main__":
    main()
