"""Codec bytes straight to Arrow: ``encoded_to_arrow``, the Spark source's decoder.

``encoded_to_arrow(messages)`` gives exactly what ``to_arrow([decode(m) for m in messages])`` gives,
as one record batch, without building a ``Message`` per message. Per message, a short loop reads
only the fixed header and the length columns of the codec format (docs/wire-format.md) with
precompiled ``Struct``s and keeps a few slices of the input; the rest is done once per batch, in
C: every string of every message (header strings, text, property names) goes into one Arrow
buffer whose UTF-8 is checked by one cast, integer and floating payloads are read by numpy from
their joined big-endian bytes, and each column is gathered from those with ``take``.

What the messages of one application share — header flags, which header strings travel,
property names and types — is a *shape*, validated once per batch (``_Head``, ``_Row``), so that
checking a message's shape costs a dictionary look-up. Values are checked as ``decode`` checks them
(integer ranges, 32-bit floats, UTF-8, non-empty destination names) in bulk after the loop.

``decode`` is where untrusted bytes enter; this module must refuse what it refuses, in its words,
so it never words a refusal itself. A message the loop does not read (a Map or Stream body, an
unusual shape, anything malformed) goes through ``decode`` and ``to_arrow`` (the *general path*),
and a batch whose bulk checks fail is converted again on the general path, which raises the error
``decode`` or ``to_arrow`` gives, naming the index of the message in the batch.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jms.errors import MessageFormatException
from jms.message import Message
from jms.message.codec import (
    _BODY_CLASSES,
    _BYTE,
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
    _SHORT,
    _STRING,
    _TRUE,
    FORMAT_VERSION,
    decode,
)
from jms.message.message import JMSX_PROPERTY_TYPES, property_name_error
from jms.spark.rows import MESSAGE_ARROW_SCHEMA, to_arrow
from jms.types import (
    BYTE_RANGE,
    INT_RANGE,
    LONG_RANGE,
    SHORT_RANGE,
    Byte,
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

_DELIVERY_COUNT: Final = "JMSXDeliveryCount"
_DELIVERY_MODE_NAMES: Final = {1: "NON_PERSISTENT", 2: "PERSISTENT"}

# Body tags the loop reads (a text travels in the string column); Map and Stream bodies take the
# general path.
_NO_BODY, _TEXT_BODY, _BYTES_BODY, _OBJECT_BODY = 0, 1, 2, 5
_BODIES_READ: Final = frozenset({_NO_BODY, _TEXT_BODY, _BYTES_BODY, _OBJECT_BODY})

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

_PROPERTIES_TYPE: Final = MESSAGE_ARROW_SCHEMA.field("properties").type
_PROPERTY_VALUE_FIELDS: Final = list(_PROPERTIES_TYPE.item_type)


@dataclass(frozen=True, slots=True)
class _Entry:
    """How one property of a shape lands in the ``properties`` map: the slot of its name in the
    message's string column, its Java type name, its boolean (the tag says it), where its payload
    sits among the message's numbers or String values (-1: elsewhere), the range an integer must
    be in, and whether a floating payload must be a 32-bit float."""

    name_slot: int
    type_name: str
    boolean: bool | None
    integer_slot: int
    floating_slot: int
    string_slot: int
    low: int
    high: int
    float32: bool


@dataclass(frozen=True, slots=True)
class _Row:
    """A whole message shape: its head and its property names and types. ``number`` is its place
    in the batch's list of shapes."""

    number: int
    head: _Head
    numbers_size: int  # bytes of the int64 and float64 payloads
    payload_lengths: struct.Struct  # the lengths of the String property values
    entries: tuple[_Entry, ...]
    delivery_count_slot: int  # among the numbers; -1 without JMSXDeliveryCount


