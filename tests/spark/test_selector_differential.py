"""Differential test: ``selector_to_column`` on Spark against ``Selector`` in Python, on generated
selectors and generated typed messages, under both settings of ``spark.sql.ansi.enabled``.

Each example draws a batch of selectors and a batch of messages. All selectors are evaluated in
one Spark job (one column each) and compared value by value with ``Selector.evaluate`` — TRUE,
FALSE and UNKNOWN must agree, not just the matches. A second job runs them as real filters (a
single ``Filter`` over messages × selector numbers, so Spark's predicate-only optimisations are
exercised too) and the kept (selector, message) pairs must be exactly those ``Selector.matches``
keeps. The same is done over plain typed columns, with ``columns=``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
)

from jms.message import Message, TextMessage
from jms.selector import Selector
from jms.selector.ast import Expression, to_text
from jms.spark import selector_to_column, to_dataframe
from jms.types import Byte, Double, Float, Int, Long, Short
from tests.spark.spark_strategies import (
    DYNAMIC_PROPERTIES,
    EDGE_NUMBERS,
    EDGE_STRINGS,
    selector_messages,
    selector_trees,
)

pytestmark = pytest.mark.spark

SELECTORS_PER_EXAMPLE = 100
MESSAGES_PER_EXAMPLE = 30
#: Selectors of each example also run as real filters (a Filter plan costs a second analysis).
FILTERED_PER_EXAMPLE = 25
#: Selectors evaluated per Spark job: more make plans slow to optimise and compile.
SELECTORS_PER_JOB = 25


def batch_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        # A failure names the selector and the message; shrinking through Spark jobs would take long.
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


ansi_modes = pytest.mark.parametrize("ansi", ["true", "false"], ids=["ansi", "non-ansi"])


@contextmanager
def ansi_enabled(spark: SparkSession, value: str) -> Iterator[None]:
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", value)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def _describe(message: Message) -> str:
    headers = {
        "JMSType": message.get_jms_type(),
        "JMSMessageID": message.get_jms_message_id(),
        "JMSCorrelationID": message.get_jms_correlation_id(),
        "JMSPriority": message.get_jms_priority(),
        "JMSTimestamp": message.get_jms_timestamp(),
        "JMSDeliveryMode": message.get_jms_delivery_mode(),
    }
    return f"headers {headers}, properties {message._properties}"


def _check_batch(
    spark: SparkSession,
    frame: DataFrame,
    texts: list[str],
    messages: list[Message],
    columns: DataFrame | None,
) -> None:
    """Both evaluations of every selector on every message, and the filter path, must agree.

    ``frame`` has a ``row`` column numbering ``messages`` in order."""
    selectors = [Selector(text) for text in texts]
    spark_columns = [selector_to_column(text, columns=columns) for text in texts]
    jobs = [
        list(range(start, min(start + SELECTORS_PER_JOB, len(texts))))
        for start in range(0, len(texts), SELECTORS_PER_JOB)
    ]
    for job in jobs:
        outcomes = frame.select(
            "row", *(spark_columns[index].alias(f"s{index}") for index in job)
        ).collect()
        assert [row["row"] for row in outcomes] == list(range(len(messages)))
        for index in job:
            for row, message in zip(outcomes, messages, strict=True):
                expected = selectors[index].evaluate(message)
                assert row[f"s{index}"] is expected, (
                    f"selector {texts[index]!r} on message {row['row']} ({_describe(message)}): "
                    f"Spark says {row[f's{index}']}, Selector.evaluate says {expected}"
                )
    filtered = jobs[0][:FILTERED_PER_EXAMPLE]
    numbered = frame.crossJoin(spark.range(len(filtered)).withColumnRenamed("id", "selector"))
    choice: Any = F
    for index in filtered:
        choice = choice.when(F.col("selector") == index, spark_columns[index])
    kept = {
        (row["selector"], row["row"])
        for row in numbered.filter(choice).select("selector", "row").collect()
    }
    expected_kept = {
        (index, position)
        for index in filtered
        for position, message in enumerate(messages)
        if selectors[index].matches(message)
    }
    assert kept == expected_kept, (
        f"filter kept {sorted(kept - expected_kept)} too many and missed "
        f"{sorted(expected_kept - kept)} as (selector, message) pairs; selectors: "
        + "; ".join(f"{i}: {texts[i]!r}" for i in sorted({i for i, _ in kept ^ expected_kept}))
    )


def _texts(trees: list[Expression]) -> list[str]:
    return [to_text(tree) for tree in trees]


@ansi_modes
@batch_settings(examples=7)
@given(
    trees=st.lists(
        selector_trees(DYNAMIC_PROPERTIES),
        min_size=SELECTORS_PER_EXAMPLE,
        max_size=SELECTORS_PER_EXAMPLE,
    ),
    messages=st.lists(
        selector_messages(), min_size=MESSAGES_PER_EXAMPLE, max_size=MESSAGES_PER_EXAMPLE
    ),
)
def test_spark_agrees_with_selector_on_message_rows(
    spark: SparkSession, ansi: str, trees: list[Expression], messages: list[Message]
) -> None:
    for position, message in enumerate(messages):
        assert isinstance(message, TextMessage)
        message.set_text(str(position))  # the body is invisible to selectors: a row number
    frame = to_dataframe(spark, messages).withColumn("row", F.col("text").cast("int"))
    with ansi_enabled(spark, ansi):
        _check_batch(spark, frame, _texts(trees), messages, columns=None)


# --- plain typed columns ----------------------------------------------------------------------

#: One column per Java type a selector can meet, named by property; the Spark type is the Java one.
PLAIN_COLUMNS = {
    "flag": (BooleanType(), bool),
    "tiny": (ByteType(), Byte),
    "small": (ShortType(), Short),
    "count": (IntegerType(), Int),
    "big": (LongType(), Long),
    "ratio": (FloatType(), Float),
    "weight": (DoubleType(), Double),
    "color": (StringType(), str),
}
PLAIN_HEADERS = {
    "JMSType": StringType(),
    "JMSPriority": IntegerType(),
    "JMSTimestamp": LongType(),
    "JMSDeliveryMode": StringType(),
}
PLAIN_SCHEMA = StructType(
    [StructField("row", IntegerType())]
    + [StructField(name, data_type) for name, (data_type, _) in PLAIN_COLUMNS.items()]
    + [StructField(name, data_type) for name, data_type in PLAIN_HEADERS.items()]
)


def _plain_value(java_type: type) -> st.SearchStrategy[Any]:
    edges = [value for value in (*EDGE_NUMBERS, *EDGE_STRINGS) if type(value) is java_type]
    drawn: dict[type, st.SearchStrategy[Any]] = {
        bool: st.booleans(),
        Byte: st.integers(-128, 127).map(Byte),
        Short: st.integers(-32768, 32767).map(Short),
        Int: st.integers(-(2**31), 2**31 - 1).map(Int),
        Long: st.integers(-(2**63), 2**63 - 1).map(Long),
        Float: st.floats(width=32).map(Float),
        Double: st.floats().map(Double),
        str: st.text("ab%_\n", max_size=3),
    }
    return st.one_of(st.sampled_from(edges), drawn[java_type]) if edges else drawn[java_type]


@st.composite
def plain_messages(draw: st.DrawFn) -> TextMessage:
    message = TextMessage()
    for name, (_, java_type) in PLAIN_COLUMNS.items():
        if draw(st.integers(0, 3)):
            message.set_object_property(name, draw(_plain_value(java_type)))
    message.set_jms_type(draw(st.none() | st.sampled_from(EDGE_STRINGS)))
    message.set_jms_priority(draw(st.integers(0, 9)))
    message.set_jms_timestamp(draw(st.one_of(st.integers(-3, 3), _plain_value(Long))))
    message.set_jms_delivery_mode(draw(st.sampled_from([1, 2])))
    return message


def _plain_python(value: Any) -> Any:
    """The plain Python value pyspark's type checks accept (they refuse int and float subclasses)."""
    if value is None or isinstance(value, bool | str):
        return value
    return int(value) if isinstance(value, int) else float(value)


