"""Arrow rows straight to codec bytes: ``arrow_to_encoded``, the Spark sink's encoder.

``arrow_to_encoded(batch, destination)`` gives exactly ``[encode(m) for m in from_arrow(batch)]``
(each message's destination replaced by ``destination`` when one is given) for a batch in
``MESSAGE_ARROW_SCHEMA`` whose rows share one *shape*, and builds it column by column in C: numpy
lays out the fixed-width parts of every message (the fixed header, the string lengths, the
property tags and numbers, docs/wire-format.md), and Arrow's element-wise binary join puts each
message together from those parts and the string columns, with no Python step per row. A
sink's rows usually share their shape: one body type, the same header fields present, the same
property names and Java types in the same order.

A batch whose rows have several shapes is encoded shape by shape (the rows of each taken out,
encoded, and put back in their places) when its shapes hold ``ROWS_PER_SHAPE`` rows or more on
average: messages whose properties differ from row to row (an optional property, a property
column with nulls) are the common case of that.

The shape taken: one body type in every row — none, a text (present in every row or in none),
bytes, an object (serialized or none, row by row), a map whose entries have the same names
(non-empty, distinct) and types in the same order, or a Stream whose values have the same types
in the same order (a body value: a property's type, char, byte[] or a null); each of message
ID, correlation ID (a String, or bytes), type and reply-to present in every row or in none; no
delivery count (a sink never carries one over); every row's properties the same names (valid and distinct; a JMSX one of the
type the spec gives it, not JMSXDeliveryCount) with the same types (boolean, byte, short, int,
long, float, double or String), in the same order. Every value is checked and converted as
``from_arrow`` does it (priorities 0-9, delivery mode names, integer ranges, destinations that
parse, a char one UTF-16 code unit, a float rounded to 32 bits and within a float's range), in
bulk. Any other batch (or a shape of it) gives None, and the caller takes the general path,
``from_arrow`` and ``encode``, which gives the same bytes or ``from_arrow``'s own refusal: this
module never words one. Property tests hold the two paths to the same bytes.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jms.errors import JMSException
from jms.message import Destination
from jms.message.codec import (
    _BYTE,
    _BYTES,
    _CHAR,
    _DESTINATION_TAG,
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
    _LONG,
    _MAGIC,
    _NO_DESTINATION,
    _NULL,
    _SHORT,
    _STRING,
    _TRUE,
    FORMAT_VERSION,
)
from jms.message.message import JMSX_PROPERTY_TYPES, property_name_error
from jms.types import BYTE_RANGE, INT_RANGE, JAVA_TYPE_NAMES, SHORT_RANGE

__all__ = ["ROWS_PER_SHAPE", "arrow_to_encoded"]

#: A batch of several shapes is encoded shape by shape when it holds at least this many rows per
#: shape: each shape costs about 0.5 ms of fixed work, what some 30 rows cost the general path.
ROWS_PER_SHAPE: Final = 32

# The fixed header (``codec._FIXED``, big-endian, unpadded) as a numpy record.
_HEADER: Final = np.dtype(
    [
        ("magic", "S2"),
        ("version", "u1"),
        ("body", "u1"),
        ("mode", "u1"),
        ("priority", "u1"),
        ("redelivered", "u1"),
        ("bits", "u1"),
        ("destination_kind", "u1"),
        ("reply_to_kind", "u1"),
        ("timestamp", ">i8"),
        ("expiration", ">i8"),
        ("delivery_time", ">i8"),
        ("property_count", ">u4"),
    ]
)
assert _HEADER.itemsize == _FIXED.size

_TEXT_BODY: Final = 1
_BYTES_BODY: Final = 2
_MAP_BODY: Final = 3
_STREAM_BODY: Final = 4
_OBJECT_BODY: Final = 5
# Each body type: its codec tag, and the column that holds its body (none for a plain message).
_BODIES: Final[dict[str, tuple[int, str | None]]] = {
    "message": (0, None),
    "text": (_TEXT_BODY, "text"),
    "bytes": (_BYTES_BODY, "bytes"),
    "map": (_MAP_BODY, "map"),
    "stream": (_STREAM_BODY, "stream"),
    "object": (_OBJECT_BODY, "object"),
}
_MODES: Final = {"NON_PERSISTENT": 1, "PERSISTENT": 2}
# Java type -> (value field, codec tag); booleans are tagged by their value.
_PROPERTY_KINDS: Final = {
    "boolean": ("boolean", None),
    "byte": ("long", _BYTE),
    "short": ("long", _SHORT),
    "int": ("long", _INT),
    "long": ("long", _LONG),
    "float": ("double", _FLOAT),
    "double": ("double", _DOUBLE),
    "String": ("string", _STRING),
}
_RANGES: Final = {_BYTE: BYTE_RANGE, _SHORT: SHORT_RANGE, _INT: INT_RANGE}
# A map body's values may be chars and byte arrays too (a body value's ``string`` and ``bytes``
# fields).
_MAP_VALUE_KINDS: Final[dict[str, tuple[str | None, int | None]]] = {
    **_PROPERTY_KINDS,
    "char": ("string", _CHAR),
    "byte[]": ("bytes", _BYTES),
    "null": (None, _NULL),  # a null value: no payload
}
# The tags whose payload is an int64 (a char's is its UTF-16 code unit) or a float64 (a float's is
# the value rounded to 32 bits).
_INTEGER_PAYLOAD: Final = frozenset({_BYTE, _SHORT, _CHAR, _INT, _LONG})
_FLOATING_PAYLOAD: Final = frozenset({_FLOAT, _DOUBLE})
_VALUE_FIELDS: Final = ("boolean", "long", "double", "string")
_MAP_VALUE_FIELDS: Final = (*_VALUE_FIELDS, "bytes")
# The JMSX properties a row's properties may hold, each with the Java type it must have
# (JMSXDeliveryCount has a column of its own: ``from_arrow`` refuses it among the properties).
_JMSX_TYPES: Final = {
    name: JAVA_TYPE_NAMES[required]
    for name, required in JMSX_PROPERTY_TYPES.items()
    if name != "JMSXDeliveryCount"
}
_ABSENT_COLUMNS: Final = ("delivery_count",)


class _OtherShape(Exception):
    """The batch is not one this module encodes: the caller takes the general path."""


def arrow_to_encoded(batch: pa.RecordBatch, destination: Destination | None) -> list[bytes] | None:
    """The codec encodings of the messages of ``batch`` (``MESSAGE_ARROW_SCHEMA``), each sent
    to ``destination`` when it is given, else to its row's; None when the batch is not of the
    shape this module encodes (the module docstring)."""
    if batch.num_rows == 0:
        return []
    try:
        return _encoded(batch, destination)
    except _OtherShape:
        pass
    shape_of_row, shapes = _shapes(batch)
    if shapes < 2 or batch.num_rows < ROWS_PER_SHAPE * shapes:
        return None
    encoded: list[bytes] = [b""] * batch.num_rows
    try:
        for shape in range(shapes):
            rows = np.flatnonzero(shape_of_row == shape)
            taken = _encoded(batch.take(pa.array(rows)), destination)
            for row, data in zip(rows.tolist(), taken, strict=True):
                encoded[row] = data
    except _OtherShape:
        return None
    return encoded


def _shapes(batch: pa.RecordBatch) -> tuple[np.ndarray, int]:
    """(the shape number of each row, how many shapes), by what makes rows differ in shape: the
    body type, which of the optional strings are present, the properties' names and types in
    order. Rows that differ otherwise share a number, and ``_encoded`` refuses them."""
    column = batch.column
    present = sum(
        pc.is_valid(column(name)).to_numpy(zero_copy_only=False).astype(np.int64) << bit
        for bit, name in enumerate(
            ("message_id", "correlation_id", "correlation_id_bytes", "type", "reply_to", "text")
        )
    )
    key = pc.binary_join_element_wise(
        column("body_type").fill_null(""),
        pa.array(present).cast(pa.string()),
        _names_and_types(column("properties")),
        _names_and_types(column("map")),
        _names_and_types(column("stream")),
        "\x02",
    )
    shapes = pc.dictionary_encode(key)
    return shapes.indices.to_numpy(zero_copy_only=False), len(shapes.dictionary)


def _names_and_types(column: pa.Array) -> pa.Array:
    """Per row, the names and value types of a map column's entries, or the value types of a
    list column's values, in order, as one string."""
    # The offsets of a slice point into the whole of its entries (``values``).
    entries = column.values
    if isinstance(column, pa.MapArray):
        named = pc.binary_join_element_wise(
            entries.field("key"), _value_types(entries.field("value")).fill_null("null"), "\x00"
        )
    else:
        named = _value_types(entries).fill_null("null")
    return pc.binary_join(pa.ListArray.from_arrays(column.offsets, named), "\x01").fill_null("")


