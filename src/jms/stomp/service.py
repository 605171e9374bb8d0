"""``jms broker``: a broker process — the embedded durable store, the STOMP server in front of
it, optional HTTP (STOMP over WebSocket, metrics, the web console) — started with one clear line and stopped cleanly on a signal.

``BrokerOptions`` says what to run; ``serve(options, stop, announce)`` runs it until ``stop`` is
set (``announce`` gets the startup line once the port is bound); ``run(options)`` does that in a
fresh event loop until SIGTERM or SIGINT. Shutting down closes every client connection (what they
held goes back to the broker), then closes the broker, which flushes and unlocks the store.
``read_config`` reads the ``--config`` TOML file: users and permissions (``jms.broker.security``),
``[[policies]]``, each a destination pattern with ``DestinationPolicy`` fields, and
``max_memory``, the broker's memory budget (``--max-memory`` wins over it).
``ServerThread(broker)`` serves a broker the application already has over STOMP from a
background thread (its own event loop), for programs and tests that want network clients too.
This module wires parts together; it holds no messaging logic of its own.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import json
import logging
import signal
import ssl
import threading
import time
import tomllib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from jms._compiled import compiled
from jms.broker import Broker, DestinationPolicy
from jms.broker.memory import DEFAULT_MAX_MEMORY, check_max_memory, parse_memory_size
from jms.broker.security import Security, SecurityConfigError
from jms.errors import IllegalStateException, JMSException
from jms.stomp.durability import DeferredStore
from jms.stomp.server import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_PORT,
    DEFAULT_TLS_PORT,
    StompServer,
)
from jms.stomp.tls import ServerTls
from jms.store import MemoryStore, MessageStore
from jms.store.location import describe_store, is_postgresql_url, open_store, postgresql_module
from jms.web import HttpServer

__all__ = [
    "BROKER_GC_THRESHOLD",
    "DEFAULT_STORE",
    "BrokerOptions",
    "JsonLogFormatter",
    "ServerThread",
    "configure_logging",
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
    messages in memory only. ``port`` None opens no plain STOMP listener; ``tls`` opens a TLS one
    on ``tls_port``. A connection that sends no CONNECT within ``connect_timeout_s`` is closed.
    ``max_memory`` is the memory budget in bytes; None takes the config file's
    ``max_memory``, else ``DEFAULT_MAX_MEMORY``."""

    store: Path | str | None = DEFAULT_STORE
    host: str = "127.0.0.1"
    port: int | None = DEFAULT_PORT
    config: Path | None = None
    metrics_port: int | None = None
    http_port: int | None = None
    allowed_origins: tuple[str, ...] = ()
    tls: ServerTls | None = None
    tls_port: int = DEFAULT_TLS_PORT
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS
    max_memory: int | None = None
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S

    def __post_init__(self) -> None:
        check_max_memory(self.max_memory, "--max-memory")
        if not 0 < self.connect_timeout_s <= DEFAULT_CONNECT_TIMEOUT_S:
            raise ValueError(
                f"--connect-timeout must be more than 0 and at most "
                f"{DEFAULT_CONNECT_TIMEOUT_S:g} seconds; got {self.connect_timeout_s:g}"
            )
        if self.port is None and self.tls is None:
            raise ValueError(
                "without a plain STOMP listener the broker needs a TLS one: give --tls-cert "
                "and --tls-key"
            )


_SECURITY_KEYS = ("allow_anonymous", "users", "permissions")
_BROKER_KEYS = ("max_memory",)
_POLICY_KEYS = tuple(f.name for f in fields(DestinationPolicy))


#: The TOML types each policy setting takes, and how to write one (TOML has no null: leaving a
#: setting out keeps its default).
_POLICY_VALUE_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "max_deliveries": ((int,), "an integer, e.g. 5"),
    "redelivery_delay_ms": ((int,), "an integer number of milliseconds, e.g. 1000"),
    "redelivery_backoff": ((int, float), "a number, e.g. 2.0"),
    "max_redelivery_delay_ms": ((int,), "an integer number of milliseconds, e.g. 60000"),
    "dead_letter_queue": ((str,), 'a queue name in quotes, e.g. "DLQ"'),
    "expiry_queue": ((str,), 'a queue name in quotes, e.g. "expired"'),
    "max_backlog": ((int,), "an integer, e.g. 100000"),
    "memory_window": ((int,), "an integer, e.g. 10000"),
}


def _check_policy_value(context: str, key: str, value: object) -> None:
    kinds, example = _POLICY_VALUE_TYPES[key]
    if isinstance(value, bool) or not isinstance(value, kinds):
        shown = f'"{value}"' if isinstance(value, str) else str(value).lower()
        raise SecurityConfigError(f"{context}: {key} = {shown}: {key} is {example}")


