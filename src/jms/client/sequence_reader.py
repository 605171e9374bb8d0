"""``SequenceReader``: reads a queue or a durable subscription by sequence number and commits a
cursor — the provider extension that offset-based readers such as the Spark source are built on.

Every message sent to a destination gets the next number of that destination (a durable
subscription's messages keep their topic's numbers); numbers only grow, across broker restarts
too. ``read(start_seq, end_seq)`` pages through the messages present in that range, oldest first,
without consuming any, so the same range can be read again (by another process as well);
``read_encoded`` pages through the same messages left in their ``jms.message.codec`` encoding,
for readers that decode straight into columns;
``acknowledge_through(seq, start_seq)`` consumes everything from ``start_seq`` (1 by default) up to
``seq`` at once (with a selector, only what
it matches: the rest stays for other consumers). ``last_sequence()`` is the number of the last
message sent so far, ``first_sequence()`` the lowest one still present, ``first_not_due()`` the
lowest one whose delivery time is still ahead (``read`` hides it until then, so a cursor must not
be committed past it).
Messages read are read-only copies, as a browser's. The reader never consumes anything except in
``acknowledge_through``, and never holds a client ID (a durable subscription is named, not joined).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, NamedTuple

from jms.broker import DEFAULT_BROWSE_PAGE, EncodedBrowsePage
from jms.client.transport import RangeSource, TopicSubscription
from jms.errors import IllegalStateException, InvalidDestinationException
from jms.message import Message, ObjectMessage, Queue, TemporaryQueue
from jms.selector import Selector

if TYPE_CHECKING:
    from jms.client.session import Session

__all__ = ["EncodedPage", "SequenceReader"]


class EncodedPage(NamedTuple):
    """One page of ``SequenceReader.read_encoded``: ``messages[i]`` is the ``jms.message.codec``
    encoding of exactly the message ``read`` gives for ``seqs[i]`` (JMSRedelivered included), in
    sequence order. The lists are the caller's."""

    seqs: list[int]
    messages: list[bytes]


