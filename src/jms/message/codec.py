"""The binary codec: a message to bytes and back, losslessly, for the store and the wire.

``encode(message)`` writes every header, every property with its exact Java type, and the body
of any of the six message classes (including empty and null bodies) in the compact, versioned
format described in docs/wire-format.md. ``decode(data)`` reads it back and is the boundary where
untrusted bytes enter: any truncated, garbage or hostile input raises ``MessageFormatException``
(never another exception, never a hang), every length is checked against the bytes actually
present before anything is allocated, and every value is validated as the setters would. The
codec never unpickles: an ObjectMessage body travels as its serialised bytes and is only
deserialised, under the allow-list, when the application asks for it.
"""

from __future__ import annotations

import functools
import itertools
import math
import struct
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, NamedTuple

from jms.errors import MessageFormatException
from jms.message.bytes import BytesMessage
from jms.message.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from jms.message.map import MapMessage
from jms.message.message import JMSX_PROPERTY_TYPES, Message, property_name_error
from jms.message.object import ObjectMessage
from jms.message.stream import StreamMessage
from jms.message.text import TextMessage
from jms.types import (
    BYTE_RANGE,
    INT_RANGE,
    LONG_RANGE,
    SHORT_RANGE,
    Byte,
    Char,
    Double,
    Float,
    Int,
    Long,
    Short,
    round_to_float32,
)

__all__ = [
    "FORMAT_VERSION",
    "HEADER_TIMES_AT",
    "EncodedFacts",
    "check_and_restamp",
    "check_encoded",
    "check_fixed_header",
    "decode",
    "encode",
    "encode_redelivered",
    "header_times",
    "message_id_of",
    "published_times",
    "restamped",
    "with_redelivered",
]

FORMAT_VERSION: Final = 1
_MAGIC: Final = b"JM"
_MAGIC_AND_VERSION: Final = _MAGIC + bytes((FORMAT_VERSION,))

# magic, version, body type, delivery mode, priority, redelivered, optional-field bits,
# destination kind, reply-to kind, timestamp, expiration, delivery time, property count.
_FIXED: Final = struct.Struct(">2sBBBBBBBBqqqI")
_U32: Final = struct.Struct(">I")
# Where the fixed header keeps the fields a broker reads or patches without decoding a message.
_REDELIVERED_AT: Final = struct.calcsize(">2sBBBB")
_TIMES_AT: Final = struct.calcsize(">2sBBBBBBBBq")  # JMSExpiration, then JMSDeliveryTime
#: The byte offset of JMSExpiration in an encoding, JMSDeliveryTime 8 bytes after it (both signed
#: 64-bit big-endian): where a store can filter by them without decoding.
HEADER_TIMES_AT: Final = _TIMES_AT
_TIMES: Final = struct.Struct(">qq")
# The fixed header's bytes around its three times: the small fields before them, the property
# count after them. Messages that agree on these bytes are read and restamped alike (``_Shape``).
_SMALL_FIELDS_END: Final = struct.calcsize(">2sBBBBBBBB")
_PROPERTY_COUNT_AT: Final = _FIXED.size - 4
_STAMPED_TIMES: Final = struct.Struct(">qqq")  # JMSTimestamp, JMSExpiration, JMSDeliveryTime

# Optional fields present. The String ones travel, in this order, at the head of the one string
# column that also carries the property names (docs/wire-format.md).
_HAS_MESSAGE_ID: Final = 0x01
_HAS_CORRELATION_STR: Final = 0x02
_HAS_TYPE: Final = 0x04
_HAS_DESTINATION: Final = 0x08
_HAS_REPLY_TO: Final = 0x10
_HAS_TEXT: Final = 0x20
_HAS_CORRELATION_BYTES: Final = 0x40
_KNOWN_BITS: Final = 0x7F
_STRING_BITS: Final = (
    _HAS_MESSAGE_ID
    | _HAS_CORRELATION_STR
    | _HAS_TYPE
    | _HAS_DESTINATION
    | _HAS_REPLY_TO
    | _HAS_TEXT
)
_NO_DESTINATION: Final = 255

_BODY_CLASSES: Final[tuple[type[Message], ...]] = (
    Message,
    TextMessage,
    BytesMessage,
    MapMessage,
    StreamMessage,
    ObjectMessage,
)
_BODY_TAG: Final = {cls: tag for tag, cls in enumerate(_BODY_CLASSES)}
_BYTES_BODY_TAG: Final = _BODY_TAG[BytesMessage]
_MAP_BODY_TAG: Final = _BODY_TAG[MapMessage]
_STREAM_BODY_TAG: Final = _BODY_TAG[StreamMessage]
_OBJECT_BODY_TAG: Final = _BODY_TAG[ObjectMessage]

_DESTINATION_CLASSES: Final[tuple[type[Destination], ...]] = (
    Queue,
    Topic,
    TemporaryQueue,
    TemporaryTopic,
)
_DESTINATION_TAG: Final = {cls: tag for tag, cls in enumerate(_DESTINATION_CLASSES)}

