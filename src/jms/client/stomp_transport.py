"""``StompTransport``: a client connection to a broker over STOMP 1.2 (``stomp://host:port``).

The same ``Transport`` the in-process broker offers, in frames. Against a ``jms`` broker (it
answers CONNECT's ``jms-extensions:1``) nothing is lost: messages travel whole in the
``jms.message.codec`` form, prefetch credit is given back as the application takes messages, and
messages never handed to the application go back untouched. Against another broker (ActiveMQ)
the transport speaks plain STOMP with ActiveMQ's mapping (``jms.stomp.mapping``): text and bytes
bodies, properties as string headers, durable subscriptions through
``activemq.subscriptionName``; there a consumer holds at most its prefetch in unacknowledged
messages, and messages are redelivered by re-subscribing (docs/stomp.md lists the limits).

A PERSISTENT send outside a transaction waits for the broker's RECEIPT (the broker has the
message durably), and so do acknowledgements, commits, rollbacks and requeues; NON_PERSISTENT
sends, sends in a transaction and credit are written without waiting, in order. Deliveries reach the consumers' sinks on the reader thread. A lost connection is never
re-established here (``jms.client.failover`` does that over several of these): every call then
raises ``JMSException`` saying why, and the connection's ``on_close`` is told once. The transport never stamps headers, never decides acknowledgement
modes and never keeps a sent message.
"""

from __future__ import annotations

import itertools
import json
import ssl
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from jms.broker import (
    BatchMarker,
    BrowsePage,
    ConsumerSpec,
    Delivery,
    DeliverySink,
    EncodedBrowsePage,
    StagedRange,
    wall_clock_ms,
)
from jms.broker.staging import stage_frames
from jms.client.transport import RangeSource, SendDone, TopicSubscription, Transport
from jms.errors import (
    InvalidDestinationException,
    JMSException,
    MessageFormatException,
    ResourceAllocationException,
)
from jms.message import (
    DeliveryMode,
    Destination,
    Message,
    Queue,
    TemporaryQueue,
    TemporaryTopic,
    Topic,
)
from jms.message.codec import check_fixed_header, decode, encode
from jms.stomp.client import StompClient, error_from_frame
from jms.stomp.errors import StompProtocolError
from jms.stomp.frames import Frame
from jms.stomp.mapping import (
    JMS_MESSAGE_CONTENT_TYPE,
    frame_for_message,
    message_from_frame,
    parse_destination,
)
from jms.stomp.packed import PACKED_CONTENT_TYPE, unpack_records
from jms.stomp.parser import FrameLimits

__all__ = ["StompTransport", "parse_stomp_url"]

_EXTENSIONS: Final = ("jms-extensions", "1")
_MAX_BODY_HEADER: Final = "jms-max-body"  # jms.stomp.server.MAX_BODY_HEADER
# What a jms broker writes can exceed the largest body it takes by what it adds to a message:
# a delivery's JMSXDeliveryCount, a packed range read's record head.
_LIMITS: Final = FrameLimits(max_body_bytes=FrameLimits().max_body_bytes + 64 * 1024)

#: How many asynchronous sends of one connection may await their RECEIPT at once. Enough to keep
#: the connection busy while the broker syncs its store for a batch of them; bounded so that a
#: slow broker slows the producer down instead of letting unsent work pile up in memory.
ASYNC_SEND_WINDOW: Final = 512
# Bytes of staged messages per /admin/stage frame: well under a server's body limit (10 MiB by
# default), large enough that a frame's round trip is a small part of its cost.
_STAGE_FRAME_BYTES: Final = 4 * 1024 * 1024


