"""Rows encoded column by column (``arrow_to_encoded``, what a sink task sends) are byte for byte
the encodings of the messages ``from_arrow`` makes of them (property-based, over batches of one
shape, where it must take them, and over arbitrary messages, where it may decline); a batch it
declines goes the general way, so every result and every refusal is the general path's."""

from __future__ import annotations

import math
from typing import Any
from unittest import mock

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from jms.errors import MessageFormatException
from jms.message import (
    BytesMessage,
    DeliveryMode,
    Destination,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    StreamMessage,
    TemporaryQueue,
    TemporaryTopic,
    TextMessage,
    Topic,
)
from jms.message.codec import decode, encode
from jms.message.message import property_name_error
from jms.spark import arrow_encode
from jms.spark.arrow_encode import arrow_to_encoded
from jms.spark.outgoing import OutgoingRows
from jms.spark.rows import to_arrow
from jms.spark.schema import MESSAGE_SCHEMA
from jms.types import BYTE_RANGE, INT_RANGE, LONG_RANGE, SHORT_RANGE, Char, Float
from tests.spark.spark_strategies import spark_messages, utf8_strings, value_record

# Java type -> (setter, values)
_PROPERTY_KINDS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    "boolean": ("set_boolean_property", st.booleans()),
    "byte": ("set_byte_property", st.integers(*BYTE_RANGE)),
    "short": ("set_short_property", st.integers(*SHORT_RANGE)),
    "int": ("set_int_property", st.integers(*INT_RANGE)),
    "long": ("set_long_property", st.integers(*LONG_RANGE)),
    "float": ("set_float_property", st.floats(width=32, allow_nan=True, allow_infinity=True)),
    "double": ("set_double_property", st.floats(allow_nan=True, allow_infinity=True)),
    "String": ("set_string_property", utf8_strings),
}
# Java type -> (MapMessage setter, values): a map body's entries.
_MAP_KINDS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    **{
        kind: (setter.removesuffix("_property"), values)
        for kind, (setter, values) in _PROPERTY_KINDS.items()
    },
    "char": ("set_char", st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",))),
    "byte[]": ("set_bytes", st.binary(max_size=8)),
    "null": ("set_object", st.none()),
}
# Java type -> (StreamMessage writer, values): a Stream body's values.
_STREAM_KINDS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    kind: (
        "write_object" if kind == "null" else "write_" + setter.removeprefix("set_").lower(),
        values,
    )
    for kind, (setter, values) in _MAP_KINDS.items()
}
_NAMES = st.from_regex(r"[a-zA-Z_$][a-zA-Z0-9_$]{0,5}", fullmatch=True).filter(
    lambda name: property_name_error(name) is None and not name.startswith("JMS")
)
_PLACES = st.sampled_from(
    [Queue("out"), Queue("out2"), Topic("news"), TemporaryQueue("tq"), TemporaryTopic("tt")]
)
_TIMES = st.integers(*LONG_RANGE)


