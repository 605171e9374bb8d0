"""``MESSAGE_SCHEMA``: how a JMS message is laid out as one Spark row, and why.

One row per message. Header fields are plain columns with the Spark type of their Java type; the
three times stay ``long`` milliseconds since the epoch (``timestamp``, ``expiration``,
``delivery_time``), because every Java long is a valid value there (0 means "not set" / "never"),
because selectors compare them with integer millisecond literals as the spec says, and because
``timestamp_millis(col)`` gives a Spark timestamp whenever one is wanted. Properties are one map
from name to a small struct that keeps the exact Java type: ``type`` names it (``'int'``,
``'float'``, ``'String'``, ...) and exactly one value field holds it, integers of every width in
``long``, ``float``/``double`` in ``double`` (a float is exactly representable as a double),
booleans in ``boolean`` and Strings in ``string``. So ``properties['weight'].long`` reads any
integer property and the type tag still says which one was set. Map and Stream bodies use the same
struct with one more field, ``bytes``, and ``type`` may also be ``'char'`` (in ``string``) or
``'byte[]'``; a null entry is a null struct. This module only describes; it must never convert or
touch a message.
"""

from __future__ import annotations

from typing import Final

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

__all__ = [
    "BODY_TYPES",
    "BODY_VALUE",
    "DELIVERY_MODE_NAMES",
    "MESSAGE_SCHEMA",
    "PROPERTY_VALUE",
    "VALUE_FIELD_OF_TYPE",
]

#: A property value: ``type`` is the Java type name, and the one field it selects holds the value.
PROPERTY_VALUE: Final = StructType(
    [
        StructField("type", StringType()),
        StructField("boolean", BooleanType()),
        StructField("long", LongType()),
        StructField("double", DoubleType()),
        StructField("string", StringType()),
    ]
)

#: A Map or Stream body value: a property value that may also be a ``char`` or a ``byte[]``.
BODY_VALUE: Final = StructType([*PROPERTY_VALUE.fields, StructField("bytes", BinaryType())])

#: The struct field that holds a value of each Java type (``jms.types.java_type_name`` names).
VALUE_FIELD_OF_TYPE: Final[dict[str, str]] = {
    "boolean": "boolean",
    "byte": "long",
    "short": "long",
    "int": "long",
    "long": "long",
    "float": "double",
    "double": "double",
    "String": "string",
    "char": "string",
    "byte[]": "bytes",
}

#: ``delivery_mode`` holds the names selectors use for JMSDeliveryMode, by DeliveryMode value.
DELIVERY_MODE_NAMES: Final[dict[int, str]] = {1: "NON_PERSISTENT", 2: "PERSISTENT"}

#: ``body_type`` values: the ``Message.body_type`` of each message class.
BODY_TYPES: Final = ("message", "text", "bytes", "map", "stream", "object")

MESSAGE_SCHEMA: Final = StructType(
    [
        StructField("message_id", StringType()),
        StructField("timestamp", LongType(), nullable=False),
        StructField("correlation_id", StringType()),
        StructField("correlation_id_bytes", BinaryType()),
        StructField("destination", StringType()),
        StructField("reply_to", StringType()),
        StructField("delivery_mode", StringType(), nullable=False),
        StructField("priority", IntegerType(), nullable=False),
        StructField("expiration", LongType(), nullable=False),
        StructField("delivery_time", LongType(), nullable=False),
        StructField("redelivered", BooleanType(), nullable=False),
        StructField("type", StringType()),
        StructField("delivery_count", IntegerType()),
        StructField(
            "properties",
            MapType(StringType(), PROPERTY_VALUE, valueContainsNull=False),
            nullable=False,
        ),
        StructField("body_type", StringType(), nullable=False),
        StructField("text", StringType()),
        StructField("bytes", BinaryType()),
        StructField("map", MapType(StringType(), BODY_VALUE, valueContainsNull=True)),
        StructField("stream", ArrayType(BODY_VALUE, containsNull=True)),
        StructField("object", BinaryType()),
    ]
)