def _plain_row(position: int, message: Message) -> tuple[Any, ...]:
    return (
        position,
        *(_plain_python(message.get_object_property(name)) for name in PLAIN_COLUMNS),
        message.get_jms_type(),
        message.get_jms_priority(),
        message.get_jms_timestamp(),
        "PERSISTENT" if message.get_jms_delivery_mode() == 2 else "NON_PERSISTENT",
    )


@ansi_modes
@batch_settings(examples=3)
@given(
    trees=st.lists(
        selector_trees(tuple(PLAIN_COLUMNS), tuple(PLAIN_HEADERS)),
        min_size=SELECTORS_PER_EXAMPLE,
        max_size=SELECTORS_PER_EXAMPLE,
    ),
    messages=st.lists(
        plain_messages(), min_size=MESSAGES_PER_EXAMPLE, max_size=MESSAGES_PER_EXAMPLE
    ),
)
def test_spark_agrees_with_selector_on_plain_columns(
    spark: SparkSession, ansi: str, trees: list[Expression], messages: list[Message]
) -> None:
    rows = [_plain_row(position, message) for position, message in enumerate(messages)]
    frame = spark.createDataFrame(rows, PLAIN_SCHEMA)
    with ansi_enabled(spark, ansi):
        _check_batch(spark, frame, _texts(trees), messages, columns=frame)