@st.composite
def _one_shape(draw: st.DrawFn) -> list[Message]:
    """Messages that share a shape: one body class, the same optional headers (reply-to among
    them) and text present, the same property names and types in the same order (and map entry
    names and types, or Stream value types, for such a body); every value drawn apart."""
    body = draw(st.sampled_from(["message", "text", "bytes", "map", "stream", "object"]))
    has_text = draw(st.booleans())
    entry_names = draw(st.lists(utf8_strings.filter(bool), unique=True, max_size=4))
    entry_kinds = [draw(st.sampled_from(sorted(_MAP_KINDS))) for _ in entry_names]
    headers = [name for name in ("message_id", "correlation_id", "type") if draw(st.booleans())]
    if "correlation_id" in headers and draw(st.booleans()):  # as bytes, as MQ applications do
        headers[headers.index("correlation_id")] = "correlation_bytes"
    replies = draw(st.booleans())
    names = draw(st.lists(_NAMES, unique=True, max_size=4))
    kinds = [draw(st.sampled_from(sorted(_PROPERTY_KINDS))) for _ in names]
    # Message groups: JMSX properties of the types the spec gives them, anywhere among the rest.
    for name, kind in (("JMSXGroupID", "String"), ("JMSXGroupSeq", "int")):
        if draw(st.booleans()):
            at = draw(st.integers(0, len(names)))
            names.insert(at, name)
            kinds.insert(at, kind)
    messages: list[Message] = []
    for _ in range(draw(st.integers(1, 6))):
        message: Message
        if body == "message":
            message = Message()
        elif body == "text":
            message = TextMessage(draw(utf8_strings) if has_text else None)
        elif body == "object":  # a serialized object, or none, in any row
            message = ObjectMessage(draw(st.none() | st.integers() | utf8_strings))
        elif body == "bytes":
            message = BytesMessage()
            message.write_bytes(draw(st.binary(max_size=12)))
        elif body == "stream":
            message = StreamMessage()
            for kind in entry_kinds:  # as many values as a map would have entries
                writer, values = _STREAM_KINDS[kind]
                getattr(message, writer)(draw(values))
        else:
            message = MapMessage()
            for name, kind in zip(entry_names, entry_kinds, strict=True):
                setter, values = _MAP_KINDS[kind]
                getattr(message, setter)(name, draw(values))
        for header in headers:
            value = draw(utf8_strings)
            if header == "message_id":
                message.set_jms_message_id("ID:" + value)
            elif header == "correlation_id":
                message.set_jms_correlation_id(value)
            elif header == "correlation_bytes":
                message.set_jms_correlation_id_as_bytes(draw(st.binary(max_size=24)))
            else:
                message.set_jms_type(value)
        message.set_jms_destination(draw(_PLACES))
        if replies:
            message.set_jms_reply_to(draw(_PLACES))
        message.set_jms_delivery_mode(
            draw(st.sampled_from([DeliveryMode.PERSISTENT, DeliveryMode.NON_PERSISTENT]))
        )
        message.set_jms_priority(draw(st.integers(0, 9)))
        message.set_jms_timestamp(draw(_TIMES))
        message.set_jms_expiration(draw(_TIMES))
        message.set_jms_delivery_time(draw(_TIMES))
        message.set_jms_redelivered(draw(st.booleans()))
        for name, kind in zip(names, kinds, strict=True):
            setter, values = _PROPERTY_KINDS[kind]
            getattr(message, setter)(name, draw(values))
        messages.append(message)
    return messages


