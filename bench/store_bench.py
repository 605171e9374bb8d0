"""The durable store's costs: persistent send throughput, recovery time, and a large backlog's memory.

Send: 1, 4 and 16 producer threads, each with its own connection, send PERSISTENT 1 KiB
TextMessages through the client API (``Session.create_producer(...).send``) to one queue of an
in-process broker on a ``SQLiteStore`` for ``--seconds`` each; every send returns only once its
message is fsynced. The same run measures group commit (the default: sends that arrive while a
commit is in flight share the next fsync) against one transaction and fsync per message
(``SQLiteStore(fsync_per_batch=True)``), a NON_PERSISTENT row for scale, and the disk's raw
``fdatasync`` rate for a WAL-like write, which bounds one-at-a-time durability.

Recovery: ``--recovery`` (default 100,000) unacknowledged 1 KiB messages are written, then the
time to open a broker on the directory is measured (load, the memory window's messages, the
sequence numbers of the rest), with the default window and with paging off
(``memory_window=None``: every message loaded), and the time until a consumer has the first one.

Backlog (``--backlog N``, e.g. 1000000; slow, so off by default): a fresh process fills a queue
with N persistent 1 KiB messages (transactions of 500 from 4 producers), then reports its RSS
(current and peak), reopens the directory, reports RSS again, and consumes the first 20,000
messages to show they come back in order from the store.

    python bench/store_bench.py [--seconds 2] [--repeat 3] [--recovery 100000] [--backlog 1000000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from jms.broker import (
    Broker,
    DestinationPolicy,
    close_embedded_broker,
    embedded_broker,
    open_broker,
)
from jms.client import ConnectionFactory, Session
from jms.client.connection import Connection
from jms.client.inprocess import InProcessTransport
from jms.client.options import ClientOptions
from jms.message import DeliveryMode, Queue, TextMessage
from jms.store import AddDestination, AppendMessage
from jms.store.sqlite import SQLiteStore

QUEUE = Queue("bench")
BODY = "x" * 1024
console = Console()


def raw_sync_rate(directory: Path, count: int = 300) -> float:
    """``os.fdatasync`` calls per second after a 1 KiB write into a preallocated file — what a
    WAL commit costs SQLite (it overwrites its WAL file after each checkpoint)."""
    path = directory / "sync-probe"
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        os.write(descriptor, bytes(1024 * count))
        os.fsync(descriptor)
        began = time.perf_counter()
        for n in range(count):
            os.pwrite(descriptor, b"x" * 1024, n * 1024)
            os.fdatasync(descriptor)
        return count / (time.perf_counter() - began)
    finally:
        os.close(descriptor)
        path.unlink()


def _connect(broker: Broker) -> Connection:
    """A client-API connection to ``broker`` (what ConnectionFactory builds for embedded URLs)."""
    return Connection(
        lambda on_lost, _: InProcessTransport(broker, None, None, None, on_lost), ClientOptions()
    )


def send_rate(directory: Path, producers: int, seconds: float, mode: str) -> float:
    """Messages per second sent by ``producers`` threads for ``seconds``; ``mode`` is
    ``group``, ``per-message`` (fsync_per_batch) or ``non-persistent``."""
    broker = Broker(SQLiteStore(directory, fsync_per_batch=mode == "per-message"))
    delivery_mode = (
        DeliveryMode.NON_PERSISTENT if mode == "non-persistent" else DeliveryMode.PERSISTENT
    )
    return broker_send_rate(broker, producers, seconds, delivery_mode)


def broker_send_rate(
    broker: Broker, producers: int, seconds: float, delivery_mode: DeliveryMode
) -> float:
    """Messages per second sent to ``broker`` by ``producers`` threads for ``seconds``, each
    with its own connection; closes ``broker``."""
    counts = [0] * producers
    start = threading.Barrier(producers + 1)
    stop = threading.Event()

    def produce(index: int) -> None:
        with _connect(broker) as connection:
            producer = connection.create_session().create_producer(QUEUE)
            producer.send(TextMessage(BODY), delivery_mode=delivery_mode)  # warm up
            start.wait()
            sent = 0
            while not stop.is_set():
                producer.send(TextMessage(BODY), delivery_mode=delivery_mode)
                sent += 1
            counts[index] = sent

    threads = [threading.Thread(target=produce, args=(n,)) for n in range(producers)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    broker.close()
    return sum(counts) / elapsed


def fill(directory: Path, count: int) -> None:
    """Write ``count`` unacknowledged persistent messages to ``queue://bench`` of the store."""
    store = SQLiteStore(directory)
    completion = store.submit([AddDestination("queue://bench")])
    for seq in range(1, count + 1):
        message = TextMessage(BODY)
        message.set_jms_destination(QUEUE)
        message.set_jms_message_id(f"ID:bench-{seq}")
        completion = store.submit(
            [AppendMessage("queue://bench", seq, message, ("queue://bench",))]
        )
    if completion is not None:
        completion.wait()
    store.close()


