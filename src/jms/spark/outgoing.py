"""Rows a ``format("jms")`` sink receives, as the messages it publishes: ``OutgoingRows``.

Two layouts are accepted, decided once from the DataFrame's schema (and refused there, naming the
column, when neither fits):

- **full**: the columns of ``MESSAGE_SCHEMA`` (it has ``body_type``) — each row is the message
  ``from_rows`` builds, every header, typed property and body kept. A column whose null means
  "not set" or "no such body" (``OPTIONAL_COLUMNS``) may be left out: it reads as null in every
  row. Leaving out columns the rows never use costs less than carrying them: Spark hands a null
  ``map`` or ``stream`` column to Python writers slowly (docs/spark.md, "Arrow batches");
- **simple**: a body column, ``value`` (string → TextMessage, binary → BytesMessage) or ``text``
  (string), optional header columns named as in ``MESSAGE_SCHEMA`` (``destination``,
  ``correlation_id``, ``type``, ``priority``, ``delivery_mode``, ``reply_to``), and any other
  column becomes a property of its column's Java type (boolean, byte, short, int, long, float,
  double, String; a null leaves the property unset).

The sink's ``destination`` option replaces each row's destination; without it every row must
name one. ``JMSXDeliveryCount`` (``delivery_count``) is never carried over: the receiving broker
counts deliveries itself. This module builds messages (or their encodings) and never sends them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

from jms.errors import JMSException, MessageFormatException
from jms.message import JMSX_PROPERTY_TYPES, BytesMessage, Destination, Message, TextMessage
from jms.message.codec import encode
from jms.spark.arrow_encode import arrow_to_encoded
from jms.spark.rows import MESSAGE_ARROW_SCHEMA, from_arrow
from jms.spark.schema import DELIVERY_MODE_NAMES, MESSAGE_SCHEMA, VALUE_FIELD_OF_TYPE
from jms.types import JAVA_TYPE_NAMES, Byte, Double, Float, Int, Long, Short

__all__ = ["OPTIONAL_COLUMNS", "OutgoingRows"]

#: The ``MESSAGE_SCHEMA`` columns full-layout rows may leave out, each read as null in every row:
#: the columns where a null is a valid value (a header not set, a body the message has not).
OPTIONAL_COLUMNS: Final = (
    "message_id",
    "correlation_id",
    "correlation_id_bytes",
    "destination",
    "reply_to",
    "type",
    "delivery_count",
    "text",
    "bytes",
    "map",
    "stream",
    "object",
)

#: The property value a column value of each Spark type is (the column's type bounds it).
_PROPERTY_VALUES: Final[dict[type[DataType], Callable[[Any], Any]]] = {
    BooleanType: bool,
    ByteType: Byte,
    ShortType: Short,
    IntegerType: Int,
    LongType: Long,
    FloatType: Float,
    DoubleType: Double,
    StringType: str,
}
#: Header columns the simple layout reads, with the Spark type each must have.
_HEADERS: Final[dict[str, DataType]] = {
    "destination": StringType(),
    "correlation_id": StringType(),
    "type": StringType(),
    "priority": IntegerType(),
    "delivery_mode": StringType(),
    "reply_to": StringType(),
}
_DELIVERY_MODES: Final = {name: mode for mode, name in DELIVERY_MODE_NAMES.items()}
_VALUE_FIELD_TYPES: Final = {
    "boolean": pa.bool_(),
    "long": pa.int64(),
    "double": pa.float64(),
    "string": pa.string(),
}


def _same_type(left: DataType, right: DataType) -> bool:
    """Equal but for nullability (Spark marks computed columns nullable as it likes)."""
    return _without_nullability(left.jsonValue()) == _without_nullability(right.jsonValue())


def _without_nullability(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _without_nullability(item)
            for key, item in value.items()
            if key not in ("nullable", "containsNull", "valueContainsNull", "metadata")
        }
    if isinstance(value, list):
        return [_without_nullability(item) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class _Simple:
    body: str
    body_is_text: bool
    headers: tuple[str, ...]
    # (column, the property value of a column value): the name was checked once, and the
    # column's Spark type makes every value one the property's Java type holds.
    properties: tuple[tuple[str, Callable[[Any], Any]], ...]
    # The same for JMSX properties, whose Java type is checked row by row (set_object_property).
    checked_properties: tuple[tuple[str, Callable[[Any], Any]], ...]


class OutgoingRows:
    """How rows of one schema become messages; made (and checked) where the write is planned."""

    def __init__(self, schema: StructType, destination: Destination | None) -> None:
        self._destination = destination
        names = schema.fieldNames()
        self._simple: _Simple | None = None
        # The Arrow fields of the optional columns the full layout's rows leave out.
        self._left_out: tuple[pa.Field, ...] = ()
        if "body_type" in names:
            self._check_full(schema)
            self._left_out = tuple(
                MESSAGE_ARROW_SCHEMA.field(name)
                for name in MESSAGE_SCHEMA.names
                if name not in names
            )
        else:
            self._simple = self._plan_simple(schema)
        if destination is None and "destination" not in names:
            raise ValueError(
                "the rows name no destination (no destination column) and option destination "
                "is not set: say where the messages go"
            )

    @staticmethod
    def _check_full(schema: StructType) -> None:
        given = {field.name: field.dataType for field in schema.fields}
        missing = [
            name
            for name in MESSAGE_SCHEMA.names
            if name not in given and name not in OPTIONAL_COLUMNS
        ]
        extra = [name for name in given if name not in MESSAGE_SCHEMA.names]
        if missing or extra:
            raise ValueError(
                "a DataFrame with a body_type column is written as MESSAGE_SCHEMA rows, but "
                + "; ".join(
                    part
                    for part in (
                        f"it lacks {', '.join(missing)} (only columns that may be null in "
                        f"every row can be left out: {', '.join(OPTIONAL_COLUMNS)})"
                        if missing
                        else "",
                        f"it also has {', '.join(extra)}" if extra else "",
                    )
                    if part
                )
            )
        for field in MESSAGE_SCHEMA.fields:
            if field.name in given and not _same_type(given[field.name], field.dataType):
                raise ValueError(
                    f"column {field.name} is {given[field.name].simpleString()}; MESSAGE_SCHEMA "
                    f"has {field.dataType.simpleString()}"
                )

    @staticmethod
    def _plan_simple(schema: StructType) -> _Simple:
        fields = {field.name: field.dataType for field in schema.fields}
        bodies = [name for name in ("value", "text") if name in fields]
        if len(bodies) != 1:
            raise ValueError(
                "rows to publish need exactly one body column, value (string or binary) or text "
                f"(string), or the MESSAGE_SCHEMA columns; got columns {', '.join(fields)}"
            )
        body = bodies[0]
        body_type = fields[body]
        allowed = (StringType, BinaryType) if body == "value" else (StringType,)
        if not isinstance(body_type, allowed):
            raise ValueError(
                f"column {body} is {body_type.simpleString()}; it must be "
                + (" or ".join(t().simpleString() for t in allowed))
            )
        headers = []
        properties: list[tuple[str, Callable[[Any], Any]]] = []
        checked: list[tuple[str, Callable[[Any], Any]]] = []
        probe = Message()
        for name, data_type in fields.items():
            if name == body:
                continue
            if name in _HEADERS:
                if not _same_type(data_type, _HEADERS[name]):
                    raise ValueError(
                        f"column {name} (the JMS header) is {data_type.simpleString()}; it must "
                        f"be {_HEADERS[name].simpleString()}"
                    )
                headers.append(name)
                continue
            value_of = _PROPERTY_VALUES.get(type(data_type))
            if value_of is None:
                raise ValueError(
                    f"column {name} is {data_type.simpleString()}, which no message property "
                    "can hold; cast it to boolean, tinyint, smallint, int, bigint, float, double "
                    "or string, or drop it"
                )
            if name in JMSX_PROPERTY_TYPES:
                checked.append((name, value_of))
                continue
            try:
                probe.set_string_property(name, "")
            except ValueError as error:
                raise ValueError(f"column {name} cannot be a message property: {error}") from None
            properties.append((name, value_of))
        return _Simple(
            body,
            isinstance(body_type, StringType),
            tuple(headers),
            tuple(properties),
            tuple(checked),
        )

    def encoded(self, batch: pa.RecordBatch, first_row: int = 0) -> list[bytes]:
        """The codec encodings of ``messages(batch)``: made column by column
        (``arrow_to_encoded``) when the rows are ``MESSAGE_SCHEMA`` rows of one shape, else
        message by message; the same bytes, or the same error, either way (naming the row,
        counted from ``first_row``, the number of the batch's first)."""
        if self._simple is None:
            batch = self._full_batch(batch)
            encoded = arrow_to_encoded(batch, self._destination)
        else:
            encoded = arrow_to_encoded(_as_message_rows(self._simple, batch), self._destination)
        if encoded is not None:
            return encoded
        return [encode(message) for message in self._messages(batch, first_row)]

    def messages(self, batch: pa.RecordBatch) -> Iterator[Message]:
        """The messages of one Arrow batch of rows, each with its destination set."""
        return self._messages(batch if self._simple is not None else self._full_batch(batch), 0)

    def _full_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """A full-layout batch with every ``MESSAGE_SCHEMA`` column, those left out null, and no
        delivery counts: JMSXDeliveryCount is never carried over (the receiving broker counts
        deliveries)."""
        rows = batch.num_rows
        for field in self._left_out:
            batch = batch.append_column(field, pa.nulls(rows, field.type))
        index = batch.schema.get_field_index("delivery_count")
        return batch.set_column(index, batch.schema.field(index), pa.nulls(rows, pa.int32()))

    def _messages(self, batch: pa.RecordBatch, first_row: int) -> Iterator[Message]:
        """``messages``, once a full-layout batch is complete (``_full_batch``); errors number
        the rows from ``first_row``."""
        if self._simple is None:
            built: Iterator[Message] = iter(from_arrow(batch, first_row=first_row))
        else:
            built = self._simple_messages(self._simple, batch, first_row)
        for index, message in enumerate(built, first_row):
            if self._destination is not None:
                message.set_jms_destination(self._destination)
            elif message.get_jms_destination() is None:
                raise MessageFormatException(
                    f"row {index} has a null destination and option destination is not set"
                )
            yield message

    @staticmethod
    def _simple_messages(
        simple: _Simple, batch: pa.RecordBatch, first_row: int
    ) -> Iterator[Message]:
        """The simple layout's messages, read column by column (a row's values never pass
        through a dict, a property value through no setter but a JMSX one's type check)."""
        bodies = batch.column(simple.body).to_pylist()
        headers = [
            (_HEADER_SETTERS[name], batch.column(name).to_pylist()) for name in simple.headers
        ]
        properties = [
            (name, value_of, batch.column(name).to_pylist()) for name, value_of in simple.properties
        ]
        checked = [
            (name, value_of, batch.column(name).to_pylist())
            for name, value_of in simple.checked_properties
        ]
        for index, content in enumerate(bodies):
            try:
                if simple.body_is_text:
                    message: Message = TextMessage(content)
                else:
                    message = BytesMessage()
                    if content is not None:
                        message.write_bytes(content)
                for set_header, values in headers:
                    set_header(message, values[index])
                held = message._properties
                for name, value_of, values in properties:
                    value = values[index]
                    if value is not None:
                        held[name] = value_of(value)
                for name, value_of, values in checked:
                    value = values[index]
                    if value is not None:
                        message.set_object_property(name, value_of(value))
            except (JMSException, TypeError, ValueError) as error:
                raise MessageFormatException(
                    f"row {first_row + index} does not make a message: {error}"
                ) from error
            yield message


def _as_message_rows(simple: _Simple, batch: pa.RecordBatch) -> pa.RecordBatch:
    """The simple rows of ``batch`` as the ``MESSAGE_SCHEMA`` columns ``arrow_to_encoded``
    reads (a new message's defaults where a header column is absent or null, no property where
    a property column is null; the JMSX properties last, as ``_simple_messages`` sets them)."""
    rows = batch.num_rows
    named = [*simple.properties, *simple.checked_properties]
    type_names = [JAVA_TYPE_NAMES[value_of] for _, value_of in named]  # type: ignore[index]
    names = [name for name, _ in named]

    def header(name: str, default: Any = None) -> pa.Array:
        if name not in simple.headers:
            return pa.nulls(rows, pa.string()) if default is None else pa.repeat(default, rows)
        column = batch.column(name)
        return column if default is None else column.fill_null(default)

    body = batch.column(simple.body)
    columns = {
        "body_type": pa.repeat(pa.scalar("text" if simple.body_is_text else "bytes"), rows),
        "text": body if simple.body_is_text else pa.nulls(rows, pa.string()),
        "bytes": pa.nulls(rows, pa.binary()) if simple.body_is_text else body,
        "message_id": pa.nulls(rows, pa.string()),
        "correlation_id": header("correlation_id"),
        "type": header("type"),
        "destination": header("destination"),
        "reply_to": header("reply_to"),
        "delivery_mode": header("delivery_mode", pa.scalar("PERSISTENT")),
        "priority": header("priority", pa.scalar(Message.DEFAULT_PRIORITY, pa.int32())),
        "timestamp": pa.repeat(pa.scalar(0, pa.int64()), rows),
        "expiration": pa.repeat(pa.scalar(0, pa.int64()), rows),
        "delivery_time": pa.repeat(pa.scalar(0, pa.int64()), rows),
        "redelivered": pa.repeat(pa.scalar(False), rows),
        "properties": _property_map(
            rows, [batch.column(name) for name in names], names, type_names
        ),
        **{
            name: pa.nulls(rows, MESSAGE_ARROW_SCHEMA.field(name).type)
            for name in ("correlation_id_bytes", "delivery_count", "map", "stream", "object")
        },
    }
    return pa.RecordBatch.from_arrays(list(columns.values()), list(columns))


def _property_map(
    rows: int, columns: list[pa.Array], names: list[str], type_names: list[str]
) -> pa.Array:
    """The ``properties`` map of ``rows`` rows that each set ``names``, of these Java types, to
    the row's value in ``columns``; a null value leaves its property unset."""
    count = len(columns)
    # Row after row, property after property: entry (row, position) comes from columns[position].
    order = (np.arange(count)[None, :] * rows + np.arange(rows)[:, None]).ravel()
    valid = np.concatenate(
        [pc.is_valid(column).to_numpy(zero_copy_only=False) for column in columns]
        or [np.zeros(0, bool)]
    )
    order = order[valid[order]]
    set_per_row = valid.reshape(count, rows).sum(axis=0)
    offsets = pa.array(np.concatenate([[0], np.cumsum(set_per_row)]).astype(np.int32))
    positions = pa.array(order // max(rows, 1))
    order = pa.array(order)
    fields = {}
    for field, arrow_type in _VALUE_FIELD_TYPES.items():
        parts = [
            column.cast(arrow_type)
            if VALUE_FIELD_OF_TYPE[type_name] == field
            else pa.nulls(rows, arrow_type)
            for column, type_name in zip(columns, type_names, strict=True)
        ]
        fields[field] = pa.concat_arrays(parts).take(order) if parts else pa.array([], arrow_type)
    items = pa.StructArray.from_arrays(
        [pa.array(type_names, pa.string()).take(positions), *fields.values()],
        ["type", *fields],
    )
    keys = pa.array(names, pa.string()).take(positions)
    return pa.MapArray.from_arrays(offsets, keys, items)


def _set_destination(message: Message, value: str | None) -> None:
    message.set_jms_destination(None if value is None else Destination.parse(value))


def _set_reply_to(message: Message, value: str | None) -> None:
    message.set_jms_reply_to(None if value is None else Destination.parse(value))


def _set_priority(message: Message, value: int | None) -> None:
    if value is not None:
        message.set_jms_priority(value)


def _set_delivery_mode(message: Message, value: str | None) -> None:
    if value is None:
        return
    if value not in _DELIVERY_MODES:
        raise ValueError(f"delivery_mode is {value!r}; expected PERSISTENT or NON_PERSISTENT")
    message.set_jms_delivery_mode(_DELIVERY_MODES[value])


_HEADER_SETTERS: Final[dict[str, Callable[[Message, Any], None]]] = {
    "destination": _set_destination,
    "correlation_id": lambda message, value: message.set_jms_correlation_id(value),
    "type": lambda message, value: message.set_jms_type(value),
    "priority": _set_priority,
    "delivery_mode": _set_delivery_mode,
    "reply_to": _set_reply_to,
}