def _without_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a row is made into a message one by one (``from_arrow`` for
    ``MESSAGE_SCHEMA`` rows, ``_simple_messages`` for simple-layout rows)."""

    def general(*arguments: object) -> None:
        raise AssertionError("the rows were made into messages one by one")

    monkeypatch.setattr("jms.spark.outgoing.from_arrow", general)
    monkeypatch.setattr(OutgoingRows, "_simple_messages", general)


def _general(rows: OutgoingRows, batch: pa.RecordBatch) -> list[bytes]:
    return [encode(message) for message in rows.messages(batch)]


def _refused_as_the_general_path_refuses_it(
    outgoing: OutgoingRows,
    batch: pa.RecordBatch,
    destination: Destination | None,
    row: int,
    reason: str,
) -> None:
    """``batch`` is declined by the column path and refused by ``outgoing.encoded`` in the very
    words of the general path, naming ``row`` and ``reason``."""
    assert arrow_to_encoded(outgoing._full_batch(batch), destination) is None
    with pytest.raises(MessageFormatException, match=f"row {row}") as general:
        _general(outgoing, batch)
    with pytest.raises(MessageFormatException) as refused:
        outgoing.encoded(batch)
    assert str(refused.value) == str(general.value)
    assert reason in str(refused.value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_one_shape(), st.sampled_from([None, Queue("elsewhere"), TemporaryTopic("t")]))
def test_rows_of_one_shape_are_encoded_by_column_as_their_messages_encode(
    sent: list[Message], destination: Destination | None
) -> None:
    (batch,) = to_arrow(sent).to_batches()
    rows = OutgoingRows(MESSAGE_SCHEMA, destination)
    encoded = arrow_to_encoded(rows._full_batch(batch), destination)
    assert encoded is not None, "a batch of one shape must be encoded by column"
    assert encoded == _general(rows, batch)
    assert rows.encoded(batch) == encoded


def _rows_per_shape(rows: int) -> Any:
    """``ROWS_PER_SHAPE`` set to ``rows`` while in the ``with`` block: a few rows of several
    shapes are then encoded shape by shape too."""
    return mock.patch.object(arrow_encode, "ROWS_PER_SHAPE", rows)


@st.composite
def _several_shapes(draw: st.DrawFn) -> list[Message]:
    """The messages of two or three ``_one_shape`` batches, interleaved in a drawn order."""
    groups = [draw(_one_shape()) for _ in range(draw(st.integers(2, 3)))]
    messages = [message for group in groups for message in group]
    return draw(st.permutations(messages))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_several_shapes(), st.sampled_from([None, Queue("elsewhere")]))
def test_rows_of_several_shapes_are_encoded_shape_by_shape_in_their_order(
    sent: list[Message], destination: Destination | None
) -> None:
    (batch,) = to_arrow(sent).to_batches()
    rows = OutgoingRows(MESSAGE_SCHEMA, destination)
    with _rows_per_shape(1):
        encoded = arrow_to_encoded(rows._full_batch(batch), destination)
        assert encoded is not None, "each shape must be encoded by column"
        assert encoded == _general(rows, batch)
        assert rows.encoded(batch) == encoded
        sliced = batch.slice(1)
        assert rows.encoded(sliced) == _general(rows, sliced)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(spark_messages(), min_size=1, max_size=6),
    st.sampled_from([None, Queue("o")]),
    st.sampled_from([1, arrow_encode.ROWS_PER_SHAPE]),
)
def test_any_rows_are_encoded_as_their_messages_encode_or_refused_alike(
    sent: list[Message], destination: Destination | None, rows_per_shape: int
) -> None:
    with _rows_per_shape(rows_per_shape):
        _encoded_or_refused_alike(sent, destination)


def _encoded_or_refused_alike(sent: list[Message], destination: Destination | None) -> None:
    (batch,) = to_arrow(sent).to_batches()
    rows = OutgoingRows(MESSAGE_SCHEMA, destination)
    encoded = arrow_to_encoded(rows._full_batch(batch), destination)
    try:
        general = _general(rows, batch)
    except MessageFormatException as error:
        assert encoded is None
        with pytest.raises(MessageFormatException) as refused:
            rows.encoded(batch)
        assert str(refused.value) == str(error)
        return
    assert encoded is None or encoded == general
    assert rows.encoded(batch) == general


def _sample() -> list[Message]:
    messages = []
    for n in range(3):
        message = TextMessage(f"body {n}")
        message.set_jms_message_id(f"ID:m{n}")
        message.set_jms_destination(Queue("out"))
        message.set_long_property("n", n)
        message.set_string_property("region", "eu")
        message.set_boolean_property("urgent", n % 2 == 0)
        messages.append(message)
    return messages


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("priority", 12, "JMSPriority must be an int from 0 to 9; got 12"),
        ("delivery_mode", "SOMETIMES", "delivery_mode is 'SOMETIMES'"),
        ("destination", "nowhere://x", "nowhere://x"),
        ("reply_to", "nowhere://x", "nowhere://x"),
        ("bytes", b"\x01", "a 'text' message has no 'bytes' body"),
        (
            "properties",
            [("n", value_record("int", long=2**40))],
            "out of range",
        ),
        ("properties", [("JMSXGroupSeq", value_record("long", long=3))], "JMSXGroupSeq"),
        ("properties", [("bad name", value_record("long", long=3))], "bad name"),
    ],
)
@pytest.mark.parametrize("destination", [None, Queue("elsewhere")])
def test_a_row_that_makes_no_message_is_refused_as_the_general_path_refuses_it(
    column: str, value: Any, reason: str, destination: Destination | None
) -> None:
    rows = to_arrow(_sample()).to_pylist()
    rows[1][column] = value
    batch = pa.RecordBatch.from_pylist(rows, schema=to_arrow(_sample()).schema)
    outgoing = OutgoingRows(MESSAGE_SCHEMA, destination)
    _refused_as_the_general_path_refuses_it(outgoing, batch, destination, 1, reason)


def _varied(index: int, message: Message) -> None:
    """A change to one message that gives the batch another shape (still valid)."""
    if index == 0:
        message.set_int_property("extra", 1)
    elif index == 1:
        message.set_jms_reply_to(Queue("replies"))
    elif index == 2:
        message.set_jms_correlation_id_as_bytes(b"\x01")
    elif index == 3:
        message.clear_properties()
    else:
        message.set_float_property("n", 0.5)


@pytest.mark.parametrize("change", range(5))
def test_rows_of_another_shape_go_the_general_way_to_the_same_bytes(change: int) -> None:
    sent = _sample()
    _varied(change, sent[1])
    (batch,) = to_arrow(sent).to_batches()
    rows = OutgoingRows(MESSAGE_SCHEMA, None)
    assert arrow_to_encoded(rows._full_batch(batch), None) is None  # 2 shapes of 3 rows
    assert rows.encoded(batch) == [encode(message) for message in sent]


def test_many_rows_of_a_few_shapes_are_encoded_shape_by_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An optional property: rows with and rows without it, enough of each."""
    sent = [message for _ in range(arrow_encode.ROWS_PER_SHAPE) for message in _sample()]
    for message in sent[::2]:
        message.set_string_property("optional", "here")
    (batch,) = to_arrow(sent).to_batches()
    rows = OutgoingRows(MESSAGE_SCHEMA, None)
    expected = [encode(message) for message in sent]

    _without_the_general_path(monkeypatch)
    assert rows.encoded(batch) == expected


