"""A Spark driver process for the kill test: streams ``queue://<queue>`` to Parquet files with a
checkpoint, a few messages per micro-batch, until it is killed (or ``--seconds`` pass).

    python -m tests.spark.stream_child URL QUEUE OUTPUT CHECKPOINT [--seconds N]
"""

from __future__ import annotations

import argparse
import time

from tests.spark.child_session import child_session


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("queue")
    parser.add_argument("output")
    parser.add_argument("checkpoint")
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--per-trigger", default="40")
    args = parser.parse_args()
    spark = child_session("local[2]", "jms-stream-child")
    query = (
        spark.readStream.format("jms")
        .option("url", args.url)
        .option("destination", f"queue://{args.queue}")
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", args.per_trigger)
        .load()
        .writeStream.format("parquet")
        .option("path", args.output)
        .option("checkpointLocation", args.checkpoint)
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    print("started", flush=True)
    deadline = time.monotonic() + args.seconds
    while query.isActive and time.monotonic() < deadline:
        query.awaitTermination(0.5)
    query.stop()
    spark.stop()


if __name__ == "__main__":
    main()
