"""encoded_to_arrow gives exactly to_arrow(decode(...)) for every batch decode accepts, and for every
batch it refuses the same refusal, naming the message by its index in the batch. Needs pyarrow only,
no SparkSession."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jms.errors import MessageFormatException
from jms.message import (
    BytesMessage,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    StreamMessage,
    TemporaryTopic,
    TextMessage,
    Topic,
)
from jms.message.codec import decode, encode
from jms.spark import columnar
from jms.spark.columnar import encoded_to_arrow
from jms.spark.rows import MESSAGE_ARROW_SCHEMA, to_arrow
from jms.types import Byte, Char, Double, Float, Int, Long, Short
from tests.spark.spark_strategies import spark_messages, utf8_strings
from tests.strategies import (
    java_bytes,
    java_chars,
    java_doubles,
    java_floats,
    java_ints,
    java_longs,
    java_shorts,
)
from tests.strategies import messages as any_messages

# The bulk path is what these tests are for; most of their batches are smaller than the size from
# which encoded_to_arrow takes it.
FEWEST_FOR_BULK = columnar._FEWEST_FOR_BULK


@pytest.fixture(autouse=True)
def _bulk_path_for_every_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columnar, "_FEWEST_FOR_BULK", 1)


# --- what the general path gives --------------------------------------------------------------


def _exact(value: Any) -> Any:
    """``value`` from ``to_pylist`` with every float as its bits, so that NaN equals NaN and
    -0.0 differs from 0.0 (Arrow's ``equals`` says NaN != NaN)."""
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if isinstance(value, dict):
        return {key: _exact(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_exact(item) for item in value)
    return value


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, dict):
        return any(_has_nan(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_has_nan(item) for item in value)
    return False


def _reference(encoded: list[bytes]) -> pa.Table | str:
    """What decode then to_arrow give: the table, or the words a refusal must contain."""
    decoded = []
    for index, data in enumerate(encoded):
        try:
            decoded.append(decode(data))
        except MessageFormatException as error:
            return f"message {index}: {error}"
    try:
        return to_arrow(decoded)
    except MessageFormatException as error:
        return str(error)


def _assert_same_as_reference(encoded: list[bytes]) -> None:
    expected = _reference(encoded)
    if isinstance(expected, str):
        with pytest.raises(MessageFormatException) as raised:
            encoded_to_arrow(encoded)
        assert str(raised.value) == expected
        return
    actual = encoded_to_arrow(encoded)
    assert isinstance(actual, pa.RecordBatch)
    assert actual.schema.equals(MESSAGE_ARROW_SCHEMA)
    assert actual.schema.equals(expected.schema)
    actual.validate(full=True)
    expected_rows = expected.to_pylist()
    assert _exact(actual.to_pylist()) == _exact(expected_rows)
    if not _has_nan(expected_rows):
        assert pa.Table.from_batches([actual]).equals(expected.combine_chunks())


# --- batches decode accepts -------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=st.lists(spark_messages(), max_size=6))
def test_a_batch_of_any_messages_converts_as_to_arrow_does(messages: list[Message]) -> None:
    _assert_same_as_reference([encode(message) for message in messages])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=st.lists(any_messages(), min_size=1, max_size=4))
def test_lone_surrogates_anywhere_are_refused_as_to_arrow_refuses_them(
    messages: list[Message],
) -> None:
    _assert_same_as_reference([encode(message) for message in messages])


def _text_message(number: int) -> TextMessage:
    message = TextMessage(f"body {number} é")
    message.set_jms_message_id(f"ID:broker:{number}")
    message.set_jms_timestamp(1_763_769_600_000 + number)
    message.set_jms_destination(Queue("orders"))
    message.set_jms_delivery_mode(2)
    message.set_int_property("count", number)
    message.set_string_property("color", "blue")
    message.set_double_property("price", 19.99)
    return message


def _bytes_message(content: bytes) -> BytesMessage:
    message = BytesMessage()
    message.write_bytes(content)
    message.set_jms_reply_to(TemporaryTopic("replies"))
    message.set_jms_correlation_id_as_bytes(b"\xffid")
    return message


def _map_message() -> MapMessage:
    message = MapMessage()
    message.set_int("count", 1)
    message.set_object("nothing", None)
    message.set_object("initial", Char("λ"))
    return message


def _map_of_every_type() -> MapMessage:
    """A map the loop reads: a value of each type a map holds."""
    message = MapMessage()
    message.set_jms_destination(Queue("trades"))
    for name, value in {
        "flag": True,
        "b": Byte(-128),
        "s": Short(32767),
        "i": Int(-(2**31)),
        "l": Long(2**63 - 1),
        "f": Float(0.5),
        "d": Double(float("nan")),
        "Straße": "Köln",
        "raw": b"\x00\xff",
        "nothing": None,
        "unit": Char("°"),
    }.items():
        message.set_object(name, value)
    return message


def _stream_message() -> StreamMessage:
    message = StreamMessage()
    for value in (Byte(-1), None, b"\x00", Float(float("nan")), "s", Char("\uffff"), Long(7)):
        message.write_object(value)
    return message


def _every_kind() -> list[Message]:
    """One message of each body kind, empty and null bodies, every property type."""
    properties = Message()
    for name, value in {
        "flag": True,
        "off": False,
        "b": Byte(-128),
        "s": Short(32767),
        "i": Int(-(2**31)),
        "l": Long(2**63 - 1),
        "f": Float(0.5),
        "d": Double(-0.0),
        "text": "",
        "JMSXGroupID": "g",
        "JMSXDeliveryCount": Int(4),
    }.items():
        properties.set_object_property(name, value)
    properties.set_jms_type("kind")
    properties.set_jms_redelivered(True)
    properties.set_jms_priority(9)
    properties.set_jms_expiration(-1)
    properties.set_jms_delivery_time(2**63 - 1)
    properties.set_jms_correlation_id("corr")
    properties.set_jms_destination(Topic("prices"))
    return [
        properties,
        TextMessage(None),
        TextMessage(""),
        _text_message(1),
        _bytes_message(b""),
        _bytes_message(b"\x00\x01"),
        ObjectMessage(),
        ObjectMessage({"order": [1, 2]}),
        MapMessage(),
        _map_message(),
        _map_of_every_type(),
        StreamMessage(),
        _stream_message(),
    ]


@st.composite
def _one_shape(draw: st.DrawFn) -> list[Message]:
    """Messages with the same headers present and the same property names and types, values
    drawn: the loop reads all but the first by comparing them with the one before."""
    values = st.tuples(
        java_ints, java_floats, utf8_strings, java_doubles, java_longs, st.booleans(), java_ints
    )
    messages: list[Message] = []
    for number, drawn in enumerate(draw(st.lists(values, min_size=1, max_size=8))):
        count, ratio, color, price, total, flag, delivery_count = drawn
        message = TextMessage(draw(utf8_strings))
        message.set_jms_message_id(f"ID:{number}")
        message.set_jms_timestamp(draw(java_longs))
        message.set_jms_destination(Queue(draw(utf8_strings.filter(bool))))
        message.set_jms_priority(draw(st.integers(0, 9)))
        for name, value in {
            "count": count,
            "ratio": ratio,
            "color": color,
            "price": price,
            "total": total,
            "flag": flag,
            "JMSXDeliveryCount": delivery_count,
        }.items():
            message.set_object_property(name, value)
        messages.append(message)
    return messages


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=_one_shape())
def test_a_batch_of_one_shape_converts_as_to_arrow_does(messages: list[Message]) -> None:
    _assert_same_as_reference([encode(message) for message in messages])


