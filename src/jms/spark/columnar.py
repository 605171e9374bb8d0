"""Codec bytes straight to Arrow: ``encoded_to_arrow``, the Spark source's decoder.

``encoded_to_arrow(messages)`` gives exactly what ``to_arrow([decode(m) for m in messages])`` gives,
as one record batch, without building a ``Message`` per message. Per message, a short loop reads
only the fixed header and the length columns of the codec format (docs/wire-format.md) with
precompiled ``Struct``s, and keeps the message, its shape and its string lengths; the rest is
done once per batch, in C: the messages are joined into one buffer, numpy works out where every
part of every message lies in it, and each column is gathered from those spans by an Arrow
``take`` (string columns then cast to ``string``, which checks their UTF-8), integer and
floating payloads read by numpy as big-endian words.

What the messages of one application share — header flags, which header strings travel,
property names and types, a Map body's entry names and types, a Stream body's value types — is
a *shape*, validated once per batch (``_Head``, ``_Row``, ``_BodyShape``), so that checking a
message's shape costs a few in-place comparisons with the message before, or a dictionary
look-up. Values are checked as ``decode`` checks them (integer ranges, 32-bit floats,
UTF-8, non-empty destination names) in bulk after the loop.

``decode`` is where untrusted bytes enter; this module must refuse what it refuses, in its words,
so it never words a refusal itself. A message the loop does not read (an unusual shape, anything
malformed) goes through ``decode`` and ``to_arrow`` (the *general path*), and a batch whose bulk
checks fail is converted again on the general path, which raises the error ``decode`` or
``to_arrow`` gives, naming the index of the message in the batch.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

import numpy as np
import pyarrow as pa

from jms.errors import MessageFormatException
from jms.message import (
    BytesMessage,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from jms.message.codec import (
    _BODY_CLASSES,
    _BYTE,
    _BYTES,
    _CHAR,
    _DESTINATION_CLASSES,
    _DOUBLE,
    _FALSE,
    _FIXED,
    _FLOAT,
    _HAS_CORRELATION_BYTES,
    _HAS_CORRELATION_STR,
    _HAS_DESTINATION,
    _HAS_MESSAGE_ID,
    _HAS_REPLY_TO,
    _HAS_TEXT,
    _HAS_TYPE,
    _INT,
    _KNOWN_BITS,
    _LONG,
    _NO_DESTINATION,
    _NULL,
    _SHORT,
    _STRING,
    _TRUE,
    FORMAT_VERSION,
    decode,
)
from jms.message.message import JMSX_PROPERTY_TYPES, property_name_error
from jms.spark.rows import MESSAGE_ARROW_SCHEMA, to_arrow
from jms.spark.schema import DELIVERY_MODE_NAMES
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
)

__all__ = ["encoded_to_arrow"]

# The fixed header (docs/wire-format.md): its first 10 bytes (magic to reply-to kind) and the
# property count are a message's head shape; the three times between them are read in bulk.
_SHAPE: Final = struct.Struct(">10s24xI")
_TIMES: Final = slice(10, 34)
_FIXED_SIZE: Final = _FIXED.size
_U32: Final = struct.Struct(">I")
_MAGIC_AND_VERSION: Final = b"JM" + bytes([FORMAT_VERSION])

# More properties than this take the general path, so that a forged count never compiles a huge
# Struct; real messages carry a handful.
_MOST_PROPERTIES_READ: Final = 512

# Smaller batches take the general path: the bulk path costs about a hundred numpy and Arrow calls
# per batch whatever its size, more than decode + to_arrow below about 50 messages (measured: 0.5x
# at 10 messages, 0.9x at 40, 1.2x at 60, 1.8x at 100).
_FEWEST_FOR_BULK: Final = 48

_DELIVERY_COUNT: Final = "JMSXDeliveryCount"

# Body tags the loop reads (a text travels in the string column).
_TEXT_BODY: Final = _BODY_CLASSES.index(TextMessage)
_BYTES_BODY: Final = _BODY_CLASSES.index(BytesMessage)
_MAP_BODY: Final = _BODY_CLASSES.index(MapMessage)
_STREAM_BODY: Final = _BODY_CLASSES.index(StreamMessage)
_OBJECT_BODY: Final = _BODY_CLASSES.index(ObjectMessage)
_BODIES_READ: Final = frozenset(
    {_BODY_CLASSES.index(Message), _TEXT_BODY, _BYTES_BODY, _MAP_BODY, _STREAM_BODY, _OBJECT_BODY}
)

# The header strings in their order in the string column, by the column that shows them.
_HEADER_STRINGS: Final = (
    ("message_id", _HAS_MESSAGE_ID),
    ("correlation_id", _HAS_CORRELATION_STR),
    ("type", _HAS_TYPE),
    ("destination", _HAS_DESTINATION),
    ("reply_to", _HAS_REPLY_TO),
    ("text", _HAS_TEXT),
)
_SCHEMES: Final = tuple(f"{cls.scheme}://" for cls in _DESTINATION_CLASSES)

# The tags a property value may have: its Java type (for the JMSX type rules) and type name.
_PROPERTY_TYPES: Final[dict[int, tuple[type, str]]] = {
    _FALSE: (bool, "boolean"),
    _TRUE: (bool, "boolean"),
    _BYTE: (Byte, "byte"),
    _SHORT: (Short, "short"),
    _INT: (Int, "int"),
    _LONG: (Long, "long"),
    _FLOAT: (Float, "float"),
    _DOUBLE: (Double, "double"),
    _STRING: (str, "String"),
}
_INTEGER_RANGES: Final = {
    _BYTE: BYTE_RANGE,
    _SHORT: SHORT_RANGE,
    _INT: INT_RANGE,
    _LONG: LONG_RANGE,
}
_FLOATING_TAGS: Final = (_FLOAT, _DOUBLE)
# A char travels as an integer, its UTF-16 code unit; its column is ``string``.
_INTEGER_PAYLOAD_RANGES: Final = {**_INTEGER_RANGES, _CHAR: (0, 0xFFFF)}

_PROPERTIES_TYPE: Final = MESSAGE_ARROW_SCHEMA.field("properties").type
_PROPERTY_VALUE_FIELDS: Final = list(_PROPERTIES_TYPE.item_type)
_MAP_TYPE: Final = MESSAGE_ARROW_SCHEMA.field("map").type
_STREAM_TYPE: Final = MESSAGE_ARROW_SCHEMA.field("stream").type
_MAP_VALUE_FIELDS: Final = list(_MAP_TYPE.item_type)
# The tags a Map or Stream body value may have: those of a property, a char, a byte array, or
# null (a null value: its type name is never shown).
_MAP_VALUE_TYPES: Final[dict[int, tuple[type, str]]] = {
    **_PROPERTY_TYPES,
    _CHAR: (Char, "char"),
    _BYTES: (bytes, "byte[]"),
    _NULL: (type(None), "null"),
}


@dataclass(frozen=True, slots=True)
class _Entry:
    """How one property of a shape lands in the ``properties`` map: its name, its Java type name,
    its boolean (the tag says it), where its payload sits among the message's numbers or String
    values (-1: elsewhere), the range an integer must be in, whether a floating payload must
    be a 32-bit float, and whether the integer is a char's code unit."""

    name: str
    type_name: str
    boolean: bool | None
    integer_slot: int
    floating_slot: int
    string_slot: int
    low: int
    high: int
    float32: bool
    char: bool


