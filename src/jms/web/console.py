"""The web console's JSON API (``/api/...``), behind the page ``static/console.html``.

``ConsoleApi(server)`` works on the broker of a started ``StompServer`` through one broker
connection of its own, with the server's ``Security``:

- who: every request is authenticated by HTTP Basic with the broker's users (none needed where
  the broker admits anonymous clients), and only a principal some permission rule grants
  ``admin`` may use the console at all; each action also checks ``admin`` on the destinations it
  touches, here on the server;
- forgery: a request that changes something is a POST with a JSON body and the header
  ``X-CSRF-Token`` holding the token ``GET /api/session`` gave this principal (a page of another
  site can neither read that answer nor send that header without a CORS preflight, which is never
  granted), and its ``Origin``, when the browser sends one, must be this server's;
- errors: bad input is a 4xx JSON ``{"error": ..., "field": ...}`` saying what is wrong (``field``
  names the form field where the page shows it); nothing answers with a stack trace.

Broker calls wait for the store, so they run on executor threads, never on the event loop.
Internal destinations (temporary ones, and queues named ``jms.*``, such as the Spark sink's
staging queues) are not listed. Messages are shown in their Java forms by ``message_json``;
an ObjectMessage shows the class its pickle names and its size, and is never unpickled.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import pickletools
import secrets
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar
from urllib.parse import unquote

from aiohttp import hdrs, web

from jms.broker import (
    DEAD_LETTER_REASON,
    DEFAULT_BROWSE_PAGE,
    ORIGINAL_DESTINATION,
    QueueStats,
    SubscriptionName,
    wall_clock_ms,
)
from jms.broker.security import Action
from jms.errors import (
    InvalidDestinationException,
    InvalidSelectorException,
    JMSException,
    JMSSecurityException,
    MessageEOFException,
)
from jms.message import (
    BytesMessage,
    DeliveryMode,
    Destination,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    StreamMessage,
    TextMessage,
    Topic,
)
from jms.stomp.server import StompServer
from jms.types import java_type_name, parse_property_assignment, to_java_string

__all__ = ["CSRF_HEADER", "ConsoleApi", "message_json"]

#: The header a changing request carries its CSRF token in.
CSRF_HEADER: Final = "X-CSRF-Token"
_REALM: Final = 'Basic realm="jms console", charset="UTF-8"'
_INTERNAL_PREFIXES: Final = ("temp-queue://", "temp-topic://", "queue://jms.")
_MAX_PAGE: Final = 500
_BODY_TYPES: Final = ("text", "bytes", "map")

_T = TypeVar("_T")

_PRINCIPAL: Final = web.RequestKey("principal", str)


class ConsoleError(Exception):
    """Bad input or a refused request: HTTP ``status`` with ``message`` for the page, shown by
    the form ``field`` it concerns (None: at the top of the page)."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field


def _typed_json(value: object) -> dict[str, Any]:
    """A typed value as ``{"type": Java type, "value": its Java string}`` (bytes in hex)."""
    if isinstance(value, bytes):
        return {"type": "byte[]", "value": value.hex(" ")}
    if value is None:
        return {"type": "null", "value": None}
    return {"type": java_type_name(value), "value": to_java_string(value)}


_BUILTIN_OPCODES: Final = {
    "EMPTY_DICT": "builtins.dict",
    "EMPTY_LIST": "builtins.list",
    "EMPTY_TUPLE": "builtins.tuple",
    "EMPTY_SET": "builtins.set",
    "BININT": "builtins.int",
    "BININT1": "builtins.int",
    "BININT2": "builtins.int",
    "LONG1": "builtins.int",
    "BINFLOAT": "builtins.float",
    "NEWTRUE": "builtins.bool",
    "NEWFALSE": "builtins.bool",
    "NONE": "builtins.NoneType",
    "SHORT_BINBYTES": "builtins.bytes",
    "BINBYTES": "builtins.bytes",
}