def _value_types(values: pa.Array) -> pa.Array:
    """The Java type name of each value struct in ``values``, "null" for a null value."""
    return pc.if_else(values.is_valid(), values.field("type"), pa.scalar("null"))


def _all(condition: pa.Array) -> bool:
    return condition.null_count == 0 and pc.all(condition).as_py() is True


def _present(column: pa.Array) -> bool:
    """Whether every row has a value (True) or none has (False); else another shape."""
    if column.null_count == 0:
        return True
    if column.null_count == len(column):
        return False
    raise _OtherShape


def _binary(column: pa.Array) -> pa.Array:
    return column.cast(pa.large_binary())


def _fixed_width(records: np.ndarray) -> pa.Array:
    """One large_binary value per record of ``records`` (a numpy record array), its bytes."""
    width = records.dtype.itemsize
    offsets = np.arange(0, (len(records) + 1) * width, width, dtype=np.int64)
    return pa.Array.from_buffers(
        pa.large_binary(),
        len(records),
        [None, pa.py_buffer(offsets), pa.py_buffer(records.tobytes())],
    )


def _lengths(column: pa.Array) -> np.ndarray:
    return pc.binary_length(column).to_numpy(zero_copy_only=False)


def _u32_column(numbers: np.ndarray) -> pa.Array:
    """Each number as 4 bytes big-endian, one value per row (a length before its bytes)."""
    return _fixed_width(numbers.astype(">u4").view(np.dtype([("l", ">u4")])))