_MAP_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "boolean": st.booleans(),
    "byte": java_bytes,
    "short": java_shorts,
    "int": java_ints,
    "long": java_longs,
    "float": java_floats,
    "double": java_doubles,
    "String": utf8_strings,
    "char": java_chars,  # lone surrogates among them: to_arrow refuses those
    "byte[]": st.binary(max_size=8),
}


@st.composite
def _maps_of_a_few_shapes(draw: st.DrawFn) -> list[Message]:
    """MapMessages of one or two entry shapes (names and types), interleaved, values drawn, some
    of them with another entry (a null or a char) or no entries at all."""
    shapes = [
        draw(
            st.lists(
                st.tuples(utf8_strings.filter(bool), st.sampled_from(sorted(_MAP_VALUES))),
                max_size=5,
                unique_by=lambda entry: entry[0],
            )
        )
        for _ in range(draw(st.integers(1, 2)))
    ]
    messages: list[Message] = []
    for _ in range(draw(st.integers(1, 8))):
        message = MapMessage()
        for name, type_name in draw(st.sampled_from(shapes)):
            message.set_object(name, draw(_MAP_VALUES[type_name]))
        if draw(st.integers(0, 9)) == 0:
            message.set_object("odd", draw(st.none() | java_chars))
        message.set_jms_destination(Queue("trades"))
        message.set_long_property("n", draw(java_longs))
        messages.append(message)
    return messages


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=_maps_of_a_few_shapes())
def test_map_bodies_convert_as_to_arrow_does(messages: list[Message]) -> None:
    _assert_same_as_reference([encode(message) for message in messages])


