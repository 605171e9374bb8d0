"""Archive a queue to Parquet files, each message exactly once, whenever this runs.

Every run consumes what arrived on the queue since the last one and appends it to the Parquet
dataset, one row per message in ``jms.spark.MESSAGE_SCHEMA`` (headers, typed properties, body).
It is a streaming query with ``availableNow``: it stops by itself once it has caught up, and its
checkpoint remembers where it stopped — kill it at any moment and the next run carries on without
losing or repeating a message. Run it from cron, or as a step of a larger job:

    jms broker --store /var/lib/jms &
    python examples/archive_queue_to_parquet.py --url stomp://127.0.0.1:61613 \\
        --queue orders --output /data/orders.parquet --checkpoint /data/orders.checkpoint

The same, from the command line: ``jms pipeline --from queue://orders --to parquet:/data/...
--stream --until-idle --checkpoint /data/orders.checkpoint``.
"""

from __future__ import annotations

import argparse
import os
import sys

from pyspark.sql import SparkSession

import jms.spark


def archive(spark: SparkSession, url: str, queue: str, output: str, checkpoint: str) -> int:
    """Append the messages waiting on ``queue`` to the Parquet files in ``output``; return how
    many this run archived."""
    jms.spark.register(spark)
    query = (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", f"queue://{queue}")
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "50000")
        .load()
        .writeStream.format("parquet")
        .option("path", output)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return sum(int(progress["numInputRows"]) for progress in query.recentProgress)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="stomp://127.0.0.1:61613")
    parser.add_argument("--queue", required=True)
    parser.add_argument("--output", required=True, help="Parquet directory (appended to).")
    parser.add_argument("--checkpoint", required=True, help="Checkpoint directory.")
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.master(args.master).appName("archive-queue").getOrCreate()
    try:
        count = archive(spark, args.url, args.queue, args.output, args.checkpoint)
    finally:
        spark.stop()
    print(f"archived {count} message(s) from queue://{args.queue} to {args.output}")


if __name__ == "__main__":
    main()