# Typed values travel in columns (docs/wire-format.md): one tag byte per value, then every
# integer payload as int64, every floating payload as float64, every string/byte[] length as
# uint32, then the string/byte[] payloads back to back. The layout lets struct and bytes do the
# work in C rather than a Python loop doing several small reads per value.
_NULL, _FALSE, _TRUE, _BYTE, _SHORT, _CHAR, _INT, _LONG, _FLOAT, _DOUBLE, _STRING, _BYTES = range(
    12
)
_TAG_COUNT: Final = 12
_INTEGER_TAG: Final[dict[type, int]] = {Byte: _BYTE, Short: _SHORT, Int: _INT, Long: _LONG}
_FLOATING_TAG: Final[dict[type, int]] = {Float: _FLOAT, Double: _DOUBLE}
_INTEGER_TAGS: Final = (_BYTE, _SHORT, _CHAR, _INT, _LONG)
_INTEGER_TYPES: Final[dict[int, tuple[type, int, int]]] = {
    _BYTE: (Byte, *BYTE_RANGE),
    _SHORT: (Short, *SHORT_RANGE),
    _CHAR: (Char, 0, 0xFFFF),
    _INT: (Int, *INT_RANGE),
    _LONG: (Long, *LONG_RANGE),
}


def _encode_bytes(out: bytearray, data: bytes) -> None:
    out += _U32.pack(len(data))
    out += data


def _encode_strings(out: bytearray, strings: Iterable[str]) -> None:
    encoded = [text.encode("utf-8", "surrogatepass") for text in strings]
    out += struct.pack(f">{len(encoded)}I", *map(len, encoded))
    out += b"".join(encoded)


def _encode_values(out: bytearray, values: Iterable[Any]) -> None:
    """Append the column encoding of ``values`` (the caller has written their count)."""
    tags = bytearray()
    integers: list[int] = []
    floats: list[float] = []
    blobs: list[bytes] = []
    for value in values:
        kind = type(value)
        if kind is str:
            tags.append(_STRING)
            blobs.append(value.encode("utf-8", "surrogatepass"))
        elif kind in _INTEGER_TAG:
            tags.append(_INTEGER_TAG[kind])
            integers.append(value)
        elif kind is bool:
            tags.append(_TRUE if value else _FALSE)
        elif kind in _FLOATING_TAG:
            tags.append(_FLOATING_TAG[kind])
            floats.append(value)
        elif value is None:
            tags.append(_NULL)
        elif kind is bytes:
            tags.append(_BYTES)
            blobs.append(value)
        elif kind is Char:
            tags.append(_CHAR)
            integers.append(ord(value))
        else:
            raise MessageFormatException(f"cannot encode a {kind.__name__} value {value!r:.80}")
    out += tags
    out += struct.pack(
        f">{len(integers)}q{len(floats)}d{len(blobs)}I", *integers, *floats, *map(len, blobs)
    )
    out += b"".join(blobs)


def encode(message: Message) -> bytes:
    """The message as bytes in the current format version (see docs/wire-format.md)."""
    body_tag = _BODY_TAG.get(type(message))
    if body_tag is None:
        raise MessageFormatException(
            f"cannot encode a {type(message).__name__}: not one of the six JMS message classes"
        )
    strings: list[str] = []
    bits = 0
    if message._message_id is not None:
        bits |= _HAS_MESSAGE_ID
        strings.append(message._message_id)
    correlation = message._correlation_id
    if type(correlation) is str:
        bits |= _HAS_CORRELATION_STR
        strings.append(correlation)
    elif correlation is not None:
        bits |= _HAS_CORRELATION_BYTES
    if message._type is not None:
        bits |= _HAS_TYPE
        strings.append(message._type)
    destination = message._destination
    if destination is not None:
        bits |= _HAS_DESTINATION
        strings.append(destination.name)
    reply_to = message._reply_to
    if reply_to is not None:
        bits |= _HAS_REPLY_TO
        strings.append(reply_to.name)
    if body_tag == 1 and message._text is not None:  # type: ignore[attr-defined]
        bits |= _HAS_TEXT
        strings.append(message._text)  # type: ignore[attr-defined]
    properties = message._properties
    strings.extend(properties)
    out = bytearray(
        _FIXED.pack(
            _MAGIC,
            FORMAT_VERSION,
            body_tag,
            message._delivery_mode,
            message._priority,
            message._redelivered,
            bits,
            _NO_DESTINATION if destination is None else _DESTINATION_TAG[type(destination)],
            _NO_DESTINATION if reply_to is None else _DESTINATION_TAG[type(reply_to)],
            message._timestamp,
            message._expiration,
            message._delivery_time,
            len(properties),
        )
    )
    _encode_strings(out, strings)
    if bits & _HAS_CORRELATION_BYTES:
        _encode_bytes(out, correlation)  # type: ignore[arg-type]
    if properties:
        _encode_values(out, properties.values())
    _BODY_ENCODERS[body_tag](out, message)
    return bytes(out)


def restamped(
    data: bytes, *, message_id: str, timestamp: int, expiration: int, delivery_time: int
) -> bytes:
    """The encoding of the message ``data`` encodes (``encode``'s output, trusted) with these
    JMSMessageID, JMSTimestamp, JMSExpiration and JMSDeliveryTime and JMSRedelivered false, made
    without decoding the rest: ``encode`` of the message restamped gives the same bytes."""
    shape = _shape(_shape_key(data))
    lengths = shape.lengths.unpack_from(data, _FIXED.size)
    return _stamped(data, shape, lengths, message_id, timestamp, expiration, delivery_time)


