"""``QueueBrowser``: looks at the messages a queue holds without consuming them.

``get_enumeration()`` (or iterating the browser) walks the queue in arrival order, fetching pages
from the broker as it goes, so a large queue is never copied whole; messages that arrive or are
consumed meanwhile may or may not show up, as JMS allows. Browsed messages are read-only copies;
nothing is acknowledged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from jms.broker import DEFAULT_BROWSE_PAGE
from jms.errors import IllegalStateException, InvalidDestinationException
from jms.message import Message, ObjectMessage, Queue
from jms.selector import Selector, selector_or_none

if TYPE_CHECKING:
    from jms.client.session import Session

__all__ = ["QueueBrowser"]


class QueueBrowser:
    """A browser of one queue, optionally filtered by a selector."""

    def __init__(self, session: Session, queue: Queue, message_selector: str | None) -> None:
        if not isinstance(queue, Queue):
            raise InvalidDestinationException(f"only a queue can be browsed; got {queue!r}")
        Selector(message_selector)  # a bad selector fails here, when it is presented
        self._session = session
        self._queue = queue
        self._selector = selector_or_none(message_selector)
        self._closed = False

    def __repr__(self) -> str:
        return f"<QueueBrowser of {self._queue}>"

    def __enter__(self) -> QueueBrowser:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Message]:
        return self.get_enumeration()

    def get_queue(self) -> Queue:
        self._check_open()
        return self._queue

    def get_message_selector(self) -> str | None:
        self._check_open()
        return self._selector

    def get_enumeration(self) -> Iterator[Message]:
        """An iterator over the messages in the queue now, oldest first."""
        self._check_open()
        return self._messages()

    def close(self) -> None:
        self._closed = True

    def _messages(self) -> Iterator[Message]:
        allowed = self._session._options.allowed_classes
        start: int | None = 1
        while start is not None:
            self._check_open()
            page = self._session._transport.browse(
                self._queue, self._selector, start, DEFAULT_BROWSE_PAGE
            )
            for _, message in page.messages:
                message._mark_received(None)
                if allowed and isinstance(message, ObjectMessage):
                    message.set_allowed_classes(allowed)
                yield message
            start = page.next_seq

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException(f"this QueueBrowser of {self._queue} is closed")
        self._session._check_open()
