"""Broker metrics for Prometheus, rendered by ``prometheus_client``.

``MetricsCollector(server)`` reads one snapshot per scrape: per queue or subscription its depth,
in-flight, consumers and counters (from ``Broker.stats()``), and the STOMP server's connection,
frame, message and byte counters, the broker's memory budget (``Broker.memory_stats()``: bytes
held and the limit, whether producers are held back, and how often the budget held producers
back, closed a slow consumer or paged stored messages out), and ``jms_broker_standby`` 0.
``prometheus_text(server)`` is that snapshot in the text exposition format
(``PROMETHEUS_CONTENT_TYPE``); ``jms.web`` serves it at ``/metrics``. ``prometheus_text(None)``
is what a standby broker (waiting for its PostgreSQL store, docs/ha.md) serves there:
``jms_broker_standby`` 1, and nothing else yet. It reads
snapshots only: it never changes the broker.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from jms.broker import QueueStats
from jms.stomp.server import StompServer

__all__ = ["PROMETHEUS_CONTENT_TYPE", "MetricsCollector", "prometheus_text"]

PROMETHEUS_CONTENT_TYPE: Final = CONTENT_TYPE_LATEST

_STANDBY_HELP: Final = (
    "1 while this broker waits as a standby for its store (another broker is active), else 0."
)

# Per queue or subscription: (metric name, kind, help, QueueStats attribute).
_QUEUE_METRICS: Final = (
    (
        "jms_queue_depth",
        "gauge",
        "Messages held by a queue or subscription, in flight included.",
        "depth",
    ),
    ("jms_queue_in_flight", "gauge", "Messages delivered and not yet acknowledged.", "in_flight"),
    ("jms_queue_consumers", "gauge", "Consumers attached.", "consumers"),
    ("jms_queue_enqueued_total", "counter", "Messages added since the broker started.", "enqueued"),
    (
        "jms_queue_acknowledged_total",
        "counter",
        "Messages acknowledged since the broker started.",
        "acknowledged",
    ),
    (
        "jms_queue_purged_total",
        "counter",
        "Messages removed by a purge since the broker started.",
        "purged",
    ),
    ("jms_queue_expired_total", "counter", "Messages expired since the broker started.", "expired"),
    (
        "jms_queue_dead_lettered_total",
        "counter",
        "Messages moved to a dead-letter queue since the broker started.",
        "dead_lettered",
    ),
)


def _family(
    name: str, kind: str, help_text: str, labels: list[str]
) -> GaugeMetricFamily | CounterMetricFamily:
    if kind == "gauge":
        return GaugeMetricFamily(name, help_text, labels=labels)
    return CounterMetricFamily(name, help_text, labels=labels)


class MetricsCollector(Collector):
    """The metrics of a ``StompServer`` and its broker, read when Prometheus scrapes."""

    def __init__(self, server: StompServer) -> None:
        self._server = server

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("jms_broker_standby", _STANDBY_HELP, value=0)
        stats: list[QueueStats] = self._server.broker.stats()
        for name, kind, help_text, attribute in _QUEUE_METRICS:
            family = _family(name, kind, help_text, ["queue", "destination"])
            for queue in stats:
                family.add_metric([queue.name, queue.destination], getattr(queue, attribute))
            yield family
        server = self._server
        memory = server.broker.memory_stats()
        for name, help_text, gauge in (
            (
                "jms_broker_memory_used_bytes",
                "Bytes the messages held in memory take.",
                memory.used,
            ),
            (
                "jms_broker_memory_limit_bytes",
                "The broker's memory budget (max_memory) in bytes.",
                memory.limit if memory.limit is not None else float("inf"),
            ),
            (
                "jms_broker_producers_blocked",
                "1 while the memory budget holds producers back, else 0.",
                int(memory.producers_blocked),
            ),
            (
                "jms_stomp_connections_held_back",
                "Connections not read now because the broker holds producers back.",
                server.paused_producer_count,
            ),
        ):
            yield GaugeMetricFamily(name, help_text, value=gauge)
        for name, help_text, count in (
            (
                "jms_broker_producer_blocks_total",
                "Times the memory budget was reached and producers were held back.",
                memory.producer_blocks,
            ),
            (
                "jms_broker_slow_consumers_closed_total",
                "Non-durable subscriptions ended, their connections closed, as slow consumers.",
                memory.slow_consumers_closed,
            ),
            (
                "jms_broker_paged_for_memory_total",
                "Stored messages paged out because the memory budget was reached.",
                memory.paged_for_memory,
            ),
            (
                "jms_stomp_producer_pauses_total",
                "Times a connection stopped being read because producers were held back.",
                server.counters.producer_pauses,
            ),
        ):
            yield CounterMetricFamily(name, help_text, value=count)
        counters = server.counters
        yield GaugeMetricFamily(
            "jms_stomp_connections", "Open STOMP connections.", value=server.connection_count
        )
        for name, help_text, value in (
            (
                "jms_stomp_connections_total",
                "STOMP connections accepted.",
                counters.connections_total,
            ),
            (
                "jms_stomp_connections_refused_total",
                "STOMP logins refused.",
                counters.connections_refused,
            ),
            (
                "jms_stomp_messages_received_total",
                "Messages received in SEND frames.",
                counters.messages_received,
            ),
            (
                "jms_stomp_messages_delivered_total",
                "Messages delivered in MESSAGE frames.",
                counters.messages_delivered,
            ),
            ("jms_stomp_errors_total", "ERROR frames sent.", counters.errors_sent),
            ("jms_stomp_received_bytes_total", "Bytes read from clients.", counters.bytes_received),
            ("jms_stomp_sent_bytes_total", "Bytes written to clients.", counters.bytes_sent),
        ):
            yield CounterMetricFamily(name, help_text, value=value)
        frames = CounterMetricFamily(
            "jms_stomp_frames_received_total",
            "Client frames received, by command.",
            labels=["command"],
        )
        for command, count in sorted(counters.by_command.items()):
            frames.add_metric([command], count)
        yield frames


class _StandbyCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("jms_broker_standby", _STANDBY_HELP, value=1)


def prometheus_text(server: StompServer | None) -> bytes:
    """The metrics of ``server`` and its broker in the Prometheus text exposition format; with
    None, a standby's."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_StandbyCollector() if server is None else MetricsCollector(server))
    return generate_latest(registry)
