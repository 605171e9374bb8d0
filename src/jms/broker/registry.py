"""The process-wide registry of embedded brokers, keyed by URL — the one global ``jms`` keeps.

``memory://orders`` names one in-process broker (over a ``MemoryStore``) for the whole process:
every ``ConnectionFactory("memory://orders")`` reaches the same one, and ``memory://`` alone the
default one. A broker lives until ``close_embedded_broker(url)`` (or the process ends), so a
producer that connects, sends and disconnects leaves its messages for a consumer that connects
later — as with a broker process. The registry only creates, finds and forgets brokers; it never
routes messages.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from jms.broker.broker import Broker
from jms.errors import JMSException
from jms.store import MemoryStore

__all__ = ["EMBEDDED_SCHEMES", "close_embedded_broker", "embedded_broker"]

#: URL schemes whose brokers live in this process.
EMBEDDED_SCHEMES = ("memory",)


class _Registry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._brokers: dict[str, Broker] = {}

    def obtain(self, key: str, create: Callable[[], Broker]) -> Broker:
        with self._lock:
            broker = self._brokers.get(key)
            if broker is None or broker.closed:
                broker = create()
                self._brokers[key] = broker
            return broker

    def remove(self, key: str) -> Broker | None:
        with self._lock:
            return self._brokers.pop(key, None)


_REGISTRY = _Registry()


def _canonical(url: str) -> tuple[str, str]:
    """``(registry key, broker name)`` for an embedded-broker URL."""
    if not isinstance(url, str):
        raise JMSException(f"a broker URL is a string, got {type(url).__name__} {url!r}")
    scheme, separator, rest = url.partition("://")
    if not separator or scheme not in EMBEDDED_SCHEMES:
        raise JMSException(
            f"{url!r} is not an embedded broker URL; expected memory:// or memory://NAME"
        )
    if any(character in rest for character in "/?#"):
        raise JMSException(
            f"{url!r}: a memory broker name may not contain '/', '?' or '#'; got {rest!r}"
        )
    return f"{scheme}://{rest}", rest or "default"


def embedded_broker(url: str = "memory://") -> Broker:
    """The process's broker for ``url`` (``memory://`` or ``memory://NAME``), created on first use.

    Use it to configure a broker before connecting, e.g.
    ``embedded_broker("memory://orders").set_policy("queue://*", DestinationPolicy(...))``.
    """
    key, name = _canonical(url)
    return _REGISTRY.obtain(key, lambda: Broker(MemoryStore(), name=name))


def close_embedded_broker(url: str) -> None:
    """Close and forget the broker for ``url`` (its messages are gone); the next use of the URL
    starts a new one. Does nothing if there is none."""
    key, _ = _canonical(url)
    broker = _REGISTRY.remove(key)
    if broker is not None:
        broker.close()
