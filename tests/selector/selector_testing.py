"""Builders shared by the selector tests: typed messages in one call."""

from __future__ import annotations

from typing import Any

from jms.message import DeliveryMode, TextMessage

_HEADER_SETTERS = {
    "JMSType": "set_jms_type",
    "JMSMessageID": "set_jms_message_id",
    "JMSCorrelationID": "set_jms_correlation_id",
    "JMSPriority": "set_jms_priority",
    "JMSTimestamp": "set_jms_timestamp",
}


def make_message(headers: dict[str, Any] | None = None, **properties: Any) -> TextMessage:
    """A TextMessage with ``properties`` set by ``set_object_property`` (pass ``jms.types``
    values for exact Java types) and ``headers`` by their setters; JMSDeliveryMode may be given
    as 'PERSISTENT'/'NON_PERSISTENT' or 2/1."""
    message = TextMessage()
    for name, value in properties.items():
        message.set_object_property(name, value)
    for name, value in (headers or {}).items():
        if name == "JMSDeliveryMode":
            if isinstance(value, str):
                value = getattr(DeliveryMode, value)
            message.set_jms_delivery_mode(value)
        else:
            getattr(message, _HEADER_SETTERS[name])(value)
    return message