@dataclass(frozen=True, slots=True)
class _Row:
    """A whole message shape: its head and its property names and types. ``number`` is its place
    in the batch's list of shapes."""

    number: int
    head: _Head
    name_lengths: bytes  # as they travel: a message has this shape if its bytes hold these three
    names: bytes
    tags: bytes
    numbers_size: int  # bytes of the int64 and float64 payloads
    # The lengths of the String property values: how to read them, how many bytes they take.
    unpack_payload_lengths: Callable[[bytes, int], tuple[int, ...]]
    payload_lengths_size: int
    entries: tuple[_Entry, ...]
    delivery_count_slot: int  # among the numbers; -1 without JMSXDeliveryCount


@dataclass(frozen=True, slots=True)
class _BodyShape:
    """The entry names and value tags of a map body, or the value tags of a Stream body (not
    ``named``: no names): ``number`` is its place in the batch's list of body shapes;
    ``entries`` read as the properties' do (a byte array's payload among the String values, its
    place in ``binary``)."""

    number: int
    named: bool
    counts_and_lengths: bytes  # as they travel: the entry count, then the names' lengths
    names: bytes
    tags: bytes
    numbers_at: int  # from the body's start: count, lengths, names and tags before the numbers
    numbers_size: int
    unpack_payload_lengths: Callable[[bytes, int], tuple[int, ...]]
    payload_lengths_size: int
    entries: tuple[_Entry, ...]
    binary: tuple[bool, ...]
    null: tuple[bool, ...]


def _entries(
    names: list[str], tags: bytes, types: dict[int, tuple[type, str]]
) -> tuple[list[_Entry], int, int]:
    """The entries of values with these names and tags (``types`` names their Java types), how
    many 8-byte numbers and how many Strings and byte arrays they have. Payload columns are in
    the codec's order: integers, then floating values, then Strings and byte arrays."""
    integers = [i for i, tag in enumerate(tags) if tag in _INTEGER_PAYLOAD_RANGES]
    floating = [i for i, tag in enumerate(tags) if tag in _FLOATING_TAGS]
    blobs = [i for i, tag in enumerate(tags) if tag in (_STRING, _BYTES)]
    number_slot = {position: slot for slot, position in enumerate(integers + floating)}
    blob_slot = {position: slot for slot, position in enumerate(blobs)}
    entries = []
    for position, (name, tag) in enumerate(zip(names, tags, strict=True)):
        low, high = _INTEGER_PAYLOAD_RANGES.get(tag, LONG_RANGE)
        entries.append(
            _Entry(
                name=name,
                type_name=types[tag][1],
                boolean=tag == _TRUE if tag in (_FALSE, _TRUE) else None,
                integer_slot=number_slot[position] if tag in _INTEGER_PAYLOAD_RANGES else -1,
                floating_slot=number_slot[position] if tag in _FLOATING_TAGS else -1,
                string_slot=blob_slot.get(position, -1),
                low=low,
                high=high,
                float32=tag == _FLOAT,
                char=tag == _CHAR,
            )
        )
    return entries, len(number_slot), len(blobs)


def _body_shape(
    number: int, named: bool, counts_and_lengths: bytes, names: bytes, tags: bytes
) -> _BodyShape | None:
    """The shape of map bodies with these entry names and tags (``named``), or of Stream bodies
    with these value tags, or None when the general path must read them (a tag it does not
    know, names ``decode`` refuses or Spark cannot hold)."""
    count = len(tags)
    if any(tag not in _MAP_VALUE_TYPES for tag in tags):
        return None
    if named:
        bounds = list(
            itertools.accumulate(struct.unpack_from(f">{count}I", counts_and_lengths, 4), initial=0)
        )
        if bounds[-1] != len(names):
            return None
        try:  # Spark strings cannot hold a lone surrogate: such a name goes the general way
            decoded = [
                names[start:end].decode("utf-8") for start, end in itertools.pairwise(bounds)
            ]
        except UnicodeDecodeError:
            return None
        if "" in decoded or len(set(decoded)) != count:
            return None
    else:
        decoded = [""] * count  # a Stream's values have no names
    entries, number_count, blob_count = _entries(decoded, tags, _MAP_VALUE_TYPES)
    return _BodyShape(
        number=number,
        named=named,
        counts_and_lengths=counts_and_lengths,
        names=names,
        tags=tags,
        numbers_at=len(counts_and_lengths) + len(names) + count,
        numbers_size=8 * number_count,
        unpack_payload_lengths=struct.Struct(f">{blob_count}I").unpack_from,
        payload_lengths_size=4 * blob_count,
        entries=tuple(entries),
        binary=tuple(tag == _BYTES for tag in tags),
        null=tuple(tag == _NULL for tag in tags),
    )


