"""Messages ⇄ rows of ``MESSAGE_SCHEMA``: ``to_arrow``, ``to_dataframe`` and ``from_rows``.

The two directions are exact inverses for every message Spark can hold: each header, each
property with its Java type, and each body (Map and Stream values with theirs) survive a trip
through a DataFrame and back. Messages go to Spark as one Arrow table, never row by row. The one
thing Spark cannot hold is a String or char with a lone UTF-16 surrogate (Spark strings are UTF-8);
it is refused with a ``MessageFormatException`` naming the message and field. ``JMSXDeliveryCount`` lives in the ``delivery_count`` column, not in ``properties``. Rows
coming back must describe a message exactly as ``to_arrow`` would have written it, or
``from_rows`` says which row and column is wrong; messages it builds are new and writable, with
Bytes and Stream bodies in write mode, as their sender built them (as ``jms.message.codec`` does).
This module reads messages and never changes one: a BytesMessage being written is not reset.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa
from pyspark.sql import Row
from pyspark.sql.pandas.types import to_arrow_schema

from jms.errors import JMSException, MessageFormatException
from jms.message import (
    JMSX_PROPERTY_TYPES,
    BytesMessage,
    Destination,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from jms.message.message import check_property_name
from jms.spark.schema import (
    BODY_TYPES,
    BODY_VALUE,
    DELIVERY_MODE_NAMES,
    MESSAGE_SCHEMA,
    PROPERTY_VALUE,
    VALUE_FIELD_OF_TYPE,
)
from jms.types import Byte, Char, Double, Float, Int, Long, Short, java_type_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["MESSAGE_ARROW_SCHEMA", "from_arrow", "from_rows", "to_arrow", "to_dataframe"]

#: ``MESSAGE_SCHEMA`` as an Arrow schema, the layout ``to_arrow`` produces.
MESSAGE_ARROW_SCHEMA: Final = to_arrow_schema(MESSAGE_SCHEMA)

_DELIVERY_COUNT: Final = "JMSXDeliveryCount"
_DELIVERY_MODES: Final = {name: mode for mode, name in DELIVERY_MODE_NAMES.items()}
_BODY_COLUMNS: Final = {
    "message": None,
    "text": "text",
    "bytes": "bytes",
    "map": "map",
    "stream": "stream",
    "object": "object",
}
_PROPERTY_TYPES: Final = frozenset(
    {"boolean", "byte", "short", "int", "long", "float", "double", "String"}
)
_BODY_VALUE_TYPES: Final = _PROPERTY_TYPES | {"char", "byte[]"}


# --- messages → Arrow -------------------------------------------------------------------------


def _value_struct(value: Any) -> dict[str, Any] | None:
    """The struct for one typed value (``Int(5)`` → ``{'type': 'int', 'long': 5}``)."""
    if value is None:
        return None
    type_name = java_type_name(value)
    field = VALUE_FIELD_OF_TYPE[type_name]
    if field == "long":
        plain: Any = int(value)
    elif field == "double":
        plain = float(value)
    elif field == "string":
        plain = str(value)
    else:
        plain = value
    return {"type": type_name, field: plain}


def _message_row(message: Message) -> tuple[Any, ...]:
    """The values of one message in ``MESSAGE_SCHEMA`` column order."""
    if not isinstance(message, Message):
        raise TypeError(f"expected a jms Message, got {type(message).__name__} {message!r:.80}")
    correlation = message._correlation_id  # str, bytes or None: how it was set matters
    properties = [
        (name, _value_struct(value))
        for name, value in message._properties.items()
        if name != _DELIVERY_COUNT
    ]
    delivery_count = message._properties.get(_DELIVERY_COUNT)
    destination, reply_to = message.get_jms_destination(), message.get_jms_reply_to()
    text = data = entries = values = serialized = None
    if isinstance(message, TextMessage):
        text = message.get_text()
    elif isinstance(message, BytesMessage):
        data = message._content()  # get_body would reset a message still being written
    elif isinstance(message, MapMessage):
        entries = [
            (name, _value_struct(message.get_object(name))) for name in message.get_map_names()
        ]
    elif isinstance(message, StreamMessage):
        values = [_value_struct(value) for value in message._values]
    elif isinstance(message, ObjectMessage):
        serialized = message.get_serialized_object()
    return (
        message.get_jms_message_id(),
        message.get_jms_timestamp(),
        message.get_jms_correlation_id(),
        correlation if isinstance(correlation, bytes) else None,
        None if destination is None else str(destination),
        None if reply_to is None else str(reply_to),
        DELIVERY_MODE_NAMES[message.get_jms_delivery_mode()],
        message.get_jms_priority(),
        message.get_jms_expiration(),
        message.get_jms_delivery_time(),
        message.get_jms_redelivered(),
        message.get_jms_type(),
        None if delivery_count is None else int(delivery_count),
        properties,
        message.body_type,
        text,
        data,
        entries,
        values,
        serialized,
    )


def _strings_in(value: Any, where: str) -> Iterable[tuple[str, str]]:
    """Every str inside a column value, with where it sits, for finding one Spark cannot hold."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings_in(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, tuple):
                yield f"{where} key", item[0]
                yield from _strings_in(item[1], f"{where}[{item[0]!r}]")
            else:
                yield from _strings_in(item, f"{where}[{index}]")


