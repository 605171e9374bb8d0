"""``jms send --count N`` of 1 KiB PERSISTENT messages into a real ``jms broker --store``, next to
the floor the client API reaches over the same STOMP connection (one producer, transactions of
the same size the command commits).

The command's figure is N divided by its whole run (interpreter start, imports, connect, sends,
commits, close), as a user waits for it; the API's is N divided by the send loop alone. Each run
sends to a new queue of one broker, whose store holds every message: this is the write path,
with a commit (and an fsync) per transaction.

    python bench/cli_send_bench.py [--messages 50000] [--size 1024] [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jms.cli import _SEND_BATCH
from jms.client import ConnectionFactory
from jms.message import Queue

_RUN_CLI = "import sys; from jms.cli import main; sys.argv[0] = 'jms'; main()"


def command_rate(url: str, queue: str, count: int, body: str) -> float:
    """Messages per second of ``jms send QUEUE BODY --count COUNT``, start to exit."""
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", _RUN_CLI, "send", queue, body, "--count", str(count), "--url", url],
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    return count / (time.perf_counter() - began)


def api_rate(url: str, queue: str, count: int, body: str) -> float:
    """Messages per second of a transacted producer committing every ``_SEND_BATCH``."""
    with ConnectionFactory(url).create_connection() as connection:
        session = connection.create_session(True)
        producer = session.create_producer(Queue(queue))
        began = time.perf_counter()
        for number in range(1, count + 1):
            producer.send(session.create_text_message(body))
            if number % _SEND_BATCH == 0 or number == count:
                session.commit()
        return count / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    body = "x" * options.size
    with tempfile.TemporaryDirectory() as directory:
        store = str(Path(directory) / "store")
        broker = subprocess.Popen(
            [sys.executable, "-c", _RUN_CLI, "broker", "--store", store, "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert broker.stdout is not None
            ready, _, _ = select.select([broker.stdout], [], [], 60)
            found = re.search(r"stomp://\S+", broker.stdout.readline() if ready else "")
            if found is None:
                raise SystemExit("jms broker did not start")
            url = found.group(0)
            rows = []
            for run in range(options.repeat):  # interleaved: both see the same machine load
                rows.append(
                    (
                        command_rate(url, f"cli.{run}", options.messages, body),
                        api_rate(url, f"api.{run}", options.messages, body),
                    )
                )
        finally:
            broker.send_signal(signal.SIGTERM)
            broker.wait(60)
    print(
        f"{options.messages:,} PERSISTENT messages of {options.size} B, transactions of "
        f"{_SEND_BATCH}, {options.repeat} interleaved runs"
    )
    print("| run | jms send msgs/s | API floor msgs/s | ratio |")
    print("|---:|---:|---:|---:|")
    for run, (command, api) in enumerate(rows, 1):
        print(f"| {run} | {command:,.0f} | {api:,.0f} | {command / api:.2f}x |")
    best_command = max(command for command, _ in rows)
    best_api = max(api for _, api in rows)
    print(f"| best | {best_command:,.0f} | {best_api:,.0f} | {best_command / best_api:.2f}x |")


if __name__ == "__main__":
    main()