@dataclass(slots=True)
class _Head:
    """What a fixed header says, validated: the slot of each header string in the string column
    (-1: absent) and where the columns after the fixed header start."""

    property_count: int
    string_count: int
    unpack_string_lengths: Callable[[bytes, int], tuple[int, ...]]
    name_lengths_at: int
    strings_at: int
    slots: dict[str, int]
    destination_scheme: str | None
    reply_to_scheme: str | None
    correlation_bytes: bool
    body: int
    delivery_mode: str
    priority: int
    redelivered: bool
    body_type: str
    rows: dict[tuple[bytes, bytes, bytes], _Row | None] = field(default_factory=dict)
    last_row: _Row | None = None  # the shape of the last message with this head


def _kind_fits(kind: int, present: int) -> bool:
    """Whether a destination kind byte agrees with its presence bit, as ``decode`` requires."""
    return kind < len(_SCHEMES) if present else kind == _NO_DESTINATION


def _head(shape: bytes, property_count: int) -> _Head | None:
    """The head these first 10 header bytes and property count describe, or None when the general
    path must read the message (which also words any refusal)."""
    body, delivery_mode, priority, redelivered, bits, destination_kind, reply_to_kind = shape[3:]
    if (
        shape[:3] != _MAGIC_AND_VERSION
        or body not in _BODIES_READ
        or delivery_mode not in DELIVERY_MODE_NAMES
        or priority > 9
        or redelivered > 1
        or bits & ~_KNOWN_BITS
        or (bits & _HAS_CORRELATION_STR and bits & _HAS_CORRELATION_BYTES)
        or (bits & _HAS_TEXT and body != _TEXT_BODY)
        or not _kind_fits(destination_kind, bits & _HAS_DESTINATION)
        or not _kind_fits(reply_to_kind, bits & _HAS_REPLY_TO)
        or property_count > _MOST_PROPERTIES_READ
    ):
        return None
    present = [column for column, bit in _HEADER_STRINGS if bits & bit]
    string_count = len(present) + property_count
    return _Head(
        property_count=property_count,
        string_count=string_count,
        unpack_string_lengths=struct.Struct(f">{string_count}I").unpack_from,
        name_lengths_at=_FIXED_SIZE + 4 * len(present),
        strings_at=_FIXED_SIZE + 4 * string_count,
        slots={
            column: present.index(column) if column in present else -1
            for column, _ in _HEADER_STRINGS
        },
        destination_scheme=_SCHEMES[destination_kind] if bits & _HAS_DESTINATION else None,
        reply_to_scheme=_SCHEMES[reply_to_kind] if bits & _HAS_REPLY_TO else None,
        correlation_bytes=bool(bits & _HAS_CORRELATION_BYTES),
        body=body,
        delivery_mode=DELIVERY_MODE_NAMES[delivery_mode],
        priority=priority,
        redelivered=redelivered == 1,
        body_type=_BODY_CLASSES[body].body_type,
    )


def _property_names(head: _Head, name_lengths: bytes, names: bytes, tags: bytes) -> list[str]:
    """The property names of a message, if the names and tags are whole and ``decode`` accepts
    them as they are; else a ``ValueError`` (the general path then words the refusal)."""
    count = head.property_count
    if len(name_lengths) != 4 * count or len(tags) != count:
        raise ValueError("property names or tags cut short")
    bounds = list(itertools.accumulate(struct.unpack(f">{count}I", name_lengths), initial=0))
    if bounds[-1] != len(names):
        raise ValueError("property names cut short")
    # A UnicodeDecodeError is a ValueError too. decode takes a lone surrogate (as surrogatepass
    # does), Spark cannot: such a name goes the general way, to be refused by decode or to_arrow.
    decoded = [names[start:end].decode("utf-8") for start, end in itertools.pairwise(bounds)]
    if len(set(decoded)) != count:
        raise ValueError("a property name appears twice")
    for name, tag in zip(decoded, tags, strict=True):
        if tag not in _PROPERTY_TYPES or property_name_error(name) is not None:
            raise ValueError(f"property {name!r} or its tag {tag} is refused")
        required = JMSX_PROPERTY_TYPES.get(name)
        if required is not None and _PROPERTY_TYPES[tag][0] is not required:
            raise ValueError(f"property {name!r} has the wrong type")
    return decoded


def _row(number: int, head: _Head, name_lengths: bytes, names: bytes, tags: bytes) -> _Row | None:
    """The shape of messages with this head and these property names and tags, or None when the
    general path must read them (names or tags ``decode`` refuses, or bytes cut short)."""
    try:
        decoded = _property_names(head, name_lengths, names, tags)
    except ValueError:
        return None
    entries, number_count, blob_count = _entries(decoded, tags, _PROPERTY_TYPES)
    # The JMSX type rules made JMSXDeliveryCount an int; it has a column of its own.
    delivery_count_slot = next(
        (entry.integer_slot for entry in entries if entry.name == _DELIVERY_COUNT), -1
    )
    return _Row(
        number=number,
        head=head,
        name_lengths=name_lengths,
        names=names,
        tags=tags,
        numbers_size=8 * number_count,
        unpack_payload_lengths=struct.Struct(f">{blob_count}I").unpack_from,
        payload_lengths_size=4 * blob_count,
        entries=tuple(entry for entry in entries if entry.name != _DELIVERY_COUNT),
        delivery_count_slot=delivery_count_slot,
    )


_UNSEEN: Final = object()


