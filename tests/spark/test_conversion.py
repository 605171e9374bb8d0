"""Messages ⇄ MESSAGE_SCHEMA rows: lossless both ways, through Arrow and through Spark, and every
row that describes no message is refused with the row and the column named."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from jms.errors import MessageFormatException
from jms.message import (
    BytesMessage,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    StreamMessage,
    TextMessage,
)
from jms.spark import MESSAGE_SCHEMA, from_rows, to_arrow, to_dataframe
from jms.types import Byte, Char, Double, Float, Int, Long, Short
from tests.spark.spark_strategies import spark_messages, value_record
from tests.strategies import message_fingerprint


def _fingerprints(messages: list[Message]) -> list[tuple[Any, ...]]:
    return [message_fingerprint(message) for message in messages]


# --- through Arrow (no JVM needed) ------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=st.lists(spark_messages(), max_size=4))
def test_messages_survive_arrow_and_back(messages: list[Message]) -> None:
    rows = to_arrow(messages).to_pylist()
    assert _fingerprints(from_rows(rows)) == _fingerprints(messages)


def test_every_java_type_keeps_its_type_and_bits() -> None:
    property_values = {
        "boolean": True,
        "byte": Byte(-128),
        "short": Short(32767),
        "int": Int(-(2**31)),
        "long": Long(2**63 - 1),
        "nan": Float(float("nan")),
        "negative_zero": Double(-0.0),
        "infinity": Float(float("-inf")),
        "string": "",
    }
    body_values = {**property_values, "char": Char("λ"), "bytes": b"\x00\xff", "null": None}
    map_message, stream_message = MapMessage(), StreamMessage()
    for name, value in property_values.items():
        map_message.set_object_property(name, value)
    for name, value in body_values.items():
        map_message.set_object(name, value)
        stream_message.write_object(value)
    originals = [map_message, stream_message]
    assert _fingerprints(from_rows(to_arrow(originals).to_pylist())) == _fingerprints(originals)


def test_the_row_layout_of_one_message() -> None:
    message = TextMessage("hello")
    message.set_jms_message_id("ID:1")
    message.set_jms_timestamp(-(2**63))
    message.set_jms_destination(Queue("orders"))
    message.set_jms_delivery_mode(1)
    message.set_jms_correlation_id_as_bytes(b"\xffab")
    message.set_object_property("weight", Short(7))
    message.set_object_property("JMSXDeliveryCount", Int(3))
    [row] = to_arrow([message]).to_pylist()
    assert row["destination"] == "queue://orders"
    assert row["timestamp"] == -(2**63)
    assert row["delivery_mode"] == "NON_PERSISTENT"
    assert row["correlation_id_bytes"] == b"\xffab"
    assert row["correlation_id"] == "\ufffdab"  # what get_jms_correlation_id() says
    assert row["delivery_count"] == 3
    assert dict(row["properties"]) == {
        "weight": {"type": "short", "boolean": None, "long": 7, "double": None, "string": None}
    }
    assert (row["body_type"], row["text"]) == ("text", "hello")


def test_a_bytes_message_being_written_is_not_reset() -> None:
    message = BytesMessage()
    message.write_int(1)
    to_arrow([message])
    message.write_int(2)  # still in write mode: to_arrow must not have called get_body
    message.reset()
    assert message.get_body_length() == 8


def test_messages_from_rows_are_writable_with_bodies_in_write_mode() -> None:
    bytes_message, stream_message = BytesMessage(), StreamMessage()
    bytes_message.write_byte(1)
    stream_message.write_int(1)
    rebuilt_bytes, rebuilt_stream = from_rows(to_arrow([bytes_message, stream_message]).to_pylist())
    assert isinstance(rebuilt_bytes, BytesMessage) and isinstance(rebuilt_stream, StreamMessage)
    rebuilt_bytes.write_byte(2)
    rebuilt_stream.write_int(2)
    rebuilt_bytes.set_string_property("added", "yes")
    rebuilt_bytes.reset()
    assert rebuilt_bytes.get_body(bytes) == b"\x01\x02"


def test_an_object_message_keeps_its_serialised_bytes() -> None:
    message = ObjectMessage({"order": [1, 2]})
    [rebuilt] = from_rows(to_arrow([message]).to_pylist())
    assert isinstance(rebuilt, ObjectMessage)
    assert rebuilt.get_serialized_object() == message.get_serialized_object()
    assert rebuilt.get_object() == {"order": [1, 2]}


@pytest.mark.parametrize(
    ("build", "where"),
    [
        (lambda: TextMessage("ok\ud800"), "message 0: text"),
        (lambda: _with_property("name", "\udfff"), "message 0: properties['name'].string"),
        (lambda: _map_with("key\ud800", 1), "message 0: map key"),
        (lambda: _stream_with(Char("\ud801")), "message 0: stream[0].string"),
    ],
)
def test_a_lone_surrogate_is_refused_with_where_it_is(build: Any, where: str) -> None:
    with pytest.raises(MessageFormatException, match="lone UTF-16 surrogate") as raised:
        to_arrow([build()])
    assert where in str(raised.value)


def _with_property(name: str, value: Any) -> Message:
    message = Message()
    message.set_object_property(name, value)
    return message


def _map_with(name: str, value: Any) -> MapMessage:
    message = MapMessage()
    message.set_object(name, value)
    return message


def _stream_with(value: Any) -> StreamMessage:
    message = StreamMessage()
    message.write_object(value)
    return message


def test_to_arrow_takes_only_messages() -> None:
    with pytest.raises(TypeError, match="expected a jms Message, got str"):
        to_arrow(["not a message"])  # type: ignore[list-item]


# --- rows that describe no message ------------------------------------------------------------


def _good_row() -> dict[str, Any]:
    message = MapMessage()
    message.set_int("count", 1)
    message.set_object_property("color", "blue")
    [row] = to_arrow([message]).to_pylist()
    return row


def test_a_float_written_by_hand_is_rounded_like_javas_cast() -> None:
    row = _good_row()
    row["properties"] = [("ratio", value_record("float", double=0.1))]
    [message] = from_rows([row])
    assert message.get_object_property("ratio") == Float(0.1) != 0.1


def test_a_row_must_be_a_row_or_a_mapping() -> None:
    with pytest.raises(MessageFormatException, match="row 0: the row should be a pyspark Row"):
        from_rows([("ID:1", 0)])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda row: row.pop("priority"), "row 0: the row has no field 'priority'"),
        (lambda row: row.update(body_type="email"), "body_type is 'email'"),
        (lambda row: row.update(delivery_mode="SOMETIMES"), "delivery_mode is 'SOMETIMES'"),
        (lambda row: row.update(priority=10), "JMSPriority must be an int from 0 to 9"),
        (lambda row: row.update(timestamp=None), "JMSTimestamp is a Java long"),
        (lambda row: row.update(destination="mailbox://x"), "is not a destination"),
        (lambda row: row.update(text="stray"), "a 'map' message has no 'text' body"),
        (lambda row: row.update(properties=None), "properties is null"),
        (
            lambda row: row.update(properties=[("n", value_record("byte", long=300))]),
            "properties['n'].long: 300 is out of range for a Java byte",
        ),
        (
            lambda row: row.update(properties=[("n", value_record("int", long=1, string="1"))]),
            "is a int, so only its 'long' field may be set, but 'string' is '1'",
        ),
        (
            lambda row: row.update(properties=[("n", value_record("float"))]),
            "properties['n'] is a float but its 'double' field is null",
        ),
        (
            lambda row: row.update(properties=[("n", value_record("char", string="x"))]),
            "properties['n'].type is 'char'",
        ),
        (
            lambda row: row.update(properties=[("n", value_record("double", double=1))]),
            "properties['n'].double should be a float, got int 1",
        ),
        (
            lambda row: row.update(properties=[("JMSXDeliveryCount", value_record("int", long=1))]),
            "JMSXDeliveryCount belongs in the delivery_count column",
        ),
        (
            lambda row: row.update(properties=[("1st", value_record("int", long=1))]),
            "is not a selector identifier",
        ),
        (
            lambda row: row.update(correlation_id_bytes=b"ab", correlation_id="xy"),
            "correlation_id must be the UTF-8 decoding of correlation_id_bytes",
        ),
        (
            lambda row: row.update(map=[("", {**value_record("int", long=1), "bytes": None})]),
            "name",
        ),
        (lambda row: row.update(map=42), "map should be a map, got int 42"),
    ],
)
def test_a_bad_row_is_refused_naming_row_and_column(change: Any, message: str) -> None:
    row = _good_row()
    change(row)
    with pytest.raises(MessageFormatException) as raised:
        from_rows([row])
    assert message in str(raised.value)


# --- through Spark ----------------------------------------------------------------------------


@pytest.mark.spark
@settings(
    max_examples=8,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(messages=st.lists(spark_messages(), min_size=20, max_size=20))
def test_messages_survive_spark_and_back(spark: SparkSession, messages: list[Message]) -> None:
    frame = to_dataframe(spark, messages)
    assert frame.schema == MESSAGE_SCHEMA
    assert _fingerprints(from_rows(frame.collect())) == _fingerprints(messages)
    assert _fingerprints(from_rows(frame.toArrow().to_pylist())) == _fingerprints(messages)


@pytest.mark.spark
def test_an_empty_list_is_an_empty_dataframe_in_the_schema(spark: SparkSession) -> None:
    frame = to_dataframe(spark, [])
    assert frame.schema == MESSAGE_SCHEMA
    assert frame.count() == 0
