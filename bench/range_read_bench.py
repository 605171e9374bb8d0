"""Throughput of range reads over STOMP: messages per second one reader gets from a broker.

A ``jms broker`` process (its own fresh SQLite store in a temporary directory, STOMP on a free
port, the default memory window: most of the queue is paged out to the store) holds N PERSISTENT
TextMessages of ``--size`` bytes with three typed properties. In the same run, over one STOMP
connection, each reading the whole queue without consuming it:

- **QueueBrowser** (the baseline): one MESSAGE frame per message, each decoded -- the wire path a
  range read took before packed frames;
- **read()**: ``SequenceReader.read`` -- packed frames, each message decoded into a ``Message``;
- **read_encoded()**: ``SequenceReader.read_encoded`` -- packed frames, the codec bytes as the
  store holds them, nothing decoded (what a columnar decoder starts from); once more with pages
  of ``--big-page`` (one round trip for more messages, and the broker reads its next step while
  the client takes the last one in).

Each figure is the best of ``--repeat`` runs (the paths take turns), N divided by the wall time;
the ratio is against the baseline of the same run.

    python bench/range_read_bench.py [--messages 100000] [--size 1024] [--page 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from jms.client import ConnectionFactory, SequenceReader, Session
from jms.message import Queue

# Python puts a script's directory (bench/) on the path: the broker start and the fill are the
# pipeline bench's, so that both benches read the same queue.
from pipeline_bench import produce, start_broker


def browse_all(session: Session, queue: Queue) -> int:
    return sum(1 for _ in session.create_browser(queue))


def read_all(reader: SequenceReader, page: int) -> int:
    return sum(len(messages) for messages in reader.read(1, None, page))


def read_all_encoded(reader: SequenceReader, page: int) -> int:
    return sum(len(encoded.seqs) for encoded in reader.read_encoded(1, None, page))


def best_rates(
    paths: list[tuple[str, Callable[[], int]]], expected: int, repeat: int
) -> list[tuple[str, float]]:
    """The best messages per second of each path's ``repeat`` runs (each must read them all).
    The runs take turns, so that a change in the machine's load falls on every path alike."""
    best = dict.fromkeys((name for name, _ in paths), 0.0)
    for _ in range(repeat):
        for name, read in paths:
            began = time.perf_counter()
            count = read()
            seconds = time.perf_counter() - began
            if count != expected:
                raise RuntimeError(f"{name}: read {count} messages, expected {expected}")
            best[name] = max(best[name], count / seconds)
    return list(best.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--page", type=int, default=1000, help="SequenceReader page size")
    parser.add_argument(
        "--big-page", type=int, default=10_000, help="page size of the last row (fewer round trips)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jms-range-read-bench-") as temporary:
        broker, url = start_broker(Path(temporary) / "store")
        try:
            seconds = produce(url, "bench", args.messages, args.size)
            print(
                f"{args.messages:,} PERSISTENT messages of {args.size} B in a jms broker on "
                f"SQLite ({args.messages / seconds:,.0f} msg/s to produce)"
            )
            queue = Queue("bench")
            with ConnectionFactory(url).create_connection() as connection:
                session = connection.create_session()
                reader = session.create_sequence_reader(queue)
                big = args.big_page
                rows = best_rates(
                    [
                        ("QueueBrowser (a frame per message)", lambda: browse_all(session, queue)),
                        ("SequenceReader.read()", lambda: read_all(reader, args.page)),
                        (
                            "SequenceReader.read_encoded()",
                            lambda: read_all_encoded(reader, args.page),
                        ),
                        (f"read_encoded(), pages of {big}", lambda: read_all_encoded(reader, big)),
                    ],
                    args.messages,
                    args.repeat,
                )
        finally:
            broker.terminate()
            broker.wait(30)
    baseline = rows[0][1]
    print(f"\none reader over STOMP, pages of {args.page}, best of {args.repeat}")
    print(f"{'path':<36} {'msg/s':>10} {'ratio':>7}")
    for name, rate in rows:
        print(f"{name:<36} {rate:>10,.0f} {rate / baseline:>6.2f}x")


if __name__ == "__main__":
    main()