@dataclass(slots=True)
class _Scanned:
    """The messages the loop read (the *fast rows*, in batch order) with what the loop learnt of
    each, and the messages ``decode`` read, with their index in the batch."""

    rows: list[_Row] = field(default_factory=list)  # the batch's shapes, by number
    shapes: list[int] = field(default_factory=list)  # per fast row: its shape's number
    messages: list[bytes] = field(default_factory=list)  # per fast row: its bytes
    # Per fast row, the lengths of its strings: header strings and property names, then the
    # String property values.
    string_lengths: list[int] = field(default_factory=list)
    correlation_bytes: dict[int, bytes] = field(default_factory=dict)  # by fast row
    general: list[tuple[int, Message]] = field(default_factory=list)
    body_shapes: list[_BodyShape] = field(default_factory=list)  # the batch's, by number
    # Per fast row with a map body, and with a Stream body (by fast row): its body shape's
    # number, where the body starts in the message, and the lengths of its String and byte
    # array values.
    maps: dict[int, tuple[int, int, tuple[int, ...]]] = field(default_factory=dict)
    streams: dict[int, tuple[int, int, tuple[int, ...]]] = field(default_factory=dict)


def _find_row(
    rows: list[_Row], head: _Head, data: bytes, lengths: tuple[int, ...], names_end: int, at: int
) -> _Row | None:
    """The shape of a message whose head is ``head``, from its property names (ending at
    ``names_end``) and tags (at ``at``): remembered, or made and validated."""
    count = head.property_count
    names_size = sum(lengths[len(lengths) - count :])
    key = (
        data[head.name_lengths_at : head.strings_at],
        data[names_end - names_size : names_end],
        data[at : at + count],
    )
    row = head.rows.get(key, _UNSEEN)
    if row is _UNSEEN:
        row = head.rows[key] = _row(len(rows), head, *key)
        if row is not None:
            rows.append(row)
    return row  # type: ignore[return-value]


def _scan(messages: Sequence[bytes]) -> _Scanned | None:
    """Read what the loop can read and ``decode`` the rest; None when ``decode`` refuses one."""
    scanned = _Scanned()
    heads: dict[tuple[bytes, int], _Head | None] = {}
    rows = scanned.rows
    # Looked up once, not per message.
    unpack_shape = _SHAPE.unpack_from
    unpack_u32 = _U32.unpack_from
    fixed_size = _FIXED_SIZE
    unseen = _UNSEEN
    add_shape = scanned.shapes.append
    add_message = scanned.messages.append
    add_lengths = scanned.string_lengths.extend
    last_shape = last_count = head = None
    seen_bodies: dict[tuple[bool, bytes, bytes, bytes], _BodyShape | None] = {}
    last_body: _BodyShape | None = None
    for index, data in enumerate(messages):
        if type(data) is bytes:
            try:
                shape, property_count = unpack_shape(data)
                # Most messages have the head of the one before: two comparisons, no look-up.
                if shape != last_shape or property_count != last_count:
                    head = heads.get((shape, property_count), unseen)
                    if head is unseen:
                        head = heads[shape, property_count] = _head(shape, property_count)
                    last_shape, last_count = shape, property_count
                if head is not None:
                    size = len(data)
                    lengths = head.unpack_string_lengths(data, fixed_size)
                    at = strings_end = head.strings_at + sum(lengths)
                    if head.correlation_bytes:
                        (correlation_length,) = unpack_u32(data, at)
                        at += 4 + correlation_length
                    row = head.last_row
                    # Most messages have the shape of the one before: three comparisons in
                    # place tell, without slicing anything. (When the name lengths match, the
                    # names end at strings_end and cannot start before strings_at.)
                    if not (
                        row is not None
                        and data.startswith(row.name_lengths, head.name_lengths_at)
                        and data.startswith(row.names, strings_end - len(row.names))
                        and data.startswith(row.tags, at)
                    ):
                        row = head.last_row = _find_row(rows, head, data, lengths, strings_end, at)
                    if row is not None:
                        at += property_count + row.numbers_size
                        payload_lengths = row.unpack_payload_lengths(data, at)
                        at += row.payload_lengths_size + sum(payload_lengths)
                        body = head.body
                        if body == _BYTES_BODY:
                            at += 4 + unpack_u32(data, at)[0]
                        elif body in (_MAP_BODY, _STREAM_BODY):
                            body_at = at
                            named = body == _MAP_BODY  # a Stream's values have no names
                            body_shape = last_body
                            # As for properties: most bodies have the shape of the one before.
                            if not (
                                body_shape is not None
                                and body_shape.named is named
                                and data.startswith(body_shape.counts_and_lengths, at)
                                and data.startswith(
                                    body_shape.names, at + len(body_shape.counts_and_lengths)
                                )
                                and data.startswith(
                                    body_shape.tags,
                                    at + body_shape.numbers_at - len(body_shape.tags),
                                )
                            ):
                                body_shape = last_body = _find_body_shape(
                                    scanned, seen_bodies, data, at, named
                                )
                            if body_shape is None:
                                at = -1  # the general path reads it
                            else:
                                at += body_shape.numbers_at + body_shape.numbers_size
                                body_payload = body_shape.unpack_payload_lengths(data, at)
                                at += body_shape.payload_lengths_size + sum(body_payload)
                        elif body == _OBJECT_BODY:
                            present = data[at] if at < size else -1
                            if present == 1:
                                at += 5 + unpack_u32(data, at + 1)[0]
                            else:
                                at += 1 if present == 0 else size  # else refused
                        if at == size:
                            if body in (_MAP_BODY, _STREAM_BODY):
                                bodies = scanned.maps if named else scanned.streams
                                bodies[len(scanned.shapes)] = (
                                    body_shape.number,  # type: ignore[union-attr]
                                    body_at,
                                    body_payload,
                                )
                            if head.correlation_bytes:
                                scanned.correlation_bytes[len(scanned.shapes)] = data[
                                    strings_end + 4 : strings_end + 4 + correlation_length
                                ]
                            add_shape(row.number)
                            add_message(data)
                            add_lengths(lengths)
                            if payload_lengths:
                                add_lengths(payload_lengths)
                            continue
            except struct.error:
                pass  # cut short: decode says where
        try:
            message = decode(data)
        except MessageFormatException:
            return None
        scanned.general.append((index, message))
    return scanned


