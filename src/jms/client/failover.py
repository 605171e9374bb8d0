"""``failover:`` URLs: a connection that moves to whichever broker of a list is active.

``failover:(stomp://h1:61613,stomp://h2:61613)?initialReconnectDelay=100&maxReconnectAttempts=20``
(ActiveMQ's form; ``failover:stomp://h1:61613,stomp://h2:61613`` too) names STOMP brokers of
which one serves at a time — an active ``jms broker`` and its standbys on one PostgreSQL store
(docs/ha.md). ``FailoverTransport`` holds one ``StompTransport`` to the broker that answered and,
when that connection is lost, opens another (trying the URLs in turn, waiting between rounds)
while the application keeps its ``Connection`` and ``Session`` objects:

- consumers are subscribed again on the new connection; what the old one had delivered but the
  application had not acknowledged comes back from the broker as redelivered (its acknowledgement
  is dropped: it names a delivery of a connection that is gone), and what waited in the sessions'
  buffers is dropped there (``on_interrupted``), to come back the same way;
- a transaction open across the failover is rolled back: its sends and acknowledgements are
  dropped and its ``commit`` raises ``TransactionRolledBackException``;
- a non-transacted send whose receipt the lost connection never brought back is sent again,
  marked as a resend; the broker drops it if it had it already (``jms.broker.audit``), so the
  failover creates no duplicate;
- calls that need a broker (sends, commits, new consumers, browsing, range reads) wait while no
  broker answers; ``on_lost`` (the connection's ``ExceptionListener``) hears only that the
  transport gave up, after ``maxReconnectAttempts`` rounds.

Temporary destinations belong to the connection that created them and do not survive a failover.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Final, TypeVar
from urllib.parse import parse_qsl

from jms.broker import (
    BatchMarker,
    BrowsePage,
    ConsumerSpec,
    Delivery,
    DeliverySink,
    EncodedBrowsePage,
    StagedRange,
)
from jms.client.stomp_transport import StompTransport, parse_stomp_url
from jms.client.transport import RangeSource, SendDone, Transport
from jms.errors import IllegalStateException, JMSException, TransactionRolledBackException
from jms.message import Destination, Message, Queue, TemporaryQueue, TemporaryTopic, Topic
from jms.message.codec import decode, encode

__all__ = [
    "FAILOVER_SCHEME",
    "FailoverOptions",
    "FailoverTransport",
    "broker_urls",
    "parse_failover_url",
    "uses_tls",
]

logger = logging.getLogger(__name__)

FAILOVER_SCHEME: Final = "failover:"

_T = TypeVar("_T")

#: Opens a STOMP transport to one URL, reporting its loss to the callback.
StompOpener = Callable[[str, str | None, Callable[[JMSException], None]], StompTransport]


@dataclass(frozen=True, slots=True)
class FailoverOptions:
    """The options of a ``failover:`` URL, by ActiveMQ's names (times in milliseconds). A round
    tries every URL once; between rounds the transport waits ``initialReconnectDelay``, then,
    with ``useExponentialBackOff``, ``backOffMultiplier`` times longer each round, up to
    ``maxReconnectDelay``. After a connection is lost it makes up to ``maxReconnectAttempts``
    rounds (-1: no limit, 0: none); the first connection gets 1 + ``startupMaxReconnectAttempts``
    rounds (-1: no limit). ``randomize`` tries the URLs in a random order each round."""

    # camelCase: the names are the URL options, ActiveMQ's.
    initialReconnectDelay: int = 10
    maxReconnectDelay: int = 30_000
    useExponentialBackOff: bool = True
    backOffMultiplier: float = 2.0
    maxReconnectAttempts: int = -1
    startupMaxReconnectAttempts: int = 0
    randomize: bool = True

    def delays_ms(self) -> Iterable[float]:
        """The waits between rounds, in order (endless)."""
        delay = float(self.initialReconnectDelay)
        while True:
            yield min(delay, self.maxReconnectDelay)
            if self.useExponentialBackOff:
                delay = min(delay * self.backOffMultiplier, self.maxReconnectDelay)


def parse_failover_url(url: str) -> tuple[tuple[str, ...], FailoverOptions]:
    """The broker URLs and options of ``failover:(URL,URL...)?NAME=VALUE&...`` (or
    ``failover:URL,URL...?...``); ``JMSException`` saying what is wrong, and with which value."""
    if not url.startswith(FAILOVER_SCHEME):
        raise JMSException(
            f"{url!r} is not a failover URL; expected failover:(stomp://HOST:PORT,...)"
        )
    rest = url[len(FAILOVER_SCHEME) :]
    if rest.startswith("("):
        inner, closing, query = rest[1:].partition(")")
        if not closing:
            raise JMSException(f"failover URL {url!r}: the '(' before the broker URLs has no ')'")
        if query and not query.startswith("?"):
            raise JMSException(
                f"failover URL {url!r}: expected '?' and options after ')', got {query!r}"
            )
        query = query[1:]
    else:
        inner, _, query = rest.partition("?")
    urls = tuple(part.strip() for part in inner.split(","))
    if not inner.strip() or not all(urls):
        raise JMSException(
            f"failover URL {url!r} lists an empty broker URL; expected "
            "failover:(stomp://HOST:PORT,stomp://HOST:PORT)"
        )
    for broker_url in urls:
        try:
            parse_stomp_url(broker_url)
        except JMSException:
            raise JMSException(
                f"failover URL {url!r}: {broker_url!r} is not a STOMP broker URL; a failover URL "
                "lists stomp://HOST:PORT and stomp+ssl://HOST:PORT URLs"
            ) from None
    return urls, _parse_options(url, query)


def broker_urls(url: str) -> tuple[str, ...]:
    """The broker URLs ``url`` names: those a failover URL lists, else ``url`` itself."""
    return parse_failover_url(url)[0] if url.startswith(FAILOVER_SCHEME) else (url,)


def uses_tls(url: str) -> bool:
    """Whether ``url`` is a ``stomp+ssl://`` URL or a failover URL listing one (so that an
    ``ssl_context`` and the PEM files that make it apply)."""
    return any(broker_url.startswith("stomp+ssl://") for broker_url in broker_urls(url))


def _parse_options(url: str, query: str) -> FailoverOptions:
    known = {field.name: field.type for field in fields(FailoverOptions)}
    values: dict[str, object] = {}
    for name, text in parse_qsl(query, keep_blank_values=True):
        if name not in known:
            raise JMSException(
                f"failover URL {url!r}: unknown option {name!r}; the options are "
                + ", ".join(known)
            )
        values[name] = _option_value(url, name, text, known[name])
    options = FailoverOptions(**values)  # type: ignore[arg-type]
    for name in ("initialReconnectDelay", "maxReconnectDelay"):
        if getattr(options, name) < 0:
            raise JMSException(
                f"failover URL {url!r}: option {name} is {getattr(options, name)}; "
                "expected milliseconds, 0 or more"
            )
    for name in ("maxReconnectAttempts", "startupMaxReconnectAttempts"):
        if getattr(options, name) < -1:
            raise JMSException(
                f"failover URL {url!r}: option {name} is {getattr(options, name)}; "
                "expected a count, or -1 for no limit"
            )
    if options.backOffMultiplier < 1:
        raise JMSException(
            f"failover URL {url!r}: option backOffMultiplier is {options.backOffMultiplier}; "
            "expected a number of at least 1"
        )
    return options


def _option_value(url: str, name: str, text: str, kind: object) -> object:
    if kind in (bool, "bool"):
        if text.lower() not in ("true", "false"):
            raise JMSException(
                f"failover URL {url!r}: option {name} is {text!r}; expected true or false"
            )
        return text.lower() == "true"
    try:
        return float(text) if kind in (float, "float") else int(text)
    except ValueError:
        expected = "a number" if kind in (float, "float") else "a whole number"
        raise JMSException(
            f"failover URL {url!r}: option {name} is {text!r}; expected {expected}"
        ) from None


class _Link:
    """One STOMP connection of the failover transport: ``transport`` once it is open."""

    __slots__ = ("transport",)

    def __init__(self) -> None:
        self.transport: StompTransport | None = None

    @property
    def open(self) -> StompTransport:
        assert self.transport is not None
        return self.transport


class _Consumer:
    __slots__ = ("inner_id", "link", "outer_sink", "sink", "spec")

    def __init__(self, spec: ConsumerSpec, sink: DeliverySink) -> None:
        self.spec = spec
        self.sink = sink  # the session's
        self.outer_sink: DeliverySink = sink  # what the link delivers to (renumbers tags)
        self.link: _Link | None = None  # the link it is subscribed on
        self.inner_id: int | None = None  # its id there, once known


class _Transaction:
    __slots__ = ("doomed", "inner_id", "link")

    def __init__(self, link: _Link, inner_id: int) -> None:
        self.link = link
        self.inner_id = inner_id
        self.doomed = False  # it acknowledged deliveries of a lost connection


class FailoverTransport(Transport):
    """A ``Transport`` over whichever of ``urls`` is active; see the module docstring.

    ``open_stomp(url, client_id, on_lost)`` opens one connection; ``on_lost`` is told once when
    the transport gives up, ``on_interrupted`` each time a connection is lost (before another
    is opened)."""

    def __init__(
        self,
        urls: Sequence[str],
        options: FailoverOptions,
        open_stomp: StompOpener,
        client_id: str | None,
        on_lost: Callable[[JMSException], None],
        on_interrupted: Callable[[], None],
    ) -> None:
        self._urls = tuple(urls)
        self._options = options
        self._open_stomp = open_stomp
        self._client_id = client_id
        self._on_lost = on_lost
        self._on_interrupted = on_interrupted
        self._changed = threading.Condition(threading.Lock())
        self._consumer_ids = itertools.count(1)
        self._transaction_ids = itertools.count(1)
        self._tags = itertools.count(1)
        self._consumers: dict[int, _Consumer] = {}
        self._transactions: dict[int, _Transaction] = {}
        self._inner_tags: dict[int, int] = {}  # this transport's delivery tag -> the link's
        self._resends: list[tuple[bytes, SendDone]] = []
        self._reconnecting = False
        self._gave_up: JMSException | None = None
        self._closed = False
        self._link = _Link()
        startup = options.startupMaxReconnectAttempts
        link = self._connect(-1 if startup < 0 else 1 + startup, "connecting")
        if link is None:
            raise self._gave_up or JMSException("the failover transport was closed")
        self._link = link
        lost = link.open.lost
        if lost is not None:  # before it was ours, so its loss went unheeded
            self._lost(link, lost)

    def __repr__(self) -> str:
        transport = self._link.transport
        where = transport.where if transport is not None else "nowhere"
        return f"<FailoverTransport {', '.join(self._urls)} at {where}>"

    # -- connecting ----------------------------------------------------------------------------

    def _connect(self, rounds: int, what: str) -> _Link | None:
        """A new open link, after up to ``rounds`` rounds over the URLs (-1 or less: no limit);
        None once closed. Giving up sets ``_gave_up``."""
        errors: list[str] = []
        delays = iter(self._options.delays_ms())
        for round_number in itertools.count(1):
            if 0 <= rounds < round_number:
                break
            urls = list(self._urls)
            if self._options.randomize:
                random.shuffle(urls)
            for url in urls:
                if self._closed:
                    return None
                link = _Link()
                try:
                    link.transport = self._open_stomp(
                        url, self._client_id, lambda error, link=link: self._lost(link, error)
                    )
                except JMSException as error:
                    errors.append(f"{url}: {error}")
                    continue
                return link
            with self._changed:
                if self._changed.wait_for(lambda: self._closed, next(delays) / 1000):
                    return None
        tried = "; ".join(errors[-len(self._urls) :]) or "no round allowed"
        self._gave_up = JMSException(
            f"failover gave up {what} after {len(errors) // max(1, len(self._urls))} round(s) "
            f"over {', '.join(self._urls)}: {tried}"
        )
        return None

    def _lost(self, link: _Link, error: JMSException) -> None:
        """``link``'s connection is lost (told on its reader thread, or a writer's)."""
        with self._changed:
            if self._closed or link is not self._link or self._reconnecting:
                return
            self._reconnecting = True
            self._inner_tags.clear()
            self._transactions.clear()
        logger.warning("connection lost (%s); failing over", error)
        self._on_interrupted()
        threading.Thread(
            target=self._fail_over, name=f"jms-failover[{id(self):x}]", daemon=True
        ).start()

    def _fail_over(self) -> None:
        while True:
            link = self._connect(self._options.maxReconnectAttempts, "reconnecting")
            if link is None:
                self._give_up()
                return
            with self._changed:
                self._link = link
                consumers = list(self._consumers.values())
            for consumer in consumers:
                self._subscribe(link, consumer)
            if self._resend_all(link):
                logger.warning("failed over to %s", link.open.where)
                return
            with self._changed:
                self._inner_tags.clear()
                self._transactions.clear()

    def _resend_all(self, link: _Link) -> bool:
        """Send again, on ``link``, the sends the lost connection never answered; True once
        none is left and the failover is over, False if ``link`` is lost too."""
        while True:
            with self._changed:
                if link.open.lost is not None:
                    return False
                resends, self._resends = self._resends, []
                if not resends:
                    self._reconnecting = False
                    self._changed.notify_all()
                    return True
            for encoded, on_done in resends:
                self._send_async_on(link, encoded, on_done, resend=True)

    def _give_up(self) -> None:
        with self._changed:
            closed = self._closed
            gave_up = self._gave_up = self._gave_up or JMSException(
                "the failover transport was closed"
            )
            resends, self._resends = self._resends, []
            self._changed.notify_all()
        for _, on_done in resends:
            on_done(gave_up)
        if not closed:
            self._on_lost(gave_up)

    def _current(self) -> _Link:
        """The open link, once no failover is under way; raises once the transport gave up."""
        with self._changed:
            self._changed.wait_for(
                lambda: not self._reconnecting or self._gave_up is not None or self._closed
            )
            if self._gave_up is not None:
                raise self._gave_up
            if self._closed:
                raise IllegalStateException("this connection is closed")
            return self._link

    def _retrying(self, operation: Callable[[StompTransport, bool], _T]) -> _T:
        """``operation(transport, again)`` on the open link; on another link (``again`` True)
        if its connection is lost meanwhile."""
        again = False
        while True:
            link = self._current()
            try:
                return operation(link.open, again)
            except JMSException:
                if link.open.lost is None:
                    raise
            self._wait_past(link)
            again = True

    def _wait_past(self, link: _Link) -> None:
        """Wait until ``link`` was replaced (or the transport gave up or was closed)."""
        with self._changed:
            self._changed.wait_for(
                lambda: self._link is not link or self._gave_up is not None or self._closed
            )

    def _quietly(self, link: _Link, operation: Callable[[StompTransport], object]) -> None:
        """``operation`` on ``link``, whose loss makes it pointless rather than wrong."""
        try:
            operation(link.open)
        except JMSException:
            if link.open.lost is None:
                raise

    # -- Transport: destinations ---------------------------------------------------------------

    def set_client_id(self, client_id: str) -> None:
        self._retrying(lambda inner, _: inner.set_client_id(client_id))
        self._client_id = client_id

    def create_temporary_queue(self) -> TemporaryQueue:
        return self._retrying(lambda inner, _: inner.create_temporary_queue())

    def create_temporary_topic(self) -> TemporaryTopic:
        return self._retrying(lambda inner, _: inner.create_temporary_topic())

    def delete_temporary_destination(self, destination: Destination) -> None:
        self._current().open.delete_temporary_destination(destination)

    # -- Transport: producing ------------------------------------------------------------------

    def send(self, message: Message, transaction_id: int | None) -> None:
        if transaction_id is None:
            self._retrying(lambda inner, again: inner.send(message, None, resend=again))
            return
        transaction = self._live_transaction(transaction_id)
        if transaction is not None:
            # Lost with its connection, the send is rolled back with the transaction.
            self._quietly(transaction.link, lambda inner: inner.send(message, transaction.inner_id))

    def send_async(self, message: Message, transaction_id: int | None, on_done: SendDone) -> None:
        if transaction_id is None:
            self._send_async_on(self._current(), encode(message), on_done, resend=False)
            return
        transaction = self._live_transaction(transaction_id)
        if transaction is None:
            on_done(None)  # the commit says the transaction was rolled back
            return
        link = transaction.link

        def answered(error: Exception | None) -> None:
            on_done(None if error is not None and link.open.lost is not None else error)

        try:
            link.open.send_async(message, transaction.inner_id, answered)
        except JMSException:
            if link.open.lost is None:
                raise
            on_done(None)

    def _send_async_on(
        self, link: _Link, encoded: bytes, on_done: SendDone, *, resend: bool
    ) -> None:
        """Send the message ``encoded`` on ``link`` (a ``resend`` is marked as one); if its
        connection is lost before the receipt, keep it to send again on the next link."""

        def answered(error: Exception | None) -> None:
            if error is not None and link.open.lost is not None and not self._closed:
                with self._changed:
                    if self._link is link or self._reconnecting:
                        self._resends.append((encoded, on_done))
                        return
                self._send_async_on(self._current(), encoded, on_done, resend=True)
                return
            on_done(error)

        try:
            link.open.send_async(decode(encoded), None, answered, resend=resend)
        except JMSException as error:
            answered(error)

    # -- Transport: transactions ---------------------------------------------------------------

    def begin(self) -> int:
        while True:
            link = self._current()
            try:
                inner_id = link.open.begin()
                break
            except JMSException:
                if link.open.lost is None:
                    raise
            self._wait_past(link)
        transaction_id = next(self._transaction_ids)
        with self._changed:
            # One begun on a connection lost meanwhile is not kept: its commit raises.
            if self._link is link and link.open.lost is None:
                self._transactions[transaction_id] = _Transaction(link, inner_id)
        return transaction_id

    def _live_transaction(self, transaction_id: int) -> _Transaction | None:
        """The transaction, or None if it was on a connection that is lost."""
        with self._changed:
            return self._transactions.get(transaction_id)

    def commit(self, transaction_id: int) -> None:
        with self._changed:
            transaction = self._transactions.pop(transaction_id, None)
        if transaction is None or transaction.doomed:
            if transaction is not None:
                self._quietly(transaction.link, lambda inner: inner.rollback(transaction.inner_id))
            raise TransactionRolledBackException(
                "the connection failed over to another broker while this transaction was open: "
                "it was rolled back (its messages are redelivered, its sends dropped)"
            )
        link = transaction.link
        if link.open.lost is not None:
            raise TransactionRolledBackException(
                f"the connection to {link.open.where} was lost while this transaction was open: "
                "it was rolled back (its messages are redelivered, its sends dropped)"
            )
        try:
            link.open.commit(transaction.inner_id)
        except JMSException as error:
            if link.open.lost is None:
                raise
            raise JMSException(
                f"the outcome of this commit is unknown: the connection to {link.open.where} "
                "was lost before the broker answered it (the transaction is either committed or "
                "rolled back on the broker now active)",
                linked_exception=error,
            ) from error

    def rollback(self, transaction_id: int) -> None:
        with self._changed:
            transaction = self._transactions.pop(transaction_id, None)
        if transaction is not None:
            self._quietly(transaction.link, lambda inner: inner.rollback(transaction.inner_id))

    # -- Transport: consuming ------------------------------------------------------------------

    def add_consumer(self, spec: ConsumerSpec, sink: DeliverySink) -> int:
        consumer_id = next(self._consumer_ids)
        consumer = _Consumer(spec, sink)

        def renumbered(delivery: Delivery) -> None:
            with self._changed:
                if consumer.link is not self._link:
                    return  # a delivery of a lost connection: it comes again on the new one
                tag = next(self._tags)
                self._inner_tags[tag] = delivery.tag
            sink(Delivery(consumer_id, tag, delivery.seq, delivery.message))

        consumer.outer_sink = renumbered
        while True:
            link = self._current()
            with self._changed:
                # Registered while ``link`` is current: a failover from now on subscribes it.
                registered = self._link is link
                if registered:
                    self._consumers[consumer_id] = consumer
                    consumer.link = link
            if registered:
                break
        try:
            inner_id = link.open.add_consumer(spec, renumbered)
        except JMSException:
            if link.open.lost is None:
                with self._changed:
                    self._consumers.pop(consumer_id, None)
                raise
            return consumer_id  # the failover subscribes it on the next link
        with self._changed:
            if consumer.link is link:
                consumer.inner_id = inner_id
        return consumer_id

    def _subscribe(self, link: _Link, consumer: _Consumer) -> None:
        """Subscribe ``consumer`` again, on the new ``link``."""
        with self._changed:
            consumer.link, consumer.inner_id = link, None
        try:
            inner_id = link.open.add_consumer(consumer.spec, consumer.outer_sink)
        except JMSException as error:
            if link.open.lost is None:
                logger.warning(
                    "after failing over to %s, a consumer of %s could not subscribe again: %s",
                    link.open.where,
                    consumer.spec.destination,
                    error,
                )
            return
        with self._changed:
            removed = all(registered is not consumer for registered in self._consumers.values())
            if consumer.link is link:
                consumer.inner_id = inner_id
        if removed:  # closed while it was being subscribed again
            self._quietly(link, lambda inner: inner.remove_consumer(inner_id))

    def _subscribed(self, consumer_id: int, forget: bool) -> tuple[_Link, int] | None:
        """The open link and the consumer's id there, if it is subscribed on it."""
        with self._changed:
            consumer = (self._consumers.pop if forget else self._consumers.get)(consumer_id, None)
            if consumer is None or consumer.link is not self._link or consumer.inner_id is None:
                return None
            return self._link, consumer.inner_id

    def remove_consumer(self, consumer_id: int) -> None:
        subscribed = self._subscribed(consumer_id, forget=True)
        if subscribed is not None:
            link, inner_id = subscribed
            self._quietly(link, lambda inner: inner.remove_consumer(inner_id))

    def credit(self, consumer_id: int, count: int) -> None:
        subscribed = self._subscribed(consumer_id, forget=False)
        if subscribed is not None:
            link, inner_id = subscribed
            self._quietly(link, lambda inner: inner.credit(inner_id, count))

    def _current_tags(self, tags: Iterable[int]) -> tuple[_Link, list[int], bool]:
        """The open link, the inner tags of ``tags`` delivered on it, and whether any of
        ``tags`` was delivered on a lost connection."""
        inner: list[int] = []
        stale = False
        with self._changed:
            for tag in tags:
                inner_tag = self._inner_tags.pop(tag, None)
                if inner_tag is None:
                    stale = True
                else:
                    inner.append(inner_tag)
            return self._link, inner, stale

    def acknowledge(self, tags: Iterable[int], transaction_id: int | None = None) -> None:
        link, inner, stale = self._current_tags(tags)
        if transaction_id is None:
            if inner:
                self._quietly(link, lambda transport: transport.acknowledge(inner))
            return
        transaction = self._live_transaction(transaction_id)
        if transaction is None:
            # Rolled back with its connection; what it took since comes back too.
            if inner:
                self._quietly(link, lambda transport: transport.requeue(inner, ()))
            return
        if stale:
            transaction.doomed = True
        if inner:
            self._quietly(
                link, lambda transport: transport.acknowledge(inner, transaction.inner_id)
            )

    def requeue(self, delivered: Iterable[int] = (), undelivered: Iterable[int] = ()) -> None:
        link, inner_delivered, _ = self._current_tags(delivered)
        _, inner_undelivered, _ = self._current_tags(undelivered)
        if inner_delivered or inner_undelivered:
            self._quietly(
                link, lambda transport: transport.requeue(inner_delivered, inner_undelivered)
            )

    def unsubscribe(self, name: str) -> None:
        self._retrying(lambda inner, _: inner.unsubscribe(name))

    # -- Transport: browsing and range reads ---------------------------------------------------

    def browse(self, queue: Queue, selector: str | None, start_seq: int, limit: int) -> BrowsePage:
        return self._retrying(lambda inner, _: inner.browse(queue, selector, start_seq, limit))

    def browse_range(
        self,
        source: RangeSource,
        selector: str | None,
        start_seq: int,
        end_seq: int | None,
        limit: int,
    ) -> BrowsePage:
        return self._retrying(
            lambda inner, _: inner.browse_range(source, selector, start_seq, end_seq, limit)
        )

    def browse_range_encoded(
        self,
        source: RangeSource,
        selector: str | None,
        start_seq: int,
        end_seq: int | None,
        limit: int,
    ) -> EncodedBrowsePage:
        return self._retrying(
            lambda inner, _: inner.browse_range_encoded(source, selector, start_seq, end_seq, limit)
        )

    def acknowledge_through(
        self, source: RangeSource, seq: int, selector: str | None = None, start_seq: int = 1
    ) -> int:
        return self._retrying(
            lambda inner, _: inner.acknowledge_through(source, seq, selector, start_seq)
        )

    def first_not_due(
        self, source: RangeSource, selector: str | None, start_seq: int, end_seq: int | None
    ) -> int | None:
        return self._retrying(
            lambda inner, _: inner.first_not_due(source, selector, start_seq, end_seq)
        )

    def last_sequence(self, destination: Queue | Topic) -> int:
        return self._retrying(lambda inner, _: inner.last_sequence(destination))

    def stage_encoded(self, queue: Queue, encoded: Sequence[bytes]) -> list[StagedRange]:
        return self._retrying(lambda inner, _: inner.stage_encoded(queue, encoded))

    def publish_staged(self, staged: Sequence[StagedRange], marker: BatchMarker | None) -> int:
        return self._retrying(lambda inner, _: inner.publish_staged(staged, marker))

    # -- closing -------------------------------------------------------------------------------

    def close(self) -> None:
        with self._changed:
            if self._closed:
                return
            self._closed = True
            self._changed.notify_all()
            transport = self._link.transport
        if transport is not None:
            transport.close()
