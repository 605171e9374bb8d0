"""Throughput of the Spark sink: rows per second from Parquet files into a broker through
``write.format("jms")`` on ``local[2]``, next to Spark's own Parquet -> Parquet copy of the same
rows (the floor no sink can beat).

A ``jms broker`` process (its own SQLite store in a temporary directory, STOMP on a free port, as
in ``pipeline_bench.py``) receives N rows of a ``value`` string of ``--size`` characters and three
typed columns (``n`` bigint, ``region`` string, ``urgent`` boolean) as PERSISTENT TextMessages
with three typed properties; each run publishes to a queue of its own, and the run checks that
the queue then holds exactly N messages. The best of ``--repeat`` runs is reported, after a
warm-up job of each kind (Spark starts its Python workers once per session).

    python bench/sink_bench.py [--messages 100000] [--size 1024] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jms.client import ConnectionFactory
from jms.message import Queue
from pipeline_bench import start_broker  # the script's directory is on sys.path


def write_rows(path: Path, count: int, size: int) -> None:
    """``count`` rows in two Parquet files (so ``local[2]`` writes from two tasks)."""
    path.mkdir()
    half = count // 2
    for part, (start, stop) in enumerate(((0, half), (half, count))):
        numbers = range(start, stop)
        table = pa.table(
            {
                "value": pa.array(["x" * size] * len(numbers), pa.string()),
                "n": pa.array(numbers, pa.int64()),
                "region": pa.array([("eu", "us", "apac")[n % 3] for n in numbers], pa.string()),
                "urgent": pa.array([n % 10 == 0 for n in numbers], pa.bool_()),
            }
        )
        pq.write_table(table, path / f"part-{part}.parquet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    import jms.spark

    with tempfile.TemporaryDirectory(prefix="jms-sink-bench-") as temporary:
        root = Path(temporary)
        write_rows(root / "rows", args.messages, args.size)
        write_rows(root / "warmup-rows", 100, args.size)
        broker, url = start_broker(root / "store")
        spark = None
        try:
            spark = (
                SparkSession.builder.master("local[2]")
                .appName("jms-sink-bench")
                .config("spark.ui.enabled", "false")
                .getOrCreate()
            )
            spark.sparkContext.setLogLevel("ERROR")
            jms.spark.register(spark)

            def to_parquet(source: Path, output: Path) -> float:
                began = time.perf_counter()
                spark.read.parquet(str(source)).write.mode("overwrite").parquet(str(output))
                return time.perf_counter() - began

            def to_broker(source: Path, queue: str) -> float:
                began = time.perf_counter()
                (
                    spark.read.parquet(str(source))
                    .write.format("jms")
                    .mode("append")
                    .option("url", url)
                    .option("destination", f"queue://{queue}")
                    .save()
                )
                return time.perf_counter() - began

            to_parquet(root / "warmup-rows", root / "warmup-copy")
            floor = min(
                to_parquet(root / "rows", root / f"copy-{run}") for run in range(args.repeat)
            )
            to_broker(root / "warmup-rows", "warmup")
            times = []
            with ConnectionFactory(url).create_connection() as connection:
                session = connection.create_session()
                for run in range(args.repeat):
                    queue = f"sink-{run}"
                    times.append(to_broker(root / "rows", queue))
                    reader = session.create_sequence_reader(Queue(queue))
                    held = sum(len(page) for page in reader.read(1, None, 1000))
                    assert held == args.messages, (queue, held)
            print(
                f"{args.messages:,} rows of a {args.size}-character value and 3 typed columns, "
                "local[2]"
            )
            print(f"Parquet -> Parquet:               {args.messages / floor:>10,.0f} rows/s")
            sink = args.messages / min(times)
            print(
                f'Parquet -> write.format("jms"):   {sink:>10,.0f} msg/s '
                f"({sink * floor / args.messages:.2f}x the floor; runs "
                + ", ".join(f"{seconds:.2f}" for seconds in times)
                + " s)"
            )
        finally:
            if spark is not None:
                spark.stop()
            broker.terminate()
            broker.wait(30)


if __name__ == "__main__":
    main()