def _unencodable_string_error(rows: list[tuple[Any, ...]]) -> MessageFormatException:
    for index, row in enumerate(rows):
        for column, value in zip(MESSAGE_SCHEMA.names, row, strict=True):
            for where, text in _strings_in(value, column):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as error:
                    return MessageFormatException(
                        f"message {index}: {where} holds {text!r:.60}, whose character "
                        f"{text[error.start]!r} at index {error.start} is a lone UTF-16 surrogate; "
                        "Spark strings are UTF-8 and cannot hold it"
                    )
    return MessageFormatException("a string cannot be encoded as UTF-8 for Spark")


def to_arrow(messages: Iterable[Message]) -> pa.Table:
    """The messages as an Arrow table in ``MESSAGE_ARROW_SCHEMA``, one row per message."""
    rows = [_message_row(message) for message in messages]
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in MESSAGE_SCHEMA.names]
    try:
        arrays = [
            pa.array(values, type=field.type)
            for values, field in zip(columns, MESSAGE_ARROW_SCHEMA, strict=True)
        ]
    except UnicodeEncodeError:
        raise _unencodable_string_error(rows) from None
    return pa.Table.from_arrays(arrays, schema=MESSAGE_ARROW_SCHEMA)


def to_dataframe(spark: SparkSession, messages: Iterable[Message]) -> DataFrame:
    """A DataFrame in ``MESSAGE_SCHEMA`` holding the messages, built through Arrow."""
    return spark.createDataFrame(to_arrow(messages), schema=MESSAGE_SCHEMA)


# --- rows → messages --------------------------------------------------------------------------


class _BadRow(Exception):
    """Why a row is not a message; ``from_rows`` adds the row number."""


def _column(record: Any, name: str, where: str) -> Any:
    """``record[name]`` for a pyspark Row or a mapping (a dict from Arrow's ``to_pylist``)."""
    # A dict (Arrow's to_pylist) is checked first: the Mapping check costs an ABC lookup.
    if type(record) is not dict and not isinstance(record, Row | Mapping):
        raise _BadRow(
            f"{where} should be a pyspark Row or a mapping, got {type(record).__name__} "
            f"{record!r:.60}"
        )
    try:
        return record[name]
    except (KeyError, ValueError):
        raise _BadRow(f"{where} has no field {name!r}") from None


def _entries(value: Any, where: str) -> Iterable[tuple[Any, Any]]:
    """The (key, value) pairs of a map column: a dict from a Row, pairs from Arrow's to_pylist."""
    if isinstance(value, Mapping):
        return value.items()
    if isinstance(value, list | tuple):
        return value
    raise _BadRow(f"{where} should be a map, got {type(value).__name__} {value!r:.60}")