def _pickled_class(data: bytes) -> str:
    """The class a pickle names, read from its opcodes without unpickling it."""
    strings: list[str] = []
    try:
        for opcode, argument, _ in pickletools.genops(data):
            name = opcode.name
            if name == "GLOBAL" and isinstance(argument, str):
                return argument.replace(" ", ".")
            if name == "STACK_GLOBAL" and len(strings) >= 2:
                return f"{strings[-2]}.{strings[-1]}"
            if isinstance(argument, str) and "UNICODE" in name:
                strings.append(argument)
                continue
            if name in _BUILTIN_OPCODES:
                return _BUILTIN_OPCODES[name]
    except (ValueError, IndexError) as error:
        return f"unreadable pickle ({error})"
    return "unknown"


def _body_json(message: Message) -> dict[str, Any]:
    if isinstance(message, TextMessage):
        return {"type": "text", "text": message.get_text()}
    if isinstance(message, BytesMessage):
        data = message.get_body(bytes) or b""
        return {"type": "bytes", "length": len(data), "hex": data.hex(" ")}
    if isinstance(message, MapMessage):
        entries = [
            {"name": name, **_typed_json(message.get_object(name))}
            for name in message.get_map_names()
        ]
        return {"type": "map", "entries": entries}
    if isinstance(message, StreamMessage):
        message.reset()  # a browsed copy: reading it moves nobody else's position
        values = []
        while True:
            try:
                values.append(_typed_json(message.read_object()))
            except MessageEOFException:
                return {"type": "stream", "values": values}
    if isinstance(message, ObjectMessage):
        data = message.get_serialized_object()
        if data is None:
            return {"type": "object", "class": None, "size": 0}
        return {"type": "object", "class": _pickled_class(data), "size": len(data)}
    return {"type": "message"}


def message_json(seq: int, message: Message) -> dict[str, Any]:
    """How the console shows one message: its sequence number, JMS headers, typed properties
    and body in their Java forms."""
    reply_to = message.get_jms_reply_to()
    destination = message.get_jms_destination()
    headers = {
        "JMSMessageID": message.get_jms_message_id(),
        "JMSDestination": None if destination is None else str(destination),
        "JMSTimestamp": message.get_jms_timestamp(),
        "JMSCorrelationID": message.get_jms_correlation_id(),
        "JMSReplyTo": None if reply_to is None else str(reply_to),
        "JMSDeliveryMode": "PERSISTENT"
        if message.get_jms_delivery_mode() == DeliveryMode.PERSISTENT
        else "NON_PERSISTENT",
        "JMSPriority": message.get_jms_priority(),
        "JMSExpiration": message.get_jms_expiration(),
        "JMSDeliveryTime": message.get_jms_delivery_time(),
        "JMSRedelivered": message.get_jms_redelivered(),
        "JMSType": message.get_jms_type(),
    }
    properties = [{"name": name, **_typed_json(value)} for name, value in message.iter_properties()]
    return {"seq": seq, "headers": headers, "properties": properties, "body": _body_json(message)}


def _basic_credentials(header: str) -> tuple[str, str]:
    """The user name and password of an ``Authorization: Basic ...`` header (RFC 7617)."""
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        raise ConsoleError(401, f"log in with HTTP Basic, not {scheme!r}")
    try:
        text = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as error:
        raise ConsoleError(401, f"the Basic credentials are not base64 of UTF-8: {error}") from None
    user, colon, password = text.partition(":")
    if not colon:
        raise ConsoleError(401, "the Basic credentials are not user:password")
    return user, password


def _is_internal(stats: QueueStats) -> bool:
    return stats.name.startswith(_INTERNAL_PREFIXES) or stats.destination.startswith(
        _INTERNAL_PREFIXES
    )


