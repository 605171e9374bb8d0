"""``Session``: a single-threaded context for producing and consuming, with its acknowledgement
mode or transaction.

Threading, as JMS allows: a session and its producers, consumers and browsers are used by one
thread at a time (``close`` may come from any thread). Message listeners run on the session's own
thread, started when the first listener is set; it delivers one message at a time across the
session's consumers, in turn. The session's condition guards the consumers' prefetch buffers and
the listener state; it is never held while calling the transport, so a transport delivering under
its own lock can always get it.

Acknowledgement: every message handed to the application is recorded as consumed-unacknowledged
until the mode settles it — AUTO right after ``receive`` returns or the listener returns, DUPS_OK
in batches (and before a receive would block), CLIENT at ``message.acknowledge()`` (everything
the session consumed so far), transacted at ``commit``. ``recover``, ``rollback`` and closing the
session give unacknowledged messages back as failed deliveries (redelivered, count + 1), and
give back prefetched ones untouched, so redelivery starts at the oldest unacknowledged message.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from jms.broker import BatchMarker, ConsumerSpec, Delivery, StagedRange, wall_clock_ms
from jms.broker.staging import check_stage_request
from jms.client.browser import QueueBrowser
from jms.client.completion import CompletionListener, Completions
from jms.client.consumer import MessageConsumer, MessageListener
from jms.client.producer import MessageProducer
from jms.client.sequence_reader import SequenceReader
from jms.client.transport import RangeSource
from jms.errors import IllegalStateException, JMSException
from jms.message import (
    BytesMessage,
    Destination,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    StreamMessage,
    TemporaryQueue,
    TemporaryTopic,
    TextMessage,
    Topic,
)

if TYPE_CHECKING:
    from jms.client.connection import Connection

__all__ = ["Session"]

logger = logging.getLogger(__name__)


class Session:
    """See the module docstring. Created by ``Connection.create_session``."""

    AUTO_ACKNOWLEDGE: Final = 1
    CLIENT_ACKNOWLEDGE: Final = 2
    DUPS_OK_ACKNOWLEDGE: Final = 3
    SESSION_TRANSACTED: Final = 0

    def __init__(self, connection: Connection, session_mode: int) -> None:
        self._connection = connection
        self._transport = connection._transport
        self._options = connection._options
        self._mode = session_mode
        self._condition = threading.Condition(threading.Lock())
        self._consumers: list[MessageConsumer] = []
        # Tags of messages the application has, not yet acknowledged; a dict keeps their order.
        self._unacked: dict[int, None] = {}
        self._lazy_ack_batch = max(1, self._options.prefetch // 2)
        self._transaction_id: int | None = None
        self._listener_thread: threading.Thread | None = None
        self._running: MessageConsumer | None = None
        self._next_listener = 0
        # Closing: no new deliveries, while a running listener may still use the session; closed:
        # the listener is done and every call is refused.
        self._closing = False
        self._closed = False
        self._completions = Completions(f"{id(self):x}")

    def __repr__(self) -> str:
        return f"<Session mode={self._mode} consumers={len(self._consumers)}>"

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- modes ---------------------------------------------------------------------------------

    def get_transacted(self) -> bool:
        self._check_open()
        return self._mode == Session.SESSION_TRANSACTED

    def get_acknowledge_mode(self) -> int:
        self._check_open()
        return self._mode

    # -- messages and destinations -------------------------------------------------------------

    def create_message(self) -> Message:
        self._check_open()
        return Message()

    def create_text_message(self, text: str | None = None) -> TextMessage:
        self._check_open()
        return TextMessage(text)

    def create_bytes_message(self) -> BytesMessage:
        self._check_open()
        return BytesMessage()

    def create_map_message(self) -> MapMessage:
        self._check_open()
        return MapMessage()

    def create_stream_message(self) -> StreamMessage:
        self._check_open()
        return StreamMessage()

    def create_object_message(self, obj: object = None) -> ObjectMessage:
        self._check_open()
        return ObjectMessage(obj, allowed_classes=self._options.allowed_classes)

    def create_queue(self, name: str) -> Queue:
        self._check_open()
        return Queue(name)

    def create_topic(self, name: str) -> Topic:
        self._check_open()
        return Topic(name)

    def create_temporary_queue(self) -> TemporaryQueue:
        """A queue that lives until deleted or until this session's connection closes."""
        self._check_open()
        return self._connection._temporary(self._transport.create_temporary_queue())

    def create_temporary_topic(self) -> TemporaryTopic:
        """A topic that lives until deleted or until this session's connection closes."""
        self._check_open()
        return self._connection._temporary(self._transport.create_temporary_topic())

    # -- producers, consumers, browsers --------------------------------------------------------

    def create_producer(self, destination: Destination | None = None) -> MessageProducer:
        self._check_open()
        return MessageProducer(self, destination)

    def create_consumer(
        self,
        destination: Destination,
        message_selector: str | None = None,
        no_local: bool = False,
    ) -> MessageConsumer:
        """A consumer of a queue, or of a topic through a private non-durable subscription.
        ``no_local`` (topics only) skips messages published by this session's connection."""
        return self._consumer(destination, message_selector, no_local=no_local)

    def create_durable_consumer(
        self,
        topic: Topic,
        name: str,
        message_selector: str | None = None,
        no_local: bool = False,
    ) -> MessageConsumer:
        """A consumer on the unshared durable subscription ``name`` of the connection's client ID
        (created if absent; changing topic, selector or no_local replaces it)."""
        return self._consumer(topic, message_selector, no_local=no_local, name=name, durable=True)

    #: JMS 1.1's name, in both its overloads, for the same thing.
    create_durable_subscriber = create_durable_consumer

    def create_shared_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> MessageConsumer:
        """A consumer on the shared non-durable subscription ``name``."""
        return self._consumer(topic, message_selector, name=name, shared=True)

    def create_shared_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> MessageConsumer:
        """A consumer on the shared durable subscription ``name``."""
        return self._consumer(topic, message_selector, name=name, durable=True, shared=True)

    def unsubscribe(self, name: str) -> None:
        """Delete the durable subscription ``name`` (no consumer may be open on it, and none of
        its messages may be unacknowledged)."""
        self._check_open()
        self._transport.unsubscribe(name)

    def create_browser(self, queue: Queue, message_selector: str | None = None) -> QueueBrowser:
        self._check_open()
        return QueueBrowser(self, queue, message_selector)

    def create_sequence_reader(
        self, source: RangeSource, message_selector: str | None = None
    ) -> SequenceReader:
        """A provider extension: a reader of ``source`` (a queue, or a ``TopicSubscription``
        naming a durable subscription) by sequence number range, which consumes only when told
        to (``acknowledge_through``); see ``jms.client.sequence_reader``."""
        self._check_open()
        return SequenceReader(self, source, message_selector)

    def stage_encoded(self, queue: Queue, encoded: Sequence[bytes]) -> list[StagedRange]:
        """A provider extension: stage one message per codec encoding (``jms.message.codec``)
        in ``encoded`` in the staging queue ``queue``, for a later ``publish_staged`` -- apart
        from this session's transaction, and durably when this returns; return the ranges of
        the staging queue they fill, in order (over STOMP, one per frame of a few MiB, each
        durable before the next is sent; a failure leaves the ones before it staged, which a
        publish that does not name them consumes). The broker refuses a request whose messages
        are not all messages with a destination (``Broker.stage_encoded``)."""
        self._check_open()
        items = list(encoded)
        if not items:
            return []
        check_stage_request(queue, items)
        return self._transport.stage_encoded(queue, items)

    def publish_staged(
        self, staged: Sequence[StagedRange], marker: BatchMarker | None = None
    ) -> int:
        """A provider extension: publish, in one broker transaction of its own (apart from this
        session's), the staged messages ``staged`` names — at most once per ``marker`` batch id
        — and consume the staging queues; return how many were published (0 for a batch the
        marker shows published before). See ``jms.broker.staging`` and
        ``Broker.publish_staged``."""
        self._check_open()
        return self._transport.publish_staged(list(staged), marker)

    def _consumer(
        self,
        destination: Destination,
        selector: str | None,
        *,
        no_local: bool = False,
        name: str | None = None,
        durable: bool = False,
        shared: bool = False,
    ) -> MessageConsumer:
        self._check_open()
        spec = ConsumerSpec(
            destination,
            selector=selector,
            no_local=no_local,
            subscription_name=name,
            durable=durable,
            shared=shared,
            prefetch=self._options.prefetch,
            max_deliveries=self._options.max_deliveries,
        )
        consumer = MessageConsumer(self, spec)
        with self._condition:
            self._consumers.append(consumer)
        return consumer

    # -- transactions and acknowledgement ------------------------------------------------------

    def commit(self) -> None:
        """Make this transaction's sends visible and its receives consumed, as one unit."""
        self._check_open()
        if self._mode != Session.SESSION_TRANSACTED:
            raise IllegalStateException("commit() needs a transacted session")
        self._completions.wait("commit")
        tags = list(self._unacked)
        self._unacked.clear()
        transaction_id, self._transaction_id = self._transaction_id, None
        if transaction_id is None and not tags:
            return
        if transaction_id is None:
            transaction_id = self._transport.begin()
        if tags:
            self._transport.acknowledge(tags, transaction_id)
        self._transport.commit(transaction_id)

    def rollback(self) -> None:
        """Discard this transaction's sends and redeliver the messages it received."""
        self._check_open()
        if self._mode != Session.SESSION_TRANSACTED:
            raise IllegalStateException("rollback() needs a transacted session")
        self._completions.wait("rollback")
        transaction_id, self._transaction_id = self._transaction_id, None
        if transaction_id is not None:
            self._transport.rollback(transaction_id)
        self._give_back()

    def recover(self) -> None:
        """Redeliver every unacknowledged message, starting with the oldest."""
        self._check_open()
        if self._mode == Session.SESSION_TRANSACTED:
            raise IllegalStateException("recover() is for non-transacted sessions; use rollback()")
        self._give_back()

    def _give_back(self) -> None:
        delivered = list(self._unacked)
        self._unacked.clear()
        undelivered = [tag for consumer in self._consumers for tag in consumer._drain()]
        if delivered or undelivered:
            self._transport.requeue(delivered, undelivered)

    def _acknowledge_all(self) -> None:
        """``message.acknowledge()``: in CLIENT mode, acknowledge all the session consumed."""
        self._check_open()
        if self._mode != Session.CLIENT_ACKNOWLEDGE or not self._unacked:
            return
        tags = list(self._unacked)
        self._unacked.clear()
        self._transport.acknowledge(tags)

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the session: a running listener finishes first (and may use the session until
        it returns), a transaction rolls back, unacknowledged messages are redelivered (DUPS_OK
        ones are acknowledged)."""
        if self._closing:
            return
        if threading.current_thread() is self._listener_thread:
            raise IllegalStateException(
                "a message listener must not close its own session; close it from another thread"
            )
        self._completions.wait("close")
        self._stop_delivery()
        self._release()

    def _stop_delivery(self) -> None:
        with self._condition:
            self._closing = True
            self._condition.notify_all()
            while self._running is not None:
                self._condition.wait()
            self._closed = True
            self._condition.notify_all()
        if self._listener_thread is not None:
            self._listener_thread.join()

    def _release(self) -> None:
        """Give everything this closed session held back to the broker."""
        lost = self._connection._lost is not None
        undelivered = [tag for consumer in list(self._consumers) for tag in consumer._detach()]
        self._consumers.clear()
        delivered = list(self._unacked)
        self._unacked.clear()
        self._connection._forget_session(self)
        if lost:
            return
        if self._mode == Session.SESSION_TRANSACTED and self._transaction_id is not None:
            self._transport.rollback(self._transaction_id)
        if self._mode == Session.DUPS_OK_ACKNOWLEDGE and delivered:
            self._transport.acknowledge(delivered)
            delivered = []
        if delivered or undelivered:
            self._transport.requeue(delivered, undelivered)

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("this Session is closed")
        self._connection._check_open()

    # -- internals used by producers and consumers ---------------------------------------------

    def _send(self, message: Message, listener: CompletionListener | None) -> None:
        """Send now, or with ``listener`` asynchronously: then it is told of the outcome on the
        completion thread, in send order (``jms.client.completion``)."""
        transaction_id = None
        if self._mode == Session.SESSION_TRANSACTED:
            if self._transaction_id is None:
                self._transaction_id = self._transport.begin()
            transaction_id = self._transaction_id
        if listener is None:
            self._transport.send(message, transaction_id)
            return
        send = self._completions.add(listener, message)
        try:
            self._transport.send_async(
                message, transaction_id, lambda error: self._completions.finish(send, error)
            )
        except BaseException:
            self._completions.discard(send)
            raise

    def _accept(self, consumer: MessageConsumer, delivery: Delivery) -> Message | None:
        """Hand a delivery to the application: None if it expired in the buffer (it goes back to
        the broker, which discards it); else the message, read-only and recorded as unacked.
        First the store's record of the delivery must be durable (see ``Delivery.recorded``)."""
        try:
            delivery.recorded.wait()
        except JMSException:
            with contextlib.suppress(JMSException):
                self._transport.requeue(undelivered=[delivery.tag])
            raise
        message = delivery.message
        expiration = message.get_jms_expiration()
        if expiration and expiration <= wall_clock_ms():
            self._transport.requeue(undelivered=[delivery.tag])
            return None
        consumer._took_one()
        message._mark_received(
            self._acknowledge_all if self._mode == Session.CLIENT_ACKNOWLEDGE else None
        )
        allowed = self._options.allowed_classes
        if allowed and isinstance(message, ObjectMessage):
            message.set_allowed_classes(allowed)
        self._unacked[delivery.tag] = None
        return message

    def _settle(self, tag: int) -> None:
        """The application has the message: acknowledge it if the mode does so by itself."""
        if self._mode == Session.AUTO_ACKNOWLEDGE:
            if tag in self._unacked:
                del self._unacked[tag]
                self._transport.acknowledge((tag,))
        elif (
            self._mode == Session.DUPS_OK_ACKNOWLEDGE and len(self._unacked) >= self._lazy_ack_batch
        ):
            self._flush_lazy_acks()

    def _automatic(self) -> bool:
        return self._mode in (Session.AUTO_ACKNOWLEDGE, Session.DUPS_OK_ACKNOWLEDGE)

    def _unreceive(self, consumer: MessageConsumer, delivery: Delivery) -> None:
        """``receive_body`` could not return this message's body. JMS 2.0 (JMSConsumer
        .receiveBody): in AUTO/DUPS_OK "the JMS provider will behave as if the unsuccessful call
        to receiveBody had not occurred. The message will be delivered again before any
        subsequent messages. This is not considered to be redelivery": it goes back to the front
        of the consumer's buffer, and the broker never hears of it. In CLIENT/transacted modes the
        call counts as successful: the message stays consumed, unacknowledged."""
        if self._automatic() and delivery.tag in self._unacked:
            del self._unacked[delivery.tag]
            consumer._put_back(delivery)

    def _redeliver_now(self, consumer: MessageConsumer, tag: int) -> None:
        """A listener raised on this message. JMS 2.0 §8.7: in AUTO/DUPS_OK "the message will be
        immediately redelivered" — so the consumer's prefetched messages go back to the broker
        untouched with it, and the failed one, older than they are, comes first again."""
        if self._automatic() and tag in self._unacked:
            del self._unacked[tag]
            self._transport.requeue(delivered=(tag,), undelivered=consumer._drain())

    def _lazy_acks_pending(self) -> bool:
        return self._mode == Session.DUPS_OK_ACKNOWLEDGE and bool(self._unacked)

    def _flush_lazy_acks(self) -> None:
        tags = list(self._unacked)
        self._unacked.clear()
        if tags:
            self._transport.acknowledge(tags)

    def _drop_buffered(self) -> None:
        """Forget what the consumers hold but the application has not taken (a failover: the
        broker it reaches next redelivers those messages)."""
        with self._condition:
            for consumer in self._consumers:
                consumer._buffer.take_all()
                consumer._uncredited = 0

    def _forget_consumer(self, consumer: MessageConsumer) -> None:
        with self._condition:
            if consumer in self._consumers:
                self._consumers.remove(consumer)

    def _wake(self) -> None:
        with self._condition:
            self._condition.notify_all()

    def _wait_for_listener(self) -> None:
        """Block until no listener of this session is running (for ``Connection.stop``)."""
        with self._condition:
            while self._running is not None:
                self._condition.wait()

    # -- the listener thread -------------------------------------------------------------------

    def _ensure_listener_thread(self) -> None:
        with self._condition:
            if self._listener_thread is not None or self._closing:
                return
            self._listener_thread = threading.Thread(
                target=self._listen, name=f"jms-session-{id(self):x}", daemon=True
            )
        self._listener_thread.start()

    def _listen(self) -> None:
        while True:
            with self._condition:
                picked = self._pick_for_listener()
                while picked is None and not self._closed and not self._lazy_acks_pending():
                    self._condition.wait()
                    picked = self._pick_for_listener()
                if picked is None and self._closed:
                    return
                if picked is not None:
                    self._running = picked[0]
            try:
                if picked is None:
                    self._flush_lazy_acks()
                else:
                    self._deliver_to_listener(*picked)
            except JMSException:
                logger.exception("session %r could not settle a listener's message", self)
            finally:
                with self._condition:
                    self._running = None
                    self._condition.notify_all()

    def _pick_for_listener(self) -> tuple[MessageConsumer, Delivery, MessageListener] | None:
        if self._closing or not self._connection._started:
            return None
        consumers = self._consumers
        count = len(consumers)
        for offset in range(count):
            index = (self._next_listener + offset) % count
            consumer = consumers[index]
            listener = consumer._listener
            if listener is not None and consumer._buffer and not consumer._closed:
                self._next_listener = (index + 1) % count
                return consumer, consumer._buffer.popleft(), listener
        return None

    def _deliver_to_listener(
        self, consumer: MessageConsumer, delivery: Delivery, listener: MessageListener
    ) -> None:
        message = self._accept(consumer, delivery)
        if message is None:
            return
        try:
            listener(message)
        except Exception:
            # JMS: a listener that throws in an automatic mode gets the message again.
            logger.exception("message listener %r raised on %r", listener, message)
            self._redeliver_now(consumer, delivery.tag)
            return
        self._settle(delivery.tag)