def _typed(record: Any, where: str, struct_type: Any, allowed: frozenset[str]) -> Any:
    """The Java-typed value a property or body value struct describes."""
    type_name = _column(record, "type", where)
    if type_name not in allowed:
        raise _BadRow(
            f"{where}.type is {type_name!r}; expected one of {', '.join(sorted(allowed))}"
        )
    field = VALUE_FIELD_OF_TYPE[type_name]
    value = None
    for name in struct_type.names:
        if name == "type":
            continue
        content = _column(record, name, where)
        if name == field:
            value = content
        elif content is not None:
            raise _BadRow(
                f"{where} is a {type_name}, so only its {field!r} field may be set, "
                f"but {name!r} is {content!r:.60}"
            )
    if value is None:
        raise _BadRow(f"{where} is a {type_name} but its {field!r} field is null")
    return _JAVA_VALUE[type_name](value, f"{where}.{field}")


def _exactly(kind: type, convert: Callable[[Any], Any]) -> Callable[[Any, str], Any]:
    def build(value: Any, where: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, kind):
            raise _BadRow(
                f"{where} should be a {kind.__name__}, got {type(value).__name__} {value!r:.60}"
            )
        try:
            return convert(value)
        except (TypeError, ValueError) as error:
            raise _BadRow(f"{where}: {error}") from None

    return build


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _BadRow(f"{where} should be a bool, got {type(value).__name__} {value!r:.60}")
    return value


_JAVA_VALUE: Final[dict[str, Callable[[Any, str], Any]]] = {
    "boolean": _boolean,
    "byte": _exactly(int, Byte),
    "short": _exactly(int, Short),
    "int": _exactly(int, Int),
    "long": _exactly(int, Long),
    "float": _exactly(float, Float),
    "double": _exactly(float, Double),
    "String": _exactly(str, str),
    "char": _exactly(str, Char),
    "byte[]": _exactly(bytes | bytearray, bytes),
}


def _set_headers(message: Message, row: Any) -> None:
    message.set_jms_message_id(_column(row, "message_id", "the row"))
    message.set_jms_timestamp(_column(row, "timestamp", "the row"))
    text_id = _column(row, "correlation_id", "the row")
    bytes_id = _column(row, "correlation_id_bytes", "the row")
    if bytes_id is None:
        message.set_jms_correlation_id(text_id)
    else:
        message.set_jms_correlation_id_as_bytes(bytes_id)
        if text_id != message.get_jms_correlation_id():
            raise _BadRow(
                "correlation_id must be the UTF-8 decoding of correlation_id_bytes "
                f"({message.get_jms_correlation_id()!r:.60}), got {text_id!r:.60}"
            )
    for column, setter in (
        ("destination", message.set_jms_destination),
        ("reply_to", message.set_jms_reply_to),
    ):
        name = _column(row, column, "the row")
        setter(None if name is None else Destination.parse(name))
    mode_name = _column(row, "delivery_mode", "the row")
    if mode_name not in _DELIVERY_MODES:
        raise _BadRow(f"delivery_mode is {mode_name!r}; expected 'PERSISTENT' or 'NON_PERSISTENT'")
    message.set_jms_delivery_mode(_DELIVERY_MODES[mode_name])
    message.set_jms_priority(_column(row, "priority", "the row"))
    message.set_jms_expiration(_column(row, "expiration", "the row"))
    message.set_jms_delivery_time(_column(row, "delivery_time", "the row"))
    message.set_jms_redelivered(_column(row, "redelivered", "the row"))
    message.set_jms_type(_column(row, "type", "the row"))


def _set_properties(message: Message, row: Any) -> None:
    properties = _column(row, "properties", "the row")
    if properties is None:
        raise _BadRow("properties is null; a message without properties has an empty map")
    for name, record in _entries(properties, "properties"):
        where = f"properties[{name!r}]"
        if name == _DELIVERY_COUNT:
            raise _BadRow(f"{where}: JMSXDeliveryCount belongs in the delivery_count column")
        if record is None:
            raise _BadRow(f"{where} is null; a property always has a value")
        message.set_object_property(name, _typed(record, where, PROPERTY_VALUE, _PROPERTY_TYPES))
    delivery_count = _column(row, "delivery_count", "the row")
    if delivery_count is not None:
        message.set_object_property(
            _DELIVERY_COUNT, _exactly(int, Int)(delivery_count, "delivery_count")
        )


