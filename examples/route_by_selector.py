"""Route the messages of one destination to others by JMS selectors, each message exactly once.

A content-based router as a Spark streaming query: every message of the source goes to the first
route whose selector selects it (or to the default destination, or nowhere), keeping its body,
typed properties, type, priority and remaining time to live. The selectors run in Spark as native
columns (``jms.spark.selector_to_column``), with exactly the semantics a JMS consumer's selector
has; the ``jms`` sink publishes each micro-batch in one broker transaction, once per batch id, and
the source consumes a batch only after it was published — so a router killed and restarted from
its checkpoint neither loses nor doubles a message.

    python examples/route_by_selector.py --url stomp://127.0.0.1:61613 --from queue://orders \\
        --route "queue://orders.urgent=JMSPriority >= 7" \\
        --route "queue://orders.eu=region = 'eu'" \\
        --default queue://orders.other --checkpoint /data/router.checkpoint
"""

from __future__ import annotations

import argparse
import os
import sys

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

import jms.spark
from jms.spark import selector_to_column


def routing_column(routes: list[tuple[str, str]], default: str | None) -> Column:
    """The destination of each row: the first route whose selector selects it, else ``default``
    (a null destination: the row is dropped)."""
    column = F.lit(default)
    for destination, selector in reversed(routes):
        column = F.when(selector_to_column(selector), F.lit(destination)).otherwise(column)
    return column


def route(
    spark: SparkSession,
    url: str,
    source: str,
    routes: list[tuple[str, str]],
    default: str | None,
    checkpoint: str,
) -> int:
    """Route what waits on ``source`` now (then stop); return how many messages it read."""
    jms.spark.register(spark)
    messages = (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", source)
        .option("startingOffsets", "earliest")
        .load()
    )
    routed = messages.withColumn("destination", routing_column(routes, default)).filter(
        F.col("destination").isNotNull()
    )
    query = (
        routed.writeStream.format("jms")
        .option("url", url)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return sum(int(progress["numInputRows"]) for progress in query.recentProgress)


def _route_argument(text: str) -> tuple[str, str]:
    destination, separator, selector = text.partition("=")
    if not separator or "://" not in destination:
        raise argparse.ArgumentTypeError(f"{text!r}: expected DESTINATION=SELECTOR")
    return destination.strip(), selector.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="stomp://127.0.0.1:61613")
    parser.add_argument("--from", dest="source", required=True, help="queue://NAME")
    parser.add_argument("--route", type=_route_argument, action="append", required=True)
    parser.add_argument("--default", help="Where messages no route selects go (else dropped).")
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.master(args.master).appName("route-by-selector").getOrCreate()
    try:
        count = route(spark, args.url, args.source, args.route, args.default, args.checkpoint)
    finally:
        spark.stop()
    print(f"read {count} message(s) from {args.source} and routed them")


if __name__ == "__main__":
    main()
