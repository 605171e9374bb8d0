"""``codec.check_encoded``: what a broker reads of bytes it keeps as they are, checked exactly as
``decode`` checks them — the same acceptance and the same error for any input — while the shape
most messages have is checked in one pass without decoding."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jms.errors import MessageFormatException
from jms.message import (
    BytesMessage,
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
    codec,
)
from jms.message.codec import (
    EncodedFacts,
    check_and_restamp,
    check_encoded,
    decode,
    encode,
    published_times,
    restamped,
)
from jms.types import Byte, Double, Float, Int, Long, Short
from tests.strategies import (
    java_chars,
    java_strings,
    messages,
    property_names,
    property_values_of,
)

_ascii = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
# Strings in any language, lone surrogates included (Java strings may hold them), or ASCII.
_strings = _ascii | java_strings
# What a Map or Stream body holds: any property value, a char, a byte array, null.
_body_values = st.one_of(
    property_values_of(_strings), java_chars, st.binary(max_size=20), st.none()
)
_ascii_names = st.from_regex(r"[a-zA-Z_$][a-zA-Z0-9_$]{0,8}", fullmatch=True).filter(
    lambda name: (
        name.upper() not in {"NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN"}
        and name.upper() not in {"LIKE", "IN", "IS", "ESCAPE"}
        and not name.startswith("JMS")
    )
)


@st.composite
def _common_messages(draw: st.DrawFn) -> Message:
    """Messages of the shape ``check_encoded`` reads in one pass (and some just outside it)."""
    kind = draw(st.sampled_from(["message", "text", "bytes", "map", "stream", "object"]))
    message: Any
    if kind == "message":
        message = Message()
    elif kind == "text":
        message = TextMessage(draw(st.none() | _strings))
    elif kind == "bytes":
        message = BytesMessage()
        message.write_bytes(draw(st.binary(max_size=64)))
    elif kind == "map":
        message = MapMessage()
        for name, value in draw(
            st.dictionaries(_strings.filter(bool), _body_values, max_size=5)
        ).items():
            message.set_object(name, value)
    elif kind == "stream":
        message = StreamMessage()
        for value in draw(st.lists(_body_values, max_size=5)):
            message.write_object(value)
    else:
        message = ObjectMessage(draw(st.none() | st.integers() | _strings))
    destination = draw(st.sampled_from([Queue, Topic]))(draw(_strings.filter(bool)))
    message.set_jms_destination(destination)
    if draw(st.booleans()):  # request/reply: a reply-to of any kind
        kind = draw(st.sampled_from([Queue, Topic, TemporaryQueue, TemporaryTopic]))
        message.set_jms_reply_to(kind(draw(_strings.filter(bool))))
    message.set_jms_message_id(draw(st.none() | _strings.map(lambda text: "ID:" + text)))
    correlation = draw(st.none() | _strings | st.binary(max_size=24))
    if isinstance(correlation, bytes):
        message.set_jms_correlation_id_as_bytes(correlation)
    else:
        message.set_jms_correlation_id(correlation)
    message.set_jms_type(draw(st.none() | _strings))
    message.set_jms_delivery_mode(draw(st.sampled_from([1, 2])))
    message.set_jms_priority(draw(st.integers(0, 9)))
    message.set_jms_timestamp(draw(st.integers(0, 2**63 - 1)))
    # Most messages never expire and are due at once: the restamp's common case.
    message.set_jms_expiration(draw(st.just(0) | st.integers(0, 2**63 - 1)))
    message.set_jms_delivery_time(draw(st.just(0) | st.integers(0, 2**63 - 1)))
    values = property_values_of(_strings)
    names = _ascii_names | property_names
    for name, value in draw(st.dictionaries(names, values, max_size=6)).items():
        message.set_object_property(name, value)
    if draw(st.booleans()):  # message groups: JMSX properties, checked for their types
        message.set_string_property("JMSXGroupID", draw(_strings))
        message.set_int_property("JMSXGroupSeq", Int(draw(st.integers(1, 2**31 - 1))))
    return message


def _outcome(check: Any, data: bytes) -> tuple[str, object]:
    try:
        return "ok", check(data)
    except MessageFormatException as error:
        return "refused", str(error)


def _decoded_facts(data: bytes) -> EncodedFacts:
    message = decode(data)
    return EncodedFacts(
        message.get_jms_destination(),
        message.get_jms_delivery_mode(),
        message.get_jms_expiration(),
        message.get_jms_delivery_time(),
    )


def _damaged(encoded: bytes, data: st.DataObject) -> bytes:
    """``encoded`` with up to three bytes overwritten, and maybe cut short or run on."""
    damaged = bytearray(encoded)
    for _ in range(data.draw(st.integers(0, 3))):
        position = data.draw(st.integers(0, len(damaged) - 1))
        damaged[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.sampled_from([None, None, None, -1, 1]))
    if cut == -1:
        del damaged[-data.draw(st.integers(1, len(damaged))) :]
    elif cut == 1:
        damaged += data.draw(st.binary(min_size=1, max_size=8))
    return bytes(damaged)


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_common_messages(), messages()), st.data())
def test_check_encoded_accepts_and_refuses_what_decode_does_with_the_same_reason(
    message: Message, data: st.DataObject
) -> None:
    encoded = _damaged(encode(message), data)
    assert _outcome(check_encoded, encoded) == _outcome(_decoded_facts, encoded)


_NOW = 1_700_000_000_000


def _checked_then_restamped(data: bytes, now: int) -> tuple[bytes, Destination | None, int, int]:
    facts = check_encoded(data)
    expiration, delivery_time = published_times(now, facts.expiration, facts.delivery_time)
    stamped = restamped(
        data,
        message_id="ID:broker-s7:12",
        timestamp=now,
        expiration=expiration,
        delivery_time=delivery_time,
    )
    return stamped, facts.destination, facts.delivery_mode, delivery_time


@settings(max_examples=1000, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_common_messages(), messages()), st.data())
def test_check_and_restamp_is_check_encoded_then_restamped_in_one_pass(
    message: Message, data: st.DataObject
) -> None:
    encoded = _damaged(encode(message), data)
    # Now before, at and after the message's own times, so that each is kept or moved.
    near = [
        time + step
        for time in (message.get_jms_expiration(), message.get_jms_delivery_time())
        for step in (-1, 0, 1)
        if 0 <= time + step < 2**62
    ]
    now = data.draw(st.sampled_from([_NOW, *near]), label="now")

    def fused(data: bytes) -> tuple[bytes, Destination | None, int, int]:
        return check_and_restamp(data, "ID:broker-s7:12", now)

    outcome = _outcome(fused, encoded)
    assert outcome == _outcome(lambda data: _checked_then_restamped(data, now), encoded)
    if outcome[0] == "ok":
        stamped, destination, delivery_mode, delivery_time = outcome[1]  # type: ignore[misc]
        restored = decode(stamped)
        assert restored.get_jms_message_id() == "ID:broker-s7:12"
        assert restored.get_jms_timestamp() == now
        assert not restored.get_jms_redelivered()
        assert (restored.get_jms_destination(), restored.get_jms_delivery_mode()) == (
            destination,
            delivery_mode,
        )
        assert restored.get_jms_delivery_time() == delivery_time >= now
        expiration = restored.get_jms_expiration()
        assert expiration == 0 or expiration > now


def test_a_restamped_message_is_not_due_or_expired_before_it_is_published() -> None:
    assert published_times(100, 0, 0) == (0, 100)  # never expires, due at once
    assert published_times(100, 0, 250) == (0, 250)  # due later: kept
    assert published_times(100, 50, 20) == (101, 100)  # expired already: not before now
    assert published_times(100, 300, 20) == (300, 100)


def _without_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(data: object) -> EncodedFacts:
        raise AssertionError("check_encoded decoded a message of the common shape")

    monkeypatch.setattr(codec, "_facts_by_decoding", refuse)


def test_the_common_shape_is_checked_without_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    message = TextMessage("x" * 1024)
    message.set_jms_destination(Queue("orders"))
    message.set_jms_message_id("ID:a-1")
    message.set_jms_correlation_id("c")
    message.set_jms_type("car")
    message.set_jms_reply_to(TemporaryQueue("ID:client-1:replies"))
    for name, value in {
        "n": Long(7),
        "region": "eu",
        "urgent": True,
        "b": Byte(-1),
        "s": Short(300),
        "i": Int(-5),
        "f": Float(1.5),
        "d": Double(0.1),
    }.items():
        message.set_object_property(name, value)
    encoded = encode(message)
    _without_decoding(monkeypatch)
    assert check_encoded(encoded) == EncodedFacts(Queue("orders"), 2, 0, 0)
    stamped, destination, delivery_mode, delivery_time = check_and_restamp(encoded, "ID:b-1", 5)
    assert (destination, delivery_mode, delivery_time) == (Queue("orders"), 2, 5)
    assert decode(stamped).get_jms_message_id() == "ID:b-1"
    data = BytesMessage()
    data.write_bytes(b"\x00\xff" * 40)
    data.set_jms_destination(Topic("prices"))
    assert check_encoded(encode(data)).destination == Topic("prices")


def test_strings_in_any_language_are_checked_without_decoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Text beyond ASCII -- in a body, a destination, a property name or value, a lone
    surrogate a Java string may hold -- stays in the one-pass check: decoding each such
    message cost three times as much."""
    message = TextMessage("Grüße aus Köln, 東京から " * 20)
    message.set_jms_destination(Queue("заказы"))
    message.set_jms_correlation_id("corr-\ud800")
    message.set_jms_type("typ-é")
    message.set_string_property("straße", "Bahnhofstraße 1")
    message.set_string_property("city", "Zürich")
    message.set_long_property("n", Long(7))
    message.set_string_property("JMSXGroupID", "Gruppe-ü")
    message.set_int_property("JMSXGroupSeq", Int(2))
    encoded = encode(message)
    _without_decoding(monkeypatch)
    assert check_encoded(encoded) == EncodedFacts(Queue("заказы"), 2, 0, 0)
    stamped, destination, _, _ = check_and_restamp(encoded, "ID:b-é-1", 5)
    restored = decode(stamped)
    assert destination == Queue("заказы")
    assert restored.get_text() == message.get_text()  # type: ignore[attr-defined]
    assert restored.get_jms_correlation_id() == "corr-\ud800"
    assert restored.get_string_property("straße") == "Bahnhofstraße 1"
    assert restored.get_jms_message_id() == "ID:b-é-1"


