"""Several ``jms broker`` processes on one PostgreSQL store (docs/ha.md): one is active, the others
wait as standbys and say so; a standby takes over within seconds of the active broker's kill -9,
with every message the active one had accepted; and an active broker whose database session is
ended stops serving before a standby starts (no split brain)."""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from jms.client import ConnectionFactory
from jms.message import Queue, TextMessage
from tests.postgresql_server import PostgreSQLServer

_RUN_CLI = "import sys; from jms.cli import main; sys.argv[0] = 'jms'; main()"
_LISTENING = re.compile(r"listening on stomp://127\.0\.0\.1:(\d+)")
#: What the issue asks of a takeover: "within a few seconds".
_TAKEOVER_LIMIT_S = 5.0

pytestmark = pytest.mark.slow


class _BrokerProcess:
    """``jms broker --store URL ARGUMENTS`` (``--port 0`` unless given) and the lines it
    prints."""

    def __init__(self, store: str, *arguments: str) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _RUN_CLI,
                "broker",
                "--store",
                store,
                *(arguments or ("--port", "0")),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def line(self, timeout_s: float) -> str:
        """The next line it prints, or "" if none comes within ``timeout_s``."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout_s)
        return self.process.stdout.readline() if ready else ""

    def port(self, line: str) -> int:
        match = _LISTENING.search(line)
        assert match is not None, f"not a listening line: {line!r}; stderr: {self.stderr()}"
        return int(match.group(1))

    def stderr(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        assert self.process.stderr is not None
        return self.process.stderr.read()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


@contextmanager
def _brokers(store: str, count: int) -> Iterator[list[_BrokerProcess]]:
    """``count`` brokers on ``store``, started one after another; always stopped."""
    with ExitStack() as stack:
        brokers = []
        for _ in range(count):
            broker = _BrokerProcess(store)
            stack.callback(broker.stop)
            brokers.append(broker)
        yield brokers


def _send(port: int, texts: list[str]) -> None:
    with ConnectionFactory(f"stomp://127.0.0.1:{port}").create_connection() as connection:
        producer = connection.create_session().create_producer(Queue("ha"))
        for text in texts:
            producer.send(TextMessage(text))


def _receive_all(port: int, count: int) -> list[str]:
    received: list[str] = []
    with ConnectionFactory(f"stomp://127.0.0.1:{port}").create_connection() as connection:
        connection.start()
        consumer = connection.create_session().create_consumer(Queue("ha"))
        while len(received) < count and (message := consumer.receive(5000)) is not None:
            received.append(message.get_text())  # type: ignore[attr-defined]
    return received


def test_a_standby_takes_over_within_seconds_when_the_active_broker_is_killed(
    postgresql_url: str,
) -> None:
    with _brokers(postgresql_url, 1) as (active,):
        active_port = active.port(active.line(30))
        texts = [f"m{n}" for n in range(50)]
        _send(active_port, texts)
        with _brokers(postgresql_url, 2) as standbys:
            for standby in standbys:
                line = standby.line(30)
                assert "standby" in line and "not listening" in line, line
                assert "jms-test-secret" not in line
            os.kill(active.process.pid, signal.SIGKILL)
            killed_at = time.monotonic()
            streams = {standby.process.stdout: standby for standby in standbys}
            ready, _, _ = select.select(list(streams), [], [], _TAKEOVER_LIMIT_S)
            assert len(ready) == 1, f"{len(ready)} standbys spoke after the kill"
            taking_over = streams[ready[0]]
            line = taking_over.line(0)
            new_port = taking_over.port(line)
            received = _receive_all(new_port, len(texts))
            serving_after = time.monotonic() - killed_at
            print(
                f"takeover: a standby served the first messages {serving_after:.2f} s after kill -9"
            )
            assert sorted(received) == sorted(texts)
            assert serving_after < _TAKEOVER_LIMIT_S
            # The other one still waits, and takes over in turn.
            (waiting,) = [s for s in standbys if s is not taking_over]
            assert waiting.process.poll() is None
            assert waiting.line(0.5) == "", "a second standby took over too"
            taking_over.stop()
            assert _LISTENING.search(waiting.line(_TAKEOVER_LIMIT_S))


def _refuses_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return False
    except OSError:
        return True


def test_an_active_broker_cut_off_from_its_database_stops_serving_before_a_standby_starts(
    postgresql_server: PostgreSQLServer, postgresql_url: str
) -> None:
    with _brokers(postgresql_url, 1) as (active,), ExitStack() as stack:
        active_port = active.port(active.line(30))
        (standby,) = stack.enter_context(_brokers(postgresql_url, 1))
        assert "standby" in standby.line(30)
        _send(active_port, ["before the cut"])
        stopped_at: list[float] = []

        def watch() -> None:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if _refuses_connections(active_port):
                    stopped_at.append(time.monotonic())
                    return
                time.sleep(0.005)

        watcher = threading.Thread(target=watch)
        watcher.start()
        assert postgresql_server.terminate_sessions(postgresql_url, active.process.pid) >= 1
        line = standby.line(_TAKEOVER_LIMIT_S)
        standby_at = time.monotonic()
        watcher.join(15)
        new_port = standby.port(line)
        assert stopped_at, "the active broker kept listening after it lost its database"
        assert stopped_at[0] < standby_at, "the standby served while the active one still did"
        assert active.process.wait(10) == 1
        assert "lost the connection to the store database" in active.stderr()
        assert _receive_all(new_port, 1) == ["before the cut"]