def read_config(
    path: Path | None,
) -> tuple[Security, list[tuple[str, DestinationPolicy]], int | None]:
    """The security, the destination policies and the memory budget a ``--config`` file defines
    (open access, no policies and None without one). ``SecurityConfigError`` says what is
    wrong, where."""
    if path is None:
        return Security.open(), [], None
    where = str(path)
    try:
        with open(path, "rb") as file:
            data: dict[str, Any] = tomllib.load(file)
    except OSError as error:
        raise SecurityConfigError(f"cannot read {where}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise SecurityConfigError(f"{where} is not valid TOML: {error}") from None
    unknown = sorted(set(data) - {*_SECURITY_KEYS, *_BROKER_KEYS, "policies"})
    if unknown:
        raise SecurityConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; the keys are "
            f"{', '.join(_SECURITY_KEYS)}, {', '.join(_BROKER_KEYS)}, policies"
        )
    max_memory = _read_max_memory(data.get("max_memory"), f"{where}: max_memory")
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
        for key, value in settings.items():
            _check_policy_value(context, key, value)
        try:
            policies.append((entry["destination"], DestinationPolicy(**settings)))
        except (TypeError, ValueError) as error:
            raise SecurityConfigError(f"{context}: {error}") from None
    return security, policies, max_memory


def _read_max_memory(value: object, where: str) -> int | None:
    """A config file's ``max_memory``: bytes as an integer, or a string such as ``"64MiB"``."""
    try:
        if isinstance(value, str):
            return parse_memory_size(value, where)
        return check_max_memory(value, where)
    except ValueError as error:
        raise SecurityConfigError(str(error)) from None


def _describe_auth(options: BrokerOptions, security: Security) -> str:
    if options.config is None:
        return "anonymous access (no --config)"
    return f"{security.describe()} ({options.config})"


def _describe_listeners(server: StompServer, tls: ServerTls | None) -> str:
    described = []
    for url in server.urls:
        kind = tls.describe() if tls is not None and url.startswith("stomp+ssl://") else "plain"
        described.append(f"{url} ({kind})")
    return ", ".join(described)