def _destination_json(stats: QueueStats) -> dict[str, Any]:
    kind = "queue" if stats.name.startswith("queue://") else stats.name.partition("://")[0]
    return {
        "name": stats.name,
        "destination": stats.destination,
        "kind": kind,
        "browsable": kind in ("queue", "durable"),
        "dead_letter_queue": stats.dead_letter_queue,
        "depth": stats.depth,
        "in_flight": stats.in_flight,
        "consumers": stats.consumers,
        "enqueued": stats.enqueued,
        "dequeued": stats.acknowledged + stats.expired + stats.dead_lettered,
    }


def _topic_json(topic: str, subscriptions: list[dict[str, Any]]) -> dict[str, Any]:
    """A topic's row: the sums over its subscriptions (a topic holds nothing itself)."""
    row: dict[str, Any] = {
        "name": topic,
        "destination": topic,
        "kind": "topic",
        "browsable": False,
        "dead_letter_queue": False,
        "subscriptions": len(subscriptions),
    }
    for key in ("depth", "in_flight", "consumers", "enqueued", "dequeued"):
        row[key] = sum(subscription[key] for subscription in subscriptions)
    return row


def _field(payload: dict[str, Any], name: str, kind: type[_T], what: str) -> _T:
    """``payload[name]`` if it is a ``kind`` (JSON's true is no int here)."""
    value = payload.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) is not (kind is bool):
        raise ConsoleError(400, f"{name} must be {what}; got {value!r}", name)
    return value


