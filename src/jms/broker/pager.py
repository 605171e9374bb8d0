"""``Pager``: the broker's thread that reads paged-out entries back from the store.

A queue whose stored backlog is larger than its memory window keeps only the sequence numbers of
the rest (``MessageQueue.page_out``). When the window is half empty the broker asks for the next
page with a ``PageRequest``; the pager submits an empty batch and waits for it (batches complete in
order, so every entry of the page is readable then — the appends were submitted before the
request), reads and decodes the page without the broker's lock, and hands it back through a callback
that takes the lock and admits the entries. Reading off the lock keeps senders and consumers of
other queues running while a page is decoded. One thread per broker, started on first use; it
never decides what to deliver and never writes to the store.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from typing import Final, NamedTuple

from jms.broker.message_queue import MessageQueue
from jms.errors import JMSException
from jms.store import MessageStore, StoredEntry

__all__ = ["PageRequest", "Pager"]

logger = logging.getLogger(__name__)

_STOP: Final = object()


class PageRequest(NamedTuple):
    """Read the ``entry_count`` paged-out entries of ``queue`` (store queue ``key``) from
    ``first_seq`` to ``last_seq``."""

    queue: MessageQueue
    key: str
    first_seq: int
    last_seq: int
    entry_count: int  # not ``count``: a tuple has a method of that name


#: Receives a request and the entries read for it (None when the store could not be read).
PageSink = Callable[[PageRequest, list[StoredEntry] | None], None]


class Pager:
    """Reads pages for one broker on one thread; ``close`` stops it after the page in hand."""

    def __init__(self, name: str, store: MessageStore, sink: PageSink) -> None:
        self._name = name
        self._store = store
        self._sink = sink
        self._requests: queue.SimpleQueue[PageRequest | object] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def request(self, request: PageRequest) -> None:
        """Queue a page read (the caller may hold the broker's lock: this never blocks)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
        self._requests.put(request)

    def close(self) -> None:
        """Stop the thread and wait for it (call without the broker's lock)."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._requests.put(_STOP)
            thread.join()

    def _run(self) -> None:
        while True:
            request = self._requests.get()
            if not isinstance(request, PageRequest):
                return
            entries: list[StoredEntry] | None
            try:
                with contextlib.suppress(JMSException):
                    # An empty batch fails only with the store; the read below then says so too.
                    self._store.submit(()).wait()
                entries = self._store.read_entries(
                    request.key, request.first_seq, request.last_seq, request.entry_count
                )
            except JMSException:
                logger.exception(
                    "could not page in %s entries of %s from %s; they stay in the store",
                    request.entry_count,
                    request.queue.name,
                    request.first_seq,
                )
                entries = None
            self._sink(request, entries)
