"""The process-wide registry of embedded brokers, keyed by URL — the one global ``jms`` keeps.

``memory://orders`` names one in-process broker (over a ``MemoryStore``) for the whole process:
every ``ConnectionFactory("memory://orders")`` reaches the same one, and ``memory://`` alone the
default one. ``embedded:///var/lib/jms`` names the broker over the durable ``SQLiteStore`` in that
directory (``embedded://data/jms`` is relative to the working directory): one per directory per
process, however the directory is spelled, and the store's lock keeps other processes out.
``embedded://postgresql://user:password@host:5432/db`` names the broker over the PostgreSQL store
in that database (``jms.store.location``), whose advisory lock keeps other processes out. A
broker lives until ``close_embedded_broker(url)`` (or the process ends), so a producer that
connects, sends and disconnects leaves its messages for a consumer that connects later — as with
a broker process. ``open_broker`` opens one with options (policies, authentication), which is what
``jms broker --store DIR`` does. The registry only creates, finds and forgets brokers; it never
routes messages.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jms.broker.policy import DestinationPolicy
from jms.errors import IllegalStateException, JMSException
from jms.store import MemoryStore, MessageStore

if TYPE_CHECKING:
    from jms.broker.broker import Broker

# The broker engine and the store locations are imported by the functions that open a broker:
# importing ``jms.client`` imports this module, and a client of a broker process needs neither.

__all__ = ["EMBEDDED_SCHEMES", "close_embedded_broker", "embedded_broker", "open_broker"]

#: URL schemes whose brokers live in this process.
EMBEDDED_SCHEMES = ("memory", "embedded")


class _Registry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._brokers: dict[str, Broker] = {}

    def obtain(self, key: str, create: Callable[[], Broker], *, fresh: bool = False) -> Broker:
        """The open broker for ``key``, created if there is none; with ``fresh``, an open one is
        an error."""
        with self._lock:
            broker = self._brokers.get(key)
            if broker is not None and not broker.closed:
                if fresh:
                    raise IllegalStateException(
                        f"the embedded broker {key} is already open in this process; close it "
                        "with close_embedded_broker(url) first"
                    )
                return broker
            broker = create()
            self._brokers[key] = broker
            return broker

    def remove(self, key: str) -> Broker | None:
        with self._lock:
            return self._brokers.pop(key, None)


_REGISTRY = _Registry()


class _Location:
    """Where an embedded-broker URL points: its registry key, the broker's name, and the store
    (a directory or a ``postgresql://`` URL; None for a memory broker)."""

    __slots__ = ("key", "name", "store_location")

    def __init__(self, url: object) -> None:
        if not isinstance(url, str):
            raise JMSException(f"a broker URL is a string, got {type(url).__name__} {url!r}")
        scheme, separator, rest = url.partition("://")
        if not separator or scheme not in EMBEDDED_SCHEMES:
            raise JMSException(
                f"{url!r} is not an embedded broker URL; expected memory://, memory://NAME, "
                "embedded:///path/to/store-directory or embedded://postgresql://user@host/db"
            )
        if scheme == "memory":
            if any(character in rest for character in "/?#"):
                raise JMSException(
                    f"{url!r}: a memory broker name may not contain '/', '?' or '#'; got {rest!r}"
                )
            self.key = f"memory://{rest}"
            self.name = rest or "default"
            self.store_location: Path | str | None = None
            return
        if not rest:
            raise JMSException(
                f"{url!r} names no store directory; write embedded:///absolute/path or "
                "embedded://relative/path"
            )
        from jms.store.location import describe_store, is_postgresql_url

        if is_postgresql_url(rest):
            self.store_location = rest
            self.key = f"embedded://{rest}"
            self.name = describe_store(rest)
            return
        if any(character in rest for character in "?#"):
            raise JMSException(
                f"{url!r}: an embedded broker URL takes no query or fragment ('?', '#'); "
                "configure the broker with open_broker(url, ...) instead"
            )
        directory = Path(rest).expanduser().resolve()
        self.store_location = directory
        self.key = f"embedded://{directory}"
        self.name = str(directory)

    def store(self) -> MessageStore:
        from jms.store.location import open_store

        return MemoryStore() if self.store_location is None else open_store(self.store_location)

    def broker(self, **settings: Any) -> Broker:
        """A new broker over this location's store."""
        from jms.broker.broker import Broker

        return Broker(self.store(), name=self.name, **settings)


def embedded_broker(url: str = "memory://") -> Broker:
    """The process's broker for ``url`` (``memory://``, ``memory://NAME`` or
    ``embedded:///path``), created on first use with default settings.

    Use it to configure a broker before connecting, e.g.
    ``embedded_broker("memory://orders").set_policy("queue://*", DestinationPolicy(...))``.
    """
    location = _Location(url)
    return _REGISTRY.obtain(location.key, location.broker)


def open_broker(
    url: str,
    *,
    default_policy: DestinationPolicy | None = None,
    authenticator: Callable[[str | None, str | None], bool] | None = None,
) -> Broker:
    """Open the process's broker for ``url`` with these settings and register it, so that
    ``ConnectionFactory(url)`` in this process reaches it too. ``embedded:///path`` opens (or
    creates) the durable store in that directory and recovers what it holds.

    ``IllegalStateException`` if this process already has that broker open; another process
    holding the directory's lock is ``IllegalStateException`` too (from the store).
    """
    location = _Location(url)
    return _REGISTRY.obtain(
        location.key,
        lambda: location.broker(default_policy=default_policy, authenticator=authenticator),
        fresh=True,
    )


def close_embedded_broker(url: str) -> None:
    """Close and forget the broker for ``url`` (a memory broker's messages are gone; an embedded
    one's store is flushed and unlocked); the next use of the URL starts a new one. Does nothing
    if there is none."""
    broker = _REGISTRY.remove(_Location(url).key)
    if broker is not None:
        broker.close()