async def serve(
    options: BrokerOptions, stop: asyncio.Event, announce: Callable[[str], None]
) -> None:
    """Run the broker until ``stop`` is set; ``announce`` receives the startup line and the
    shutdown line (and, for a standby, the line saying it waits). Errors opening the config or
    the store propagate before anything listens."""
    security, policies, configured_memory = read_config(options.config)
    max_memory = options.max_memory or configured_memory or DEFAULT_MAX_MEMORY
    ssl_context = options.tls.context() if options.tls is not None else None
    loop = asyncio.get_running_loop()
    lost: list[JMSException] = []
    if options.store is None:
        store = DeferredStore(MemoryStore())
        store_text = "in memory (not durable)"
    elif is_postgresql_url(options.store):
        opened = await _open_shared_store(
            str(options.store), options, stop, announce, lost, ssl_context
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
                max_memory=max_memory,
            ),
        )
    except BaseException:
        store.close()
        raise
    for pattern, policy in policies:
        if pattern != "*":
            broker.set_policy(pattern, policy)
    server = StompServer(
        broker,
        host=options.host,
        port=options.port,
        tls_port=options.tls_port,
        max_connections=options.max_connections,
        connect_timeout_s=options.connect_timeout_s,
        ssl_context=ssl_context,
        security=security,
        store=store,
    )
    http_servers: list[HttpServer] = []
    try:
        await _listen(
            server.start(),
            "STOMP",
            options.host,
            (options.port, "--port"),
            (options.tls_port if options.tls is not None else None, "--tls-port"),
        )
        parts = [
            f"jms broker {server.server_header.partition('/')[2]} listening on "
            + _describe_listeners(server, options.tls),
            f"store: {store_text}",
            f"auth: {_describe_auth(options, security)}",
            f"max memory: {max_memory / (1024 * 1024):g} MiB",
            "hot path: " + ("compiled" if compiled() else "interpreted (a pure Python build)"),
        ]
        if options.http_port is not None:
            http = HttpServer(
                server,
                options.host,
                options.http_port,
                allowed_origins=options.allowed_origins,
                ssl_context=ssl_context,
            )
            http_servers.append(http)
            await _listen(http.start(), "HTTP", options.host, (options.http_port, "--http-port"))
            parts.append(
                f"console: {http.url}/ | websocket: {http.websocket_url} | metrics: {http.url}/metrics"
            )
        if options.metrics_port is not None:
            metrics = HttpServer(
                server, options.host, options.metrics_port, console=False, ssl_context=ssl_context
            )
            http_servers.append(metrics)
            await _listen(
                metrics.start(), "metrics", options.host, (options.metrics_port, "--metrics-port")
            )
            parts.append(f"metrics: {metrics.url}/metrics")
        announce(" | ".join(parts))
        await stop.wait()
    finally:
        connections = server.connection_count
        await server.close()  # its WebSocket connections too
        for http in http_servers:
            await http.close()
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
    ssl_context: ssl.SSLContext | None,
) -> MessageStore | None:
    """The PostgreSQL store at ``url``, once this broker holds its lock: while another broker
    does, this one is a standby — it says so and waits, listening for no client (its HTTP and
    metrics ports serve ``/metrics`` only, saying it is a standby) — until it gets the lock
    (None if ``stop`` is set first). Losing the store's session later puts the error in
    ``lost`` and sets ``stop``: an active broker that may no longer hold the lock stops serving
    at once."""
    store_class = postgresql_module().PostgreSQLStore
    loop = asyncio.get_running_loop()
    stop_waiting = threading.Event()
    standby_http: list[HttpServer] = []
    standby_tasks: list[asyncio.Task[None]] = []
    failed: list[OSError] = []

    async def serve_standby_metrics(line: str) -> None:
        try:
            for port, option in (
                (options.http_port, "--http-port"),
                (options.metrics_port, "--metrics-port"),
            ):
                if port is not None:
                    http = HttpServer(
                        None, options.host, port, console=False, ssl_context=ssl_context
                    )
                    await _listen(http.start(), "metrics", options.host, (port, option))
                    standby_http.append(http)
        except OSError as error:
            failed.append(error)
            stop_waiting.set()
            return
        announce(line)

    def standby() -> None:
        line = (
            f"jms broker standby: the store {describe_store(url)} is held by the "
            f"active broker; waiting to take over (not listening on {options.host}:"
            f"{options.port if options.port is not None else options.tls_port})"
        )

        def on_loop() -> None:
            standby_tasks.append(asyncio.create_task(serve_standby_metrics(line)))

        loop.call_soon_threadsafe(on_loop)

    def store_lost(error: JMSException) -> None:
        def stop_serving() -> None:
            lost.append(error)
            stop.set()

        loop.call_soon_threadsafe(stop_serving)

    async def relay_stop() -> None:
        await stop.wait()
        stop_waiting.set()

    relay = asyncio.create_task(relay_stop())
    store: MessageStore | None = None
    try:
        store = await loop.run_in_executor(
            None,
            lambda: store_class(
                url, on_standby=standby, stop_waiting=stop_waiting, on_lost=store_lost
            ),
        )
    except IllegalStateException:
        if not (stop.is_set() or failed):
            raise
    finally:
        relay.cancel()
        for task in standby_tasks:
            await task
        for http in standby_http:  # the active broker serves these ports itself
            await http.close()
    if failed:
        if store is not None:
            await loop.run_in_executor(None, store.close)
        raise failed[0]
    return store


async def _listen(
    start: Awaitable[None], what: str, host: str, *ports: tuple[int | None, str]
) -> None:
    """Await ``start`` (binding ``host`` on the ``(port, option)`` given, None: not bound); an
    ``OSError`` says which port and what to do."""
    try:
        await start
    except OSError as error:
        reason = error.strerror or str(error)
        if error.errno == errno.EADDRINUSE:
            reason = "the port is in use (another broker?)"
        bound = [(port, option) for port, option in ports if port is not None]
        where = " or ".join(f"{host}:{port}" for port, _ in bound)
        options = " or ".join(option for _, option in bound)
        raise OSError(
            f"cannot listen for {what} on {where}: {reason}; choose another {options} "
            "(0: any free port) or stop what uses it"
        ) from None


_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: ``time`` (ISO 8601, UTC), ``level``, ``logger``, ``message``,
    and ``exception`` when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        event = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            event["exception"] = self.formatException(record.exc_info)
        return json.dumps(event, ensure_ascii=False)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        return f"{stamp}.{int(record.msecs):03d}Z"


def configure_logging(level: str, *, json_lines: bool = False) -> None:
    """Log to stderr at ``level`` (debug, info, warning, error), one line per event: text
    (``TIME LEVEL LOGGER: MESSAGE``) or, with ``json_lines``, ``JsonLogFormatter`` objects. A
    traceback stays inside its event's JSON object; in text it follows its line."""
    if level.lower() not in _LOG_LEVELS:
        raise ValueError(f"unknown log level {level!r}; the levels are {', '.join(_LOG_LEVELS)}")
    handler = logging.StreamHandler()
    if json_lines:
        handler.setFormatter(JsonLogFormatter())
    else:
        formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        formatter.converter = time.gmtime
        formatter.default_time_format = "%Y-%m-%dT%H:%M:%S"
        formatter.default_msec_format = "%s.%03dZ"
        handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(_LOG_LEVELS[level.lower()])


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
