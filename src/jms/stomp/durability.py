"""Durability without blocking an event loop: a store wrapper that lets a server collect the
store completions of the broker calls it makes, and one thread that waits for them in order.

The broker waits for its store (an fsync for PERSISTENT messages) before a call returns. A
server that calls it from an event loop must not: ``DeferredStore`` wraps the broker's store so
that, while a thread is ``collecting``, the completions its calls produce are handed to the
collector, and waiting for them on that thread returns at once; ``CompletionWaiter`` waits for
them one after the other (a store applies batches in order, so they finish in order) and reports
each outcome back on the loop — where the server sends a RECEIPT, or a MESSAGE whose delivery the
broker records, only once it is durable. Any other thread, or the same thread outside
``collecting``, waits for real: the broker's timer and pager, in-process clients and the waiter
see the store unchanged. Nothing here decides what is stored; it only moves the waiting.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable, Sequence

from jms.store import DONE, Completion, MessageStore, StoreContents, StoredEntry, StoreOperation

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

    def close(self) -> None:
        self.inner.close()


_Callback = Callable[[BaseException | None], None]
_STOP = object()


class CompletionWaiter:
    """One thread waiting for completions in submission order; each ``callback(error)`` runs on
    ``loop`` (``error`` is None when the batch is durable)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue: queue.SimpleQueue[tuple[Completion, _Callback] | object] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="jms-stomp-durability", daemon=True)
        self._thread.start()

    def submit(self, completion: Completion, callback: _Callback) -> None:
        self._queue.put((completion, callback))

    def close(self) -> None:
        """Stop once every completion submitted so far has been waited for."""
        self._queue.put(_STOP)
        self._thread.join()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            batch: list[tuple[_Callback, BaseException | None]] = []
            stop = False
            while True:
                if item is _STOP:
                    stop = True
                    break
                completion, callback = item  # type: ignore[misc]
                try:
                    completion.wait()
                    batch.append((callback, None))
                except Exception as error:
                    batch.append((callback, error))
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                try:
                    self._loop.call_soon_threadsafe(_run_callbacks, batch)
                except RuntimeError:
                    logger.warning(
                        "the event loop closed before %d store outcomes were reported", len(batch)
                    )
            if stop:
                return


def _run_callbacks(batch: list[tuple[_Callback, BaseException | None]]) -> None:
    for callback, error in batch:
        callback(error)
