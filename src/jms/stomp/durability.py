"""Durability without blocking an event loop: a store wrapper that lets a server collect the
store completions of the broker calls it makes, and a waiter that reports them on the loop in
order.

The broker waits for its store (an fsync for PERSISTENT messages) before a call returns. A
server that calls it from an event loop must not: ``DeferredStore`` wraps the broker's store so
that, while a thread is ``collecting``, the completions its calls produce are handed to the
collector, and waiting for them on that thread returns at once; ``CompletionWaiter`` hears when
they finish (from the store's writer thread) and reports each outcome back on the loop in
submission order — where the server sends a RECEIPT, or a MESSAGE whose delivery the broker
records, only once it is durable. Any other thread, or the same thread outside ``collecting``,
waits for real: the broker's timer and pager and in-process clients see the store unchanged.
Nothing here decides what is stored; it only moves the waiting."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Sequence

from jms.store import (
    DONE,
    Completion,
    EncodedEntry,
    MessageStore,
    StoreContents,
    StoredEntry,
    StoreOperation,
)

__all__ = ["CompletionWaiter", "DeferredStore"]

logger = logging.getLogger(__name__)


class _Deferred(Completion):
    """A completion handed to a collecting thread: waiting is deferred there, real elsewhere."""

    __slots__ = ("_inner", "_local")

    def __init__(self, inner: Completion, local: threading.local) -> None:
        self._inner = inner
        self._local = local

    def wait(self) -> None:
        if getattr(self._local, "into", None) is None:
            self._inner.wait()

    def done(self) -> bool:
        return self._inner.done()

    def call_when_done(self, callback: Callable[[], None]) -> None:
        self._inner.call_when_done(callback)


class _Collecting:
    """``DeferredStore.collecting``: a plain class, as it wraps every frame a server handles."""

    __slots__ = ("_into", "_local", "_previous")

    def __init__(self, local: threading.local, into: list[Completion]) -> None:
        self._local = local
        self._into = into
        self._previous: list[Completion] | None = None

    def __enter__(self) -> None:
        self._previous = getattr(self._local, "into", None)
        self._local.into = self._into

    def __exit__(self, *exc_info: object) -> None:
        self._local.into = self._previous


class DeferredStore(MessageStore):
    """A ``MessageStore`` that forwards everything to ``inner``; see the module docstring."""

    def __init__(self, inner: MessageStore) -> None:
        self.inner = inner
        self._local = threading.local()

    def collecting(self, into: list[Completion]) -> _Collecting:
        """A context manager: while active on this thread, completions of submitted batches go
        to ``into`` and waiting for them here returns at once."""
        return _Collecting(self._local, into)

    def load(self) -> StoreContents:
        return self.inner.load()

    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        completion = self.inner.submit(batch)
        into = getattr(self._local, "into", None)
        if into is None or completion is DONE:
            return completion
        into.append(completion)
        return _Deferred(completion, self._local)

    def read_sequences(self, queue: str, start_seq: int, limit: int) -> list[int]:
        return self.inner.read_sequences(queue, start_seq, limit)

    def read_entries(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[StoredEntry]:
        return self.inner.read_entries(queue, start_seq, end_seq, limit)

    def read_encoded_entries(
        self, queue: str, start_seq: int, end_seq: int | None, limit: int
    ) -> list[EncodedEntry]:
        return self.inner.read_encoded_entries(queue, start_seq, end_seq, limit)

    def close(self) -> None:
        self.inner.close()


_Callback = Callable[[BaseException | None], None]


class CompletionWaiter:
    """Reports completions on ``loop`` in submission order: each ``callback(error)`` runs there
    (``error`` is None when the batch is durable) once its completion and every one submitted
    before it are done.

    No thread of its own waits: a completion calls back (``Completion.call_when_done``) on the
    thread that finishes it — a store's writer — which only schedules one report on the loop for
    whatever finished meanwhile. One wake-up of the loop per group commit, and no thread between.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        # Submitted and not yet reported, in order: filled on any thread, read on the loop.
        self._queue: queue.SimpleQueue[tuple[Completion, _Callback]] = queue.SimpleQueue()
        self._unreported: deque[tuple[Completion, _Callback]] = deque()  # taken off _queue
        self._report_scheduled = False
        self._newest: Completion | None = None

    def submit(self, completion: Completion, callback: _Callback) -> None:
        self._queue.put((completion, callback))
        self._newest = completion
        completion.call_when_done(self._schedule_report)

    def close(self) -> None:
        """Return once every completion submitted so far is done (a store finishes batches in
        order, so waiting for the newest is enough); their callbacks are scheduled on the loop."""
        newest = self._newest
        if newest is not None:
            with contextlib.suppress(Exception):
                newest.wait()

    def _schedule_report(self) -> None:
        # Any thread. Racing callers may both schedule: the second report finds nothing to do.
        if self._report_scheduled:
            return
        self._report_scheduled = True
        try:
            self._loop.call_soon_threadsafe(self._report)
        except RuntimeError:
            logger.warning("the event loop closed before store outcomes could be reported")

    def _report(self) -> None:
        # Cleared first: a completion finishing from here on schedules another report.
        self._report_scheduled = False
        unreported = self._unreported
        while True:
            try:
                unreported.append(self._queue.get_nowait())
            except queue.Empty:
                break
        while unreported and unreported[0][0].done():
            completion, callback = unreported.popleft()
            try:
                completion.wait()  # done: returns or raises at once
            except Exception as error:
                callback(error)
            else:
                callback(None)