def _refused_alike(data: bytes, check: Callable[[bytes], object]) -> str:
    """``decode``'s refusal of ``data``, which ``check`` must give word for word."""
    with pytest.raises(MessageFormatException) as refused:
        decode(data)
    with pytest.raises(MessageFormatException) as checked:
        check(data)
    assert str(checked.value) == str(refused.value)
    return str(checked.value)


def _restamped(data: bytes) -> object:
    return check_and_restamp(data, "ID:x", 5)


def _length_moved(encoded: bytes, old: tuple[int, int], new: tuple[int, int]) -> bytes:
    """``encoded`` with the 4-byte big-endian lengths ``old`` of two strings that follow each
    other changed to ``new`` (same sum): the bytes of the two are cut elsewhere."""
    before, after = struct.pack(">II", *old), struct.pack(">II", *new)
    assert encoded.count(before) == 1
    return encoded.replace(before, after)


def test_a_character_cut_between_two_strings_gets_decodes_refusal() -> None:
    """Two strings whose bytes, joined, are valid UTF-8 but which cut a character in two: each
    is checked on its own, as ``decode`` checks it."""
    message = TextMessage("text")
    message.set_jms_destination(Queue("q"))
    message.set_jms_correlation_id("aé")  # 3 bytes: a, then é as 0xC3 0xA9
    message.set_jms_type("bc")
    forged = _length_moved(encode(message), (3, 2), (2, 3))  # "a\xc3" and "\xa9bc"
    assert "not valid UTF-8" in _refused_alike(forged, check_encoded)

    message = TextMessage("text")
    message.set_jms_destination(Queue("q"))
    message.set_string_property("s", "aé")
    message.set_string_property("t", "bc")
    forged = _length_moved(encode(message), (3, 2), (2, 3))
    assert "can't decode byte 0xc3" in _refused_alike(forged, _restamped)


