"""``StompServer``: the asyncio STOMP 1.0/1.1/1.2 server in front of a ``Broker``.

Each client connection is one ``_ClientConnection`` (an ``asyncio.Protocol``). It only moves
bytes: what it reads goes through the sans-IO ``ServerConnection``, which says which frames are
valid; each frame becomes calls on the broker with the JMS mapping of ``jms.stomp.mapping``
(documented in docs/stomp.md, "JMS mapping"); deliveries the broker hands to a subscription's
sink become MESSAGE frames written in batches on the loop. The rules that keep one client from
hurting others or the broker:

- every mistake a client makes ends in an ERROR frame with a message that says what and where,
  then that connection closes; a bug in handling one frame does the same, logged;
- nothing blocks the loop: logins are checked on an executor thread, and a ``CompletionWaiter``
  reports on the loop when store work is durable; a RECEIPT goes out only once what its frame
  did is durable and after the MESSAGE frames its frame caused on the same connection;
- memory per client stays bounded: deliveries are limited by the consumer's prefetch credit,
  which an ``auto`` subscription only gets back once its frames left the socket buffer (while
  the transport is paused for writing, credit is withheld), and reading stops while a client
  does not read what is written to it; a connection closed while its client reads nothing is
  aborted after ``_CLOSE_GRACE_S`` instead of keeping its unsent bytes;
- producer flow control: when a SEND leaves the broker at its memory budget
  (``Broker.producers_blocked``), the server stops reading that connection — the frames after
  the SEND wait unread, in the parser and in the socket — until the broker says memory is
  available again; the broker's slow-consumer rule closes a connection through its
  ``on_close`` with the reason in an ERROR frame;
- heart-beats both ways: the server sends what it promised and closes a connection that stays
  silent past the tolerance; a connection that never sends CONNECT is closed after a timeout.

The server never stores messages itself and never decides delivery order: that is the broker's.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import socket
import ssl
import struct
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

from jms.broker import (
    DEFAULT_BROWSE_PAGE,
    BatchMarker,
    Broker,
    ConsumerSpec,
    Delivery,
    StagedRange,
    SubscriptionName,
    wall_clock_ms,
)
from jms.broker.security import Action, LoginThrottle, Security
from jms.broker.staging import split_stage_frames
from jms.errors import (
    IllegalStateException,
    InvalidDestinationException,
    InvalidSelectorException,
    JMSException,
    JMSSecurityException,
    ResourceAllocationException,
)
from jms.message import (
    DeliveryMode,
    Destination,
    Message,
    Queue,
    TemporaryQueue,
    TemporaryTopic,
    TextMessage,
    Topic,
)
from jms.message.codec import encode
from jms.selector import Selector
from jms.stomp.connection import ConnectRequest, ServerConnection, ServerState
from jms.stomp.durability import CompletionWaiter, DeferredStore
from jms.stomp.errors import StompProtocolError
from jms.stomp.frames import FRAME_END, Frame, HeartBeat, Version, receipt_frame
from jms.stomp.mapping import (
    JMS_MESSAGE_CONTENT_TYPE,
    MessageFrames,
    message_from_frame,
    parse_destination,
)
from jms.stomp.negotiation import HeartBeatOffer
from jms.stomp.packed import PACKED_CONTENT_TYPE, RECORD_HEAD_SIZE, packed_parts
from jms.stomp.parser import FrameLimits
from jms.stomp.tls import certificate_subject
from jms.store import DONE, Completion

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT_S",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_PORT",
    "DEFAULT_TLS_PORT",
    "EXTENSIONS_HEADER",
    "MAX_BODY_HEADER",
    "STOMP_DEFAULT_PREFETCH",
    "ServerCounters",
    "StompServer",
]

logger = logging.getLogger(__name__)

#: Seconds a new connection may take to send CONNECT unless told otherwise.
DEFAULT_CONNECT_TIMEOUT_S: Final = 30.0
#: Connections a server keeps open at once unless told otherwise (each holds a socket and buffers).
DEFAULT_MAX_CONNECTIONS: Final = 1000
#: The STOMP port, as ActiveMQ and most brokers use it.
DEFAULT_PORT: Final = 61613
#: The STOMP-over-TLS port, as ActiveMQ and RabbitMQ use it.
DEFAULT_TLS_PORT: Final = 61614
#: Prefetch of a subscription without ``activemq.prefetchSize`` (ActiveMQ's STOMP default).
STOMP_DEFAULT_PREFETCH: Final = 1000
#: CONNECT/CONNECTED header by which a ``jms`` client and server agree on the jms extensions.
EXTENSIONS_HEADER: Final = "jms-extensions"
#: CONNECTED header (with the jms extensions): the largest frame body this server takes.
MAX_BODY_HEADER: Final = "jms-max-body"
_EXTENSIONS_VERSION: Final = "1"
#: Admin requests are SENDs to ``/admin/<command>``.
_ADMIN_PREFIX: Final = "/admin/"
# Typed, not inferred: ``self._receipt_headers = ()`` would narrow the attribute to an empty
# tuple for the rest of ``_handle``, though the handler it calls may set headers.
_NO_HEADERS: Final[tuple[tuple[str, str], ...]] = ()
# Bound once, for what runs on every read, SEND or ACK: an Enum member looked up through its
# class costs ~200 ns.
_CONNECTING: Final = ServerState.CONNECTING
_CONNECTED: Final = ServerState.CONNECTED
_SEND: Final = Action.SEND
_V1_2: Final = Version.V1_2
_HIGH_WATER: Final = 1024 * 1024  # write buffer above which credit is withheld
_KNOWN_DESTINATIONS: Final = 1024  # destinations remembered per connection
_READ_STOP: Final = 8 * 1024 * 1024  # write buffer above which reading stops too
# Seconds a closed connection may take to send what it still has before it is aborted.
_CLOSE_GRACE_S: Final = 5.0
_RESET_ON_CLOSE: Final = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close sends a reset
# Packed records per range-read frame: well under a client's body limit (10 MiB by default).
_PACKED_FRAME_BYTES: Final = 1024 * 1024
_PACKED_BROWSE_PAGE: Final = 5000  # messages per broker call of a packed browse


def _server_version() -> str:
    try:
        return version("jms")
    except PackageNotFoundError:
        return "0"


@dataclass(slots=True)
class ServerCounters:
    """Counters since the server started, for metrics."""

    connections_total: int = 0
    connections_refused: int = 0
    frames_received: int = 0
    messages_received: int = 0
    messages_delivered: int = 0
    bytes_received: int = 0
    bytes_sent: int = 0
    errors_sent: int = 0
    #: Times a connection stopped being read because the broker held producers back.
    producer_pauses: int = 0
    by_command: Counter[str] = field(default_factory=Counter)


class StompServer:
    """Serves ``broker`` over STOMP on ``host:port`` (port 0 picks a free one; None: no plain
    listener) and, given ``ssl_context`` (``jms.stomp.tls.ServerTls.context()``), over TLS on
    ``host:tls_port``. Both listeners share the connections, counters and login throttle.

    ``security`` authenticates logins and authorizes each action (``None``: anonymous clients
    allowed everything). ``store`` is the ``DeferredStore`` the broker was built on, if any: with
    it, store waits move off the event loop (without it, broker calls wait for the store inline,
    which is right for a memory store). ``heart_beat`` is what CONNECTED offers; a client that
    promised heart-beats and is silent for ``heart_beat_tolerance`` times the interval is
    disconnected, as is one that sends no CONNECT within ``connect_timeout_s``.
    ``login_throttle`` slows down the logins of a client address after it failed to log in.
    ``max_connections`` bounds the connections open at once (TCP, TLS and WebSocket together;
    None: no bound): one more is answered with an ERROR frame and closed.
    """

    def __init__(
        self,
        broker: Broker,
        *,
        host: str = "127.0.0.1",
        port: int | None = DEFAULT_PORT,
        tls_port: int = DEFAULT_TLS_PORT,
        ssl_context: ssl.SSLContext | None = None,
        security: Security | None = None,
        store: DeferredStore | None = None,
        heart_beat: HeartBeatOffer = HeartBeatOffer(10_000, 10_000),  # noqa: B008 - frozen
        heart_beat_tolerance: float = 2.0,
        limits: FrameLimits = FrameLimits(),  # noqa: B008 - frozen
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        login_throttle: LoginThrottle | None = None,
        max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        if port is None and ssl_context is None:
            raise ValueError("a StompServer needs a port, an ssl_context, or both")
        if heart_beat_tolerance < 1.0:
            raise ValueError(
                f"heart_beat_tolerance must be at least 1.0; got {heart_beat_tolerance}"
            )
        self.broker = broker
        self.host = host
        self.security = security if security is not None else Security.open()
        self.store = store
        self.heart_beat = heart_beat
        self.heart_beat_tolerance = heart_beat_tolerance
        self.limits = limits
        self.connect_timeout_s = connect_timeout_s
        if max_connections is not None and (
            type(max_connections) is not int or max_connections < 1
        ):
            raise ValueError(
                f"max_connections must be an int of at least 1 or None; got {max_connections!r}"
            )
        self.max_connections = max_connections
        self.counters = ServerCounters()
        self.login_throttle = login_throttle if login_throttle is not None else LoginThrottle()
        self.server_header = f"jms/{_server_version()}"
        self._requested_ports = {False: port, True: tls_port if ssl_context is not None else None}
        self._ssl_context = ssl_context
        self._instance = uuid.uuid4().hex[:12]
        self._connection_numbers = itertools.count(1)
        self._connections: set[_ClientConnection] = set()
        self._servers: dict[bool, asyncio.Server] = {}  # by whether it speaks TLS
        self._waiter: CompletionWaiter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        """Start listening; returns once the socket is bound."""
        if self._waiter is not None:
            raise IllegalStateException("this StompServer is already started")
        self._loop = asyncio.get_running_loop()
        self._waiter = CompletionWaiter(self._loop)
        try:
            for tls, port in self._requested_ports.items():
                if port is not None:
                    self._servers[tls] = await self._loop.create_server(
                        lambda: _ClientConnection(self),
                        self.host,
                        port,
                        ssl=self._ssl_context if tls else None,
                    )
        except BaseException:
            await self.close()
            raise

    def _bound_port(self, tls: bool) -> int:
        server = self._servers.get(tls)
        if server is None or not server.sockets:
            kind = "TLS" if tls else "plain"
            raise IllegalStateException(f"the server has no {kind} STOMP listener")
        return int(server.sockets[0].getsockname()[1])

    @property
    def port(self) -> int:
        """The plain listener's port actually bound (useful with port 0)."""
        return self._bound_port(False)

    @property
    def tls_port(self) -> int:
        """The TLS listener's port actually bound."""
        return self._bound_port(True)

    @property
    def url(self) -> str:
        """Where clients connect: the plain listener, or the TLS one when there is no other."""
        return self.urls[0]

    @property
    def urls(self) -> list[str]:
        """Every listener's URL, plain first."""
        if not self._servers:
            raise IllegalStateException("the server is not listening")
        return [
            f"stomp+ssl://{self.host}:{self.tls_port}"
            if tls
            else f"stomp://{self.host}:{self.port}"
            for tls in sorted(self._servers)
        ]

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    @property
    def paused_producer_count(self) -> int:
        """Connections not read now because the broker holds producers back."""
        return sum(1 for connection in self._connections if connection.held_back)

    async def close(self) -> None:
        """Stop listening, end every connection (what they held goes back to the broker), and
        wait for outstanding store completions. The broker itself stays open."""
        if self._waiter is None:
            return
        for server in self._servers.values():
            server.close()
        for connection in list(self._connections):
            connection.shut_down("the broker is shutting down")
        for server in self._servers.values():
            await server.wait_closed()
        for _ in range(100):
            if not self._connections:
                break
            await asyncio.sleep(0.01)
        await asyncio.get_running_loop().run_in_executor(None, self._waiter.close)
        self._waiter = None
        self._servers.clear()

    def connection_protocol(self) -> asyncio.Protocol:
        """A new client connection for a transport other than this server's own listener (the
        WebSocket endpoint of ``jms.web``): the same frame handling, security, limits and
        heart-beats, counted among this server's connections."""
        if self._waiter is None:
            raise IllegalStateException("the StompServer is not started")
        return _ClientConnection(self)

    def _next_session_id(self) -> str:
        return f"{self._instance}-{next(self._connection_numbers)}"


