"""``jms broker``: a broker process — the embedded durable store, the STOMP server in front of
it, optional Prometheus metrics — started with one clear line and stopped cleanly on a signal.

``BrokerOptions`` says what to run; ``serve(options, stop, announce)`` runs it until ``stop`` is
set (``announce`` gets the startup line once the port is bound); ``run(options)`` does that in a
fresh event loop until SIGTERM or SIGINT. Shutting down closes every client connection (what they
held goes back to the broker), then closes the broker, which flushes and unlocks the store.
``read_config`` reads the ``--config`` TOML file: users and permissions (``jms.broker.security``)
and ``[[policies]]``, each a destination pattern with ``DestinationPolicy`` fields.
``ServerThread(broker)`` serves a broker the application already has over STOMP from a
background thread (its own event loop), for programs and tests that want network clients too.
This module wires parts together; it holds no messaging logic of its own.
"""

from __future__ import annotations

import asyncio
import gc
import signal
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from jms.broker import Broker, DestinationPolicy
from jms.broker.security import Security, SecurityConfigError
from jms.errors import IllegalStateException, JMSException
from jms.stomp.durability import DeferredStore
from jms.stomp.metrics import MetricsServer
from jms.stomp.server import DEFAULT_PORT, StompServer
from jms.store import MemoryStore, MessageStore
from jms.store.location import describe_store, is_postgresql_url, open_store, postgresql_module

__all__ = [
    "BROKER_GC_THRESHOLD",
    "DEFAULT_STORE",
    "BrokerOptions",
    "ServerThread",
    "read_config",
    "run",
    "serve",
    "tune_garbage_collector",
]

#: Where ``jms broker`` keeps its store unless told otherwise (relative to the working directory).
DEFAULT_STORE = Path("jms-data")


@dataclass(frozen=True, slots=True)
class BrokerOptions:
    """What ``jms broker`` runs. ``store`` is a directory (the SQLite store) or a
    ``postgresql://`` URL (the PostgreSQL store, where this broker may be a standby); None keeps
    messages in memory only."""

    store: Path | str | None = DEFAULT_STORE
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    config: Path | None = None
    metrics_port: int | None = None


_SECURITY_KEYS = ("allow_anonymous", "users", "permissions")
_POLICY_KEYS = tuple(f.name for f in fields(DestinationPolicy))


def read_config(path: Path | None) -> tuple[Security, list[tuple[str, DestinationPolicy]]]:
    """The security and the destination policies a ``--config`` file defines (open access and
    no policies without one). ``SecurityConfigError`` says what is wrong, where."""
    if path is None:
        return Security.open(), []
    where = str(path)
    try:
        with open(path, "rb") as file:
            data: dict[str, Any] = tomllib.load(file)
    except OSError as error:
        raise SecurityConfigError(f"cannot read {where}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise SecurityConfigError(f"{where} is not valid TOML: {error}") from None
    unknown = sorted(set(data) - {*_SECURITY_KEYS, "policies"})
    if unknown:
        raise SecurityConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; the keys are "
            f"{', '.join(_SECURITY_KEYS)}, policies"
        )
    security = Security.from_mapping(
        {key: data[key] for key in _SECURITY_KEYS if key in data}, source=where
    )
    policies = []
    entries = data.get("policies", [])
    if not isinstance(entries, list):
        raise SecurityConfigError(f"{where}: policies must be an array of [[policies]] tables")
    for number, entry in enumerate(entries, 1):
        context = f"{where}: [[policies]] #{number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("destination"), str):
            raise SecurityConfigError(f'{context} needs destination = "PATTERN" (queue://orders.*)')
        settings = {k: v for k, v in entry.items() if k != "destination"}
        unknown = sorted(set(settings) - set(_POLICY_KEYS))
        if unknown:
            raise SecurityConfigError(
                f"{context}: unknown key(s) {', '.join(unknown)}; a policy has "
                f"{', '.join(_POLICY_KEYS)}"
            )
        try:
            policies.append((entry["destination"], DestinationPolicy(**settings)))
        except (TypeError, ValueError) as error:
            raise SecurityConfigError(f"{context}: {error}") from None
    return security, policies