def _find_body_shape(
    scanned: _Scanned,
    seen: dict[tuple[bool, bytes, bytes, bytes], _BodyShape | None],
    data: bytes,
    at: int,
    named: bool,
) -> _BodyShape | None:
    """The shape of the map body (``named``) or Stream body at ``at``: remembered, or made and
    validated; None when the general path must read it."""
    (count,) = _U32.unpack_from(data, at)
    lengths_end = at + 4 + (4 * count if named else 0)
    if count > _MOST_PROPERTIES_READ or lengths_end > len(data):
        return None
    names_end = lengths_end
    if named:
        names_end += sum(struct.unpack_from(f">{count}I", data, at + 4))
    key = (
        named,
        data[at:lengths_end],
        data[lengths_end:names_end],
        data[names_end : names_end + count],
    )
    if len(key[3]) != count:
        return None
    found = seen.get(key, _UNSEEN)
    if found is _UNSEEN:
        found = seen[key] = _body_shape(len(scanned.body_shapes), *key)
        if found is not None:
            scanned.body_shapes.append(found)
    return found  # type: ignore[return-value]


class _GeneralPath(Exception):
    """A bulk check found a value ``decode`` or ``to_arrow`` refuses: the batch goes through the
    general path, which says what and where."""


def _bases(counts: np.ndarray) -> np.ndarray:
    """Where each row's items start in a column of all rows' items, given how many each has."""
    return np.cumsum(counts) - counts


