"""``OutgoingRows`` of the simple layout read column by column: every row is the message the
public setters make of it, byte for byte (property-based), and a row that makes no message is
refused naming it."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
)

from jms.errors import MessageFormatException
from jms.message import DeliveryMode, Message, Queue, TextMessage
from jms.message.codec import encode
from jms.spark.outgoing import OutgoingRows

# (column, Spark type, Arrow type, setter, values)
_PROPERTIES: list[tuple[str, DataType, pa.DataType, str, st.SearchStrategy[Any]]] = [
    ("flag", BooleanType(), pa.bool_(), "set_boolean_property", st.booleans()),
    ("tiny", ByteType(), pa.int8(), "set_byte_property", st.integers(-128, 127)),
    ("small", ShortType(), pa.int16(), "set_short_property", st.integers(-(2**15), 2**15 - 1)),
    ("count", IntegerType(), pa.int32(), "set_int_property", st.integers(-(2**31), 2**31 - 1)),
    ("n", LongType(), pa.int64(), "set_long_property", st.integers(-(2**63), 2**63 - 1)),
    ("ratio", FloatType(), pa.float32(), "set_float_property", st.floats(width=32)),
    ("amount", DoubleType(), pa.float64(), "set_double_property", st.floats()),
    ("region", StringType(), pa.string(), "set_string_property", st.text(max_size=8)),
    ("JMSXGroupID", StringType(), pa.string(), "set_string_property", st.text(max_size=4)),
]
_SCHEMA = StructType(
    [
        StructField("value", StringType()),
        StructField("priority", IntegerType()),
        StructField("delivery_mode", StringType()),
        StructField("correlation_id", StringType()),
        *[StructField(name, spark_type) for name, spark_type, _, _, _ in _PROPERTIES],
    ]
)
_ARROW = pa.schema(
    [
        ("value", pa.string()),
        ("priority", pa.int32()),
        ("delivery_mode", pa.string()),
        ("correlation_id", pa.string()),
        *[(name, arrow_type) for name, _, arrow_type, _, _ in _PROPERTIES],
    ]
)

_rows = st.lists(
    st.fixed_dictionaries(
        {
            "value": st.none() | st.text(max_size=20),
            "priority": st.none() | st.integers(0, 9),
            "delivery_mode": st.sampled_from([None, "PERSISTENT", "NON_PERSISTENT"]),
            "correlation_id": st.none() | st.text(max_size=6),
            **{name: st.none() | values for name, _, _, _, values in _PROPERTIES},
        }
    ),
    max_size=12,
)


def _expected(row: dict[str, Any]) -> Message:
    message = TextMessage(row["value"])
    message.set_jms_destination(Queue("out"))
    if row["priority"] is not None:
        message.set_jms_priority(row["priority"])
    if row["delivery_mode"] == "NON_PERSISTENT":
        message.set_jms_delivery_mode(DeliveryMode.NON_PERSISTENT)
    message.set_jms_correlation_id(row["correlation_id"])
    for name, _, _, setter, _ in _PROPERTIES:
        if row[name] is not None:
            getattr(message, setter)(name, row[name])
    return message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rows)
def test_simple_rows_are_the_messages_the_setters_make(rows: list[dict[str, Any]]) -> None:
    batch = pa.RecordBatch.from_pylist(rows, schema=_ARROW)
    made = list(OutgoingRows(_SCHEMA, Queue("out")).messages(batch))
    assert [encode(message) for message in made] == [encode(_expected(row)) for row in rows]


def test_a_row_that_makes_no_message_is_named() -> None:
    schema = StructType(
        [StructField("value", StringType()), StructField("priority", IntegerType())]
    )
    batch = pa.RecordBatch.from_pylist(
        [{"value": "fine", "priority": 4}, {"value": "bad", "priority": 12}],
        schema=pa.schema([("value", pa.string()), ("priority", pa.int32())]),
    )
    with pytest.raises(MessageFormatException, match=r"row 1 does not make a message: .*12"):
        list(OutgoingRows(schema, Queue("out")).messages(batch))


def test_a_jmsx_column_of_the_wrong_type_is_refused_naming_the_row() -> None:
    schema = StructType(
        [StructField("value", StringType()), StructField("JMSXGroupSeq", LongType())]
    )
    batch = pa.RecordBatch.from_pylist(
        [{"value": "a", "JMSXGroupSeq": None}, {"value": "b", "JMSXGroupSeq": 3}],
        schema=pa.schema([("value", pa.string()), ("JMSXGroupSeq", pa.int64())]),
    )
    with pytest.raises(MessageFormatException, match="row 1 does not make a message: JMSXGroupSeq"):
        list(OutgoingRows(schema, Queue("out")).messages(batch))
