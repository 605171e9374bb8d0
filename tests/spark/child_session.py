"""The Spark session of a test's child process (a Spark application of its own, for what only a
process of its own shows: a kill, several executor JVMs, the driver's stderr)."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

import jms.spark


def child_session(master: str, name: str, **settings: str) -> SparkSession:
    """A session on ``master`` with the ``jms`` format registered, as the tests' own: no UI, two
    shuffle partitions, on 127.0.0.1, Spark logging errors only; the Python workers on
    ``PYSPARK_PYTHON`` when it is set, else on this interpreter; ``settings`` on top."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    builder = (
        SparkSession.builder.master(master)
        .appName(name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
    )
    for setting, value in settings.items():
        builder = builder.config(setting, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jms.spark.register(spark)
    return spark
