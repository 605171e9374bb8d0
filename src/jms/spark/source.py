"""The readers of ``format("jms")``: a destination (or a store: a directory or a PostgreSQL
database) as batches of rows in ``MESSAGE_SCHEMA``, read by sequence number range, in parallel
partitions.

Planning (``partitions``, ``initialOffset``, ``latestOffset``, ``commit``) runs in a Python process
next to the Spark driver; ``read`` runs in Python workers on executors, possibly on other
machines. So a partition carries everything it needs — the options and its range — and ``read``
opens its own connection (``jms.client``; a broker is reached only through it) or its own
read-only store snapshot (``jms.store.location.open_snapshot``). ``read`` never consumes: a
retried task reads the same messages again. For streams, ``latestOffset(start)`` is the one place that consumes (the cursor commit
``acknowledge_through``, from the stream's start up to ``start``): Spark plans a batch from
``start`` only once every batch before it is in the sink, so a query killed at any moment and
restarted from its checkpoint reads on where its last committed batch ended: nothing lost,
nothing twice (docs/spark.md, "Exactly once"). Starting a
stream on a topic creates its durable subscription when it does not exist yet — the only other
effect a reader has on the broker.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSourceReader,
    DataSourceStreamReader,
    Filter,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from jms.client import Connection, SequenceReader, Session, TopicSubscription
from jms.errors import InvalidDestinationException
from jms.spark.columnar import encoded_to_arrow
from jms.spark.offsets import (
    EARLIEST,
    LATEST,
    OffsetDict,
    SequenceRange,
    StreamOffset,
    offset_dict,
    split_range,
    stream_offset_of,
)
from jms.spark.options import SourceOptions
from jms.spark.pushdown import filter_to_selector

if TYPE_CHECKING:
    from jms.store.reading import SnapshotReader

__all__ = ["JmsBatchReader", "JmsStreamReader", "RangePartition", "read_range"]

logger = logging.getLogger(__name__)


class RangePartition(InputPartition):
    """One Spark task's share of a read: the sequence numbers ``start <= seq < end`` that
    ``selector`` (evaluated by the broker) matches."""

    def __init__(self, start: int, end: int, selector: str | None) -> None:
        super().__init__((start, end, selector))
        self.start = start
        self.end = end
        self.selector = selector

    def __repr__(self) -> str:
        return f"RangePartition({self.start}, {self.end}, {self.selector!r})"


def _connect(options: SourceOptions) -> Connection:
    assert options.broker is not None
    return options.broker.connect()


def _open_snapshot(options: SourceOptions) -> SnapshotReader:
    # The store layer is imported by a read of a store only: a read of a broker needs none of it.
    from jms.store.location import open_snapshot

    return open_snapshot(options.store or "")


def _store_pages(options: SourceOptions, part: RangePartition) -> Iterator[list[bytes]]:
    with _open_snapshot(options) as snapshot:
        key = snapshot.queue_key(options.destination, options.subscription_name, options.client_id)
        start = part.start
        while start < part.end:
            page = snapshot.read_encoded(key, start, part.end - 1, options.page_size)
            if not page:
                return
            yield [data for _, data in page]
            start = page[-1][0] + 1


def read_range(options: SourceOptions, part: RangePartition) -> Iterator[pa.RecordBatch]:
    """The messages of ``part`` as Arrow record batches in ``MESSAGE_SCHEMA``, one per page,
    decoded from the codec bytes the broker (or the store) ships straight into columns; consumes
    nothing."""
    if part.end <= part.start:
        return
    if options.store is not None:
        for encoded in _store_pages(options, part):
            yield encoded_to_arrow(encoded)
        return
    with _connect(options) as connection:
        reader = connection.create_session().create_sequence_reader(options.source, part.selector)
        for page in reader.read_encoded(part.start, part.end - 1, options.page_size):
            yield encoded_to_arrow(page.messages)


def _bounds(options: SourceOptions) -> tuple[int | None, int]:
    """(lowest number present, last number handed out) of the source; a planning step."""
    if options.store is not None:
        with _open_snapshot(options) as snapshot:
            key = snapshot.queue_key(
                options.destination, options.subscription_name, options.client_id
            )
            bounds = snapshot.sequence_bounds(key)
        return (None, 0) if bounds is None else bounds
    with _connect(options) as connection:
        reader = connection.create_session().create_sequence_reader(options.source)
        return reader.first_sequence(), reader.last_sequence()


def _resolve(offset: int, first: int | None, last: int) -> int:
    """A next sequence number for ``EARLIEST``/``LATEST``/a number, given the source's bounds."""
    if offset == EARLIEST:
        return first if first is not None else last + 1
    if offset == LATEST:
        return last + 1
    return offset


