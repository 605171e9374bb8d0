"""The options of ``format("jms")``, read once and checked, for the source and for the sink.

Option names are case-insensitive, as Spark's are; the names and their meaning follow Spark's
Kafka source where one exists (``startingOffsets``, ``endingOffsets``, ``maxOffsetsPerTrigger``,
``failOnDataLoss``, ``minPartitions``). Every refusal is a ``ValueError`` naming the option and
the value given. This module only reads text: it never connects to a broker or opens a store.
"""

from __future__ import annotations

import difflib
import hashlib
import posixpath
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from jms.client import (
    Connection,
    ConnectionFactory,
    RangeSource,
    TopicSubscription,
    client_ssl_context,
)
from jms.client.failover import uses_tls
from jms.errors import JMSException
from jms.message import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from jms.selector import Selector
from jms.spark.offsets import LATEST, parse_offset_option

__all__ = [
    "COMMITS_PREFIX",
    "DEFAULT_MAX_OFFSETS_PER_PARTITION",
    "DEFAULT_PAGE_SIZE",
    "STAGING_PREFIX",
    "BrokerAddress",
    "SinkOptions",
    "SourceOptions",
    "sink_queue_refusal",
]

#: Sequence numbers one partition covers at most unless ``maxOffsetsPerPartition`` says otherwise.
DEFAULT_MAX_OFFSETS_PER_PARTITION: Final = 100_000
#: Messages fetched per broker page, and rows per Arrow batch, unless ``pageSize`` says otherwise:
#: big enough that a page's round trip and a batch's fixed costs do not count (measured: pages of
#: 1000 read ~40-50k msg/s, pages of 5000 ~65-78k with 1 KiB messages), small enough to stay a
#: few MiB per page.
DEFAULT_PAGE_SIZE: Final = 5000

#: The names of the sink's own queues: a sink's staging queues, and the queue of its batch markers.
STAGING_PREFIX: Final = "jms.spark.staging."
COMMITS_PREFIX: Final = "jms.spark.commits."

_BROKER_OPTIONS: Final = ("url", "user", "password", "ca", "cert", "key")
_SOURCE_OPTIONS: Final = (
    *_BROKER_OPTIONS,
    "store",
    "destination",
    "subscriptionName",
    "clientId",
    "selector",
    "startingOffsets",
    "endingOffsets",
    "maxOffsetsPerTrigger",
    "failOnDataLoss",
    "minPartitions",
    "maxOffsetsPerPartition",
    "pageSize",
)
# A streaming write is also given the query's checkpointLocation and queryName by Spark.
_SINK_OPTIONS: Final = (
    *_BROKER_OPTIONS,
    "destination",
    "sinkId",
    "batchId",
    "checkpointLocation",
    "queryName",
)

_TRUE: Final = frozenset({"true"})
_BOOLEANS: Final = frozenset({"true", "false"})