class ConsoleApi:
    """The ``/api/...`` routes and the guard in front of the console; see the module docstring."""

    def __init__(self, server: StompServer) -> None:
        self._server = server
        self._broker = server.broker
        self._security = server.security
        self._csrf_key = secrets.token_bytes(32)
        self._connection_id: int | None = None

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/api/session", self._session),
            web.get("/api/destinations", self._destinations),
            web.get("/api/messages", self._messages),
            web.post("/api/send", self._send),
            web.post("/api/purge", self._purge),
            web.post("/api/delete", self._delete),
            web.post("/api/move", self._move),
        ]

    async def start(self) -> None:
        """Open the console's broker connection."""
        self._connection_id = await self._call(self._broker.connect)

    async def close(self) -> None:
        """Close the console's broker connection (the broker stays open)."""
        connection_id, self._connection_id = self._connection_id, None
        if connection_id is not None and not self._broker.closed:
            await self._call(self._broker.disconnect, connection_id)

    # -- the guard -----------------------------------------------------------------------------

    @web.middleware
    async def guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Authenticate and authorize every console request (the page and ``/api``), check
        changing requests for forgery, and turn ``ConsoleError`` into its JSON answer."""
        if request.path == "/" or request.path.startswith(("/api/", "/static/")):
            try:
                request[_PRINCIPAL] = await self._authenticate(request)
                if request.method not in ("GET", "HEAD"):
                    self._check_forgery(request)
                return await handler(request)
            except ConsoleError as error:
                headers = {hdrs.WWW_AUTHENTICATE: _REALM} if error.status == 401 else None
                return web.json_response(
                    {"error": error.message, "field": error.field},
                    status=error.status,
                    headers=headers,
                )
        return await handler(request)

    async def _authenticate(self, request: web.Request) -> str:
        user: str | None = None
        password: str | None = None
        header = request.headers.get(hdrs.AUTHORIZATION)
        if header:
            user, password = _basic_credentials(header)
        if not await self._call(self._security.authenticate, user, password):
            raise ConsoleError(
                401,
                f"login {user!r} refused: wrong user name or password"
                if user
                else "this broker does not admit anonymous users: log in with a broker user",
            )
        principal = self._security.principal(user)
        if not self._security.grants_anywhere(principal, Action.ADMIN):
            raise ConsoleError(
                403, f"user {principal!r} has no admin permission, which the console needs"
            )
        return principal

    def _csrf_token(self, principal: str) -> str:
        return hmac.new(self._csrf_key, principal.encode("utf-8"), hashlib.sha256).hexdigest()

    def _check_forgery(self, request: web.Request) -> None:
        token = request.headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(token, self._csrf_token(request[_PRINCIPAL])):
            raise ConsoleError(403, f"missing or wrong {CSRF_HEADER} header (reload the page)")
        origin = request.headers.get(hdrs.ORIGIN)
        if origin is not None and origin != f"{request.scheme}://{request.host}":
            raise ConsoleError(403, f"cross-origin request from {origin} refused")
        if request.content_type != "application/json":
            raise ConsoleError(415, f"send JSON (application/json), not {request.content_type}")

    def _allow(self, request: web.Request, destination: str, field: str = "destination") -> None:
        principal = request[_PRINCIPAL]
        if not self._security.allows(principal, Action.ADMIN, destination):
            raise ConsoleError(403, f"user {principal!r} may not administer {destination}", field)

    async def _call(self, function: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.get_running_loop().run_in_executor(None, function, *args)

    @property
    def _connection(self) -> int:
        if self._connection_id is None:
            raise ConsoleError(503, "the console is not started")
        return self._connection_id

    async def _stats(self) -> dict[str, QueueStats]:
        return {s.name: s for s in await self._call(self._broker.stats)}

    async def _known(self, name: str) -> QueueStats:
        stats = (await self._stats()).get(name)
        if stats is None:
            raise ConsoleError(
                404,
                f"there is no queue or durable subscription {name} on this broker",
                "destination",
            )
        return stats

    @staticmethod
    async def _payload(request: web.Request) -> dict[str, Any]:
        try:
            payload = await request.json()
        except ValueError as error:
            raise ConsoleError(400, f"the request body is not JSON: {error}") from None
        if not isinstance(payload, dict):
            raise ConsoleError(400, "the request body must be a JSON object")
        return payload

    # -- reading -------------------------------------------------------------------------------

    async def _session(self, request: web.Request) -> web.Response:
        principal = request[_PRINCIPAL]
        return web.json_response(
            {
                "user": principal,
                "broker": self._broker.name,
                "csrf_token": self._csrf_token(principal),
                "max_body_bytes": self._server.limits.max_body_bytes,
            }
        )

    async def _destinations(self, request: web.Request) -> web.Response:
        """Queues by name, then each topic followed by its subscriptions."""
        principal = request[_PRINCIPAL]
        stats = await self._call(self._broker.stats)
        topics = await self._call(self._broker.topics)
        allowed = [
            s
            for s in sorted(stats, key=lambda s: s.name)
            if not _is_internal(s) and self._security.allows(principal, Action.ADMIN, s.destination)
        ]
        shown = [_destination_json(s) for s in allowed if s.name.startswith("queue://")]
        for topic in sorted(str(t) for t in topics):
            if topic.startswith(_INTERNAL_PREFIXES) or not self._security.allows(
                principal, Action.ADMIN, topic
            ):
                continue
            subscriptions = [
                _destination_json(s)
                for s in allowed
                if s.destination == topic and not s.name.startswith("queue://")
            ]
            shown += [_topic_json(topic, subscriptions), *subscriptions]
        counters = self._server.counters
        return web.json_response(
            {
                "time_ms": wall_clock_ms(),
                "connections": self._server.connection_count,
                "messages_received": counters.messages_received,
                "messages_delivered": counters.messages_delivered,
                "destinations": shown,
            }
        )

    @staticmethod
    def _source(name: str) -> Queue | SubscriptionName:
        scheme, _, rest = name.partition("://")
        if scheme == "queue" and rest:
            return Queue(rest)
        if scheme == "durable" and "/" in rest:
            client_id, _, subscription = rest.partition("/")
            return SubscriptionName(unquote(subscription), unquote(client_id) or None)
        raise ConsoleError(
            400,
            f"{name!r} cannot be browsed: only queues (queue://NAME) and durable subscriptions "
            "(durable://CLIENT/NAME) hold messages to show",
            "destination",
        )

    async def _messages(self, request: web.Request) -> web.Response:
        query = request.query
        name = query.get("destination", "")
        source = self._source(name)
        stats = await self._known(name)
        self._allow(request, stats.destination)
        start = self._number(query.get("start", "1"), "start", 1)
        limit = min(self._number(query.get("limit", "50"), "limit", 1), _MAX_PAGE)
        selector = query.get("selector", "").strip() or None
        connection_id = self._connection
        try:
            page = await self._call(
                self._broker.browse, connection_id, source, selector, start, None, limit
            )
        except InvalidSelectorException as error:
            raise ConsoleError(400, str(error), "selector") from None
        return web.json_response(
            {
                "destination": name,
                "messages": [message_json(seq, message) for seq, message in page.messages],
                "next_start": page.next_seq,
            }
        )

    @staticmethod
    def _number(text: str, field: str, minimum: int) -> int:
        if not text.isdigit() or int(text) < minimum:
            raise ConsoleError(
                400, f"{field} must be a whole number of at least {minimum}; got {text!r}", field
            )
        return int(text)

    # -- actions -------------------------------------------------------------------------------

    async def _send(self, request: web.Request) -> web.Response:
        payload = await self._payload(request)
        try:
            destination = Destination.parse(
                _field(payload, "destination", str, "queue://NAME or topic://NAME")
            )
        except InvalidDestinationException as error:
            raise ConsoleError(400, str(error), "destination") from None
        if not isinstance(destination, Queue | Topic) or destination.is_temporary:
            raise ConsoleError(400, f"send to a queue or a topic, not {destination}", "destination")
        self._allow(request, str(destination))
        message = self._test_message(payload)
        message.set_jms_destination(destination)
        message.set_jms_message_id(f"ID:console-{uuid.uuid4()}")
        message.set_jms_timestamp(wall_clock_ms())
        connection_id = self._connection
        try:
            await self._call(self._broker.send, connection_id, message)
        except JMSSecurityException as error:
            raise ConsoleError(403, str(error), "destination") from None
        except JMSException as error:
            raise ConsoleError(409, str(error)) from None
        return web.json_response(
            {"sent": message.get_jms_message_id(), "destination": str(destination)}
        )

    def _test_message(self, payload: dict[str, Any]) -> Message:
        kind = payload.get("type", "text")
        if kind not in _BODY_TYPES:
            raise ConsoleError(
                400, f"type must be one of {', '.join(_BODY_TYPES)}; got {kind!r}", "type"
            )
        body = _field(payload, "body", str, "a string")
        limit = self._server.limits.max_body_bytes
        size = len(body.encode("utf-8"))
        if size > limit:
            raise ConsoleError(
                413, f"the body is {size} bytes; the broker takes at most {limit}", "body"
            )
        message: Message
        if kind == "text":
            message = TextMessage(body)
        elif kind == "bytes":
            try:
                data = bytes.fromhex(body)
            except ValueError as error:
                raise ConsoleError(
                    400, f"a bytes body is hex digits (de ad be ef): {error}", "body"
                ) from None
            message = BytesMessage()
            message.write_bytes(data)
        else:
            message = MapMessage()
            for line_number, line in enumerate(body.splitlines(), 1):
                if line.strip():
                    name, value = self._assignment(line.strip(), f"body line {line_number}", "body")
                    message.set_object(name, value)
        properties = payload.get("properties", [])
        if not isinstance(properties, list) or not all(isinstance(p, str) for p in properties):
            raise ConsoleError(
                400, "properties must be a list of name=type:value strings", "properties"
            )
        for number, option in enumerate(properties, 1):
            name, value = self._assignment(option, f"property {number}", "properties")
            message.set_object_property(name, value)
        return message

    @staticmethod
    def _assignment(option: str, where: str, field: str) -> tuple[str, object]:
        try:
            return parse_property_assignment(option)
        except ValueError as error:
            raise ConsoleError(400, f"{where}: {error}", field) from None

    async def _queue(
        self, request: web.Request, payload: dict[str, Any]
    ) -> tuple[Queue, QueueStats]:
        name = _field(payload, "destination", str, "queue://NAME")
        source = self._source(name)
        if not isinstance(source, Queue):
            raise ConsoleError(400, f"only a queue can be changed here, not {name}", "destination")
        stats = await self._known(name)
        self._allow(request, name)
        return source, stats

    async def _purge(self, request: web.Request) -> web.Response:
        queue, _ = await self._queue(request, await self._payload(request))
        connection_id = self._connection
        last = await self._call(self._broker.last_sequence, queue)
        purged = await self._call(self._broker.acknowledge_through, connection_id, queue, last)
        return web.json_response({"purged": purged, "destination": str(queue)})

    async def _delete(self, request: web.Request) -> web.Response:
        payload = await self._payload(request)
        queue, _ = await self._queue(request, payload)
        seq = _field(payload, "seq", int, "a message's sequence number")
        connection_id = self._connection
        deleted = await self._call(
            self._broker.acknowledge_through, connection_id, queue, seq, None, seq
        )
        if not deleted:
            raise ConsoleError(409, f"message #{seq} of {queue} is gone or in flight to a consumer")
        return web.json_response({"deleted": seq, "destination": str(queue)})

    async def _move(self, request: web.Request) -> web.Response:
        """Move dead letters back where they came from: ``seqs`` (a list) or every one (``all``)."""
        payload = await self._payload(request)
        queue, stats = await self._queue(request, payload)
        if not stats.dead_letter_queue:
            raise ConsoleError(400, f"{queue} is not a dead-letter queue", "destination")
        connection_id = self._connection
        if payload.get("all") is True:
            found = await self._browse_all(connection_id, queue)
        else:
            seqs = payload.get("seqs")
            if not isinstance(seqs, list) or not seqs or not all(type(s) is int for s in seqs):
                raise ConsoleError(400, 'give "seqs": [sequence numbers] or "all": true', "seqs")
            found = []
            for seq in seqs:
                page = await self._call(
                    self._broker.browse, connection_id, queue, None, seq, seq, 1
                )
                found.extend(page.messages)
        moved = 0
        skipped = []
        for seq, message in found:
            reason = await self._move_one(request, connection_id, queue, seq, message)
            if reason is None:
                moved += 1
            else:
                skipped.append({"seq": seq, "reason": reason})
        return web.json_response({"moved": moved, "skipped": skipped})

    async def _browse_all(self, connection_id: int, queue: Queue) -> list[tuple[int, Message]]:
        found: list[tuple[int, Message]] = []
        start: int | None = 1
        while start is not None:
            page = await self._call(
                self._broker.browse, connection_id, queue, None, start, None, DEFAULT_BROWSE_PAGE
            )
            found.extend(page.messages)
            start = page.next_seq
        return found

    async def _move_one(
        self, request: web.Request, connection_id: int, queue: Queue, seq: int, message: Message
    ) -> str | None:
        """Send a dead letter back to its original destination, then remove it from ``queue``:
        at least once (a crash in between leaves it in both). The reason it was not moved, or
        None."""
        original_text = message.get_object_property(ORIGINAL_DESTINATION)
        if not isinstance(original_text, str):
            return f"it has no {ORIGINAL_DESTINATION} property"
        try:
            original = Destination.parse(original_text)
        except InvalidDestinationException as error:
            return str(error)
        if not self._security.allows(request[_PRINCIPAL], Action.ADMIN, str(original)):
            return f"user {request[_PRINCIPAL]!r} may not administer {original}"
        kept = [
            (n, v)
            for n, v in message.iter_properties()
            if n not in (ORIGINAL_DESTINATION, DEAD_LETTER_REASON)
        ]
        message.clear_properties()
        for name, value in kept:
            message.set_object_property(name, value)
        message.set_jms_destination(original)
        message.set_jms_redelivered(False)
        try:
            await self._call(self._broker.send, connection_id, message)
        except JMSException as error:
            return str(error)
        removed = await self._call(
            self._broker.acknowledge_through, connection_id, queue, seq, None, seq
        )
        return (
            None
            if removed
            else f"it was copied to {original} but is in flight here, so it stays too"
        )
