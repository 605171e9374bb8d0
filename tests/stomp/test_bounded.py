"""A real ``jms broker`` process stays bounded whatever its clients do (docs/storage.md, "Memory
budget"; docs/stomp.md, "Flow control"): a subscriber that stops reading is closed as a slow
consumer while the broker's RSS stays within its budget and other clients are served; producers
are held back at the budget and go on without loss; PERSISTENT messages page out to the store
instead; a connection that never sends CONNECT is closed. Every broker here runs on 127.0.0.1 at
a free port and is stopped when its test ends; loops are bounded by counts and deadlines."""

from __future__ import annotations

import re
import socket
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest

from jms.stomp import Frame, Version
from tests.cli_process import JmsBroker, run_jms
from tests.stomp.serving import RawClient

MIB: Final = 1024 * 1024
BODY: Final = b"x" * 1024
WORK_DEPTH: Final = 'jms_queue_depth{destination="queue://work",queue="queue://work"}'


def _rss(pid: int) -> int:
    """The process's resident set size in bytes, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS in /proc/{pid}/status")


def _metric(broker: JmsBroker, name: str) -> float:
    found = re.search(r"metrics: (http://\S+/metrics)", broker.startup_line)
    assert found is not None, broker.startup_line
    with urllib.request.urlopen(found.group(1), timeout=10) as response:
        text = response.read().decode()
    value = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert value is not None, f"{name} is not in /metrics"
    return float(value.group(1))


def _port(broker: JmsBroker) -> int:
    return int(broker.url.rsplit(":", 1)[1])


def _wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout_s} s: {what}"
        time.sleep(0.05)


def _send_frame(destination: str, body: bytes, **headers: str) -> bytes:
    pairs = (("destination", destination), *headers.items())
    return Frame("SEND", pairs, body).to_bytes(Version.V1_2)


def _subscribe(client: RawClient, destination: str) -> None:
    """SUBSCRIBE (``ack:auto``) to a destination that holds nothing yet; wait for the receipt."""
    client.send(
        "SUBSCRIBE", {"destination": destination, "id": "1", "ack": "auto", "receipt": "subscribed"}
    )
    assert client.read().command == "RECEIPT"


def _stuck_subscriber(port: int, destination: str) -> RawClient:
    """A subscriber that never reads again once subscribed, with a small receive buffer."""
    client = RawClient(port)
    client.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.connect()
    _subscribe(client, destination)
    return client


class _Reader(threading.Thread):
    """Reads MESSAGE frames on ``client`` until ``count`` came or the client is closed."""

    def __init__(self, client: RawClient, count: int) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.count = count
        self.bodies: list[bytes] = []

    def run(self) -> None:
        try:
            while len(self.bodies) < self.count:
                frame = self.client.read(30)
                if frame.command == "MESSAGE":
                    self.bodies.append(frame.body)
        except (OSError, EOFError):
            return


def test_a_subscriber_that_stops_reading_is_closed_while_rss_stays_in_budget_and_others_go_on(
    tmp_path: Path,
) -> None:
    budget = 16 * MIB
    count = 40_000  # 1 KiB each: unbounded, the broker would grow by some 75 MiB
    with JmsBroker(
        "--max-memory", "16MiB", "--metrics-port", "0", store=tmp_path / "store"
    ) as broker:
        port = _port(broker)
        stuck = _stuck_subscriber(port, "/topic/prices")
        healthy = RawClient(port, timeout_s=30)
        healthy.connect()
        _subscribe(healthy, "/topic/prices")
        other = RawClient(port, timeout_s=10)
        other.connect()
        _subscribe(other, "/queue/orders")
        producer = RawClient(port, timeout_s=30)
        producer.connect()
        reader = _Reader(healthy, count)
        reader.start()
        baseline = peak = _rss(broker.pid)
        frame = _send_frame("/topic/prices", BODY)
        try:
            for sent in range(0, count, 100):
                # The healthy subscriber keeps up: only the stuck one falls behind.
                _wait_until(lambda: sent - len(reader.bodies) < 2000, "the healthy reader")  # noqa: B023
                producer.write(frame * 100)
                if sent % 5000 == 0:
                    peak = max(peak, _rss(broker.pid))
                    started = time.monotonic()
                    other.send("SEND", {"destination": "/queue/orders", "receipt": "r"}, b"order")
                    answers = sorted((f.command, f.body) for f in (other.read(), other.read()))
                    assert answers == [("MESSAGE", b"order"), ("RECEIPT", b"")]
                    assert time.monotonic() - started < 5, "another client waited"
            reader.join(60)
            peak = max(peak, _rss(broker.pid))
        finally:
            healthy.close()
        assert len(reader.bodies) == count
        assert peak - baseline < 2 * budget, f"RSS grew by {(peak - baseline) / MIB:.0f} MiB"
        # Its ERROR waits behind what it did not read: the server resets its socket after a
        # grace, freeing the kernel's buffers too.
        # Left: the other client and the producer (the healthy one closed above, the stuck one
        # gone whether its reset came before or after that).
        _wait_until(lambda: _metric(broker, "jms_stomp_connections") == 2, "stuck closed", 15)
        with pytest.raises(ConnectionResetError):
            while True:
                stuck.socket.recv(65536)
        assert _metric(broker, "jms_broker_slow_consumers_closed_total") == 1
        assert _metric(broker, "jms_broker_memory_limit_bytes") == budget
        for client in (stuck, other, producer):
            client.close()
    assert "slow consumer: subscriber://" in broker.log


def test_a_producer_is_held_back_at_the_budget_then_resumes_without_loss(tmp_path: Path) -> None:
    count = 6000  # about three times what a 4 MiB budget holds
    with JmsBroker(
        "--max-memory", "4MiB", "--metrics-port", "0", store=tmp_path / "store"
    ) as broker:
        port = _port(broker)
        producer = RawClient(port, timeout_s=60)
        producer.connect()
        frames = b"".join(_send_frame("/queue/work", b"%06d" % n + BODY) for n in range(count))
        last = _send_frame("/queue/work", b"last", receipt="all-sent")
        writer = threading.Thread(target=producer.write, args=(frames + last,), daemon=True)
        writer.start()
        try:
            _wait_until(lambda: _metric(broker, "jms_broker_producers_blocked") == 1, "held back")
            held = _metric(broker, WORK_DEPTH)
            time.sleep(1)
            assert held < count and held == _metric(broker, WORK_DEPTH), "not held back"
            assert _metric(broker, "jms_stomp_connections_held_back") == 1
            consumer = RawClient(port, timeout_s=30)
            consumer.connect()
            # No receipt asked: MESSAGE frames may come before it.
            consumer.send(
                "SUBSCRIBE", {"destination": "/queue/work", "id": "1", "ack": "client-individual"}
            )
            bodies = []
            for _ in range(count + 1):
                message = consumer.read()
                assert message.command == "MESSAGE", message
                bodies.append(message.body)
                consumer.send("ACK", {"id": (message.header("ack") or "")})
            assert producer.read().header("receipt-id") == "all-sent"
        finally:
            producer.close()
            writer.join(30)
        assert bodies == [b"%06d" % n + BODY for n in range(count)] + [b"last"]
        assert _metric(broker, "jms_broker_producers_blocked") == 0
        assert _metric(broker, "jms_broker_producer_blocks_total") >= 1
        assert _metric(broker, "jms_stomp_producer_pauses_total") >= 1
        consumer.close()
    assert "memory budget reached" in broker.log and "producers go on" in broker.log


def test_persistent_messages_wait_in_the_store_at_the_budget_and_none_is_dropped(
    tmp_path: Path,
) -> None:
    count = 5000  # about twice what a 2 MiB budget holds in memory
    with JmsBroker(
        "--max-memory", "2MiB", "--metrics-port", "0", store=tmp_path / "store"
    ) as broker:
        port = _port(broker)
        with RawClient(port, timeout_s=30) as producer:
            producer.connect()
            for first in range(0, count, 500):
                producer.write(
                    b"".join(
                        _send_frame("/queue/kept", b"%06d" % n + BODY, persistent="true")
                        for n in range(first, first + 500)
                    )
                )
                producer.send("SEND", {"destination": "/queue/other", "receipt": f"r{first}"})
                assert producer.read().header("receipt-id") == f"r{first}"
        assert _metric(broker, "jms_broker_paged_for_memory_total") > 0
        assert _metric(broker, "jms_broker_producers_blocked") == 0
        with RawClient(port, timeout_s=30) as consumer:
            consumer.connect()
            consumer.send("SUBSCRIBE", {"destination": "/queue/kept", "id": "1", "ack": "auto"})
            bodies = [consumer.read().body for _ in range(count)]
        assert bodies == [b"%06d" % n + BODY for n in range(count)]


def test_connections_that_never_send_connect_are_closed_and_others_are_served(
    tmp_path: Path,
) -> None:
    with JmsBroker("--connect-timeout", "1") as broker:
        port = _port(broker)
        idle = [RawClient(port) for _ in range(50)]
        try:
            with RawClient(port) as working:
                working.connect()
                working.send("SEND", {"destination": "/queue/q", "receipt": "r"}, b"x")
                assert working.read().command == "RECEIPT"
            started = time.monotonic()
            for client in idle:
                error = client.read(10)
                assert error.command == "ERROR"
                assert "no CONNECT within 1 s" in (error.header("message") or "")
                assert client.closed_by_server(5)
            assert time.monotonic() - started < 10
        finally:
            for client in idle:
                client.close()


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (("--connect-timeout", "31"), "--connect-timeout"),
        (("--max-memory", "64MB"), "--max-memory: '64MB' is not a size"),
        (("--max-memory", "1000"), "--max-memory: the memory budget must be a whole number"),
    ],
)
def test_bad_limits_are_refused_saying_which_option(
    arguments: tuple[str, ...], complaint: str
) -> None:
    result = run_jms("broker", "--memory", "--port", "0", *arguments, timeout_s=60)
    assert result.returncode != 0
    assert complaint in result.stderr.replace("\n", " ") or complaint in result.stdout


def test_the_config_file_sets_the_budget_and_the_option_wins(tmp_path: Path) -> None:
    config = tmp_path / "broker.toml"
    config.write_text('max_memory = "32MiB"\n')
    with JmsBroker("--config", str(config)) as broker:
        assert "max memory: 32 MiB" in broker.startup_line
    with JmsBroker("--config", str(config), "--max-memory", "8MiB") as broker:
        assert "max memory: 8 MiB" in broker.startup_line
    with JmsBroker() as broker:
        assert "max memory: 64 MiB" in broker.startup_line
    config.write_text("max_memory = 12\n")
    result = run_jms("broker", "--memory", "--port", "0", "--config", str(config), timeout_s=60)
    assert result.returncode != 0
    assert f"{config}: max_memory: the memory budget must be" in result.stderr.replace("\n", " ")