def _correlation_bytes(raw: pa.Array, texts: pa.Array) -> pa.Array | None:
    """The correlation IDs given as bytes (``correlation_id_bytes``) when every row has one, as
    binary; None when no row has one. The ``correlation_id`` of such a row must be their UTF-8
    decoding (errors replaced), as ``from_arrow`` requires: else the general path refuses it."""
    if not _present(raw):
        return None
    decoded = [value.decode("utf-8", "replace") for value in raw.to_pylist()]
    if texts.to_pylist() != decoded:
        raise _OtherShape
    return _binary(raw)


def _encoded(batch: pa.RecordBatch, destination: Destination | None) -> list[bytes]:
    rows = batch.num_rows
    column = batch.column
    body_types = column("body_type")
    first_type = body_types[0].as_py()
    if first_type not in _BODIES or not _all(pc.equal(body_types, first_type)):
        raise _OtherShape
    body, body_column = _BODIES[first_type]
    # Every other body column null in every row, as from_arrow requires.
    if any(
        column(name).null_count != rows
        for _, name in _BODIES.values()
        if name is not None and name != body_column
    ) or any(column(name).null_count != rows for name in _ABSENT_COLUMNS):
        raise _OtherShape
    modes = column("delivery_mode")
    priorities = column("priority")
    if (
        not _all(pc.is_in(modes, pa.array(list(_MODES))))
        or priorities.null_count
        or any(column(name).null_count for name in ("timestamp", "expiration", "delivery_time"))
        or column("redelivered").null_count
    ):
        raise _OtherShape
    bounds = pc.min_max(priorities).as_py()
    if not 0 <= bounds["min"] <= bounds["max"] <= 9:
        raise _OtherShape

    # Header strings, in the codec's order: message ID, correlation ID (unless given as bytes),
    # type, destination, reply-to, text.
    bits = _HAS_DESTINATION
    strings: list[pa.Array | pa.Scalar] = []
    lengths: list[np.ndarray | int] = []
    correlation_bytes = _correlation_bytes(column("correlation_id_bytes"), column("correlation_id"))
    if correlation_bytes is not None:
        bits |= _HAS_CORRELATION_BYTES
    for name, bit in (
        ("message_id", _HAS_MESSAGE_ID),
        ("correlation_id", _HAS_CORRELATION_STR),
        ("type", _HAS_TYPE),
    ):
        if (bit != _HAS_CORRELATION_STR or correlation_bytes is None) and _present(column(name)):
            bits |= bit
            values = _binary(column(name))
            strings.append(values)
            lengths.append(_lengths(values))
    kinds, names = _destinations(column("destination"), destination)
    strings.append(names)
    lengths.append(_lengths(names) if isinstance(names, pa.Array) else len(names.as_py()))
    reply_to_kinds: np.ndarray | int = _NO_DESTINATION
    if _present(column("reply_to")):
        bits |= _HAS_REPLY_TO
        reply_to_kinds, reply_to_names = _parsed(column("reply_to"))
        strings.append(reply_to_names)
        lengths.append(_lengths(reply_to_names))
    if body == _TEXT_BODY and _present(column("text")):
        bits |= _HAS_TEXT
        texts = _binary(column("text"))
        strings.append(texts)
        lengths.append(_lengths(texts))
    properties = _Entries(column("properties"), rows, body=False)
    for name in properties.names:
        lengths.append(len(name))
    if properties.names:
        strings.append(pa.scalar(b"".join(properties.names), pa.large_binary()))

    fixed = np.zeros(
        rows, np.dtype([*_field_list(_HEADER), *((f"l{i}", ">u4") for i in range(len(lengths)))])
    )
    fixed["magic"] = _MAGIC
    fixed["version"] = FORMAT_VERSION
    fixed["body"] = body
    fixed["mode"] = pc.equal(modes, "PERSISTENT").to_numpy(zero_copy_only=False) + 1
    fixed["priority"] = priorities.to_numpy(zero_copy_only=False)
    fixed["redelivered"] = column("redelivered").to_numpy(zero_copy_only=False)
    fixed["bits"] = bits
    fixed["destination_kind"] = kinds
    fixed["reply_to_kind"] = reply_to_kinds
    for name in ("timestamp", "expiration", "delivery_time"):
        fixed[name] = column(name).to_numpy(zero_copy_only=False)
    fixed["property_count"] = len(properties.names)
    for index, length in enumerate(lengths):
        fixed[f"l{index}"] = length
    parts: list[pa.Array | pa.Scalar] = [_fixed_width(fixed), *strings]
    if correlation_bytes is not None:  # after the strings: their length, then the bytes
        parts += [_u32_column(_lengths(correlation_bytes)), correlation_bytes]
    parts += properties.parts()
    if body == _BYTES_BODY:
        data = _binary(column("bytes")).fill_null(b"")
        parts += [_u32_column(_lengths(data)), data]
    elif body == _MAP_BODY:
        entries = _Entries(column("map"), rows, body=True)
        # The entry count, the names' lengths and the names, the same in every row.
        head = np.array([len(entries.names), *map(len, entries.names)], ">u4").tobytes()
        parts += [pa.scalar(head + b"".join(entries.names), pa.large_binary()), *entries.parts()]
    elif body == _STREAM_BODY:
        entries = _Entries(column("stream"), rows, body=True)
        head = np.array([entries.count], ">u4").tobytes()  # the value count, the same in every row
        parts += [pa.scalar(head, pa.large_binary()), *entries.parts()]
    elif body == _OBJECT_BODY:
        # A serialized object: 1, its length and its bytes; no object: 0.
        serialized = _binary(column("object"))
        head = np.zeros(rows, np.dtype([("present", "u1"), ("length", ">u4")]))
        head["present"] = 1
        head["length"] = _lengths(serialized.fill_null(b""))
        parts += [
            pc.if_else(serialized.is_valid(), _fixed_width(head), b"\x00"),
            serialized.fill_null(b""),
        ]
    joined = pc.binary_join_element_wise(*parts, pa.scalar(b"", pa.large_binary()))
    return joined.to_pylist()  # type: ignore[no-any-return]