def test_a_correlation_id_unlike_its_bytes_is_refused_as_the_general_path_refuses_it() -> None:
    """With correlation ID bytes, the ``correlation_id`` column must be their UTF-8 decoding."""
    sent = _sample()
    for message in sent:
        message.set_jms_correlation_id_as_bytes(b"\x01\xff")
    rows = to_arrow(sent).to_pylist()
    rows[2]["correlation_id"] = "something else"
    batch = pa.RecordBatch.from_pylist(rows, schema=to_arrow(sent).schema)
    outgoing = OutgoingRows(MESSAGE_SCHEMA, None)
    _refused_as_the_general_path_refuses_it(
        outgoing, batch, None, 2, "correlation_id must be the UTF-8 decoding"
    )


def test_mixed_bodies_a_sliced_batch_and_no_rows() -> None:
    data = BytesMessage()
    data.write_bytes(b"\x00")
    data.set_jms_destination(Queue("out"))
    rows = OutgoingRows(MESSAGE_SCHEMA, None)
    (mixed,) = to_arrow([*_sample(), data]).to_batches()
    assert arrow_to_encoded(rows._full_batch(mixed), None) is None
    assert rows.encoded(mixed) == [encode(m) for m in [*_sample(), data]]
    sliced = to_arrow(_sample()).to_batches()[0].slice(1)
    assert rows.encoded(sliced) == [encode(m) for m in _sample()[1:]]
    assert arrow_to_encoded(rows._full_batch(sliced).slice(0, 0), None) == []


def test_a_sink_task_encodes_its_rows_by_column(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_the_general_path(monkeypatch)
    (batch,) = to_arrow(_sample()).to_batches()
    assert OutgoingRows(MESSAGE_SCHEMA, Queue("out")).encoded(batch) == [
        encode(message) for message in _sample()
    ]


# (column, Arrow type, setter, values) of simple-layout property columns.
_SIMPLE_PROPERTIES: list[tuple[str, pa.DataType, str, st.SearchStrategy[Any]]] = [
    ("flag", pa.bool_(), "set_boolean_property", st.booleans()),
    ("tiny", pa.int8(), "set_byte_property", st.integers(*BYTE_RANGE)),
    ("small", pa.int16(), "set_short_property", st.integers(*SHORT_RANGE)),
    ("count", pa.int32(), "set_int_property", st.integers(*INT_RANGE)),
    ("n", pa.int64(), "set_long_property", st.integers(*LONG_RANGE)),
    ("amount", pa.float64(), "set_double_property", st.floats()),
    ("ratio", pa.float32(), "set_float_property", st.floats(width=32)),
    ("region", pa.string(), "set_string_property", utf8_strings),
    ("JMSXGroupID", pa.string(), "set_string_property", utf8_strings),
    ("JMSXGroupSeq", pa.int32(), "set_int_property", st.integers(*INT_RANGE)),
]


@st.composite
def _simple_batches(draw: st.DrawFn) -> tuple[pa.RecordBatch, StructType]:
    """Simple-layout rows: a body column, some header columns, some property columns (with or
    without nulls: a null leaves the property unset, so such rows differ in shape)."""
    text_body = draw(st.booleans())
    body_column = draw(st.sampled_from(["value", "text"])) if text_body else "value"
    headers = draw(
        st.lists(
            st.sampled_from(
                ["destination", "correlation_id", "type", "priority", "delivery_mode", "reply_to"]
            ),
            unique=True,
        )
    )
    properties = draw(st.lists(st.sampled_from(_SIMPLE_PROPERTIES), unique=True))
    nulls = draw(st.booleans())
    header_values = {
        "destination": st.sampled_from(["queue://a", "topic://b", "temp-queue://c"]),
        "correlation_id": st.none() | utf8_strings,
        "type": st.none() | utf8_strings,
        "priority": st.none() | st.integers(0, 9),
        "delivery_mode": st.sampled_from([None, "PERSISTENT", "NON_PERSISTENT"]),
        "reply_to": st.sampled_from([None, "queue://replies", "temp-queue://r"]),
    }
    header_types = {"priority": pa.int32()}
    rows = []
    for _ in range(draw(st.integers(1, 6))):
        row: dict[str, Any] = {
            body_column: draw(utf8_strings) if text_body else draw(st.binary(max_size=10))
        }
        for name in headers:
            row[name] = draw(header_values[name])
        for name, _, _, values in properties:
            row[name] = draw((st.none() | values) if nulls else values)
        rows.append(row)
    arrow = pa.schema(
        [
            (body_column, pa.string() if text_body else pa.binary()),
            *((name, header_types.get(name, pa.string())) for name in headers),
            *((name, arrow_type) for name, arrow_type, _, _ in properties),
        ]
    )
    return pa.RecordBatch.from_pylist(rows, schema=arrow), from_arrow_schema(arrow)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_simple_batches(), st.sampled_from([None, Queue("elsewhere")]))