def _body_value(record: Any, where: str) -> Any:
    return None if record is None else _typed(record, where, BODY_VALUE, _BODY_VALUE_TYPES)


def _new_message(row: Any) -> Message:
    """The message of the row's body type, with its body set."""
    body_type = _column(row, "body_type", "the row")
    if body_type not in _BODY_COLUMNS:
        raise _BadRow(f"body_type is {body_type!r}; expected one of {', '.join(BODY_TYPES)}")
    body_column = _BODY_COLUMNS[body_type]
    for column in _BODY_COLUMNS.values():
        if column is not None and column != body_column:
            content = _column(row, column, "the row")
            if content is not None:
                raise _BadRow(
                    f"a {body_type!r} message has no {column!r} body, but that column holds "
                    f"{content!r:.60}"
                )
    content = None if body_column is None else _column(row, body_column, "the row")
    if body_type == "text":
        return TextMessage(content)
    if body_type == "bytes":
        message = BytesMessage()
        if content is not None:
            message.write_bytes(_exactly(bytes | bytearray, bytes)(content, "bytes"))
        return message
    if body_type == "map":
        message = MapMessage()
        for name, record in _entries(content or {}, "map"):
            message.set_object(name, _body_value(record, f"map[{name!r}]"))
        return message
    if body_type == "stream":
        message = StreamMessage()
        for index, record in enumerate(content or ()):
            message.write_object(_body_value(record, f"stream[{index}]"))
        return message
    if body_type == "object":
        message = ObjectMessage()
        if content is not None:
            message._set_serialized_object(_exactly(bytes | bytearray, bytes)(content, "object"))
        return message
    return Message()


def from_rows(rows: Iterable[Any], *, first_row: int = 0) -> list[Message]:
    """The messages that rows in ``MESSAGE_SCHEMA`` describe (pyspark Rows, or dicts such as
    ``DataFrame.toArrow().to_pylist()`` gives); a row that describes no message raises
    ``MessageFormatException`` naming the row (numbered from ``first_row``) and the column."""
    messages = []
    for index, row in enumerate(rows, first_row):
        try:
            message = _new_message(row)
            _set_headers(message, row)
            _set_properties(message, row)
        except _BadRow as error:
            raise MessageFormatException(f"row {index}: {error}") from None
        except (JMSException, TypeError, ValueError) as error:
            raise MessageFormatException(
                f"row {index} does not describe a message: {error}", linked_exception=error
            ) from error
        messages.append(message)
    return messages


class _NotSimple(Exception):
    """A batch ``from_arrow`` leaves to ``from_rows`` (which refuses it or converts it)."""


_FAST_BODIES: Final = frozenset({"message", "text", "bytes"})
# The fields of a property value struct other than ``type``.
_VALUE_FIELDS: Final = tuple(name for name in PROPERTY_VALUE.names if name != "type")


def from_arrow(batch: pa.RecordBatch, *, first_row: int = 0) -> list[Message]:
    """``from_rows(batch.to_pylist())`` for a batch in ``MESSAGE_ARROW_SCHEMA``, read column by
    column: each message's fields are set from its row's values checked as ``from_rows`` checks
    them, without a dict per row or a setter per field. A batch it does not take whole this way
    (a Map, Stream or Object body, correlation ID bytes, anything ``from_rows`` would refuse)
    goes through ``from_rows``, which converts it or says what is wrong, so the result and every
    error are ``from_rows``'s (rows numbered from ``first_row``)."""
    try:
        return _from_columns(batch)
    except (_NotSimple, _BadRow, JMSException, TypeError, ValueError):
        return from_rows(batch.to_pylist(), first_row=first_row)