class _Options:
    """The options Spark passed, looked up case-insensitively."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self._values = {str(key).lower(): value for key, value in options.items()}

    def text(self, name: str) -> str | None:
        value = self._values.get(name.lower())
        return None if value is None else str(value)

    def integer(
        self, name: str, default: int | None, minimum: int, maximum: int | None = None
    ) -> int | None:
        text = self.text(name)
        if text is None:
            return default
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"option {name} is {text!r}; expected a whole number") from None
        if value < minimum:
            raise ValueError(f"option {name} is {text!r}; it must be at least {minimum}")
        if maximum is not None and value > maximum:
            raise ValueError(f"option {name} is {text!r}; it must be at most {maximum}")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        text = self.text(name)
        if text is None:
            return default
        if text.strip().lower() not in _BOOLEANS:
            raise ValueError(f"option {name} is {text!r}; expected true or false")
        return text.strip().lower() in _TRUE

    def only(self, known: tuple[str, ...], what: str) -> None:
        """Refuse an option not ``known``: a misspelt one would otherwise leave its default."""
        by_lower = {name.lower(): name for name in known}
        for given in self._values:
            if given in by_lower:
                continue
            if given == "path":
                raise ValueError(
                    f'format("jms") {what} take no path (load(...) or save(...) was given '
                    f"{self._values[given]!r}); give option destination"
                )
            close = difflib.get_close_matches(given, by_lower, n=1)
            hint = f"did you mean {by_lower[close[0]]}? " if close else ""
            raise ValueError(
                f'option {given} is not an option of format("jms") {what}; {hint}they take '
                f"{', '.join(known)} (docs/spark.md, Options)"
            )

    def refuse(self, name: str, why: str) -> None:
        text = self.text(name)
        if text is not None:
            raise ValueError(f"option {name} ({text!r}) {why}")


def _destination(options: _Options, name: str, *, required: bool) -> Queue | Topic | None:
    text = options.text(name)
    if text is None:
        if required:
            raise ValueError(f"option {name} is missing; give queue://NAME or topic://NAME")
        return None
    try:
        destination = Destination.parse(text.strip())
    except JMSException:
        raise ValueError(
            f"option {name} is {text!r}; expected queue://NAME or topic://NAME"
        ) from None
    if isinstance(destination, TemporaryQueue | TemporaryTopic):
        raise ValueError(
            f"option {name} is {text!r}: a temporary destination lives only as long as the "
            "connection that made it, so a pipeline cannot use it"
        )
    assert isinstance(destination, Queue | Topic)
    return destination


def _selector(options: _Options) -> str | None:
    text = options.text("selector")
    if text is None or not text.strip():
        return None
    try:
        Selector(text)
    except JMSException as error:
        raise ValueError(f"option selector is {text!r}: {error}") from None
    return text


@dataclass(frozen=True, slots=True)
class BrokerAddress:
    """How readers and writers reach the broker: its URL (``failover:(...)`` too, docs/ha.md),
    the login, and for ``stomp+ssl://`` the PEM files of a private CA (``ca``) and of a client
    certificate (``cert``, ``key``), paths that must exist where each reader and writer runs."""

    url: str
    user: str | None
    password: str | None
    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    @staticmethod
    def parse(options: Mapping[str, str]) -> BrokerAddress:
        """The address the options ``url``, ``user``, ``password``, ``ca``, ``cert``, ``key``
        give; ``ValueError`` names a missing or misplaced one."""
        return _broker(_Options(options))

    def factory(self, client_id: str | None = None) -> ConnectionFactory:
        ssl_context = None
        if uses_tls(self.url):
            ssl_context = client_ssl_context(self.ca, self.cert, self.key)
        return ConnectionFactory(self.url, client_id=client_id, ssl_context=ssl_context)

    def connect(self) -> Connection:
        return self.factory().create_connection(self.user, self.password)


def _broker(options: _Options) -> BrokerAddress:
    url = options.text("url")
    if url is None or not url.strip():
        raise ValueError(
            "option url is missing; give the broker's URL, e.g. stomp://HOST:61613 (Spark runs "
            "readers and writers in other processes, so they need a broker on the network)"
        )
    url = url.strip()
    try:
        tls = uses_tls(url)
    except JMSException as error:
        raise ValueError(f"option url: {error}") from None
    if not tls:
        for name in ("ca", "cert", "key"):
            options.refuse(name, f"is for a stomp+ssl:// broker URL; option url is {url!r}")
    if (options.text("cert") is None) != (options.text("key") is None):
        raise ValueError("options cert and key go together: a client certificate and its key")
    return BrokerAddress(
        url,
        options.text("user"),
        options.text("password"),
        options.text("ca"),
        options.text("cert"),
        options.text("key"),
    )


@dataclass(frozen=True, slots=True)
class SourceOptions:
    """What ``spark.read``/``readStream.format("jms")`` reads (see docs/spark.md, options).

    Exactly one of ``broker`` and ``store`` (a store directory, read-only) is set.
    ``starting``/``ending`` are next sequence numbers, ``EARLIEST`` or ``LATEST``.
    """

    broker: BrokerAddress | None
    store: str | None
    destination: Queue | Topic
    subscription_name: str | None
    client_id: str | None
    selector: str | None
    starting: int
    ending: int
    min_partitions: int
    max_offsets_per_partition: int
    max_offsets_per_trigger: int | None
    fail_on_data_loss: bool
    page_size: int

    @property
    def key(self) -> str:
        """The destination's text, the key of this source's offsets."""
        return str(self.destination)

    @property
    def source(self) -> RangeSource:
        """What the broker reads: the queue, or the named durable subscription of the topic."""
        if isinstance(self.destination, Topic):
            assert self.subscription_name is not None
            return TopicSubscription(self.destination, self.subscription_name, self.client_id)
        return self.destination

    @staticmethod
    def parse(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
        found = _Options(options)
        found.only(_SOURCE_OPTIONS, "reads")
        store = found.text("store")
        broker = None
        if store is not None:
            found.refuse("url", "cannot be given with option store: read a broker or a store")
            if streaming:
                raise ValueError(
                    f"option store ({store!r}) is for batch reads: a store directory does not "
                    "change while it is read; stream from the broker (option url) instead"
                )
            found.refuse(
                "selector",
                "is evaluated by a broker, and a store read has none: filter the DataFrame with "
                "jms.spark.selector_to_column(...) instead",
            )
        else:
            broker = _broker(found)
        destination = _destination(found, "destination", required=True)
        assert destination is not None
        subscription_name = found.text("subscriptionName")
        client_id = found.text("clientId")
        if isinstance(destination, Topic):
            if not subscription_name:
                raise ValueError(
                    f"option destination is {destination}, a topic, which keeps nothing for "
                    "readers: give option subscriptionName (and clientId, if the durable "
                    "subscription has one) to read a durable subscription of it"
                )
        else:
            for name in ("subscriptionName", "clientId"):
                found.refuse(name, f"names a durable subscription, but {destination} is a queue")
        key = str(destination)
        if streaming:
            found.refuse("endingOffsets", "is for batch reads; a stream has no end")
            ending = LATEST
        else:
            for name in ("maxOffsetsPerTrigger",):
                found.refuse(name, "is for streaming reads (spark.readStream)")
            ending_text = found.text("endingOffsets")
            ending = parse_offset_option(
                "endingOffsets",
                "latest" if ending_text is None else ending_text,
                key,
                earliest_allowed=False,
            )
        # Unlike Kafka's streams (latest), every read starts at the backlog by default: a queue
        # holds work to be done, and a durable subscription holds what was kept for its reader.
        starting_text = found.text("startingOffsets")
        if starting_text is None:
            starting_text = "earliest"
        starting = parse_offset_option("startingOffsets", starting_text, key, earliest_allowed=True)
        if starting >= 1 and ending >= 1 and starting > ending:
            raise ValueError(
                f"option startingOffsets ({starting}) is beyond option endingOffsets ({ending}) "
                f"for {key}"
            )
        min_partitions = found.integer("minPartitions", 1, 1)
        per_partition = found.integer(
            "maxOffsetsPerPartition", DEFAULT_MAX_OFFSETS_PER_PARTITION, 1
        )
        page_size = found.integer("pageSize", DEFAULT_PAGE_SIZE, 1)
        assert min_partitions is not None and per_partition is not None and page_size is not None
        return SourceOptions(
            broker=broker,
            store=store,
            destination=destination,
            subscription_name=subscription_name,
            client_id=client_id,
            selector=_selector(found),
            starting=starting,
            ending=ending,
            min_partitions=min_partitions,
            max_offsets_per_partition=per_partition,
            max_offsets_per_trigger=found.integer("maxOffsetsPerTrigger", None, 1),
            fail_on_data_loss=found.boolean("failOnDataLoss", True),
            page_size=page_size,
        )


@dataclass(frozen=True, slots=True)
class SinkOptions:
    """Where ``df.write``/``writeStream.format("jms")`` publishes (see docs/spark.md, the sink).

    ``destination`` None: each row names its own in a ``destination`` column. ``sink_id`` names
    the sink whose batch ids are remembered (idempotent batches): the ``sinkId`` option, else,
    for streams, a digest of ``checkpointLocation``. ``batch_id`` is a batch write's own
    ``batchId`` option (for ``foreachBatch``), which needs ``sinkId``.
    """

    broker: BrokerAddress
    destination: Queue | Topic | None
    sink_id: str | None
    batch_id: int | None

    @staticmethod
    def parse(options: Mapping[str, str], *, streaming: bool) -> SinkOptions:
        found = _Options(options)
        found.only(_SINK_OPTIONS, "writes")
        broker = _broker(found)
        sink_id = found.text("sinkId")
        if sink_id is not None:
            sink_id = sink_id.strip()
            if not sink_id or not all(c.isalnum() or c in "-_." for c in sink_id):
                raise ValueError(
                    f"option sinkId is {found.text('sinkId')!r}; use letters, digits, '-', '_' "
                    "and '.' (it becomes part of queue names)"
                )
        batch_id = found.integer("batchId", None, 0, 2**63 - 1)
        if streaming:
            found.refuse("batchId", "is for batch writes; a stream numbers its own batches")
            if sink_id is None:
                checkpoint = found.text("checkpointLocation")
                if checkpoint is None:
                    raise ValueError(
                        "a streaming write to jms needs option sinkId or option "
                        "checkpointLocation (given with .option(), not only as a Spark conf): "
                        "the sink remembers which batches it published under that name"
                    )
                named = _checkpoint_identity(checkpoint).encode("utf-8")
                sink_id = "ckpt-" + hashlib.sha256(named).hexdigest()[:20]
        elif batch_id is not None and sink_id is None:
            raise ValueError(
                f"option batchId ({batch_id}) needs option sinkId: a batch id is remembered per sink"
            )
        destination = _destination(found, "destination", required=False)
        if refusal := sink_queue_refusal(destination):
            raise ValueError(f"option destination is {destination}, {refusal}")
        return SinkOptions(
            broker=broker, destination=destination, sink_id=sink_id, batch_id=batch_id
        )


def sink_queue_refusal(destination: Destination | None) -> str | None:
    """Why rows cannot be published to ``destination`` when it is one of the sink's own queues
    (a row there could forge a batch marker or a staged range); None for any other."""
    if isinstance(destination, Queue) and destination.get_queue_name().startswith(
        (STAGING_PREFIX, COMMITS_PREFIX)
    ):
        return (
            f"a queue of the jms sink's own ({STAGING_PREFIX}*, {COMMITS_PREFIX}*), which no row "
            "may be published to"
        )
    return None


def _checkpoint_identity(location: str) -> str:
    """``location`` spelled one way, so that the spellings of one checkpoint name one sink: a
    trailing or doubled ``/`` dropped, a ``file:`` URI as its local path, a scheme in lower case."""
    text = location.strip()
    parts = urllib.parse.urlsplit(text)
    if not parts.scheme:
        return posixpath.normpath(text)
    path = posixpath.normpath(urllib.parse.unquote(parts.path)) if parts.path else ""
    if parts.scheme.lower() == "file":
        return path
    return f"{parts.scheme.lower()}://{parts.netloc}{path}"
