"""How the ``jms`` commands show messages and broker figures: values in their Java forms
(``0.1``, ``true``, ``{a=1, b=true}``), messages as table cells or as JSON for scripts, and
``jms stats`` rows with their rates. Pure functions over messages and the broker's stats reply;
the commands in ``jms.cli`` print what these return.
"""

from __future__ import annotations

import base64
from typing import Any, Final

import jms
from jms.types import java_type_name, to_java_string

__all__ = [
    "INTERNAL_QUEUE_PREFIX",
    "body_bytes",
    "body_text",
    "java_text",
    "message_json",
    "properties_text",
    "stats_rows",
]

#: Queues the Spark sink keeps for itself (``jms.spark.staging.*``, ``jms.spark.commits.*``):
#: ``jms stats`` shows them only with ``--all``.
INTERNAL_QUEUE_PREFIX: Final = "queue://jms.spark."


def java_text(value: object) -> str:
    """``String.valueOf`` of a property, map or stream value; ``null`` for None, and a byte
    array as hexadecimal digits (Java would print an object address)."""
    if value is None:
        return "null"
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    return to_java_string(value)


def _stream_values(message: jms.StreamMessage) -> list[Any]:
    message.reset()
    values = []
    while True:
        try:
            values.append(message.read_object())
        except jms.MessageEOFException:
            return values


def body_bytes(message: jms.Message) -> bytes | None:
    """A BytesMessage's body, else None."""
    if isinstance(message, jms.BytesMessage):
        return message.get_body(bytes) or b""
    return None


def body_text(message: jms.Message) -> str:
    """The body as text: a TextMessage's text; a map as ``{a=1, b=true}`` and a stream as
    ``[1, true]`` (Java's ``Map`` and ``List`` forms); bytes as hexadecimal digits."""
    if isinstance(message, jms.TextMessage):
        return message.get_text() or ""
    if isinstance(message, jms.BytesMessage):
        return (message.get_body(bytes) or b"").hex()
    if isinstance(message, jms.MapMessage):
        body = message.get_body(dict) or {}
        return "{" + ", ".join(f"{k}={java_text(v)}" for k, v in body.items()) + "}"
    if isinstance(message, jms.StreamMessage):
        return "[" + ", ".join(java_text(v) for v in _stream_values(message)) + "]"
    body = message.get_body(object)
    return "" if body is None else str(body)


def properties_text(message: jms.Message) -> str:
    """``name=value, ...`` with Java forms of the values."""
    return ", ".join(f"{name}={java_text(value)}" for name, value in message.iter_properties())


def _json_value(value: object) -> object:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and not isinstance(value, bool):
        return float(to_java_string(value))  # Float(0.1) is 0.1, as Java prints it
    return value


def _json_body(message: jms.Message) -> object:
    if isinstance(message, jms.TextMessage):
        return message.get_text()
    if isinstance(message, jms.BytesMessage):
        return _json_value(message.get_body(bytes) or b"")
    if isinstance(message, jms.MapMessage):
        return {k: _json_value(v) for k, v in (message.get_body(dict) or {}).items()}
    if isinstance(message, jms.StreamMessage):
        return [_json_value(v) for v in _stream_values(message)]
    body = message.get_body(object)
    return None if body is None else str(body)


def message_json(message: jms.Message) -> dict[str, Any]:
    """A message as JSON: its headers, its properties (with their Java types, which JSON
    cannot tell apart), and its body (bytes in base64)."""
    reply_to = message.get_jms_reply_to()
    return {
        "JMSMessageID": message.get_jms_message_id(),
        "JMSTimestamp": message.get_jms_timestamp(),
        "JMSCorrelationID": message.get_jms_correlation_id(),
        "JMSReplyTo": None if reply_to is None else str(reply_to),
        "JMSDeliveryMode": "PERSISTENT"
        if message.get_jms_delivery_mode() == jms.DeliveryMode.PERSISTENT
        else "NON_PERSISTENT",
        "JMSRedelivered": message.get_jms_redelivered(),
        "JMSType": message.get_jms_type(),
        "JMSExpiration": message.get_jms_expiration(),
        "JMSPriority": message.get_jms_priority(),
        "type": type(message).__name__,
        "properties": {name: _json_value(value) for name, value in message.iter_properties()},
        "property_types": {
            name: java_type_name(value) for name, value in message.iter_properties()
        },
        "body": _json_body(message),
    }


def stats_rows(
    first: dict[str, Any], second: dict[str, Any], *, include_internal: bool
) -> tuple[list[dict[str, Any]], float, int]:
    """The rows of ``second`` (a ``/admin/stats`` reply) sorted by name, each with ``in_per_s``
    and ``out_per_s`` since ``first``; the seconds between the two; how many internal queues
    were left out. Temporary destinations are always left out."""
    elapsed = max(1e-3, (second["time_ms"] - first["time_ms"]) / 1000)
    before = {row["name"]: row for row in first["destinations"]}
    rows = []
    hidden = 0
    for row in sorted(second["destinations"], key=lambda r: r["name"]):
        if row["destination"].startswith("temp-"):
            continue
        if not include_internal and row["destination"].startswith(INTERNAL_QUEUE_PREFIX):
            hidden += 1
            continue
        old = before.get(row["name"], row)
        rows.append(
            {
                **row,
                "in_per_s": round((row["enqueued"] - old["enqueued"]) / elapsed, 1),
                "out_per_s": round((row["acknowledged"] - old["acknowledged"]) / elapsed, 1),
            }
        )
    return rows, elapsed, hidden