def _field_list(dtype: np.dtype) -> list[tuple[str, np.dtype]]:
    return [(name, dtype.fields[name][0]) for name in dtype.names]


def _destinations(
    column: pa.Array, destination: Destination | None
) -> tuple[np.ndarray | int, pa.Array | pa.Scalar]:
    """(destination kind tags, destination names) of every row: ``destination``'s, or each
    row's. The rows' names are parsed (once per distinct name) either way, as ``from_arrow``
    parses them before a sink replaces them."""
    if destination is None:
        if column.null_count:
            raise _OtherShape
        return _parsed(column)
    _parsed(column.drop_null())
    kind = _DESTINATION_TAG.get(type(destination))
    if kind is None:
        raise _OtherShape
    return kind, pa.scalar(destination.name.encode("utf-8", "surrogatepass"), pa.large_binary())


def _parsed(column: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """(kind tags, names) of the destinations a column without nulls names, each distinct text
    parsed once (``Destination.parse``)."""
    encoded = pc.dictionary_encode(column)
    try:
        parsed = [Destination.parse(text) for text in encoded.dictionary.to_pylist()]
    except JMSException:  # the general path words it
        raise _OtherShape from None
    if any(type(place) not in _DESTINATION_TAG for place in parsed):
        raise _OtherShape
    kinds = np.array([_DESTINATION_TAG[type(place)] for place in parsed], np.uint8)
    names = pa.array(
        [place.name.encode("utf-8", "surrogatepass") for place in parsed], pa.large_binary()
    )
    return kinds[encoded.indices.to_numpy()], names.take(encoded.indices)


class _Entries:
    """Every row's properties, or map body entries, or Stream body values (``body``: a map or
    list column), when they share names and types: the names (UTF-8; none for a Stream), and the
    parts of each row's value columns (tags, integers, doubles, the lengths of the Strings and
    byte arrays, then those)."""

    def __init__(self, entries: pa.Array, rows: int, *, body: bool) -> None:
        if entries.null_count or entries.offset:
            raise _OtherShape
        offsets = entries.offsets.to_numpy()
        count = int(offsets[1] - offsets[0])
        if not np.array_equal(offsets, np.arange(rows + 1) * count):
            raise _OtherShape
        self.count, self._rows = count, rows
        self.names: list[bytes] = []
        self._kinds: list[tuple[str, int | None]] = []
        self._values: list[pa.Array | None] = []
        if not count:
            return
        named = isinstance(entries, pa.MapArray)
        records = entries.items if named else entries.values
        if records.null_count and not body:
            raise _OtherShape  # a null property: from_arrow refuses it
        type_names = _value_types(records)
        first_types = type_names.slice(0, count).to_pylist()
        repeated = np.tile(np.arange(count), rows)
        if not _all(pc.equal(type_names, pa.array(first_types).take(repeated))):
            raise _OtherShape
        first_keys = entries.keys.slice(0, count).to_pylist() if named else []
        if named and not _all(pc.equal(entries.keys, pa.array(first_keys).take(repeated))):
            raise _OtherShape
        kinds = _MAP_VALUE_KINDS if body else _PROPERTY_KINDS
        if len(set(first_keys)) != len(first_keys) or any(
            type_name not in kinds for type_name in first_types
        ):
            raise _OtherShape
        if body:
            if "" in first_keys:
                raise _OtherShape
        elif any(
            property_name_error(name) is not None
            or (name.startswith("JMSX") and _JMSX_TYPES.get(name) != type_name)
            for name, type_name in zip(first_keys, first_types, strict=True)
        ):
            raise _OtherShape
        # Exactly the field of its type set in every record (from_arrow refuses more or fewer).
        fields = _MAP_VALUE_FIELDS if body else _VALUE_FIELDS
        valid = records.is_valid()
        set_fields = sum(
            pc.sum(pc.and_(valid, records.field(name).is_valid())).as_py() or 0 for name in fields
        )
        if set_fields != len(records) - records.null_count:
            raise _OtherShape
        self.names = [name.encode("utf-8", "surrogatepass") for name in first_keys]
        self._kinds = [kinds[type_name] for type_name in first_types]
        # Each entry's values, from its value field, every row's in turn (None for a null).
        self._values = [
            None
            if field is None
            else records.field(field).take(pa.array(np.arange(position, rows * count, count)))
            for position, (field, _) in enumerate(self._kinds)
        ]
        # Each entry's payload column, checked and converted as from_arrow does: None for a
        # value with no payload (a boolean's is its tag).
        self._payloads: list[np.ndarray | pa.Array | None] = []
        for values, (_, tag) in zip(self._values, self._kinds, strict=True):
            if values is not None and values.null_count:
                raise _OtherShape
            self._payloads.append(None if values is None or tag is None else _payload(values, tag))

    def parts(self) -> list[pa.Array]:
        """The rows' value columns (``codec._encode_values``): tags, then integers as int64,
        doubles as float64, the lengths of Strings and byte arrays as uint32, in one
        fixed-width part; then each String or byte array."""
        if not self.count:
            return []
        tags, integers, doubles, strings = [], [], [], []
        for values, payload, (_, tag) in zip(
            self._values, self._payloads, self._kinds, strict=True
        ):
            if tag is None:
                tags.append(np.where(values.to_numpy(zero_copy_only=False), _TRUE, _FALSE))
            else:
                tags.append(tag)
            if tag in _INTEGER_PAYLOAD:
                integers.append(payload)
            elif tag in _FLOATING_PAYLOAD:
                doubles.append(payload)
            elif tag in (_STRING, _BYTES):
                strings.append(payload)
        layout = [
            *((f"t{i}", "u1") for i in range(len(tags))),
            *((f"i{i}", ">i8") for i in range(len(integers))),
            *((f"d{i}", ">f8") for i in range(len(doubles))),
            *((f"s{i}", ">u4") for i in range(len(strings))),
        ]
        fixed = np.zeros(self._rows, np.dtype(layout))
        for prefix, columns in (("t", tags), ("i", integers), ("d", doubles)):
            for index, values in enumerate(columns):
                fixed[f"{prefix}{index}"] = values
        for index, values in enumerate(strings):
            fixed[f"s{index}"] = _lengths(values)
        return [_fixed_width(fixed), *strings]


def _payload(values: pa.Array, tag: int) -> np.ndarray | pa.Array:
    """The payload column of ``values`` (none null) of a value tagged ``tag``: int64 or float64
    numbers, or binary Strings and byte arrays. Values ``from_arrow`` refuses (out of range, a
    char that is not one UTF-16 code unit, a float too large for 32 bits) make it raise
    ``_OtherShape``."""
    if tag == _CHAR:
        # One code point of at most 3 UTF-8 bytes: one UTF-16 code unit (U+0000..U+FFFF).
        if not (
            _all(pc.equal(pc.utf8_length(values), 1)) and _all(pc.less(pc.binary_length(values), 4))
        ):
            raise _OtherShape
        return np.array([ord(char) for char in values.to_pylist()], np.int64)
    if tag in _RANGES:
        low, high = _RANGES[tag]
        bounds = pc.min_max(values).as_py()
        if not low <= bounds["min"] <= bounds["max"] <= high:
            raise _OtherShape
    if tag == _FLOAT:
        doubles = values.to_numpy(zero_copy_only=False)
        with np.errstate(over="ignore"):
            rounded = doubles.astype(np.float32)
        if np.any(np.isinf(rounded) & ~np.isinf(doubles)):
            raise _OtherShape  # too large for a float: from_arrow refuses it
        return rounded.astype(np.float64)
    if tag in _INTEGER_PAYLOAD or tag == _DOUBLE:
        return values.to_numpy(zero_copy_only=False)
    return _binary(values)
