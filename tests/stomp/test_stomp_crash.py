"""The crash test over the network: ``jms broker`` as its own process on a durable store (a SQLite
directory, or a PostgreSQL database), killed with SIGKILL at seeded random moments while a client
process produces (each PERSISTENT send and commit waiting for its RECEIPT) and consumes
(client-individual acknowledgements, each waited for) over STOMP.

Each round starts the broker on a free port (paging forced by a small memory window) and the
client process (``stomp_crash_child.py``), lets them run for a random while, kills the broker,
and lets the client notice and exit. After the last round the test opens the store in-process,
drains what is left, and holds the side logs to the same promises as the embedded
crash test (``tests/store/test_crash.py``): nothing whose send or commit returned is lost, nothing
acknowledged comes back, a repeated delivery is marked redelivered with a delivery count to
match, and transactions are all or nothing. Every process is killed and reaped, whatever happens.

A second test races the group commit on purpose: raw STOMP clients in this process, a producer
pipelining receipted PERSISTENT SENDs and a consumer acknowledging (with receipts) each message
the moment it arrives — often before the batch storing it is written, when the two may be
written together (the message not at all) or apart — and the same promises are held.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import suppress
from pathlib import Path

import pytest

from jms.stomp import Frame, FrameParser, Role, Version
from tests.store.test_crash import _drain, _History, _lines, assert_promises_kept

CHILD = Path(__file__).with_name("stomp_crash_child.py")
ROUNDS = 8
SEEDS = {"queue": 20251122, "topic": 61613}
CONFIG = """
[[policies]]
destination = "*"
memory_window = 16
max_deliveries = 4
"""
_LISTENING = re.compile(r"listening on (stomp://127\.0\.0\.1:\d+)")

pytestmark = pytest.mark.slow


def _start_broker(store: str, config: Path, stderr: Path) -> tuple[subprocess.Popen[str], str]:
    """``jms broker`` on a free port; its process and URL once it listens."""
    broker = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from jms.cli import main; sys.argv[0] = 'jms'; main()",
            "broker",
            "--store",
            store,
            "--port",
            "0",
            "--config",
            str(config),
        ],
        stdout=subprocess.PIPE,
        stderr=stderr.open("w"),
        text=True,
    )
    assert broker.stdout is not None
    ready, _, _ = select.select([broker.stdout], [], [], 30)
    line = broker.stdout.readline() if ready else ""
    match = _LISTENING.search(line)
    if match is None:
        broker.kill()
        broker.wait(10)
        pytest.fail(f"jms broker did not start: {line!r} {stderr.read_text()}")
    return broker, match.group(1)


def _run_round(
    store: str, config: Path, logs: Path, round_: int, seed: int, kind: str, run_for: float
) -> None:
    broker, url = _start_broker(store, config, logs / f"broker-{round_}.txt")
    child: subprocess.Popen[str] | None = None
    try:
        child = subprocess.Popen(
            [sys.executable, str(CHILD), url, str(logs), str(round_), str(seed), kind],
            stdout=subprocess.PIPE,
            stderr=(logs / f"client-{round_}.txt").open("w"),
            text=True,
        )
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], 30)
        if not ready or child.stdout.readline() != "ready\n":
            pytest.fail(
                f"round {round_}: the client did not start: {(logs / f'client-{round_}.txt').read_text()}"
            )
        time.sleep(run_for)
        assert broker.poll() is None, f"round {round_}: the broker died by itself"
        os.kill(broker.pid, signal.SIGKILL)
        broker.wait(10)
        try:
            child.wait(30)  # the client notices the loss and stops
        except subprocess.TimeoutExpired:
            pytest.fail(f"round {round_}: the client did not notice the broker's death in 30 s")
    finally:
        for process in (broker, child):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(10)


@pytest.mark.parametrize(
    ("store_kind", "kind"),
    [("sqlite", "queue"), ("sqlite", "topic"), ("postgresql", "queue"), ("postgresql", "topic")],
)
def test_a_killed_broker_process_loses_and_repeats_nothing_promised(
    request: pytest.FixtureRequest, tmp_path: Path, store_kind: str, kind: str
) -> None:
    seed = SEEDS[kind]
    rng = random.Random(seed)
    store = (
        request.getfixturevalue("postgresql_url")
        if store_kind == "postgresql"
        else str(tmp_path / "store")
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    config = tmp_path / "broker.toml"
    config.write_text(CONFIG)
    for round_ in range(ROUNDS):
        _run_round(store, config, logs, round_, rng.randrange(2**32), kind, rng.uniform(0.3, 1.5))

    history = _History()
    for round_ in range(ROUNDS):
        history.read_producer(logs / f"producer-{round_}.log")
        history.read_consumer(logs / f"consumer-{round_}.log")
    left = _drain(f"embedded://{store}", kind, history)
    context = f"(seed {seed}, logs in {logs})"

    assert len(history.sent) > ROUNDS, f"few sends returned in {ROUNDS} rounds {context}"
    assert history.acknowledged, f"nothing was acknowledged in {ROUNDS} rounds {context}"
    assert any(
        fields[0] == "V" for r in range(ROUNDS) for fields in _lines(logs / f"consumer-{r}.log")
    )
    assert_promises_kept(history, left, context)


async def _ack_on_arrival_round(
    url: str, broker_pid: int, history: _History, round_: int, run_for: float, early: list[str]
) -> None:
    """A producer pipelining PERSISTENT sends (each with a receipt) and a consumer that
    acknowledges each message (with a receipt) the moment it arrives, often before the group
    commit that stores it; the broker is killed after ``run_for`` seconds. What the receipts
    said goes into ``history``; ``early`` gets each message delivered before its send's receipt
    came."""
    host, port = url.removeprefix("stomp://").split(":")
    receipted: set[str] = set()

    async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter, FrameParser]:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"CONNECT\naccept-version:1.2\nhost:localhost\nheart-beat:0,0\n\n\0")
        parser = FrameParser(Role.SERVER, version=Version.V1_2)
        return reader, writer, parser

    async def frames(reader: asyncio.StreamReader, parser: FrameParser) -> AsyncIterator[Frame]:
        """The frames the broker sends, until it dies."""
        while True:
            try:
                data = await reader.read(65536)
            except ConnectionError:
                return
            if not data:
                return
            for event in parser.feed(data):
                if isinstance(event, Frame):
                    yield event

    async def produce() -> None:
        reader, writer, parser = await connect()
        window = asyncio.Semaphore(50)

        async def send() -> None:
            for number in itertools.count():
                await window.acquire()
                uid = f"u{round_}-{number}"
                writer.write(
                    f"SEND\ndestination:/queue/crash\npersistent:true\nuid:{uid}\n"
                    f"receipt:{uid}\ncontent-length:3\n\nabc\0".encode()
                )
                await writer.drain()

        sending = asyncio.create_task(send())
        async for frame in frames(reader, parser):
            if frame.command == "RECEIPT":
                uid = frame.header("receipt-id") or ""
                history.sent.add(uid)
                receipted.add(uid)
                window.release()
        sending.cancel()
        with suppress(asyncio.CancelledError, ConnectionError):
            await sending

    async def consume(subscribed: asyncio.Event) -> None:
        reader, writer, parser = await connect()
        writer.write(
            b"SUBSCRIBE\nid:1\ndestination:/queue/crash\nack:client-individual\n"
            b"activemq.prefetchSize:100\nreceipt:subscribed\n\n\0"
        )
        acknowledging: dict[str, str] = {}  # ack receipt -> uid
        async for frame in frames(reader, parser):
            if frame.command == "RECEIPT" and frame.header("receipt-id") == "subscribed":
                subscribed.set()
            elif frame.command == "RECEIPT":
                uid = acknowledging.pop(frame.header("receipt-id") or "")
                history.position += 1
                history.acknowledged[uid] = history.position
            elif frame.command == "MESSAGE":
                uid = frame.header("uid") or ""
                count = int(frame.header("JMSXDeliveryCount") or "0")
                history.delivered(uid, frame.header("redelivered") == "true", count)
                if uid not in receipted:
                    early.append(uid)
                acknowledging[f"a-{uid}"] = uid
                writer.write(f"ACK\nid:{frame.header('ack')}\nreceipt:a-{uid}\n\n\0".encode())
        history.maybe_acknowledged.update(acknowledging.values())

    subscribed = asyncio.Event()
    consumer = asyncio.create_task(consume(subscribed))
    await asyncio.wait_for(subscribed.wait(), 30)
    producer = asyncio.create_task(produce())
    await asyncio.sleep(run_for)
    os.kill(broker_pid, signal.SIGKILL)
    await asyncio.wait_for(asyncio.gather(producer, consumer), 30)


def test_a_message_acknowledged_before_its_group_commit_never_comes_back_and_none_is_lost(
    tmp_path: Path,
) -> None:
    # A consumer acknowledging each message as it arrives races the store's group commits: a
    # message may reach it (and be acknowledged) before the batch storing it is written, and
    # the two may then be written together (the message not at all) or apart. Killed between
    # any of these, the broker must keep every message whose send was receipted and not
    # acknowledged, and give back none whose acknowledgement was receipted.
    rng = random.Random(4242)
    store = str(tmp_path / "store")
    logs = tmp_path / "logs"
    logs.mkdir()
    config = tmp_path / "broker.toml"
    config.write_text(CONFIG)
    history = _History()
    early: list[str] = []
    for round_ in range(5):
        broker, url = _start_broker(store, config, logs / f"broker-{round_}.txt")
        try:
            run_for = rng.uniform(0.3, 1.0)
            asyncio.run(_ack_on_arrival_round(url, broker.pid, history, round_, run_for, early))
            broker.wait(10)
        finally:
            if broker.poll() is None:
                broker.kill()
                broker.wait(10)
    left = _drain(f"embedded://{store}", "queue", history)
    context = f"(seed 4242, logs in {logs})"

    assert len(history.sent) > 100, f"few sends were receipted {context}"
    assert len(history.acknowledged) > 100, f"few acknowledgements were receipted {context}"
    assert early, f"no message reached the consumer before its send's receipt {context}"
    assert_promises_kept(history, left, context)
