"""The binary codec: lossless round trips and hostile input (docs/wire-format.md)."""

from __future__ import annotations

import contextlib
import struct
import time

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
)
from jms.message.codec import (
    FORMAT_VERSION,
    decode,
    encode,
    encode_redelivered,
    header_times,
    message_id_of,
    restamped,
    with_redelivered,
)
from jms.types import Char, Double, Float, Int, Long
from tests.strategies import message_fingerprint, messages


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(messages())
def test_every_message_round_trips_exactly(message: Message) -> None:
    decoded = decode(encode(message))
    assert message_fingerprint(decoded) == message_fingerprint(message)


@given(messages())
def test_encoding_is_deterministic(message: Message) -> None:
    assert encode(message) == encode(decode(encode(message)))


@pytest.mark.parametrize(
    "message",
    [
        Message(),
        TextMessage(),
        TextMessage(""),
        BytesMessage(),
        MapMessage(),
        StreamMessage(),
        ObjectMessage(),
        ObjectMessage(0),
    ],
    ids=repr,
)
def test_empty_and_null_bodies_stay_distinct(message: Message) -> None:
    decoded = decode(encode(message))
    assert type(decoded) is type(message)
    assert message_fingerprint(decoded) == message_fingerprint(message)


def test_text_none_and_empty_are_different_encodings() -> None:
    assert decode(encode(TextMessage())).get_text() is None
    assert decode(encode(TextMessage(""))).get_text() == ""


def test_property_java_types_survive() -> None:
    message = Message()
    message.set_object_property("i", Int(1))
    message.set_object_property("l", Long(1))
    message.set_object_property("f", Float(0.1))
    message.set_object_property("d", Double(0.1))
    decoded = decode(encode(message))
    assert [type(decoded.get_object_property(n)) for n in "ilfd"] == [Int, Long, Float, Double]
    assert decoded.get_float_property("f") == Float(0.1)


def test_bytes_message_in_read_mode_encodes_its_content() -> None:
    message = BytesMessage()
    message.write_int(7)
    message.reset()
    message.read_byte()
    decoded = decode(encode(message))
    decoded.reset()
    assert decoded.read_int() == 7


def test_decoded_message_is_writable_like_a_new_one() -> None:
    message = StreamMessage()
    message.write_int(1)
    message._mark_received(None)
    decoded = decode(encode(message))
    decoded.set_int_property("again", 2)
    decoded.write_int(2)
    decoded.reset()
    assert [decoded.read_int(), decoded.read_int()] == [1, 2]


def test_correlation_id_bytes_stay_bytes() -> None:
    message = Message()
    message.set_jms_correlation_id_as_bytes(b"\xff\x00\x01")
    decoded = decode(encode(message))
    assert decoded.get_jms_correlation_id_as_bytes() == b"\xff\x00\x01"
    assert decoded._correlation_id == b"\xff\x00\x01"


def test_destinations_keep_their_kind() -> None:
    message = Message()
    message.set_jms_destination(Queue("orders"))
    message.set_jms_reply_to(TemporaryTopic("tmp-1"))
    decoded = decode(encode(message))
    assert decoded.get_jms_destination() == Queue("orders")
    assert decoded.get_jms_reply_to() == TemporaryTopic("tmp-1")


def test_stream_keeps_chars_bytes_and_nulls_in_order() -> None:
    message = StreamMessage()
    for value in (Char("x"), b"\x00\x01", None, "s", True):
        message.write_object(value)
    decoded = decode(encode(message))
    decoded.reset()
    assert [decoded.read_object() for _ in range(5)] == [Char("x"), b"\x00\x01", None, "s", True]
    assert type(decoded._values[0]) is Char


def test_format_version_and_magic_lead_the_encoding() -> None:
    assert encode(Message())[:3] == b"JM" + bytes([FORMAT_VERSION])


# -- hostile input ------------------------------------------------------------------------------


def _valid() -> bytes:
    message = MapMessage()
    message.set_string("k", "v")
    message.set_int_property("weight", 3000)
    message.set_jms_type("car")
    return encode(message)


@pytest.mark.parametrize("cut", range(len(_valid())))
def test_every_truncation_is_refused(cut: int) -> None:
    with pytest.raises(MessageFormatException):
        decode(_valid()[:cut])


def test_trailing_garbage_is_refused() -> None:
    with pytest.raises(MessageFormatException, match="unexpected bytes"):
        decode(_valid() + b"\x00")


def test_unknown_version_is_refused_with_the_version() -> None:
    data = bytearray(_valid())
    data[2] = 99
    with pytest.raises(MessageFormatException, match="version 99"):
        decode(bytes(data))


def test_forged_huge_length_does_not_allocate() -> None:
    message = TextMessage("abc")
    data = bytearray(encode(message))
    # The text length is the u32 just before "abc" at the end.
    data[-7:-3] = struct.pack(">I", 0xFFFFFFF0)
    started = time.perf_counter()
    with pytest.raises(MessageFormatException, match="needs"):
        decode(bytes(data))
    assert time.perf_counter() - started < 1.0


def test_forged_huge_count_is_refused_before_looping() -> None:
    message = StreamMessage()
    message.write_int(1)
    data = bytearray(encode(message))
    count_at = len(data) - (4 + 1 + 8 + 0)
    data[count_at : count_at + 4] = struct.pack(">I", 0x7FFFFFFF)
    with pytest.raises(MessageFormatException, match="exceeds"):
        decode(bytes(data))