@dataclass(slots=True)
class _Head:
    """What a fixed header says, validated: the slot of each header string in the string column
    (-1: absent) and where the columns after the fixed header start."""

    property_count: int
    string_count: int
    string_lengths: struct.Struct
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
        or delivery_mode not in _DELIVERY_MODE_NAMES
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
        string_lengths=struct.Struct(f">{string_count}I"),
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
        delivery_mode=_DELIVERY_MODE_NAMES[delivery_mode],
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
    # A UnicodeDecodeError is a ValueError too.
    decoded = [
        names[start:end].decode("utf-8", "surrogatepass")
        for start, end in itertools.pairwise(bounds)
    ]
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
    # Payload columns in the codec's order: integers, then floating values, then Strings.
    integers = [i for i, tag in enumerate(tags) if tag in _INTEGER_RANGES]
    floating = [i for i, tag in enumerate(tags) if tag in _FLOATING_TAGS]
    strings = [i for i, tag in enumerate(tags) if tag == _STRING]
    number_slot = {position: slot for slot, position in enumerate(integers + floating)}
    string_slot = {position: slot for slot, position in enumerate(strings)}
    name_slots_from = head.string_count - head.property_count
    entries = []
    delivery_count_slot = -1
    for position, (name, tag) in enumerate(zip(decoded, tags, strict=True)):
        if name == _DELIVERY_COUNT:  # the JMSX type rules made it an int
            delivery_count_slot = number_slot[position]
            continue
        low, high = _INTEGER_RANGES.get(tag, LONG_RANGE)
        entries.append(
            _Entry(
                name_slot=name_slots_from + position,
                type_name=_PROPERTY_TYPES[tag][1],
                boolean=tag == _TRUE if tag in (_FALSE, _TRUE) else None,
                integer_slot=number_slot[position] if tag in _INTEGER_RANGES else -1,
                floating_slot=number_slot[position] if tag in _FLOATING_TAGS else -1,
                string_slot=string_slot.get(position, -1),
                low=low,
                high=high,
                float32=tag == _FLOAT,
            )
        )
    return _Row(
        number=number,
        head=head,
        numbers_size=8 * len(number_slot),
        payload_lengths=struct.Struct(f">{len(strings)}I"),
        entries=tuple(entries),
        delivery_count_slot=delivery_count_slot,
    )


_UNSEEN: Final = object()
_NO_PROPERTIES: Final = (b"", b"", b"")


@dataclass(slots=True)
class _Scanned:
    """What the loop kept of the messages it read, the *fast rows*, in batch order; and the
    messages ``decode`` read, with their index in the batch."""

    rows: list[_Row] = field(default_factory=list)  # the batch's shapes, by number
    shapes: list[int] = field(default_factory=list)  # per fast row: its shape's number
    times: list[bytes] = field(default_factory=list)  # per fast row: its three big-endian times
    strings: list[bytes] = field(default_factory=list)  # per fast row: its string column
    string_lengths: list[int] = field(default_factory=list)
    numbers: list[bytes] = field(default_factory=list)  # int64 and float64 property payloads
    values: list[bytes] = field(default_factory=list)  # String property payloads
    value_lengths: list[int] = field(default_factory=list)
    correlation_bytes: dict[int, bytes] = field(default_factory=dict)  # by fast row
    bytes_bodies: dict[int, bytes] = field(default_factory=dict)
    object_bodies: dict[int, bytes] = field(default_factory=dict)
    general: list[tuple[int, Message]] = field(default_factory=list)


