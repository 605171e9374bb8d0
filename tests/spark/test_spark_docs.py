"""The Python blocks of docs/spark.md run, in order, in one namespace: the page cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

PAGE = Path(__file__).parents[2] / "docs" / "spark.md"


@pytest.mark.spark
def test_the_python_blocks_of_the_spark_page_run(spark: SparkSession) -> None:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) >= 2
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)