def test_invalid_property_name_on_the_wire_is_refused() -> None:
    message = Message()
    message.set_int_property("abc", 1)
    data = encode(message).replace(b"abc", b"1bc")
    with pytest.raises(MessageFormatException, match="selector identifier"):
        decode(data)


def test_out_of_range_int_payload_is_refused() -> None:
    message = Message()
    message.set_int_property("x", 1)
    data = bytearray(encode(message))
    value_at = data.rindex(struct.pack(">q", 1))
    data[value_at : value_at + 8] = struct.pack(">q", 2**40)
    with pytest.raises(MessageFormatException, match="out of range for Int"):
        decode(bytes(data))


def test_non_float32_payload_for_a_float_is_refused() -> None:
    message = Message()
    message.set_float_property("x", 0.5)
    data = bytearray(encode(message))
    value_at = data.rindex(struct.pack(">d", 0.5))
    data[value_at : value_at + 8] = struct.pack(">d", 0.1)
    with pytest.raises(MessageFormatException, match="not a 32-bit float"):
        decode(bytes(data))


def test_null_property_on_the_wire_is_refused() -> None:
    message = Message()
    message.set_boolean_property("x", True)
    data = bytearray(encode(message))
    data[data.rindex(b"\x02")] = 0  # the tag of True becomes null
    with pytest.raises(MessageFormatException, match="only bodies"):
        decode(bytes(data))


def test_wrong_jmsx_type_on_the_wire_is_refused() -> None:
    message = Message()
    message.set_object_property("JMSXGroupSeq", Int(1))
    data = bytearray(encode(message))
    tag_at = data.rindex(bytes([6]))  # the Int tag becomes Long
    data[tag_at] = 7
    with pytest.raises(MessageFormatException, match="JMSXGroupSeq"):
        decode(bytes(data))


def test_decode_rejects_non_bytes() -> None:
    with pytest.raises(MessageFormatException, match="takes bytes"):
        decode("not bytes")  # type: ignore[arg-type]


def test_encode_rejects_foreign_message_classes() -> None:
    class Custom(TextMessage):
        pass

    with pytest.raises(MessageFormatException, match="Custom"):
        encode(Custom("x"))


@settings(max_examples=2000)
@given(st.binary(max_size=200))
def test_random_bytes_only_ever_raise_message_format_exception(data: bytes) -> None:
    with contextlib.suppress(MessageFormatException):
        decode(data)


@settings(max_examples=1000)
@given(messages(), st.data())
def test_mutated_encodings_never_raise_anything_else(message: Message, data: st.DataObject) -> None:
    encoded = bytearray(encode(message))
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(encoded) - 1))
        encoded[position] = data.draw(st.integers(0, 255))
    try:
        decoded = decode(bytes(encoded))
    except MessageFormatException:
        return
    # Whatever decodes must be a message the setters could have built.
    assert message_fingerprint(decode(encode(decoded))) == message_fingerprint(decoded)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages(),
    st.text(),
    st.integers(0, 2**63 - 1),
    st.integers(0, 2**63 - 1),
    st.integers(0, 2**63 - 1),
)
def test_restamped_bytes_are_the_encoding_of_the_restamped_message(
    message: Message, message_id: str, timestamp: int, expiration: int, delivery_time: int
) -> None:
    stamps = {
        "message_id": message_id,
        "timestamp": timestamp,
        "expiration": expiration,
        "delivery_time": delivery_time,
    }
    data = restamped(encode(message), **stamps)
    message.set_jms_message_id(message_id)
    message.set_jms_timestamp(timestamp)
    message.set_jms_expiration(expiration)
    message.set_jms_delivery_time(delivery_time)
    message.set_jms_redelivered(False)
    assert data == encode(message)
    assert message_fingerprint(decode(data)) == message_fingerprint(message)


@given(messages(), st.booleans())
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
def test_the_fixed_header_is_read_and_patched_without_decoding(
    message: Message, redelivered: bool
) -> None:
    data = encode(message)
    assert header_times(data) == (message.get_jms_expiration(), message.get_jms_delivery_time())
    patched = with_redelivered(data, redelivered)
    copy = decode(data)
    copy.set_jms_redelivered(redelivered)
    assert patched == encode(copy) == encode_redelivered(message, redelivered)
    assert decode(data).get_jms_redelivered() == message.get_jms_redelivered()  # data unchanged


@pytest.mark.parametrize(
    "data",
    [b"", b"JM", b"XX" + bytes(40), b"JM\x09" + bytes(40), bytes(encode(TextMessage()))[:37]],
)
def test_reading_the_fixed_header_of_what_is_not_a_message_is_refused(data: bytes) -> None:
    with pytest.raises(MessageFormatException, match="cannot read the fixed header"):
        header_times(data)
    with pytest.raises(MessageFormatException, match="cannot read the fixed header"):
        with_redelivered(data, True)


@given(messages())
def test_the_message_id_is_read_without_decoding(message: Message) -> None:
    assert message_id_of(encode(message)) == message.get_jms_message_id()


@given(messages(), st.data())
def test_a_message_id_cut_off_is_refused(message: Message, data: st.DataObject) -> None:
    message.set_jms_message_id("ID:cut-" + "x" * 40)
    encoded = encode(message)
    cut = data.draw(st.integers(min_value=0, max_value=encoded.index(b"ID:cut-") + 46))
    with pytest.raises(MessageFormatException):
        message_id_of(encoded[:cut])