def _scan(messages: Sequence[bytes]) -> _Scanned | None:
    """Read what the loop can read and ``decode`` the rest; None when ``decode`` refuses one."""
    scanned = _Scanned()
    heads: dict[tuple[bytes, int], Any] = {}
    rows = scanned.rows
    # Bound methods, looked up once: this loop runs per message.
    add_shape = scanned.shapes.append
    add_times = scanned.times.append
    add_strings = scanned.strings.append
    add_string_lengths = scanned.string_lengths.extend
    add_numbers = scanned.numbers.append
    add_values = scanned.values.append
    add_value_lengths = scanned.value_lengths.extend
    for index, data in enumerate(messages):
        if type(data) is bytes and len(data) >= _FIXED_SIZE:
            size = len(data)
            shape, property_count = _SHAPE.unpack_from(data)
            head = heads.get((shape, property_count), _UNSEEN)
            if head is _UNSEEN:
                head = heads[shape, property_count] = _head(shape, property_count)
            try:
                row = None if head is None else _UNSEEN
                if head is not None:
                    lengths = head.string_lengths.unpack_from(data, _FIXED_SIZE)
                    strings_end = head.strings_at + sum(lengths)
                    at = strings_end
                    if head.correlation_bytes:
                        (correlation_length,) = _U32.unpack_from(data, at)
                        correlation_at = at + 4
                        at = correlation_at + correlation_length
                    if property_count:
                        tags_at = at
                        at += property_count
                        names_at = strings_end - sum(lengths[-property_count:])
                        row_key = (
                            data[head.name_lengths_at : head.strings_at],
                            data[names_at:strings_end],
                            data[tags_at:at],
                        )
                    else:
                        row_key = _NO_PROPERTIES
                    row = head.rows.get(row_key, _UNSEEN)
                    if row is _UNSEEN:
                        row = head.rows[row_key] = _row(len(rows), head, *row_key)
                        if row is not None:
                            rows.append(row)
                if row is not None:
                    numbers_at = at
                    at += row.numbers_size
                    payload_lengths = row.payload_lengths.unpack_from(data, at)
                    payloads_at = at + row.payload_lengths.size
                    payloads_end = at = payloads_at + sum(payload_lengths)
                    body = head.body
                    body_at = -1
                    if body == _BYTES_BODY:
                        (body_length,) = _U32.unpack_from(data, at)
                        body_at = at + 4
                        at = body_at + body_length
                    elif body == _OBJECT_BODY:
                        present = data[at] if at < size else -1
                        if present == 1:
                            (body_length,) = _U32.unpack_from(data, at + 1)
                            body_at = at + 5
                            at = body_at + body_length
                        else:
                            at += 1 if present == 0 else size + 1  # not 0 or 1: refused
                    if at == size:
                        fast_row = len(scanned.shapes)
                        add_shape(row.number)
                        add_times(data[_TIMES])
                        add_strings(data[head.strings_at : strings_end])
                        add_string_lengths(lengths)
                        if head.correlation_bytes:
                            scanned.correlation_bytes[fast_row] = data[
                                correlation_at : correlation_at + correlation_length
                            ]
                        if row.numbers_size:
                            add_numbers(data[numbers_at : numbers_at + row.numbers_size])
                        if payload_lengths:
                            add_values(data[payloads_at:payloads_end])
                            add_value_lengths(payload_lengths)
                        if body == _BYTES_BODY:
                            scanned.bytes_bodies[fast_row] = data[body_at:at]
                        elif body_at >= 0:
                            scanned.object_bodies[fast_row] = data[body_at:at]
                        continue
            except struct.error:
                pass  # cut short: decode says where
        try:
            message = decode(data)
        except MessageFormatException:
            return None
        scanned.general.append((index, message))
    return scanned