class JmsBatchReader(DataSourceReader):
    """``spark.read.format("jms")``: one offset range, split into partitions, read once.

    ``pushFilters`` turns simple filters on header columns into selector conditions the broker
    evaluates (``jms.spark.pushdown``); Spark keeps evaluating every other filter.
    """

    def __init__(self, options: SourceOptions) -> None:
        self._options = options
        self._pushed: list[str] = []

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        for candidate in filters:
            condition = None if self._options.store is not None else filter_to_selector(candidate)
            if condition is None:
                yield candidate
            else:
                self._pushed.append(condition)

    @property
    def selector(self) -> str | None:
        """The selector the broker applies: the ``selector`` option and every pushed filter."""
        parts = ([self._options.selector] if self._options.selector else []) + self._pushed
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        return " AND ".join(f"({part})" for part in parts)

    def partitions(self) -> Sequence[InputPartition]:
        options = self._options
        first, last = _bounds(options)
        start = _resolve(options.starting, first, last)
        end = _resolve(options.ending, first, last)
        if start >= end:
            return []
        selector = self.selector  # the filters Spark pushed come before the planning
        return [
            RangePartition(part.start, part.end, selector)
            for part in split_range(
                SequenceRange(start, end), options.min_partitions, options.max_offsets_per_partition
            )
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, RangePartition):
            # PySpark reads one ``InputPartition(None)`` when ``partitions`` planned none.
            return iter(())
        return read_range(self._options, partition)


class JmsStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("jms")``: offsets are next sequence numbers, with the number the
    stream started at (``streamStart``) and the ``selector`` option its batches were read with.
    The stream consumes what it has read once the sink has it: ``latestOffset(start)`` -- Spark
    plans a batch from ``start`` only once every batch before it is committed to the sink and
    recorded in the checkpoint's commit log -- first consumes every message numbered from
    ``streamStart`` to ``start - 1`` that the selector of ``start`` matches (every one without a
    selector); the others stay for other consumers. Nothing else consumes, and nothing below
    ``streamStart`` is ever consumed. A stream restarted with another ``selector`` option
    consumes what it read with the old one, then starts over at ``start`` with the new one:
    what the old one left below ``start`` is never the new one's to consume. Spark asks for
    ``latestOffset`` once more after the last batch of an ``availableNow`` run, so that run
    leaves nothing it wrote behind. ``latestOffset`` never ends a batch past a message whose
    delivery time is still ahead (a range read hides it until then, and the next consumption
    would take it unread): the stream waits for it, so it is read, once, in a later batch.

    The planning methods share one connection, opened at first use and closed by ``stop``; it is
    never pickled (``read`` runs elsewhere and connects on its own).
    """

    def __init__(self, options: SourceOptions) -> None:
        self._options = options
        self._connection: Connection | None = None
        self._session: Session | None = None
        self._readers: dict[str | None, SequenceReader] = {}
        self._available_now: int | None = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_connection": None, "_session": None, "_readers": {}}

    def _sequences(self, selector: str | None) -> SequenceReader:
        """A planning reader of the source with ``selector``, on the planning connection."""
        reader = self._readers.get(selector)
        if reader is None:
            if self._session is None:
                self._connection = _connect(self._options)
                self._session = self._connection.create_session()
            reader = self._session.create_sequence_reader(self._options.source, selector)
            self._readers[selector] = reader
        return reader

    def _offset(self, offset: OffsetDict, what: str) -> StreamOffset:
        options = self._options
        return stream_offset_of(offset, options.key, what, options.selector)

    def initialOffset(self) -> OffsetDict:
        options = self._options
        if isinstance(options.source, TopicSubscription):
            self._ensure_subscription(options.source)
        reader = self._sequences(options.selector)
        start = _resolve(options.starting, _lowest_held(reader), reader.last_sequence())
        return StreamOffset(start, start, options.selector).to_dict(options.key)

    def _ensure_subscription(self, source: TopicSubscription) -> None:
        """Create the durable subscription (with the ``selector`` option as its selector; a shared
        one when no ``clientId`` is given) unless it exists; an existing one is left as it is."""
        reader = self._sequences(self._options.selector)
        try:
            reader.first_sequence()
            return
        except InvalidDestinationException:
            pass
        options = self._options
        broker = options.broker
        assert broker is not None
        factory = broker.factory(client_id=source.client_id)
        with factory.create_connection(broker.user, broker.password) as connection:
            session = connection.create_session()
            if source.client_id is None:  # without a client ID, only a shared one can exist
                consumer = session.create_shared_durable_consumer(
                    source.topic, source.name, options.selector
                )
            else:
                consumer = session.create_durable_consumer(
                    source.topic, source.name, options.selector
                )
            consumer.close()
        logger.info("created %s for a streaming read", source)

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self._options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = self._sequences(self._options.selector).last_sequence() + 1

    def latestOffset(self, start: OffsetDict, limit: ReadLimit) -> OffsetDict:
        options = self._options
        position = self._offset(start, "the start offset")
        start_seq = position.next_seq
        reader = self._sequences(options.selector)
        if isinstance(options.source, TopicSubscription):
            try:
                reader.first_sequence()
            except InvalidDestinationException as error:
                if options.fail_on_data_loss:
                    raise InvalidDestinationException(
                        f"{error.reason}: it was deleted while this stream read it, so the "
                        "messages published meanwhile are lost (set option failOnDataLoss to "
                        "false to subscribe again and carry on)"
                    ) from error
                self._ensure_subscription(options.source)
        end = reader.last_sequence() + 1
        if end < start_seq:
            if start_seq == position.stream_start:
                # Nothing read yet: the stream starts at a number not handed out yet
                # (startingOffsets), and waits for it.
                return start
            if options.fail_on_data_loss:
                raise ValueError(
                    f"{options.key} has handed out numbers only up to {end - 1}, but this stream "
                    f"already read up to {start_seq - 1}: the destination's numbering started "
                    "over (a new store?), so what its checkpoint says no longer matches it (set "
                    "option failOnDataLoss to false to carry on from the checkpoint's offset)"
                )
            logger.warning(
                "%s: numbers restarted below this stream's offset %d; waiting for them",
                options.key,
                start_seq,
            )
            return start
        # Spark plans from ``start`` only once the batches before it are in the sink.
        stream_start = self._consume_read(position)
        if self._available_now is not None:
            end = min(end, max(self._available_now, start_seq))
        if isinstance(limit, ReadMaxRows):
            end = min(end, start_seq + limit.max_rows)
        if end > start_seq:
            # A message not yet due is hidden from the range read: end the batch before it, so
            # the next consumption leaves it (and all after it) for a batch planned once it is due.
            not_due = reader.first_not_due(start_seq, end - 1)
            if not_due is not None:
                end = not_due
        return StreamOffset(end, stream_start, options.selector).to_dict(options.key)

    def _consume_read(self, position: StreamOffset) -> int:
        """Consume what the batches before ``position`` read: the messages numbered from its
        ``stream_start`` to ``next_seq - 1`` that its selector matches. Return the
        ``stream_start`` of the batches planned from here: the same, or ``next_seq`` when the
        ``selector`` option is no longer the one those batches were read with."""
        options = self._options
        consumed = self._sequences(position.selector).acknowledge_through(
            position.next_seq - 1, position.stream_start
        )
        logger.debug("%s: consumed %d read before %d", options.key, consumed, position.next_seq)
        if position.selector == options.selector:
            return position.stream_start
        logger.warning(
            "%s: the selector option is now %r; this stream read up to %d with %r and consumed "
            "what that matched, and reads on from %d with the new one (it will not consume what "
            "the old one left below %d)",
            options.key,
            options.selector,
            position.next_seq - 1,
            position.selector,
            position.next_seq,
            position.next_seq,
        )
        return position.next_seq

    def reportLatestOffset(self) -> dict[str, int]:
        return offset_dict(
            self._options.key, self._sequences(self._options.selector).last_sequence() + 1
        )

    def partitions(self, start: OffsetDict, end: OffsetDict) -> Sequence[InputPartition]:
        start_seq = self._offset(start, "the start offset").next_seq
        last = self._offset(end, "the end offset")
        if last.next_seq <= start_seq:
            return []
        options = self._options
        # A batch is read with the selector it was planned with, also when it is run again
        # after a restart with another selector option: its consumption takes what that matches.
        return [
            RangePartition(part.start, part.end, last.selector)
            for part in split_range(
                SequenceRange(start_seq, last.next_seq),
                options.min_partitions,
                options.max_offsets_per_partition,
            )
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, RangePartition)
        return read_range(self._options, partition)

    def commit(self, end: OffsetDict) -> None:
        """Nothing to do: Spark calls ``commit(end)`` only when it plans the batch after the one
        ending at ``end`` -- never after the last batch of a run -- and by then ``latestOffset``
        has consumed through ``end`` already."""
        self._offset(end, "the committed offset")

    def stop(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._connection = None
        self._session = None
        self._readers = {}


def _lowest_held(reader: SequenceReader) -> int | None:
    """The lowest number of a message ``reader``'s source holds (matching its selector), one
    whose delivery time is still ahead included: a browse hides that one until it is due, but a
    stream starting above it would never read it."""
    first = reader.first_sequence()
    if first == 1:
        return first
    not_due = reader.first_not_due(1, None if first is None else first - 1)
    return first if not_due is None else not_due
