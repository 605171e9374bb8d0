"""Broker metrics in the Prometheus text format, served over plain HTTP by asyncio.

``prometheus_text(server)`` renders one snapshot: per queue or subscription its depth, in-flight,
consumers and counters (from ``Broker.stats()``), and the STOMP server's connection, frame, message
and byte counters; ``jms_broker_active`` is 1 (``STANDBY_TEXT``, all a standby broker serves, has
it 0). ``MetricsServer`` answers ``GET /metrics`` (and ``GET /``) with it on its own port;
anything else gets 404 or 405. It reads snapshots only: it never changes the broker, and it
never holds a request open longer than a small timeout.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from jms.stomp.server import StompServer

__all__ = ["STANDBY_TEXT", "MetricsServer", "prometheus_text"]

logger = logging.getLogger(__name__)

_CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
_REQUEST_TIMEOUT_S: Final = 5.0


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


_ACTIVE_HELP: Final = (
    "# HELP jms_broker_active 1 when this broker serves, 0 while it waits as a standby.\n"
    "# TYPE jms_broker_active gauge\n"
)
#: The metrics of a standby broker (docs/ha.md): it has no queues and no connections yet.
STANDBY_TEXT: Final = _ACTIVE_HELP + "jms_broker_active 0\n"


def prometheus_text(server: StompServer) -> str:
    """The metrics of ``server`` and its broker as Prometheus text exposition."""
    lines: list[str] = [_ACTIVE_HELP + "jms_broker_active 1"]

    def metric(name: str, kind: str, help_text: str, samples: list[tuple[str, float]]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            lines.append(f"{name}{labels} {value:g}")

    stats = server.broker.stats()

    def per_queue(attribute: str) -> list[tuple[str, float]]:
        return [
            (
                f'{{queue="{_label(s.name)}",destination="{_label(s.destination)}"}}',
                float(getattr(s, attribute)),
            )
            for s in stats
        ]

    metric(
        "jms_queue_depth",
        "gauge",
        "Messages held by a queue or subscription, in flight included.",
        per_queue("depth"),
    )
    metric(
        "jms_queue_in_flight",
        "gauge",
        "Messages delivered and not yet acknowledged.",
        per_queue("in_flight"),
    )
    metric("jms_queue_consumers", "gauge", "Consumers attached.", per_queue("consumers"))
    metric(
        "jms_queue_enqueued_total",
        "counter",
        "Messages added since the broker started.",
        per_queue("enqueued"),
    )
    metric(
        "jms_queue_acknowledged_total",
        "counter",
        "Messages acknowledged since the broker started.",
        per_queue("acknowledged"),
    )
    metric(
        "jms_queue_expired_total",
        "counter",
        "Messages expired since the broker started.",
        per_queue("expired"),
    )
    metric(
        "jms_queue_dead_lettered_total",
        "counter",
        "Messages moved to a dead-letter queue since the broker started.",
        per_queue("dead_lettered"),
    )
    counters = server.counters
    metric(
        "jms_stomp_connections",
        "gauge",
        "Open STOMP connections.",
        [("", float(server.connection_count))],
    )
    metric(
        "jms_stomp_connections_total",
        "counter",
        "STOMP connections accepted.",
        [("", float(counters.connections_total))],
    )
    metric(
        "jms_stomp_connections_refused_total",
        "counter",
        "STOMP logins refused.",
        [("", float(counters.connections_refused))],
    )
    metric(
        "jms_stomp_frames_received_total",
        "counter",
        "Client frames received, by command.",
        [
            (f'{{command="{command}"}}', float(count))
            for command, count in sorted(counters.by_command.items())
        ],
    )
    metric(
        "jms_stomp_messages_received_total",
        "counter",
        "Messages received in SEND frames.",
        [("", float(counters.messages_received))],
    )
    metric(
        "jms_stomp_messages_delivered_total",
        "counter",
        "Messages delivered in MESSAGE frames.",
        [("", float(counters.messages_delivered))],
    )
    metric(
        "jms_stomp_errors_total",
        "counter",
        "ERROR frames sent.",
        [("", float(counters.errors_sent))],
    )
    metric(
        "jms_stomp_received_bytes_total",
        "counter",
        "Bytes read from clients.",
        [("", float(counters.bytes_received))],
    )
    metric(
        "jms_stomp_sent_bytes_total",
        "counter",
        "Bytes written to clients.",
        [("", float(counters.bytes_sent))],
    )
    return "\n".join(lines) + "\n"


class MetricsServer:
    """``GET /metrics`` over HTTP/1.0 on ``host:port`` (port 0 picks one): ``STANDBY_TEXT``
    until it is given the ``StompServer`` to report on (``serve``)."""

    def __init__(self, server: StompServer | None, host: str, port: int) -> None:
        self._stomp = server
        self.host = host
        self._requested_port = port
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self._requested_port)

    @property
    def port(self) -> int:
        assert self._server is not None and self._server.sockets
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    def serve(self, server: StompServer) -> None:
        """Report on ``server`` from now on (a standby became active)."""
        self._stomp = server

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _REQUEST_TIMEOUT_S)
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, _, rest = request_line.partition(" ")
            path = rest.partition(" ")[0]
            if method != "GET":
                status, body = "405 Method Not Allowed", "only GET is served here\n"
            elif path.split("?")[0] not in ("/metrics", "/"):
                status, body = "404 Not Found", "metrics are at /metrics\n"
            else:
                text = STANDBY_TEXT if self._stomp is None else prometheus_text(self._stomp)
                status, body = "200 OK", text
            data = body.encode("utf-8")
            writer.write(
                f"HTTP/1.0 {status}\r\nContent-Type: {_CONTENT_TYPE}\r\n"
                f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode("latin-1")
                + data
            )
            await writer.drain()
        except (
            TimeoutError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ConnectionError,
        ):
            pass  # a client that does not finish its request gets nothing
        except Exception:
            logger.exception("metrics request failed")
        finally:
            writer.close()