def parse_stomp_url(url: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of ``stomp://host:port`` (tls False) or ``stomp+ssl://host:port``
    (tls True); ``JMSException`` for anything else."""
    scheme, separator, rest = url.partition("://")
    host, colon, port_text = rest.rstrip("/").rpartition(":")
    if (
        scheme not in ("stomp", "stomp+ssl")
        or not separator
        or not colon
        or not host
        or not port_text.isdigit()
        or not 0 < int(port_text) < 65536
    ):
        raise JMSException(
            f"{url!r} is not a STOMP broker URL; expected stomp://HOST:PORT or "
            "stomp+ssl://HOST:PORT"
        )
    return host.strip("[]"), int(port_text), scheme == "stomp+ssl"


class _Subscription:
    __slots__ = ("consumer_id", "frame", "outstanding", "sink", "stomp_id")

    def __init__(self, consumer_id: int, stomp_id: str, frame: Frame, sink: DeliverySink) -> None:
        self.consumer_id = consumer_id
        self.stomp_id = stomp_id
        self.frame = frame  # the SUBSCRIBE, to subscribe again
        self.sink = sink
        self.outstanding: set[int] = set()  # delivery tags not yet acknowledged or given back


class _Browse:
    __slots__ = ("done", "error", "messages", "next_seq", "start")

    def __init__(self, start: int) -> None:
        self.start = start
        self.done = threading.Event()
        self.messages: list[tuple[int, Message]] = []
        self.next_seq: int | None = None
        self.error: Exception | None = None  # a jms broker refused the browse


class _PackedBrowse(_Browse):
    """A range read answered in packed frames: what they held so far, checked as it came."""

    __slots__ = ("encoded", "end", "limit", "seqs", "what")

    def __init__(self, start: int, end: int | None, limit: int, what: str) -> None:
        super().__init__(start)
        self.end = end
        self.limit = limit
        self.what = what
        self.seqs: list[int] = []
        self.encoded: list[bytes] = []

    def add(self, frame: Frame) -> None:
        """Take one packed frame; ``JMSException`` if it is not what was asked for."""
        content_type = frame.header("content-type")
        if content_type != PACKED_CONTENT_TYPE:
            raise JMSException(
                f"{self.what}: expected a packed frame (content-type:{PACKED_CONTENT_TYPE}), "
                f"got content-type:{content_type!r}"
            )
        count_text = frame.header("jms-count")
        if count_text is None or not count_text.isascii() or not count_text.isdigit():
            raise JMSException(f"{self.what}: packed frame with jms-count:{count_text!r}")
        try:
            seqs, encoded = unpack_records(frame.body, int(count_text))
        except StompProtocolError as error:
            raise JMSException(f"{self.what}: {error.message}") from None
        for seq, data in zip(seqs, encoded, strict=True):
            try:
                check_fixed_header(data)
            except MessageFormatException as error:
                raise JMSException(f"{self.what}: seq {seq}: {error}") from None
        if not seqs:
            return
        floor = self.seqs[-1] + 1 if self.seqs else self.start
        if seqs[0] < floor or (self.end is not None and seqs[-1] > self.end):
            raise JMSException(
                f"{self.what}: packed frame holds seq {seqs[0]} to {seqs[-1]}, outside the "
                f"range still to read ({floor} to {self.end if self.end is not None else 'end'})"
            )
        if len(self.seqs) + len(seqs) > self.limit:
            raise JMSException(
                f"{self.what}: {len(self.seqs) + len(seqs)} messages for a page of {self.limit}"
            )
        self.seqs += seqs
        self.encoded += encoded


class StompTransport(Transport):
    """A ``Transport`` over one STOMP connection; see the module docstring."""

    def __init__(
        self,
        url: str,
        user: str | None,
        password: str | None,
        client_id: str | None,
        on_close: Callable[[JMSException], None],
        ssl_context: ssl.SSLContext | None = None,
        virtual_host: str = "localhost",
    ) -> None:
        self._url = url
        self._virtual_host = virtual_host
        self._host, self._port, _ = parse_stomp_url(url)
        self._ssl_context = ssl_context
        self._user = user
        self._password = password
        self._on_close = on_close
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._tags = itertools.count(1)
        self._subscriptions: dict[str, _Subscription] = {}  # by STOMP subscription id
        self._by_consumer: dict[int, _Subscription] = {}
        self._deliveries: dict[int, tuple[str, _Subscription]] = {}  # tag -> (ack id, subscription)
        self._browses: dict[str, _Browse] = {}
        self._temporaries: set[tuple[bool, str]] = set()
        self._closed = False
        self._send_window = threading.Semaphore(ASYNC_SEND_WINDOW)
        self._client = self._open(client_id)

    def _open(self, client_id: str | None) -> StompClient:
        client = StompClient(
            self._host,
            self._port,
            login=self._user,
            passcode=self._password,
            client_id=client_id,
            extra_headers=(_EXTENSIONS,),
            limits=_LIMITS,
            on_message=self._on_message,
            on_lost=self._lost,
            ssl_context=self._ssl_context,
            virtual_host=self._virtual_host,
        )
        self._extended = client.connected.header(_EXTENSIONS[0]) == _EXTENSIONS[1]
        max_body = client.connected.header(_MAX_BODY_HEADER) if self._extended else None
        self._max_body = int(max_body) if max_body is not None and max_body.isdigit() else None
        return client

    @property
    def where(self) -> str:
        """The URL of the broker this transport is connected to."""
        return self._url

    @property
    def lost(self) -> JMSException | None:
        """Why the connection was lost, or None while it is usable or was closed on purpose."""
        return self._client.lost

    def _check_size(self, body_bytes: int, what: str) -> None:
        """``ResourceAllocationException`` if the broker would refuse a frame body this large
        (it would end the connection, mid-write, without saying why)."""
        if self._max_body is not None and body_bytes > self._max_body:
            raise ResourceAllocationException(
                f"cannot send {what}: it takes {body_bytes} bytes, and {self._client.where} "
                f"takes at most {self._max_body} bytes in one frame body"
            )

    def _lost(self, error: JMSException) -> None:
        for browse in list(self._browses.values()):
            browse.done.set()
        if not self._closed:
            self._on_close(error)

    # -- destinations --------------------------------------------------------------------------

    def _name_of(self, destination: Destination) -> str:
        if isinstance(destination, (TemporaryQueue, TemporaryTopic)):
            is_queue = isinstance(destination, TemporaryQueue)
            kind = "queue" if is_queue else "topic"
            if (is_queue, destination.name) in self._temporaries:
                return f"/temp-{kind}/{destination.name}"
            return f"/remote-temp-{kind}/{destination.name}"
        if isinstance(destination, Queue):
            return f"/queue/{destination.name}"
        return f"/topic/{destination.name}"

    def _resolve(self, text: str) -> Destination:
        parsed = parse_destination(text)
        kind, name = parsed.kind, parsed.name
        if kind == "queue":
            return Queue(name)
        if kind == "topic":
            return Topic(name)
        if kind.endswith("queue"):
            return TemporaryQueue(name)
        return TemporaryTopic(name)

    def set_client_id(self, client_id: str) -> None:
        # STOMP names the client ID in CONNECT only: connect again with it (nothing is open yet).
        old = self._client
        self._client = self._open(client_id)
        old.close()  # a closing client reports no loss

    def create_temporary_queue(self) -> TemporaryQueue:
        return TemporaryQueue(self._temporary_name(True))

    def create_temporary_topic(self) -> TemporaryTopic:
        return TemporaryTopic(self._temporary_name(False))

    def _temporary_name(self, is_queue: bool) -> str:
        """A jms broker creates it now and names it (so any connection can use the name);
        another broker creates ``/temp-queue/NAME`` when this connection first mentions it."""
        name = str(next(self._ids))
        if self._extended:
            answer = self._client.request(
                Frame(
                    "SEND",
                    (
                        ("destination", "/admin/create-temporary"),
                        ("kind", "queue" if is_queue else "topic"),
                    ),
                )
            )
            name = parse_destination(answer.header("jms-destination") or "", "jms-destination").name
        self._temporaries.add((is_queue, name))
        return name

    def delete_temporary_destination(self, destination: Destination) -> None:
        key = (isinstance(destination, TemporaryQueue), destination.name)
        if key not in self._temporaries:
            raise InvalidDestinationException(
                f"{destination} was not created by this connection (or is deleted already)"
            )
        if self._extended:
            self._client.request(
                Frame(
                    "SEND",
                    (
                        ("destination", "/admin/delete-temporary"),
                        ("target", self._name_of(destination)),
                    ),
                )
            )
        self._temporaries.discard(key)

    # -- producing -----------------------------------------------------------------------------

    def send(self, message: Message, transaction_id: int | None, *, resend: bool = False) -> None:
        """``Transport.send``; a ``resend`` (``jms.client.failover`` sending again what a lost
        connection did not answer) says so, and a jms broker drops it if it has it already."""
        frame = self._send_frame(message, transaction_id, resend)
        persistent = message.get_jms_delivery_mode() == DeliveryMode.PERSISTENT
        if persistent and transaction_id is None:
            self._client.request(frame)
        else:
            self._client.send(frame)

    def send_async(
        self,
        message: Message,
        transaction_id: int | None,
        on_done: SendDone,
        *,
        resend: bool = False,
    ) -> None:
        """Every asynchronous send asks for a RECEIPT (the broker's answer once it has the
        message, durably for a PERSISTENT one) and returns at once; up to ``ASYNC_SEND_WINDOW``
        of this connection's sends are in flight, a further one waits for a RECEIPT. A
        ``resend`` is marked as ``send`` marks it."""
        frame = self._send_frame(message, transaction_id, resend)
        self._send_window.acquire()

        def answered(error: Exception | None) -> None:
            self._send_window.release()
            on_done(error)

        try:
            self._client.request_async(frame, answered)
        except BaseException:
            self._send_window.release()
            raise

    def _send_frame(self, message: Message, transaction_id: int | None, resend: bool) -> Frame:
        destination = message.get_jms_destination()
        if destination is None:
            raise InvalidDestinationException(f"cannot send {message!r}: it has no JMSDestination")
        headers = [("destination", self._name_of(destination))]
        if self._extended:
            body = encode(message)
            self._check_size(len(body), f"{message!r} to {destination}")
            headers.append(("content-type", JMS_MESSAGE_CONTENT_TYPE))
            reply_to = message.get_jms_reply_to()
            if reply_to is not None:
                headers.append(("reply-to", self._name_of(reply_to)))
        else:
            mapped, body = frame_for_message(message, self._name_of)
            headers.extend(mapped)
        if transaction_id is not None:
            headers.append(("transaction", f"tx-{transaction_id}"))
        if resend and self._extended:
            headers.append(("jms-resend", "true"))
        return Frame("SEND", tuple(headers), body)

    # -- transactions --------------------------------------------------------------------------

    def begin(self) -> int:
        transaction_id = next(self._ids)
        self._client.send(Frame("BEGIN", (("transaction", f"tx-{transaction_id}"),)))
        return transaction_id

    def commit(self, transaction_id: int) -> None:
        self._client.request(Frame("COMMIT", (("transaction", f"tx-{transaction_id}"),)))

    def rollback(self, transaction_id: int) -> None:
        self._client.request(Frame("ABORT", (("transaction", f"tx-{transaction_id}"),)))

    # -- consuming -----------------------------------------------------------------------------

    def add_consumer(self, spec: ConsumerSpec, sink: DeliverySink) -> int:
        consumer_id = next(self._ids)
        stomp_id = f"sub-{consumer_id}"
        headers = [
            ("destination", self._name_of(spec.destination)),
            ("id", stomp_id),
            ("ack", "client-individual"),
            ("activemq.prefetchSize", str(spec.prefetch)),
        ]
        if spec.selector_text:
            headers.append(("selector", spec.selector_text))
        if self._extended:
            if spec.subscription_name is not None:
                headers.append(("jms-subscription-name", spec.subscription_name))
                headers.append(("jms-durable", "true" if spec.durable else "false"))
                headers.append(("jms-shared", "true" if spec.shared else "false"))
            if spec.no_local:
                headers.append(("jms-no-local", "true"))
            if spec.max_deliveries is not None:
                headers.append(("jms-max-deliveries", str(spec.max_deliveries)))
        else:
            if spec.shared:
                raise JMSException(
                    f"shared subscriptions need a jms broker; {self._client.server} at "
                    f"{self._url} has none"
                )
            if spec.subscription_name is not None:
                headers.append(("activemq.subscriptionName", spec.subscription_name))
            if spec.no_local:
                headers.append(("activemq.noLocal", "true"))
        frame = Frame("SUBSCRIBE", tuple(headers))
        subscription = _Subscription(consumer_id, stomp_id, frame, sink)
        with self._lock:
            self._subscriptions[stomp_id] = subscription
            self._by_consumer[consumer_id] = subscription
        try:
            self._client.request(frame)
        except BaseException:
            self._forget(subscription)
            raise
        return consumer_id

    def _forget(self, subscription: _Subscription) -> None:
        with self._lock:
            self._subscriptions.pop(subscription.stomp_id, None)
            self._by_consumer.pop(subscription.consumer_id, None)

    def remove_consumer(self, consumer_id: int) -> None:
        with self._lock:
            subscription = self._by_consumer.pop(consumer_id, None)
        if subscription is None:
            return  # removed already (closing a consumer and its session may race)
        try:
            # Messages arriving until the RECEIPT still reach the sink; the consumer gives
            # them back. After it, none come.
            self._client.request(Frame("UNSUBSCRIBE", (("id", subscription.stomp_id),)))
        except JMSException:
            if not (self._closed or self._client.lost):
                raise  # a closing or lost connection takes its subscriptions with it
        finally:
            self._forget(subscription)

    def credit(self, consumer_id: int, count: int) -> None:
        subscription = self._by_consumer.get(consumer_id)
        if not self._extended or subscription is None:
            return  # other brokers count credit by acknowledgement
        self._client.send(
            Frame(
                "ACK",
                (
                    ("id", "credit"),
                    ("subscription", subscription.stomp_id),
                    ("jms-credit", str(count)),
                ),
            )
        )

    def _on_message(self, frame: Frame) -> None:
        """A MESSAGE from the reader thread: to its consumer's sink, or its browse."""
        stomp_id = frame.header("subscription") or ""
        browse = self._browses.get(stomp_id)
        if browse is not None:
            self._browsed(browse, frame)
            return
        subscription = self._subscriptions.get(stomp_id)
        if subscription is None:
            return  # unsubscribed meanwhile; the broker takes it back
        message = self._message(frame)
        tag = next(self._tags)
        with self._lock:
            self._deliveries[tag] = (
                frame.header("ack") or frame.header("message-id") or "",
                subscription,
            )
            subscription.outstanding.add(tag)
        subscription.sink(Delivery(subscription.consumer_id, tag, 0, message))

    def _message(self, frame: Frame) -> Message:
        destination = self._resolve(frame.header("destination") or "")
        if frame.header("content-type") == JMS_MESSAGE_CONTENT_TYPE:
            message = decode(frame.body)
            if not self._extended:  # came through another broker: its headers are the truth
                message.set_jms_redelivered(frame.header("redelivered") == "true")
            return message
        message = message_from_frame(
            frame.header_map(), frame.body, destination, self._resolve, wall_clock_ms()
        )
        message.set_jms_message_id(frame.header("message-id"))
        message.set_jms_redelivered(frame.header("redelivered") == "true")
        return message

    def _settle(
        self, command: str, tags: Iterable[int], extra: tuple[tuple[str, str], ...]
    ) -> list[Frame]:
        frames = []
        with self._lock:
            for tag in tags:
                entry = self._deliveries.pop(tag, None)
                if entry is None:
                    continue
                ack_id, subscription = entry
                subscription.outstanding.discard(tag)
                frames.append(Frame(command, (("id", ack_id), *extra)))
        return frames

    def acknowledge(self, tags: Iterable[int], transaction_id: int | None = None) -> None:
        """ACK each delivery; returns once the broker has the acknowledgements (for good, as
        in-process: an acknowledged message is never delivered again, whatever crashes next).
        In a transaction the commit waits instead."""
        extra = () if transaction_id is None else (("transaction", f"tx-{transaction_id}"),)
        frames = self._settle("ACK", tags, extra)
        if not frames:
            return
        if transaction_id is not None:
            self._client.send_many(frames)
            return
        self._client.send_many(frames[:-1])
        self._client.request(frames[-1])

    def requeue(self, delivered: Iterable[int] = (), undelivered: Iterable[int] = ()) -> None:
        delivered, undelivered = list(delivered), list(undelivered)
        if self._extended:
            frames = self._settle("NACK", delivered, ())
            frames += self._settle("NACK", undelivered, (("jms-undelivered", "true"),))
            if frames:
                # Wait for the last one: what comes back is then in the consumers' buffers
                # (the broker writes the redeliveries before the RECEIPT), as in-process.
                self._client.send_many(frames[:-1])
                self._client.request(frames[-1])
            return
        self._requeue_by_resubscribing(delivered, undelivered)

    def _requeue_by_resubscribing(self, delivered: list[int], undelivered: list[int]) -> None:
        """Another broker: a subscription all of whose outstanding messages come back is
        subscribed again (the broker redelivers what it had not been acknowledged); a single
        delivered message is NACKed (ActiveMQ dead-letters it) and an undelivered one, which only
        ever comes back alone when it expired in the buffer, is acknowledged away."""
        returned = set(delivered) | set(undelivered)
        with self._lock:
            affected = {self._deliveries[tag][1] for tag in returned if tag in self._deliveries}
            for gone in [s for s in affected if s.consumer_id not in self._by_consumer]:
                # Unsubscribed already: the broker took its unacknowledged messages back.
                for tag in gone.outstanding:
                    self._deliveries.pop(tag, None)
                gone.outstanding.clear()
                affected.discard(gone)
            whole = [s for s in affected if s.outstanding <= returned]
        for subscription in whole:
            with self._lock:
                for tag in list(subscription.outstanding):
                    self._deliveries.pop(tag, None)
                subscription.outstanding.clear()
                self._subscriptions.pop(subscription.stomp_id, None)
                old_id = subscription.stomp_id
                subscription.stomp_id = f"sub-{subscription.consumer_id}-{next(self._ids)}"
                headers = tuple(
                    (name, subscription.stomp_id if name == "id" else value)
                    for name, value in subscription.frame.headers
                )
                subscription.frame = Frame("SUBSCRIBE", headers)
                self._subscriptions[subscription.stomp_id] = subscription
            self._client.request(Frame("UNSUBSCRIBE", (("id", old_id),)))
            self._client.request(subscription.frame)
        rest_delivered = [tag for tag in delivered if tag in self._deliveries]
        rest_undelivered = [tag for tag in undelivered if tag in self._deliveries]
        frames = self._settle("NACK", rest_delivered, ()) + self._settle(
            "ACK", rest_undelivered, ()
        )
        if frames:
            self._client.send_many(frames)

    def unsubscribe(self, name: str) -> None:
        self._client.request(
            Frame(
                "UNSUBSCRIBE",
                (("id", f"durable-{name}"), ("activemq.subscriptionName", name)),
            )
        )

    # -- browsing ------------------------------------------------------------------------------

    def browse(self, queue: Queue, selector: str | None, start_seq: int, limit: int) -> BrowsePage:
        stomp_id = f"browse-{next(self._ids)}"
        headers = [("destination", self._name_of(queue)), ("id", stomp_id), ("browser", "true")]
        if selector:
            headers.append(("selector", selector))
        if self._extended:
            headers += [("jms-browse-start", str(start_seq)), ("jms-browse-limit", str(limit))]
        elif start_seq != 1:
            return BrowsePage((), None)  # another broker sent everything in the first page
        return self._browse(stomp_id, headers, start_seq, str(queue))

    def _browse(
        self, stomp_id: str, headers: list[tuple[str, str]], start_seq: int, what: str
    ) -> BrowsePage:
        browse = _Browse(start_seq)
        self._run_browse(stomp_id, headers, browse, what)
        return BrowsePage(tuple(browse.messages), browse.next_seq)

    def _run_browse(
        self, stomp_id: str, headers: list[tuple[str, str]], browse: _Browse, what: str
    ) -> None:
        """Subscribe to browse and return once the ``browser:end`` frame came; raise what the
        broker refused or what was wrong with its answer."""
        self._browses[stomp_id] = browse
        try:
            self._client.request(Frame("SUBSCRIBE", tuple(headers)))
            browse.done.wait()
            lost = self._client.lost
            if lost is not None:
                raise JMSException(f"browsing {what} failed: {lost.reason}")
            self._client.send(Frame("UNSUBSCRIBE", (("id", stomp_id),)))
            if browse.error is not None:
                raise browse.error
        finally:
            self._browses.pop(stomp_id, None)

    def _browsed(self, browse: _Browse, frame: Frame) -> None:
        if frame.header("browser") == "end":
            if frame.header("jms-exception") is not None:
                browse.error = error_from_frame(
                    Frame("RECEIPT", frame.headers), self._url
                )  # the refusal's class and message, as a refusing RECEIPT carries them
            next_seq = frame.header("jms-next-seq")
            number = next_seq is not None and next_seq.isascii() and next_seq.isdigit()
            browse.next_seq = int(next_seq) if number and next_seq else None
            if isinstance(browse, _PackedBrowse) and next_seq is not None and not number:
                # Read as "no next page", it would end a range read early without a word.
                browse.error = browse.error or JMSException(
                    f"{browse.what}: jms-next-seq:{next_seq!r} is not a sequence number"
                )
            browse.done.set()
            return
        if isinstance(browse, _PackedBrowse):
            if browse.error is None:  # after a bad frame the rest is ignored: the read fails
                try:
                    browse.add(frame)
                except JMSException as error:
                    browse.error = error
            return
        seq_text = frame.header("jms-seq")
        seq = (
            int(seq_text)
            if seq_text and seq_text.isdigit()
            else browse.start + len(browse.messages)
        )
        browse.messages.append((seq, self._message(frame)))

    # -- range reads (jms brokers only; docs/stomp.md, "Range reads") ---------------------------

    def browse_range(
        self,
        source: RangeSource,
        selector: str | None,
        start_seq: int,
        end_seq: int | None,
        limit: int,
    ) -> BrowsePage:
        # The packed answer decoded here is the fastest way to a page of messages.
        page = self.browse_range_encoded(source, selector, start_seq, end_seq, limit)
        messages = map(decode, page.messages)
        return BrowsePage(tuple(zip(page.seqs, messages, strict=True)), page.next_seq)

    def browse_range_encoded(
        self,
        source: RangeSource,
        selector: str | None,
        start_seq: int,
        end_seq: int | None,
        limit: int,
    ) -> EncodedBrowsePage:
        self._require_extensions(f"reading {source} by sequence number")
        if end_seq is not None and end_seq < start_seq:
            return EncodedBrowsePage([], [], None)
        stomp_id = f"browse-{next(self._ids)}"
        headers = [
            ("destination", self._name_of(_destination_of(source))),
            ("id", stomp_id),
            ("browser", "true"),
            ("jms-browse-format", "packed"),
            ("jms-browse-start", str(start_seq)),
            ("jms-browse-limit", str(limit)),
            *_subscription_headers(source),
        ]
        if end_seq is not None:
            headers.append(("jms-browse-end", str(end_seq)))
        if selector:
            headers.append(("selector", selector))
        what = f"{self._url} answering a range read of {source}"
        browse = _PackedBrowse(start_seq, end_seq, limit, what)
        self._run_browse(stomp_id, headers, browse, str(source))
        # A next page must start past this one, or reading pages would never end.
        floor = browse.seqs[-1] if browse.seqs else start_seq
        if browse.next_seq is not None and browse.next_seq <= floor:
            raise JMSException(
                f"{what}: jms-next-seq:{browse.next_seq} does not follow seq {floor}, read "
                "up to or from"
            )
        return EncodedBrowsePage(browse.seqs, browse.encoded, browse.next_seq)

    def acknowledge_through(
        self, source: RangeSource, seq: int, selector: str | None = None, start_seq: int = 1
    ) -> int:
        self._require_extensions(f"acknowledging {source} through a sequence number")
        return self._admin_request(
            "acknowledge-through",
            (
                ("target", self._name_of(_destination_of(source))),
                ("jms-seq", str(seq)),
                *((("jms-start-seq", str(start_seq)),) if start_seq > 1 else ()),
                *_subscription_headers(source),
                *((("selector", selector),) if selector else ()),
            ),
            "jms-acknowledged",
        )

    def first_not_due(
        self, source: RangeSource, selector: str | None, start_seq: int, end_seq: int | None
    ) -> int | None:
        self._require_extensions(f"asking {source} for its first message not yet due")
        if end_seq is not None and end_seq < start_seq:
            return None
        found = self._admin_request(
            "first-not-due",
            (
                ("target", self._name_of(_destination_of(source))),
                ("jms-browse-start", str(start_seq)),
                *((("jms-browse-end", str(end_seq)),) if end_seq is not None else ()),
                *_subscription_headers(source),
                *((("selector", selector),) if selector else ()),
            ),
            "jms-first-not-due",
        )
        return found or None

    def last_sequence(self, destination: Queue | Topic) -> int:
        self._require_extensions(f"asking for the last sequence number of {destination}")
        return self._admin_request(
            "last-sequence", (("target", self._name_of(destination)),), "jms-last-seq"
        )

    def stage_encoded(self, queue: Queue, encoded: Sequence[bytes]) -> list[StagedRange]:
        self._require_extensions("staging messages")
        ranges: list[StagedRange] = []
        chunk: list[bytes] = []
        size = 0
        for index, item in enumerate(encoded):
            self._check_size(len(item) + 4, f"staged message {index} of this request")
            if chunk and size + len(item) > _STAGE_FRAME_BYTES:
                ranges.append(self._stage_chunk(queue, chunk))
                chunk, size = [], 0
            chunk.append(item)
            size += len(item) + 4
        if chunk:
            ranges.append(self._stage_chunk(queue, chunk))
        return ranges

    def _stage_chunk(self, queue: Queue, encoded: list[bytes]) -> StagedRange:
        receipt = self._client.request(
            Frame(
                "SEND",
                (("destination", "/admin/stage"), ("target", self._name_of(queue))),
                stage_frames(encoded),
            )
        )
        first, last = (
            _receipt_number(self._url, receipt, "/admin/stage", name)
            for name in ("jms-staged-first", "jms-staged-last")
        )
        return StagedRange(queue, first, last)

    def publish_staged(self, staged: Sequence[StagedRange], marker: BatchMarker | None) -> int:
        self._require_extensions("publishing staged messages")
        request = {
            "staged": [
                {
                    "queue": self._name_of(part.queue),
                    "first_seq": part.first_seq,
                    "last_seq": part.last_seq,
                }
                for part in staged
            ],
            "marker": None
            if marker is None
            else {"queue": self._name_of(marker.queue), "batch_id": marker.batch_id},
        }
        receipt = self._client.request(
            Frame(
                "SEND",
                (("destination", "/admin/publish-staged"), ("content-type", "application/json")),
                json.dumps(request).encode(),
            )
        )
        return _receipt_number(self._url, receipt, "/admin/publish-staged", "jms-published")

    def _require_extensions(self, what: str) -> None:
        if not self._extended:
            raise JMSException(
                f"{what} needs a jms broker: {self._url} did not answer CONNECT's "
                "jms-extensions:1 (another STOMP broker has no sequence numbers)"
            )

    def _admin_request(
        self, command: str, headers: tuple[tuple[str, str], ...], answer_header: str
    ) -> int:
        """Send ``/admin/<command>`` and return the number its RECEIPT carries in
        ``answer_header`` (the RECEIPT comes once what the command did is durable)."""
        receipt = self._client.request(
            Frame("SEND", (("destination", f"/admin/{command}"), *headers))
        )
        return _receipt_number(self._url, receipt, f"/admin/{command}", answer_header)

    # -- closing -------------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._client.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "lost" if self.lost else "open"
        return f"<StompTransport {self._url} {state}>"


def _destination_of(source: RangeSource) -> Queue | Topic:
    return source.topic if isinstance(source, TopicSubscription) else source


def _subscription_headers(source: RangeSource) -> tuple[tuple[str, str], ...]:
    """The headers naming a durable subscription in a range read (none for a queue)."""
    if not isinstance(source, TopicSubscription):
        return ()
    headers = [("jms-subscription-name", source.name)]
    if source.client_id is not None:
        headers.append(("jms-client-id", source.client_id))
    return tuple(headers)


def _receipt_number(url: str, receipt: Frame, command: str, header: str) -> int:
    """The whole number ``receipt`` (the answer to ``command``) carries in ``header``."""
    value = receipt.header(header)
    if value is None or not value.isascii() or not value.isdigit():
        raise JMSException(
            f"{url} answered {command} with {header}:{value!r}; expected a whole number"
        )
    return int(value)
