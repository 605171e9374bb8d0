"""A Spark application on ``local-cluster[2,1,1024]`` (two executor JVMs, each with its own Python
workers) using the ``jms`` source and sink: whatever ran only in the driver's process would be
missing there. Prints one JSON line with what it read and wrote.

    python -m tests.spark.cluster_child URL QUEUE OUTPUT CHECKPOINT
"""

from __future__ import annotations

import argparse
import json
import os

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from tests.spark.child_session import child_session


def local_cluster() -> SparkSession:
    """A session on ``local-cluster[2,1,1024]`` (``child_session``), the executors given this
    process's ``PYTHONPATH``."""
    return child_session(
        "local-cluster[2,1,1024]",
        "jms-local-cluster",
        **{"spark.executorEnv.PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )


def _ancestry(_partition: object) -> list[str]:
    """The command lines of this Python worker's ancestors, up to its JVM or to init."""
    lines = []
    pid = os.getppid()
    while pid > 1:
        with open(f"/proc/{pid}/cmdline", "rb") as command:
            line = command.read().replace(b"\0", b" ").decode()
        lines.append(line)
        if os.path.basename(line.split(" ")[0]) == "java":
            break
        with open(f"/proc/{pid}/stat") as facts:
            text = facts.read()
        pid = int(text[text.rindex(")") + 2 :].split()[1])
    return lines


def executor_count(spark: SparkSession) -> int:
    return int(spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()) - 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("queue")
    parser.add_argument("output")
    parser.add_argument("checkpoint")
    args = parser.parse_args()
    spark = local_cluster()
    source = f"queue://{args.queue}"
    frame = (
        spark.read.format("jms")
        .option("url", args.url)
        .option("destination", source)
        .option("minPartitions", "4")
        .load()
    )
    read = frame.select("message_id", F.spark_partition_id().alias("partition")).collect()
    ids = sorted(row.message_id for row in read)
    partitions = len({row.partition for row in read})
    frame.write.format("jms").mode("append").option("url", args.url).option(
        "destination", f"{source}.copy"
    ).save()
    query = (
        spark.readStream.format("jms")
        .option("url", args.url)
        .option("destination", source)
        .option("minPartitions", "4")
        .load()
        .writeStream.format("parquet")
        .option("path", args.output)
        .option("checkpointLocation", args.checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(180)
    executors = executor_count(spark)
    ancestries = spark.sparkContext.parallelize(range(2), 2).map(_ancestry).collect()
    print(
        json.dumps(
            {
                "partitions": partitions,
                "executors": executors,
                "ids": ids,
                "worker_ancestries": ancestries,
            }
        ),
        flush=True,
    )
    spark.stop()


if __name__ == "__main__":
    main()
