"""``Broker``: the JMS provider's core — destinations, subscriptions, dispatch, acknowledgements,
transactions, priority, expiry, delivery delay, redelivery with dead letters, groups, flow control.

Concurrency: one lock, no threads of its own but a timer. Every public method takes the broker's
single lock, does a short piece of bookkeeping (dict and heap operations, selector evaluation, one
message copy per delivery unless the consumer only reads), hands new deliveries to the consumers'
sinks, submits one store batch, and releases the lock; waiting for the store's durability happens
after the lock is released. Python runs one thread at a time anyway, so finer locks would buy
contention bugs, not speed; one lock makes every invariant (an entry is ready, scheduled, in flight
to exactly one consumer, or gone; credit sums match) hold between calls. The same core therefore
serves threads (the in-process transport) and an asyncio server (a STOMP front end calls these
methods from its loop or an executor; its sinks schedule frame writes). Sinks run under the lock, so
they must return at once and must never call back into the broker. Time-driven work (delivery delay,
redelivery delay, expiry) runs on one ``DeadlineTimer`` thread per broker; reading paged-out
messages back from the store runs on one ``Pager`` thread.

Durability. A PERSISTENT message on a queue or durable subscription is appended to the store in
the batch its ``send`` (or commit) waits for. Before such a message is handed to a consumer the
delivery is recorded (``SetDeliveryCount``, the deliveries started so far) in the batch of the
call that dispatched it, and the ``Delivery`` carries that batch's completion as ``recorded``: the
client waits for it before the application sees the message, so a message seen and then lost in a
crash comes back with ``JMSRedelivered`` and the right ``JMSXDeliveryCount``. Sequence numbers are
reserved in the store ahead of use (``destination.py``), and a message whose number is not yet
durably reserved carries that reservation as ``recorded``. Nothing is waited for under the lock.

Memory. Each queue and durable subscription keeps at most its policy's ``memory_window`` stored
messages waiting in memory; the rest are paged out (``MessageQueue.page_out``) and paged back in by
sequence when the window is half empty. Browsing and range reads of paged-out messages read the
store, outside the lock. Every entry in memory counts against the broker's memory budget
(``max_memory``, ``jms.broker.memory``). Stored messages may fill ``_STORED_SHARE`` of it: past
that, stored messages arriving stay in the store only (paged out), and a stored queue is paged
in only once it has nothing waiting in memory, ``_BUDGET_PAGE`` entries at a time — so they never
hold producers back, and messages that live in memory only always have the rest. When a send or commit takes the
count past the budget with messages that live in memory only (NON_PERSISTENT ones, or any for a
non-durable subscription or a temporary queue): the non-durable subscription holding the most,
if it holds ``_SLOW_CONSUMER_SHARE`` of the budget or more, is a slow consumer — it ends and the
connections of its consumers are closed (their ``on_close`` says why); if the count is still
past the budget, producers are held back: ``producers_blocked`` is true until it falls to
``_LOW_WATER`` of the budget, and then the callbacks given to ``when_memory_available`` are
called. The broker never refuses or drops a message for the budget; holding producers back
is the front end's part (a STOMP server stops reading their sockets).

The broker never opens sockets, never blocks on a consumer, and never holds messages the store
should own beyond the in-memory window (the store decides durability).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import heapq
import itertools
import logging
import threading
import uuid
from collections.abc import Callable, Collection, Iterable, Sequence
from operator import itemgetter
from typing import Any, Final, NamedTuple, TypeVar
from urllib.parse import quote

from jms.broker.audit import DEFAULT_AUDIT_WINDOW, SendAudit
from jms.broker.consumer import Consumer, ConsumerSpec, DeliverySink
from jms.broker.delivery import (
    DEFAULT_BROWSE_PAGE,
    BrowsePage,
    Delivery,
    EncodedBrowsePage,
    delivered_copy,
)
from jms.broker.destination import QueueDestination, TopicDestination
from jms.broker.memory import (
    DEFAULT_MAX_MEMORY,
    MemoryBudget,
    MemoryStats,
    check_max_memory,
    message_size,
)
from jms.broker.message_queue import Entry, EntryState, MessageQueue
from jms.broker.pager import Pager, PageRequest
from jms.broker.policy import DEAD_LETTER_PREFIX, DestinationPolicy, PolicyMap
from jms.broker.staging import (
    MARKER_BATCH,
    BatchMarker,
    StagedRange,
    StagedRun,
    add_to_runs,
    check_stage_request,
)
from jms.broker.stats import QueueStats
from jms.broker.subscription import Subscription, SubscriptionName, durable_store_key
from jms.broker.timer import DeadlineTimer, wall_clock_ms
from jms.broker.transaction import Transaction
from jms.errors import (
    IllegalStateException,
    InvalidClientIDException,
    InvalidDestinationException,
    JMSException,
    JMSSecurityException,
    MessageFormatException,
    ResourceAllocationException,
    TransactionRolledBackException,
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
from jms.message.codec import (
    check_and_restamp,
    decode,
    encode_redelivered,
    header_times,
    message_id_of,
    published_times,
    with_redelivered,
)
from jms.selector import Selector
from jms.store import (
    DONE,
    AddDestination,
    AppendEncodedRun,
    AppendMessage,
    Completion,
    DeleteSubscription,
    MemoryStore,
    MessageStore,
    MoveEntries,
    RemoveEntry,
    RemoveRange,
    ReserveSequences,
    SaveSubscription,
    SetDeliveryCount,
    StoredEntry,
    StoreOperation,
)
from jms.types import Long

__all__ = [
    "DEAD_LETTER_REASON",
    "DEFAULT_BROWSE_PAGE",
    "ORIGINAL_DESTINATION",
    "Broker",
    "wall_clock_ms",
]

logger = logging.getLogger(__name__)


# Entries read from the store per call while recovering, and per page-in.
_RECOVERY_PAGE = 1000
_PAGE_IN_LIMIT = 1000
# Sequence numbers read per call while recovering a queue's paged-out entries.
_SEQUENCE_PAGE = 65_536
# Per queue or durable subscription, how many of its newest stored messages a broker opening a
# store remembers in its send audit: more than the sends a failover can leave unanswered (a
# client holds at most 512 asynchronous sends, or one synchronous, per producer).
_AUDIT_RECOVERED_PER_QUEUE = 4096

# Producers held back at the memory budget go on once the memory held falls to this share of it.
_LOW_WATER = 0.875
# The share of the memory budget that stored messages (which can wait in the store) may fill.
_STORED_SHARE = 0.5
# Entries a stored queue pages in at a time once stored messages filled their share.
_BUDGET_PAGE = 100
# A non-durable subscription holding this share of the budget or more is a slow consumer once the
# budget is reached.
_SLOW_CONSUMER_SHARE = 0.125

# Reads of a publish_staged before the marker queue it names stops changing under it.
_PUBLISH_ATTEMPTS = 3

# A Delivery made from its fields without the named tuple's __new__, a Python function: one is
# made for every message delivered.
_new_delivery = functools.partial(tuple.__new__, Delivery)
# Bound once: a class attribute costs two lookups on every use, and this runs per message.
_PERSISTENT: Final = DeliveryMode.PERSISTENT
# No message's destination: what send_many's lookup of the last one starts from.
_NOT_ROUTED: Final = object()

#: Name of the provider property holding where a dead-lettered or expired message was sent.
ORIGINAL_DESTINATION = "JMS_jms_OriginalDestination"
#: Name of the provider property saying why a message was moved to a dead-letter/expiry queue.
DEAD_LETTER_REASON = "JMS_jms_DeadLetterReason"


def _await(barrier: Completion) -> None:
    """Wait until ``barrier`` (an empty batch) has completed; a failure is not ours to report."""
    with contextlib.suppress(JMSException):
        barrier.wait()


_Shown = TypeVar("_Shown", Message, bytes)


class _BrowseWindow(NamedTuple):
    """A browse's part read under the lock: ``in_memory`` as ``(seq, message, redelivered,
    stored)``; ``key`` names the store queue (None: not stored), from ``first_paged`` on paged
    out (None: nothing is)."""

    now: int
    in_memory: list[tuple[int, Message, bool, bool]]
    key: str | None
    first_paged: int | None


def _merge_paged(
    found: list[tuple[int, _Shown]],
    start_seq: int,
    limit: int,
    read_page: Callable[[int], tuple[list[tuple[int, _Shown]], int, int]],
) -> list[tuple[int, _Shown]]:
    """Merge ``found`` (from memory) with the paged-out entries from ``start_seq`` on, keeping the
    first ``limit`` in sequence order. ``read_page(start)`` reads one store page from ``start``
    and returns (what of it a browse shows, how many entries it read, the last one's seq)."""
    if len(found) == limit and found[-1][0] < start_seq:
        return found
    seen = {seq for seq, _ in found}
    while True:
        shown, count, last_seq = read_page(start_seq)
        if seen:
            found.extend(item for item in shown if item[0] not in seen)
            found.sort(key=itemgetter(0))
        else:  # nothing from memory: a store page is in sequence order already
            found.extend(shown)
        del found[limit:]
        if count < limit or (len(found) == limit and found[-1][0] <= last_seq):
            return found
        start_seq = last_seq + 1


class _Connection:
    __slots__ = ("client_id", "consumers", "id", "on_close", "temporaries", "transactions", "user")

    def __init__(
        self,
        connection_id: int,
        user: str | None,
        on_close: Callable[[JMSException], None] | None,
    ) -> None:
        self.id = connection_id
        self.user = user
        self.on_close = on_close
        self.client_id: str | None = None
        self.consumers: set[int] = set()
        self.transactions: set[int] = set()
        self.temporaries: set[str] = set()


class _Work:
    """What one broker call decided: store operations, deliveries, queues to re-select or watch,
    queues whose memory window may have room for a page of their paged-out entries."""

    __slots__ = ("deliveries", "now", "operations", "paging", "reselect", "watch")

    def __init__(self, now: int) -> None:
        self.now = now
        self.operations: list[StoreOperation] = []
        self.deliveries: list[tuple[MessageQueue, Entry]] = []
        self.reselect: set[MessageQueue] = set()
        self.watch: set[MessageQueue] = set()
        self.paging: set[MessageQueue] = set()


def _ranges_around(low: int, high: int, holes: list[int]) -> list[tuple[int, int]]:
    """The ``(first, last)`` runs of ``low``..``high`` that leave out ``holes`` (ascending,
    between ``low`` and ``high``)."""
    runs = []
    for hole in holes:
        if low < hole:
            runs.append((low, hole - 1))
        low = hole + 1
    if low <= high:
        runs.append((low, high))
    return runs


class _StagingRead(NamedTuple):
    """What ``publish_staged`` read from the store before taking the lock: per range, its runs
    (None: unknown, the range is not held) and the messages it sends again (with their stored
    bytes) by sequence number; the paged-out markers' batch ids by sequence number; the marker
    queue's paging state then (``(first paged-out seq, count)``)."""

    runs: list[list[StagedRun] | None]
    messages: list[dict[int, tuple[Message, bytes]]]
    markers: dict[int, int]
    marker_paging: tuple[int | None, int] | None


class _Move(NamedTuple):
    """A publish step: the staged ``run`` of the staging queue ``staging_key`` moves to
    ``target``."""

    staging_key: str
    run: StagedRun
    target: QueueDestination


class _Resend(NamedTuple):
    """A publish step: ``message`` is sent to ``queues`` of ``target`` (``stored``: its stored
    bytes, kept by the store if it keeps the message)."""

    message: Message
    target: QueueDestination | TopicDestination
    queues: list[MessageQueue]
    stored: bytes | None


class Broker:
    """A thread-safe in-process JMS broker over a ``MessageStore`` (see the module docstring).

    ``authenticator(user, password) -> bool`` decides who may connect (everyone when None);
    ``clock`` gives the time in epoch milliseconds; ``audit_window`` is how many message IDs of
    non-transacted sends it remembers to drop a send it gets again (``jms.broker.audit``).
    ``max_memory`` is the memory budget in bytes (None: no budget; see the module docstring and
    docs/storage.md).
    """

    def __init__(
        self,
        store: MessageStore | None = None,
        *,
        name: str = "broker",
        default_policy: DestinationPolicy | None = None,
        authenticator: Callable[[str | None, str | None], bool] | None = None,
        clock: Callable[[], int] = wall_clock_ms,
        audit_window: int = DEFAULT_AUDIT_WINDOW,
        max_memory: int | None = DEFAULT_MAX_MEMORY,
    ) -> None:
        self.name = name
        # One attribute for the budget's state: a Broker with over 30 attributes loses CPython's
        # fast attribute access (shared-key instance dicts), which costs every call.
        self._memory = MemoryBudget(check_max_memory(max_memory, "max_memory"), _STORED_SHARE)
        self._lock = threading.Lock()
        self._store = store if store is not None else MemoryStore()
        self._policies = PolicyMap(default_policy)
        self._authenticator = authenticator
        self._clock = clock
        self._instance = uuid.uuid4().hex[:12]
        self._ids = itertools.count(1)
        self._tags = itertools.count(1)
        self._temporary_ids = itertools.count(1)
        self._wakeup_order = itertools.count()
        self._connections: dict[int, _Connection] = {}
        self._client_ids: dict[str, int] = {}
        self._queues: dict[str, QueueDestination] = {}
        self._topics: dict[str, TopicDestination] = {}
        self._durable: dict[tuple[str | None, str], Subscription] = {}
        # Per staging queue, the runs of the messages staged in it, in order (jms.broker.staging).
        self._staged_runs: dict[str, list[StagedRun]] = {}
        self._shared: dict[tuple[str | None, str], Subscription] = {}
        self._consumers: dict[int, Consumer] = {}
        self._in_flight: dict[int, tuple[Entry, MessageQueue]] = {}
        self._transactions: dict[int, Transaction] = {}
        self._wakeups: list[tuple[int, int, MessageQueue]] = []
        self._timer = DeadlineTimer(f"jms-broker-timer[{name}]", self._on_deadline, clock)
        self._pager = Pager(f"jms-broker-pager[{name}]", self._store, self._paged_in)
        self._closed = False
        self._audit = SendAudit(audit_window)
        self._recover()

    def __repr__(self) -> str:
        return f"<Broker {self.name!r} connections={len(self._connections)}>"

    # -- configuration -------------------------------------------------------------------------

    def set_policy(self, pattern: str, policy: DestinationPolicy) -> None:
        """Apply ``policy`` to destinations matching ``pattern`` (see ``PolicyMap.set``), now and
        for destinations created later."""
        with self._lock:
            self._policies.set(pattern, policy)
            for state in [*self._queues.values(), *self._topics.values()]:
                state.policy = self._policies.for_destination(state.text)

    # -- connections ---------------------------------------------------------------------------

    def connect(
        self,
        user: str | None = None,
        password: str | None = None,
        *,
        client_id: str | None = None,
        on_close: Callable[[JMSException], None] | None = None,
    ) -> int:
        """Open a connection and return its id. ``on_close`` is called (without the lock) if the
        broker closes the connection itself, e.g. when the broker shuts down."""
        if self._authenticator is not None and not self._authenticator(user, password):
            raise JMSSecurityException(
                f"broker {self.name!r} refused user {user!r}: wrong user name or password"
            )
        with self._lock:
            self._check_open()
            connection = _Connection(next(self._ids), user, on_close)
            if client_id is not None:
                self._claim_client_id(connection, client_id)
            self._connections[connection.id] = connection
            return connection.id

    def set_client_id(self, connection_id: int, client_id: str) -> None:
        with self._lock:
            connection = self._connection(connection_id)
            if connection.client_id is not None:
                raise IllegalStateException(
                    f"this connection already has client ID {connection.client_id!r}"
                )
            self._claim_client_id(connection, client_id)

    def disconnect(self, connection_id: int) -> None:
        """Close a connection: its consumers go, its transactions roll back, its unacknowledged
        messages are redelivered and its temporary destinations are deleted. Idempotent."""
        with self._lock:
            connection = self._connections.pop(connection_id, None)
            if connection is None:
                return
            work = _Work(self._clock())
            self._drop_connection(connection, work)
            completion = self._finish(work)
        completion.wait()

    # -- temporary destinations ----------------------------------------------------------------

    def create_temporary_queue(self, connection_id: int) -> TemporaryQueue:
        with self._lock:
            connection = self._connection(connection_id)
            queue = TemporaryQueue(self._temporary_name())
            self._queues[str(queue)] = QueueDestination(
                queue, self._policies.for_destination(str(queue)), connection.id, self._memory
            )
            connection.temporaries.add(str(queue))
            return queue

    def create_temporary_topic(self, connection_id: int) -> TemporaryTopic:
        with self._lock:
            connection = self._connection(connection_id)
            topic = TemporaryTopic(self._temporary_name())
            self._topics[str(topic)] = TopicDestination(
                topic, self._policies.for_destination(str(topic)), connection.id
            )
            connection.temporaries.add(str(topic))
            return topic

    def delete_temporary_destination(self, connection_id: int, destination: Destination) -> None:
        with self._lock:
            connection = self._connection(connection_id)
            text = str(destination)
            state = self._queues.get(text) or self._topics.get(text)
            if state is None or not state.temporary:
                raise InvalidDestinationException(
                    f"{text} is not a temporary destination of broker {self.name!r} "
                    "(already deleted, or its connection closed)"
                )
            if state.owner_connection_id != connection.id:
                raise InvalidDestinationException(
                    f"{text} can only be deleted by the connection that created it"
                )
            if isinstance(state, QueueDestination):
                users = len(state.queue.consumers)
            else:
                users = sum(len(s.queue.consumers) for s in state.subscriptions)
            if users:
                raise IllegalStateException(
                    f"cannot delete {text}: {users} consumer(s) still use it; close them first"
                )
            self._delete_temporary(connection, text)

    # -- producing -----------------------------------------------------------------------------

    def send(
        self,
        connection_id: int,
        message: Message,
        transaction_id: int | None = None,
        *,
        resend: bool = False,
    ) -> None:
        """Route a stamped message to its ``JMSDestination`` (or hold it in a transaction).
        A PERSISTENT message is durable when this returns; a NON_PERSISTENT one never waits for
        the store (what else the call stored — records of deliveries it dispatched — is waited
        for by whoever receives those). A ``resend`` (a failover client sending again what a lost
        connection did not answer) whose JMSMessageID the send audit holds is dropped instead;
        one it does not hold is taken with one delivery counted (JMSRedelivered, as for a message
        that may have been delivered before: the broker that died may have delivered it).

        The broker keeps ``message`` itself: the caller must not change it afterwards.
        """
        with self._lock:
            connection = self._connection(connection_id)
            target = self._target_for_send(message)
            if transaction_id is not None:
                self._transaction(connection, transaction_id).sends.append(message)
                return
            closed: Sequence[tuple[Callable[[JMSException], None], JMSException]] = ()
            message_id = message._message_id
            if resend and message_id is not None and message_id in self._audit:
                logger.info("dropped a duplicate of %s sent to %s", message_id, target.text)
                # Its first copy may still be on its way to the store: answer once it is there.
                completion = self._store.submit(())
            else:
                work = _Work(self._clock())
                # A resend the audit does not know may have been delivered, even acknowledged,
                # by a broker that died before answering it: its one delivery is counted.
                closed = self._route(connection, target, message, work, int(resend))
                completion = self._finish(work, stored_with={id(message)})
        if closed:
            self._tell_closed(closed)
        if message._delivery_mode == DeliveryMode.PERSISTENT:
            completion.wait()

    def send_many(
        self, connection_id: int, messages: Sequence[Message], *, audit: bool = True
    ) -> tuple[int, JMSException | None]:
        """``send`` each of ``messages`` in order, outside any transaction, with one lock
        acquisition and one store batch for all (a server's read of many SENDs). Returns how
        many were sent and, when not all were, the error that refused the next one: nothing of
        it or of those after it was sent. The PERSISTENT ones sent are durable when this
        returns. The broker keeps the messages: the caller must not change them afterwards.
        ``audit=False`` leaves their IDs out of the send audit: for a sender that never resends
        (a client without failover, whose messages' IDs the server gave them)."""
        sent = 0
        persistent = False
        refusal: JMSException | None = None
        closed: list[tuple[Callable[[JMSException], None], JMSException]] = []
        with self._lock:
            work = _Work(self._clock())
            # The messages of one read nearly all go to one destination: its state is looked up
            # once. A temporary one is looked up each time (routing may close the connection
            # that owns it, deleting it).
            routed_to: object = _NOT_ROUTED
            target: QueueDestination | TopicDestination | None = None
            try:
                for message in messages:
                    connection = self._connection(connection_id)
                    if message._destination is not routed_to:
                        target = self._target_for_send(message)
                        routed_to = _NOT_ROUTED if target.temporary else message._destination
                    assert target is not None
                    closed += self._route(connection, target, message, work, audit=audit)
                    persistent = persistent or message._delivery_mode == _PERSISTENT
                    sent += 1
            except JMSException as error:
                refusal = error
            # Only a PERSISTENT message's entries are stored: without one, nothing to name.
            stored_with = {id(m) for m in messages[:sent]} if persistent else ()
            completion = self._finish(work, stored_with=stored_with)
        if closed:
            self._tell_closed(closed)
        if persistent:
            completion.wait()
        return sent, refusal

    def _route(
        self,
        connection: _Connection,
        target: QueueDestination | TopicDestination,
        message: Message,
        work: _Work,
        delivery_count: int = 0,
        *,
        audit: bool = True,
    ) -> Sequence[tuple[Callable[[JMSException], None], JMSException]]:
        """Append a sent ``message`` to the queues of ``target`` it goes to, within ``work``
        (refused before anything changes when a bounded queue has no room), and its ID to the
        send ``audit``; returns the connections the memory budget closed, for ``_tell_closed``
        once the lock is released."""
        queues = self._targets(target, message, connection)
        if target.policy.max_backlog is not None:
            self._check_room([(target, queues)])
        self._append(target, message, queues, work, delivery_count=delivery_count)
        message_id = message._message_id
        if audit and message_id is not None:
            self._audit.record(message_id)
        if self._memory.used > self._memory.ceiling:
            return self._relieve_memory(work)
        return ()

    # -- transactions --------------------------------------------------------------------------

    def begin(self, connection_id: int) -> int:
        """Open a transaction on this connection and return its id."""
        with self._lock:
            connection = self._connection(connection_id)
            transaction = Transaction(next(self._ids), connection.id)
            self._transactions[transaction.id] = transaction
            connection.transactions.add(transaction.id)
            return transaction.id

    def commit(self, connection_id: int, transaction_id: int) -> None:
        """Apply a transaction's sends and acknowledgements as one unit, or roll it back and raise
        ``TransactionRolledBackException`` saying why."""
        with self._lock:
            connection = self._connection(connection_id)
            transaction = self._take_transaction(connection, transaction_id)
            work = _Work(self._clock())
            acknowledged = list(dict.fromkeys(transaction.acknowledged))
            failure: TransactionRolledBackException | None = None
            try:
                plan = []
                for message in transaction.sends:
                    target = self._target_for_send(message)
                    plan.append((target, message, self._targets(target, message, connection)))
                self._check_room([(target, queues) for target, _, queues in plan])
                lost = [tag for tag in acknowledged if self._held_by(connection, tag) is None]
                if lost:
                    raise IllegalStateException(
                        f"deliveries {lost} are no longer held by this connection"
                    )
            except JMSException as error:
                self._fail_deliveries(connection, acknowledged, work)
                failure = TransactionRolledBackException(
                    f"transaction {transaction.id} was rolled back instead of committed: "
                    f"{error.reason}",
                    linked_exception=error,
                )
            else:
                for target, message, queues in plan:
                    self._append(target, message, queues, work)
                self._acknowledge(connection, acknowledged, work)
            closed = self._relieve_memory(work) if self._memory.used > self._memory.ceiling else ()
            completion = self._finish(work)
        if closed:
            self._tell_closed(closed)
        persistent = any(
            m.get_jms_delivery_mode() == DeliveryMode.PERSISTENT for m in transaction.sends
        )
        if persistent or acknowledged:
            completion.wait()
        if failure is not None:
            raise failure

    def rollback(self, connection_id: int, transaction_id: int) -> None:
        """Discard a transaction's sends; redeliver the messages it acknowledged."""
        with self._lock:
            connection = self._connection(connection_id)
            transaction = self._take_transaction(connection, transaction_id)
            work = _Work(self._clock())
            self._fail_deliveries(connection, dict.fromkeys(transaction.acknowledged), work)
            completion = self._finish(work)
        completion.wait()

    # -- consuming -----------------------------------------------------------------------------

    def add_consumer(self, connection_id: int, spec: ConsumerSpec, sink: DeliverySink) -> int:
        """Attach a consumer and return its id. Deliveries may reach ``sink`` before this returns."""
        selector = Selector(spec.selector_text) if spec.selector_text else None
        with self._lock:
            connection = self._connection(connection_id)
            work = _Work(self._clock())
            consumer_id = next(self._ids)
            destination = spec.destination
            subscription: Subscription | None = None
            if isinstance(destination, Queue):
                queue = self._queue_for_consumer(connection, destination).queue
            else:
                assert isinstance(destination, Topic)
                topic = self._topic_for_consumer(connection, destination)
                subscription = self._subscription_for(connection, topic, spec, consumer_id, work)
                queue = subscription.queue
                selector = None  # the subscription filters on fan-out
            consumer = Consumer(
                consumer_id, connection.id, spec, selector, sink, queue, subscription
            )
            self._consumers[consumer_id] = consumer
            connection.consumers.add(consumer_id)
            if subscription is not None:
                subscription.consumers += 1
            queue.attach(consumer)
            work.reselect.add(queue)
            completion = self._finish(work)
        completion.wait()
        return consumer_id

    def remove_consumer(self, connection_id: int, consumer_id: int) -> None:
        """Detach a consumer. Its in-flight messages stay acknowledgeable by its connection."""
        with self._lock:
            connection = self._connection(connection_id)
            consumer = self._consumers.get(consumer_id)
            if consumer is None or consumer.connection_id != connection.id:
                return
            work = _Work(self._clock())
            self._remove_consumer(connection, consumer, work)
            completion = self._finish(work)
        completion.wait()

    def credit(self, connection_id: int, consumer_id: int, count: int) -> None:
        """Allow ``count`` more deliveries to a consumer (its application took that many).

        Returns without waiting for the store: the deliveries this dispatches carry their own
        record (``Delivery.recorded``), which the client waits for when it hands each over."""
        with self._lock:
            self._connection(connection_id)
            consumer = self._consumers.get(consumer_id)
            if consumer is None or consumer.connection_id != connection_id:
                return
            work = _Work(self._clock())
            consumer.queue.add_credit(consumer, count)
            work.reselect.add(consumer.queue)
            self._finish(work)

    def acknowledge(
        self, connection_id: int, tags: Iterable[int], transaction_id: int | None = None
    ) -> None:
        """Consume delivered messages for good (in a transaction: at its commit).

        Tags this connection does not hold (already acknowledged or requeued) are ignored, so a
        repeated acknowledgement is harmless.
        """
        with self._lock:
            connection = self._connection(connection_id)
            if transaction_id is not None:
                self._transaction(connection, transaction_id).acknowledged.extend(tags)
                return
            work = _Work(self._clock())
            self._acknowledge(connection, tags, work)
            completion = self._finish(work)
        completion.wait()

    def requeue(
        self,
        connection_id: int,
        delivered: Iterable[int] = (),
        undelivered: Iterable[int] = (),
    ) -> None:
        """Take messages back from a consumer.

        ``delivered`` ones reached the application and were not acknowledged (recover, rollback,
        session close, a failing listener): that is a failed delivery — they come back with
        ``JMSRedelivered``, the next ``JMSXDeliveryCount``, after the policy's redelivery delay,
        or go to the dead-letter queue past the limit. ``undelivered`` ones never left the
        client's prefetch buffer: they come back unchanged, and the consumer gets its credit back.
        """
        with self._lock:
            connection = self._connection(connection_id)
            work = _Work(self._clock())
            for tag in undelivered:
                self._return_undelivered(connection, tag, work)
            self._fail_deliveries(connection, delivered, work)
            completion = self._finish(work)
        completion.wait()

    def unsubscribe(self, connection_id: int, name: str) -> None:
        """Delete the durable subscription ``name`` of this connection's client ID."""
        with self._lock:
            connection = self._connection(connection_id)
            subscription = self._durable.get((connection.client_id, name))
            if subscription is None:
                client = (
                    f"client ID {connection.client_id!r}"
                    if connection.client_id is not None
                    else "no client ID"
                )
                raise InvalidDestinationException(
                    f"there is no durable subscription named {name!r} for {client} on broker "
                    f"{self.name!r}"
                )
            if subscription.consumers:
                raise IllegalStateException(
                    f"cannot unsubscribe {subscription.describe()}: it has an active consumer"
                )
            if subscription.queue.in_flight:
                raise IllegalStateException(
                    f"cannot unsubscribe {subscription.describe()}: "
                    f"{subscription.queue.in_flight} of its messages are delivered but not "
                    "acknowledged (or part of an uncommitted transaction)"
                )
            work = _Work(self._clock())
            self._delete_subscription(subscription, work)
            completion = self._finish(work)
        completion.wait()

    # -- reading without consuming -------------------------------------------------------------

    def browse(
        self,
        connection_id: int,
        source: Queue | SubscriptionName,
        selector: str | None = None,
        start_seq: int = 1,
        end_seq: int | None = None,
        limit: int = DEFAULT_BROWSE_PAGE,
    ) -> BrowsePage:
        """The messages a queue or durable subscription holds (in flight included, not yet due
        or expired excluded), matching ``selector``, with ``start_seq <= seq <= end_seq``, in
        sequence order, at most ``limit`` of them. Nothing is consumed."""
        compiled = Selector(selector) if selector else None
        window = self._browse_window(connection_id, source, start_seq, end_seq, limit, compiled)
        if window is None:
            return BrowsePage((), None)
        found = [
            (seq, self._browse_copy(message, redelivered))
            for seq, message, redelivered, _ in window.in_memory
        ]
        key, now = window.key, window.now
        if key is not None and window.first_paged is not None:

            def read_page(start: int) -> tuple[list[tuple[int, Message]], int, int]:
                page = self._store.read_entries(key, start, end_seq, limit)
                shown = []
                for stored in page:
                    message = stored.message
                    expiration = message._expiration
                    if (expiration and expiration <= now) or message._delivery_time > now:
                        continue
                    if compiled is not None and not compiled.matches(message):
                        continue
                    message.set_jms_redelivered(stored.delivery_count > 0)
                    shown.append((stored.seq, message))
                return shown, len(page), page[-1].seq if page else 0

            found = _merge_paged(found, window.first_paged, limit, read_page)
        next_seq = found[-1][0] + 1 if len(found) == limit else None
        return BrowsePage(tuple(found), next_seq)

    def browse_encoded(
        self,
        connection_id: int,
        source: Queue | SubscriptionName,
        selector: str | None = None,
        start_seq: int = 1,
        end_seq: int | None = None,
        limit: int = DEFAULT_BROWSE_PAGE,
    ) -> EncodedBrowsePage:
        """``browse``, each message as its ``jms.message.codec`` encoding. Messages the store
        holds go out as it holds them (only JMSRedelivered patched; expiry and delivery time are
        read from the fixed header): a paged-out one is decoded only when ``selector`` must be
        evaluated."""
        compiled = Selector(selector) if selector else None
        window = self._browse_window(connection_id, source, start_seq, end_seq, limit, compiled)
        if window is None:
            return EncodedBrowsePage([], [], None)
        found = self._encode_in_memory(window)
        key, now = window.key, window.now
        if key is not None and window.first_paged is not None:

            def read_page(start: int) -> tuple[list[tuple[int, bytes]], int, int]:
                page = self._store.read_encoded_entries(key, start, end_seq, limit)
                shown = []
                for seq, data, delivery_count in page:
                    expiration, delivery_time = header_times(data)
                    if (expiration and expiration <= now) or delivery_time > now:
                        continue
                    if compiled is not None and not compiled.matches(decode(data)):
                        continue
                    shown.append((seq, with_redelivered(data, delivery_count > 0)))
                return shown, len(page), page[-1].seq if page else 0

            found = _merge_paged(found, window.first_paged, limit, read_page)
        next_seq = found[-1][0] + 1 if len(found) == limit else None
        return EncodedBrowsePage([seq for seq, _ in found], [data for _, data in found], next_seq)

    def _browse_window(
        self,
        connection_id: int,
        source: Queue | SubscriptionName,
        start_seq: int,
        end_seq: int | None,
        limit: int,
        selector: Selector | None,
    ) -> _BrowseWindow | None:
        """What a browse shows from memory, and where its store part starts (None: no such
        queue yet). Returns once everything shown is durable (or durably numbered) and every
        paged-out entry readable: a batch submitted now completes after every batch before."""
        if type(limit) is not int or limit < 1:
            raise ValueError(f"limit must be an int of at least 1; got {limit!r}")
        with self._lock:
            connection = self._connection(connection_id)
            queue = self._browse_source(connection, source)
            if queue is None:
                return None
            now = self._clock()
            in_memory = [
                (entry.seq, entry.message, entry.delivery_count > 0, entry.stored)
                for entry in queue.browse(now, start_seq, end_seq, limit, selector)
            ]
            first_paged = queue.first_paged()
            key = queue.store_key
        _await(self._store.submit(()))
        if first_paged is not None:
            first_paged = max(start_seq, first_paged)
        return _BrowseWindow(now, in_memory, key, first_paged)

    def _encode_in_memory(self, window: _BrowseWindow) -> list[tuple[int, bytes]]:
        """The in-memory part of an encoded browse (without the lock). What the store holds is
        read as it holds it, which costs a fraction of encoding it again; the rest is encoded
        (the broker never changes a message it holds), as is a message acknowledged meanwhile."""
        stored = [seq for seq, _, _, is_stored in window.in_memory if is_stored]
        held: dict[int, bytes] = {}
        if window.key is not None and stored:
            span = stored[-1] - stored[0] + 1
            # A sparse run (a selector matching few) would read many entries for few shown.
            if span <= 2 * len(stored):
                page = self._store.read_encoded_entries(window.key, stored[0], stored[-1], span)
                held = {seq: data for seq, data, _ in page}
        return [
            (seq, with_redelivered(held[seq], redelivered))
            if seq in held
            else (seq, encode_redelivered(message, redelivered))
            for seq, message, redelivered, _ in window.in_memory
        ]

    def acknowledge_through(
        self,
        connection_id: int,
        source: Queue | SubscriptionName,
        seq: int,
        selector: str | None = None,
        start_seq: int = 1,
    ) -> int:
        """Consume every message of a queue or durable subscription with a sequence number from
        ``start_seq`` up to ``seq`` that is not in flight to a consumer (a range reader's cursor
        commit) and, when ``selector`` is given, matches it (the others stay for other consumers,
        as they would for a consumer with that selector); return how many were consumed. Nothing
        numbered below ``start_seq`` is touched: a reader that started there never read it."""
        compiled = Selector(selector) if selector else None
        paged_matches: set[int] = set()
        if compiled is not None:
            with self._lock:
                connection = self._connection(connection_id)
                queue = self._browse_source(connection, source)
                if queue is None:
                    return 0
                first_paged = queue.first_paged()
                key = queue.store_key
            if first_paged is not None and key is not None and first_paged <= seq:
                _await(self._store.submit(()))
                start = max(first_paged, start_seq)
                while True:
                    page = self._store.read_entries(key, start, seq, DEFAULT_BROWSE_PAGE)
                    paged_matches.update(
                        stored.seq for stored in page if compiled.matches(stored.message)
                    )
                    if len(page) < DEFAULT_BROWSE_PAGE:
                        break
                    start = page[-1].seq + 1
        with self._lock:
            connection = self._connection(connection_id)
            queue = self._browse_source(connection, source)
            if queue is None:
                return 0
            work = _Work(self._clock())
            if compiled is None:
                consumed = self._consume_between(queue, start_seq, seq, work)
            else:
                consumed = self._consume_matching(
                    queue, start_seq, seq, compiled, paged_matches, work
                )
            completion = self._finish(work)
        completion.wait()
        return consumed

    @staticmethod
    def _consume_matching(
        queue: MessageQueue,
        start_seq: int,
        end_seq: int,
        selector: Selector,
        paged_matches: set[int],
        work: _Work,
    ) -> int:
        """Consume the entries of ``queue`` numbered ``start_seq`` to ``end_seq``, not in flight,
        that ``selector`` matches: those in memory, and the paged-out ones of ``paged_matches``
        (read from the store before); return how many."""
        entries = [
            entry
            for entry in queue.entries_between(start_seq, end_seq)
            if selector.matches(entry.message)
        ]
        for entry in entries:
            queue.remove(entry)
            if entry.stored:
                assert queue.store_key is not None
                work.operations.append(RemoveEntry(queue.store_key, entry.seq))
        paged = 0
        for paged_seq in sorted(paged_matches):
            if queue.drop_paged(paged_seq):  # else paged in (and handled above) or gone
                assert queue.store_key is not None
                work.operations.append(RemoveEntry(queue.store_key, paged_seq))
                paged += 1
        queue.acknowledged += len(entries) + paged
        work.paging.add(queue)
        return len(entries) + paged

    def first_not_due(
        self,
        connection_id: int,
        source: Queue | SubscriptionName,
        selector: str | None = None,
        start_seq: int = 1,
        end_seq: int | None = None,
    ) -> int | None:
        """The lowest sequence number, from ``start_seq`` to ``end_seq``, of a message a queue or
        durable subscription holds (matching ``selector``, not expired) whose delivery time has
        not come yet -- the one a browse hides now but will show later -- or None when there is
        none. A range reader must not commit past it."""
        compiled = Selector(selector) if selector else None
        upper = end_seq if end_seq is not None else 2**63 - 1
        with self._lock:
            connection = self._connection(connection_id)
            queue = self._browse_source(connection, source)
            if queue is None:
                return None
            now = self._clock()
            best: int | None = None
            for entry in queue.entries.values():
                if not start_seq <= entry.seq <= upper or (best is not None and entry.seq > best):
                    continue
                if entry.delivery_time <= now or entry.expired(now):
                    continue
                if compiled is not None and not compiled.matches(entry.message):
                    continue
                best = entry.seq
            first_paged = queue.first_paged()
            key = queue.store_key
            all_due = queue.paged_all_due_at(now)
        if first_paged is None or key is None or all_due:
            return best
        _await(self._store.submit(()))
        start = max(start_seq, first_paged)
        stop = upper if best is None else min(upper, best - 1)
        while start <= stop:
            # Only a message not yet due is decoded, and only to evaluate a selector.
            page = self._store.read_not_due_entries(key, start, stop, now, DEFAULT_BROWSE_PAGE)
            for stored in page:
                if compiled is None or compiled.matches(decode(stored.data)):
                    return stored.seq
            if len(page) < DEFAULT_BROWSE_PAGE:
                break
            start = page[-1].seq + 1
        return best

    def last_sequence(self, destination: Destination) -> int:
        """The sequence number of the last message sent to ``destination`` (0 if none)."""
        with self._lock:
            text = str(destination)
            state = self._queues.get(text) or self._topics.get(text)
            return state.last_seq if state is not None else 0

    # -- staged publishing (jms.broker.staging) -------------------------------------------------

    def stage_encoded(
        self, connection_id: int, queue: Queue, encoded: Sequence[bytes]
    ) -> StagedRange:
        """Stage the messages ``encoded`` holds (``jms.message.codec`` encodings, at least one)
        in the staging queue ``queue``, in one store batch that is durable when this returns,
        and return the range of numbers they got there (``jms.broker.staging``).

        Each is decoded first (a staging request is refused whole, naming the message, if one
        is not a message or has no destination) and stamped as a producer sending it now would
        stamp it: a new message ID and timestamp, JMSRedelivered false, its own delivery mode and
        priority, its expiration and delivery time kept (not before now). It is stored as those
        bytes, in the store only: a staging queue's messages take no memory."""
        check_stage_request(queue, encoded)
        now = self._clock()
        prefix = f"ID:{self._instance}-s{next(self._ids)}:"
        stamped: list[bytes] = []
        # Consecutive messages of one destination and delivery mode, as [count, destination,
        # persistent, latest delivery time]: a request's messages mostly make one such group.
        groups: list[list[Any]] = []
        group: list[Any] = [0, None, None, 0]
        persistent_mode = DeliveryMode.PERSISTENT
        for index, item in enumerate(encoded, 1):
            try:
                data, destination, delivery_mode, delivery_time = check_and_restamp(
                    item, f"{prefix}{index}", now
                )
            except MessageFormatException as error:
                raise MessageFormatException(
                    f"staged message {index - 1} is not a message: {error.reason}",
                    linked_exception=error,
                ) from None
            stamped.append(data)
            persistent = delivery_mode == persistent_mode
            if destination is group[1] and persistent is group[2]:
                group[0] += 1
                if delivery_time > group[3]:
                    group[3] = delivery_time
                continue
            if not isinstance(destination, Queue | Topic):
                raise InvalidDestinationException(
                    f"staged message {index - 1} has JMSDestination {destination!r}: a "
                    "staged message names the queue or topic it is published to"
                )
            group = [1, destination, persistent, delivery_time]
            groups.append(group)
        with self._lock:
            connection = self._connection(connection_id)
            state = self._queue_destination(queue)
            self._check_owner(connection, state)
            held = state.queue
            # No max_backlog here: a staging queue is a writer's own (what failed attempts left
            # waits in it for the next publish), and a policy for every queue that refused
            # staging beyond those leftovers would stop the writer for good.
            assert held.store_key is not None  # a staging queue is permanent
            runs = self._staged_runs.setdefault(state.text, [])
            lowest = [seq for seq in (held.first_paged(), min(held.entries, default=None)) if seq]
            oldest = min(lowest, default=None)  # the lowest number the queue still holds
            while runs and (oldest is None or runs[0].last_seq < oldest):
                runs.pop(0)  # consumed meanwhile (acknowledge_through, purge)
            work = _Work(now)
            first = state.last_seq + 1
            state.last_seq += len(stamped) - 1
            last = self._next_seq(state)  # the request's numbers reserved at once when due
            work.operations.append(AppendEncodedRun(state.text, first, stamped, (held.store_key,)))
            seq = first
            for count, destination, persistent, due in groups:
                add_to_runs(runs, seq, seq + count - 1, destination, persistent, due)
                seq += count
            held.page_out_run(first, len(stamped), max(due for *_, due in groups))
            completion = self._finish(work)
        completion.wait()
        return StagedRange(queue, first, last)

    def _next_seq(self, state: QueueDestination | TopicDestination) -> int:
        """The next number of ``state``'s log, its reservation submitted when one is due."""
        seq = state.next_seq()
        through = state.reservation_due()
        if through is not None:
            state.reserved(through, self._store.submit([ReserveSequences(state.text, through)]))
        return seq

    def publish_staged(
        self,
        connection_id: int,
        staged: Sequence[StagedRange],
        marker: BatchMarker | None = None,
        authorize_send: Callable[[Destination], None] | None = None,
    ) -> int:
        """Publish the staged messages ``staged`` names, in one transaction, and return how many.

        Range after range, each in sequence order, every message goes to its own destination as
        ``stage_encoded`` stamped it; a run of PERSISTENT messages to a queue is moved there
        (``jms.store.MoveEntries``: not a byte of it rewritten), any other message is sent again.
        With ``marker``, a marker message holding its batch id goes to the marker queue in the
        same transaction and the older markers there are consumed; if a marker there already
        holds that batch id, nothing is published and 0 is returned (a batch re-run, a retried
        publish); if one holds a higher id, ``IllegalStateException`` (a writer runs only its last
        batch again: an older one comes from another writer). Unless refused, every staging
        queue named is consumed whole, the leftovers of writers that failed included.

        Atomic: when a range is not held whole (a message of it missing or consumed), a message
        cannot be sent, or ``authorize_send`` (a front end's permission check, called under the
        broker's lock once per destination; it must not call back into the broker) refuses a
        destination, nothing changes and the exception says why. What must be read back from
        the store (messages sent again; the runs of ranges staged before this broker started) is
        read before the lock is taken."""
        ranges = list(staged)
        for part in ranges:
            if not isinstance(part, StagedRange):
                raise TypeError(f"publish_staged takes StagedRange values; got {part!r}")
        if marker is not None and not isinstance(marker, BatchMarker):
            raise TypeError(f"marker must be a BatchMarker or None; got {marker!r}")
        for _ in range(_PUBLISH_ATTEMPTS):
            read = self._read_staging(connection_id, ranges, marker)
            published = self._publish_if_unchanged(
                connection_id, ranges, marker, read, authorize_send
            )
            if published is not None:
                return published
        raise IllegalStateException(
            f"the marker queue {marker.queue if marker else ''} changed during each of "
            f"{_PUBLISH_ATTEMPTS} attempts to publish: is another writer publishing to it?"
        )

    def _publish_if_unchanged(
        self,
        connection_id: int,
        ranges: list[StagedRange],
        marker: BatchMarker | None,
        read: _StagingRead,
        authorize_send: Callable[[Destination], None] | None,
    ) -> int | None:
        """Publish what ``read`` holds, and return how many messages were published; None,
        publishing nothing, when the marker queue paged out or in since it was read."""
        with self._lock:
            connection = self._connection(connection_id)
            if marker is not None and read.marker_paging != self._paging_of(
                self._browse_source(connection, marker.queue)
            ):
                return None
            work = _Work(self._clock())
            published = self._publish_read(connection, ranges, marker, read, authorize_send, work)
            completion = self._finish(work)
        completion.wait()
        return published

    def _runs_of(self, part: StagedRange) -> list[StagedRun] | None:
        """The runs this broker staged that hold ``part``'s messages, each cut to ``part``, or
        None if it did not stage them all (they were staged before it started).

        A run may hold more than ``part``: the requests of one writer that follow each other
        make one run whichever ranges the writer reports (requests answered out of order, the
        leftovers of a failed attempt before a retry's)."""
        found: list[StagedRun] = []
        expected = part.first_seq
        for run in self._staged_runs.get(str(part.queue), ()):
            if run.last_seq < expected:
                continue
            if run.first_seq > expected:
                return None  # a number no run holds
            last = min(run.last_seq, part.last_seq)
            found.append(dataclasses.replace(run, first_seq=expected, last_seq=last))
            expected = last + 1
            if expected > part.last_seq:
                return found
        return None

    def _read_staging(
        self, connection_id: int, ranges: list[StagedRange], marker: BatchMarker | None
    ) -> _StagingRead:
        """Without the lock: what ``publish_staged`` must read from the store — the messages it
        sends again, the runs of ranges this broker did not stage, the batch ids of the marker
        queue's paged-out markers."""
        runs: list[list[StagedRun] | None] = []
        reads: list[tuple[int, str, int, int]] = []  # range index, store key, first seq, last
        marker_read: tuple[str, int] | None = None
        marker_paging: tuple[int | None, int] | None = None
        with self._lock:
            connection = self._connection(connection_id)
            for index, part in enumerate(ranges):
                queue = self._browse_source(connection, part.queue)
                known = self._runs_of(part)
                runs.append(known)
                if queue is None or queue.store_key is None:
                    continue  # nothing staged there: refused under the lock
                if known is None:
                    reads.append((index, queue.store_key, part.first_seq, part.last_seq))
                else:
                    reads += [
                        (index, queue.store_key, run.first_seq, run.last_seq)
                        for run in known
                        if not run.moves
                    ]
            if marker is not None:
                marker_queue = self._browse_source(connection, marker.queue)
                marker_paging = self._paging_of(marker_queue)
                first = marker_queue.first_paged() if marker_queue is not None else None
                if marker_queue is not None and marker_queue.store_key and first:
                    marker_read = (marker_queue.store_key, first)
        _await(self._store.submit(()))  # every staged message readable
        messages: list[dict[int, tuple[Message, bytes]]] = [{} for _ in ranges]
        for index, key, first, last in reads:
            found = messages[index]
            recovered: list[StagedRun] = []
            while True:
                page = self._store.read_encoded_entries(key, first, last, _PAGE_IN_LIMIT)
                for stored in page:
                    message = decode(stored.data)
                    if runs[index] is None:
                        # Staged by a SEND, which gave it its destination.
                        assert message._destination is not None
                        add_to_runs(
                            recovered,
                            stored.seq,
                            stored.seq,
                            message._destination,
                            message._delivery_mode == DeliveryMode.PERSISTENT,
                            message._delivery_time,
                        )
                        if recovered[-1].moves:
                            continue  # moved, not sent again: not kept
                    found[stored.seq] = (message, stored.data)
                if len(page) < _PAGE_IN_LIMIT:
                    break
                first = page[-1].seq + 1
            if runs[index] is None:
                runs[index] = recovered
        markers: dict[int, int] = {}
        if marker_read is not None:
            for marker_entry in self._stored_through(*marker_read, None):
                batch = marker_entry.message._properties.get(MARKER_BATCH)
                if batch is not None:
                    markers[marker_entry.seq] = int(batch)
        return _StagingRead(runs, messages, markers, marker_paging)

    def _stored_through(self, key: str, start: int, through: int | None) -> Iterable[StoredEntry]:
        """The entries of the store queue ``key`` from ``start`` through ``through``, page by page
        (without the lock)."""
        while True:
            page = self._store.read_entries(key, start, through, _PAGE_IN_LIMIT)
            yield from page
            if len(page) < _PAGE_IN_LIMIT:
                return
            start = page[-1].seq + 1

    @staticmethod
    def _paging_of(queue: MessageQueue | None) -> tuple[int | None, int] | None:
        return None if queue is None else (queue.first_paged(), queue.paged)

    def _publish_read(
        self,
        connection: _Connection,
        ranges: list[StagedRange],
        marker: BatchMarker | None,
        read: _StagingRead,
        authorize_send: Callable[[Destination], None] | None,
        work: _Work,
    ) -> int:
        """Under the lock: decide and apply a ``publish_staged`` whose store reads are ``read``;
        return how many messages it published."""
        marker_queue = None
        if marker is not None:
            marker_queue = self._browse_source(connection, marker.queue)
            published = self._marked_batch(marker_queue, read.markers)
            if published is not None and marker.batch_id < published:
                raise IllegalStateException(
                    f"{marker.queue} marks batch {published} published, so batch "
                    f"{marker.batch_id} is not a run again of its last batch (the only one a "
                    "writer runs again): another writer, or one started over, publishes with "
                    "this marker queue. Nothing was published"
                )
            if published is not None and marker.batch_id == published:
                logger.info(
                    "%s already marks batch %d published: batch %d is not published again",
                    marker.queue,
                    published,
                    marker.batch_id,
                )
                self._consume_staging(connection, ranges, work)
                return 0
        allowed: set[str] = set()

        def allow(target: QueueDestination | TopicDestination) -> None:
            if authorize_send is not None and target.text not in allowed:
                authorize_send(target.destination)
                allowed.add(target.text)

        plan: list[_Move | _Resend] = []
        room: list[tuple[QueueDestination | TopicDestination, list[MessageQueue]]] = []
        for index, part in enumerate(ranges):
            staging = self._browse_source(connection, part.queue)
            held = 0 if staging is None else self._staged_held(staging, part)
            runs = read.runs[index]
            if staging is None or held != part.count or runs is None:
                # Staged messages are paged out, where nothing expires; a broker that restarted
                # pages its queues' first messages in, and one may expire there.
                expired = (
                    f" ({staging.expired} of its messages expired while they waited in it)"
                    if staging is not None and staging.expired
                    else ""
                )
                raise JMSException(
                    f"{part.queue} holds {held} of the {part.count} messages staged as numbers "
                    f"{part.first_seq} to {part.last_seq}{expired}; nothing was published"
                )
            for run in runs:
                if run.moves:
                    assert isinstance(run.destination, Queue)
                    moved_to = self._queue_destination(run.destination)
                    allow(moved_to)
                    assert staging.store_key is not None
                    plan.append(_Move(staging.store_key, run, moved_to))
                    if moved_to.policy.max_backlog is not None:
                        room += [(moved_to, [moved_to.queue])] * run.count
                    continue
                for seq in range(run.first_seq, run.last_seq + 1):
                    message, data = read.messages[index][seq]
                    target = self._target_for_send(message)
                    allow(target)
                    queues = self._targets(target, message, connection)
                    stored = data if message._delivery_mode == DeliveryMode.PERSISTENT else None
                    plan.append(_Resend(message, target, queues, stored))
                    room.append((target, queues))
        self._check_room(room)
        if marker is not None and marker_queue is not None:  # older markers go as the new comes
            self._consume_between(marker_queue, 1, self._queues[str(marker.queue)].last_seq, work)
        for step in plan:
            if isinstance(step, _Move):
                self._move_run(step, work)
            else:
                self._append(step.target, step.message, step.queues, work, step.stored)
        if marker is not None:
            note = Message()
            note._properties[MARKER_BATCH] = Long(marker.batch_id)
            note._destination = marker.queue
            self._stamp_published(note, work.now, f"ID:{self._instance}-s{next(self._ids)}:1")
            target = self._queue_destination(marker.queue)
            self._append(target, note, [target.queue], work)
        self._consume_staging(connection, ranges, work)
        return sum(part.count for part in ranges)

    @staticmethod
    def _staged_held(staging: MessageQueue, part: StagedRange) -> int:
        """How many of the messages ``part`` names ``staging`` holds (not in flight): paged out,
        or paged in (the store holds them all the same)."""
        in_memory = staging.entries_between(part.first_seq, part.last_seq)
        paged = staging.paged_between(part.first_seq, part.last_seq)
        return paged + sum(1 for entry in in_memory if entry.stored)

    def _move_run(self, move: _Move, work: _Work) -> None:
        """Make the staged run ``move`` names its target queue's next messages, paged out: its
        entries move in the store, its messages stay as they are."""
        run, target = move.run, move.target
        first = target.last_seq + 1
        target.last_seq += run.count - 1
        self._next_seq(target)  # the run's last number, reserving beyond it when due
        queue = target.queue
        assert queue.store_key is not None
        work.operations.append(
            MoveEntries(move.staging_key, run.first_seq, run.last_seq, queue.store_key, first)
        )
        queue.page_out_run(first, run.count, run.due_by)
        work.paging.add(queue)

    @staticmethod
    def _marked_batch(queue: MessageQueue | None, paged_markers: dict[int, int]) -> int | None:
        """The highest batch id the markers in ``queue`` hold (those paged out read before)."""
        if queue is None:
            return None
        found = [
            int(entry.message._properties[MARKER_BATCH])
            for entry in queue.entries.values()
            if MARKER_BATCH in entry.message._properties
        ]
        found += [batch for seq, batch in paged_markers.items() if queue.is_paged(seq)]
        return max(found, default=None)

    @staticmethod
    def _stamp_published(message: Message, now: int, message_id: str) -> None:
        """Stamp a staged message as a producer sending it now with its own headers would."""
        message._expiration, message._delivery_time = published_times(
            now, message._expiration, message._delivery_time
        )
        message._timestamp = now
        message._message_id = message_id
        message._redelivered = False

    def _consume_staging(
        self, connection: _Connection, ranges: list[StagedRange], work: _Work
    ) -> None:
        """Consume the staging queues ``ranges`` name, whole: what they hold beyond the ranges
        was staged by writers that failed (a publish is the only reader of its staging queues)."""
        for name in dict.fromkeys(part.queue for part in ranges):
            queue = self._browse_source(connection, name)
            if queue is not None:
                self._consume_between(queue, 1, self._queues[str(name)].last_seq, work)
            self._staged_runs.pop(str(name), None)

    def purge(self, connection_id: int, queue: Queue) -> int:
        """Remove every message of ``queue`` not in flight to a consumer; return how many. They
        count as purged, not as acknowledged. A queue this broker does not know (nothing was
        sent to it and no consumer opened on it) is an ``InvalidDestinationException``."""
        with self._lock:
            connection = self._connection(connection_id)
            state = self._queues.get(str(queue))
            if state is None:
                raise InvalidDestinationException(
                    f"{queue} does not exist on this broker: nothing was sent to it and no "
                    "consumer opened on it (check the name)"
                )
            held = self._browse_source(connection, queue)
            assert held is not None
            work = _Work(self._clock())
            purged = self._consume_between(held, 1, state.last_seq, work, purge=True)
            completion = self._finish(work)
        completion.wait()
        return purged

    @staticmethod
    def _consume_between(
        queue: MessageQueue, start_seq: int, end_seq: int, work: _Work, *, purge: bool = False
    ) -> int:
        """Consume every entry of ``queue`` numbered ``start_seq`` to ``end_seq`` not in flight,
        paged-out ones too (as one range in the store); return how many. They count as
        acknowledged, or as purged with ``purge``."""
        entries = queue.entries_between(start_seq, end_seq)
        for entry in entries:
            queue.remove(entry)
        stored = [entry.seq for entry in entries if entry.stored]
        first_paged, last_paged, paged = queue.drop_paged_between(start_seq, end_seq)
        if paged:
            stored += (first_paged, last_paged)
        if stored:
            # The stored entries consumed are every one the store holds between the lowest and
            # the highest of them but those in flight: a few ranges, not one row per message.
            assert queue.store_key is not None
            low, high = min(stored), max(stored)
            in_flight = sorted(
                entry.seq
                for entry in queue.entries.values()
                if entry.stored and low < entry.seq < high
            )
            for first, last in _ranges_around(low, high, in_flight):
                work.operations.append(RemoveRange(queue.store_key, first, last))
        if purge:
            queue.purged += len(entries) + paged
        else:
            queue.acknowledged += len(entries) + paged
        work.paging.add(queue)
        return len(entries) + paged

    def topics(self) -> list[Topic]:
        """Every topic the broker knows (sent to or subscribed to), temporary ones included."""
        with self._lock:
            return [state.destination for state in self._topics.values()]

    def stats(self) -> list[QueueStats]:
        """A snapshot of every queue and topic subscription."""
        with self._lock:
            queues = [state.queue for state in self._queues.values()]
            queues += [sub.queue for t in self._topics.values() for sub in t.subscriptions]
            return [
                QueueStats(
                    name=q.name,
                    destination=str(q.destination),
                    depth=q.depth,
                    in_flight=q.in_flight,
                    consumers=len(q.consumers),
                    enqueued=q.enqueued,
                    acknowledged=q.acknowledged,
                    purged=q.purged,
                    expired=q.expired,
                    dead_lettered=q.dead_lettered,
                    paged=q.paged,
                    dead_letter_queue=self._is_dead_letter_queue(q),
                )
                for q in queues
            ]

    def memory_stats(self) -> MemoryStats:
        """A snapshot of the memory budget: bytes held, the limit, whether producers are held
        back, and what the budget made the broker do so far."""
        with self._lock:
            return MemoryStats(
                used=self._memory.used,
                limit=self._memory.limit,
                producers_blocked=self._memory.producers_blocked,
                producer_blocks=self._memory.producer_blocks,
                slow_consumers_closed=self._memory.slow_consumers_closed,
                paged_for_memory=self._memory.paged_for_memory,
            )

    @property
    def producers_blocked(self) -> bool:
        """Whether the memory budget is reached and producers should be held back (a front end
        stops reading their connections until ``when_memory_available`` calls back). Read
        without the lock: a front end asks after every send."""
        return self._memory.producers_blocked

    def when_memory_available(self, callback: Callable[[], None]) -> bool:
        """True if producers may go on now; otherwise False, and ``callback`` is called once when
        they may. It is called with the broker's lock held, on any thread: it must return at
        once and must not call the broker."""
        with self._lock:
            if not self._memory.producers_blocked:
                return True
            self._memory.waiters.append(callback)
            return False

    # -- shutdown ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close every connection (calling their ``on_close``), stop the timer, close the store."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            work = _Work(self._clock())
            closed = list(self._connections.values())
            self._connections.clear()
            for connection in closed:
                self._drop_connection(connection, work)
            completion = self._finish(work)
        self._timer.close()
        self._pager.close()
        completion.wait()
        self._store.close()
        for connection in closed:
            if connection.on_close is not None:
                connection.on_close(IllegalStateException(f"broker {self.name!r} was closed"))

    @property
    def closed(self) -> bool:
        return self._closed

    # -- internals: connections and destinations -----------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException(f"broker {self.name!r} is closed")

    def _connection(self, connection_id: int) -> _Connection:
        connection = self._connections.get(connection_id)
        if connection is None or self._closed:
            self._check_open()
            raise IllegalStateException(
                f"connection {connection_id} to broker {self.name!r} is closed"
            )
        return connection

    def _claim_client_id(self, connection: _Connection, client_id: str) -> None:
        if not isinstance(client_id, str) or not client_id:
            raise InvalidClientIDException(f"a client ID is a non-empty string; got {client_id!r}")
        if client_id in self._client_ids:
            raise InvalidClientIDException(
                f"client ID {client_id!r} is already in use by another connection to broker "
                f"{self.name!r}"
            )
        self._client_ids[client_id] = connection.id
        connection.client_id = client_id

    def _drop_connection(self, connection: _Connection, work: _Work) -> None:
        if connection.client_id is not None:
            self._client_ids.pop(connection.client_id, None)
        for transaction_id in connection.transactions:
            self._transactions.pop(transaction_id, None)
        for consumer_id in list(connection.consumers):
            self._remove_consumer(connection, self._consumers[consumer_id], work)
        # Whatever the connection still held was delivered as far as we can know.
        held = [
            tag
            for tag, (entry, _) in self._in_flight.items()
            if entry.consumer is not None and entry.consumer.connection_id == connection.id
        ]
        self._fail_deliveries(connection, held, work)
        for text in list(connection.temporaries):
            self._delete_temporary(connection, text)

    def _temporary_name(self) -> str:
        return f"{self._instance}.{next(self._temporary_ids)}"

    def _delete_temporary(self, connection: _Connection, text: str) -> None:
        connection.temporaries.discard(text)
        queue_state = self._queues.pop(text, None)
        if queue_state is not None:
            queue_state.queue.drain()
        topic_state = self._topics.pop(text, None)
        if topic_state is not None:
            for subscription in topic_state.subscriptions:
                subscription.queue.drain()
            topic_state.subscriptions.clear()

    def _queue_destination(self, queue: Queue) -> QueueDestination:
        text = str(queue)
        state = self._queues.get(text)
        if state is None:
            if isinstance(queue, TemporaryQueue):
                raise InvalidDestinationException(
                    f"{text} does not exist: it was deleted, or the connection that created it "
                    "closed"
                )
            state = QueueDestination(
                queue, self._policies.for_destination(text), None, self._memory
            )
            self._queues[text] = state
            self._store.submit([AddDestination(text)])
        return state

    def _topic_destination(self, topic: Topic) -> TopicDestination:
        text = str(topic)
        state = self._topics.get(text)
        if state is None:
            if isinstance(topic, TemporaryTopic):
                raise InvalidDestinationException(
                    f"{text} does not exist: it was deleted, or the connection that created it "
                    "closed"
                )
            state = TopicDestination(topic, self._policies.for_destination(text), None)
            self._topics[text] = state
            self._store.submit([AddDestination(text)])
        return state

    def _target_for_send(self, message: Message) -> QueueDestination | TopicDestination:
        destination = message._destination
        if isinstance(destination, Queue):
            return self._queue_destination(destination)
        if isinstance(destination, Topic):
            return self._topic_destination(destination)
        raise InvalidDestinationException(
            f"cannot send {message!r}: its JMSDestination is {destination!r}, not a Queue or Topic"
        )

    def _queue_for_consumer(self, connection: _Connection, queue: Queue) -> QueueDestination:
        state = self._queue_destination(queue)
        self._check_owner(connection, state)
        return state

    def _topic_for_consumer(self, connection: _Connection, topic: Topic) -> TopicDestination:
        state = self._topic_destination(topic)
        self._check_owner(connection, state)
        return state

    @staticmethod
    def _check_owner(connection: _Connection, state: QueueDestination | TopicDestination) -> None:
        if state.temporary and state.owner_connection_id != connection.id:
            raise InvalidDestinationException(
                f"{state.text} is temporary: only the connection that created it may consume "
                "from or browse it"
            )

    def _policy_of(self, queue: MessageQueue) -> DestinationPolicy:
        text = str(queue.destination)
        state = (
            self._queues.get(text)
            if isinstance(queue.destination, Queue)
            else self._topics.get(text)
        )
        return state.policy if state is not None else self._policies.for_destination(text)

    def _is_dead_letter_queue(self, queue: MessageQueue) -> bool:
        destination = queue.destination
        return isinstance(destination, Queue) and (
            destination.name.startswith(DEAD_LETTER_PREFIX)
            or destination.name in self._policies.dead_letter_queue_names()
        )

    # -- internals: subscriptions --------------------------------------------------------------

    def _subscription_for(
        self,
        connection: _Connection,
        topic: TopicDestination,
        spec: ConsumerSpec,
        consumer_id: int,
        work: _Work,
    ) -> Subscription:
        selector_text = spec.selector_text
        name = spec.subscription_name
        client_id = connection.client_id
        if name is None:
            subscription = Subscription(
                topic=topic.destination,
                queue=MessageQueue(
                    f"subscriber://{consumer_id}", topic.destination, None, self._memory
                ),
                selector_text=selector_text,
                no_local=spec.no_local,
                name=None,
                client_id=client_id,
                connection_id=connection.id,
                durable=False,
                shared=False,
            )
            topic.subscriptions.append(subscription)
            return subscription
        if spec.durable:
            return self._durable_subscription(connection, topic, spec, work)
        existing = self._shared.get((client_id, name))
        if existing is not None:
            if existing.topic != topic.destination or existing.selector_text != selector_text:
                raise JMSException(
                    f"{existing.describe()} has selector {existing.selector_text!r}; a consumer "
                    f"on {topic.text} with selector {selector_text!r} cannot share it"
                )
            return existing
        label = f"shared://{quote(client_id or '', safe='')}/{quote(name, safe='')}"
        subscription = Subscription(
            topic=topic.destination,
            queue=MessageQueue(label, topic.destination, None, self._memory),
            selector_text=selector_text,
            no_local=False,
            name=name,
            client_id=client_id,
            connection_id=None,
            durable=False,
            shared=True,
        )
        self._shared[(client_id, name)] = subscription
        topic.subscriptions.append(subscription)
        return subscription

    def _durable_subscription(
        self,
        connection: _Connection,
        topic: TopicDestination,
        spec: ConsumerSpec,
        work: _Work,
    ) -> Subscription:
        name = spec.subscription_name
        assert name is not None
        client_id = connection.client_id
        if not spec.shared and client_id is None:
            raise IllegalStateException(
                f"the unshared durable subscription {name!r} needs a client ID: set one with "
                "ConnectionFactory(url, client_id=...) or connection.set_client_id(...)"
            )
        existing = self._durable.get((client_id, name))
        if existing is not None:
            if existing.shared != spec.shared:
                wanted = "shared" if spec.shared else "unshared"
                raise JMSException(
                    f"{existing.describe()} exists; it cannot also be opened as an {wanted} one"
                )
            if not spec.shared and existing.consumers:
                raise IllegalStateException(f"{existing.describe()} already has an active consumer")
            if not existing.same_definition(topic.destination, spec.selector_text, spec.no_local):
                if existing.consumers:
                    raise JMSException(
                        f"{existing.describe()} has active consumers, so it cannot change to "
                        f"topic {topic.text}, selector {spec.selector_text!r}, "
                        f"no_local={spec.no_local}"
                    )
                if existing.queue.in_flight:
                    raise IllegalStateException(
                        f"cannot replace {existing.describe()}: {existing.queue.in_flight} of its "
                        "messages are delivered but not acknowledged"
                    )
                # JMS: a changed topic, selector or noLocal on an inactive durable subscription
                # is the same as unsubscribing and subscribing again.
                self._delete_subscription(existing, work)
                existing = None
        if existing is not None:
            return existing
        key = durable_store_key(client_id, name)
        subscription = Subscription(
            topic=topic.destination,
            queue=MessageQueue(key, topic.destination, key, self._memory),
            selector_text=spec.selector_text,
            no_local=spec.no_local and not spec.shared,
            name=name,
            client_id=client_id,
            connection_id=None,
            durable=True,
            shared=spec.shared,
        )
        self._durable[(client_id, name)] = subscription
        topic.subscriptions.append(subscription)
        work.operations.append(SaveSubscription(subscription.record()))
        return subscription

    def _delete_subscription(self, subscription: Subscription, work: _Work) -> None:
        topic = self._topics.get(str(subscription.topic))
        if topic is not None and subscription in topic.subscriptions:
            topic.subscriptions.remove(subscription)
        key = (subscription.client_id, subscription.name)
        if subscription.durable:
            del self._durable[key]  # type: ignore[arg-type]
            assert subscription.queue.store_key is not None
            work.operations.append(DeleteSubscription(subscription.queue.store_key))
        elif subscription.shared:
            del self._shared[key]  # type: ignore[arg-type]
        subscription.queue.drain()

    def _remove_consumer(self, connection: _Connection, consumer: Consumer, work: _Work) -> None:
        del self._consumers[consumer.id]
        connection.consumers.discard(consumer.id)
        consumer.closed = True
        queue = consumer.queue
        queue.detach(consumer)
        subscription = consumer.subscription
        if subscription is not None:
            subscription.consumers -= 1
            ends = not subscription.durable and (
                not subscription.shared or subscription.consumers == 0
            )
            if ends:
                self._delete_subscription(subscription, work)
                return
        work.reselect.add(queue)

    def _browse_source(
        self, connection: _Connection, source: Queue | SubscriptionName
    ) -> MessageQueue | None:
        if isinstance(source, SubscriptionName):
            subscription = self._durable.get((source.client_id, source.name))
            if subscription is None:
                raise InvalidDestinationException(
                    f"there is no durable subscription named {source.name!r} for client ID "
                    f"{source.client_id!r}"
                )
            return subscription.queue
        if not isinstance(source, Queue):
            raise InvalidDestinationException(
                f"only queues and durable subscriptions can be browsed, not {source!r}"
            )
        state = self._queues.get(str(source))
        if state is None:
            if isinstance(source, TemporaryQueue):
                raise InvalidDestinationException(f"{source} does not exist")
            return None
        self._check_owner(connection, state)
        return state.queue

    # -- internals: routing --------------------------------------------------------------------

    @staticmethod
    def _targets(
        state: QueueDestination | TopicDestination, message: Message, connection: _Connection
    ) -> list[MessageQueue]:
        if isinstance(state, QueueDestination):
            return [state.queue]
        return [
            subscription.queue
            for subscription in state.subscriptions
            if subscription.keeps(message, connection.id, connection.client_id)
        ]

    @staticmethod
    def _check_room(
        plan: Sequence[tuple[QueueDestination | TopicDestination, list[MessageQueue]]],
    ) -> None:
        """Refuse (before changing anything) sends that would overfill a bounded queue."""
        wanted: dict[MessageQueue, int] = {}
        limits: dict[MessageQueue, int] = {}
        for state, queues in plan:
            limit = state.policy.max_backlog
            if limit is None:
                continue
            for queue in queues:
                wanted[queue] = wanted.get(queue, 0) + 1
                limits[queue] = limit
        for queue, count in wanted.items():
            if queue.depth + count > limits[queue]:
                raise ResourceAllocationException(
                    f"{queue.name} holds {queue.depth} messages and its max_backlog is "
                    f"{limits[queue]}: cannot take {count} more until its consumers catch up"
                )

    def _append(
        self,
        state: QueueDestination | TopicDestination,
        message: Message,
        queues: list[MessageQueue],
        work: _Work,
        encoded: bytes | None = None,
        delivery_count: int = 0,
    ) -> None:
        seq = self._next_seq(state)
        gate = state.gate(seq)
        persistent = message._delivery_mode == _PERSISTENT
        if persistent:
            stored = tuple(q.store_key for q in queues if q.store_key is not None)
            if stored:
                work.operations.append(AppendMessage(state.text, seq, message, stored, encoded))
                if delivery_count:
                    work.operations += [SetDeliveryCount(k, seq, delivery_count) for k in stored]
        expiration = message._expiration
        expired = expiration != 0 and expiration <= work.now
        window = state.policy.memory_window
        size = message_size(message)
        for queue in queues:
            stored_here = persistent and queue.store_key is not None
            if stored_here and not expired:
                # A stored message never takes the count past its share: it waits in the store.
                over_budget = self._memory.used + size > self._memory.stored_ceiling
                if over_budget or queue.paged or (window is not None and queue.waiting >= window):
                    queue.page_out(seq, message._delivery_time)
                    self._memory.paged_for_memory += over_budget
                    continue
            entry = Entry(seq, message, stored=stored_here, size=size, gate=gate)
            if delivery_count:  # counted as delivered, it still takes its place in line
                entry.delivery_count = delivery_count
            self._admit(queue, entry, work)

    def _admit(
        self, queue: MessageQueue, entry: Entry, work: _Work, *, arrived: bool = True
    ) -> None:
        """Take a new or recovered (``arrived``) or a paged-in entry into ``queue`` (or expire
        it at once). A paged-in entry was counted as enqueued when it was paged out."""
        expiration = entry.expiration  # entry.expired(work.now), once per message: spelled out
        if expiration != 0 and expiration <= work.now:
            if arrived:
                queue.enqueued += 1
            self._expire(queue, entry, work)
            return
        self._absorb(work, queue, queue.add(entry, work.now, arrived=arrived))
        if entry.expiration or entry.state == EntryState.SCHEDULED:
            work.watch.add(queue)

    def _absorb(
        self, work: _Work, queue: MessageQueue, outcome: tuple[list[Entry], list[Entry]]
    ) -> None:
        assigned, expired = outcome
        if assigned or expired:
            work.paging.add(queue)
        for entry in assigned:
            work.deliveries.append((queue, entry))
        for entry in expired:
            self._expire(queue, entry, work)

    def _expire(self, queue: MessageQueue, entry: Entry, work: _Work) -> None:
        """Account for an entry already taken out of ``queue`` because it expired."""
        queue.expired += 1
        if entry.stored:
            assert queue.store_key is not None
            work.operations.append(RemoveEntry(queue.store_key, entry.seq))
        expiry_queue = self._policy_of(queue).expiry_queue
        if expiry_queue is not None:
            reason = f"expired: its JMSExpiration {entry.expiration} passed (at {work.now})"
            self._move(queue, entry, expiry_queue, reason, work)

    def _move(
        self, source: MessageQueue, entry: Entry, queue_name: str, reason: str, work: _Work
    ) -> None:
        """Send a copy of ``entry``'s message to ``queue_name`` with where it came from and why.

        The copy never expires: a dead letter is kept for someone to look at.
        """
        message = entry.message._copy()
        message._properties[ORIGINAL_DESTINATION] = str(source.destination)
        message._properties[DEAD_LETTER_REASON] = reason
        message.set_jms_destination(Queue(queue_name))
        message.set_jms_expiration(0)
        target = self._queue_destination(Queue(queue_name))
        self._append(target, message, [target.queue], work)

    # -- internals: acknowledgement and redelivery ---------------------------------------------

    def _take_transaction(self, connection: _Connection, transaction_id: int) -> Transaction:
        transaction = self._transaction(connection, transaction_id)
        del self._transactions[transaction_id]
        connection.transactions.discard(transaction_id)
        return transaction

    def _transaction(self, connection: _Connection, transaction_id: int) -> Transaction:
        transaction = self._transactions.get(transaction_id)
        if transaction is None or transaction.connection_id != connection.id:
            raise IllegalStateException(
                f"transaction {transaction_id} is not open on connection {connection.id}"
            )
        return transaction

    def _held_by(self, connection: _Connection, tag: int) -> tuple[Entry, MessageQueue] | None:
        """The in-flight entry ``tag`` names and its queue, if ``connection`` holds it."""
        held = self._in_flight.get(tag)
        if held is None:
            return None
        consumer = held[0].consumer
        if consumer is None or consumer.connection_id != connection.id:
            return None
        return held

    def _take_held(self, connection: _Connection, tag: int) -> tuple[Entry, MessageQueue] | None:
        held = self._held_by(connection, tag)
        if held is not None:
            del self._in_flight[tag]
        return held

    def _acknowledge(self, connection: _Connection, tags: Iterable[int], work: _Work) -> None:
        # _take_held spelled out: this runs once per message consumed, a cumulative ACK's
        # hundred tags at a time, and the two calls cost as much as the rest of the loop.
        in_flight = self._in_flight
        connection_id = connection.id
        for tag in tags:
            held = in_flight.get(tag)
            if held is None:
                continue
            entry, queue = held
            consumer = entry.consumer
            if consumer is None or consumer.connection_id != connection_id:
                continue
            del in_flight[tag]
            queue.remove(entry)
            queue.acknowledged += 1
            if entry.stored:
                assert queue.store_key is not None
                work.operations.append(RemoveEntry(queue.store_key, entry.seq))

    def _return_undelivered(self, connection: _Connection, tag: int, work: _Work) -> None:
        held = self._take_held(connection, tag)
        if held is None:
            return
        entry, queue = held
        consumer = entry.consumer
        assert consumer is not None
        if queue.deleted:
            queue.remove(entry)
            return
        if entry.expired(work.now):
            queue.remove(entry)
            self._expire(queue, entry, work)
            return
        if entry.stored:
            # The delivery was recorded when it was dispatched; it never happened after all.
            assert queue.store_key is not None
            work.operations.append(
                SetDeliveryCount(queue.store_key, entry.seq, entry.delivery_count)
            )
        queue.put_back(entry, work.now, work.now)
        if not consumer.closed:
            queue.add_credit(consumer, 1)
        work.reselect.add(queue)

    def _fail_deliveries(self, connection: _Connection, tags: Iterable[int], work: _Work) -> None:
        for tag in tags:
            held = self._take_held(connection, tag)
            if held is not None:
                self._fail(*held, work)

    def _fail(self, entry: Entry, queue: MessageQueue, work: _Work) -> None:
        """One failed delivery of an in-flight entry: redeliver it later, or dead-letter it."""
        consumer = entry.consumer
        assert consumer is not None
        entry.delivery_count += 1
        if queue.deleted:
            queue.remove(entry)
            return
        policy = self._policy_of(queue)
        limit = consumer.spec.max_deliveries
        if limit is None:
            limit = policy.max_deliveries
        if (
            limit is not None
            and entry.delivery_count >= limit
            and not self._is_dead_letter_queue(queue)
        ):
            queue.remove(entry)
            queue.dead_lettered += 1
            if entry.stored:
                assert queue.store_key is not None
                work.operations.append(RemoveEntry(queue.store_key, entry.seq))
            reason = (
                f"delivered {entry.delivery_count} times without being acknowledged "
                f"(max_deliveries {limit})"
            )
            target = policy.dead_letter_queue_for(queue.destination.name)
            logger.warning(
                "%s: message %s dead-lettered to queue://%s: %s",
                queue.name,
                entry.message.get_jms_message_id(),
                target,
                reason,
            )
            self._move(queue, entry, target, reason, work)
            return
        if entry.expired(work.now):
            queue.remove(entry)
            self._expire(queue, entry, work)
            return
        # The store already counts this delivery: it was recorded when it was dispatched.
        delay = policy.redelivery_delay(entry.delivery_count)
        queue.put_back(entry, work.now, work.now + delay)
        if delay:
            work.watch.add(queue)
        work.reselect.add(queue)

    # -- internals: finishing a call -----------------------------------------------------------

    def _finish(self, work: _Work, stored_with: Collection[int] = ()) -> Completion:
        """Dispatch what became deliverable, submit the store batch (with a record of each
        delivery of a stored entry), hand deliveries to sinks, ask for pages where the memory
        window has room.

        A delivery of a stored entry waits for the batch that records it, except that of a
        message in ``stored_with`` (by ``id``), those plain sends append in this very batch: its
        record and the message itself are durable together or not at all, so it waits only for its
        sequence number's reservation, like a message the store does not keep. Its consumer
        may then get it, and acknowledge it, before the batch is written; a message
        acknowledged before its batch's group commit is never written (see the store)."""
        while work.reselect:
            queue = work.reselect.pop()
            if not queue.deleted:
                self._absorb(work, queue, queue.select(work.now))
        operations = work.operations
        for queue, entry in work.deliveries:
            if entry.stored:
                assert queue.store_key is not None
                operations.append(
                    SetDeliveryCount(queue.store_key, entry.seq, entry.delivery_count + 1)
                )
        completion = self._store.submit(operations) if operations else DONE
        for queue, entry in work.deliveries:
            if entry.stored and id(entry.message) not in stored_with:
                self._dispatch(queue, entry, completion)
            else:
                gate = entry.gate
                if gate is not None and gate.done():
                    entry.gate = gate = None
                self._dispatch(queue, entry, DONE if gate is None else gate)
        for queue in work.watch:
            self._watch(queue)
        for queue in work.paging:
            self._page_in_if_room(queue)
        if (
            self._memory.producers_blocked
            and self._memory.used <= self._memory.ceiling * _LOW_WATER
        ):
            self._memory_freed()
        return completion

    def _dispatch(self, queue: MessageQueue, entry: Entry, recorded: Completion) -> None:
        consumer = entry.consumer
        assert consumer is not None
        tag = next(self._tags)
        self._in_flight[tag] = (entry, queue)
        count = entry.delivery_count + 1
        message = (
            entry.message
            if consumer.spec.read_only_messages
            else delivered_copy(entry.message, count)
        )
        try:
            consumer.sink(_new_delivery((consumer.id, tag, entry.seq, message, recorded, count)))
        except Exception:
            logger.exception(
                "the delivery sink of consumer %s failed; message %s of %s stays in flight until "
                "its connection requeues it",
                consumer.id,
                entry.seq,
                queue.name,
            )

    @staticmethod
    def _browse_copy(message: Message, redelivered: bool) -> Message:
        copy = message._copy()
        copy.set_jms_redelivered(redelivered)
        return copy

    def _watch(self, queue: MessageQueue) -> None:
        deadline = queue.next_deadline()
        if deadline is None:
            return
        if queue.watched_deadline is not None and queue.watched_deadline <= deadline:
            return
        queue.watched_deadline = deadline
        heapq.heappush(self._wakeups, (deadline, next(self._wakeup_order), queue))
        self._timer.request(deadline)

    def _on_deadline(self) -> int | None:
        with self._lock:
            if self._closed:
                return None
            work = _Work(self._clock())
            due: dict[MessageQueue, None] = {}
            while self._wakeups and self._wakeups[0][0] <= work.now:
                due[heapq.heappop(self._wakeups)[2]] = None
            for queue in due:
                queue.watched_deadline = None
                if not queue.deleted:
                    self._absorb(work, queue, queue.process_due(work.now))
                    work.watch.add(queue)
            completion = self._finish(work)
            following = self._wakeups[0][0] if self._wakeups else None
        completion.wait()
        return following

    # -- internals: recovery -------------------------------------------------------------------

    def _recover(self) -> None:
        """Rebuild destinations, durable subscriptions and held messages from the store."""
        contents = self._store.load()
        work = _Work(self._clock())
        for text in contents.destinations:
            destination = Destination.parse(text)
            policy = self._policies.for_destination(text)
            if isinstance(destination, Queue):
                self._queues[text] = QueueDestination(destination, policy, None, self._memory)
            else:
                assert isinstance(destination, Topic)
                self._topics[text] = TopicDestination(destination, policy, None)
        for record in contents.subscriptions:
            topic_destination = Destination.parse(record.topic)
            assert isinstance(topic_destination, Topic)
            topic = self._topic_destination(topic_destination)
            subscription = Subscription(
                topic=topic.destination,
                queue=MessageQueue(record.key, topic.destination, record.key, self._memory),
                selector_text=record.selector,
                no_local=record.no_local,
                name=record.name,
                client_id=record.client_id,
                connection_id=None,
                durable=True,
                shared=record.shared,
            )
            self._durable[(record.client_id, record.name)] = subscription
            topic.subscriptions.append(subscription)
        for log, last_seq in contents.last_sequences.items():
            state = self._queues.get(log) or self._topics.get(log)
            if state is not None:
                state.recovered(last_seq)
        by_key = {text: state.queue for text, state in self._queues.items()}
        by_key.update({s.queue.store_key: s.queue for s in self._durable.values()})  # type: ignore[misc]
        for key in contents.queues_with_entries:
            queue = by_key.get(key)
            if queue is None:
                logger.warning("store holds entries for unknown queue %r; ignored", key)
                continue
            self._recover_audit(key, self._recover_entries(queue, key, work))
        self._finish(work).wait()

    def _recover_audit(self, key: str, last_seq: int) -> None:
        """Remember the IDs of the newest messages the store queue ``key`` holds (the last
        numbered ``last_seq``): a client failing over from a broker that died sends again
        what that broker did not answer, which is among the newest it took."""
        newest = min(self._audit.window, _AUDIT_RECOVERED_PER_QUEUE)
        start = max(1, last_seq - newest + 1)
        for stored in self._store.read_encoded_entries(key, start, None, newest):
            message_id = message_id_of(stored.data)
            if message_id is not None:
                self._audit.record(message_id)

    def _recover_entries(self, queue: MessageQueue, key: str, work: _Work) -> int:
        """Take a queue's stored entries back: its memory window's worth of messages, the
        sequence numbers of the rest (paged out). Return the highest sequence number held."""
        policy_window = self._policy_of(queue).memory_window
        start = 1
        while (
            (window := policy_window) is None or queue.waiting < window
        ) and self._memory.used < self._memory.stored_ceiling:
            want = _RECOVERY_PAGE if window is None else min(_RECOVERY_PAGE, window - queue.waiting)
            page = self._store.read_entries(key, start, None, want)
            for stored in page:
                self._admit(queue, self._entry_from_store(stored), work)
            if page:
                start = page[-1].seq + 1
            if len(page) < want:
                return start - 1
        while True:
            seqs = self._store.read_sequences(key, start, _SEQUENCE_PAGE)
            for seq in seqs:
                queue.page_out(seq, None)
            if seqs:
                start = seqs[-1] + 1
            if len(seqs) < _SEQUENCE_PAGE:
                return start - 1

    @staticmethod
    def _entry_from_store(stored: StoredEntry) -> Entry:
        return Entry(
            stored.seq,
            stored.message,
            delivery_count=stored.delivery_count,
            stored=True,
            size=message_size(stored.message),
        )

    # -- internals: the memory budget ------------------------------------------------------------

    def _relieve_memory(
        self, work: _Work
    ) -> Sequence[tuple[Callable[[JMSException], None], JMSException]]:
        """After a send or commit left the count past the budget (stored messages never take it
        there): close the slowest non-durable subscriber, then hold producers back if that was
        not enough. Returns the closed connections' ``on_close`` and why, to be called once the
        lock is released."""
        if self._memory.producers_blocked:
            return ()
        closed = self._close_slow_consumer(work)
        if self._memory.used > self._memory.ceiling:
            self._memory.producers_blocked = True
            self._memory.producer_blocks += 1
            logger.warning(
                "memory budget reached: messages held take %d bytes, max_memory is %d; producers "
                "are held back until it falls to %d bytes",
                self._memory.used,
                self._memory.limit,
                int(self._memory.ceiling * _LOW_WATER),
            )
        return closed

    def _close_slow_consumer(
        self, work: _Work
    ) -> list[tuple[Callable[[JMSException], None], JMSException]]:
        """End the non-durable subscription holding the most memory, if it holds
        ``_SLOW_CONSUMER_SHARE`` of the budget or more, closing its consumers' connections."""
        held, slowest = max(
            (
                (subscription.queue.memory, subscription)
                for topic in self._topics.values()
                for subscription in topic.subscriptions
                if not subscription.durable
            ),
            key=itemgetter(0),
            default=(0, None),
        )
        if slowest is None or held < self._memory.ceiling * _SLOW_CONSUMER_SHARE:
            return []
        queue = slowest.queue
        reason = (
            f"slow consumer: {queue.name} on {slowest.topic} held {queue.depth} messages "
            f"({held} bytes) when the broker's memory budget (max_memory {self._memory.limit}"
            " bytes) was reached; the subscription is ended and its connection closed"
        )
        logger.warning("%s", reason)
        self._memory.slow_consumers_closed += 1
        closed: list[tuple[Callable[[JMSException], None], JMSException]] = []
        for connection_id in {consumer.connection_id for consumer in queue.consumers}:
            connection = self._connections.pop(connection_id)
            self._drop_connection(connection, work)
            if connection.on_close is not None:
                closed.append((connection.on_close, ResourceAllocationException(reason)))
        return closed

    @staticmethod
    def _tell_closed(
        closed: Sequence[tuple[Callable[[JMSException], None], JMSException]],
    ) -> None:
        """Call the ``on_close`` of connections the broker closed (without its lock)."""
        for on_close, error in closed:
            try:
                on_close(error)
            except Exception:
                logger.exception("the on_close callback of a closed connection failed")

    def _memory_freed(self) -> None:
        """Producers held back may go on: the memory held fell to the low-water mark."""
        self._memory.producers_blocked = False
        logger.warning(
            "memory budget: messages held take %d bytes again (max_memory %d); producers go on",
            self._memory.used,
            self._memory.limit,
        )
        waiters, self._memory.waiters = self._memory.waiters, []
        for callback in waiters:
            try:
                callback()
            except Exception:
                logger.exception("a when_memory_available callback failed")

    # -- internals: paging -----------------------------------------------------------------------

    def _page_in_if_room(self, queue: MessageQueue) -> None:
        """Ask the pager for the next page of ``queue`` if its memory window is half empty."""
        if not queue.paged or queue.paging_in or queue.deleted or queue.store_key is None:
            return
        window = self._policy_of(queue).memory_window
        if self._memory.used >= self._memory.stored_ceiling:
            if queue.waiting:
                return
            window = _BUDGET_PAGE
        room = queue.paged if window is None else window - queue.waiting
        if window is not None and queue.waiting > window // 2:
            return
        first_seq, last_seq, count = queue.paged_front(min(room, _PAGE_IN_LIMIT))
        queue.paging_in = True
        self._pager.request(PageRequest(queue, queue.store_key, first_seq, last_seq, count))

    def _paged_in(self, request: PageRequest, entries: list[StoredEntry] | None) -> None:
        """The pager read a page: admit its entries (on the pager's thread)."""
        with self._lock:
            queue = request.queue
            queue.paging_in = False
            if self._closed or queue.deleted or entries is None:
                return
            work = _Work(self._clock())
            missing = 0
            for stored in entries:
                found, skipped = queue.take_paged(stored.seq)
                missing += skipped
                if found:  # else consumed by a range meanwhile (acknowledge_through)
                    self._admit(queue, self._entry_from_store(stored), work, arrived=False)
            missing += queue.skip_paged_below(request.last_seq + 1)
            if missing:
                logger.warning(
                    "%s: %d paged-out messages between sequence %d and %d were not in the store "
                    "(their sends failed); they are skipped",
                    queue.name,
                    missing,
                    request.first_seq,
                    request.last_seq,
                )
            work.paging.add(queue)
            completion = self._finish(work)
        try:
            completion.wait()
        except JMSException:
            logger.exception("%s: the store failed a batch while paging in", queue.name)
