"""``Message``: the JMS header fields, typed properties, and the rules shared by every body type.

This module holds what the spec says of *every* message: the eleven header fields and their
defaults, properties with exact Java types and the conversion table, property-name rules, the
read-only state of a received message, ``acknowledge``, and ``get_body``/``is_body_assignable_to``
for a message with no body. The five body types subclass it. It does no I/O and knows nothing of
sessions: the provider reaches in only through ``_mark_received`` (make properties and body
read-only, install the acknowledge callback) and ``_copy`` (an independent copy for another
consumer).

Internal contract relied on by ``jms.selector`` and ``jms.message.codec``: ``_properties`` maps each
name to a value whose Python type is its Java type (``bool``, ``jms.types`` integers and floats,
``str``); header fields live in the slots named below.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Final

from jms.errors import MessageFormatException, MessageNotWriteableException
from jms.message.conversions import convert, typed_value
from jms.message.destination import Destination
from jms.types import (
    JAVA_TYPE_NAMES,
    LONG_RANGE,
    Byte,
    Double,
    Float,
    Int,
    Long,
    Short,
    is_selector_identifier,
)

__all__ = ["JMSX_PROPERTY_TYPES", "DeliveryMode", "Message"]


class DeliveryMode:
    """The two JMS delivery modes."""

    NON_PERSISTENT: Final = 1
    PERSISTENT: Final = 2


# The JMSX names the spec defines, with the Java type each must have. JMSXGroupID/JMSXGroupSeq are
# set by clients; the others by the provider on send or receive.
JMSX_PROPERTY_TYPES: Final[dict[str, type]] = {
    "JMSXUserID": str,
    "JMSXAppID": str,
    "JMSXDeliveryCount": Int,
    "JMSXGroupID": str,
    "JMSXGroupSeq": Int,
    "JMSXProducerTXID": str,
    "JMSXConsumerTXID": str,
    "JMSXRcvTimestamp": Long,
    "JMSXState": Int,
}


def _check_long(value: object, header: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{header} is a Java long; got {type(value).__name__} {value!r}")
    if not LONG_RANGE[0] <= value <= LONG_RANGE[1]:
        raise ValueError(f"{header} {value} is out of range for a Java long")
    return int(value)


def _check_optional_str(value: object, header: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{header} is a String or None; got {type(value).__name__} {value!r}")
    return None if value is None else str(value)


def _check_destination(value: object, header: str) -> Destination | None:
    if value is not None and not isinstance(value, Destination):
        raise TypeError(f"{header} is a Destination or None; got {type(value).__name__} {value!r}")
    return value


@functools.lru_cache(maxsize=4096)
def property_name_error(name: str) -> str | None:
    """Why ``name`` is not a valid property name, or None if it is. Cached: applications and
    the codec check the same few names over and over."""
    if name == "":
        return "a property name must not be None or empty (IllegalArgumentException)"
    if not is_selector_identifier(name):
        return (
            f"property name {name!r} is not a selector identifier: it must start with a Java "
            "letter (a letter, '_' or '$'), continue with letters or digits, and not be one of "
            "NULL TRUE FALSE NOT AND OR BETWEEN LIKE IN IS ESCAPE"
        )
    if name.startswith("JMS") and not name.startswith("JMS_"):
        if not name.startswith("JMSX"):
            return (
                f"property name {name!r} starts with 'JMS', which the spec reserves for header "
                "fields, JMSX properties and JMS_<vendor>_ properties"
            )
        if name not in JMSX_PROPERTY_TYPES:
            return (
                f"property name {name!r} uses the reserved JMSX prefix but is not a JMSX "
                f"property the spec defines ({', '.join(sorted(JMSX_PROPERTY_TYPES))})"
            )
    return None


def check_property_name(name: object) -> str:
    """Return ``name`` if it is a valid property name, else raise ``ValueError`` saying why."""
    if not isinstance(name, str):
        raise ValueError(
            f"a property name must be a non-empty str (IllegalArgumentException); got {name!r}"
        )
    error = property_name_error(name)
    if error is not None:
        raise ValueError(error)
    return name


class Message:
    """A message with headers and properties and no body (JMS ``Message``)."""

    __slots__ = (
        "__weakref__",
        "_acknowledger",
        "_body_read_only",
        "_correlation_id",
        "_delivery_mode",
        "_delivery_time",
        "_destination",
        "_expiration",
        "_message_id",
        "_priority",
        "_properties",
        "_properties_read_only",
        "_redelivered",
        "_reply_to",
        "_timestamp",
        "_type",
    )

    DEFAULT_DELIVERY_MODE: ClassVar[int] = DeliveryMode.PERSISTENT
    DEFAULT_PRIORITY: ClassVar[int] = 4
    DEFAULT_TIME_TO_LIVE: ClassVar[int] = 0
    DEFAULT_DELIVERY_DELAY: ClassVar[int] = 0

    #: The codec's body-type tag; each body class has its own.
    body_type: ClassVar[str] = "message"

    def __init__(self) -> None:
        self._message_id: str | None = None
        self._timestamp = 0
        self._correlation_id: str | bytes | None = None
        self._reply_to: Destination | None = None
        self._destination: Destination | None = None
        self._delivery_mode = DeliveryMode.PERSISTENT
        self._redelivered = False
        self._type: str | None = None
        self._expiration = 0
        self._delivery_time = 0
        self._priority = Message.DEFAULT_PRIORITY
        self._properties: dict[str, Any] = {}
        self._properties_read_only = False
        self._body_read_only = False
        self._acknowledger: Callable[[], None] | None = None

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} id={self._message_id!r} destination={self._destination} "
            f"properties={len(self._properties)}>"
        )

    # -- headers ------------------------------------------------------------------------------

    def get_jms_message_id(self) -> str | None:
        return self._message_id

    def set_jms_message_id(self, message_id: str | None) -> None:
        self._message_id = _check_optional_str(message_id, "JMSMessageID")

    def get_jms_timestamp(self) -> int:
        return self._timestamp

    def set_jms_timestamp(self, timestamp: int) -> None:
        self._timestamp = _check_long(timestamp, "JMSTimestamp")

    def get_jms_correlation_id(self) -> str | None:
        """The correlation ID as a String; one set as bytes reads as their UTF-8 decoding."""
        value = self._correlation_id
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        return value

    def set_jms_correlation_id(self, correlation_id: str | None) -> None:
        self._correlation_id = _check_optional_str(correlation_id, "JMSCorrelationID")

    def get_jms_correlation_id_as_bytes(self) -> bytes | None:
        """The correlation ID as bytes; one set as a String reads as its UTF-8 encoding."""
        value = self._correlation_id
        if isinstance(value, str):
            return value.encode("utf-8", "surrogatepass")
        return value

    def set_jms_correlation_id_as_bytes(self, correlation_id: bytes | bytearray | None) -> None:
        # "The array is copied before the method returns": bytes() copies a bytearray.
        if correlation_id is not None and not isinstance(correlation_id, bytes | bytearray):
            raise TypeError(
                f"JMSCorrelationID as bytes takes bytes or None; got {type(correlation_id).__name__}"
            )
        self._correlation_id = None if correlation_id is None else bytes(correlation_id)

    def get_jms_reply_to(self) -> Destination | None:
        return self._reply_to

    def set_jms_reply_to(self, reply_to: Destination | None) -> None:
        self._reply_to = _check_destination(reply_to, "JMSReplyTo")

    def get_jms_destination(self) -> Destination | None:
        return self._destination

    def set_jms_destination(self, destination: Destination | None) -> None:
        self._destination = _check_destination(destination, "JMSDestination")

    def get_jms_delivery_mode(self) -> int:
        return self._delivery_mode

    def set_jms_delivery_mode(self, delivery_mode: int) -> None:
        # Any int but a bool: a jms.types Int is an int too.
        if (
            isinstance(delivery_mode, bool)
            or not isinstance(delivery_mode, int)
            or delivery_mode not in (1, 2)
        ):
            raise ValueError(
                "JMSDeliveryMode must be DeliveryMode.NON_PERSISTENT (1) or "
                f"DeliveryMode.PERSISTENT (2); got {delivery_mode!r}"
            )
        self._delivery_mode = int(delivery_mode)

    def get_jms_redelivered(self) -> bool:
        return self._redelivered

    def set_jms_redelivered(self, redelivered: bool) -> None:
        if not isinstance(redelivered, bool):
            raise TypeError(f"JMSRedelivered is a boolean; got {type(redelivered).__name__}")
        self._redelivered = redelivered

    def get_jms_type(self) -> str | None:
        return self._type

    def set_jms_type(self, jms_type: str | None) -> None:
        self._type = _check_optional_str(jms_type, "JMSType")

    def get_jms_expiration(self) -> int:
        return self._expiration

    def set_jms_expiration(self, expiration: int) -> None:
        self._expiration = _check_long(expiration, "JMSExpiration")

    def get_jms_delivery_time(self) -> int:
        return self._delivery_time

    def set_jms_delivery_time(self, delivery_time: int) -> None:
        self._delivery_time = _check_long(delivery_time, "JMSDeliveryTime")

    def get_jms_priority(self) -> int:
        return self._priority

    def set_jms_priority(self, priority: int) -> None:
        if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 9:
            raise ValueError(f"JMSPriority must be an int from 0 to 9; got {priority!r}")
        self._priority = int(priority)

    # -- properties ---------------------------------------------------------------------------

    def _set_property(self, name: str, value: object) -> None:
        check_property_name(name)
        if self._properties_read_only:
            raise MessageNotWriteableException(
                f"cannot set property {name!r}: the properties of a received message are "
                "read-only until clear_properties() is called"
            )
        required = JMSX_PROPERTY_TYPES.get(name)
        if required is not None and type(value) is not required:
            raise MessageFormatException(
                f"{name} must be a Java {JAVA_TYPE_NAMES[required]}; got {type(value).__name__} "
                f"{value!r}"
            )
        self._properties[name] = value

    def _get_property(self, name: str, target: str) -> Any:
        return convert(self._properties.get(name), target, f"property {name!r}")

    def set_boolean_property(self, name: str, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"property {name!r}: a boolean needs a bool, got {value!r}")
        self._set_property(name, value)

    def set_byte_property(self, name: str, value: int) -> None:
        self._set_property(name, Byte(value))

    def set_short_property(self, name: str, value: int) -> None:
        self._set_property(name, Short(value))

    def set_int_property(self, name: str, value: int) -> None:
        self._set_property(name, Int(value))

    def set_long_property(self, name: str, value: int) -> None:
        self._set_property(name, Long(value))

    def set_float_property(self, name: str, value: float) -> None:
        self._set_property(name, Float(value))

    def set_double_property(self, name: str, value: float) -> None:
        self._set_property(name, Double(value))

    def set_string_property(self, name: str, value: str | None) -> None:
        if value is None:
            # setStringProperty(name, null) stores nothing readable; JMS reads it back as null,
            # which is exactly an absent property.
            check_property_name(name)
            if self._properties_read_only:
                raise MessageNotWriteableException(
                    f"cannot set property {name!r}: the properties are read-only"
                )
            self._properties.pop(name, None)
            return
        if not isinstance(value, str):
            raise TypeError(f"property {name!r}: a String needs a str, got {value!r}")
        self._set_property(name, str(value))

    def set_object_property(self, name: str, value: object) -> None:
        self._set_property(name, typed_value(value, f"property {name!r}", allow_body_types=False))

    def get_boolean_property(self, name: str) -> bool:
        return self._get_property(name, "boolean")

    def get_byte_property(self, name: str) -> int:
        return int(self._get_property(name, "byte"))

    def get_short_property(self, name: str) -> int:
        return int(self._get_property(name, "short"))

    def get_int_property(self, name: str) -> int:
        return int(self._get_property(name, "int"))

    def get_long_property(self, name: str) -> int:
        return int(self._get_property(name, "long"))

    def get_float_property(self, name: str) -> float:
        return float(self._get_property(name, "float"))

    def get_double_property(self, name: str) -> float:
        return float(self._get_property(name, "double"))

    def get_string_property(self, name: str) -> str | None:
        return self._get_property(name, "String")

    def get_object_property(self, name: str) -> Any:
        """The value as set, typed (``Int(5)`` for an int property), or None if absent."""
        return self._properties.get(name)

    def property_exists(self, name: str) -> bool:
        return name in self._properties

    def get_property_names(self) -> list[str]:
        """A snapshot of the property names (JMS header fields are not properties)."""
        return list(self._properties)

    def clear_properties(self) -> None:
        """Remove every property and make the properties writable again."""
        self._properties = {}
        self._properties_read_only = False

    def iter_properties(self) -> Iterator[tuple[str, Any]]:
        """(name, typed value) pairs, a Pythonic extra over ``get_property_names``."""
        return iter(list(self._properties.items()))

    # -- acknowledgement and body -------------------------------------------------------------

    def acknowledge(self) -> None:
        """Acknowledge every message the receiving session has consumed (CLIENT_ACKNOWLEDGE).

        A no-op for a message that was never received, and, as the spec says, ignored by
        transacted sessions and automatic acknowledgement modes (the provider's callback decides).
        """
        if self._acknowledger is not None:
            self._acknowledger()

    def clear_body(self) -> None:
        """Empty the body and make it writable; headers and properties are kept."""
        self._body_read_only = False
        self._clear_body_content()

    def _clear_body_content(self) -> None:
        """Subclasses empty their body here."""

    def _has_body(self) -> bool:
        return False

    def _body_value(self) -> Any:
        """The body as ``get_body`` returns it when the body exists."""
        return None

    def _body_is_instance_of(self, cls: type) -> bool:
        return False

    def get_body(self, cls: type) -> Any:
        """The body as an instance of ``cls``, or None if there is no body (JMS 2.0)."""
        if not isinstance(cls, type):
            raise TypeError(f"get_body takes a class, got {cls!r}")
        if not self._has_body():
            return None
        if not self._body_is_instance_of(cls):
            raise MessageFormatException(
                f"the body of this {type(self).__name__} cannot be assigned to {cls.__name__}"
            )
        return self._body_value()

    def is_body_assignable_to(self, cls: type) -> bool:
        if not isinstance(cls, type):
            raise TypeError(f"is_body_assignable_to takes a class, got {cls!r}")
        return not self._has_body() or self._body_is_instance_of(cls)

    def _check_body_writable(self) -> None:
        if self._body_read_only:
            raise MessageNotWriteableException(
                f"the body of this received {type(self).__name__} is read-only until "
                "clear_body() is called"
            )

    # -- provider hooks -----------------------------------------------------------------------

    def _mark_received(self, acknowledger: Callable[[], None] | None) -> None:
        """Make this message look received: properties and body read-only, body ready to read,
        and ``acknowledge()`` routed to ``acknowledger``. Called by the provider on delivery."""
        self._properties_read_only = True
        self._body_read_only = True
        self._acknowledger = acknowledger
        self._prepare_body_for_reading()

    def _prepare_body_for_reading(self) -> None:
        """Bytes and Stream messages reset to the start of the body in read mode."""

    def _copy(self) -> Message:
        """An independent copy with the same headers, properties and body, writable and unacked."""
        # Every slot is assigned here rather than through Message.__init__: the broker copies
        # each message once per delivery, and initialising the slots twice costs half the copy.
        # No message class has a __new__ of its own, so object's is the one to call.
        clone = object.__new__(type(self))
        clone._message_id = self._message_id
        clone._timestamp = self._timestamp
        clone._correlation_id = self._correlation_id
        clone._reply_to = self._reply_to
        clone._destination = self._destination
        clone._delivery_mode = self._delivery_mode
        clone._redelivered = self._redelivered
        clone._type = self._type
        clone._expiration = self._expiration
        clone._delivery_time = self._delivery_time
        clone._priority = self._priority
        clone._properties = dict(self._properties)
        clone._properties_read_only = False
        clone._body_read_only = False
        clone._acknowledger = None
        self._copy_body_into(clone)
        return clone

    def _copy_body_into(self, clone: Any) -> None:
        """Subclasses copy their body content into ``clone`` (its Message slots already set)."""