def _property_values(properties: pa.Array) -> tuple[list[int], list[str], list[Any]]:
    """The ``properties`` column as (offsets, names, Java-typed values), each value checked as
    ``_typed`` checks it, read field by field rather than as a dict per value."""
    if properties.null_count or not isinstance(properties, pa.MapArray):
        raise _NotSimple
    records = properties.items
    if records.null_count:
        raise _NotSimple
    # Each record sets the one field of its type (checked below); any more set is a row
    # ``from_rows`` refuses, naming it.
    if sum(len(records) - records.field(name).null_count for name in _VALUE_FIELDS) != len(records):
        raise _NotSimple
    contents = {name: records.field(name).to_pylist() for name in _VALUE_FIELDS}
    values = []
    for index, type_name in enumerate(records.field("type").to_pylist()):
        if type_name not in _PROPERTY_TYPES:
            raise _NotSimple
        value = contents[VALUE_FIELD_OF_TYPE[type_name]][index]
        if value is None:
            raise _NotSimple
        values.append(_JAVA_VALUE[type_name](value, "a property value"))
    return properties.offsets.to_pylist(), properties.keys.to_pylist(), values


def _from_columns(batch: pa.RecordBatch) -> list[Message]:
    column = {
        name: batch.column(name).to_pylist()
        for name in MESSAGE_SCHEMA.names
        if name != "properties"
    }
    offsets, property_names, property_values = _property_values(batch.column("properties"))
    body_types = column["body_type"]
    if not _FAST_BODIES.issuperset(body_types):
        raise _NotSimple
    for name in ("correlation_id_bytes", "map", "stream", "object"):
        if any(value is not None for value in column[name]):
            raise _NotSimple
    places: dict[str | None, Destination | None] = {None: None}
    for name in ("destination", "reply_to"):
        for text in column[name]:
            if text not in places:
                places[text] = Destination.parse(text)
    names_checked: set[str] = set()
    messages: list[Message] = []
    rows = zip(
        body_types,
        column["text"],
        column["bytes"],
        column["message_id"],
        column["timestamp"],
        column["correlation_id"],
        column["destination"],
        column["reply_to"],
        column["delivery_mode"],
        column["priority"],
        column["expiration"],
        column["delivery_time"],
        column["redelivered"],
        column["type"],
        itertools.pairwise(offsets),
        column["delivery_count"],
        strict=True,
    )
    for (
        body_type,
        text,
        data,
        message_id,
        timestamp,
        correlation_id,
        destination,
        reply_to,
        mode_name,
        priority,
        expiration,
        delivery_time,
        redelivered,
        jms_type,
        (first_property, end_property),
        delivery_count,
    ) in rows:
        if (
            timestamp is None
            or expiration is None
            or delivery_time is None
            or type(redelivered) is not bool
            or type(priority) is not int
            or not 0 <= priority <= 9
            or mode_name not in _DELIVERY_MODES
            or (body_type != "text" and text is not None)
            or (body_type != "bytes" and data is not None)
        ):
            raise _NotSimple
        message: Message
        if body_type == "text":
            message = TextMessage(text)
        elif body_type == "bytes":
            message = BytesMessage()
            if data is not None:
                message.write_bytes(data)
        else:
            message = Message()
        message._message_id = message_id
        message._timestamp = timestamp
        message._correlation_id = correlation_id
        message._destination = places[destination]
        message._reply_to = places[reply_to]
        message._delivery_mode = _DELIVERY_MODES[mode_name]
        message._priority = priority
        message._expiration = expiration
        message._delivery_time = delivery_time
        message._redelivered = redelivered
        message._type = jms_type
        held = message._properties
        for name, typed in zip(
            property_names[first_property:end_property],
            property_values[first_property:end_property],
            strict=True,
        ):
            if name == _DELIVERY_COUNT:
                raise _NotSimple
            if name in JMSX_PROPERTY_TYPES:
                message.set_object_property(name, typed)  # its type is checked too
                continue
            if name not in names_checked:
                check_property_name(name)
                names_checked.add(name)
            held[name] = typed
        if delivery_count is not None:
            message.set_object_property(
                _DELIVERY_COUNT, _exactly(int, Int)(delivery_count, "delivery_count")
            )
        messages.append(message)
    return messages