@st.composite
def _streams_of_a_few_shapes(draw: st.DrawFn) -> list[Message]:
    """StreamMessages of one or two value shapes (types in order), interleaved, values drawn,
    some with one more value (a null or a char) or none at all, beside a MapMessage of the same
    value types (the same tags, another body)."""
    shapes = [
        draw(st.lists(st.sampled_from(sorted(_MAP_VALUES)), max_size=5))
        for _ in range(draw(st.integers(1, 2)))
    ]
    messages: list[Message] = []
    for _ in range(draw(st.integers(1, 8))):
        message = StreamMessage()
        for type_name in draw(st.sampled_from(shapes)):
            message.write_object(draw(_MAP_VALUES[type_name]))
        if draw(st.integers(0, 9)) == 0:
            message.write_object(draw(st.none() | java_chars))
        message.set_jms_destination(Queue("readings"))
        messages.append(message)
    if draw(st.booleans()):
        twin = MapMessage()
        for position, type_name in enumerate(shapes[0]):
            twin.set_object(str(position), draw(_MAP_VALUES[type_name]))
        twin.set_jms_destination(Queue("readings"))
        messages.insert(draw(st.integers(0, len(messages))), twin)
    return messages


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=_streams_of_a_few_shapes())
def test_stream_bodies_convert_as_to_arrow_does(messages: list[Message]) -> None:
    _assert_same_as_reference([encode(message) for message in messages])


def test_a_message_with_very_many_properties_converts_as_to_arrow_does() -> None:
    message = _text_message(1)
    for number in range(600):
        message.set_int_property(f"p{number}", number)
    _assert_same_as_reference([encode(_text_message(0)), encode(message)])


def test_every_kind_of_message_alone_and_all_together() -> None:
    messages = _every_kind()
    for message in messages:
        _assert_same_as_reference([encode(message)])
    _assert_same_as_reference([encode(message) for message in messages])
    _assert_same_as_reference([encode(message) for message in reversed(messages)])


def test_an_empty_batch_is_an_empty_batch_in_the_schema() -> None:
    batch = encoded_to_arrow([])
    assert batch.num_rows == 0
    assert batch.schema.equals(MESSAGE_ARROW_SCHEMA)
    _assert_same_as_reference([])


def test_small_batches_go_the_general_way_and_convert_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(columnar, "_FEWEST_FOR_BULK", FEWEST_FOR_BULK)
    decoded: list[int] = []

    def counting_decode(data: bytes) -> Message:
        decoded.append(len(data))
        return decode(data)

    monkeypatch.setattr(columnar, "decode", counting_decode)
    for count in (FEWEST_FOR_BULK - 1, FEWEST_FOR_BULK):
        decoded.clear()
        _assert_same_as_reference([encode(_text_message(number)) for number in range(count)])
        assert len(decoded) == (count if count < FEWEST_FOR_BULK else 0)


def test_the_delivery_count_has_its_own_column() -> None:
    message = _text_message(7)
    message.set_object_property("JMSXDeliveryCount", Int(3))
    [row] = encoded_to_arrow([encode(message)]).to_pylist()
    assert row["delivery_count"] == 3
    assert [name for name, _ in row["properties"]] == ["count", "color", "price"]


