"""DeadlineTimer: calls back at the earliest requested deadline, follows returned deadlines."""

from __future__ import annotations

import threading
import time

from jms.broker import wall_clock_ms
from jms.broker.timer import DeadlineTimer


def test_calls_back_at_the_deadline_and_at_the_one_returned() -> None:
    calls: list[int] = []
    done = threading.Event()
    start = wall_clock_ms()

    def callback() -> int | None:
        calls.append(wall_clock_ms() - start)
        if len(calls) == 2:
            done.set()
            return None
        return wall_clock_ms() + 30

    timer = DeadlineTimer("test-timer", callback, wall_clock_ms)
    timer.request(start + 30)
    assert done.wait(2)
    timer.close()
    assert calls[0] >= 30
    assert calls[1] >= 60


def test_an_earlier_request_wakes_it_sooner() -> None:
    fired = threading.Event()
    timer = DeadlineTimer("test-timer", lambda: fired.set(), wall_clock_ms)
    timer.request(wall_clock_ms() + 60_000)
    began = time.monotonic()
    timer.request(wall_clock_ms() + 20)
    assert fired.wait(2)
    assert time.monotonic() - began < 1
    timer.close()


def test_no_thread_before_the_first_request_and_none_after_close() -> None:
    timer = DeadlineTimer("test-timer", lambda: None, wall_clock_ms)
    assert timer._thread is None
    timer.request(wall_clock_ms() + 60_000)
    thread = timer._thread
    assert thread is not None and thread.is_alive()
    timer.close()
    assert not thread.is_alive()
    timer.request(wall_clock_ms())  # ignored once closed
    assert timer._thread is thread