def test_a_correlation_id_as_bytes_is_checked_without_decoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As IBM MQ and Artemis applications set it: 24 bytes, any of them."""
    message = TextMessage("reply")
    message.set_jms_destination(Queue("replies"))
    message.set_jms_correlation_id_as_bytes(bytes(range(232, 256)))
    message.set_int_property("n", Int(1))
    encoded = encode(message)
    _without_decoding(monkeypatch)
    assert check_encoded(encoded).destination == Queue("replies")
    stamped, _, _, _ = check_and_restamp(encoded, "ID:m-1", 5)
    assert decode(stamped).get_jms_correlation_id_as_bytes() == bytes(range(232, 256))


def test_forged_correlation_id_bytes_get_decodes_refusal() -> None:
    """Their length beyond the bytes there, or short of them (the rest then read as what
    follows)."""
    message = TextMessage("t")
    message.set_jms_destination(Queue("q"))
    message.set_jms_correlation_id_as_bytes(b"\x01\x02\x03")
    encoded = encode(message)
    at = encoded.index(struct.pack(">I", 3) + b"\x01\x02\x03")
    for length in (2**20, 2, 4):
        forged = encoded[:at] + struct.pack(">I", length) + encoded[at + 4 :]
        for check in (check_encoded, _restamped):
            _refused_alike(forged, check)


def test_a_forged_reply_to_gets_decodes_refusal() -> None:
    """A JMSReplyTo with an empty name, or of a kind no destination has."""
    message = TextMessage("text")
    message.set_jms_destination(Queue("q"))
    message.set_jms_reply_to(Topic("r"))
    encoded = encode(message)
    forged = _length_moved(encoded, (1, 1), (2, 0))  # the names "q" and "r" become "qr" and ""
    for check in (check_encoded, _restamped):
        assert "JMSReplyTo has an empty name" in _refused_alike(forged, check)
    kind_at = struct.calcsize(">2sBBBBBBB")  # after the JMSDestination's kind
    assert encoded[kind_at] == 1  # a Topic
    forged = encoded[:kind_at] + b"\x07" + encoded[kind_at + 1 :]
    assert "unknown destination kind 7 for JMSReplyTo" in _refused_alike(forged, _restamped)


def _int_property_message() -> bytes:
    message = TextMessage("t")
    message.set_jms_destination(Queue("q"))
    message.set_int_property("i", Int(1))
    return encode(message)


def test_a_forged_value_in_the_common_shape_gets_decodes_refusal() -> None:
    """Bytes in the common shape whose values no setter could have made: an int property out of
    range, a float that is not 32-bit, a string that is not UTF-8."""
    encoded = _int_property_message()
    at = encoded.rindex(struct.pack(">q", 1))
    forged = encoded[:at] + struct.pack(">q", 2**40) + encoded[at + 8 :]
    with pytest.raises(MessageFormatException, match="1099511627776 is out of range for Int"):
        check_encoded(forged)

    message = TextMessage("t")
    message.set_jms_destination(Queue("q"))
    message.set_float_property("f", Float(1.5))
    encoded = encode(message)
    at = encoded.rindex(struct.pack(">d", 1.5))
    forged = encoded[:at] + struct.pack(">d", 0.1) + encoded[at + 8 :]
    with pytest.raises(MessageFormatException, match="is not a 32-bit float"):
        check_encoded(forged)

    message = TextMessage("t")
    message.set_jms_destination(Queue("q"))
    message.set_string_property("s", "ab")
    forged = encode(message).replace(b"ab", b"a\xff")
    with pytest.raises(
        MessageFormatException, match="property values: 'utf-8' codec can't decode byte 0xff"
    ):
        check_encoded(forged)
    with pytest.raises(MessageFormatException, match="decode takes bytes, got str"):
        check_encoded("not bytes")  # type: ignore[arg-type]


def test_a_jmsx_property_of_another_type_gets_decodes_refusal() -> None:
    """A JMSX property holds the type the spec gives it: bytes naming JMSXGroupSeq with a long
    value are refused as ``decode`` refuses them, in one pass or not."""
    message = TextMessage("t")
    message.set_jms_destination(Queue("q"))
    message.set_long_property("AMSXGroupSeq", Long(3))
    forged = encode(message).replace(b"AMSXGroupSeq", b"JMSXGroupSeq")
    assert "property 'JMSXGroupSeq' must be a Int" in _refused_alike(forged, _restamped)


def test_map_stream_and_object_bodies_are_checked_without_decoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """MapMessages and StreamMessages -- Strings in any language, byte arrays, chars, nulls and
    numbers among their values -- and ObjectMessages, with an object or none, stay in the one
    pass (decoding one cost two to five times as much)."""
    entries = MapMessage()
    entries.set_jms_destination(Queue("trades"))
    entries.set_string("symbol", "ACME")
    entries.set_string("Straße", "Köln")
    entries.set_double("price", 10.5)
    entries.set_long("quantity", 300)
    entries.set_bytes("raw", b"\x00\xff\xc3")
    entries.set_char("side", "B")
    entries.set_object("nothing", None)
    entries.set_int_property("n", Int(1))
    values = StreamMessage()
    values.set_jms_destination(Topic("ticks"))
    for value in ("ACME", b"\xff", None, Float(1.5), Short(-2), True, "東京"):
        values.write_object(value)
    serialized = ObjectMessage({"order": [1, 2]})
    serialized.set_jms_destination(Queue("objects"))
    empty = ObjectMessage()
    empty.set_jms_destination(Queue("objects"))
    _without_decoding(monkeypatch)
    for message, destination in (
        (entries, Queue("trades")),
        (values, Topic("ticks")),
        (serialized, Queue("objects")),
        (empty, Queue("objects")),
    ):
        encoded = encode(message)
        assert check_encoded(encoded).destination == destination
        stamped, _, _, _ = check_and_restamp(encoded, "ID:m-1", 5)
        assert encode(decode(stamped)) == stamped


def test_an_object_body_decode_refuses_is_refused_alike() -> None:
    """A presence flag other than 0 or 1, a length beyond the bytes, bytes after the object."""
    message = ObjectMessage(7)
    message.set_jms_destination(Queue("q"))
    encoded = encode(message)
    at = len(encoded) - len(message._serialized) - 5  # the presence flag
    assert encoded[at] == 1
    flagged = encoded[:at] + b"\x02" + encoded[at + 1 :]
    too_long = encoded[: at + 1] + struct.pack(">I", 10**6) + encoded[at + 5 :]
    for forged, reason in (
        (flagged, "presence flag of object body is 2, not 0 or 1"),
        (too_long, "object body"),
        (encoded + b"\x00", "1 unexpected bytes after the body"),
        (encoded[:at] + b"\x00\x00", "1 unexpected bytes after the body"),  # none, then a byte
    ):
        for check in (check_encoded, _restamped):
            assert reason in _refused_alike(forged, check)


def _map_of(names: list[str]) -> bytes:
    message = MapMessage()
    message.set_jms_destination(Queue("q"))
    for name in names:
        message.set_string(name, "v")
    return encode(message)


def test_a_map_body_decode_refuses_is_refused_alike() -> None:
    """Map entry names that are empty or appear twice, a count beyond the bytes, a String value
    that is not UTF-8: each refused in ``decode``'s words."""
    forged = [
        _map_of(["s"]).replace(b"\x01v", b"\x01\xff"),  # the String "v" made 0xFF
        _map_of(["ab", "ac"]).replace(b"ac", b"ab"),  # the same name twice
        _map_of(["a"]).replace(  # an empty name
            b"\x00\x00\x00\x01\x00\x00\x00\x01a", b"\x00\x00\x00\x01\x00\x00\x00\x00"
        ),
        _map_of(["a"]).replace(  # more entries than bytes
            b"\x00\x00\x00\x01\x00\x00\x00\x01a", b"\x7f\x00\x00\x01\x00\x00\x00\x01a"
        ),
    ]
    for data in forged:
        _refused_alike(data, check_encoded)
