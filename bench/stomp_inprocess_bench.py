"""The STOMP server and broker of ``jms broker`` under the load of ``bench/stomp_bench.py``, in
one process with transports in memory: a load whose cost can be counted in instructions.

Timings on a shared machine drift too much to show a change of a few per cent; instruction
counts do not. So this drives the same server, broker and store as ``jms broker`` (its embedded
SQLite store, its garbage-collector setting) with the bench's shape: producers each writing 16
NON_PERSISTENT 1 KiB SENDs at a time, ``ack:client`` consumers with a prefetch of 1000
acknowledging cumulatively every 100 messages. Its transports hand bytes straight to the
connections and take what they write, so no socket, no load tool and no other process is
counted. Under callgrind, which counts every instruction the process runs::

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
        python bench/stomp_inprocess_bench.py --messages 20000
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg0.out \
        python bench/stomp_inprocess_bench.py --messages 0

(the count of the first − that of the second) / 20000 is the instructions per message: the
second counts the startup and the warm-up (``--warm-up`` messages on another queue) alone. Two
counts of one code differ by well under one per cent. ``--backlog N`` lets the producers get N
messages ahead before the consumers start reading (the bench's 4P/4C row keeps some 20,000
queued). Printed: the messages, the wall time, CPU µs per message (meaningful only outside
callgrind) and the most bytes the broker held in memory at once.

    python bench/stomp_inprocess_bench.py [--producers 4] [--consumers 4] [--messages 20000]
                                          [--warm-up 2000] [--backlog 0]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from jms.broker import Broker
from jms.stomp.durability import DeferredStore
from jms.stomp.server import StompServer
from jms.stomp.service import tune_garbage_collector
from jms.store.location import open_store

BODY = b"x" * 1024
BATCH = 16
PREFETCH = 1000
ACK_EVERY = 100


class MemoryTransport(asyncio.Transport):
    """A transport whose peer is this process: what the connection writes is kept in ``sent``."""

    def __init__(self, peer: tuple[str, int]) -> None:
        super().__init__()
        self.sent: list[bytes] = []
        self.reading = True
        self.closed = False
        self._peer = peer

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._peer if name == "peername" else default

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.sent.append(bytes(data))

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass  # everything written is taken at once: the buffer never fills

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def is_reading(self) -> bool:
        return self.reading

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def abort(self) -> None:
        self.closed = True


class Client:
    """One connection to the server through a ``MemoryTransport``."""

    def __init__(self, server: StompServer, number: int) -> None:
        self.protocol = server.connection_protocol()
        self.transport = MemoryTransport(("127.0.0.1", 40000 + number))
        self.protocol.connection_made(self.transport)

    def send(self, data: bytes) -> None:
        self.protocol.data_received(data)

    def take(self) -> bytes:
        data = b"".join(self.transport.sent)
        self.transport.sent.clear()
        return data

    async def connect(self) -> None:
        self.send(b"CONNECT\naccept-version:1.2\nhost:localhost\nheart-beat:0,0\n\n\0")
        await self.answer(b"CONNECTED")

    async def answer(self, start: bytes) -> bytes:
        for _ in range(1000):
            await asyncio.sleep(0.001)
            data = self.take()
            if data:
                if not data.startswith(start):
                    raise RuntimeError(f"expected {start!r}, got {data[:200]!r}")
                return data
        raise RuntimeError(f"no {start!r} within a second")


class Consumer(Client):
    def __init__(self, server: StompServer, number: int) -> None:
        super().__init__(server, number)
        self.received = 0
        self.unacked = 0
        self.rest = b""

    async def subscribe(self, destination: str) -> None:
        await self.connect()
        self.send(
            f"SUBSCRIBE\nid:1\ndestination:{destination}\nack:client\n"
            f"activemq.prefetchSize:{PREFETCH}\nreceipt:s\n\n\0".encode()
        )
        await self.answer(b"RECEIPT")

    def read(self) -> None:
        """Count the whole MESSAGE frames written so far; acknowledge every ``ACK_EVERY``."""
        data = self.rest + self.take()
        if not data:
            return
        frames = data.split(b"\0\n" if b"\0\n" in data else b"\0")
        self.rest = frames.pop()
        last_ack = b""
        for frame in frames:
            if frame.lstrip(b"\n").startswith(b"MESSAGE"):
                self.received += 1
                self.unacked += 1
                start = frame.index(b"\nack:") + 5
                last_ack = frame[start : frame.index(b"\n", start)]
        if self.unacked >= ACK_EVERY and last_ack:
            self.send(b"ACK\nid:" + last_ack + b"\n\n\0")
            self.unacked = 0

    def acknowledge_rest(self, last: bytes) -> None:
        self.send(b"ACK\nid:" + last + b"\n\n\0")


async def run(
    server: StompServer, producers: int, consumers: int, messages: int, backlog: int, tag: str
) -> int:
    """Send ``messages`` through one queue, the consumers reading only once ``backlog`` of them
    are sent (the producers keep that far ahead); return the most bytes held in memory at once."""
    destination = f"/queue/bench.{tag}"
    readers = [Consumer(server, n) for n in range(consumers)]
    for reader in readers:
        await reader.subscribe(destination)
    writers = [Client(server, 100 + n) for n in range(producers)]
    for writer in writers:
        await writer.connect()
    frame = (
        f"SEND\ndestination:{destination}\ncontent-length:{len(BODY)}\n\n".encode() + BODY + b"\0"
    )
    chunk = frame * BATCH
    left = [messages // producers] * producers
    most_held = 0
    while sum(reader.received for reader in readers) < messages:
        for number, writer in enumerate(writers):
            if left[number] and writer.transport.reading:
                count = min(BATCH, left[number])
                writer.send(chunk if count == BATCH else frame * count)
                left[number] -= count
        await asyncio.sleep(0)
        if messages - sum(left) >= backlog:
            for reader in readers:
                reader.read()
        most_held = max(most_held, server.broker.memory_stats().used)
    for client in (*readers, *writers):
        client.send(b"DISCONNECT\n\n\0")
    await asyncio.sleep(0)
    return most_held


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--producers", type=int, default=4)
    parser.add_argument("--consumers", type=int, default=4)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--warm-up", type=int, default=2000)
    parser.add_argument(
        "--backlog",
        type=int,
        default=0,
        help="messages sent before the consumers start reading (the bench's 4P/4C row keeps "
        "about 20000 queued)",
    )
    options = parser.parse_args()
    tune_garbage_collector()
    with tempfile.TemporaryDirectory(prefix="jms-inprocess-") as directory:
        loop = asyncio.get_running_loop()
        store = DeferredStore(await loop.run_in_executor(None, open_store, directory))
        broker = await loop.run_in_executor(None, lambda: Broker(store, name="bench"))
        server = StompServer(broker, port=0, store=store)
        await server.start()
        try:
            await run(server, options.producers, options.consumers, options.warm_up, 0, "warm")
            started = time.perf_counter()
            cpu = time.process_time()
            held = await run(
                server,
                options.producers,
                options.consumers,
                options.messages,
                options.backlog,
                "measured",
            )
            cpu = time.process_time() - cpu
            seconds = time.perf_counter() - started
        finally:
            await server.close()
            broker.close()
            store.close()
    each = f"{1e6 * cpu / options.messages:.1f} µs CPU each, " if options.messages else ""
    print(
        f"{options.producers}P/{options.consumers}C: {options.messages} messages in "
        f"{seconds:.2f} s, {each}at most {held / 1024 / 1024:.1f} MiB held"
    )


if __name__ == "__main__":
    asyncio.run(main())
