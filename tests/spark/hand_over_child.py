"""A Spark application in Spark's default Arrow settings that copies a queue through the ``jms``
sink three times, for the test of what the driver logs about Spark's hand-over of the rows
(``jms.spark.sink.hand_over_advice``): the driver's commit runs in a Python process Spark starts,
whose warnings reach only this application's stderr.

The three copies, of ``MESSAGE_SCHEMA`` rows in one task (so in one Arrow batch each):
``QUEUE.default`` as read, ``QUEUE.trimmed`` with the ``map`` and ``stream`` columns left out,
``QUEUE.settings`` after ``jms.spark.pipeline.ARROW_SETTINGS``.

    python -m tests.spark.hand_over_child URL QUEUE
"""

from __future__ import annotations

import argparse

from pyspark.sql import DataFrame

from jms.spark.pipeline import ARROW_SETTINGS
from tests.spark.child_session import child_session


def _copy(rows: DataFrame, url: str, destination: str) -> None:
    rows.write.format("jms").option("url", url).option("destination", destination).mode(
        "append"
    ).save()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("queue")
    args = parser.parse_args()
    spark = child_session("local[1]", "jms-hand-over")
    try:
        rows = (
            spark.read.format("jms")
            .option("url", args.url)
            .option("destination", f"queue://{args.queue}")
            .load()
            .coalesce(1)
        )
        _copy(rows, args.url, f"queue://{args.queue}.default")
        _copy(rows.drop("map", "stream"), args.url, f"queue://{args.queue}.trimmed")
        for setting, value in ARROW_SETTINGS.items():
            spark.conf.set(setting, value)
        _copy(rows, args.url, f"queue://{args.queue}.settings")
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
