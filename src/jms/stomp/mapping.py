"""How a JMS message and its destination look in a STOMP frame: ActiveMQ's mapping, both ways.

``message_from_frame`` reads a SEND (or a MESSAGE from another broker) into a ``Message``;
``frame_for_message`` gives the headers and body that carry a ``Message`` in a SEND or MESSAGE
frame. Text and bytes travel plainly, so any STOMP client reads them: the body as it is, the JMS
headers as ActiveMQ names them (``persistent``, ``priority``, ``expires``, ``correlation-id``,
``reply-to``, ``type``, ``timestamp``, ``redelivered``), properties as string headers, and
``amq-msg-type`` telling text from bytes. Every other body (Map, Stream, Object, none) travels as
``jms.message.codec`` bytes under ``content-type: application/x-jms-message``, and so can a whole
message between two ``jms`` peers, which keeps every property type. Header names that are not
property names (``content-type``, ``x-trace``) survive as ``JMS_jms_STOMP_*`` properties.

Destinations are written ``/queue/x``, ``/topic/x``, ``/temp-queue/x``, ``/temp-topic/x``,
``/remote-temp-queue/x``, ``/remote-temp-topic/x``; which temporary destination a name means is a
connection's business, so both directions take a resolver. This module is pure: no sockets, no
broker, no state; every peer mistake is a ``JMSException`` naming the header and its value.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from jms.broker.delivery import DELIVERY_COUNT, delivered_copy
from jms.errors import InvalidDestinationException, MessageFormatException
from jms.message import (
    BytesMessage,
    DeliveryMode,
    Destination,
    Message,
    TextMessage,
)
from jms.message.codec import decode, encode
from jms.message.message import property_name_error
from jms.stomp.frames import FRAME_END, Version, encode_frame, escape_header
from jms.types import Int, parse_int, parse_long, to_java_string

__all__ = [
    "DESTINATION_PREFIXES",
    "JMS_MESSAGE_CONTENT_TYPE",
    "PROPERTY_HEADER_PREFIX",
    "STOMP_HEADER_PROPERTY_PREFIX",
    "DestinationName",
    "MessageFrames",
    "frame_for_message",
    "header_for_property",
    "message_from_frame",
    "parse_destination",
    "property_for_header",
]

#: ``content-type`` of a body that is a whole message in ``jms.message.codec`` form.
JMS_MESSAGE_CONTENT_TYPE: Final = "application/x-jms-message"
#: Properties carrying STOMP headers whose names are not property names start with this.
STOMP_HEADER_PROPERTY_PREFIX: Final = "JMS_jms_STOMP_"

#: Destination header prefixes and the kind each names.
DESTINATION_PREFIXES: Final = {
    "/queue/": "queue",
    "/topic/": "topic",
    "/temp-queue/": "temp-queue",
    "/temp-topic/": "temp-topic",
    "/remote-temp-queue/": "remote-temp-queue",
    "/remote-temp-topic/": "remote-temp-topic",
}

# Bound once: a class attribute costs two lookups on every use, and these run per message.
_PERSISTENT: Final = DeliveryMode.PERSISTENT
_NON_PERSISTENT: Final = DeliveryMode.NON_PERSISTENT
# Headers that are part of the protocol or of this mapping, never properties.
_NOT_PROPERTIES: Final = frozenset(
    {
        "destination",
        "receipt",
        "transaction",
        "content-length",
        "message-id",
        "subscription",
        "ack",
        "redelivered",
        "amq-msg-type",
        "persistent",
        "priority",
        "expires",
        "timestamp",
        "correlation-id",
        "reply-to",
        "type",
        "JMSXUserID",
    }
)
#: A property whose name is one of those headers travels as this prefix + its name.
PROPERTY_HEADER_PREFIX: Final = "jms-property-"
# JMSX properties whose type is not String, and how a header value is read as one.
_TYPED_JMSX: Final[dict[str, Callable[[str], object]]] = {
    "JMSXGroupSeq": parse_int,
    "JMSXDeliveryCount": parse_int,
    "JMSXState": parse_int,
    "JMSXRcvTimestamp": parse_long,
}
_ESCAPED_CHARACTER: Final = re.compile(r"_([0-9a-f]+)_|__")
_PLAIN_NAME_CHARACTER: Final = re.compile(r"[A-Za-z0-9]")


@dataclass(frozen=True, slots=True)
class DestinationName:
    """A destination header taken apart: ``kind`` (a value of ``DESTINATION_PREFIXES``) and
    ``name`` (what follows the prefix, never empty)."""

    kind: str
    name: str


def parse_destination(text: str, header: str = "destination") -> DestinationName:
    """Split a destination header value; ``InvalidDestinationException`` names a bad one."""
    for prefix, kind in DESTINATION_PREFIXES.items():
        if text.startswith(prefix):
            name = text[len(prefix) :]
            if not name:
                break
            return DestinationName(kind, name)
    raise InvalidDestinationException(
        f"{header} {text!r} is not a destination: it must be a name after one of "
        f"{', '.join(DESTINATION_PREFIXES)}"
    )


@functools.lru_cache(maxsize=4096)
def property_for_header(name: str) -> str:
    """The property that carries header ``name``: the name itself when it is a valid property
    name, else ``JMS_jms_STOMP_`` + the name with every character but ASCII letters and digits
    written ``_<hex code>_`` (and ``_`` as ``__``), which ``header_for_property`` reverses.
    Cached: the same few names come with every message."""
    if property_name_error(name) is None:
        return name
    escaped = "".join(
        character
        if _PLAIN_NAME_CHARACTER.fullmatch(character)
        else "__"
        if character == "_"
        else f"_{ord(character):x}_"
        for character in name
    )
    return STOMP_HEADER_PROPERTY_PREFIX + escaped


@functools.lru_cache(maxsize=4096)
def header_for_property(name: str) -> str:
    """The header name a property is written as (the inverse of ``property_for_header``)."""
    if not name.startswith(STOMP_HEADER_PROPERTY_PREFIX):
        return name
    escaped = name[len(STOMP_HEADER_PROPERTY_PREFIX) :]
    return _ESCAPED_CHARACTER.sub(
        lambda match: "_" if match.group(0) == "__" else chr(int(match.group(1), 16)), escaped
    )


def _long_header(name: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or not value.lstrip("-").isdigit() or not -(2**63) <= number < 2**63:
        raise MessageFormatException(
            f"header {name}:{value!r} is not a whole number of milliseconds (a Java long)"
        )
    return number


def _priority_header(value: str) -> int:
    if value not in ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"):
        raise MessageFormatException(f"header priority:{value!r} is not a priority from 0 to 9")
    return int(value)


def message_from_frame(
    headers: Mapping[str, str],
    body: bytes,
    destination: Destination,
    resolve: Callable[[str], Destination],
    now_ms: int,
    localize: Callable[[Destination], Destination] | None = None,
    new_id: Callable[[], str] | None = None,
) -> Message:
    """The message a SEND (or another broker's MESSAGE) frame carries, sent to ``destination``;
    ``headers`` are the frame's by name (``Frame.header_map()``).

    ``resolve`` turns a ``reply-to`` value into a destination (raising
    ``InvalidDestinationException`` for one it cannot; the value is then kept as the
    ``reply-to`` header property, as ActiveMQ does). ``now_ms`` stamps ``JMSTimestamp`` when the
    frame has no ``timestamp``. Raises ``MessageFormatException`` for a header or body the
    mapping cannot read. A codec body is the whole message; its ``JMSReplyTo`` is the
    ``reply-to`` header's when there is one, else ``localize`` (when given) maps it (a
    connection's own name for a temporary destination to the broker's). A plain frame's message
    gets ``new_id()`` as its JMSMessageID when ``new_id`` is given (a codec body keeps its own).
    """
    if headers.get("content-type") == JMS_MESSAGE_CONTENT_TYPE:
        decoded = decode(body)
        decoded._destination = destination
        reply_to = headers.get("reply-to")
        if reply_to is not None:  # the header names it as this connection sees it
            decoded._reply_to = resolve(reply_to)
        elif localize is not None and decoded._reply_to is not None:
            decoded._reply_to = localize(decoded._reply_to)
        return decoded
    kind = headers.get("amq-msg-type")
    if kind is None:
        kind = "bytes" if "content-length" in headers else "text"
    message: Message
    if kind == "text":
        try:
            message = TextMessage(body.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise MessageFormatException(
                f"the body of a text message is not UTF-8 ({error.reason} at byte {error.start}); "
                "send it as bytes (with content-length and without amq-msg-type:text)"
            ) from None
    elif kind == "bytes":
        # Read-only from its first byte, sharing the frame's immutable body (the broker's copies
        # for its consumers share it too).
        message = BytesMessage._holding(body)
    else:
        raise MessageFormatException(
            f"header amq-msg-type:{kind!r} is not a message type; use text or bytes"
        )
    message._destination = destination
    if new_id is not None:
        message._message_id = new_id()
    message._delivery_mode = _PERSISTENT if headers.get("persistent") == "true" else _NON_PERSISTENT
    value = headers.get("priority")
    if value is not None:
        message._priority = _priority_header(value)
    value = headers.get("expires")
    if value is not None:
        message._expiration = _long_header("expires", value)
    value = headers.get("timestamp")
    message._timestamp = now_ms if value is None else _long_header("timestamp", value)
    message._correlation_id = headers.get("correlation-id")
    message._type = headers.get("type")
    properties = message._properties
    value = headers.get("reply-to")
    if value is not None:
        try:
            message._reply_to = resolve(value)
        except InvalidDestinationException:
            properties[property_for_header("reply-to")] = value
    for name, value in headers.items():
        if name in _NOT_PROPERTIES:  # checked first: destination and content-length come always
            continue
        carried = _property_carried_by(name)
        if carried is None:
            continue
        property_name, parse = carried
        if parse is None:
            properties[property_name] = value
            continue
        try:
            properties[property_name] = parse(value)
        except ValueError as error:
            raise MessageFormatException(f"header {property_name}:{value!r}: {error}") from None
    return message


@functools.lru_cache(maxsize=4096)
def _property_carried_by(
    header: str,
) -> tuple[str, Callable[[str], object] | None] | None:
    """The property a plain frame's ``header`` carries and how its value is read (None: as
    the string it is), or None for a header of the protocol or of this mapping. Cached: the
    same few names come with every message."""
    if header in _NOT_PROPERTIES:
        return None
    name = header
    if name.startswith("jms-"):
        if not name.startswith(PROPERTY_HEADER_PREFIX):
            return None
        name = name[len(PROPERTY_HEADER_PREFIX) :]
    parse = _TYPED_JMSX.get(name)
    if parse is not None:
        return name, parse
    return property_for_header(name), None


def frame_for_message(
    message: Message, name_of: Callable[[Destination], str]
) -> tuple[list[tuple[str, str]], bytes]:
    """The headers (without ``destination``, ``message-id`` and the frame's own) and the body
    that carry ``message`` to a STOMP peer; ``name_of`` writes a destination as a header value."""
    headers: list[tuple[str, str]] = []
    if isinstance(message, TextMessage):
        text = message.get_text()
        body = b"" if text is None else text.encode("utf-8", "surrogatepass")
        headers.append(("amq-msg-type", "text"))
    elif isinstance(message, BytesMessage):
        body = message._content()
        headers.append(("amq-msg-type", "bytes"))
    else:
        body = encode(message)
        headers.append(("content-type", JMS_MESSAGE_CONTENT_TYPE))
    if message._delivery_mode == DeliveryMode.PERSISTENT:
        headers.append(("persistent", "true"))
    headers.append(("priority", str(message._priority)))
    headers.append(("expires", str(message._expiration)))
    headers.append(("timestamp", str(message._timestamp)))
    if message._redelivered:
        headers.append(("redelivered", "true"))
    correlation_id = message.get_jms_correlation_id()
    if correlation_id is not None:
        headers.append(("correlation-id", correlation_id))
    if message._reply_to is not None:
        headers.append(("reply-to", name_of(message._reply_to)))
    if message._type is not None:
        headers.append(("type", message._type))
    for name, value in message._properties.items():
        headers.append(
            (_header_carrying(name), value if type(value) is str else to_java_string(value))
        )
    return headers, body


def _header_carrying(name: str) -> str:
    """The header that carries property ``name`` in a frame (unescaped)."""
    return PROPERTY_HEADER_PREFIX + name if name in _NOT_PROPERTIES else header_for_property(name)


_REMEMBERED_PROPERTY_HEADERS: Final = 1024  # per MessageFrames
# Enum members looked up once: an attribute of an Enum class costs a lookup on every use.
_V1_0: Final = Version.V1_0
_V1_1: Final = Version.V1_1
_PERSISTENT_LINE: Final = "persistent:true\n"


class MessageFrames:
    """The MESSAGE frames of one subscription in one protocol version.

    ``b"".join(frame_parts(message, message_id, ack))`` is exactly ``encode_frame("MESSAGE",
    (("subscription", subscription_id), ("message-id", message_id), ("destination",
    destination_name), ("ack", str(ack)), *mapped), body, version)`` for ``mapped, body =
    frame_for_message(message, name_of)`` (no ``ack`` header when ``ack``, a delivery tag, is None),
    and ``frame_parts`` raises ``ValueError`` as that does. In 1.1 and 1.2 the frame is written
    straight from the message, the server's hot path: the subscription's own headers are escaped
    once, numbers and fixed words go out as they are and only text is escaped.
    """

    __slots__ = (
        "_destination_line",
        "_destination_name",
        "_name_of",
        "_property_headers",
        "_start",
        "_subscription_id",
        "_version",
    )

    def __init__(
        self,
        version: Version,
        subscription_id: str,
        destination_name: str,
        name_of: Callable[[Destination], str],
    ) -> None:
        self._version = version
        self._subscription_id = subscription_id
        self._destination_name = destination_name
        self._name_of = name_of
        self._start = f"MESSAGE\nsubscription:{escape_header(subscription_id, version)}\n"
        self._destination_line = f"destination:{escape_header(destination_name, version)}\n"
        self._property_headers: dict[str, str] = {}

    def frame_parts(
        self,
        message: Message,
        message_id: str,
        ack: int | None,
        destination_name: str | None = None,
        delivery_count: int | None = None,
    ) -> tuple[bytes, ...]:
        """The MESSAGE frame for ``message``, in pieces whose join is the frame (the body is not
        copied into a frame of its own: the server joins a turn's frames once).
        ``destination_name`` replaces the subscription's when the message went to another
        destination than the one subscribed to. With ``delivery_count``, ``message`` is the
        broker's own (``ConsumerSpec.read_only_messages``) and the frame is that of
        ``delivered_copy(message, delivery_count)``, written without making the copy."""
        version = self._version
        if delivery_count is not None and (
            version is _V1_0 or DELIVERY_COUNT in message._properties
        ):
            # Not the fast path's case (a message that carries a count of its own, which the
            # delivery's replaces in place): written from the copy.
            message = delivered_copy(message, delivery_count)
            delivery_count = None
        if version is _V1_0:
            return (self._general(message, message_id, ack, destination_name),)
        if isinstance(message, BytesMessage):
            body = message._content()
            kind = "amq-msg-type:bytes\n"
        elif isinstance(message, TextMessage):
            text = message.get_text()
            body = b"" if text is None else text.encode("utf-8", "surrogatepass")
            kind = "amq-msg-type:text\n"
        else:
            if delivery_count is not None:  # the body is the whole message, its count included
                message = delivered_copy(message, delivery_count)
                delivery_count = None
            body = encode(message)
            kind = f"content-type:{JMS_MESSAGE_CONTENT_TYPE}\n"
        if destination_name is None:
            destination_line = self._destination_line
        else:
            destination_line = f"destination:{escape_header(destination_name, version)}\n"
        ack_line = "" if ack is None else f"ack:{ack}\n"
        # The headers every frame has, in one string: one piece to build and join, not three.
        lines = [
            f"{self._start}message-id:{escape_header(message_id, version)}\n{destination_line}"
            f"{ack_line}{kind}{_PERSISTENT_LINE if message._delivery_mode == _PERSISTENT else ''}"
            f"priority:{message._priority}\nexpires:{message._expiration}\n"
            f"timestamp:{message._timestamp}\n"
        ]
        if message._redelivered if delivery_count is None else delivery_count > 1:
            lines.append("redelivered:true\n")
        if message._correlation_id is not None:  # most messages have none: no call for them
            correlation_id = message.get_jms_correlation_id()
            assert correlation_id is not None  # its String form
            lines.append(f"correlation-id:{escape_header(correlation_id, version)}\n")
        if message._reply_to is not None:
            reply_to = self._name_of(message._reply_to)
            lines.append(f"reply-to:{escape_header(reply_to, version)}\n")
        if message._type is not None:
            lines.append(f"type:{escape_header(message._type, version)}\n")
        for name, value in message._properties.items():
            # Strings and Characters may hold anything; the other types are written in digits,
            # signs, '.', 'E' and words, which need no escape.
            if type(value) is str:
                text = escape_header(value, version)
            elif type(value) is Int:  # the commonest number (a copy's JMSXDeliveryCount)
                text = int.__repr__(value)
            else:
                text = to_java_string(value)
                if isinstance(value, str):
                    text = escape_header(text, version)
            header = self._property_headers.get(name)
            if header is None:
                header = self._property_header(name)
                if not header:  # the general encoder names the empty header it refuses
                    return (
                        self._general(message, message_id, ack, destination_name, delivery_count),
                    )
            lines.append(f"{header}:{text}\n")
        if delivery_count is not None:  # where delivered_copy adds the property: last
            header = self._property_headers.get(DELIVERY_COUNT) or self._property_header(
                DELIVERY_COUNT
            )
            lines.append(f"{header}:{delivery_count}\n")
        if body:
            lines.append(f"content-length:{len(body)}\n")
        lines.append("\n")
        head = "".join(lines)
        if version is _V1_1 and "\r\n" in head:
            # A value ending in a carriage return, which 1.1 cannot escape: the general encoder
            # names the header it refuses.
            return (self._general(message, message_id, ack, destination_name, delivery_count),)
        try:
            encoded = head.encode()
        except UnicodeEncodeError:
            return (self._general(message, message_id, ack, destination_name, delivery_count),)
        return encoded, body, FRAME_END

    def _property_header(self, name: str) -> str:
        """The escaped header carrying property ``name``, remembered (the same few names come
        with every message; a bounded number, whatever a client sends)."""
        if len(self._property_headers) >= _REMEMBERED_PROPERTY_HEADERS:
            self._property_headers.clear()
        escaped = escape_header(_header_carrying(name), self._version)
        if escaped:  # an empty one is refused by the general encoder, every time
            self._property_headers[name] = escaped
        return escaped

    def _general(
        self,
        message: Message,
        message_id: str,
        ack: int | None,
        destination_name: str | None,
        delivery_count: int | None = None,
    ) -> bytes:
        if delivery_count is not None:
            message = delivered_copy(message, delivery_count)
        own = [
            ("subscription", self._subscription_id),
            ("message-id", message_id),
            (
                "destination",
                self._destination_name if destination_name is None else destination_name,
            ),
        ]
        if ack is not None:
            own.append(("ack", str(ack)))
        mapped, body = frame_for_message(message, self._name_of)
        return encode_frame("MESSAGE", (*own, *mapped), body, self._version)