def _describe_auth(options: BrokerOptions, security: Security) -> str:
    if options.config is None:
        return "anonymous access (no --config)"
    return f"{security.describe()} ({options.config})"


async def serve(
    options: BrokerOptions, stop: asyncio.Event, announce: Callable[[str], None]
) -> None:
    """Run the broker until ``stop`` is set; ``announce`` receives the startup line and the
    shutdown line (and, for a standby, the line saying it waits). Errors opening the config or
    the store propagate before the STOMP port listens."""
    security, policies = read_config(options.config)
    metrics: MetricsServer | None = None
    if options.metrics_port is not None:
        metrics = MetricsServer(None, options.host, options.metrics_port)
        await metrics.start()
    try:
        await _serve(options, stop, announce, security, policies, metrics)
    finally:
        if metrics is not None:
            await metrics.close()


async def _serve(
    options: BrokerOptions,
    stop: asyncio.Event,
    announce: Callable[[str], None],
    security: Security,
    policies: list[tuple[str, DestinationPolicy]],
    metrics: MetricsServer | None,
) -> None:
    loop = asyncio.get_running_loop()
    lost: list[JMSException] = []
    if options.store is None:
        store = DeferredStore(MemoryStore())
        store_text = "in memory (not durable)"
    elif is_postgresql_url(options.store):
        opened = await _open_shared_store(
            str(options.store), options, stop, announce, lost, metrics
        )
        if opened is None:
            announce("jms broker stopped: it was a standby and never became active")
            return
        store = DeferredStore(opened)
        store_text = f"{describe_store(options.store)} (PostgreSQL, active)"
    else:
        store = DeferredStore(await loop.run_in_executor(None, open_store, options.store))
        store_text = f"{describe_store(options.store)} (SQLite)"
    try:
        # The server checks logins itself (off the loop); no in-process client needs the
        # broker's own authenticator here.
        # "*" is every destination: the broker's default, in force while it recovers too.
        default = next((p for pattern, p in reversed(policies) if pattern == "*"), None)
        broker = await loop.run_in_executor(
            None,
            lambda: Broker(
                store,
                name="memory" if options.store is None else describe_store(options.store),
                default_policy=default,
            ),
        )
    except BaseException:
        store.close()
        raise
    for pattern, policy in policies:
        if pattern != "*":
            broker.set_policy(pattern, policy)
    server = StompServer(
        broker, host=options.host, port=options.port, security=security, store=store
    )
    try:
        await server.start()
        parts = [
            f"jms broker {server.server_header.partition('/')[2]} listening on {server.url}",
            f"store: {store_text}",
            f"auth: {_describe_auth(options, security)}",
        ]
        if metrics is not None:
            metrics.serve(server)
            parts.append(f"metrics: {metrics.url}")
        announce(" | ".join(parts))
        await stop.wait()
    finally:
        connections = server.connection_count
        await server.close()
        await loop.run_in_executor(None, broker.close)
    if lost:
        raise JMSException(
            f"jms broker stopped serving: {lost[0]}; {connections} connection(s) closed"
        )
    announce(f"jms broker stopped: {connections} connection(s) closed, store closed")