class SequenceReader:
    """A range reader of one queue or durable subscription, optionally filtered by a selector
    (evaluated by the broker). Created by ``Session.create_sequence_reader``."""

    def __init__(self, session: Session, source: RangeSource, message_selector: str | None) -> None:
        if isinstance(source, TemporaryQueue) or not isinstance(source, Queue | TopicSubscription):
            raise InvalidDestinationException(
                "a sequence reader reads a queue or a TopicSubscription (a durable subscription), "
                f"not {source!r}"
            )
        Selector(message_selector)  # a bad selector fails here, when it is presented
        self._session = session
        self._source = source
        self._selector = message_selector or None
        self._closed = False

    def __repr__(self) -> str:
        return f"<SequenceReader of {self._source}>"

    def __enter__(self) -> SequenceReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def get_source(self) -> RangeSource:
        self._check_open()
        return self._source

    def get_message_selector(self) -> str | None:
        self._check_open()
        return self._selector

    def last_sequence(self) -> int:
        """The number of the last message sent to the queue (the topic, for a subscription) so
        far; 0 before the first."""
        self._check_open()
        destination = (
            self._source.topic if isinstance(self._source, TopicSubscription) else self._source
        )
        return self._session._transport.last_sequence(destination)

    def first_sequence(self) -> int | None:
        """The lowest number of a message present now (matching the selector), or None when
        there is none."""
        self._check_open()
        start: int | None = 1
        while start is not None:
            page = self._session._transport.browse_range_encoded(
                self._source, self._selector, start, None, 1
            )
            if page.seqs:
                return page.seqs[0]
            start = page.next_seq
        return None

    def read(
        self, start_seq: int, end_seq: int | None = None, page_size: int = DEFAULT_BROWSE_PAGE
    ) -> Iterator[list[tuple[int, Message]]]:
        """The messages present with ``start_seq <= seq <= end_seq`` (to the end when
        ``end_seq`` is None) as ``(seq, message)`` lists of at most ``page_size``, in sequence
        order, fetched one page at a time. Nothing is consumed."""
        self._check_range(start_seq, end_seq, page_size)
        return self._pages(start_seq, end_seq, page_size)

    def read_encoded(
        self, start_seq: int, end_seq: int | None = None, page_size: int = DEFAULT_BROWSE_PAGE
    ) -> Iterator[EncodedPage]:
        """What ``read`` gives, each message left in its ``jms.message.codec`` encoding (as the
        broker ships it), one ``EncodedPage`` of at most ``page_size`` at a time. Nothing is
        consumed."""
        self._check_range(start_seq, end_seq, page_size)
        return self._encoded_pages(start_seq, end_seq, page_size)

    def _check_range(self, start_seq: int, end_seq: int | None, page_size: int) -> None:
        self._check_open()
        for name, value in (("start_seq", start_seq), ("page_size", page_size)):
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be an int of at least 1; got {value!r}")
        if end_seq is not None and type(end_seq) is not int:
            raise ValueError(f"end_seq must be an int or None; got {end_seq!r}")

    def acknowledge_through(self, seq: int, start_seq: int = 1) -> int:
        """Consume every message numbered ``start_seq`` to ``seq`` that this reader's selector
        (if it has one) matches and that is not in flight to a consumer -- as a consumer with
        that selector would, the others stay for other consumers; return how many were consumed.
        Nothing numbered below ``start_seq`` is touched (a reader that started there never read
        it). Repeating it is harmless."""
        self._check_open()
        if type(seq) is not int or seq < 0:
            raise ValueError(f"seq must be an int of at least 0; got {seq!r}")
        if type(start_seq) is not int or start_seq < 1:
            raise ValueError(f"start_seq must be an int of at least 1; got {start_seq!r}")
        if seq < start_seq:
            return 0
        return self._session._transport.acknowledge_through(
            self._source, seq, self._selector, start_seq
        )

    def first_not_due(self, start_seq: int = 1, end_seq: int | None = None) -> int | None:
        """The lowest number from ``start_seq`` to ``end_seq`` of a message present (matching the
        selector) whose delivery time is still ahead -- hidden from ``read`` now, shown later --
        or None. A reader that commits by range must not commit past it."""
        self._check_open()
        if type(start_seq) is not int or start_seq < 1:
            raise ValueError(f"start_seq must be an int of at least 1; got {start_seq!r}")
        if end_seq is not None and type(end_seq) is not int:
            raise ValueError(f"end_seq must be an int or None; got {end_seq!r}")
        return self._session._transport.first_not_due(
            self._source, self._selector, start_seq, end_seq
        )

    def close(self) -> None:
        self._closed = True

    def _pages(
        self, start_seq: int, end_seq: int | None, limit: int
    ) -> Iterator[list[tuple[int, Message]]]:
        allowed = self._session._options.allowed_classes
        start: int | None = start_seq
        while start is not None and (end_seq is None or start <= end_seq):
            self._check_open()
            page = self._session._transport.browse_range(
                self._source, self._selector, start, end_seq, limit
            )
            for _, message in page.messages:
                message._mark_received(None)
                if allowed and isinstance(message, ObjectMessage):
                    message.set_allowed_classes(allowed)
            if page.messages:
                yield list(page.messages)
            start = page.next_seq

    def _encoded_pages(
        self, start_seq: int, end_seq: int | None, limit: int
    ) -> Iterator[EncodedPage]:
        """The pages of ``read_encoded``, each next one fetched by a helper thread while the
        caller works on the one before: the broker then sends a page while the caller decodes
        the last, instead of the two taking turns."""
        fetch = functools.partial(
            self._session._transport.browse_range_encoded, self._source, self._selector
        )
        with ThreadPoolExecutor(1, "jms-read-ahead") as ahead:
            coming: Future[EncodedBrowsePage] | None = ahead.submit(
                fetch, start_seq, end_seq, limit
            )
            while coming is not None:
                page = coming.result()
                start = page.next_seq
                coming = (
                    ahead.submit(fetch, start, end_seq, limit)
                    if start is not None and (end_seq is None or start <= end_seq)
                    else None
                )
                if page.seqs:
                    yield EncodedPage(page.seqs, page.messages)
                self._check_open()

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException(f"this SequenceReader of {self._source} is closed")
        self._session._check_open()
