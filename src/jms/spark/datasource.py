"""``format("jms")``: the Python data source Spark finds after ``jms.spark.register(spark)``.

It only checks the options and the schema and hands out the readers (``jms.spark.source``) and
writers (``jms.spark.sink``); docs/spark.md lists every option. Reading gives rows in
``MESSAGE_SCHEMA`` (a different schema is refused); writing takes ``MESSAGE_SCHEMA`` rows or the
simple layout of ``jms.spark.outgoing``, in append mode only (a destination cannot be replaced).
This module holds no state and never connects to anything itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from jms.spark.options import SinkOptions, SourceOptions
from jms.spark.schema import MESSAGE_SCHEMA
from jms.spark.source import JmsBatchReader, JmsStreamReader

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["FILTER_PUSHDOWN_CONF", "JmsDataSource", "register"]


def _check_read_schema(schema: StructType) -> None:
    if schema != MESSAGE_SCHEMA:
        raise ValueError(
            "format('jms') reads rows in jms.spark.MESSAGE_SCHEMA; do not give .schema(...) "
            f"(got {schema.simpleString()[:200]})"
        )


def _check_append(overwrite: bool) -> None:
    if overwrite:
        raise ValueError(
            "format('jms') only appends: messages already sent cannot be replaced; use "
            "mode('append')"
        )


class JmsDataSource(DataSource):
    """The ``jms`` data source: batch and streaming reads and writes of JMS destinations."""

    @classmethod
    def name(cls) -> str:
        return "jms"

    def schema(self) -> StructType:
        return MESSAGE_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        _check_read_schema(schema)
        return JmsBatchReader(SourceOptions.parse(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        _check_read_schema(schema)
        return JmsStreamReader(SourceOptions.parse(self.options, streaming=True))

    # The writers come with their first use: the Python process Spark starts for each streaming
    # query's source imports this module and needs none of their encoding machinery.
    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from jms.spark.sink import JmsBatchWriter

        _check_append(overwrite)
        return JmsBatchWriter(SinkOptions.parse(self.options, streaming=False), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        from jms.spark.sink import JmsStreamWriter

        _check_append(overwrite)
        return JmsStreamWriter(SinkOptions.parse(self.options, streaming=True), schema)


#: Spark refuses to plan a Python reader that implements ``pushFilters`` unless this is on.
FILTER_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def register(spark: SparkSession) -> None:
    """Make ``spark.read/readStream/write/writeStream.format("jms")`` available in ``spark``, and
    turn on Python filter pushdown in its conf (Spark's default is off, and with it off Spark
    refuses every reader that can push filters down; other sources are not affected)."""
    spark.dataSource.register(JmsDataSource)
    spark.conf.set(FILTER_PUSHDOWN_CONF, "true")