def recovery_times(directory: Path, window: int | None) -> tuple[float, float]:
    """Seconds to open a broker on ``directory``, and until a consumer has the first message."""
    began = time.perf_counter()
    broker = Broker(SQLiteStore(directory), default_policy=DestinationPolicy(memory_window=window))
    opened = time.perf_counter() - began
    with _connect(broker) as connection:
        connection.start()
        first = connection.create_session().create_consumer(QUEUE).receive(60_000)
        if first is None:
            raise RuntimeError("the recovered queue delivered nothing within 60 s")
        until_first = time.perf_counter() - began
    broker.close()
    return opened, until_first


def _rss_mib() -> tuple[float, float]:
    """This process's resident set size and its peak, in MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return (
        int(fields["VmRSS"].split()[0]) / 1024,
        int(fields["VmHWM"].split()[0]) / 1024,
    )


def backlog_child(directory: Path, count: int) -> None:
    """Runs in a fresh process: fill, measure, reopen, measure, consume a prefix."""
    url = f"embedded://{directory}"
    factory = ConnectionFactory(url)
    producers = 4
    per_producer = count // producers
    batch = 500
    began = time.perf_counter()

    def produce(index: int) -> None:
        with factory.create_connection() as connection:
            session = connection.create_session(True)
            producer = session.create_producer(QUEUE)
            for n in range(per_producer):
                message = TextMessage(BODY)
                message.set_int_property("n", index * per_producer + n)
                producer.send(message)
                if (n + 1) % batch == 0:
                    session.commit()
            session.commit()

    threads = [threading.Thread(target=produce, args=(i,)) for i in range(producers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    filled = time.perf_counter() - began
    (stats,) = [s for s in embedded_broker(url).stats() if s.name == "queue://bench"]
    rss, peak = _rss_mib()
    print(f"filled {stats.depth} {filled:.1f} {rss:.1f} {peak:.1f} {stats.paged}", flush=True)
    close_embedded_broker(url)

    began = time.perf_counter()
    broker = open_broker(url)
    reopened = time.perf_counter() - began
    rss, _ = _rss_mib()
    print(f"reopened {reopened:.2f} {rss:.1f}", flush=True)
    with factory.create_connection() as connection:
        connection.start()
        session = connection.create_session(False, Session.DUPS_OK_ACKNOWLEDGE)
        consumer = session.create_consumer(QUEUE)
        last: dict[int, int] = {}
        began = time.perf_counter()
        for _ in range(20_000):
            message = consumer.receive(60_000)
            if message is None:
                raise RuntimeError("the backlog stopped delivering")
            n = message.get_int_property("n")
            producer_index = n // per_producer
            if last.get(producer_index, -1) >= n:
                raise RuntimeError(f"out of order: {n} after {last[producer_index]}")
            last[producer_index] = n
        consumed = time.perf_counter() - began
    rss, peak = _rss_mib()
    print(f"consumed {consumed:.2f} {rss:.1f} {peak:.1f}", flush=True)
    broker.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per send-throughput sample")
    parser.add_argument("--repeat", type=int, default=3, help="samples per row; the median shows")
    parser.add_argument("--recovery", type=int, default=100_000, help="messages to recover")
    parser.add_argument("--backlog", type=int, default=0, help="messages in the RSS run")
    parser.add_argument("--directory", type=Path, default=None, help="where stores go")
    parser.add_argument("--backlog-child", type=Path, default=None, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.backlog_child is not None:
        backlog_child(arguments.backlog_child, arguments.backlog)
        return

    with tempfile.TemporaryDirectory(dir=arguments.directory) as temporary:
        work = Path(temporary)
        syncs = raw_sync_rate(work)
        table = Table(
            title=(
                f"PERSISTENT send throughput, 1 KiB TextMessages, median of {arguments.repeat} "
                f"x {arguments.seconds:g} s (raw fdatasync: {syncs:,.0f}/s)"
            )
        )
        for column in ("producers", "group commit msgs/s", "fsync per message msgs/s", "ratio"):
            table.add_column(column, justify="right")
        table.add_column("NON_PERSISTENT msgs/s", justify="right")
        samples: dict[tuple[int, str], list[float]] = {}
        for repeat in range(arguments.repeat):  # interleaved, so drifts in disk speed hit all
            for producers in (1, 4, 16):
                for mode in ("group", "per-message", "non-persistent"):
                    directory = work / f"send-{producers}-{mode}-{repeat}"
                    rate = send_rate(directory, producers, arguments.seconds, mode)
                    samples.setdefault((producers, mode), []).append(rate)
        for producers in (1, 4, 16):
            rates = {
                mode: statistics.median(samples[(producers, mode)])
                for mode in ("group", "per-message", "non-persistent")
            }
            table.add_row(
                str(producers),
                f"{rates['group']:,.0f}",
                f"{rates['per-message']:,.0f}",
                f"{rates['group'] / rates['per-message']:.2f}x",
                f"{rates['non-persistent']:,.0f}",
            )
        console.print(table)

        if arguments.recovery:
            directory = work / "recovery"
            began = time.perf_counter()
            fill(directory, arguments.recovery)
            written = time.perf_counter() - began
            table = Table(
                title=(
                    f"Recovery of {arguments.recovery:,} unacknowledged 1 KiB messages "
                    f"(written in {written:.1f} s)"
                )
            )
            for column in ("memory window", "open broker s", "first message s"):
                table.add_column(column, justify="right")
            for window in (DestinationPolicy().memory_window, None):
                opened, first = recovery_times(directory, window)
                label = f"{window:,}" if window is not None else "none (all in memory)"
                table.add_row(label, f"{opened:.2f}", f"{first:.2f}")
            console.print(table)

        if arguments.backlog:
            run_backlog(work / "backlog", arguments.backlog)


def run_backlog(directory: Path, count: int) -> None:
    command = [
        sys.executable,
        __file__,
        "--backlog",
        str(count),
        "--backlog-child",
        str(directory),
    ]
    console.print(f"Filling a backlog of {count:,} messages in a fresh process…")
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    lines = {line.split()[0]: line.split()[1:] for line in output.splitlines()}
    depth, filled, rss, peak, paged = lines["filled"]
    reopened, rss_reopened = lines["reopened"]
    consumed, rss_consumed, peak_end = lines["consumed"]
    table = Table(title=f"Backlog of {int(depth):,} PERSISTENT 1 KiB messages on one queue")
    table.add_column("phase")
    table.add_column("seconds", justify="right")
    table.add_column("RSS MiB", justify="right")
    table.add_column("peak RSS MiB", justify="right")
    table.add_row(f"filled by 4 producers ({int(paged):,} paged out)", filled, rss, peak)
    table.add_row("reopened (recovery)", reopened, rss_reopened, "")
    table.add_row("first 20,000 consumed in order", consumed, rss_consumed, peak_end)
    console.print(table)


if __name__ == "__main__":
    main()
