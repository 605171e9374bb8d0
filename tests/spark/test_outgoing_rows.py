"""Rows read column by column: a simple layout's rows are the messages the public setters make of
them, and ``MESSAGE_SCHEMA`` rows (``from_arrow``) the messages ``from_rows`` makes, byte for byte
(property-based); a row that makes no message is refused naming it, with ``from_rows``'s
words."""

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
from jms.message import BytesMessage, DeliveryMode, MapMessage, Message, Queue, TextMessage
from jms.message.codec import encode
from jms.spark.outgoing import OPTIONAL_COLUMNS, OutgoingRows
from jms.spark.rows import MESSAGE_ARROW_SCHEMA, from_arrow, from_rows, to_arrow
from jms.spark.schema import MESSAGE_SCHEMA
from tests.spark.spark_strategies import spark_messages, value_record

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


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(spark_messages(), min_size=1, max_size=8))
def test_message_schema_rows_read_by_column_are_the_messages_from_rows_makes(
    sent: list[Message],
) -> None:
    (rows,) = to_arrow(sent).to_batches()
    assert [encode(m) for m in from_arrow(rows)] == [encode(m) for m in from_rows(rows.to_pylist())]


def _refused_as_from_rows_refuses(rows: list[dict[str, Any]], reason: str) -> None:
    """``from_arrow`` refuses the batch of ``rows`` with ``from_rows``' own error, naming row 1
    and saying ``reason``."""
    batch = pa.RecordBatch.from_pylist(rows, schema=MESSAGE_ARROW_SCHEMA)
    with pytest.raises(MessageFormatException, match="row 1") as columnar:
        from_arrow(batch)
    with pytest.raises(MessageFormatException) as general:
        from_rows(rows)
    assert str(columnar.value) == str(general.value)
    assert reason in str(columnar.value)


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("priority", 12, "JMSPriority must be an int from 0 to 9; got 12"),
        ("delivery_mode", "SOMETIMES", "delivery_mode is 'SOMETIMES'"),
        ("destination", "nowhere://x", "nowhere://x"),
        ("text", "a body", "a 'bytes' message has no 'text' body"),
    ],
)
def test_a_message_schema_row_read_by_column_is_refused_as_from_rows_refuses_it(
    column: str, value: Any, reason: str
) -> None:
    first = BytesMessage()
    first.write_bytes(b"\x01")
    first.set_jms_destination(Queue("out"))
    second = first._copy()
    rows = to_arrow([first, second]).to_pylist()
    rows[1][column] = value
    _refused_as_from_rows_refuses(rows, reason)


@pytest.mark.parametrize(
    ("properties", "reason"),
    [
        ([("n", value_record("long", long=3, string="x"))], "only its 'long' field may be set"),
        (
            [("n", value_record("long", string="3"))],
            "only its 'long' field may be set, but 'string'",
        ),
        ([("n", value_record("long"))], "its 'long' field is null"),
        ([("n", value_record("char", string="c"))], "properties['n'].type is 'char'"),
        ([("n", value_record("int", long=2**40))], "out of range"),
        ([("n", value_record("boolean", boolean=True)), ("n2", None)], "n2"),
        ([("JMSXGroupSeq", value_record("long", long=3))], "JMSXGroupSeq"),
        ([("bad name", value_record("long", long=3))], "bad name"),
    ],
)
def test_a_property_read_by_column_is_refused_as_from_rows_refuses_it(
    properties: list[tuple[str, Any]], reason: str
) -> None:
    first = TextMessage("t")
    first.set_jms_destination(Queue("out"))
    first.set_long_property("n", 1)
    rows = to_arrow([first, first._copy()]).to_pylist()
    rows[1]["properties"] = properties
    _refused_as_from_rows_refuses(rows, reason)


def test_text_and_bytes_rows_never_go_through_from_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    def general(rows: object) -> None:
        raise AssertionError("from_rows was used")

    monkeypatch.setattr("jms.spark.rows.from_rows", general)
    text = TextMessage("t")
    text.set_jms_destination(Queue("out"))
    text.set_long_property("n", 3)
    text.set_string_property("JMSXGroupID", "g")
    data = BytesMessage()
    data.write_bytes(b"\x00")
    (batch,) = to_arrow([text, data]).to_batches()
    made = from_arrow(batch)
    assert [encode(m) for m in made] == [encode(text), encode(data)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(spark_messages(), min_size=1, max_size=8), st.data())
def test_full_rows_without_columns_null_in_every_row_are_the_same_messages(
    sent: list[Message], data: st.DataObject
) -> None:
    (batch,) = to_arrow(sent).to_batches()
    all_null = [name for name in OPTIONAL_COLUMNS if batch.column(name).null_count == len(batch)]
    left_out = data.draw(
        st.lists(st.sampled_from(all_null), unique=True) if all_null else st.just([])
    )
    kept = [name for name in MESSAGE_ARROW_SCHEMA.names if name not in left_out]
    narrow = batch.select(kept)
    schema = StructType([field for field in MESSAGE_SCHEMA.fields if field.name in kept])
    destination = Queue("out")
    assert OutgoingRows(schema, destination).encoded(narrow) == OutgoingRows(
        MESSAGE_SCHEMA, destination
    ).encoded(batch)
    assert [encode(m) for m in OutgoingRows(schema, destination).messages(narrow)] == [
        encode(m) for m in OutgoingRows(MESSAGE_SCHEMA, destination).messages(batch)
    ]


def test_a_body_column_left_out_is_an_empty_body_as_a_null_one_is() -> None:
    message = MapMessage()
    message.set_jms_destination(Queue("out"))
    message.set_int("n", 1)
    (batch,) = to_arrow([message]).to_batches()
    schema = StructType([field for field in MESSAGE_SCHEMA.fields if field.name != "map"])
    (made,) = OutgoingRows(schema, None).messages(batch.drop_columns(["map"]))
    assert isinstance(made, MapMessage) and list(made.get_map_names()) == []