def test_every_kind_of_message_is_read_without_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every body kind and every value type is read by the loop, not by decode (which builds
    Message objects)."""
    messages = _every_kind()
    expected = _reference([encode(message) for message in messages])

    def refuse(data: bytes) -> Message:
        raise AssertionError("decode called on a message the fast path reads")

    monkeypatch.setattr(columnar, "decode", refuse)
    actual = encoded_to_arrow([encode(message) for message in messages])
    assert isinstance(expected, pa.Table)
    assert _exact(actual.to_pylist()) == _exact(expected.to_pylist())


# --- batches decode refuses -------------------------------------------------------------------


def _samples() -> list[bytes]:
    return [encode(message) for message in _every_kind()]


@pytest.mark.parametrize("sample", range(len(_every_kind())))
def test_every_truncation_is_refused_with_the_index_of_the_message(sample: int) -> None:
    good = encode(_text_message(0))
    data = _samples()[sample]
    for size in range(len(data)):
        with pytest.raises(MessageFormatException, match=r"^message 1: cannot decode"):
            encoded_to_arrow([good, data[:size], good])
        _assert_same_as_reference([good, data[:size]])


@settings(max_examples=400, deadline=None)
@given(
    sample=st.integers(0, len(_every_kind()) - 1),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=3),
    where=st.integers(0, 2),
)
def test_flipped_bytes_give_the_same_batch_or_the_same_refusal(
    sample: int, flips: list[tuple[int, int]], where: int
) -> None:
    data = bytearray(_samples()[sample])
    for position, value in flips:
        data[position % len(data)] = value
    batch = [encode(_text_message(number)) for number in range(2)]
    batch.insert(where, bytes(data))
    _assert_same_as_reference(batch)


def _forged(change: Callable[[bytearray], None], message: Message) -> bytes:
    data = bytearray(encode(message))
    change(data)
    return bytes(data)


def _replace(old: bytes, new: bytes) -> Callable[[bytearray], None]:
    def change(data: bytearray) -> None:
        position = data.rindex(old)
        data[position : position + len(old)] = new

    return change


def _with_properties(**values: Any) -> Message:
    message = Message()
    for name, value in values.items():
        message.set_object_property(name, value)
    return message


def _map_with(**values: Any) -> MapMessage:
    message = MapMessage()
    for name, value in values.items():
        message.set_object(name, value)
    return message


def _stream_with(*values: Any) -> StreamMessage:
    message = StreamMessage()
    for value in values:
        message.write_object(Char(value) if isinstance(value, str) and len(value) == 1 else value)
    message.set_jms_destination(Queue("q"))
    return message


def _with_text_to(name: str) -> TextMessage:
    message = TextMessage("x")
    message.set_jms_destination(Queue(name))
    return message


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (
            _forged(
                _replace(struct.pack(">q", 100), struct.pack(">q", 300)),
                _with_properties(b=Byte(100)),
            ),
            "300 is out of range for Byte",
        ),
        (
            _forged(
                _replace(struct.pack(">q", 7), struct.pack(">q", 2**31)),
                _with_properties(JMSXDeliveryCount=Int(7)),
            ),
            "out of range for Int",
        ),
        (
            _forged(_replace(struct.pack(">q", 5), struct.pack(">q", 2**40)), _text_message(5)),
            "1099511627776 is out of range for Int",
        ),
        (
            _forged(
                _replace(struct.pack(">d", 0.5), struct.pack(">d", 0.1)),
                _with_properties(f=Float(0.5)),
            ),
            "0.1 is not a 32-bit float",
        ),
        (
            _forged(
                # lengths (6, 1) of "orders" and "x" become (0, 7)
                _replace(b"\0\0\0\x06\0\0\0\x01", b"\0\0\0\0\0\0\0\x07"),
                _with_text_to("orders"),
            ),
            "JMSDestination has an empty name",
        ),
        (
            _forged(_replace(b"blue", b"bl\xffe"), _with_properties(color="blue")),
            "codec can't decode byte 0xff",
        ),
        (
            _forged(_replace(b"color", b"co or"), _with_properties(color="blue")),
            "not a selector identifier",
        ),
        (
            _forged(_replace(b"aaab", b"aaaa"), _with_properties(aa=Int(1), ab=Int(2))),
            "a property name appears twice",
        ),
        (
            # the tag of JMSXDeliveryCount becomes that of a long
            _forged(_replace(b"\x06", b"\x07"), _with_properties(JMSXDeliveryCount=Int(7))),
            "property 'JMSXDeliveryCount' must be a Int",
        ),
        (
            _forged(lambda data: data.append(0), TextMessage("x")),
            "1 unexpected bytes after the body",
        ),
        (
            _forged(
                _replace(struct.pack(">q", 100), struct.pack(">q", 300)), _map_with(b=Byte(100))
            ),
            "300 is out of range for Byte",
        ),
        (
            _forged(
                _replace(struct.pack(">d", 0.5), struct.pack(">d", 0.1)), _map_with(f=Float(0.5))
            ),
            "0.1 is not a 32-bit float",
        ),
        (
            _forged(_replace(b"blue", b"bl\xffe"), _map_with(color="blue", raw=b"\xff")),
            "codec can't decode byte 0xff",
        ),
        (
            _forged(_replace(b"aaab", b"aaaa"), _map_with(aa=Int(1), ab=Int(2))),
            "a map entry name is empty or appears twice",
        ),
        (
            _forged(_replace(struct.pack(">q", 97), struct.pack(">q", 0x10000)), _stream_with("a")),
            "65536 is out of range for Char",
        ),
        (
            _forged(
                _replace(struct.pack(">q", 100), struct.pack(">q", 300)), _stream_with(Byte(100))
            ),
            "300 is out of range for Byte",
        ),
        (
            _forged(_replace(b"\x00\x00\x00\x02", b"\x00\x00\x00\x03"), _stream_with(Int(1), "x")),
            "stream values",
        ),
        (
            # lengths (1, 1) of "a" and "b" become (0, 2)
            _forged(
                _replace(b"\0\0\0\x01\0\0\0\x01ab", b"\0\0\0\0\0\0\0\x02ab"),
                _map_with(a=Int(1), b=Int(2)),
            ),
            "a map entry name is empty or appears twice",
        ),
    ],
    ids=[
        "byte-out-of-range",
        "delivery-count-out-of-range",
        "int-out-of-range-in-a-known-shape",
        "float-not-32-bit",
        "empty-destination-name",
        "invalid-utf8",
        "invalid-property-name",
        "duplicate-property-name",
        "jmsx-property-of-the-wrong-type",
        "trailing-byte",
        "byte-out-of-range-in-a-map",
        "float-not-32-bit-in-a-map",
        "invalid-utf8-in-a-map",
        "duplicate-map-entry-name",
        "char-out-of-range-in-a-stream",
        "byte-out-of-range-in-a-stream",
        "stream-value-count-too-high",
        "empty-map-entry-name",
    ],
)
def test_a_forged_value_is_refused_with_decodes_reason(data: bytes, reason: str) -> None:
    good = encode(_text_message(0))
    with pytest.raises(MessageFormatException) as raised:
        encoded_to_arrow([good, good, data])
    assert str(raised.value).startswith("message 2: cannot decode message")
    assert reason in str(raised.value)
    _assert_same_as_reference([good, good, data])


def test_the_first_refused_message_is_named_even_when_the_loop_reads_it() -> None:
    """A message refused only by the bulk checks after the loop, before one decode refuses."""
    out_of_range = _forged(
        _replace(struct.pack(">q", 100), struct.pack(">q", 300)), _with_properties(b=Byte(100))
    )
    with pytest.raises(MessageFormatException, match=r"^message 0: .*out of range"):
        encoded_to_arrow([out_of_range, b"garbage"])


@pytest.mark.parametrize(
    ("message", "where"),
    [
        (TextMessage("ok\ud800"), "message 1: text holds"),
        (_with_properties(name="\udfff"), "message 1: properties['name'].string holds"),
        (_with_text_to("q\ud800"), "message 1: destination holds"),
        (_stream_with(Int(1), Char("\ud800")), "message 1: stream[1].string holds"),
        (_map_with(unit=Char("\udc00")), "message 1: map['unit'].string holds"),
    ],
)
def test_a_lone_surrogate_is_refused_naming_message_and_field(message: Message, where: str) -> None:
    with pytest.raises(MessageFormatException, match="lone UTF-16 surrogate") as raised:
        encoded_to_arrow([encode(_text_message(0)), encode(message)])
    assert where in str(raised.value)


def test_input_that_is_not_bytes_is_refused_with_its_index() -> None:
    with pytest.raises(MessageFormatException, match=r"^message 1: decode takes bytes, got str"):
        encoded_to_arrow([encode(_text_message(0)), "text"])  # type: ignore[list-item]


def test_bytearray_and_memoryview_are_read_as_decode_reads_them() -> None:
    data = encode(_text_message(3))
    _assert_same_as_reference([bytearray(data), memoryview(data), data])  # type: ignore[list-item]
