"""The one SparkSession every Spark test shares: ``local[2]``, no UI, two shuffle partitions.

Spark tests are marked ``spark`` and skip, saying why, only when no Java runtime is installed;
any other failure to start Spark is a failure. The session is made before the first Spark test
and stopped after the last one.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator

import pytest

JAVA_MISSING = shutil.which("java") is None and not os.environ.get("JAVA_HOME")


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    if JAVA_MISSING:
        pytest.skip("Spark needs a Java runtime (17+): no `java` on PATH and JAVA_HOME is unset")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("jms-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
