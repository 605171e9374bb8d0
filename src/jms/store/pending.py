"""``PendingBatch``: the ``Completion`` of a batch waiting for its group's commit, shared by the
group-committing stores (``jms.store.sqlite``, ``jms.store.postgresql``): their writer thread
finishes a whole group at once with ``PendingBatch.finish_all``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

from jms.store.base import Completion

__all__ = ["PendingBatch"]

logger = logging.getLogger(__name__)


class PendingBatch(Completion):
    """A batch waiting for its group's commit. There is one per send, so it is only a few
    attributes: a thread that must block brings its own lock and registers its release."""

    __slots__ = ("_callbacks", "_error", "_finished", "_lock")

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock  # the store's: guards ``_callbacks`` against ``finish_all``
        self._finished = False
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[], None]] | None = None

    @staticmethod
    def finish_all(
        lock: threading.Lock, outcomes: Iterable[tuple[PendingBatch, BaseException | None]]
    ) -> None:
        """Finish a group's batches together, then call back: whoever hears of the first one
        sees the whole group done (one report to an event loop, not one per batch)."""
        callbacks: list[Callable[[], None]] = []
        with lock:
            for pending, error in outcomes:
                pending._error = error
                pending._finished = True
                if pending._callbacks is not None:
                    callbacks += pending._callbacks
                    pending._callbacks = None
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("a store completion callback failed")

    def wait(self) -> None:
        if not self._finished:
            # A lock taken twice: the second acquire returns once ``finish_all`` releases it.
            finished = threading.Lock()
            finished.acquire()
            self.call_when_done(finished.release)
            finished.acquire()
        if self._error is not None:
            raise self._error

    def done(self) -> bool:
        return self._finished

    def call_when_done(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if not self._finished:
                if self._callbacks is None:
                    self._callbacks = [callback]
                else:
                    self._callbacks.append(callback)
                return
        callback()
