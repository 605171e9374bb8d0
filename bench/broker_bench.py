"""In-process send→receive throughput of the broker, next to a plain ``queue.Queue`` hand-off.

One producer thread sends N TextMessages of 1 KiB (PERSISTENT, the JMS default) to a queue of a
``memory://`` broker while one consumer thread receives them; the figure is N divided by the time
from the first send to the last receive. Modes: AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE (each message
acknowledged), and transacted sessions committing every 100 messages on both sides. The baseline
moves the same 1 KiB strings between two threads through ``queue.Queue`` — the floor of what any
thread hand-off costs in CPython — in the same run.

    python bench/broker_bench.py [--messages 20000] [--size 1024] [--repeat 3]
"""

from __future__ import annotations

import argparse
import queue
import threading
import time
import uuid
from collections.abc import Callable

from jms.broker import close_embedded_broker
from jms.client import ConnectionFactory, Session
from jms.message import Queue, TextMessage

TRANSACTION_BATCH = 100


def queue_handoff(count: int, body: str) -> float:
    """Seconds to move ``count`` strings from one thread to another through queue.Queue."""
    channel: queue.Queue[str] = queue.Queue()

    def consume() -> None:
        for _ in range(count):
            channel.get()

    consumer = threading.Thread(target=consume)
    began = time.perf_counter()
    consumer.start()
    for _ in range(count):
        channel.put(body)
    consumer.join()
    return time.perf_counter() - began


def broker_round(count: int, body: str, mode: int) -> float:
    """Seconds for ``count`` messages from a producer thread to a consumer thread via a broker."""
    url = f"memory://bench-{uuid.uuid4().hex[:8]}"
    destination = Queue("bench")
    transacted = mode == Session.SESSION_TRANSACTED
    try:
        with ConnectionFactory(url).create_connection() as connection:
            connection.start()
            consumer_session = connection.create_session(transacted, mode)
            consumer = consumer_session.create_consumer(destination)
            producer_session = connection.create_session(transacted, mode)
            producer = producer_session.create_producer(destination)
            received = threading.Event()

            def consume() -> None:
                for n in range(1, count + 1):
                    message = consumer.receive(10_000)
                    if message is None:
                        raise RuntimeError(f"timed out after {n - 1} of {count} messages")
                    if mode == Session.CLIENT_ACKNOWLEDGE:
                        message.acknowledge()
                    elif transacted and n % TRANSACTION_BATCH == 0:
                        consumer_session.commit()
                if transacted:
                    consumer_session.commit()
                received.set()

            thread = threading.Thread(target=consume)
            began = time.perf_counter()
            thread.start()
            for n in range(1, count + 1):
                producer.send(TextMessage(body))
                if transacted and n % TRANSACTION_BATCH == 0:
                    producer_session.commit()
            if transacted:
                producer_session.commit()
            thread.join()
            elapsed = time.perf_counter() - began
            if not received.is_set():
                raise RuntimeError("the consumer did not receive every message")
            return elapsed
    finally:
        close_embedded_broker(url)


def best_rate(count: int, repeat: int, run: Callable[[], float]) -> float:
    return count / min(run() for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=1024, help="body size in characters")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the best is shown")
    arguments = parser.parse_args()
    count, body = arguments.messages, "x" * arguments.size

    baseline = best_rate(count, arguments.repeat, lambda: queue_handoff(count, body))
    rows = [("queue.Queue hand-off (baseline)", baseline)]
    for label, mode in [
        ("AUTO_ACKNOWLEDGE", Session.AUTO_ACKNOWLEDGE),
        ("CLIENT_ACKNOWLEDGE (ack each)", Session.CLIENT_ACKNOWLEDGE),
        (f"transacted (commit every {TRANSACTION_BATCH})", Session.SESSION_TRANSACTED),
    ]:
        rate = best_rate(count, arguments.repeat, lambda m=mode: broker_round(count, body, m))
        rows.append((label, rate))

    print(
        f"{count} messages of {arguments.size} B, producer thread -> consumer thread, best of "
        f"{arguments.repeat}"
    )
    print(f"{'mode':<38}{'msgs/s':>12}{'vs queue.Queue':>16}")
    for label, rate in rows:
        print(f"{label:<38}{rate:>12,.0f}{rate / baseline:>15.3f}x")


if __name__ == "__main__":
    main()