def _stamped(
    data: bytes,
    shape: _Shape,
    lengths: tuple[int, ...],
    message_id: str,
    timestamp: int,
    expiration: int,
    delivery_time: int,
) -> bytes:
    """``restamped``, given the ``shape`` and string ``lengths`` of ``data``."""
    rest = shape.strings_at
    if shape.has_message_id:
        rest += lengths[0]
        lengths = lengths[1:]
    new_id = message_id.encode("utf-8", "surrogatepass")
    return b"".join(
        (
            shape.stamped_fields,
            _STAMPED_TIMES.pack(timestamp, expiration, delivery_time),
            shape.property_count_bytes,
            shape.stamped_lengths.pack(len(new_id), *lengths),
            new_id,
            data[rest:],
        )
    )


def encode_redelivered(message: Message, redelivered: bool) -> bytes:
    """``encode(message)`` with JMSRedelivered set to ``redelivered`` (``message`` unchanged)."""
    return with_redelivered(encode(message), redelivered)


def check_fixed_header(data: bytes) -> None:
    """``MessageFormatException`` unless ``data`` starts with a fixed header of this format
    version (what a reader that passes encodings on can check cheaply; ``decode`` checks all)."""
    if len(data) < _FIXED.size or not data.startswith(_MAGIC_AND_VERSION):
        raise MessageFormatException(
            f"cannot read the fixed header of {len(data)} bytes starting {bytes(data[:3])!r}: "
            f"not a jms message of format version {FORMAT_VERSION}"
        )


def header_times(data: bytes) -> tuple[int, int]:
    """``(JMSExpiration, JMSDeliveryTime)`` of an encoded message, read from its fixed header
    without decoding the rest."""
    check_fixed_header(data)
    return _TIMES.unpack_from(data, _TIMES_AT)  # type: ignore[return-value]


def message_id_of(data: bytes) -> str | None:
    """The JMSMessageID of an encoded message (None when it has none), read without decoding the
    rest; ``MessageFormatException`` when the bytes cannot hold it."""
    check_fixed_header(data)
    fields = _FIXED.unpack_from(data)
    bits, property_count = fields[6], fields[12]
    if not bits & _HAS_MESSAGE_ID:
        return None
    start = _FIXED.size + 4 * ((bits & _STRING_BITS).bit_count() + property_count)
    if len(data) < start:
        raise MessageFormatException(
            f"an encoding of {len(data)} bytes ends inside its string lengths ({start} bytes)"
        )
    (length,) = _U32.unpack_from(data, _FIXED.size)
    if len(data) < start + length:
        raise MessageFormatException(
            f"an encoding of {len(data)} bytes ends inside its JMSMessageID ({length} bytes from "
            f"byte {start})"
        )
    try:
        return data[start : start + length].decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as error:
        raise MessageFormatException(f"the JMSMessageID is not UTF-8: {error}") from None


def with_redelivered(data: bytes, redelivered: bool) -> bytes:
    """The encoded message ``data`` with its JMSRedelivered flag set to ``redelivered`` (``data``
    itself when it already says so), without decoding the rest."""
    check_fixed_header(data)
    flag = 1 if redelivered else 0
    if data[_REDELIVERED_AT] == flag:
        return data
    return b"".join(
        (data[:_REDELIVERED_AT], b"\x01" if flag else b"\x00", data[_REDELIVERED_AT + 1 :])
    )


def _encode_no_body(out: bytearray, message: Any) -> None:
    return None


def _encode_bytes_body(out: bytearray, message: Any) -> None:
    _encode_bytes(out, message._content())


def _encode_map(out: bytearray, message: Any) -> None:
    entries = message._map
    out += _U32.pack(len(entries))
    if entries:
        _encode_strings(out, entries)
        _encode_values(out, entries.values())


def _encode_stream(out: bytearray, message: Any) -> None:
    out += _U32.pack(len(message._values))
    _encode_values(out, message._values)


def _encode_object(out: bytearray, message: Any) -> None:
    if message._serialized is None:
        out.append(0)
    else:
        out.append(1)
        _encode_bytes(out, message._serialized)


_BODY_ENCODERS: Final = (
    _encode_no_body,
    _encode_no_body,  # a TextMessage's text travels in the string column
    _encode_bytes_body,
    _encode_map,
    _encode_stream,
    _encode_object,
)


# ---------------------------------------------------------------------------------------------
# Decoding


