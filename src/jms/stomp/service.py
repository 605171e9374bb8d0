"""``jms broker``: a broker process — the embedded durable store, the STOMP server in front of
it, optional Prometheus metrics — started with one clear line and stopped cleanly on a signal.

``BrokerOptions`` says what to run; ``serve(options, stop, announce)`` runs it until ``stop`` is
set (``announce`` gets the startup line once the port is bound); ``run(options)`` does that in a
fresh event loop until SIGTERM or SIGINT. Shutting down closes every client connection (what they
held goes back to the broker), then closes the broker, which flushes and unlocks the store. This
module wires parts together; it holds no messaging logic of its own.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from jms.broker import Broker
from jms.broker.security import Security
from jms.stomp.durability import DeferredStore
from jms.stomp.metrics import MetricsServer
from jms.stomp.server import DEFAULT_PORT, StompServer
from jms.store import MemoryStore
from jms.store.sqlite import SQLiteStore

__all__ = ["DEFAULT_STORE", "BrokerOptions", "run", "serve"]

#: Where ``jms broker`` keeps its store unless told otherwise (relative to the working directory).
DEFAULT_STORE = Path("jms-data")


@dataclass(frozen=True, slots=True)
class BrokerOptions:
    """What ``jms broker`` runs. ``store`` None keeps messages in memory only."""

    store: Path | None = DEFAULT_STORE
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    config: Path | None = None
    metrics_port: int | None = None


def _describe_auth(options: BrokerOptions, security: Security) -> str:
    if options.config is None:
        return "anonymous access (no --config)"
    return f"{security.describe()} ({options.config})"


async def serve(
    options: BrokerOptions, stop: asyncio.Event, announce: Callable[[str], None]
) -> None:
    """Run the broker until ``stop`` is set; ``announce`` receives the startup line and the
    shutdown line. Errors opening the config or the store propagate before anything listens."""
    security = Security.from_file(options.config) if options.config is not None else Security.open()
    loop = asyncio.get_running_loop()
    if options.store is None:
        store = DeferredStore(MemoryStore())
        store_text = "in memory (not durable)"
    else:
        directory = options.store.expanduser().resolve()
        store = DeferredStore(await loop.run_in_executor(None, SQLiteStore, directory))
        store_text = f"{directory} (SQLite)"
    try:
        # The server checks logins itself (off the loop); no in-process client needs the
        # broker's own authenticator here.
        broker = await loop.run_in_executor(
            None, lambda: Broker(store, name=str(options.store or "memory"))
        )
    except BaseException:
        store.close()
        raise
    server = StompServer(
        broker, host=options.host, port=options.port, security=security, store=store
    )
    metrics: MetricsServer | None = None
    try:
        await server.start()
        parts = [
            f"jms broker {server.server_header.partition('/')[2]} listening on {server.url}",
            f"store: {store_text}",
            f"auth: {_describe_auth(options, security)}",
        ]
        if options.metrics_port is not None:
            metrics = MetricsServer(server, options.host, options.metrics_port)
            await metrics.start()
            parts.append(f"metrics: {metrics.url}")
        announce(" | ".join(parts))
        await stop.wait()
    finally:
        connections = server.connection_count
        if metrics is not None:
            await metrics.close()
        await server.close()
        await loop.run_in_executor(None, broker.close)
    announce(f"jms broker stopped: {connections} connection(s) closed, store closed")


def run(options: BrokerOptions, announce: Callable[[str], None] = print) -> None:
    """Run until SIGTERM or SIGINT (see ``serve``)."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await serve(options, stop, announce)

    asyncio.run(main())