def _spans(whole: bytes, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    """A binary array over ``whole`` (no copy) whose element ``2 * i`` is
    ``whole[starts[i]:ends[i]]``, the odd ones what lies between, for ``take`` to gather from.
    The spans must be in order and must not overlap."""
    offsets = np.empty(2 * len(starts), dtype=np.int64)
    offsets[0::2] = starts
    offsets[1::2] = ends
    if not len(offsets):
        offsets = np.zeros(1, dtype=np.int64)
    return pa.Array.from_buffers(
        pa.large_binary(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(whole)]
    )


def _joined(whole: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The spans ``whole[starts[i]:ends[i]]``, in order and not overlapping, joined."""
    spans = _spans(whole, starts, ends).take(pa.array(2 * np.arange(len(starts))))
    return np.frombuffer(spans.buffers()[2] or b"", dtype=np.uint8)[: int((ends - starts).sum())]


def _gather(
    spans: pa.Array, numbers: np.ndarray, absent: np.ndarray | None, arrow_type: pa.DataType
) -> pa.Array:
    """The spans ``numbers`` of ``spans`` as an ``arrow_type`` array, null where ``absent``;
    ``_GeneralPath`` if a ``string`` is not UTF-8 (or holds a lone surrogate, which Spark
    strings cannot hold)."""
    indices = pa.array(2 * numbers, type=pa.int64(), mask=absent)
    try:
        return spans.take(indices).cast(arrow_type)
    except pa.ArrowInvalid:
        raise _GeneralPath from None


def _numbers(
    words: np.ndarray, first: np.ndarray, slots: np.ndarray, absent: np.ndarray
) -> np.ndarray:
    """The payloads at ``slots`` after ``first`` among ``words`` (integers or floating); 0 where
    ``absent``."""
    if absent.all():
        return np.zeros(len(slots), dtype=words.dtype)
    return np.where(absent, 0, words[np.where(absent, 0, first + slots)])


class _EntryValues(NamedTuple):
    """The columns of a map of entries (properties, a map body) or of a Stream body's values but
    their Strings, chars and byte arrays: ``payload_slots`` says which of its row's Strings and
    byte arrays each entry has (-1: none), ``chars`` the char each entry holds (None: none)."""

    names: pa.Array
    items: list[pa.Array]  # type, boolean, long, double
    payload_slots: np.ndarray
    chars: pa.Array | None


def _entry_values(
    entries: list[_Entry],
    kind: np.ndarray,
    first_number: np.ndarray,
    integers: np.ndarray,
    floating: np.ndarray,
) -> _EntryValues:
    """The values of entries each of which is ``entries[kind[i]]``, its numbers from
    ``first_number[i]`` on in ``integers`` and ``floating``: ``_GeneralPath`` unless every
    integer is in its type's range, every float a 32-bit float and every char one Spark holds
    (not a lone surrogate)."""

    def per_entry(name: str, dtype: Any = np.int64) -> np.ndarray:
        return np.asarray([getattr(entry, name) for entry in entries], dtype=dtype)[kind]

    kinds = pa.array(kind, type=pa.int64())
    integer_slots = per_entry("integer_slot")
    not_integer = integer_slots < 0
    longs = _numbers(integers, first_number, integer_slots, not_integer)
    if ((longs < per_entry("low")) | (longs > per_entry("high"))).any():
        raise _GeneralPath
    is_char = per_entry("char", np.bool_)
    chars = None
    if is_char.any():
        codes = longs[is_char]
        if ((codes >= 0xD800) & (codes <= 0xDFFF)).any():
            raise _GeneralPath  # to_arrow refuses a lone surrogate: Spark strings cannot hold it
        positions = np.cumsum(is_char) - 1
        chars = pa.array(list(map(chr, codes.tolist())), type=pa.string()).take(
            pa.array(positions, type=pa.int64(), mask=~is_char)
        )
        not_integer = not_integer | is_char
    floating_slots = per_entry("floating_slot")
    not_floating = floating_slots < 0
    doubles = _numbers(floating, first_number, floating_slots, not_floating)
    with np.errstate(over="ignore"):
        rounded = doubles.astype(np.float32).astype(np.float64)
    if (per_entry("float32", np.bool_) & (rounded != doubles) & ~np.isnan(doubles)).any():
        raise _GeneralPath
    return _EntryValues(
        names=pa.array([entry.name for entry in entries], type=pa.string()).take(kinds),
        items=[
            pa.array([entry.type_name for entry in entries], type=pa.string()).take(kinds),
            pa.array([entry.boolean for entry in entries], type=pa.bool_()).take(kinds),
            pa.array(longs, type=pa.int64(), mask=not_integer),
            pa.array(doubles, type=pa.float64(), mask=not_floating),
        ],
        payload_slots=per_entry("string_slot"),
        chars=chars,
    )


class _Columns:
    """The columns of a batch's fast rows, gathered in bulk from the rows' joined bytes."""

    def __init__(self, scanned: _Scanned) -> None:
        self.scanned = scanned
        self.rows = scanned.rows
        self.count = len(scanned.shapes)
        self.shapes = np.asarray(scanned.shapes, dtype=np.intp)
        self.whole = b"".join(scanned.messages)
        self.octets = np.frombuffer(self.whole, dtype=np.uint8)
        sizes = np.fromiter(map(len, scanned.messages), dtype=np.int64, count=self.count)
        self.starts = _bases(sizes)
        self.ends = self.starts + sizes
        self.lengths = np.asarray(scanned.string_lengths, dtype=np.int64)
        # Each row's strings in ``lengths``: header strings and property names from
        # ``first_string``, then String property values from ``first_value``.
        string_count = self.per_row(lambda row: row.head.string_count)
        value_count = self.per_row(lambda row: row.payload_lengths_size // 4)
        self.first_string = _bases(string_count + value_count)
        self.first_value = self.first_string + string_count
        sums = np.zeros(len(self.lengths) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=sums[1:])
        # Where the parts of each message are in ``whole`` (docs/wire-format.md).
        strings_at = self.starts + self.per_row(lambda row: row.head.strings_at)
        strings_end = strings_at + sums[self.first_value] - sums[self.first_string]
        correlation = np.zeros(self.count, dtype=np.int64)
        for position, raw in scanned.correlation_bytes.items():
            correlation[position] = 4 + len(raw)
        numbers_at = strings_end + correlation + self.per_row(lambda row: row.head.property_count)
        numbers_size = self.per_row(lambda row: row.numbers_size)
        values_at = numbers_at + numbers_size + 4 * value_count
        self.values_end = values_at + sums[self.first_value + value_count] - sums[self.first_value]
        row_of_string = np.repeat(np.arange(self.count), string_count + value_count)
        string_starts = sums[:-1] + np.where(
            np.arange(len(self.lengths)) >= self.first_value[row_of_string],
            (values_at - sums[self.first_value])[row_of_string],
            (strings_at - sums[self.first_string])[row_of_string],
        )
        self.strings = _spans(self.whole, string_starts, string_starts + self.lengths)
        # Every row's int64 and float64 payloads, joined: whole 8-byte words, one after another.
        self.first_number = _bases(numbers_size // 8)
        words = _joined(self.whole, numbers_at, numbers_at + numbers_size)
        self.integers = words.view(">i8").astype(np.int64)
        self.floating = words.view(">f8").astype(np.float64)

    def per_row(self, attribute: Callable[[_Row], Any], dtype: Any = np.int64) -> np.ndarray:
        """``attribute(shape)`` of each fast row's shape."""
        return np.asarray([attribute(row) for row in self.rows], dtype=dtype)[self.shapes]

    def per_row_arrow(self, attribute: Callable[[_Row], Any], arrow_type: pa.DataType) -> pa.Array:
        """``attribute(shape)`` of each fast row's shape, as an Arrow array."""
        if len(self.rows) == 1:
            return pa.repeat(pa.scalar(attribute(self.rows[0]), arrow_type), self.count)
        values = pa.array([attribute(row) for row in self.rows], type=arrow_type)
        return values.take(pa.array(self.shapes, type=pa.int64()))

    def numbers(
        self, words: np.ndarray, rows: np.ndarray, slots: np.ndarray, absent: np.ndarray
    ) -> np.ndarray:
        """The payloads at ``slots`` among the numbers of ``rows``, from ``words`` (integers or
        floating); 0 where ``absent``."""
        return _numbers(words, self.first_number[rows], slots, absent)

    def header_string(self, column: str) -> pa.Array:
        """A header String column (``text`` included), null where the header is not set."""
        slots = self.per_row(lambda row: row.head.slots[column])
        absent = slots < 0
        if absent.all():
            return pa.nulls(self.count, pa.string())
        return _gather(self.strings, self.first_string + slots, absent, pa.string())

    def destination(self, column: str) -> pa.Array:
        """``destination`` or ``reply_to``: ``queue://name`` and the like. ``decode`` refuses an
        empty name."""
        slots = self.per_row(lambda row: row.head.slots[column])
        present = slots >= 0
        if not present.any():
            return pa.nulls(self.count, pa.string())
        if (self.lengths[(self.first_string + slots)[present]] == 0).any():
            raise _GeneralPath
        schemes = self.per_row_arrow(lambda row: getattr(row.head, f"{column}_scheme"), pa.string())
        # Imported here, where a task needs it: the driver's processes import this module too.
        import pyarrow.compute as pc

        return pc.binary_join_element_wise(schemes, self.header_string(column), "")

    def correlation(self) -> tuple[pa.Array, pa.Array]:
        """``correlation_id`` and ``correlation_id_bytes``."""
        texts = self.header_string("correlation_id")
        given_as_bytes = self.scanned.correlation_bytes
        if not given_as_bytes:
            return texts, pa.nulls(self.count, pa.binary())
        # As get_jms_correlation_id() reads a correlation ID set as bytes.
        text_values = texts.to_pylist()
        raw_values: list[bytes | None] = [None] * self.count
        for position, raw in given_as_bytes.items():
            text_values[position] = raw.decode("utf-8", "replace")
            raw_values[position] = raw
        return pa.array(text_values, type=pa.string()), pa.array(raw_values, type=pa.binary())

    def properties(self) -> pa.Array:
        """``properties``, every integer in its type's range, every float a 32-bit float."""
        entries = [entry for row in self.rows for entry in row.entries]
        shape_counts = np.asarray([len(row.entries) for row in self.rows], dtype=np.int64)
        entry_counts = shape_counts[self.shapes]
        offsets = np.zeros(self.count + 1, dtype=np.int64)
        np.cumsum(entry_counts, out=offsets[1:])
        total = int(offsets[-1])
        entry_row = np.repeat(np.arange(self.count), entry_counts)
        # Which of the shapes' entries each entry of the column is.
        entry_kind = np.repeat(
            _bases(shape_counts)[self.shapes] - offsets[:-1], entry_counts
        ) + np.arange(total)

        values = _entry_values(
            entries, entry_kind, self.first_number[entry_row], self.integers, self.floating
        )
        not_string = values.payload_slots < 0
        texts = (
            pa.nulls(total, pa.string())
            if not_string.all()
            else _gather(
                self.strings,
                self.first_value[entry_row] + values.payload_slots,
                not_string,
                pa.string(),
            )
        )
        items = pa.StructArray.from_arrays(
            [*values.items, texts],
            fields=_PROPERTY_VALUE_FIELDS,
        )
        return pa.MapArray.from_arrays(
            pa.array(offsets.astype(np.int32)), values.names, items, type=_PROPERTIES_TYPE
        )

    def map_body(self) -> pa.Array:
        """``map``: null but for the map bodies, every integer in its type's range, every float
        a 32-bit float, every String UTF-8."""
        if not self.scanned.maps:
            return pa.nulls(self.count, _MAP_TYPE)
        offsets, names, items, absent = self._body_values(self.scanned.maps)
        return pa.MapArray.from_arrays(offsets, names, items, type=_MAP_TYPE, mask=absent)

    def stream_body(self) -> pa.Array:
        """``stream``: null but for the Stream bodies, their values checked as ``map_body``'s."""
        if not self.scanned.streams:
            return pa.nulls(self.count, _STREAM_TYPE)
        offsets, _, items, absent = self._body_values(self.scanned.streams)
        return pa.ListArray.from_arrays(offsets, items, type=_STREAM_TYPE, mask=absent)

    def _body_values(
        self, bodies: dict[int, tuple[int, int, tuple[int, ...]]]
    ) -> tuple[pa.Array, pa.Array, pa.StructArray, pa.Array]:
        """The offsets, entry names, values and absent rows of the column of the map or
        Stream bodies ``bodies`` (``_Scanned.maps`` or ``streams``)."""
        shapes = self.scanned.body_shapes
        size = len(bodies)
        rows = np.fromiter(bodies, np.int64, size)
        shape = np.fromiter((found[0] for found in bodies.values()), np.intp, size)

        def per_body(attribute: Callable[[_BodyShape], int]) -> np.ndarray:
            return np.asarray([attribute(entries) for entries in shapes], np.int64)[shape]

        body_at = np.fromiter((found[1] for found in bodies.values()), np.int64, size)
        numbers_at = self.starts[rows] + body_at + per_body(lambda entries: entries.numbers_at)
        numbers_size = per_body(lambda entries: entries.numbers_size)
        words = _joined(self.whole, numbers_at, numbers_at + numbers_size)
        integers = words.view(">i8").astype(np.int64)
        floating = words.view(">f8").astype(np.float64)
        first_number = _bases(numbers_size // 8)
        # The String and byte array values: after the numbers and their lengths.
        payload_count = per_body(lambda entries: entries.payload_lengths_size // 4)
        payload = np.fromiter(
            itertools.chain.from_iterable(found[2] for found in bodies.values()), np.int64
        )
        first_payload = _bases(payload_count)
        sums = np.zeros(len(payload) + 1, dtype=np.int64)
        np.cumsum(payload, out=sums[1:])
        body_of_payload = np.repeat(np.arange(size), payload_count)
        payload_starts = (numbers_at + numbers_size + 4 * payload_count - sums[first_payload])[
            body_of_payload
        ] + sums[:-1]
        spans = _spans(self.whole, payload_starts, payload_starts + payload)

        entries = [entry for entries in shapes for entry in entries.entries]
        binary = np.asarray([flag for entries in shapes for flag in entries.binary], np.bool_)
        null = np.asarray([flag for entries in shapes for flag in entries.null], np.bool_)
        shape_counts = np.asarray([len(entries.entries) for entries in shapes], np.int64)
        entry_counts = shape_counts[shape]
        total = int(entry_counts.sum())
        entry_body = np.repeat(np.arange(size), entry_counts)
        entry_kind = np.repeat(
            _bases(shape_counts)[shape] - _bases(entry_counts), entry_counts
        ) + np.arange(total)

        values = _entry_values(entries, entry_kind, first_number[entry_body], integers, floating)
        is_binary = binary[entry_kind]
        at = first_payload[entry_body] + values.payload_slots
        not_string = (values.payload_slots < 0) | is_binary
        not_bytes = (values.payload_slots < 0) | ~is_binary
        texts = (
            pa.nulls(total, pa.string())
            if not_string.all()
            else _gather(spans, at, not_string, pa.string())
        )
        if values.chars is not None:
            # Imported here, where a task needs it: the driver's processes import this module.
            import pyarrow.compute as pc

            texts = pc.coalesce(texts, values.chars)
        raw = (
            pa.nulls(total, pa.binary())
            if not_bytes.all()
            else _gather(spans, at, not_bytes, pa.binary())
        )
        items = pa.StructArray.from_arrays(
            [*values.items, texts, raw],
            fields=_MAP_VALUE_FIELDS,
            mask=pa.array(null[entry_kind]),
        )
        counts = np.zeros(self.count, dtype=np.int64)
        counts[rows] = entry_counts
        offsets = np.zeros(self.count + 1, dtype=np.int32)
        np.cumsum(counts, out=offsets[1:])
        absent = np.ones(self.count, dtype=np.bool_)
        absent[rows] = False
        return pa.array(offsets), values.names, items, pa.array(absent)

    def delivery_count(self) -> pa.Array:
        slots = self.per_row(lambda row: row.delivery_count_slot)
        absent = slots < 0
        counts = self.numbers(self.integers, np.arange(self.count), slots, absent)
        if ((counts < INT_RANGE[0]) | (counts > INT_RANGE[1])).any():
            raise _GeneralPath
        return pa.array(counts.astype(np.int32), type=pa.int32(), mask=absent)

    def times(self) -> list[pa.Array]:
        """``timestamp``, ``expiration`` and ``delivery_time``."""
        raw = _joined(self.whole, self.starts + _TIMES.start, self.starts + _TIMES.stop)
        times = raw.view(">i8").astype(np.int64).reshape(self.count, 3)
        return [pa.array(np.ascontiguousarray(times[:, column])) for column in range(3)]

    def bodies(self) -> tuple[pa.Array, pa.Array]:
        """``bytes`` and ``object``: the blob after the property values, when there is one."""
        body = self.per_row(lambda row: row.head.body)
        is_bytes = body == _BYTES_BODY
        has_object = np.zeros(self.count, dtype=np.bool_)
        is_object = body == _OBJECT_BODY
        has_object[is_object] = self.octets[self.values_end[is_object]] == 1
        body_starts = np.where(
            is_bytes, self.values_end + 4, np.where(has_object, self.values_end + 5, self.ends)
        )
        spans = _spans(self.whole, body_starts, self.ends)
        every_row = np.arange(self.count)
        return tuple(  # type: ignore[return-value]
            _gather(spans, every_row, ~present, pa.binary())
            if present.any()
            else pa.nulls(self.count, pa.binary())
            for present in (is_bytes, has_object)
        )

    def batch(self) -> list[pa.Array]:
        """Every column of ``MESSAGE_ARROW_SCHEMA``; ``_GeneralPath`` when a check fails."""
        correlation_id, correlation_id_bytes = self.correlation()
        timestamp, expiration, delivery_time = self.times()
        bytes_body, object_body = self.bodies()
        by_name = {
            "message_id": self.header_string("message_id"),
            "timestamp": timestamp,
            "correlation_id": correlation_id,
            "correlation_id_bytes": correlation_id_bytes,
            "destination": self.destination("destination"),
            "reply_to": self.destination("reply_to"),
            "delivery_mode": self.per_row_arrow(lambda row: row.head.delivery_mode, pa.string()),
            "priority": self.per_row_arrow(lambda row: row.head.priority, pa.int32()),
            "expiration": expiration,
            "delivery_time": delivery_time,
            "redelivered": self.per_row_arrow(lambda row: row.head.redelivered, pa.bool_()),
            "type": self.header_string("type"),
            "delivery_count": self.delivery_count(),
            "properties": self.properties(),
            "body_type": self.per_row_arrow(lambda row: row.head.body_type, pa.string()),
            "text": self.header_string("text"),
            "bytes": bytes_body,
            "map": self.map_body(),
            "stream": self.stream_body(),
            "object": object_body,
        }
        return [by_name[name] for name in MESSAGE_ARROW_SCHEMA.names]


def _one_batch(table: pa.Table) -> pa.RecordBatch:
    """The table as one record batch (``to_arrow`` gives a table)."""
    return pa.RecordBatch.from_arrays(
        [column.combine_chunks() for column in table.columns], schema=MESSAGE_ARROW_SCHEMA
    )


def _general_path(messages: Sequence[bytes]) -> pa.RecordBatch:
    """``to_arrow`` of every message ``decode`` reads, or the first refusal of either."""
    decoded = []
    for index, data in enumerate(messages):
        try:
            decoded.append(decode(data))
        except MessageFormatException as error:
            raise MessageFormatException(f"message {index}: {error}") from error
    return _one_batch(to_arrow(decoded))


def encoded_to_arrow(messages: Sequence[bytes]) -> pa.RecordBatch:
    """The messages encoded in ``messages`` (``jms.message.codec`` bytes) as one record batch in
    ``MESSAGE_ARROW_SCHEMA``: exactly ``to_arrow([decode(m) for m in messages])``, faster.
    ``MessageFormatException`` naming the message's index if ``decode`` or ``to_arrow`` refuses
    one."""
    if len(messages) < _FEWEST_FOR_BULK:
        return _general_path(messages)
    scanned = _scan(messages)
    if scanned is None:  # decode refused one; the general path names the first refused
        return _general_path(messages)
    if not scanned.shapes:  # decode read them all, in order
        return _one_batch(to_arrow(message for _, message in scanned.general))
    try:
        fast = _Columns(scanned).batch()
    except _GeneralPath:
        return _general_path(messages)
    if not scanned.general:
        return pa.RecordBatch.from_arrays(fast, schema=MESSAGE_ARROW_SCHEMA)
    try:
        general = _one_batch(to_arrow(message for _, message in scanned.general))
    except MessageFormatException:
        return _general_path(messages)  # to name the message by its index in the whole batch
    general_positions = np.asarray([index for index, _ in scanned.general], dtype=np.int64)
    fast_positions = np.setdiff1d(np.arange(len(messages)), general_positions)
    order = pa.array(np.argsort(np.concatenate([fast_positions, general_positions])))
    return pa.RecordBatch.from_arrays(
        [
            pa.concat_arrays([fast_column, general_column]).take(order)
            for fast_column, general_column in zip(fast, general.columns, strict=True)
        ],
        schema=MESSAGE_ARROW_SCHEMA,
    )