def test_simple_rows_are_encoded_as_the_messages_they_make(
    drawn: tuple[pa.RecordBatch, StructType], destination: Destination | None
) -> None:
    batch, schema = drawn
    if destination is None and "destination" not in schema.fieldNames():
        destination = Queue("out")
    rows = OutgoingRows(schema, destination)
    expected = _general(rows, batch)
    assert rows.encoded(batch) == expected
    with _rows_per_shape(1):
        assert rows.encoded(batch) == expected


def test_simple_rows_of_one_shape_are_encoded_by_column(monkeypatch: pytest.MonkeyPatch) -> None:
    """Float columns and a reply-to among them."""
    batch = pa.RecordBatch.from_pylist(
        [
            {
                "value": f"v{n}",
                "priority": n,
                "reply_to": "temp-queue://replies",
                "n": n,
                "region": "eu",
                "ratio": n / 4,
            }
            for n in range(3)
        ],
        schema=pa.schema(
            [
                ("value", pa.string()),
                ("priority", pa.int32()),
                ("reply_to", pa.string()),
                ("n", pa.int64()),
                ("region", pa.string()),
                ("ratio", pa.float32()),
            ]
        ),
    )
    rows = OutgoingRows(from_arrow_schema(batch.schema), Queue("out"))
    expected = _general(rows, batch)

    _without_the_general_path(monkeypatch)
    assert rows.encoded(batch) == expected


def test_simple_rows_with_nulls_are_encoded_by_column(monkeypatch: pytest.MonkeyPatch) -> None:
    """A null in a property column leaves the property unset: such rows have another shape, and
    enough rows of each shape are encoded shape by shape."""
    count = 4 * arrow_encode.ROWS_PER_SHAPE
    batch = pa.RecordBatch.from_pylist(
        [
            {
                "value": f"v{n}",
                "n": n,
                "region": None if n % 2 else "eu",
                "amount": None if n % 4 == 3 else n / 2,
            }
            for n in range(count)
        ],
        schema=pa.schema(
            [
                ("value", pa.string()),
                ("n", pa.int64()),
                ("region", pa.string()),
                ("amount", pa.float64()),
            ]
        ),
    )
    rows = OutgoingRows(from_arrow_schema(batch.schema), Queue("out"))
    expected = _general(rows, batch)
    assert "region" not in decode(expected[1]).get_property_names()
    assert decode(expected[2]).get_string_property("region") == "eu"

    _without_the_general_path(monkeypatch)
    assert rows.encoded(batch) == expected


