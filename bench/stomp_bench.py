"""STOMP throughput and latency: our ``jms broker`` next to ActiveMQ Classic 5.17 and RabbitMQ 3.10
(its STOMP plugin), same machine, same run, same load tool.

The load tool is this file: asyncio clients speaking STOMP 1.2 over raw sockets with pre-built
frames, so the tool costs little next to the brokers. Producers pipeline 1 KiB SENDs, writing up
to 16 frames at once: without receipts for NON_PERSISTENT rows, and for PERSISTENT rows each SEND
asks for a RECEIPT with up to ``--window`` of them outstanding per producer (the broker has the
message durably when it answers). Consumers subscribe with ``ack:client`` and a prefetch of 1000 and acknowledge
cumulatively every 100 messages. Every message carries its send time; a consumer's receive time
minus it is the message's latency (p50/p99; it includes any backlog queueing). Throughput is
messages / (last receive − first send). Every broker is started first and each row runs
``--repeat`` times (default 3) on each, on fresh queues, the brokers taking turns run by run;
the best run of each counts. Both keep other load on the machine (which comes and goes) out of
the ratios as far as one run can; an untimed warm-up run on each broker comes first. Every broker keeps PERSISTENT messages on disk
(ours: the embedded SQLite store; ActiveMQ: KahaDB; RabbitMQ: its message store, for a
``persistent:true`` message on a durable queue) and answers such a SEND's receipt once it has
them (RabbitMQ: once its publisher confirm comes). The table puts the brokers side by side with
the ratio of ours to the best peer measured in each row.

Each broker gets the same load in its own STOMP dialect: queues are ``/queue/NAME`` for all (on
RabbitMQ durable, non-exclusive, not auto-deleted: declared so on SUBSCRIBE); the prefetch is
``activemq.prefetchSize`` for ours and ActiveMQ, ``prefetch-count`` for RabbitMQ; ``ack:client``
acknowledges cumulatively on all three; CONNECT names the virtual host ``/`` for RabbitMQ, which
reads the ``host`` header as one.

    python bench/stomp_bench.py [--messages 20000] [--window 100] [--repeat 3]
                                [--only jms|activemq|rabbitmq]

ActiveMQ rows need the ``activemq`` package (and Java), RabbitMQ rows the ``rabbitmq-server``
package; a peer that is not installed is skipped, saying so.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jms.stomp import Frame, FrameParser, Role, Version
from tests.stomp.activemq import ActiveMQ
from tests.stomp.rabbitmq import RabbitMQ

BODY = b"x" * 1024
ACK_EVERY = 100
PREFETCH = 1000
BATCH = 16  # frames a producer writes at once


@dataclass(frozen=True)
class Scenario:
    producers: int
    consumers: int
    persistent: bool

    @property
    def label(self) -> str:
        kind = "persistent + receipts" if self.persistent else "non-persistent"
        return f"{self.producers}P/{self.consumers}C {kind}"


SCENARIOS = [
    Scenario(1, 1, False),
    Scenario(4, 4, False),
    Scenario(1, 1, True),
    Scenario(4, 4, True),
]


@dataclass(frozen=True)
class Target:
    """A running broker and how to speak STOMP to it."""

    host: str
    port: int
    server: str = "jms broker"  # for the log: a peer's CONNECTED server header
    virtual_host: str = "localhost"  # CONNECT's host header
    subscribe_headers: str = f"activemq.prefetchSize:{PREFETCH}\n"


@dataclass
class Result:
    messages: int
    seconds: float
    latencies_ms: list[float]

    @property
    def rate(self) -> float:
        return self.messages / self.seconds

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _connect(target: Target) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection(target.host, target.port)
    writer.write(
        f"CONNECT\naccept-version:1.2\nhost:{target.virtual_host}\nheart-beat:0,0\n\n\0".encode()
    )
    answer = await reader.readuntil(b"\0")
    if not answer.startswith(b"CONNECTED"):
        raise RuntimeError(f"the broker refused CONNECT: {answer[:200]!r}")
    return reader, writer


async def _produce(
    target: Target, destination: str, count: int, persistent: bool, window: int
) -> float:
    """Send ``count`` messages; return the time of the first send."""
    reader, writer = await _connect(target)
    # NON_PERSISTENT is the absent header, not ``persistent:false``: RabbitMQ also reads
    # ``persistent`` as the ``durable`` of the queue a SEND declares, and refuses the SEND
    # (RESOURCE_LOCKED) when that contradicts the durable queue the consumers declared.
    head = f"SEND\ndestination:{destination}\n" + ("persistent:true\n" if persistent else "")
    tail = f"content-length:{len(BODY)}\n\n".encode() + BODY + b"\0"
    outstanding = asyncio.Semaphore(window)
    answered = asyncio.Event()
    remaining = count

    async def read_receipts() -> None:
        nonlocal remaining
        parser = FrameParser(Role.SERVER, version=Version.V1_2)
        while remaining:
            data = await reader.read(65536)
            if not data:
                raise RuntimeError("the broker closed a producer's connection")
            for event in parser.feed(data):
                if isinstance(event, Frame):
                    if event.command == "ERROR":
                        raise RuntimeError(f"ERROR: {event.header('message')}")
                    if event.command == "RECEIPT":
                        remaining -= 1
                        outstanding.release()
        answered.set()

    receipts = asyncio.create_task(read_receipts()) if persistent else None
    first = time.time()
    batch: list[bytes] = []
    for number in range(count):
        if persistent:
            if outstanding.locked() and batch:  # write what waits before waiting for receipts
                writer.write(b"".join(batch))
                batch.clear()
            await outstanding.acquire()
            receipt = f"receipt:{number}\n"
        else:
            receipt = ""
        batch.append(f"{head}bench-sent-ns:{time.time_ns()}\n{receipt}".encode() + tail)
        if len(batch) == BATCH:
            writer.write(b"".join(batch))
            batch.clear()
            await writer.drain()
    writer.write(b"".join(batch))
    await writer.drain()
    if receipts is not None:
        await receipts
    # STOMP's graceful disconnect: DISCONNECT's receipt says the broker took every frame before
    # it, and a broker that refused a SEND (an ERROR, then a closed connection) fails the run here
    # instead of leaving the consumers waiting for messages that will never come.
    writer.write(b"DISCONNECT\nreceipt:bye\n\n\0")
    await writer.drain()
    await asyncio.wait_for(reader.readuntil(b"receipt-id:bye"), 60)
    writer.close()
    return first


class _Tally:
    def __init__(self, total: int) -> None:
        self.total = total
        self.received = 0
        self.last = 0.0
        self.latencies_ms: list[float] = []
        self.done = asyncio.Event()


_SENT = re.compile(rb"\nbench-sent-ns:(\d+)")
_ACK = re.compile(rb"\nack:([^\n]*)")


async def _consume(target: Target, destination: str, tally: _Tally, ready: asyncio.Event) -> None:
    reader, writer = await _connect(target)
    writer.write(
        f"SUBSCRIBE\nid:1\ndestination:{destination}\nack:client\n"
        f"{target.subscribe_headers}receipt:subscribed\n\n\0".encode()
    )
    await reader.readuntil(b"\0")  # the RECEIPT
    ready.set()
    buffer = b""
    unacked = 0
    last_ack = b""
    while not tally.done.is_set():
        try:
            data = await asyncio.wait_for(reader.read(262144), 0.2)
        except TimeoutError:
            continue
        if not data:
            raise RuntimeError("the broker closed a consumer's connection")
        buffer += data
        now_ns = time.time_ns()
        # Frames are MESSAGEs with content-length:1024 bodies (and heart-beat newlines).
        while True:
            start = buffer.find(b"MESSAGE\n")
            if start < 0:
                buffer = buffer[-8:]
                break
            head_end = buffer.find(b"\n\n", start)
            if head_end < 0 or len(buffer) < head_end + 2 + len(BODY) + 1:
                buffer = buffer[start:]
                break
            head = buffer[start:head_end]
            sent = _SENT.search(head)
            ack = _ACK.search(head)
            if sent is not None:
                tally.latencies_ms.append((now_ns - int(sent.group(1))) / 1e6)
            if ack is not None:
                last_ack = ack.group(1)
            buffer = buffer[head_end + 2 + len(BODY) + 1 :]
            tally.received += 1
            unacked += 1
        if unacked >= ACK_EVERY or (tally.received >= tally.total and unacked):
            writer.write(b"ACK\nid:" + last_ack + b"\n\n\0")
            unacked = 0
        if tally.received >= tally.total:
            tally.last = time.time()
            tally.done.set()
    await writer.drain()
    writer.close()


async def _run(target: Target, scenario: Scenario, messages: int, window: int, tag: str) -> Result:
    destination = (
        f"/queue/bench.{tag}.{scenario.producers}.{int(scenario.persistent)}.{time.time_ns()}"
    )
    tally = _Tally(messages)
    ready = [asyncio.Event() for _ in range(scenario.consumers)]
    consumers = [
        asyncio.create_task(_consume(target, destination, tally, event)) for event in ready
    ]
    await asyncio.gather(*(event.wait() for event in ready))
    share = messages // scenario.producers
    firsts = await asyncio.gather(
        *(
            _produce(target, destination, share, scenario.persistent, window)
            for _ in range(scenario.producers)
        )
    )
    await asyncio.wait_for(tally.done.wait(), 600)
    await asyncio.gather(*consumers)
    return Result(messages, tally.last - min(firsts), tally.latencies_ms)


@contextmanager
def jms_broker_process() -> Iterator[Target]:
    """A `jms broker` process on a fresh store in a temporary directory: where it listens."""
    with tempfile.TemporaryDirectory(prefix="jms-bench-") as directory:
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from jms.cli import main; sys.argv[0] = 'jms'; main()",
                "broker",
                "--store",
                directory,
                "--port",
                "0",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], 60)
            line = process.stdout.readline() if ready else ""
            match = re.search(r"stomp://([\d.]+):(\d+)", line)
            if match is None:
                raise RuntimeError(f"jms broker did not start: {line!r}")
            yield Target(match.group(1), int(match.group(2)))
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


@contextmanager
def _activemq() -> Iterator[Target]:
    with ActiveMQ(persistent=True, heap="1g") as broker:
        yield Target("127.0.0.1", broker.port, server=broker.server)


@contextmanager
def _rabbitmq() -> Iterator[Target]:
    with RabbitMQ() as broker:
        yield Target(
            "127.0.0.1",
            broker.port,
            server=broker.server,
            virtual_host=broker.virtual_host,
            subscribe_headers=(
                f"prefetch-count:{PREFETCH}\ndurable:true\nauto-delete:false\nexclusive:false\n"
            ),
        )


@dataclass(frozen=True)
class Peer:
    """A broker to measure ours against: its ``--only`` name, its column title, why it cannot
    run here (None when it can) and how to start it."""

    name: str
    title: str
    unavailable: Callable[[], str | None]
    start: Callable[[], AbstractContextManager[Target]]


PEERS = (
    Peer("activemq", "ActiveMQ", ActiveMQ.unavailable, _activemq),
    Peer("rabbitmq", "RabbitMQ", RabbitMQ.unavailable, _rabbitmq),
)


def _bench(
    targets: dict[str, Target], messages: int, window: int, repeat: int
) -> dict[str, dict[str, Result]]:
    """Each scenario's best run on each broker (name -> scenario label -> result). The brokers
    take turns run by run, so that load from elsewhere on the machine, which comes and goes,
    weighs on all of them alike rather than on whichever ran during it."""
    for name, target in targets.items():
        print(f"  {name}: {target.server}", flush=True)
        # Warm up (a JVM compiles its hot paths): a short untimed run of each kind first.
        for warm_up in (Scenario(1, 1, False), Scenario(1, 1, True)):
            asyncio.run(_run(target, warm_up, max(1000, messages // 10), window, f"{name}-warm"))
    results: dict[str, dict[str, Result]] = {name: {} for name in targets}
    for scenario in SCENARIOS:
        count = messages * (2 if scenario.producers > 1 else 1)
        runs: dict[str, list[Result]] = {name: [] for name in targets}
        for _ in range(repeat):
            for name, target in targets.items():
                runs[name].append(asyncio.run(_run(target, scenario, count, window, name)))
        for name in targets:
            result = max(runs[name], key=lambda run: run.rate)  # the least disturbed run
            results[name][scenario.label] = result
            print(
                f"  {name:8} {scenario.label:28} {result.rate:9.0f} msg/s  "
                f"p50 {result.percentile(0.5):8.1f} ms  p99 {result.percentile(0.99):8.1f} ms",
                flush=True,
            )
    return results


def _cells(result: Result | None) -> str:
    if result is None:
        return "– | –"
    return f"{result.rate:,.0f} | {result.percentile(0.5):.1f} / {result.percentile(0.99):.1f}"


def _ratio_to_best_peer(mine: Result | None, peers: dict[str, Result]) -> str:
    if mine is None or not peers:
        return "–"
    title, best = max(peers.items(), key=lambda item: item[1].rate)
    return f"{mine.rate / best.rate:.2f}× ({title})"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=20_000, help="per 1P/1C row (4P/4C: twice)")
    parser.add_argument("--window", type=int, default=100, help="outstanding receipts per producer")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the best counts")
    parser.add_argument("--only", choices=("jms", *(peer.name for peer in PEERS)))
    options = parser.parse_args()
    print(
        f"STOMP bench: 1 KiB messages, {options.messages} per 1P/1C row, receipt window {options.window}"
    )
    skipped: list[str] = []
    with ExitStack() as running:
        targets: dict[str, Target] = {}
        if options.only in (None, "jms"):
            targets["jms"] = running.enter_context(jms_broker_process())
        for peer in PEERS:
            if options.only not in (None, peer.name):
                continue
            reason = peer.unavailable()
            if reason is not None:
                skipped.append(f"{peer.title} skipped: {reason}")
                print(f"  {peer.name} skipped: {reason}", flush=True)
                continue
            targets[peer.name] = running.enter_context(peer.start())
        measured = _bench(targets, options.messages, options.window, options.repeat)
    ours = measured.get("jms", {})
    # peer title -> scenario label -> result
    theirs = {peer.title: measured[peer.name] for peer in PEERS if peer.name in measured}
    print()
    titles = ["jms", *(peer.title for peer in PEERS)]
    print(
        "| scenario | "
        + " | ".join(f"{title} msg/s | {title} p50 / p99 ms" for title in titles)
        + " | jms / best peer |"
    )
    print("|---|" + "---:|---:|" * len(titles) + "---:|")
    for scenario in SCENARIOS:
        mine = ours.get(scenario.label)
        peers = {
            title: results[scenario.label]
            for title, results in theirs.items()
            if scenario.label in results
        }
        columns = [_cells(mine), *(_cells(peers.get(peer.title)) for peer in PEERS)]
        print(f"| {scenario.label} | {' | '.join(columns)} | {_ratio_to_best_peer(mine, peers)} |")
    for line in skipped:
        print(line)
    if ours:
        print(
            f"\nmedian latency across rows (jms): {statistics.median(r.percentile(0.5) for r in ours.values()):.1f} ms"
        )


if __name__ == "__main__":
    main()