class _Subscription:
    """One STOMP subscription of a connection."""

    __slots__ = (
        "ack",
        "consumer_id",
        "destination",
        "destination_name",
        "explicit_credit",
        "frames",
        "id",
        "tags_by_message_id",
        "unacked",
    )

    def __init__(
        self,
        subscription_id: str,
        destination: Destination,
        destination_name: str,
        ack: str,
        explicit_credit: bool,
        frames: MessageFrames,
        acked_by_message_id: bool,
    ) -> None:
        self.id = subscription_id
        self.destination = destination
        self.destination_name = destination_name  # as this connection writes it
        self.frames = frames  # MESSAGE frames for a client without the jms extensions
        self.ack = ack
        # A jms client gives credit back itself, and keeps its messages after UNSUBSCRIBE.
        self.explicit_credit = explicit_credit
        self.consumer_id: int | None = None  # None for a browser
        # Deliveries awaiting ACK/NACK, in delivery order: tag -> message-id header.
        self.unacked: dict[int, str] = {}
        # The same the other way round, where ACK/NACK name the message-id (STOMP 1.0 and 1.1).
        self.tags_by_message_id: dict[str, int] | None = {} if acked_by_message_id else None


class _Transaction:
    __slots__ = ("id", "nacked")

    def __init__(self, transaction_id: int) -> None:
        self.id = transaction_id
        self.nacked: list[int] = []


class _FrameError(Exception):
    """A frame the connection cannot act on; answered with ERROR and the connection closes."""

    def __init__(self, message: str, exception: type[JMSException] = JMSException) -> None:
        super().__init__(message)
        self.exception = exception


def _refusal(frame: Frame, error: BaseException) -> tuple[tuple[str, str], ...]:
    """RECEIPT headers telling a jms client its request was refused, and why."""
    destination = frame.header("destination")
    where = f"{frame.command}{f' {destination}' if destination else ''}"
    return (("jms-exception", type(error).__name__), ("message", f"{where}: {error}"))


def _first_failure(completions: list[Completion]) -> Exception | None:
    """The error of the first of ``completions`` (each done) that failed, or None."""
    for completion in completions:
        try:
            completion.wait()  # done: returns or raises at once
        except Exception as error:
            return error
    return None


def _flag(frame: Frame, name: str) -> bool:
    return frame.header(name) == "true"