def test_jmsx_properties_of_another_type_send_the_rows_the_general_way() -> None:
    """JMSX properties are encoded by column when they have the spec's types; of another type
    (a JMSXGroupSeq that is a long) the general path refuses the rows, and words it."""
    rows = to_arrow(_sample()).to_pylist()
    for row in rows:
        row["properties"] = [("JMSXGroupSeq", value_record("long", long=3))]
    batch = pa.RecordBatch.from_pylist(rows, schema=to_arrow(_sample()).schema)
    outgoing = OutgoingRows(MESSAGE_SCHEMA, None)
    assert arrow_to_encoded(outgoing._full_batch(batch), None) is None
    with pytest.raises(MessageFormatException, match="JMSXGroupSeq must be a Java int"):
        outgoing.encoded(batch)

    simple = pa.RecordBatch.from_pylist(
        [{"value": "v", "JMSXAppID": 7}],
        schema=pa.schema([("value", pa.string()), ("JMSXAppID", pa.int64())]),
    )
    outgoing = OutgoingRows(from_arrow_schema(simple.schema), Queue("out"))
    with pytest.raises(MessageFormatException, match="JMSXAppID must be a Java String"):
        outgoing.encoded(simple)


def test_message_groups_are_encoded_by_column(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _sample()
    for number, message in enumerate(sent):
        message.set_string_property("JMSXGroupID", "orders-eu")
        message.set_int_property("JMSXGroupSeq", number + 1)
    (batch,) = to_arrow(sent).to_batches()
    expected = [encode(message) for message in sent]

    _without_the_general_path(monkeypatch)
    assert OutgoingRows(MESSAGE_SCHEMA, None).encoded(batch) == expected


def test_map_bodies_are_encoded_by_column(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = []
    for number in range(3):
        message = MapMessage()
        message.set_jms_destination(Queue("trades"))
        message.set_string("symbol", "ACME")
        message.set_double("price", 10.5 + number)
        message.set_long("quantity", number)
        message.set_bytes("raw", b"\x00\xff")
        message.set_string("Straße", "Köln")
        message.set_object("nothing", None)
        sent.append(message)
    sent.append(MapMessage())  # no entries: another shape, not enough rows for two
    sent[-1].set_jms_destination(Queue("trades"))
    (batch,) = to_arrow(sent[:3]).to_batches()
    expected = [encode(message) for message in sent[:3]]

    _without_the_general_path(monkeypatch)
    assert OutgoingRows(MESSAGE_SCHEMA, None).encoded(batch) == expected
    (empty,) = to_arrow(sent[3:]).to_batches()
    assert OutgoingRows(MESSAGE_SCHEMA, None).encoded(empty) == [encode(sent[3])]


def test_stream_bodies_are_encoded_by_column(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = []
    for number in range(3):
        message = StreamMessage()
        message.set_jms_destination(Queue("readings"))
        message.write_string("sensor-7")
        message.write_double(20.5 + number)
        message.write_int(number)
        message.write_bytes(b"\x00\xff")
        message.write_char("°")
        message.write_object(None)
        sent.append(message)
    (batch,) = to_arrow(sent).to_batches()
    expected = [encode(message) for message in sent]

    _without_the_general_path(monkeypatch)
    assert OutgoingRows(MESSAGE_SCHEMA, None).encoded(batch) == expected


def test_a_stream_value_with_another_field_set_is_refused_as_the_general_path_refuses_it() -> None:
    message = StreamMessage()
    message.set_jms_destination(Queue("q"))
    message.write_string("x")
    rows = to_arrow([message, message]).to_pylist()
    rows[1]["stream"] = [value_record("String", string="x", long=1)]
    batch = pa.RecordBatch.from_pylist(rows, schema=to_arrow([message]).schema)
    outgoing = OutgoingRows(MESSAGE_SCHEMA, None)
    assert arrow_to_encoded(outgoing._full_batch(batch), None) is None
    with pytest.raises(MessageFormatException, match="only its 'string' field may be set"):
        outgoing.encoded(batch)


def test_chars_and_floats_are_encoded_by_column(monkeypatch: pytest.MonkeyPatch) -> None:
    """Map values that are chars (in every plane of UTF-8's lengths) and floats, and float
    properties: a row's float is rounded to 32 bits, as ``from_arrow`` rounds it."""
    sent = []
    for number, char in enumerate(["a", "é", "€", "\uffff"]):
        message = MapMessage()
        message.set_jms_destination(Queue("q"))
        message.set_char("c", Char(char))
        message.set_float("f", [0.5, -1e30, math.inf, math.nan][number])
        message.set_float_property("ratio", 0.1 * number)
        sent.append(message)
    rows = to_arrow(sent).to_pylist()
    for number, row in enumerate(rows):  # doubles that are not floats, rounded by from_arrow
        row["properties"] = [("ratio", value_record("float", double=0.1 * number))]
    batch = pa.RecordBatch.from_pylist(rows, schema=to_arrow(sent).schema)
    expected = [encode(message) for message in OutgoingRows(MESSAGE_SCHEMA, None).messages(batch)]
    assert [decode(data).get_float_property("ratio") for data in expected[1:2]] == [Float(0.1)]

    _without_the_general_path(monkeypatch)
    assert OutgoingRows(MESSAGE_SCHEMA, None).encoded(batch) == expected


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("map", value_record("char", string="ab"), "one UTF-16 code unit"),
        ("map", value_record("char", string="\U0001f600"), "one UTF-16 code unit"),
        ("map", value_record("float", double=1e300), "out of range for a Java float"),
        ("properties", value_record("float", double=-1e39), "out of range for a Java float"),
    ],
)
def test_a_char_or_float_the_spec_cannot_hold_is_refused_as_the_general_path_refuses_it(
    column: str, value: Any, reason: str
) -> None:
    message = MapMessage()
    message.set_jms_destination(Queue("q"))
    rows = to_arrow([message, message]).to_pylist()
    for row in rows:
        row[column] = [("v", value_record(value["type"], double=0.5, string="c"))]
    rows[1][column] = [("v", value)]
    for row in rows:  # the value's own field alone, as from_arrow requires
        field = "string" if value["type"] == "char" else "double"
        row[column] = [
            (name, {**record, **{other: None for other in ("string", "double") if other != field}})
            for name, record in row[column]
        ]
    batch = pa.RecordBatch.from_pylist(rows, schema=to_arrow([message]).schema)
    outgoing = OutgoingRows(MESSAGE_SCHEMA, None)
    _refused_as_the_general_path_refuses_it(outgoing, batch, None, 1, reason)


def test_a_map_entry_with_an_empty_name_is_refused_as_the_general_path_refuses_it() -> None:
    message = MapMessage()
    message.set_jms_destination(Queue("q"))
    message.set_string("a", "x")
    rows = to_arrow([message, message]).to_pylist()
    for row in rows:
        row["map"] = [("", value_record("String", string="y"))]
    batch = pa.RecordBatch.from_pylist(rows, schema=to_arrow([message]).schema)
    outgoing = OutgoingRows(MESSAGE_SCHEMA, None)
    assert arrow_to_encoded(outgoing._full_batch(batch), None) is None
    with pytest.raises(MessageFormatException, match="non-empty"):
        outgoing.encoded(batch)


def test_rows_that_are_not_maps_but_hold_a_map_are_refused_as_the_general_path_refuses_them() -> (
    None
):
    rows = to_arrow(_sample()).to_pylist()
    for row in rows:
        row["map"] = [("a", value_record("String", string="x"))]
    batch = pa.RecordBatch.from_pylist(rows, schema=to_arrow(_sample()).schema)
    outgoing = OutgoingRows(MESSAGE_SCHEMA, None)
    assert arrow_to_encoded(outgoing._full_batch(batch), None) is None
    with pytest.raises(MessageFormatException, match="a 'text' message has no 'map' body"):
        outgoing.encoded(batch)


@pytest.mark.parametrize("column", ["properties", "map"])
def test_a_value_with_another_field_set_is_refused_as_the_general_path_refuses_it(
    column: str,
) -> None:
    """A value struct must set exactly the field of its type: one that also sets another (a
    String with a long) is refused by from_arrow, so the columns never take it."""
    message = MapMessage()
    message.set_jms_destination(Queue("q"))
    rows = to_arrow([message, message]).to_pylist()
    for row in rows:
        row[column] = [("s", value_record("String", string="x", long=1))]
    batch = pa.RecordBatch.from_pylist(rows, schema=to_arrow([message]).schema)
    outgoing = OutgoingRows(MESSAGE_SCHEMA, None)
    assert arrow_to_encoded(outgoing._full_batch(batch), None) is None
    with pytest.raises(MessageFormatException, match="only its 'string' field may be set"):
        outgoing.encoded(batch)
