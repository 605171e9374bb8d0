"""Asynchronous against synchronous sends through the client API over STOMP, same broker, same run.

A `jms broker` process on its durable store (started as ``stomp_bench.py`` starts it); one
connection sends ``--messages`` PERSISTENT 1 KiB TextMessages to a fresh queue, first with plain
``send`` (each waits for the broker's RECEIPT, so for its store), then with
``send(..., completion_listener=...)`` (up to ``ASYNC_SEND_WINDOW`` RECEIPTs outstanding; timed
until the last completion listener has run). Each kind runs ``--repeat`` times, alternating, and
its best run counts, which keeps other load on the machine out of the figures.

    python bench/async_send_bench.py [--messages 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jms.client import ConnectionFactory
from jms.client.stomp_transport import ASYNC_SEND_WINDOW
from jms.message import DeliveryMode, Message, Queue, TextMessage
from stomp_bench import jms_broker_process

TEXT = "x" * 1024


class _Countdown:
    """A CompletionListener that sets ``done`` when ``expected`` sends have completed."""

    def __init__(self, expected: int) -> None:
        self.remaining = expected
        self.failures: list[Exception] = []
        self.done = threading.Event()

    def on_completion(self, message: Message) -> None:
        self._one()

    def on_exception(self, message: Message, exception: Exception) -> None:
        self.failures.append(exception)
        self._one()

    def _one(self) -> None:
        self.remaining -= 1  # listeners of one session run on one thread, one at a time
        if self.remaining == 0:
            self.done.set()


def _run(url: str, queue: Queue, messages: int, asynchronous: bool) -> float:
    """Messages per second for one run."""
    with ConnectionFactory(url).create_connection() as connection:
        producer = connection.create_session().create_producer(queue)
        producer.set_delivery_mode(DeliveryMode.PERSISTENT)
        countdown = _Countdown(messages)
        start = time.perf_counter()
        for _ in range(messages):
            if asynchronous:
                producer.send(TextMessage(TEXT), completion_listener=countdown)
            else:
                producer.send(TextMessage(TEXT))
        if asynchronous and not countdown.done.wait(600):
            raise RuntimeError(f"{countdown.remaining} completions never came")
        elapsed = time.perf_counter() - start
        if countdown.failures:
            raise RuntimeError(f"{len(countdown.failures)} sends failed: {countdown.failures[0]}")
    return messages / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with jms_broker_process() as target:
        url = f"stomp://{target.host}:{target.port}"
        _run(url, Queue("warm-up"), max(200, args.messages // 10), asynchronous=True)
        rates: dict[bool, list[float]] = {False: [], True: []}
        for attempt in range(args.repeat):
            for asynchronous in (False, True):
                name = f"bench-{'async' if asynchronous else 'sync'}-{attempt}"
                rates[asynchronous].append(_run(url, Queue(name), args.messages, asynchronous))
    sync, asynchronous = max(rates[False]), max(rates[True])
    print(
        f"PERSISTENT 1 KiB TextMessages over STOMP, {args.messages} per run, best of {args.repeat}"
    )
    print(f"  send()                          {sync:9.0f} msg/s")
    print(
        f"  send(completion_listener=...)   {asynchronous:9.0f} msg/s  "
        f"(window {ASYNC_SEND_WINDOW}; {asynchronous / sync:.1f}x the synchronous rate)"
    )


if __name__ == "__main__":
    main()