def _string_array(blobs: list[bytes], lengths: list[int]) -> pa.Array | None:
    """The strings of ``lengths`` in the joined ``blobs``, or None if one is not UTF-8 (a lone
    surrogate included: Spark strings cannot hold one)."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=offsets[1:])
    raw = pa.Array.from_buffers(
        pa.large_binary(),
        len(lengths),
        [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(blobs))],
    )
    try:
        return raw.cast(pa.large_string())
    except pa.ArrowInvalid:
        return None


def _gather(strings: pa.Array, positions: np.ndarray, absent: np.ndarray | None) -> pa.Array:
    """The strings at ``positions`` as a ``string`` array, null where ``absent``."""
    indices = pa.array(positions, type=pa.int64(), mask=absent)
    return strings.take(indices).cast(pa.string())


def _numbers_at(values: np.ndarray, positions: np.ndarray, absent: np.ndarray) -> np.ndarray:
    """``values[positions]``, 0 where ``absent`` (whose positions point nowhere)."""
    if absent.all():
        return np.zeros(len(positions), dtype=values.dtype)
    return np.where(absent, 0, values[np.where(absent, 0, positions)])


def _bases(counts: np.ndarray) -> np.ndarray:
    """Where each row's items start in a column of all rows' items, given how many each has."""
    return np.cumsum(counts) - counts


def _sparse(values: dict[int, bytes], count: int) -> pa.Array:
    """A binary column of ``count`` rows, null but where ``values`` (by row) says otherwise."""
    if not values:
        return pa.nulls(count, pa.binary())
    column: list[bytes | None] = [None] * count
    for position, value in values.items():
        column[position] = value
    return pa.array(column, type=pa.binary())


def _properties(
    scanned: _Scanned,
    shapes: np.ndarray,
    strings: pa.Array,
    string_bases: np.ndarray,
    integers: np.ndarray,
    floating: np.ndarray,
    number_bases: np.ndarray,
) -> pa.Array | None:
    """The ``properties`` column of the fast rows, or None if a value is one ``decode`` refuses."""
    rows = scanned.rows
    values = _string_array(scanned.values, scanned.value_lengths)
    if values is None:
        return None
    value_bases = _bases(np.asarray([row.payload_lengths.size // 4 for row in rows])[shapes])
    entries = [entry for row in rows for entry in row.entries]
    shape_counts = np.asarray([len(row.entries) for row in rows], dtype=np.int64)
    entry_counts = shape_counts[shapes]
    offsets = np.zeros(len(shapes) + 1, dtype=np.int64)
    np.cumsum(entry_counts, out=offsets[1:])
    total = int(offsets[-1])
    entry_row = np.repeat(np.arange(len(shapes)), entry_counts)
    # Which of the shapes' entries each entry of the column is.
    entry_kind = np.repeat(_bases(shape_counts)[shapes] - offsets[:-1], entry_counts) + np.arange(
        total
    )

    def per_entry(name: str, dtype: Any) -> np.ndarray:
        return np.asarray([getattr(entry, name) for entry in entries], dtype=dtype)[entry_kind]

    kinds = pa.array(entry_kind, type=pa.int64())
    names = _gather(strings, string_bases[entry_row] + per_entry("name_slot", np.int64), None)
    type_names = pa.array([entry.type_name for entry in entries], type=pa.string()).take(kinds)
    booleans = pa.array([entry.boolean for entry in entries], type=pa.bool_()).take(kinds)

    integer_slots = per_entry("integer_slot", np.int64)
    not_integer = integer_slots < 0
    longs = _numbers_at(integers, number_bases[entry_row] + integer_slots, not_integer)
    if (
        ~not_integer
        & ((longs < per_entry("low", np.int64)) | (longs > per_entry("high", np.int64)))
    ).any():
        return None

    floating_slots = per_entry("floating_slot", np.int64)
    not_floating = floating_slots < 0
    doubles = _numbers_at(floating, number_bases[entry_row] + floating_slots, not_floating)
    with np.errstate(over="ignore"):
        rounded = doubles.astype(np.float32).astype(np.float64)
    if (per_entry("float32", np.bool_) & (rounded != doubles) & ~np.isnan(doubles)).any():
        return None

    string_slots = per_entry("string_slot", np.int64)
    texts = _gather(values, value_bases[entry_row] + string_slots, string_slots < 0)
    items = pa.StructArray.from_arrays(
        [
            type_names,
            booleans,
            pa.array(longs, type=pa.int64(), mask=not_integer),
            pa.array(doubles, type=pa.float64(), mask=not_floating),
            texts,
        ],
        fields=_PROPERTY_VALUE_FIELDS,
    )
    return pa.MapArray.from_arrays(
        pa.array(offsets.astype(np.int32)), names, items, type=_PROPERTIES_TYPE
    )


def _fast_columns(scanned: _Scanned) -> list[pa.Array] | None:
    """The columns of the fast rows, or None if a bulk check finds something ``decode`` or
    ``to_arrow`` refuses (the general path then says what and where)."""
    rows = scanned.rows
    count = len(scanned.shapes)
    shapes = np.asarray(scanned.shapes, dtype=np.intp)
    shape_indices = pa.array(shapes, type=pa.int64())

    def per_shape(values: list[Any], arrow_type: pa.DataType) -> pa.Array:
        return pa.array(values, type=arrow_type).take(shape_indices)

    strings = _string_array(scanned.strings, scanned.string_lengths)
    if strings is None:
        return None
    string_lengths = np.asarray(scanned.string_lengths, dtype=np.int64)
    string_bases = _bases(np.asarray([row.head.string_count for row in rows])[shapes])
    columns: dict[str, pa.Array] = {}
    for column, _ in _HEADER_STRINGS:
        slots = np.asarray([row.head.slots[column] for row in rows], dtype=np.int64)[shapes]
        absent = slots < 0
        positions = string_bases + slots
        columns[column] = _gather(strings, positions, absent)
        if column in ("destination", "reply_to"):
            if (string_lengths[positions[~absent]] == 0).any():
                return None  # decode refuses a destination without a name
            schemes = per_shape(
                [getattr(row.head, f"{column}_scheme") for row in rows], pa.string()
            )
            columns[column] = pc.binary_join_element_wise(schemes, columns[column], "")

    numbers = b"".join(scanned.numbers)
    integers = np.frombuffer(numbers, dtype=">i8").astype(np.int64)
    floating = np.frombuffer(numbers, dtype=">f8").astype(np.float64)
    number_bases = _bases(np.asarray([row.numbers_size // 8 for row in rows])[shapes])
    properties = _properties(
        scanned, shapes, strings, string_bases, integers, floating, number_bases
    )
    if properties is None:
        return None

    count_slots = np.asarray([row.delivery_count_slot for row in rows], dtype=np.int64)[shapes]
    no_count = count_slots < 0
    delivery_counts = _numbers_at(integers, number_bases + count_slots, no_count)
    if ((delivery_counts < INT_RANGE[0]) | (delivery_counts > INT_RANGE[1])).any():
        return None

    correlation = columns["correlation_id"]
    if scanned.correlation_bytes:
        # As get_jms_correlation_id() reads a correlation ID set as bytes.
        texts = correlation.to_pylist()
        for position, raw in scanned.correlation_bytes.items():
            texts[position] = raw.decode("utf-8", "replace")
        correlation = pa.array(texts, type=pa.string())

    times = np.frombuffer(b"".join(scanned.times), dtype=">i8").reshape(count, 3)
    timestamp, expiration, delivery_time = (
        pa.array(np.ascontiguousarray(times[:, column]).astype(np.int64)) for column in range(3)
    )
    by_name = {
        "message_id": columns["message_id"],
        "timestamp": timestamp,
        "correlation_id": correlation,
        "correlation_id_bytes": _sparse(scanned.correlation_bytes, count),
        "destination": columns["destination"],
        "reply_to": columns["reply_to"],
        "delivery_mode": per_shape([row.head.delivery_mode for row in rows], pa.string()),
        "priority": per_shape([row.head.priority for row in rows], pa.int32()),
        "expiration": expiration,
        "delivery_time": delivery_time,
        "redelivered": per_shape([row.head.redelivered for row in rows], pa.bool_()),
        "type": columns["type"],
        "delivery_count": pa.array(
            delivery_counts.astype(np.int32), type=pa.int32(), mask=no_count
        ),
        "properties": properties,
        "body_type": per_shape([row.head.body_type for row in rows], pa.string()),
        "text": columns["text"],
        "bytes": _sparse(scanned.bytes_bodies, count),
        "map": pa.nulls(count, MESSAGE_ARROW_SCHEMA.field("map").type),
        "stream": pa.nulls(count, MESSAGE_ARROW_SCHEMA.field("stream").type),
        "object": _sparse(scanned.object_bodies, count),
    }
    return [by_name[name] for name in MESSAGE_ARROW_SCHEMA.names]


def _one_batch(table: pa.Table) -> pa.RecordBatch:
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
            raise MessageFormatException(f"message {index} of the batch: {error}") from error
    return _one_batch(to_arrow(decoded))


def encoded_to_arrow(messages: Sequence[bytes]) -> pa.RecordBatch:
    """The messages encoded in ``messages`` (``jms.message.codec`` bytes) as one record batch in
    ``MESSAGE_ARROW_SCHEMA``: exactly ``to_arrow([decode(m) for m in messages])``, faster.
    ``MessageFormatException`` naming the message's index if ``decode`` or ``to_arrow`` refuses
    one."""
    scanned = _scan(messages)
    if scanned is None:
        return _general_path(messages)
    if not scanned.shapes:
        return _general_path(messages)
    fast = _fast_columns(scanned)
    if fast is None:
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