async def _open_shared_store(
    url: str,
    options: BrokerOptions,
    stop: asyncio.Event,
    announce: Callable[[str], None],
    lost: list[JMSException],
    metrics: MetricsServer | None,
) -> MessageStore | None:
    """The PostgreSQL store at ``url``, once this broker holds its lock: while another broker
    does, this one is a standby — it says so and waits, listening on nothing — until it gets
    the lock (None if ``stop`` is set first). Losing the store's session later puts the error
    in ``lost`` and sets ``stop``: an active broker that may no longer hold the lock stops
    serving at once."""
    store_class = postgresql_module().PostgreSQLStore
    loop = asyncio.get_running_loop()
    stop_waiting = threading.Event()

    def standby() -> None:
        line = (
            f"jms broker standby: the store {describe_store(url)} is held by the "
            f"active broker; waiting to take over (not listening on {options.host}:{options.port})"
        )
        if metrics is not None:
            line += f" | metrics: {metrics.url}"
        loop.call_soon_threadsafe(announce, line)

    def store_lost(error: JMSException) -> None:
        def stop_serving() -> None:
            lost.append(error)
            stop.set()

        loop.call_soon_threadsafe(stop_serving)

    async def relay_stop() -> None:
        await stop.wait()
        stop_waiting.set()

    relay = asyncio.create_task(relay_stop())
    try:
        return await loop.run_in_executor(
            None,
            lambda: store_class(
                url, on_standby=standby, stop_waiting=stop_waiting, on_lost=store_lost
            ),
        )
    except IllegalStateException:
        if stop.is_set():
            return None
        raise
    finally:
        relay.cancel()


#: The collector's first-generation threshold in a broker process (CPython's default is 700).
BROKER_GC_THRESHOLD = 50_000


def tune_garbage_collector() -> None:
    """Collect young objects every ``BROKER_GC_THRESHOLD`` allocations instead of every 700.

    Each message makes several short-lived objects (frame, message, delivery, queue entry),
    nearly all freed by reference counting; at the default threshold the cyclic collector runs
    every few dozen messages and costs a broker about a seventh of its CPU time. Being a setting
    of the whole interpreter, it belongs to the process (``run``), not to a library user's.
    """
    _, middle, old = gc.get_threshold()
    gc.set_threshold(BROKER_GC_THRESHOLD, middle, old)


def run(options: BrokerOptions, announce: Callable[[str], None] = print) -> None:
    """Run until SIGTERM or SIGINT (see ``serve``), in a process tuned as a broker
    (``tune_garbage_collector``)."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await serve(options, stop, announce)

    tune_garbage_collector()
    asyncio.run(main())


_T = TypeVar("_T")


class ServerThread:
    """``broker`` served over STOMP from a background thread, while the ``with`` block runs.

    ``ServerThread(broker, port=0, **options)`` takes ``StompServer``'s keyword options (host
    127.0.0.1 and a free port unless given). ``url`` is where clients connect. Leaving the block
    (or ``stop()``) closes every client connection and stops the thread; the broker stays open,
    its owner closes it.
    """

    def __init__(self, broker: Broker, **options: Any) -> None:
        options.setdefault("host", "127.0.0.1")
        options.setdefault("port", 0)
        self.broker = broker
        self._options = options
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.server: StompServer | None = None
        self._thread = threading.Thread(target=self._run, name="jms-stomp-server", daemon=True)

    def start(self) -> ServerThread:
        """Start serving; returns once the port is bound (or raises why it could not be)."""
        self._thread.start()
        if not self._ready.wait(30):
            raise IllegalStateException("the STOMP server thread did not start within 30 s")
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        """Close the server and its connections; returns once the thread ended."""
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        if self._thread.is_alive():
            raise IllegalStateException("the STOMP server thread did not stop within 30 s")

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self.server is None:
            raise IllegalStateException("the STOMP server is not started")
        return self.server.port

    @property
    def url(self) -> str:
        if self.server is None:
            raise IllegalStateException("the STOMP server is not started")
        return self.server.url

    def call(self, function: Callable[[], _T]) -> _T:
        """Run ``function()`` on the server's event loop (where its state lives) and return
        what it returns."""
        if self._loop is None:
            raise IllegalStateException("the STOMP server is not started")

        async def run() -> _T:
            return function()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(30)

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            self.server = StompServer(self.broker, **self._options)
            try:
                await self.server.start()
            except BaseException as error:
                self._error = error
                self._ready.set()
                return
            self._ready.set()
            try:
                await self._stop.wait()
            finally:
                await self.server.close()

        asyncio.run(main())
