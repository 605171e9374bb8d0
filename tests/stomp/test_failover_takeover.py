"""Clients on a ``failover:`` URL through kill -9 after kill -9 of the active broker (docs/ha.md):
two ``jms broker`` processes share a PostgreSQL store on fixed ports, a producer and a consumer
run steadily, and each round the active broker is killed, the standby takes over, and the killed
one comes back as the new standby. Afterwards every PERSISTENT message sent was received, exactly
once or else flagged redelivered: none lost, no unflagged duplicate."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections import Counter
from contextlib import ExitStack

import pytest

from jms.client import ConnectionFactory, Session
from jms.message import DeliveryMode, Queue, TextMessage
from tests.stomp.test_standby import _LISTENING, _BrokerProcess

pytestmark = pytest.mark.slow

_ROUNDS = 10
_QUEUE = Queue("failover-load")
#: Messages the consumer must get between two kills: the clients really carry on each time.
_PROGRESS = 30
_WAIT_S = 15.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _Load:
    """A producer sending PERSISTENT messages one after another and a consumer receiving them,
    each on its own failover connection, until stopped."""

    def __init__(self, url: str) -> None:
        self.sent: list[str] = []
        self.received: list[tuple[str, bool]] = []
        self.received_at: list[float] = []
        self.errors: list[BaseException] = []
        self.stop_sending = threading.Event()
        self.stop_receiving = threading.Event()
        self._factory = ConnectionFactory(url)
        self._threads = [
            threading.Thread(target=self._guarded, args=(self._produce,), daemon=True),
            threading.Thread(target=self._guarded, args=(self._consume,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _guarded(self, run: object) -> None:
        try:
            run()  # type: ignore[operator]
        except BaseException as error:  # reported by the test, not lost in a thread
            self.errors.append(error)

    def _produce(self) -> None:
        with self._factory.create_connection() as connection:
            producer = connection.create_session().create_producer(_QUEUE)
            producer.set_delivery_mode(DeliveryMode.PERSISTENT)
            number = 0
            while not self.stop_sending.is_set():
                text = f"m{number}"
                producer.send(TextMessage(text))
                self.sent.append(text)
                number += 1
                time.sleep(0.002)

    def _consume(self) -> None:
        with self._factory.create_connection() as connection:
            connection.start()
            consumer = connection.create_session(Session.AUTO_ACKNOWLEDGE).create_consumer(_QUEUE)
            while not self.stop_receiving.is_set():
                message = consumer.receive(200)
                if message is not None:
                    text = message.get_text()  # type: ignore[attr-defined]
                    self.received.append((text, message.get_jms_redelivered()))
                    self.received_at.append(time.monotonic())

    def producer_stopped(self) -> bool:
        return not self._threads[0].is_alive()

    def wait_for(self, condition: object, what: str) -> None:
        deadline = time.monotonic() + _WAIT_S
        while not condition():  # type: ignore[operator]
            assert not self.errors, f"a client failed: {self.errors[0]!r}"
            assert time.monotonic() < deadline, f"waited {_WAIT_S} s for {what}"
            time.sleep(0.02)

    def stop(self) -> None:
        self.stop_sending.set()
        self.stop_receiving.set()
        for thread in self._threads:
            thread.join(_WAIT_S)


def test_failover_clients_lose_nothing_and_duplicate_nothing_unflagged_over_ten_kills(
    postgresql_url: str,
) -> None:
    ports = [_free_port(), _free_port()]
    url = (
        f"failover:(stomp://127.0.0.1:{ports[0]},stomp://127.0.0.1:{ports[1]})"
        "?initialReconnectDelay=50&maxReconnectDelay=250&maxReconnectAttempts=200"
    )
    with ExitStack() as stack:

        def start(port: int) -> _BrokerProcess:
            broker = _BrokerProcess(postgresql_url, "--port", str(port))
            stack.callback(broker.stop)
            return broker

        active = start(ports[0])
        assert _LISTENING.search(active.line(30)), active.stderr()
        standby = start(ports[1])
        assert "standby" in standby.line(30), standby.stderr()
        load = _Load(url)
        stack.callback(load.stop)
        takeovers: list[float] = []
        for round_number in range(_ROUNDS):
            seen = len(load.received)
            load.wait_for(
                lambda seen=seen: len(load.received) >= seen + _PROGRESS,
                f"the consumer to carry on in round {round_number}",
            )
            os.kill(active.process.pid, signal.SIGKILL)
            killed_at = time.monotonic()
            active.process.wait(10)
            line = standby.line(_WAIT_S)
            assert _LISTENING.search(line), f"round {round_number}: the standby said {line!r}"
            takeovers.append(time.monotonic() - killed_at)
            # The killed broker's port is free again: a new standby waits there.
            ports.reverse()
            active, standby = standby, start(ports[1])
            assert "standby" in standby.line(30), standby.stderr()
        load.stop_sending.set()
        load.wait_for(load.producer_stopped, "the producer to stop")
        sent = set(load.sent)
        load.wait_for(
            lambda: sent <= {text for text, _ in load.received}, "every sent message to arrive"
        )
        load.stop()
        assert not load.errors, f"a client failed: {load.errors[0]!r}"
    counts = Counter(text for text, _ in load.received)
    unflagged = Counter(text for text, redelivered in load.received if not redelivered)
    assert set(counts) == sent, f"received what was never sent: {set(counts) - sent}"
    doubled = [text for text, count in unflagged.items() if count > 1]
    assert doubled == [], f"duplicates not flagged redelivered: {doubled[:10]}"
    redelivered = sum(1 for _, flag in load.received if flag)
    pauses = sorted(b - a for a, b in zip(load.received_at, load.received_at[1:], strict=False))
    print(
        f"{len(sent)} messages over {_ROUNDS} kills: {len(load.received)} received, "
        f"{redelivered} flagged redelivered; takeovers (kill -9 to the standby listening) took "
        f"{min(takeovers):.2f} to {max(takeovers):.2f} s; the consumer's {_ROUNDS} longest "
        f"pauses {pauses[-_ROUNDS]:.2f} to {pauses[-1]:.2f} s"
    )
