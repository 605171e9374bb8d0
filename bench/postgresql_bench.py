"""The PostgreSQL store against the SQLite store, and how fast a standby takes over.

Send: 1, 4 and 16 producer threads, each with its own connection, send PERSISTENT 1 KiB
TextMessages to one queue of an in-process broker for ``--seconds`` each, on a ``SQLiteStore`` in
a temporary directory and on a ``PostgreSQLStore`` on a throwaway local PostgreSQL server (the
tests' ``PostgreSQLServer``, started with ``fsync=on`` here so that its commits cost what they
would); every send returns once its group's transaction is committed. Medians of ``--repeat``
interleaved samples.

Takeover: ``--takeovers`` times, an active ``jms broker`` process on the PostgreSQL store is killed
with SIGKILL while a standby waits; the figure is the time from the kill until a client connected
to the standby has received a message sent to the active broker before the kill.

    python bench/postgresql_bench.py [--seconds 2] [--repeat 3] [--takeovers 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.store_bench import broker_send_rate

from jms.broker import Broker
from jms.message import DeliveryMode
from jms.store import MessageStore
from jms.store.postgresql import PostgreSQLStore
from jms.store.sqlite import SQLiteStore
from tests.postgresql_server import PostgreSQLServer
from tests.stomp.test_standby import _BrokerProcess, _receive_all, _send

console = Console()


def send_rate(open_store: Callable[[], MessageStore], producers: int, seconds: float) -> float:
    """PERSISTENT messages per second sent by ``producers`` threads for ``seconds``."""
    return broker_send_rate(Broker(open_store()), producers, seconds, DeliveryMode.PERSISTENT)


def takeover_time(url: str) -> float:
    """Seconds from kill -9 of the active broker until the standby delivered its message."""
    active = _BrokerProcess(url)
    active_line = active.line(30)
    standby = _BrokerProcess(url)
    try:
        _send(active.port(active_line), ["before the kill"])
        if "standby" not in standby.line(30):
            raise RuntimeError("the second broker did not wait as a standby")
        os.kill(active.process.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        port = standby.port(standby.line(30))
        if _receive_all(port, 1) != ["before the kill"]:
            raise RuntimeError("the standby did not deliver the message sent before the kill")
        return time.monotonic() - killed_at
    finally:
        active.stop()
        standby.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per send-throughput sample")
    parser.add_argument("--repeat", type=int, default=3, help="samples per row; the median shows")
    parser.add_argument("--takeovers", type=int, default=5, help="standby takeovers to time")
    arguments = parser.parse_args()
    reason = PostgreSQLServer.unavailable()
    if reason is not None:
        raise SystemExit(f"cannot run: {reason}")
    with PostgreSQLServer(fsync=True) as server, tempfile.TemporaryDirectory() as scratch:
        table = Table(title="PERSISTENT 1 KiB sends, msgs/s (median)")
        for column in ("producers", "SQLite", "PostgreSQL", "PostgreSQL / SQLite"):
            table.add_column(column, justify="right")
        for producers in (1, 4, 16):
            sqlite_rates, postgresql_rates = [], []
            for sample in range(arguments.repeat):
                directory = Path(scratch) / f"sqlite-{producers}-{sample}"
                sqlite_rates.append(
                    send_rate(lambda d=directory: SQLiteStore(d), producers, arguments.seconds)
                )
                url = server.database()
                postgresql_rates.append(
                    send_rate(lambda u=url: PostgreSQLStore(u), producers, arguments.seconds)
                )
            sqlite_rate = statistics.median(sqlite_rates)
            postgresql_rate = statistics.median(postgresql_rates)
            table.add_row(
                str(producers),
                f"{sqlite_rate:,.0f}",
                f"{postgresql_rate:,.0f}",
                f"{postgresql_rate / sqlite_rate:.2f}x",
            )
        console.print(table)
        times = [takeover_time(server.database()) for _ in range(arguments.takeovers)]
        console.print(
            f"takeover after kill -9 ({len(times)} runs): median {statistics.median(times):.2f} s, "
            f"max {max(times):.2f} s"
        )


if __name__ == "__main__":
    main()