class _ClientConnection(asyncio.Protocol):
    """One client's connection; see the module docstring."""

    def __init__(self, server: StompServer) -> None:
        self._server = server
        self._counters = server.counters
        self._broker = server.broker
        self._security = server.security
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._conn = ServerConnection(heart_beat=server.heart_beat, limits=server.limits)
        self._session_id = server._next_session_id()
        self._transport: asyncio.Transport | None = None
        self._peer = "?"
        self._address = "?"  # the peer's IP address: what failed logins are counted by
        self._certificate_subject: str | None = None  # of a verified TLS client certificate
        self._broker_id: int | None = None
        self._principal = "anonymous"
        self._extensions = False
        self._closing = False
        self._closed = False
        self._message_ids = itertools.count(1)
        self._message_id_prefix = f"ID:{self._session_id}:"  # of the IDs plain SENDs are given
        self._subscriptions: dict[str, _Subscription] = {}
        self._by_consumer: dict[int, _Subscription] = {}
        self._tag_owner: dict[int, _Subscription] = {}
        self._transactions: dict[str, _Transaction] = {}
        self._temporaries: dict[tuple[bool, str], TemporaryQueue | TemporaryTopic] = {}
        self._local_names: dict[str, str] = {}  # broker's temporary name -> this client's name
        self._known_destinations: dict[str, Destination] = {}  # header value -> queue or topic
        self._pending: list[Delivery] = []
        # Plain SENDs of this read (each with its receipt header) whose messages go to the
        # broker together (_send_batch).
        self._batch: list[tuple[Frame, str | None]] = []
        self._batch_messages: list[Message] = []
        # Batches of deliveries whose recording by the store is not durable yet, in order.
        self._held: deque[tuple[list[Completion], list[Delivery]]] = deque()
        # Bytes waiting for the end of this turn of the loop (see _write).
        self._output: list[bytes] = []
        self._output_scheduled = False
        self._flush_scheduled = False
        self._write_paused = False
        self._reading_paused = False  # for a client that does not read what it is sent
        #: Not read: a SEND of it met the broker's memory budget (``Broker.producers_blocked``).
        self.held_back = False
        self._withheld: Counter[int] = Counter()
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._tasks: set[asyncio.Task[None]] = set()
        # Durability: completions registered / finished, and receipts waiting for them.
        self._registered = 0
        self._finished = 0
        self._tracked: list[Completion] = []  # registered, not yet handed to the waiter
        self._tracked_scheduled = False
        # A receipt waits for the completions registered and the held batches queued before it.
        self._receipts: deque[tuple[int, int, str | None, bool, tuple[tuple[str, str], ...]]] = (
            deque()
        )
        self._held_total = 0
        self._held_released = 0
        # Extra headers for the RECEIPT of the frame being handled (jms extension answers).
        self._receipt_headers: tuple[tuple[str, str], ...] = ()
        # Whether the frame being handled answers its RECEIPT itself, later (publish-staged, or
        # a SEND waiting in _batch).
        self._answers_later = False
        self._last_read = time.monotonic()
        self._last_write = self._last_read
        self._read_ms = 0  # when the read being handled was taken up (wall clock, ms)
        self._timer: asyncio.TimerHandle | None = None
        self._abort_timer: asyncio.TimerHandle | None = None

    # -- asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        transport.set_write_buffer_limits(high=_HIGH_WATER)
        peer = transport.get_extra_info("peername")
        self._peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self._address = str(peer[0]) if isinstance(peer, tuple) else self._peer
        tls = transport.get_extra_info("ssl_object")
        certificate = tls.getpeercert() if tls is not None else None
        if certificate:  # only ever a verified one: unverified certificates fail the handshake
            self._certificate_subject = certificate_subject(certificate)
        limit = self._server.max_connections
        if limit is not None and len(self._server._connections) >= limit:
            self._counters.connections_refused += 1
            logger.warning(
                "STOMP connection from %s refused: %d connections are open, the most "
                "--max-connections allows",
                self._peer,
                limit,
            )
            self._fail(
                None,
                _FrameError(
                    f"the broker serves at most {limit} connections at once; try again later",
                    ResourceAllocationException,
                ),
            )
            return
        self._server._connections.add(self)
        self._counters.connections_total += 1
        self._timer = self._loop.call_later(self._server.connect_timeout_s, self._connect_timed_out)

    def data_received(self, data: bytes) -> None:
        self._last_read = time.monotonic()
        self._counters.bytes_received += len(data)
        if self._closing:
            return
        events = self._conn.feed(data)
        if self._conn.state is _CONNECTING or self.held_back:
            return  # buffered until the login is checked, or the broker has room again
        self._process(events)

    def pause_writing(self) -> None:
        self._write_paused = True
        self._resumed.clear()
        transport = self._transport
        if transport is not None and transport.get_write_buffer_size() > _READ_STOP:
            transport.pause_reading()
            self._reading_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self._resumed.set()
        if self._reading_paused and self._transport is not None and not self._closing:
            self._reading_paused = False
            if not self.held_back:
                self._transport.resume_reading()
        if self._withheld and self._broker_id is not None:
            withheld, self._withheld = self._withheld, Counter()
            self._guard(lambda: self._grant(withheld))

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._closing = True
        self._resumed.set()
        if self._timer is not None:
            self._timer.cancel()
        if self._abort_timer is not None:
            self._abort_timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        self._server._connections.discard(self)
        logger.info("STOMP connection %s (%s) closed", self._session_id, self._peer)
        broker_id, self._broker_id = self._broker_id, None
        if broker_id is not None and not self._broker.closed:
            try:
                with self._collecting([]):
                    self._broker.disconnect(broker_id)
            except JMSException:
                logger.exception("broker cleanup of STOMP connection %s failed", self._session_id)

    # -- reading frames ------------------------------------------------------------------------

    def _process(self, events: Iterator[ConnectRequest | Frame | HeartBeat]) -> None:
        # One collecting scope for all the frames of this read; each frame's store completions
        # are taken out of the list when it has been handled.
        completions: list[Completion] = []
        sends = False
        # The JMSTimestamp of this read's plain SENDs: the frames of one read arrived together.
        self._read_ms = wall_clock_ms()
        try:
            with self._collecting(completions):
                for event in events:
                    if type(event) is not Frame:  # nearly every event is one: asked first
                        if isinstance(event, HeartBeat):
                            continue
                        assert isinstance(event, ConnectRequest)
                        self._connect(event)
                        return  # the rest waits in the parser until the login is checked
                    self._counters.frames_received += 1
                    self._handle(event, completions)
                    if self._closing:
                        return
                    if event.command == "SEND":
                        sends = True
                        if self._broker.producers_blocked:
                            break
        except StompProtocolError as error:
            self._send_batch()  # the frames before the broken one count
            if not self._closing:
                self._send_error(error)
            return
        if self._batch:
            self._send_batch()
        if sends and not self._closing and self._broker.producers_blocked:
            self._hold_back()  # what the client sent after this read's SENDs waits, unread

    def _handle(self, frame: Frame, completions: list[Completion]) -> None:
        """Handle one frame; what it submits to the store is collected in ``completions``."""
        command = frame.command
        self._counters.by_command[command] += 1
        if self._batch and command != "SEND":
            self._send_batch()  # what the SENDs before it did comes first
            if self._closing:
                return
        handler = _HANDLERS[command]
        self._receipt_headers = _NO_HEADERS
        self._answers_later = False
        try:
            handler(self, frame)
        except Exception as error:
            # A SEND refused before it reached the broker: the SENDs before it go first.
            self._send_batch()
            self._track(completions)
            if not self._closing:
                self._refuse(frame, frame.header("receipt"), error)
            return
        if completions:  # none for a SEND, whose store work is done with its read's others
            self._track(completions)
        if self._answers_later:  # its RECEIPT comes later (a SEND in _batch, publish-staged)
            return
        receipt = frame.header("receipt")
        if command == "DISCONNECT":
            self._queue_receipt(receipt, close_after=True)
        elif receipt is not None:
            self._queue_receipt(receipt, headers=self._receipt_headers)

    def _refuse(self, frame: Frame, receipt: str | None, error: Exception) -> None:
        """Answer a frame whose handling failed with ``error``."""
        if isinstance(error, (JMSException, ValueError)):
            if self._extensions and receipt is not None and frame.command != "DISCONNECT":
                # A jms client hears of a refused request in its RECEIPT and carries on.
                self._queue_receipt(receipt, headers=_refusal(frame, error))
            else:
                self._fail(frame, error)
            return
        if not isinstance(error, _FrameError):
            logger.error(
                "internal error handling a %s frame from %s",
                frame.command,
                self._peer,
                exc_info=error,
            )
            error = _FrameError(f"internal error: {type(error).__name__}: {error}")
        self._fail(frame, error)

    def _send_batch(self) -> None:
        """Hand the messages of the SENDs waiting in ``_batch`` to the broker in one call (one
        lock acquisition, one store batch), then queue their RECEIPTs in order. A SEND the broker
        refuses is answered as ``_handle`` answers any refused frame; for a jms client, which
        carries on after a refusal, the SENDs after it are sent then."""
        batch, self._batch = self._batch, []
        messages, self._batch_messages = self._batch_messages, []
        while batch and not self._closing:
            broker_id = self._broker_id
            assert broker_id is not None
            completions: list[Completion] = []
            refusal: Exception | None
            try:
                with self._collecting(completions):
                    # Only a jms client resends: the audit needs the IDs of its messages alone.
                    sent, refusal = self._broker.send_many(
                        broker_id, messages, audit=self._extensions
                    )
            except Exception as error:  # a bug: the broker sent none of them
                sent, refusal = 0, error
            self._track(completions)
            self._counters.messages_received += sent
            for _, receipt in batch[:sent]:
                if receipt is not None:
                    self._queue_receipt(receipt)
            if refusal is None:
                return
            frame, receipt = batch[sent]
            self._refuse(frame, receipt, refusal)
            batch = batch[sent + 1 :]
            messages = messages[sent + 1 :]

    def _collecting(self, into: list[Completion]) -> AbstractContextManager[None]:
        store = self._server.store
        return store.collecting(into) if store is not None else nullcontext()

    # -- CONNECT -------------------------------------------------------------------------------

    def _connect(self, request: ConnectRequest) -> None:
        assert self._transport is not None
        self._transport.pause_reading()
        frame = request.frame
        login = frame.header("login")
        passcode = frame.header("passcode")
        client_id = frame.header("client-id")
        self._extensions = frame.header(EXTENSIONS_HEADER) == _EXTENSIONS_VERSION
        if self._timer is not None:  # CONNECT came; a throttled login may wait longer
            self._timer.cancel()
            self._timer = None
        limit = self._server.connect_timeout_s
        wait = self._server.login_throttle.wait(self._address, at_most_s=limit)
        if wait > limit:
            self._counters.connections_refused += 1
            self._fail(
                None,
                JMSSecurityException(
                    f"too many failed logins from {self._address}: try again in {wait:.0f} s"
                ),
            )
            return
        self._loop.call_later(wait, self._check_login, login, passcode, client_id)

    def _check_login(self, login: str | None, passcode: str | None, client_id: str | None) -> None:
        if self._closing:
            return
        future = self._loop.run_in_executor(None, self._log_in, login, passcode, client_id)
        future.add_done_callback(lambda done: self._logged_in(done, login))

    def _certificate_user(self) -> str | None:
        subject = self._certificate_subject
        return None if subject is None else self._security.certificate_user(subject)

    def _log_in(self, login: str | None, passcode: str | None, client_id: str | None) -> int:
        """On an executor thread: check the login (hashing is slow) and open the broker side.
        A verified client certificate that stands for a user logs that user in."""
        user = self._certificate_user()
        if user is not None and login and login != user:
            raise JMSSecurityException(
                f"login {login!r} refused: this connection's client certificate stands for "
                f"user {user!r}"
            )
        if user is None and not self._security.authenticate(login, passcode):
            if login:
                raise JMSSecurityException(f"login {login!r} refused: wrong user name or password")
            raise JMSSecurityException(
                "this broker does not accept anonymous clients: CONNECT with login and passcode"
            )
        return self._broker.connect(
            user or login or None,
            passcode,
            client_id=client_id or None,
            on_close=self._broker_closed,
        )

    def _logged_in(self, done: asyncio.Future[int], login: str | None) -> None:
        error = done.exception()
        throttle = self._server.login_throttle
        failures = 0
        if isinstance(error, JMSSecurityException):
            failures = throttle.failed(self._address)
        elif error is None:
            throttle.succeeded(self._address)
        if self._closing:
            if error is None:
                self._broker.disconnect(done.result())
            return
        if error is not None:
            self._counters.connections_refused += 1
            slowdown = (
                f" ({failures} failed login(s) in a row from {self._address}: its logins now "
                f"wait {throttle.delay(failures):g} s each)"
                if failures
                else ""
            )
            logger.warning(
                "STOMP connection %s (%s) refused: %s%s",
                self._session_id,
                self._peer,
                error,
                slowdown,
            )
            self._fail(None, error)
            return
        self._broker_id = done.result()
        self._principal = self._security.principal(self._certificate_user() or login)
        logger.info(
            "STOMP connection %s (%s) opened by %s", self._session_id, self._peer, self._principal
        )
        extra: tuple[tuple[str, str], ...] = ()
        if self._extensions:
            # A jms client refuses a message too large for this server before sending it.
            max_body = str(self._server.limits.max_body_bytes)
            extra = ((EXTENSIONS_HEADER, _EXTENSIONS_VERSION), (MAX_BODY_HEADER, max_body))
        self._write(
            self._conn.accept(
                session=self._session_id, server=self._server.server_header, extra_headers=extra
            )
        )
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._start_heart_beats()
        assert self._transport is not None
        self._transport.resume_reading()
        self._process(self._conn.feed(b""))

    def _hold_back(self) -> None:
        """Stop reading until the broker has memory for more messages (producer flow control);
        what the client sent after the SENDs of this read waits, unread."""
        if not self._broker.when_memory_available(self._memory_available_soon):
            self.held_back = True
            self._counters.producer_pauses += 1
            logger.info(
                "STOMP connection %s (%s) held back: the broker's memory budget is reached",
                self._session_id,
                self._peer,
            )
            assert self._transport is not None
            self._transport.pause_reading()

    def _memory_available_soon(self) -> None:
        """``Broker.when_memory_available``'s callback: under the broker's lock, any thread."""
        with suppress(RuntimeError):  # the loop is gone already
            self._loop.call_soon_threadsafe(self._memory_available)

    def _memory_available(self) -> None:
        self.held_back = False
        if self._closing or self._transport is None:
            return
        logger.info("STOMP connection %s (%s) read again", self._session_id, self._peer)
        if not self._reading_paused:
            self._transport.resume_reading()
        self._process(self._conn.feed(b""))

    def _connect_timed_out(self) -> None:
        self._timer = None
        if self._broker_id is None and not self._closing:
            self._fail(None, _FrameError(f"no CONNECT within {self._server.connect_timeout_s:g} s"))

    def _broker_closed(self, error: JMSException) -> None:
        """The broker closed this connection (it is shutting down, or the connection was a
        slow consumer); any thread. The client gets an ERROR saying why."""
        with suppress(RuntimeError):  # the loop is gone already
            self._loop.call_soon_threadsafe(self._fail, None, error)

    def shut_down(self, reason: str) -> None:
        """Tell the client why with an ERROR and close."""
        if not self._closing:
            self._fail(None, _FrameError(reason))

    # -- heart-beats ---------------------------------------------------------------------------

    def _start_heart_beats(self) -> None:
        intervals = self._conn.heart_beat
        periods = [ms for ms in (intervals.send_every_ms, intervals.expect_every_ms) if ms]
        if periods:
            self._timer = self._loop.call_later(min(periods) / 2000, self._heart_beat)

    def _heart_beat(self) -> None:
        self._timer = None
        if self._closing:
            return
        intervals = self._conn.heart_beat
        now = time.monotonic()
        expect_ms = intervals.expect_every_ms
        if (
            expect_ms
            and (now - self._last_read) * 1000 > expect_ms * self._server.heart_beat_tolerance
        ):
            self._fail(
                None,
                _FrameError(
                    f"nothing received for {(now - self._last_read) * 1000:.0f} ms; the client "
                    f"promised heart-beats every {expect_ms} ms"
                ),
            )
            return
        send_ms = intervals.send_every_ms
        if (
            send_ms
            and (now - self._last_write) * 1000 >= send_ms / 2
            and self._transport is not None
        ):
            self._write(b"\n")
        self._start_heart_beats()

    # -- writing -------------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        """Queue ``data`` for the socket; what one turn of the loop writes goes out in one
        write (a burst of RECEIPTs or MESSAGEs costs one system call, not one each)."""
        if self._transport is None or self._closed:
            return
        self._output.append(data)
        if not self._output_scheduled:
            self._output_scheduled = True
            self._loop.call_soon(self._write_output)

    def _write_parts(self, parts: list[bytes]) -> None:
        """``_write`` each of ``parts``, at the cost of one call."""
        if self._transport is None or self._closed:
            return
        self._output += parts
        if not self._output_scheduled:
            self._output_scheduled = True
            self._loop.call_soon(self._write_output)

    def _write_output(self) -> None:
        self._output_scheduled = False
        transport = self._transport
        if not self._output or transport is None or self._closed:
            self._output.clear()
            return
        data = b"".join(self._output)
        self._output.clear()
        transport.write(data)
        self._last_write = time.monotonic()
        self._counters.bytes_sent += len(data)

    def _fail(self, frame: Frame | None, error: BaseException) -> None:
        """Answer with ERROR (echoing the frame's receipt) and close the connection."""
        if self._closing:
            return
        if isinstance(error, _FrameError):
            exception_name = error.exception.__name__
        elif isinstance(error, JMSException):
            exception_name = type(error).__name__
        else:
            exception_name = "JMSException"
        where = ""
        if frame is not None:
            destination = frame.header("destination")
            where = f"{frame.command}{f' {destination}' if destination else ''}: "
        message = f"{where}{error}"
        self._send_error(
            StompProtocolError(
                message,
                receipt=frame.header("receipt") if frame is not None else None,
                error_headers=(("jms-exception", exception_name),),
            )
        )

    def _send_error(self, error: StompProtocolError) -> None:
        if self._closing:
            return
        self._counters.errors_sent += 1
        logger.info(
            "STOMP connection %s (%s): ERROR %s", self._session_id, self._peer, error.message
        )
        if self._conn.state is not ServerState.CLOSED:
            self._write(self._conn.send_error(error))
        self._close()

    def _close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._write_output()  # what is queued (an ERROR, a last RECEIPT) goes first
        if self._transport is not None:
            self._transport.close()
            # A client that reads nothing would keep the socket and its unsent bytes forever.
            self._abort_timer = self._loop.call_later(_CLOSE_GRACE_S, self._abort)

    def _abort(self) -> None:
        """Drop the connection and what it still had to send, in the kernel too (a reset)."""
        transport = self._transport
        assert transport is not None
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET_ON_CLOSE)
        transport.abort()

    # -- durability and receipts ---------------------------------------------------------------

    def _track(self, completions: list[Completion]) -> None:
        """Count the collected ``completions`` in, for the waiter to report with the others of
        this turn of the loop (``_submit_tracked``), and empty the list."""
        if not completions:
            return
        self._registered += len(completions)
        self._tracked += completions
        completions.clear()
        if not self._tracked_scheduled:
            self._tracked_scheduled = True
            self._loop.call_soon(self._submit_tracked)

    def _submit_tracked(self) -> None:
        # The store finishes batches in the order they came: once the newest of a turn's is
        # done, all are. One report for the turn (a read of many SENDs), not one per frame.
        self._tracked_scheduled = False
        tracked, self._tracked = self._tracked, []
        waiter = self._server._waiter
        if tracked and waiter is not None:
            waiter.submit(tracked[-1], lambda error: self._durable(error, tracked))

    def _durable(self, error: BaseException | None, tracked: list[Completion]) -> None:
        self._finished += len(tracked)
        if self._closing:
            return
        if error is None:
            error = _first_failure(tracked[:-1])
        if error is not None:
            self._fail(None, _FrameError(f"the broker's store failed: {error}"))
            return
        self._release_receipts()

    def _queue_receipt(
        self,
        receipt: str | None,
        *,
        close_after: bool = False,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        if self._pending:  # deliveries the frame caused go first
            self._flush()
        self._receipts.append((self._registered, self._held_total, receipt, close_after, headers))
        self._release_receipts()

    def _release_receipts(self) -> None:
        """Write the RECEIPTs whose frames' store work is durable and whose frames' MESSAGEs
        (held until their deliveries are recorded) are written."""
        receipts = self._receipts
        while (
            receipts
            and receipts[0][0] <= self._finished
            and receipts[0][1] <= self._held_released
            and not self._closing
        ):
            _, _, receipt, close_after, headers = receipts.popleft()
            if receipt is not None:
                if headers:
                    frame = receipt_frame(receipt)
                    self._write(self._conn.send(Frame("RECEIPT", (*frame.headers, *headers))))
                else:
                    self._write(self._conn.receipt(receipt))
            if close_after:
                self._close()

    # -- deliveries ----------------------------------------------------------------------------

    def _sink(self, delivery: Delivery) -> None:
        """The broker's delivery sink: called under its lock, on any thread."""
        self._pending.append(delivery)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            if threading.get_ident() == self._loop_thread:
                self._loop.call_soon(self._flush)
                return
            # A closed loop: the broker takes the delivery back when the connection goes.
            with suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        pending, self._pending = self._pending, []
        if not pending or self._broker_id is None or self._closing:
            return
        # DONE is the most common (a message not stored): compared before asking it.
        gates = [d.recorded for d in pending if d.recorded is not DONE and not d.recorded.done()]
        if gates or self._held:
            # The broker records each delivery of a stored message before it may be seen.
            self._held.append((gates, pending))
            self._held_total += 1
            waiter = self._server._waiter
            assert waiter is not None
            for gate in gates:
                waiter.submit(gate, self._recorded)
            if not gates:
                self._recorded(None)
            return
        self._guard(lambda: self._deliver(pending))

    def _recorded(self, error: BaseException | None) -> None:
        if self._closing or self._broker_id is None:
            return
        if error is not None:
            self._fail(None, _FrameError(f"the broker's store failed: {error}"))
            return
        while self._held and all(gate.done() for gate in self._held[0][0]):
            _, pending = self._held.popleft()
            self._held_released += 1
            self._guard(lambda pending=pending: self._deliver(pending))
        self._release_receipts()

    def _guard(self, action: Any) -> None:
        """Run broker work outside a frame's handling, failing the connection on an error."""
        completions: list[Completion] = []
        try:
            with self._collecting(completions):
                action()
        except JMSException as error:
            self._fail(None, error)
        except Exception as error:
            logger.exception("internal error delivering to STOMP connection %s", self._session_id)
            self._fail(None, _FrameError(f"internal error: {type(error).__name__}: {error}"))
        self._track(completions)

    def _deliver(self, pending: list[Delivery]) -> None:
        if self._conn.state is not _CONNECTED:
            return  # DISCONNECT came: what is pending goes back to the broker with the connection
        chunks: list[bytes] = []  # the frames' pieces (a body is not copied into its frame)
        written = 0
        returned = []
        acknowledged = []
        credit: Counter[int] = Counter()
        by_consumer = self._by_consumer
        for delivery in pending:
            subscription = by_consumer.get(delivery.consumer_id)
            if subscription is None:
                returned.append(delivery.tag)
                continue
            message_id, parts = self._message_frame(subscription, delivery)
            chunks += parts
            written += 1
            if subscription.ack == "auto":
                acknowledged.append(delivery.tag)
                if not subscription.explicit_credit:
                    credit[delivery.consumer_id] += 1
            else:
                subscription.unacked[delivery.tag] = message_id
                if subscription.tags_by_message_id is not None:
                    subscription.tags_by_message_id[message_id] = delivery.tag
                self._tag_owner[delivery.tag] = subscription
        self._counters.messages_delivered += written
        self._write_parts(chunks)  # joined with the rest of this turn's output, once
        broker_id = self._broker_id
        assert broker_id is not None
        if returned:
            self._broker.requeue(broker_id, undelivered=returned)
        if acknowledged:
            self._broker.acknowledge(broker_id, acknowledged)
        if credit:
            if self._write_paused:
                self._withheld.update(credit)
            else:
                self._grant(credit)

    def _grant(self, credit: Counter[int]) -> None:
        broker_id = self._broker_id
        if broker_id is None:
            return
        for consumer_id, count in credit.items():
            self._broker.credit(broker_id, consumer_id, count)

    @property
    def _version(self) -> Version:
        version = self._conn.version
        assert version is not None  # MESSAGE frames are written only once CONNECTED
        return version

    def _message_frame(
        self, subscription: _Subscription, delivery: Delivery
    ) -> tuple[str, tuple[bytes, ...]]:
        """The message-id of the MESSAGE frame for ``delivery`` and the frame, in pieces."""
        message = delivery.message
        message_id = message._message_id or f"ID:{self._session_id}:{delivery.tag}"
        if self._extensions:
            if self._local_names:
                self._localize_outbound(message)
            headers: list[tuple[str, str]] = [
                ("subscription", subscription.id),
                ("message-id", message_id),
                ("destination", subscription.destination_name),
                ("ack", str(delivery.tag)),
                ("content-type", JMS_MESSAGE_CONTENT_TYPE),
            ]
            body = encode(message)
            return message_id, (self._conn.message(headers, body),)
        destination = message._destination
        frames = subscription.frames
        if destination is None or destination == subscription.destination:
            return message_id, frames.frame_parts(
                message, message_id, delivery.tag, None, delivery.delivery_count
            )
        return message_id, frames.frame_parts(
            message, message_id, delivery.tag, self._name_of(destination), delivery.delivery_count
        )

    # -- destinations --------------------------------------------------------------------------

    def _destination(self, text: str | None, header: str = "destination") -> Destination:
        if text is None:
            raise _FrameError(f"missing header {header!r}")
        known = self._known_destinations.get(text)
        if known is not None:
            return known
        parsed = parse_destination(text, header)
        kind, name = parsed.kind, parsed.name
        if kind in ("queue", "topic"):
            # Queues and topics are values: remember the few a connection uses.
            destination: Destination = Queue(name) if kind == "queue" else Topic(name)
            if len(self._known_destinations) >= _KNOWN_DESTINATIONS:
                self._known_destinations.clear()
            self._known_destinations[text] = destination
            return destination
        if kind == "remote-temp-queue":
            return TemporaryQueue(name)
        if kind == "remote-temp-topic":
            return TemporaryTopic(name)
        return self._temporary(kind == "temp-queue", name)

    def _temporary(self, is_queue: bool, name: str) -> TemporaryQueue | TemporaryTopic:
        """This connection's temporary destination ``name``, created at its first mention."""
        key = (is_queue, name)
        destination = self._temporaries.get(key)
        if destination is None:
            broker_id = self._broker_id
            assert broker_id is not None
            destination = (
                self._broker.create_temporary_queue(broker_id)
                if is_queue
                else self._broker.create_temporary_topic(broker_id)
            )
            self._temporaries[key] = destination
            self._local_names[destination.name] = name
        return destination

    def _name_of(self, destination: Destination) -> str:
        if isinstance(destination, (TemporaryQueue, TemporaryTopic)):
            kind = "queue" if isinstance(destination, TemporaryQueue) else "topic"
            local = self._local_names.get(destination.name)
            if local is not None:
                return f"/temp-{kind}/{local}"
            return f"/remote-temp-{kind}/{destination.name}"
        if isinstance(destination, Queue):
            return f"/queue/{destination.name}"
        return f"/topic/{destination.name}"

    def _localize_inbound(self, destination: Destination) -> Destination:
        """A jms client's own name for its temporary destination -> the broker's."""
        if isinstance(destination, TemporaryQueue | TemporaryTopic):
            key = (isinstance(destination, TemporaryQueue), destination.name)
            return self._temporaries.get(key, destination)
        return destination

    def _localize_outbound(self, message: Message) -> None:
        """The broker's names of this connection's temporary destinations -> its own."""
        for getter, setter in (
            (message.get_jms_destination, message.set_jms_destination),
            (message.get_jms_reply_to, message.set_jms_reply_to),
        ):
            destination = getter()
            if isinstance(destination, TemporaryQueue | TemporaryTopic):
                local = self._local_names.get(destination.name)
                if local is not None:
                    setter(type(destination)(local))

    def _authorize(self, action: Action, destination: Destination) -> None:
        if not self._security.restricted:
            return  # no permission rules: every admitted client may do everything
        text = str(destination)
        if not self._security.allows(self._principal, action, text):
            logger.warning(
                "STOMP connection %s (%s): user %r may not %s %s",
                self._session_id,
                self._peer,
                self._principal,
                action.value,
                text,
            )
            raise _FrameError(
                f"user {self._principal!r} may not {action.value} {text}", JMSSecurityException
            )

    # -- frame handlers ------------------------------------------------------------------------

    def _on_send(self, frame: Frame) -> None:
        headers = frame.header_map()
        text = headers["destination"]  # required header
        if text.startswith(_ADMIN_PREFIX):
            self._send_batch()
            if not self._closing:
                self._admin(frame, text[len(_ADMIN_PREFIX) :])
            return
        destination = self._destination(text)
        if self._security.restricted:  # asked here first: _authorize is a call per SEND
            self._authorize(_SEND, destination)
        # A plain SEND gets an ID; a whole jms message keeps its own (or none, as sent).
        message = message_from_frame(
            headers,
            frame.body,
            destination,
            self._resolve_reply_to,
            self._read_ms,
            self._localize_inbound,
            self._new_message_id,
        )
        transaction = headers.get("transaction")
        resend = self._extensions and headers.get("jms-resend") == "true"
        if transaction is None and not resend:
            # Sent with the other SENDs of this read, at its end or before another frame.
            self._batch.append((frame, headers.get("receipt")))
            self._batch_messages.append(message)
            self._answers_later = True
            return
        self._send_batch()
        if self._closing:
            return
        broker_id = self._broker_id
        assert broker_id is not None
        self._broker.send(broker_id, message, self._transaction_named(transaction), resend=resend)
        self._counters.messages_received += 1

    def _resolve_reply_to(self, text: str) -> Destination:
        return self._destination(text, "reply-to")

    def _new_message_id(self) -> str:
        return f"{self._message_id_prefix}{next(self._message_ids)}"

    def _transaction_id(self, frame: Frame) -> int | None:
        return self._transaction_named(frame.header("transaction"))

    def _transaction_named(self, name: str | None) -> int | None:
        if name is None:
            return None
        transaction = self._transactions.get(name)
        if transaction is None:
            raise _FrameError(f"transaction {name!r} was not begun on this connection")
        return transaction.id

    def _on_subscribe(self, frame: Frame) -> None:
        text = frame.header("destination")
        assert text is not None
        subscription_id = frame.header("id") or text  # STOMP 1.0 may leave out the id
        if subscription_id in self._subscriptions:
            raise _FrameError(f"subscription id {subscription_id!r} is already in use")
        destination = self._destination(text)
        selector = frame.header("selector") or None
        if selector is not None:
            try:
                Selector(selector)
            except InvalidSelectorException as error:
                raise InvalidSelectorException(f"invalid selector: {error}") from None
        if _flag(frame, "browser"):
            self._browse(frame, subscription_id, destination, selector)
            return
        ack = frame.header("ack") or "auto"
        prefetch = self._number(frame, "activemq.prefetchSize", STOMP_DEFAULT_PREFETCH)
        name = frame.header("jms-subscription-name") if self._extensions else None
        if name is not None:  # a jms client says exactly what kind of subscription it wants
            durable, shared = _flag(frame, "jms-durable"), _flag(frame, "jms-shared")
        else:
            name = frame.header("activemq.subscriptionName") or frame.header(
                "durable-subscription-name"
            )
            durable, shared = name is not None, False
        if name is not None and not isinstance(destination, Topic):
            raise _FrameError(
                f"a durable subscription ({name!r}) is on a topic, not {text}",
                InvalidDestinationException,
            )
        self._authorize(Action.RECEIVE, destination)
        max_deliveries = frame.header("jms-max-deliveries")
        spec = ConsumerSpec(
            destination,
            selector=selector,
            no_local=_flag(frame, "activemq.noLocal") or _flag(frame, "jms-no-local"),
            subscription_name=name,
            durable=durable,
            shared=shared,
            prefetch=prefetch,
            max_deliveries=None
            if max_deliveries is None
            else self._number(frame, "jms-max-deliveries", 0),
            # A MESSAGE frame is written from the broker's own message, without a copy; a jms
            # client's is localized first (_localize_outbound), so it gets a copy.
            read_only_messages=not self._extensions,
        )
        subscription = self._subscription(
            subscription_id, destination, ack, self._extensions and ack != "auto"
        )
        broker_id = self._broker_id
        assert broker_id is not None
        consumer_id = self._broker.add_consumer(broker_id, spec, self._sink)
        subscription.consumer_id = consumer_id
        self._subscriptions[subscription_id] = subscription
        self._by_consumer[consumer_id] = subscription

    def _subscription(
        self, subscription_id: str, destination: Destination, ack: str, explicit_credit: bool
    ) -> _Subscription:
        name = self._name_of(destination)
        version = self._version
        frames = MessageFrames(version, subscription_id, name, self._name_of)
        return _Subscription(
            subscription_id,
            destination,
            name,
            ack,
            explicit_credit,
            frames,
            acked_by_message_id=version is not Version.V1_2,
        )

    @staticmethod
    def _number(frame: Frame, header: str, default: int) -> int:
        value = frame.header(header)
        if value is None:
            return default
        if not value.isascii() or not value.isdigit() or int(value) < 1:
            raise _FrameError(f"header {header}:{value!r} must be a whole number of at least 1")
        return int(value)

    def _browse(
        self, frame: Frame, subscription_id: str, destination: Destination, selector: str | None
    ) -> None:
        source = self._range_source(frame, destination)
        self._authorize(Action.BROWSE, destination)
        start = self._number(frame, "jms-browse-start", 1)
        limit = (
            self._number(frame, "jms-browse-limit", 0) if frame.header("jms-browse-limit") else None
        )
        end_seq = (
            self._number(frame, "jms-browse-end", 0)
            if self._extensions and frame.header("jms-browse-end")
            else None
        )
        packed = self._browse_format(frame) == "packed"
        subscription = self._subscription(subscription_id, destination, "auto", False)
        self._subscriptions[subscription_id] = subscription
        task = self._loop.create_task(
            self._send_browse(subscription, source, selector, start, end_seq, limit, packed)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _browse_format(self, frame: Frame) -> str:
        """How a browse answers: ``messages`` (a MESSAGE frame each) or, for a jms client
        asking ``jms-browse-format:packed``, ``packed`` (many codec-encoded messages a frame)."""
        requested = frame.header("jms-browse-format") if self._extensions else None
        if requested is None:
            return "messages"
        if requested not in ("messages", "packed"):
            raise _FrameError(
                f"header jms-browse-format:{requested!r} must be 'messages' or 'packed'"
            )
        return requested

    def _range_source(self, frame: Frame, destination: Destination) -> Queue | SubscriptionName:
        """What a browse or a range command reads: the queue, or (from a jms client naming
        ``jms-subscription-name`` and, optionally, ``jms-client-id``) a durable subscription of
        the topic ``destination``."""
        name = frame.header("jms-subscription-name") if self._extensions else None
        if name is not None:
            if not isinstance(destination, Topic) or isinstance(destination, TemporaryTopic):
                raise _FrameError(
                    f"jms-subscription-name:{name!r} names a durable subscription of a topic, "
                    f"but the destination is {self._name_of(destination)}"
                )
            return SubscriptionName(name, frame.header("jms-client-id"))
        if not isinstance(destination, Queue):
            raise _FrameError(
                f"only queues (and, for jms clients, durable subscriptions) can be read without "
                f"consuming, not {self._name_of(destination)}"
            )
        return destination

    async def _send_browse(
        self,
        subscription: _Subscription,
        source: Queue | SubscriptionName,
        selector: str | None,
        start: int,
        end_seq: int | None,
        limit: int | None,
        packed: bool,
    ) -> None:
        """MESSAGE frames for what ``source`` holds (numbered ``start`` to ``end_seq``), page by
        page as the client reads them -- one per message, or when ``packed`` one per at most
        ``_PACKED_FRAME_BYTES`` of packed records -- then the ``browser:end`` MESSAGE (with
        ``jms-next-seq`` when a jms client asked for a page). A jms client hears of a browse the
        broker refuses in that end frame (``jms-exception``, ``message``); others get ERROR."""
        next_seq: int | None = start
        sent = 0
        destination_name = subscription.destination_name
        try:
            while next_seq is not None and (limit is None or sent < limit):
                broker_id = self._broker_id
                if (
                    broker_id is None
                    or self._closing
                    or self._conn.state is not ServerState.CONNECTED  # DISCONNECT came
                ):
                    return
                # Packed pages go in bigger steps: each step scans the queue's memory once.
                step = _PACKED_BROWSE_PAGE if packed else DEFAULT_BROWSE_PAGE
                size = step if limit is None else min(step, limit - sent)
                # Browsing may read paged-out messages from the store: off the loop.
                if packed:
                    encoded = await self._loop.run_in_executor(
                        None,
                        self._broker.browse_encoded,
                        broker_id,
                        source,
                        selector,
                        next_seq,
                        end_seq,
                        size,
                    )
                    sent += len(encoded.seqs)
                    self._write_packed(subscription, encoded.seqs, encoded.messages)
                    next_seq = encoded.next_seq
                    await self._resumed.wait()
                    continue
                page = await self._loop.run_in_executor(
                    None, self._broker.browse, broker_id, source, selector, next_seq, end_seq, size
                )
                chunks: list[bytes] = []
                for seq, message in page.messages:
                    message_id = message._message_id or f"ID:{self._session_id}:b{seq}"
                    if self._extensions:
                        headers: tuple[tuple[str, str], ...] = (
                            ("subscription", subscription.id),
                            ("message-id", message_id),
                            ("destination", destination_name),
                            ("jms-seq", str(seq)),
                            ("content-type", JMS_MESSAGE_CONTENT_TYPE),
                        )
                        body = encode(message)
                        chunks.append(self._conn.message(headers, body))
                    else:
                        chunks += subscription.frames.frame_parts(message, message_id, None)
                sent += len(page.messages)
                self._write(b"".join(chunks))
                next_seq = page.next_seq
                await self._resumed.wait()
            end = [
                ("subscription", subscription.id),
                ("message-id", "0"),
                ("destination", destination_name),
                ("browser", "end"),
            ]
            if self._extensions and next_seq is not None:
                end.append(("jms-next-seq", str(next_seq)))
            if not self._closing:
                self._write(self._conn.send(Frame("MESSAGE", tuple(end))))
        except JMSException as error:
            if not self._extensions:
                self._fail(None, error)
            elif not self._closing:
                refused = (
                    ("subscription", subscription.id),
                    ("message-id", "0"),
                    ("destination", destination_name),
                    ("browser", "end"),
                    ("jms-exception", type(error).__name__),
                    ("message", f"SUBSCRIBE {destination_name}: {error}"),
                )
                self._write(self._conn.send(Frame("MESSAGE", refused)))

    def _write_packed(
        self, subscription: _Subscription, seqs: list[int], messages: list[bytes]
    ) -> None:
        """Write ``messages`` in packed MESSAGE frames, each body at most ``_PACKED_FRAME_BYTES``
        unless one message alone is larger. The frames go out as parts: ``_write_output``'s
        join is the one copy of each message."""
        first = 0
        size = 0
        for index, data in enumerate(messages):
            record = RECORD_HEAD_SIZE + len(data)
            if index > first and size + record > _PACKED_FRAME_BYTES:
                self._write_packed_frame(
                    subscription, seqs[first:index], messages[first:index], size
                )
                first, size = index, 0
            size += record
        if first < len(messages):
            self._write_packed_frame(subscription, seqs[first:], messages[first:], size)

    def _write_packed_frame(
        self, subscription: _Subscription, seqs: list[int], messages: list[bytes], size: int
    ) -> None:
        headers = (
            ("subscription", subscription.id),
            ("message-id", f"packed-{seqs[0]}"),
            ("destination", subscription.destination_name),
            ("content-type", PACKED_CONTENT_TYPE),
            ("jms-count", str(len(seqs))),
        )
        frame = [self._conn.message_head(headers, size)]
        frame += packed_parts(seqs, messages)
        frame.append(FRAME_END)
        self._write_parts(frame)

    def _on_unsubscribe(self, frame: Frame) -> None:
        subscription_id = frame.header("id")
        if subscription_id is None:  # STOMP 1.0: by destination
            destination = frame.header("destination")
            subscription_id = next(
                (
                    s.id
                    for s in self._subscriptions.values()
                    if self._name_of(s.destination) == destination
                ),
                destination,
            )
        name = frame.header("activemq.subscriptionName") or frame.header(
            "durable-subscription-name"
        )
        subscription = self._subscriptions.pop(subscription_id or "", None)
        broker_id = self._broker_id
        assert broker_id is not None
        if subscription is None and name is None:
            raise _FrameError(f"there is no subscription with id {subscription_id!r}")
        if subscription is not None and subscription.consumer_id is not None:
            self._by_consumer.pop(subscription.consumer_id, None)
            self._broker.remove_consumer(broker_id, subscription.consumer_id)
            if not subscription.explicit_credit and subscription.unacked:
                tags = list(subscription.unacked)
                subscription.unacked.clear()
                if subscription.tags_by_message_id is not None:
                    subscription.tags_by_message_id.clear()
                for tag in tags:
                    self._tag_owner.pop(tag, None)
                self._broker.requeue(broker_id, delivered=tags)
        if name is not None:
            self._broker.unsubscribe(broker_id, name)

    def _on_ack(self, frame: Frame) -> None:
        credit = frame.header("jms-credit")
        if credit is not None and self._extensions:
            self._credit(frame, credit)
            return
        self._settle(frame, acknowledge=True)

    def _on_nack(self, frame: Frame) -> None:
        self._settle(frame, acknowledge=False)

    def _credit(self, frame: Frame, credit: str) -> None:
        count = self._number(frame, "jms-credit", 1)
        subscription = self._subscriptions.get(frame.header("subscription") or "")
        if subscription is None or subscription.consumer_id is None:
            return  # unsubscribed meanwhile: nothing to give credit to
        broker_id = self._broker_id
        assert broker_id is not None
        self._broker.credit(broker_id, subscription.consumer_id, count)

    def _settle(self, frame: Frame, *, acknowledge: bool) -> None:
        subscription, tags = self._acked_tags(frame)
        by_message_id = subscription.tags_by_message_id
        for tag in tags:
            message_id = subscription.unacked.pop(tag)
            if by_message_id is not None:
                by_message_id.pop(message_id, None)
            self._tag_owner.pop(tag, None)
        broker_id = self._broker_id
        assert broker_id is not None
        transaction_id = self._transaction_id(frame)
        if acknowledge:
            self._broker.acknowledge(broker_id, tags, transaction_id)
        elif self._extensions and _flag(frame, "jms-undelivered"):
            self._broker.requeue(broker_id, undelivered=tags)
            return  # the broker gives the credit back itself
        elif transaction_id is not None:
            self._transactions[frame.header("transaction") or ""].nacked.extend(tags)
        else:
            self._broker.requeue(broker_id, delivered=tags)
        if not subscription.explicit_credit and subscription.consumer_id in self._by_consumer:
            assert subscription.consumer_id is not None
            self._broker.credit(broker_id, subscription.consumer_id, len(tags))

    def _acked_tags(self, frame: Frame) -> tuple[_Subscription, list[int]]:
        """The subscription and the deliveries an ACK or NACK settles (cumulative in ``client``
        mode: every earlier unsettled delivery of the subscription too)."""
        version = self._conn.version
        tag: int | None = None
        subscription: _Subscription | None = None
        if version is _V1_2:
            what = f"id {frame.header('id')!r}"
            ack_id = frame.header("id") or ""
            if ack_id.isascii() and ack_id.isdigit():
                tag = int(ack_id)
                subscription = self._tag_owner.get(tag)
        else:
            message_id = frame.header("message-id")
            subscription_id = frame.header("subscription")
            what = f"message-id {message_id!r}" + (
                f" on subscription {subscription_id!r}" if subscription_id is not None else ""
            )
            candidates: Iterable[_Subscription]
            if subscription_id is None:
                candidates = list(self._subscriptions.values())
            elif subscription_id in self._subscriptions:
                candidates = [self._subscriptions[subscription_id]]
            else:  # unsubscribed, with deliveries a jms client may still acknowledge
                candidates = [s for s in self._tag_owner.values() if s.id == subscription_id][:1]
            for candidate in candidates:
                by_message_id = candidate.tags_by_message_id
                tag = None if by_message_id is None else by_message_id.get(message_id or "")
                if tag is not None:
                    subscription = candidate
                    break
        if subscription is None or tag is None or tag not in subscription.unacked:
            raise _FrameError(
                f"{frame.command} {what} names no message awaiting acknowledgement on this "
                "connection (already settled, or from an auto-acknowledged subscription)"
            )
        if subscription.ack != "client":
            return subscription, [tag]
        tags = []
        for unacked in subscription.unacked:
            tags.append(unacked)
            if unacked == tag:
                break
        return subscription, tags

    def _on_begin(self, frame: Frame) -> None:
        name = frame.header("transaction")
        assert name is not None
        if name in self._transactions:
            raise _FrameError(f"transaction {name!r} is already open on this connection")
        broker_id = self._broker_id
        assert broker_id is not None
        self._transactions[name] = _Transaction(self._broker.begin(broker_id))

    def _on_commit(self, frame: Frame) -> None:
        transaction = self._take_transaction(frame)
        broker_id = self._broker_id
        assert broker_id is not None
        try:
            self._broker.commit(broker_id, transaction.id)
        finally:
            if transaction.nacked:
                self._broker.requeue(broker_id, delivered=transaction.nacked)

    def _on_abort(self, frame: Frame) -> None:
        transaction = self._take_transaction(frame)
        broker_id = self._broker_id
        assert broker_id is not None
        self._broker.rollback(broker_id, transaction.id)
        if transaction.nacked:
            self._broker.requeue(broker_id, delivered=transaction.nacked)

    def _take_transaction(self, frame: Frame) -> _Transaction:
        name = frame.header("transaction") or ""
        transaction = self._transactions.pop(name, None)
        if transaction is None:
            raise _FrameError(f"transaction {name!r} was not begun on this connection")
        return transaction

    def _on_disconnect(self, frame: Frame) -> None:
        """Nothing to do before the receipt: the connection closes after it and the broker then
        takes back whatever the client held."""

    # -- admin ---------------------------------------------------------------------------------

    def _admin(self, frame: Frame, command: str) -> None:
        broker_id = self._broker_id
        assert broker_id is not None
        if command == "stats":
            if self._security.restricted and not self._security.grants_anywhere(
                self._principal, Action.ADMIN
            ):
                raise _FrameError(
                    f"user {self._principal!r} may not see the broker's stats: that needs the "
                    "admin permission on some destination",
                    JMSSecurityException,
                )
            stats = [
                asdict(s)
                for s in self._broker.stats()
                if self._security.allows(self._principal, Action.ADMIN, s.destination)
            ]
            counters = self._server.counters
            self._reply(
                frame,
                {
                    "broker": self._broker.name,
                    "time_ms": wall_clock_ms(),
                    "connections": self._server.connection_count,
                    "messages_received": counters.messages_received,
                    "messages_delivered": counters.messages_delivered,
                    "destinations": stats,
                },
            )
        elif command == "purge":
            queue = self._destination(frame.header("target"), "target")
            if not isinstance(queue, Queue):
                raise _FrameError(f"only queues can be purged, not {self._name_of(queue)}")
            self._authorize(Action.ADMIN, queue)
            purged = self._broker.purge(broker_id, queue)
            self._reply(frame, {"purged": purged, "queue": str(queue)})
        elif command == "last-sequence":
            destination = self._destination(frame.header("target"), "target")
            if not isinstance(destination, Queue | Topic) or isinstance(
                destination, TemporaryQueue | TemporaryTopic
            ):
                raise _FrameError(
                    f"only queues and topics have sequence numbers to ask for, not "
                    f"{self._name_of(destination)}"
                )
            self._authorize(Action.BROWSE, destination)
            last = self._broker.last_sequence(destination)
            self._receipt_headers = (("jms-last-seq", str(last)),)
        elif command == "acknowledge-through":
            destination = self._destination(frame.header("target"), "target")
            source = self._range_source(frame, destination)
            self._authorize(Action.RECEIVE, destination)
            if frame.header("jms-seq") is None:
                raise _FrameError("/admin/acknowledge-through needs a jms-seq header")
            seq = self._number(frame, "jms-seq", 0)
            start = self._number(frame, "jms-start-seq", 1)
            acknowledged = self._broker.acknowledge_through(
                broker_id, source, seq, frame.header("selector") or None, start
            )
            self._receipt_headers = (("jms-acknowledged", str(acknowledged)),)
        elif command == "first-not-due":
            destination = self._destination(frame.header("target"), "target")
            source = self._range_source(frame, destination)
            self._authorize(Action.BROWSE, destination)
            start = self._number(frame, "jms-browse-start", 1)
            end = (
                self._number(frame, "jms-browse-end", 0) if frame.header("jms-browse-end") else None
            )
            found = self._broker.first_not_due(
                broker_id, source, frame.header("selector") or None, start, end
            )
            self._receipt_headers = (("jms-first-not-due", str(found or 0)),)
        elif command == "stage":
            queue = self._staging_queue(frame.header("target"), "header target")
            self._authorize(Action.SEND, queue)
            body = frame.body

            def stage() -> tuple[tuple[str, str], ...]:
                staged = self._broker.stage_encoded(broker_id, queue, split_stage_frames(body))
                return (
                    ("jms-staged-first", str(staged.first_seq)),
                    ("jms-staged-last", str(staged.last_seq)),
                )

            # Splitting, checking and storing a few MiB of messages is done off the event loop.
            self._answer_later(frame, "staging messages", stage)
        elif command == "publish-staged":
            self._publish_staged(frame)
        elif command == "create-temporary":
            kind = frame.header("kind")
            if kind not in ("queue", "topic"):
                raise _FrameError(f"header kind:{kind!r} must be queue or topic")
            is_queue = kind == "queue"
            temporary = (
                self._broker.create_temporary_queue(broker_id)
                if is_queue
                else self._broker.create_temporary_topic(broker_id)
            )
            # Known to this connection by the broker's own name.
            self._temporaries[(is_queue, temporary.name)] = temporary
            self._local_names[temporary.name] = temporary.name
            self._receipt_headers = (("jms-destination", self._name_of(temporary)),)
        elif command == "delete-temporary":
            destination = self._destination(frame.header("target"), "target")
            if not isinstance(destination, TemporaryQueue | TemporaryTopic):
                raise _FrameError(f"{self._name_of(destination)} is not a temporary destination")
            self._broker.delete_temporary_destination(broker_id, destination)
            local = self._local_names.pop(destination.name, None)
            if local is not None:
                self._temporaries.pop((isinstance(destination, TemporaryQueue), local), None)
        else:
            raise _FrameError(
                f"unknown admin command {command!r}; the commands are /admin/stats, "
                "/admin/purge, /admin/create-temporary, /admin/delete-temporary, "
                "/admin/last-sequence, /admin/acknowledge-through, /admin/first-not-due, "
                "/admin/stage and /admin/publish-staged",
                InvalidDestinationException,
            )

    def _publish_staged(self, frame: Frame) -> None:
        """``/admin/publish-staged``: checked here, published on an executor thread (it may read
        and decode staged messages), answered by a RECEIPT with ``jms-published`` once the
        publish is durable (see ``Broker.publish_staged``)."""
        staged, marker = self._staged_request(frame)
        for part in staged:
            self._authorize(Action.RECEIVE, part.queue)  # its staging queue is consumed
        if marker is not None:
            self._authorize(Action.SEND, marker.queue)
            self._authorize(Action.RECEIVE, marker.queue)
        broker_id = self._broker_id
        assert broker_id is not None

        def publish() -> tuple[tuple[str, str], ...]:
            published = self._broker.publish_staged(broker_id, staged, marker, self._may_send)
            return (("jms-published", str(published)),)

        self._answer_later(frame, "publishing staged messages", publish)

    def _answer_later(
        self, frame: Frame, what: str, work: Callable[[], tuple[tuple[str, str], ...]]
    ) -> None:
        """Run ``work`` (a broker call that reads, decodes or waits for the store) on an executor
        thread, then answer ``frame`` with a RECEIPT carrying the headers it returns, or with
        its refusal (``what`` names it in the log)."""
        self._answers_later = True
        task = self._loop.create_task(
            self._answered_later(frame, frame.header("receipt"), what, work)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _staged_request(self, frame: Frame) -> tuple[list[StagedRange], BatchMarker | None]:
        """The ranges and marker a publish-staged body names (JSON, docs/stomp.md)."""
        try:
            request = json.loads(frame.body)
            parts = request["staged"]
            marker = request.get("marker")
            if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
                raise TypeError("staged is not a list of objects")
            if marker is not None and not isinstance(marker, dict):
                raise TypeError("marker is neither an object nor null")
            staged = [
                StagedRange(
                    self._staging_queue(part["queue"], "staged queue"),
                    part["first_seq"],
                    part["last_seq"],
                )
                for part in parts
            ]
            return staged, None if marker is None else BatchMarker(
                self._staging_queue(marker["queue"], "marker queue"), marker["batch_id"]
            )
        except (
            UnicodeDecodeError,
            json.JSONDecodeError,
            KeyError,
            TypeError,
            AttributeError,
        ) as error:
            raise _FrameError(
                '/admin/publish-staged needs a JSON body {"staged": [{"queue", "first_seq", '
                '"last_seq"}...], "marker": {"queue", "batch_id"} or '
                f"null}}: {type(error).__name__}: {error}"
            ) from None

    def _staging_queue(self, text: object, where: str) -> Queue:
        """The queue ``text`` names (``where`` says which header or field, in errors)."""
        if not isinstance(text, str):
            raise _FrameError(f"{where} must name a queue; got {text!r}")
        destination = self._destination(text, where)
        if not isinstance(destination, Queue) or isinstance(destination, TemporaryQueue):
            raise ValueError(f"{where} {self._name_of(destination)} is not a (non-temporary) queue")
        return destination

    async def _answered_later(
        self,
        frame: Frame,
        receipt: str | None,
        what: str,
        work: Callable[[], tuple[tuple[str, str], ...]],
    ) -> None:
        try:
            headers = await self._loop.run_in_executor(None, work)
        except (JMSException, ValueError) as error:
            if self._closing:
                return
            if self._extensions and receipt is not None:
                self._queue_receipt(receipt, headers=_refusal(frame, error))
            else:
                self._fail(frame, error)
            return
        except Exception as error:
            # As for a frame handled at once (``_handle``): the client must hear of it, never
            # wait for a RECEIPT that will not come.
            logger.exception("internal error %s for %s", what, self._peer)
            self._fail(frame, _FrameError(f"internal error: {type(error).__name__}: {error}"))
            return
        if not self._closing:
            self._queue_receipt(receipt, headers=headers)

    def _may_send(self, destination: Destination) -> None:
        """``publish_staged``'s permission check, under the broker's lock on an executor
        thread: plain, with no frame to fail."""
        if self._security.restricted and not self._security.allows(
            self._principal, Action.SEND, str(destination)
        ):
            raise JMSSecurityException(f"user {self._principal!r} may not send {destination}")

    def _reply(self, frame: Frame, payload: dict[str, Any]) -> None:
        reply_to = frame.header("reply-to")
        if reply_to is None:
            return
        destination = self._destination(reply_to, "reply-to")
        self._authorize(Action.SEND, destination)
        reply = TextMessage(json.dumps(payload))
        reply._destination = destination
        reply._message_id = self._new_message_id()
        reply._timestamp = wall_clock_ms()
        reply._delivery_mode = DeliveryMode.NON_PERSISTENT
        reply._correlation_id = frame.header("correlation-id")
        broker_id = self._broker_id
        assert broker_id is not None
        self._broker.send(broker_id, reply)


_HANDLERS: Final = {
    "SEND": _ClientConnection._on_send,
    "SUBSCRIBE": _ClientConnection._on_subscribe,
    "UNSUBSCRIBE": _ClientConnection._on_unsubscribe,
    "ACK": _ClientConnection._on_ack,
    "NACK": _ClientConnection._on_nack,
    "BEGIN": _ClientConnection._on_begin,
    "COMMIT": _ClientConnection._on_commit,
    "ABORT": _ClientConnection._on_abort,
    "DISCONNECT": _ClientConnection._on_disconnect,
}
