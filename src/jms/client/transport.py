"""``Transport``: everything one client connection asks of a broker, as one small interface.

The client API (connections, sessions, producers, consumers, browsers) is written once over this
interface; ``memory://`` uses the in-process implementation, and a network transport (STOMP)
implements the same methods with frames. What crosses it is deliberately wire-friendly:

- outbound, stamped ``Message`` objects the transport must not keep (the caller may change them
  after ``send`` returns; an in-process transport copies, a network one encodes with
  ``jms.message.codec``), and plain values — ints for transaction, consumer and delivery ids,
  ``ConsumerSpec`` for a subscription;
- inbound, ``Delivery`` values (consumer id, delivery tag, sequence number, a message the client
  now owns) pushed to the ``DeliverySink`` given with the consumer, from whatever thread the
  transport runs (the broker's caller, or a socket reader), and ``BrowsePage`` values (a range
  read's ``EncodedBrowsePage`` carries codec bytes, which the reader decodes or passes on);
- errors as ``jms.errors`` exceptions.

Acknowledgement is by delivery tag and individual; CLIENT_ACKNOWLEDGE's "everything consumed so
far" is the session's bookkeeping. Range readers (``SequenceReader``) read a queue or a durable
subscription by sequence number (``browse_range`` or ``browse_range_encoded``, ``last_sequence``)
and consume everything up to a number at once (``acknowledge_through``, a cursor commit);
``stage_encoded`` stages codec encodings and ``publish_staged`` publishes staged messages
atomically (``jms.broker.staging``). A transport never decides acknowledgement modes, never
stamps headers, and never calls application code (``send_async`` reports to the session, which
runs the application's CompletionListener on a thread of its own).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from jms.broker import (
    BatchMarker,
    BrowsePage,
    ConsumerSpec,
    DeliverySink,
    EncodedBrowsePage,
    StagedRange,
)
from jms.errors import JMSException
from jms.message import Destination, Message, Queue, TemporaryQueue, TemporaryTopic, Topic

__all__ = ["RangeSource", "SendDone", "TopicSubscription", "Transport"]

#: Where ``Transport.send_async`` reports a send's outcome: None, or the exception it failed with.
SendDone: TypeAlias = Callable[[Exception | None], None]


@dataclass(frozen=True, slots=True)
class TopicSubscription:
    """A durable subscription of ``topic``, by its name and the client ID it was created with
    (None for a shared one created without a client ID), as a range reader names it."""

    topic: Topic
    name: str
    client_id: str | None = None

    def __str__(self) -> str:
        client = f"client ID {self.client_id!r}" if self.client_id is not None else "no client ID"
        return f"durable subscription {self.name!r} ({client}) of {self.topic}"


#: What a range reader reads: a queue, or a durable subscription of a topic.
RangeSource = Queue | TopicSubscription


class Transport(ABC):
    """One open connection to a broker. Thread-safe: sessions on several threads share it."""

    @abstractmethod
    def set_client_id(self, client_id: str) -> None:
        """Claim a client ID, unique on the broker (``InvalidClientIDException`` if taken)."""

    @abstractmethod
    def create_temporary_queue(self) -> TemporaryQueue:
        """A new temporary queue owned by this connection."""

    @abstractmethod
    def create_temporary_topic(self) -> TemporaryTopic:
        """A new temporary topic owned by this connection."""

    @abstractmethod
    def delete_temporary_destination(self, destination: Destination) -> None:
        """Delete a temporary destination this connection created (it must have no consumers)."""

    @abstractmethod
    def send(self, message: Message, transaction_id: int | None) -> None:
        """Send a stamped message, in a transaction when ``transaction_id`` is given."""

    def send_async(self, message: Message, transaction_id: int | None, on_done: SendDone) -> None:
        """Send like ``send``, but report the outcome to ``on_done`` exactly once — None when the
        broker has the message (durably, for a PERSISTENT one), else the exception it
        answered — instead of raising it, possibly on another thread and possibly before this
        returns. This default sends synchronously; a network transport keeps many sends in
        flight."""
        try:
            self.send(message, transaction_id)
        except JMSException as error:
            on_done(error)
            return
        on_done(None)

    @abstractmethod
    def begin(self) -> int:
        """Open a broker-side transaction and return its id."""

    @abstractmethod
    def commit(self, transaction_id: int) -> None:
        """Commit (``TransactionRolledBackException`` if the broker rolled back instead)."""

    @abstractmethod
    def rollback(self, transaction_id: int) -> None:
        """Discard the transaction's sends and redeliver what it acknowledged."""

    @abstractmethod
    def add_consumer(self, spec: ConsumerSpec, sink: DeliverySink) -> int:
        """Subscribe; deliveries go to ``sink`` (possibly before this returns). Returns its id."""

    @abstractmethod
    def remove_consumer(self, consumer_id: int) -> None:
        """Stop deliveries to a consumer; once this returns, ``sink`` gets no more."""

    @abstractmethod
    def credit(self, consumer_id: int, count: int) -> None:
        """The application took ``count`` deliveries of this consumer: it may be sent more."""

    @abstractmethod
    def acknowledge(self, tags: Iterable[int], transaction_id: int | None = None) -> None:
        """Consume these deliveries (at the transaction's commit when one is given)."""

    @abstractmethod
    def requeue(self, delivered: Iterable[int] = (), undelivered: Iterable[int] = ()) -> None:
        """Give deliveries back: ``delivered`` ones failed (redelivery), ``undelivered`` ones
        never reached the application (returned unchanged, credit restored)."""

    @abstractmethod
    def unsubscribe(self, name: str) -> None:
        """Delete this connection's client ID's durable subscription ``name``."""

    @abstractmethod
    def browse(self, queue: Queue, selector: str | None, start_seq: int, limit: int) -> BrowsePage:
        """A page of the messages ``queue`` holds, from sequence number ``start_seq`` on."""

    @abstractmethod
    def browse_range(
        self,
        source: RangeSource,
        selector: str | None,
        start_seq: int,
        end_seq: int | None,
        limit: int,
    ) -> BrowsePage:
        """A page of the messages ``source`` holds with ``start_seq <= seq <= end_seq`` (no upper
        bound when ``end_seq`` is None), in sequence order, nothing consumed."""

    @abstractmethod
    def browse_range_encoded(
        self,
        source: RangeSource,
        selector: str | None,
        start_seq: int,
        end_seq: int | None,
        limit: int,
    ) -> EncodedBrowsePage:
        """``browse_range``'s page, each message in its ``jms.message.codec`` encoding (exactly
        the message ``browse_range`` gives, JMSRedelivered included)."""

    @abstractmethod
    def acknowledge_through(
        self, source: RangeSource, seq: int, selector: str | None = None, start_seq: int = 1
    ) -> int:
        """Consume every message of ``source`` numbered ``start_seq`` to ``seq`` that is not in
        flight to a consumer and matches ``selector`` when given (a range reader's cursor
        commit); return how many were consumed."""

    @abstractmethod
    def first_not_due(
        self, source: RangeSource, selector: str | None, start_seq: int, end_seq: int | None
    ) -> int | None:
        """The lowest number from ``start_seq`` to ``end_seq`` of a message ``source`` holds
        (matching ``selector``) whose delivery time is still ahead, or None."""

    @abstractmethod
    def last_sequence(self, destination: Queue | Topic) -> int:
        """The number of the last message sent to ``destination`` (0 if none yet)."""

    @abstractmethod
    def stage_encoded(self, queue: Queue, encoded: Sequence[bytes]) -> list[StagedRange]:
        """Stage one message per codec encoding in ``encoded`` (at least one) in ``queue``
        (``Broker.stage_encoded``), durably when this returns; return the ranges they fill, in
        order (one per request made)."""

    @abstractmethod
    def publish_staged(self, staged: Sequence[StagedRange], marker: BatchMarker | None) -> int:
        """Publish the staged messages ``staged`` names in one broker transaction, at most once
        per ``marker`` batch id, and consume the staging queues (``Broker.publish_staged``);
        return how many were published."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection at the broker. Idempotent."""
