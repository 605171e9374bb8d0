"""``DeadlineTimer``: one thread per broker that runs the broker's time-driven work when it is due.

Delivery delays, redelivery delays and expiry happen at a time, not in reaction to a call, so
something must wake up then. The broker asks for a deadline (``request``) whenever it learns of an
earlier one; the timer thread sleeps until the earliest, calls back, and asks again for whatever
deadline the callback returns. The thread starts at the first request, so a broker that never
schedules anything has no thread. The callback runs without the timer's lock held (it takes the
broker's lock, and the broker calls ``request`` under its own lock). This is the broker's only
thread; it never touches sockets or consumers directly.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["DeadlineTimer", "wall_clock_ms"]


def wall_clock_ms() -> int:
    """Milliseconds since the epoch: the unit of JMSTimestamp, JMSExpiration, JMSDeliveryTime."""
    return time.time_ns() // 1_000_000


class DeadlineTimer:
    """Calls ``callback()`` at the earliest requested deadline (ms, on ``clock``); the callback
    returns the next deadline it needs, or None."""

    def __init__(
        self, name: str, callback: Callable[[], int | None], clock: Callable[[], int]
    ) -> None:
        self._name = name
        self._callback = callback
        self._clock = clock
        self._condition = threading.Condition(threading.Lock())
        self._deadline: int | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def request(self, deadline: int) -> None:
        """Make sure the callback runs at ``deadline`` or earlier."""
        with self._condition:
            if self._closed:
                return
            if self._deadline is None or deadline < self._deadline:
                self._deadline = deadline
                self._condition.notify()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def close(self) -> None:
        """Stop the thread (waiting for a running callback unless called from it)."""
        with self._condition:
            self._closed = True
            self._condition.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            with self._condition:
                while not self._closed:
                    if self._deadline is not None:
                        remaining = self._deadline - self._clock()
                        if remaining <= 0:
                            break
                        self._condition.wait(remaining / 1000)
                    else:
                        self._condition.wait()
                if self._closed:
                    return
                self._deadline = None
            following = self._callback()
            if following is not None:
                self.request(following)
