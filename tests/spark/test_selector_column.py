"""``selector_to_column`` case by case: the spec's example, each rule where Spark's own SQL would
answer differently (casts, NaN, overflow, division, float rounding, ANSI errors), header
references, plain typed columns, the errors, and the plan: never a Python UDF."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from jms.errors import InvalidSelectorException
from jms.message import DeliveryMode, Message, TextMessage
from jms.selector import Selector
from jms.spark import MESSAGE_SCHEMA, selector_to_column, to_dataframe
from jms.spark.selector_column import MAX_EXPRESSION_SIZE
from jms.types import Byte, Double, Float, Int, Long, Short

pytestmark = pytest.mark.spark


@contextmanager
def ansi_enabled(spark: SparkSession, value: str) -> Iterator[None]:
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", value)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def _message(headers: dict[str, Any] | None = None, **properties: Any) -> TextMessage:
    message = TextMessage("body")
    for name, value in properties.items():
        message.set_object_property(name, value)
    for name, value in (headers or {}).items():
        getattr(message, f"set_jms_{name}")(value)
    return message


def _spark_answers(spark: SparkSession, selector: str, messages: list[Message]) -> list[Any]:
    frame = to_dataframe(spark, messages)
    return [row[0] for row in frame.select(selector_to_column(selector)).collect()]


def _agree(spark: SparkSession, selector: str, messages: list[Message]) -> list[Any]:
    """Spark's answers, after checking they are Selector.evaluate's."""
    answers = _spark_answers(spark, selector, messages)
    assert answers == [Selector(selector).evaluate(message) for message in messages], selector
    return answers


# --- the spec's example, and the plan ---------------------------------------------------------

SPEC_EXAMPLE = "JMSType = 'car' AND color = 'blue' AND weight > 2500"


def test_the_spec_example_keeps_the_rows_selector_matches(spark: SparkSession) -> None:
    messages = [
        _message({"type": "car"}, color="blue", weight=Int(3000)),
        _message({"type": "car"}, color="blue", weight=Long(2501)),
        _message({"type": "car"}, color="blue", weight=Double(2500.5)),
        _message({"type": "car"}, color="blue", weight=Int(2500)),
        _message({"type": "car"}, color="red", weight=Int(3000)),
        _message({"type": "truck"}, color="blue", weight=Int(3000)),
        _message({"type": "car"}, color="blue", weight="3000"),
        _message({"type": "car"}, color="blue"),
        _message(color="blue", weight=Int(3000)),
    ]
    for position, message in enumerate(messages):
        message.set_jms_message_id(f"ID:{position}")
    frame = to_dataframe(spark, messages)
    kept = [row.message_id for row in frame.filter(selector_to_column(SPEC_EXAMPLE)).collect()]
    assert kept == ["ID:0", "ID:1", "ID:2"]
    assert kept == [m.get_jms_message_id() for m in messages if Selector(SPEC_EXAMPLE).matches(m)]


def _physical_plan(frame: DataFrame, capsys: pytest.CaptureFixture[str]) -> str:
    frame.explain()
    return capsys.readouterr().out


def test_the_filter_is_native_spark_not_a_python_udf(
    spark: SparkSession, capsys: pytest.CaptureFixture[str]
) -> None:
    # A checkpoint, unlike a local relation, is not filtered away while planning.
    frame = to_dataframe(spark, [_message(color="blue")]).localCheckpoint()
    plan = _physical_plan(frame.filter(selector_to_column(SPEC_EXAMPLE)), capsys)
    assert "Filter" in plan
    assert "BatchEvalPython" not in plan and "ArrowEvalPython" not in plan
    # The check can fail: a Python UDF in the same place shows up in the plan (as ArrowEvalPython
    # since Spark 4 runs plain Python UDFs through Arrow, as BatchEvalPython before).
    python_udf = F.udf(lambda text: text == "body", "boolean")
    assert "EvalPython" in _physical_plan(frame.filter(python_udf("text")), capsys)


# --- where Spark's own SQL would answer differently -------------------------------------------


def test_a_string_is_not_a_number_whatever_it_spells(spark: SparkSession) -> None:
    """The spec: NumberOfOrders set as the String "2" makes "NumberOfOrders > 1" false (Spark
    would cast '2' to 2 and say true)."""
    message = _message(NumberOfOrders="2")
    assert _agree(spark, "NumberOfOrders > 1", [message]) == [False]
    assert _agree(spark, "NOT (NumberOfOrders > 1)", [message]) == [True]
    assert _agree(spark, "NumberOfOrders = '2'", [message]) == [True]
    assert _agree(spark, "NumberOfOrders + 1 = 3", [message]) == [False]
    assert _agree(spark, "flag = 'true'", [_message(flag=True)]) == [False]


def test_null_is_unknown_and_unknown_is_not_false(spark: SparkSession) -> None:
    message = _message(present=Int(1))
    assert _agree(spark, "missing > 1", [message]) == [None]
    assert _agree(spark, "NOT (missing > 1)", [message]) == [None]
    assert _agree(spark, "missing > 1 OR present = 1", [message]) == [True]
    assert _agree(spark, "missing > 1 AND present = 2", [message]) == [False]
    assert _agree(spark, "missing IS NULL AND present IS NOT NULL", [message]) == [True]
    # NULL wins over a type error: arithmetic with an unknown value is unknown.
    assert _agree(spark, "missing + s = 1", [_message(s="x")]) == [None]
    assert _agree(spark, "present + s = 1", [_message(present=Int(1), s="x")]) == [False]
    assert _agree(spark, "missing + present = 1", [message]) == [None]


#: (selector, properties, answer): each a place where plain Spark arithmetic or comparison differs.
NUMERIC_CASES = [
    ("i + 1 < 0", {"i": Int(2**31 - 1)}, True),  # int wraps at 32 bits
    ("i * i = 1", {"i": Int(-(2**31) + 1)}, True),
    ("l + 1 < 0", {"l": Long(2**63 - 1)}, True),  # long wraps at 64 bits
    ("l * l = 1", {"l": Long(2**63 - 1)}, True),
    ("-l < 0", {"l": Long(-(2**63))}, True),  # -MIN_VALUE is MIN_VALUE
    ("-i < 0", {"i": Int(-(2**31))}, True),
    ("l / -1 < 0", {"l": Long(-(2**63))}, True),  # MIN_VALUE / -1 wraps, Spark would fail
    ("i / -1 < 0", {"i": Int(-(2**31))}, True),
    ("i / 2 = -3", {"i": Int(-7)}, True),  # truncation toward zero
    ("l / 0 = 1", {"l": Long(5)}, None),  # integer division by zero is NULL
    ("f / 0 > 1000000", {"f": Float(1.0)}, True),  # floating division by zero is Infinity
    ("d / 0 < -1000000", {"d": Double(-1.0)}, True),
    ("d / -0.0 > 0", {"d": Double(-1.0)}, True),
    ("d / 0 = d / 0", {"d": Double(0.0)}, False),  # 0/0 is NaN, unequal to itself
    ("f = 16777217", {"f": Float(16777216.0)}, True),  # the int is rounded to float first
    ("i = f", {"i": Int(16777217), "f": Float(16777216.0)}, True),
    ("i + 0.0F = 16777216.0F", {"i": Int(16777217)}, True),
    ("l = d", {"l": Long(2**53 + 1), "d": Double(2.0**53)}, True),  # long to double rounds
    ("f * f = 0.010000001F", {"f": Float(0.1)}, True),  # float arithmetic rounds to 32 bits
    ("f * f = 0.010000000000000002", {"f": Float(0.1)}, False),
    ("d = d", {"d": Double(float("nan"))}, False),  # NaN: Spark says NaN = NaN
    ("d <> d", {"d": Double(float("nan"))}, True),
    ("d > 1", {"d": Double(float("nan"))}, False),  # Spark orders NaN above everything
    ("d BETWEEN 0 AND 1", {"d": Double(float("nan"))}, False),
    ("d NOT BETWEEN 0 AND 1", {"d": Double(float("nan"))}, False),
    ("d = 0", {"d": Double(-0.0)}, True),
    ("b + s = 127 + 32767", {"b": Byte(127), "s": Short(32767)}, True),
]


@pytest.mark.parametrize("ansi", ["true", "false"])
@pytest.mark.parametrize(("selector", "properties", "answer"), NUMERIC_CASES)
def test_java_arithmetic_and_comparison_whatever_the_ansi_setting(
    spark: SparkSession, ansi: str, selector: str, properties: dict[str, Any], answer: Any
) -> None:
    with ansi_enabled(spark, ansi):
        assert _agree(spark, selector, [_message(**properties)]) == [answer]


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_constant_arithmetic_that_overflows_does_not_fail_planning(
    spark: SparkSession, ansi: str
) -> None:
    selector = (
        "2147483647 + 1 < 0 AND 9223372036854775807L + 1 < 0 AND -9223372036854775808L / -1 < 0"
        " AND 9223372036854775807L * 9223372036854775807L = 1 AND 1.0 / 0 > 1000"
    )
    with ansi_enabled(spark, ansi):
        assert _agree(spark, selector, [_message()]) == [True]


def test_like_with_escape_and_wildcards_across_lines(spark: SparkSession) -> None:
    messages = [_message(word=w) for w in ("_foo", "bar", "a\nb", "l\U0001f600se", "100%", "x")]
    assert _agree(spark, r"word LIKE '\_%' ESCAPE '\'", messages) == [
        True, False, False, False, False, False,
    ]  # fmt: skip
    assert _agree(spark, "word LIKE 'a%b'", messages)[2] is True
    assert _agree(spark, "word LIKE 'a_b'", messages)[2] is True
    assert _agree(spark, "word LIKE 'l_se'", messages)[3] is True  # one code point, not two
    assert _agree(spark, "word LIKE '%!%' ESCAPE '!'", messages)[4] is True
    assert _agree(spark, "word NOT LIKE '%o%'", [*messages, _message()]) == [
        False, True, True, True, True, True, None,
    ]  # fmt: skip
    assert _agree(spark, "word LIKE 'x'", [_message(word=Int(1))]) == [False]


def test_in_compares_strings_only(spark: SparkSession) -> None:
    messages = [_message(country=c) for c in ("UK", "Peru", Int(1))] + [_message()]
    assert _agree(spark, "country IN (' UK', 'US', 'UK')", messages) == [True, False, False, None]
    assert _agree(spark, "country NOT IN ('UK')", messages) == [False, True, True, None]


def test_string_literals_with_quotes_backslashes_and_any_character(spark: SparkSession) -> None:
    message = _message(text="it's a \\ back\nslash é")
    assert _agree(spark, "text = 'it''s a \\ back\nslash é'", [message]) == [True]


def test_identifiers_with_dollars_and_letters_beyond_ascii(spark: SparkSession) -> None:
    message = _message(**{"größe": Int(3), "$x": "a", "_y": True})
    assert _agree(spark, "größe = 3 AND $x = 'a' AND _y", [message]) == [True]


def test_a_lone_boolean_identifier_is_a_condition(spark: SparkSession) -> None:
    messages = [_message(flag=True), _message(flag=False), _message(flag="yes"), _message()]
    assert _agree(spark, "flag", messages) == [True, False, False, None]
    assert _agree(spark, "NOT flag", messages) == [False, True, True, None]
    assert _agree(spark, "(flag) = (1 = 1)", messages) == [True, False, False, None]


# --- header fields ----------------------------------------------------------------------------


def test_header_references(spark: SparkSession) -> None:
    message = _message(
        {
            "type": "car",
            "priority": 7,
            "message_id": "ID:42",
            "timestamp": 1_700_000_000_000,
            "delivery_mode": DeliveryMode.NON_PERSISTENT,
        }
    )
    message.set_jms_correlation_id_as_bytes(b"abc")
    message.set_jms_expiration(5)
    message.set_object_property("JMSXDeliveryCount", Int(2))
    for selector, answer in [
        ("JMSType = 'car'", True),
        ("JMSPriority > 5 AND JMSPriority + 1 = 8", True),
        ("JMSMessageID = 'ID:42'", True),
        ("JMSTimestamp = 1700000000000", True),
        ("JMSCorrelationID = 'abc'", True),  # set as bytes, read as their UTF-8 text
        ("JMSDeliveryMode = 'NON_PERSISTENT'", True),
        ("JMSDeliveryMode = 'PERSISTENT'", False),
        ("JMSXDeliveryCount = 2", True),
        ("JMSExpiration = 5", None),  # not a selectable header: a property, absent
        ("JMSPriority IS NULL OR JMSTimestamp IS NULL OR JMSDeliveryMode IS NULL", False),
    ]:
        assert _agree(spark, selector, [message]) == [answer], selector
    empty = _message()
    assert _agree(spark, "JMSType IS NULL AND JMSMessageID IS NULL", [empty]) == [True]
    assert _agree(spark, "JMSCorrelationID = 'x'", [empty]) == [None]


def test_an_empty_selector_selects_everything(spark: SparkSession) -> None:
    frame = to_dataframe(spark, [_message(), _message()])
    for text in (None, "", "   "):
        assert frame.filter(selector_to_column(text)).count() == 2


# --- plain typed columns ----------------------------------------------------------------------


def test_plain_columns_named_like_the_identifiers(spark: SparkSession) -> None:
    frame = spark.createDataFrame(
        [("car", "blue", 3000, 4), ("car", "blue", 2000, 4), ("car", None, 3000, 4)],
        "JMSType string, color string, weight int, JMSPriority int",
    )
    selected = frame.filter(selector_to_column(SPEC_EXAMPLE, columns=frame))
    assert selected.count() == 1
    by_schema = selector_to_column("color IS NULL AND JMSPriority = 4", columns=frame.schema)
    assert frame.filter(by_schema).count() == 1
    strings = spark.createDataFrame([("2",)], "weight string")
    assert strings.filter(selector_to_column("weight > 1", columns=strings)).count() == 0


@pytest.mark.parametrize(
    ("schema", "selector", "message"),
    [
        (
            StructType([StructField("color", StringType())]),
            "colour = 'x'",
            "the selector reads 'colour', but no column has that name (columns: color)",
        ),
        (
            StructType([StructField("sent", TimestampType())]),
            "sent > 5",
            "column 'sent' is timestamp; a selector reads boolean, string",
        ),
        (
            StructType([StructField("JMSTimestamp", IntegerType())]),
            "JMSTimestamp > 5",
            "column 'JMSTimestamp' is int, but the header JMSTimestamp is a Java long",
        ),
        (
            StructType([StructField("JMSType", LongType())]),
            "JMSType = 'car'",
            "column 'JMSType' is bigint, but the header JMSType is a Java String",
        ),
    ],
)
def test_plain_columns_that_cannot_serve_are_named(
    schema: StructType, selector: str, message: str
) -> None:
    with pytest.raises(ValueError) as raised:
        selector_to_column(selector, columns=schema)
    assert message in str(raised.value)


# --- errors -----------------------------------------------------------------------------------


def test_bad_selectors_and_bad_arguments_fail_clearly() -> None:
    with pytest.raises(InvalidSelectorException, match="column"):
        selector_to_column("color = ")
    with pytest.raises(TypeError, match="columns= takes a StructType or a DataFrame, got dict"):
        selector_to_column("a = 1", columns={"a": "int"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lone UTF-16 surrogate"):
        selector_to_column("a = '\ud800'")


def test_arithmetic_nested_past_the_size_limit_is_refused() -> None:
    selector = "a" + "".join(f" * p{n}" for n in range(12)) + " > 1"
    with pytest.raises(ValueError, match=f"the limit is {MAX_EXPRESSION_SIZE}"):
        selector_to_column(selector)
    typed = StructType(
        [StructField("a", LongType())] + [StructField(f"p{n}", LongType()) for n in range(12)]
    )
    assert selector_to_column(selector, columns=typed) is not None  # static types stay small


def test_the_message_schema_is_what_selectors_read(spark: SparkSession) -> None:
    frame = spark.createDataFrame([], MESSAGE_SCHEMA)
    assert frame.filter(selector_to_column(SPEC_EXAMPLE)).count() == 0