class _Reader:
    """A cursor over the input that refuses to read past its end."""

    __slots__ = ("data", "end", "offset")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0
        self.end = len(data)

    def fail(self, what: str) -> MessageFormatException:
        return MessageFormatException(
            f"cannot decode message: {what} at byte {self.offset} of {self.end}"
        )

    def take(self, count: int, what: str) -> bytes:
        start = self.offset
        if count > self.end - start:
            raise self.fail(f"{what} needs {count} bytes but only {self.end - start} remain")
        self.offset = start + count
        return self.data[start : start + count]

    def unpack(self, fmt: struct.Struct | str, what: str) -> tuple[Any, ...]:
        size = struct.calcsize(fmt) if isinstance(fmt, str) else fmt.size
        if size > self.end - self.offset:
            raise self.fail(f"truncated {what} ({size} bytes needed)")
        values = (
            struct.unpack_from(fmt, self.data, self.offset)
            if isinstance(fmt, str)
            else (fmt.unpack_from(self.data, self.offset))
        )
        self.offset += size
        return values

    def u8(self, what: str) -> int:
        if self.offset >= self.end:
            raise self.fail(f"truncated {what}")
        value = self.data[self.offset]
        self.offset += 1
        return value

    def present(self, what: str) -> bool:
        flag = self.u8(f"presence of {what}")
        if flag > 1:
            raise self.fail(f"presence flag of {what} is {flag}, not 0 or 1")
        return flag == 1

    def count(self, what: str) -> int:
        (value,) = self.unpack(_U32, what)
        # Every entry takes at least one byte, so a count beyond the remaining bytes is forged.
        if value > self.end - self.offset:
            raise self.fail(f"{what} of {value} exceeds the {self.end - self.offset} bytes left")
        return value

    def blob(self, what: str) -> bytes:
        (length,) = self.unpack(_U32, f"length of {what}")
        return self.take(length, what)

    def utf8(self, raw: bytes, what: str) -> str:
        try:
            return raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as error:
            raise self.fail(f"{what} is not valid UTF-8 ({error.reason})") from None

    def destination(self, kind: int, name: str, what: str) -> Destination:
        if kind >= len(_DESTINATION_CLASSES):
            raise self.fail(f"unknown destination kind {kind} for {what}")
        if not name:
            raise self.fail(f"{what} has an empty name")
        return _DESTINATION_CLASSES[kind](name)

    def strings(self, count: int, what: str) -> list[str]:
        lengths = self.unpack(f">{count}I", f"lengths of {what}")
        blob = self.take(sum(lengths), what)
        bounds = itertools.pairwise(itertools.accumulate(lengths, initial=0))
        if blob.isascii():
            # ASCII: byte offsets are character offsets, so decode once and slice the str.
            text = blob.decode("ascii")
            return [text[start:end] for start, end in bounds]
        return [self.utf8(blob[start:end], what) for start, end in bounds]

    def values(self, count: int, what: str, *, body_types: bool) -> list[Any]:
        """``count`` typed values; null, char and byte[] only where ``body_types`` allows them."""
        plan = _values_plan(self.take(count, f"type tags of {what}"), body_types)
        if isinstance(plan, str):
            raise self.fail(f"{what}: {plan}")
        columns = self.unpack(plan.layout, what)
        if plan.blob_count:
            lengths = columns[plan.lengths_at :]
            blob = self.take(sum(lengths), f"string payloads of {what}")
            bounds = itertools.pairwise(itertools.accumulate(lengths, initial=0))
            columns = columns[: plan.lengths_at] + tuple(blob[start:end] for start, end in bounds)
        # Values without a payload (booleans, null) read the trailing None.
        columns += (None,)
        try:
            return [build(columns[source]) for source, build in plan.steps]
        except (ValueError, UnicodeDecodeError) as error:
            raise self.fail(f"{what}: {error}") from None


class _ValuesPlan(NamedTuple):
    """How to read the columns for one sequence of tags: the struct layout of the fixed-size
    columns, where the lengths start, and per value (column index, builder)."""

    layout: str
    lengths_at: int
    blob_count: int
    steps: tuple[tuple[int, Callable[[Any], Any]], ...]


def _integer_builder(cls: type, low: int, high: int) -> Callable[[int], Any]:
    def build(raw: int) -> Any:
        if not low <= raw <= high:
            raise ValueError(f"{raw} is out of range for {cls.__name__}")
        return Char(chr(raw)) if cls is Char else int.__new__(cls, raw)

    return build


def _build_float(raw: float) -> Float:
    if round_to_float32(raw) != raw and not math.isnan(raw):
        raise ValueError(f"{raw!r} is not a 32-bit float")
    return float.__new__(Float, raw)


def _build_double(raw: float) -> Double:
    return float.__new__(Double, raw)


def _build_string(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


def _build_bytes(raw: bytes) -> bytes:
    return raw


def _constant(value: Any) -> Callable[[Any], Any]:
    return lambda _: value


_INTEGER_BUILDERS: Final = {
    tag: _integer_builder(cls, low, high) for tag, (cls, low, high) in _INTEGER_TYPES.items()
}
# The range each integer builder holds its column to (what ``check_encoded`` checks).
_BUILDER_RANGES: Final = {
    _INTEGER_BUILDERS[tag]: (low, high) for tag, (_, low, high) in _INTEGER_TYPES.items()
}
_BUILDERS: Final[dict[int, Callable[[Any], Any]]] = {
    _NULL: _constant(None),
    _FALSE: _constant(False),
    _TRUE: _constant(True),
    **_INTEGER_BUILDERS,
    _FLOAT: _build_float,
    _DOUBLE: _build_double,
    _STRING: _build_string,
    _BYTES: _build_bytes,
}


@functools.lru_cache(maxsize=2048)
def _values_plan(tags: bytes, body_types: bool) -> _ValuesPlan | str:
    """The plan for reading values with these tags, or why the tags are invalid. Cached: the same
    property and body shapes recur message after message."""
    if max(tags, default=0) >= _TAG_COUNT:
        return f"unknown type tag {max(tags)}"
    if not body_types and (_NULL in tags or _CHAR in tags or _BYTES in tags):
        return "null, char or byte[] among property values, which only bodies may hold"
    integers = [i for i, tag in enumerate(tags) if tag in _INTEGER_TYPES]
    floats = [i for i, tag in enumerate(tags) if tag in (_FLOAT, _DOUBLE)]
    blobs = [i for i, tag in enumerate(tags) if tag in (_STRING, _BYTES)]
    column_of = {position: column for column, position in enumerate(integers + floats + blobs)}
    steps = tuple(
        (column_of.get(position, -1), _BUILDERS[tag]) for position, tag in enumerate(tags)
    )
    return _ValuesPlan(
        layout=f">{len(integers)}q{len(floats)}d{len(blobs)}I",
        lengths_at=len(integers) + len(floats),
        blob_count=len(blobs),
        steps=steps,
    )


def _fixed_header_problem(fields: tuple[Any, ...], size: int) -> str | None:
    """What is wrong with the fixed header ``fields`` of a ``size``-byte encoding, or None."""
    (
        magic,
        version,
        body_tag,
        delivery_mode,
        priority,
        redelivered,
        bits,
        destination_kind,
        reply_to_kind,
        _,
        _,
        _,
        property_count,
    ) = fields
    if magic != _MAGIC:
        return f"bad magic {magic!r} (expected {_MAGIC!r}): not a jms message"
    if version != FORMAT_VERSION:
        return f"format version {version} is not supported (this codec reads {FORMAT_VERSION})"
    if body_tag >= len(_BODY_CLASSES):
        return f"unknown body type {body_tag}"
    if delivery_mode not in (1, 2):
        return f"invalid JMSDeliveryMode {delivery_mode}"
    if priority > 9:
        return f"invalid JMSPriority {priority}"
    if (
        redelivered > 1
        or bits & ~_KNOWN_BITS
        or (bits & _HAS_CORRELATION_STR and bits & _HAS_CORRELATION_BYTES)
        or (bits & _HAS_TEXT and body_tag != 1)
        or (destination_kind == _NO_DESTINATION) == bool(bits & _HAS_DESTINATION)
        or (reply_to_kind == _NO_DESTINATION) == bool(bits & _HAS_REPLY_TO)
    ):
        return (
            f"inconsistent flags (redelivered={redelivered}, bits=0x{bits:02x}, "
            f"destination kinds {destination_kind}/{reply_to_kind})"
        )
    if property_count > size:
        return f"property count {property_count} exceeds the message size"
    return None


def decode(data: bytes | bytearray | memoryview) -> Message:
    """The message encoded in ``data``; ``MessageFormatException`` if it is not a valid encoding."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise MessageFormatException(f"decode takes bytes, got {type(data).__name__}")
    reader = _Reader(bytes(data))
    (
        _,
        _,
        body_tag,
        delivery_mode,
        priority,
        redelivered,
        bits,
        destination_kind,
        reply_to_kind,
        timestamp,
        expiration,
        delivery_time,
        property_count,
    ) = fields = reader.unpack(_FIXED, "fixed header")
    problem = _fixed_header_problem(fields, reader.end)
    if problem is not None:
        raise reader.fail(problem)
    header_strings = (bits & _STRING_BITS).bit_count()
    strings = reader.strings(header_strings + property_count, "header strings and property names")
    message = _BODY_CLASSES[body_tag]()
    message._delivery_mode = delivery_mode
    message._priority = priority
    message._redelivered = redelivered == 1
    message._timestamp = timestamp
    message._expiration = expiration
    message._delivery_time = delivery_time
    position = 0
    if bits & _HAS_MESSAGE_ID:
        message._message_id = strings[position]
        position += 1
    if bits & _HAS_CORRELATION_STR:
        message._correlation_id = strings[position]
        position += 1
    if bits & _HAS_TYPE:
        message._type = strings[position]
        position += 1
    if bits & _HAS_DESTINATION:
        message._destination = reader.destination(
            destination_kind, strings[position], "JMSDestination"
        )
        position += 1
    if bits & _HAS_REPLY_TO:
        message._reply_to = reader.destination(reply_to_kind, strings[position], "JMSReplyTo")
        position += 1
    if bits & _HAS_TEXT:
        message._text = strings[position]  # type: ignore[attr-defined]
        position += 1
    if bits & _HAS_CORRELATION_BYTES:
        message._correlation_id = reader.blob("JMSCorrelationID bytes")
    if property_count:
        message._properties = _decode_properties(reader, strings[position:])
    _BODY_DECODERS[body_tag](reader, message)
    if reader.offset != reader.end:
        raise reader.fail(f"{reader.end - reader.offset} unexpected bytes after the body")
    return message


@functools.lru_cache(maxsize=1024)
def _property_names_problem(names: tuple[str, ...]) -> tuple[str | None, tuple[int, ...]]:
    """(why these names are invalid or None, positions of JMSX names). Cached per name tuple:
    the messages of one application carry the same few property sets over and over."""
    for name in names:
        error = property_name_error(name)
        if error is not None:
            return error, ()
    return None, tuple(i for i, name in enumerate(names) if name in JMSX_PROPERTY_TYPES)


def _decode_properties(reader: _Reader, names: list[str]) -> dict[str, Any]:
    values = reader.values(len(names), "property values", body_types=False)
    error, jmsx_positions = _property_names_problem(tuple(names))
    if error is not None:
        raise reader.fail(error)
    for position in jmsx_positions:
        required = JMSX_PROPERTY_TYPES[names[position]]
        if type(values[position]) is not required:
            raise reader.fail(f"property {names[position]!r} must be a {required.__name__}")
    properties = dict(zip(names, values, strict=True))
    if len(properties) != len(names):
        raise reader.fail("a property name appears twice")
    return properties


class EncodedFacts(NamedTuple):
    """The headers a broker routes and schedules an encoded message by (``check_encoded``)."""

    destination: Destination | None
    delivery_mode: int
    expiration: int
    delivery_time: int


def check_encoded(data: bytes | bytearray | memoryview) -> EncodedFacts:
    """JMSDestination, JMSDeliveryMode, JMSExpiration and JMSDeliveryTime of the message ``data``
    encodes, once ``data`` is known to be what ``decode`` accepts: ``MessageFormatException``
    exactly where ``decode`` raises one, with its reason.

    For a broker that keeps and delivers the bytes as they are, at about a third of a decode: a
    message in the shape most messages have (any body but a serialized object; a queue or
    topic; strings in any language; no correlation ID bytes, no JMSReplyTo) is checked in one
    pass with no object built but its destination. Any other input -- including every invalid one --
    is decoded, so the answer and every error are ``decode``'s."""
    checked = _checked_in_one_pass(data)
    if checked is None:
        return _facts_by_decoding(data)
    shape, _, destination = checked
    return EncodedFacts(destination, shape.delivery_mode, *_TIMES.unpack_from(data, _TIMES_AT))


def published_times(now: int, expiration: int, delivery_time: int) -> tuple[int, int]:
    """(JMSExpiration, JMSDeliveryTime) of a message with these published again at ``now``: its
    own, but not before now (an expiration already past would expire it unseen)."""
    return (0 if expiration == 0 else max(now + 1, expiration)), max(now, delivery_time)


def check_and_restamp(
    data: bytes, message_id: str, now: int
) -> tuple[bytes, Destination | None, int, int]:
    """``check_encoded`` of ``data`` (the same errors) and ``restamped`` of it in one pass, as a
    producer publishing it at ``now`` stamps it: this JMSMessageID, JMSTimestamp ``now``,
    JMSRedelivered false, its JMSExpiration and JMSDeliveryTime as ``published_times`` makes
    them. Returns that encoding, its JMSDestination, JMSDeliveryMode and JMSDeliveryTime. A
    broker that stamps what it stores reads each message once (a flat tuple and the common times
    without a call: a staging request makes thousands of these)."""
    checked = _checked_in_one_pass(data)
    if checked is None:
        facts = _facts_by_decoding(data)
        expiration, delivery_time = published_times(now, facts.expiration, facts.delivery_time)
        stamped = restamped(
            bytes(data),
            message_id=message_id,
            timestamp=now,
            expiration=expiration,
            delivery_time=delivery_time,
        )
        return stamped, facts.destination, facts.delivery_mode, delivery_time
    shape, lengths, destination = checked
    expiration, delivery_time = _TIMES.unpack_from(data, _TIMES_AT)
    if expiration or delivery_time > now:
        expiration, delivery_time = published_times(now, expiration, delivery_time)
    else:  # no expiration, due already: what published_times gives
        delivery_time = now
    stamped = _stamped(data, shape, lengths, message_id, now, expiration, delivery_time)
    return stamped, destination, shape.delivery_mode, delivery_time


def _checked_in_one_pass(
    data: bytes | bytearray | memoryview,
) -> tuple[_Shape, tuple[int, ...], Destination] | None:
    """The shape, string lengths and destination of ``data`` when it is a message of the shape
    ``check_encoded`` reads in one pass and ``decode`` accepts; None for anything else, which
    only ``decode`` can judge."""
    if type(data) is not bytes:
        return None
    size = len(data)
    if size < _FIXED.size:
        return None
    shape = _shape(_shape_key(data))
    if not shape.one_pass:
        return None
    offset = shape.strings_at
    if offset > size:
        return None
    lengths = shape.lengths.unpack_from(data, _FIXED.size)
    strings_end = offset + sum(lengths)
    if strings_end > size or not _utf8_strings(data[offset:strings_end], lengths):
        return None
    identity = shape.identity_strings
    at = offset + sum(lengths[:identity])
    name_length = lengths[identity]
    if not name_length or (shape.has_reply_to and not lengths[identity + 1]):
        return None  # decode refuses an empty JMSDestination or JMSReplyTo name
    destination = _fast_destination(shape.destination_kind, data[at : at + name_length])
    offset = strings_end
    if shape.has_correlation_bytes:  # its length, then the bytes as they are
        if offset + 4 > size:
            return None
        offset += 4 + _U32.unpack_from(data, offset)[0]
    property_count = shape.property_count
    if property_count:
        names = lengths[shape.header_strings :]
        jmsx = _fast_names(data[strings_end - sum(names) : strings_end], names)
        if jmsx is None:
            return None
        tags = data[offset : offset + property_count]
        for position, tag in jmsx:
            if position >= len(tags) or tags[position] != tag:
                return None
        offset = _values_end(data, tags, offset + property_count, False)
        if offset < 0:
            return None
    body = shape.body_tag
    if body == _BYTES_BODY_TAG:
        if offset + 4 > size:
            return None
        offset += 4 + _U32.unpack_from(data, offset)[0]
    elif body == _OBJECT_BODY_TAG:  # a presence flag, then the serialized object if present
        present = data[offset] if offset < size else -1
        if present == 1 and offset + 5 <= size:
            offset += 5 + _U32.unpack_from(data, offset + 1)[0]
        elif present == 0:
            offset += 1
        else:
            return None
    elif body in (_MAP_BODY_TAG, _STREAM_BODY_TAG):
        if offset + 4 > size:
            return None
        (count,) = _U32.unpack_from(data, offset)
        offset += 4
        if count > size - offset:
            return None
        if count and body == _MAP_BODY_TAG:
            if offset + 4 * count > size:
                return None
            name_lengths = _lengths_struct(count).unpack_from(data, offset)
            offset += 4 * count
            names_end = offset + sum(name_lengths)
            if names_end > size or not _map_names(data[offset:names_end], name_lengths):
                return None
            offset = names_end
        if count:
            offset = _values_end(data, data[offset : offset + count], offset + count, True)
            if offset < 0:
                return None
    if offset != size:
        return None
    return shape, lengths, destination


def _values_end(data: bytes, tags: bytes, offset: int, body_types: bool) -> int:
    """Where the values tagged ``tags`` end in ``data``, their columns starting at ``offset``,
    when ``decode`` accepts them as they are (``_Reader.values``); -1 otherwise."""
    size = len(data)
    plan = _values_plan(tags, body_types)
    if isinstance(plan, str) or offset > size:
        return -1
    columns_shape = _columns_shape(plan)
    if offset + columns_shape.columns.size > size:
        return -1
    columns = columns_shape.columns.unpack_from(data, offset)
    offset += columns_shape.columns.size
    for column, low, high in columns_shape.ranges:
        if not low <= columns[column] <= high:
            return -1
    for column in columns_shape.floats:
        raw = columns[column]
        if round_to_float32(raw) != raw and not math.isnan(raw):
            return -1
    blob_lengths = columns[plan.lengths_at :]
    blobs_end = offset + sum(blob_lengths)
    if blobs_end > size:
        return -1
    if columns_shape.bytes_blobs:  # byte arrays among the blobs: only the Strings are UTF-8
        for blob, length in enumerate(blob_lengths):
            if blob not in columns_shape.bytes_blobs and not _utf8_strings(
                data[offset : offset + length], (length,)
            ):
                return -1
            offset += length
    elif not _utf8_strings(data[offset:blobs_end], blob_lengths):
        return -1
    return blobs_end


@functools.lru_cache(maxsize=1024)
def _map_names(names: bytes, lengths: tuple[int, ...]) -> bool:
    """Whether these map entry names are what ``decode`` takes: UTF-8, none empty, distinct."""
    return (
        _utf8_strings(names, lengths)
        and 0 not in lengths
        and len(
            {
                names[start:end]
                for start, end in itertools.pairwise(itertools.accumulate(lengths, initial=0))
            }
        )
        == len(lengths)
    )


def _utf8_strings(joined: bytes, lengths: Sequence[int]) -> bool:
    """Whether each of the strings ``joined`` holds one after another, ``lengths`` bytes each,
    is what ``decode`` reads as a string (UTF-8, surrogates passed). Text in any language is
    checked in one pass, not only ASCII: the joined bytes decode, and no string starts inside
    a character (on a continuation byte), so each string decodes on its own too."""
    if joined.isascii():
        return True
    try:
        joined.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return False
    start = 0
    for length in lengths:
        start += length
        if start < len(joined) and 0x80 <= joined[start] < 0xC0:
            return False
    return True


def _shape_key(data: bytes) -> bytes:
    """The bytes of ``data``'s fixed header other than its three times."""
    return data[:_SMALL_FIELDS_END] + data[_PROPERTY_COUNT_AT : _FIXED.size]


class _Shape(NamedTuple):
    """What a fixed header's fields other than its three times fix about a message: where its
    strings are, how it is restamped, and whether ``check_encoded`` reads it in one pass."""

    lengths: struct.Struct  # the string lengths after the fixed header
    strings_at: int
    header_strings: int  # the header's own strings, before the property names
    identity_strings: int  # the strings before the destination's name
    destination_kind: int
    property_count: int
    delivery_mode: int
    body_tag: int
    one_pass: bool
    has_message_id: bool
    has_reply_to: bool  # its name is the string after the destination's
    has_correlation_bytes: bool  # after the strings
    stamped_fields: bytes  # the small fields restamped: JMSRedelivered false, a JMSMessageID
    property_count_bytes: bytes
    stamped_lengths: struct.Struct  # the string lengths restamped


@functools.lru_cache(maxsize=1024)
def _shape(key: bytes) -> _Shape:
    """The ``_Shape`` of the messages whose ``_shape_key`` is ``key`` (cached: a stream of
    messages has few shapes). Its ``one_pass`` is false for a fixed header ``decode`` refuses."""
    fields = _FIXED.unpack(key[:_SMALL_FIELDS_END] + bytes(24) + key[_SMALL_FIELDS_END:])
    (_, _, body_tag, delivery_mode, _, _, bits, destination_kind, reply_to_kind, *_) = fields
    property_count = fields[12]
    header_strings = (bits & _STRING_BITS).bit_count()
    lengths = _lengths_struct(header_strings + property_count)
    has_message_id = bool(bits & _HAS_MESSAGE_ID)
    stamped_fields = bytearray(key[:_SMALL_FIELDS_END])
    stamped_fields[_REDELIVERED_AT] = 0
    stamped_fields[_REDELIVERED_AT + 1] = bits | _HAS_MESSAGE_ID
    return _Shape(
        lengths=lengths,
        strings_at=_FIXED.size + lengths.size,
        header_strings=header_strings,
        identity_strings=(bits & _IDENTITY_BITS).bit_count(),
        destination_kind=destination_kind,
        property_count=property_count,
        delivery_mode=delivery_mode,
        body_tag=body_tag,
        one_pass=(
            # any size: whether the message holds its property count is checked message by message
            _fixed_header_problem(fields, 2**32) is None
            and not bits & ~_FAST_BITS
            and bool(bits & _HAS_DESTINATION)
            and destination_kind <= 1  # not a temporary destination
            # (a JMSReplyTo of any kind: _fixed_header_problem has matched it to its bit)
            and (reply_to_kind == _NO_DESTINATION or reply_to_kind < len(_DESTINATION_CLASSES))
        ),
        has_message_id=has_message_id,
        has_reply_to=bool(bits & _HAS_REPLY_TO),
        has_correlation_bytes=bool(bits & _HAS_CORRELATION_BYTES),
        stamped_fields=bytes(stamped_fields),
        property_count_bytes=key[_SMALL_FIELDS_END:],
        stamped_lengths=_lengths_struct(header_strings + property_count + (not has_message_id)),
    )


# What ``check_encoded`` reads in one pass: the optional strings, a destination, a reply-to, a
# text body, a correlation ID as bytes.
_FAST_BITS: Final = (
    _HAS_MESSAGE_ID
    | _HAS_CORRELATION_STR
    | _HAS_CORRELATION_BYTES
    | _HAS_TYPE
    | _HAS_DESTINATION
    | _HAS_REPLY_TO
    | _HAS_TEXT
)
# The strings before the destination's name among a message's strings.
_IDENTITY_BITS: Final = _HAS_MESSAGE_ID | _HAS_CORRELATION_STR | _HAS_TYPE


def _facts_by_decoding(data: bytes | bytearray | memoryview) -> EncodedFacts:
    message = decode(data)
    return EncodedFacts(
        message._destination, message._delivery_mode, message._expiration, message._delivery_time
    )


@functools.lru_cache(maxsize=256)
def _lengths_struct(count: int) -> struct.Struct:
    return struct.Struct(f">{count}I")


@functools.lru_cache(maxsize=1024)
def _fast_destination(kind: int, name: bytes) -> Destination:
    return _DESTINATION_CLASSES[kind](name.decode("utf-8", "surrogatepass"))


@functools.lru_cache(maxsize=1024)
def _fast_names(names: bytes, lengths: tuple[int, ...]) -> tuple[tuple[int, int], ...] | None:
    """For property names (``_utf8_strings``) that are valid and distinct, the position of each
    JMSX one with the tag its value must have (``decode`` checks their types); else None."""
    bounds = itertools.pairwise(itertools.accumulate(lengths, initial=0))
    split = tuple(names[start:end].decode("utf-8", "surrogatepass") for start, end in bounds)
    error, jmsx_positions = _property_names_problem(split)
    if error is not None or len(set(split)) != len(split):
        return None
    return tuple(
        (position, _JMSX_TAGS[JMSX_PROPERTY_TYPES[split[position]]]) for position in jmsx_positions
    )


# The tag of the values of each type a JMSX property may have.
_JMSX_TAGS: Final[dict[type, int]] = {str: _STRING, Int: _INT, Long: _LONG}


class _ColumnsShape(NamedTuple):
    """How ``check_encoded`` checks a plan's columns: their struct, the integer columns with
    their ranges (a long's int64 needs none), the float columns, and which blobs are byte
    arrays (the others are Strings)."""

    columns: struct.Struct
    ranges: tuple[tuple[int, int, int], ...]
    floats: tuple[int, ...]
    bytes_blobs: frozenset[int]


@functools.lru_cache(maxsize=2048)
def _columns_shape(plan: _ValuesPlan) -> _ColumnsShape:
    ranges = []
    floats = []
    bytes_blobs = set()
    for source, build in plan.steps:
        bounds = _BUILDER_RANGES.get(build)
        if bounds is not None:
            ranges.append((source, *bounds))
        elif build is _build_float:
            floats.append(source)
        elif build is _build_bytes:
            bytes_blobs.add(source - plan.lengths_at)
    return _ColumnsShape(
        struct.Struct(plan.layout), tuple(ranges), tuple(floats), frozenset(bytes_blobs)
    )


def _decode_no_body(reader: _Reader, message: Any) -> None:
    return None


def _decode_bytes_body(reader: _Reader, message: Any) -> None:
    message._buffer = bytearray(reader.blob("bytes body"))


def _decode_map(reader: _Reader, message: Any) -> None:
    count = reader.count("map entry count")
    if count == 0:
        return
    names = reader.strings(count, "map entry names")
    entries = dict(zip(names, reader.values(count, "map values", body_types=True), strict=True))
    if len(entries) != count or "" in entries:
        raise reader.fail("a map entry name is empty or appears twice")
    message._map = entries


def _decode_stream(reader: _Reader, message: Any) -> None:
    count = reader.count("stream value count")
    message._values = reader.values(count, "stream values", body_types=True)


def _decode_object(reader: _Reader, message: Any) -> None:
    if reader.present("object body"):
        message._serialized = reader.blob("object body")


_BODY_DECODERS: Final = (
    _decode_no_body,
    _decode_no_body,  # a TextMessage's text travels in the string column
    _decode_bytes_body,
    _decode_map,
    _decode_stream,
    _decode_object,
)
