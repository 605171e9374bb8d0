"""Destination policies: redelivery limits and back-off, dead-letter and expiry queues, backlog
bounds, the in-memory window of a stored backlog.

A ``DestinationPolicy`` is plain configuration; a ``PolicyMap`` picks the one that applies to a
destination by its text form (``queue://orders``), from exact names and ``fnmatch`` patterns
(``queue://orders.*``, ``topic://*``), the longest matching pattern winning. This module holds no
broker state and never looks at messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

__all__ = ["DEAD_LETTER_PREFIX", "DEFAULT_MEMORY_WINDOW", "DestinationPolicy", "PolicyMap"]

#: A queue named ``DLQ.<name>`` receives the dead letters of ``<name>`` unless a policy names one
#: shared dead-letter queue instead.
DEAD_LETTER_PREFIX = "DLQ."

#: Stored messages per queue or durable subscription kept in memory unless a policy says otherwise.
DEFAULT_MEMORY_WINDOW = 10_000


@dataclass(frozen=True, slots=True)
class DestinationPolicy:
    """How the broker treats the messages of the destinations a policy applies to.

    - ``max_deliveries``: a message is delivered at most this many times; the next failed delivery
      (rollback, recover, session close without acknowledgement, a listener raising in an
      automatic mode) moves it to the dead-letter queue. ``None``: no limit.
    - ``redelivery_delay_ms`` and ``redelivery_backoff``: the n-th redelivery waits
      ``redelivery_delay_ms * redelivery_backoff ** (n - 1)`` ms, at most
      ``max_redelivery_delay_ms`` when given.
    - ``dead_letter_queue``: ``None`` sends the dead letters of ``orders`` to ``DLQ.orders``; a
      name sends every dead letter of these destinations to that one queue.
    - ``expiry_queue``: ``None`` discards expired messages; a name moves them there.
    - ``max_backlog``: at most this many messages held per queue or per topic subscription; a
      send that would exceed it fails with ``ResourceAllocationException``. ``None``: unbounded.
    - ``memory_window``: at most this many stored (PERSISTENT) messages per queue or durable
      subscription wait in memory; the rest stay in the store and are paged in by sequence as
      the window empties (see docs/storage.md). ``None``: everything in memory.
    """

    max_deliveries: int | None = 10
    redelivery_delay_ms: int = 0
    redelivery_backoff: float = 1.0
    max_redelivery_delay_ms: int | None = None
    dead_letter_queue: str | None = None
    expiry_queue: str | None = None
    max_backlog: int | None = None
    memory_window: int | None = DEFAULT_MEMORY_WINDOW

    def __post_init__(self) -> None:
        if self.max_deliveries is not None and self.max_deliveries < 1:
            raise ValueError(
                f"max_deliveries must be at least 1 or None (no limit); got {self.max_deliveries}"
            )
        if self.redelivery_delay_ms < 0:
            raise ValueError(f"redelivery_delay_ms must be >= 0; got {self.redelivery_delay_ms}")
        if self.redelivery_backoff < 1.0:
            raise ValueError(f"redelivery_backoff must be >= 1.0; got {self.redelivery_backoff}")
        if self.max_redelivery_delay_ms is not None and self.max_redelivery_delay_ms < 0:
            raise ValueError(
                f"max_redelivery_delay_ms must be >= 0 or None; got {self.max_redelivery_delay_ms}"
            )
        if self.max_backlog is not None and self.max_backlog < 1:
            raise ValueError(f"max_backlog must be at least 1 or None; got {self.max_backlog}")
        if self.memory_window is not None and (
            type(self.memory_window) is not int or self.memory_window < 2
        ):
            raise ValueError(
                f"memory_window must be an int of at least 2 or None (no paging); got "
                f"{self.memory_window!r}"
            )
        for field_name in ("dead_letter_queue", "expiry_queue"):
            value = getattr(self, field_name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(
                    f"{field_name} must be a non-empty queue name or None; got {value!r}"
                )

    def redelivery_delay(self, failed_deliveries: int) -> int:
        """Milliseconds to hold a message back after its ``failed_deliveries``-th failure."""
        if self.redelivery_delay_ms == 0 or failed_deliveries < 1:
            return 0
        delay = self.redelivery_delay_ms * self.redelivery_backoff ** (failed_deliveries - 1)
        if self.max_redelivery_delay_ms is not None:
            delay = min(delay, self.max_redelivery_delay_ms)
        return int(delay)

    def dead_letter_queue_for(self, destination_name: str) -> str:
        """The name of the queue that takes the dead letters of ``destination_name``."""
        if self.dead_letter_queue is not None:
            return self.dead_letter_queue
        return DEAD_LETTER_PREFIX + destination_name


class PolicyMap:
    """Policies by destination: an exact text form beats a pattern, a longer pattern a shorter."""

    def __init__(self, default: DestinationPolicy | None = None) -> None:
        self._default = default if default is not None else DestinationPolicy()
        self._policies: dict[str, DestinationPolicy] = {}

    @property
    def default(self) -> DestinationPolicy:
        return self._default

    def set(self, pattern: str, policy: DestinationPolicy) -> None:
        """Apply ``policy`` to destinations matching ``pattern`` (``queue://orders``,
        ``queue://orders.*``, ``topic://*``; ``*`` alone for every destination)."""
        if not isinstance(pattern, str) or not pattern:
            raise ValueError(f"a policy pattern is a non-empty string; got {pattern!r}")
        if not isinstance(policy, DestinationPolicy):
            raise TypeError(f"expected a DestinationPolicy, got {type(policy).__name__}")
        self._policies[pattern] = policy

    def for_destination(self, destination_text: str) -> DestinationPolicy:
        exact = self._policies.get(destination_text)
        if exact is not None:
            return exact
        best: tuple[int, DestinationPolicy] | None = None
        for pattern, policy in self._policies.items():
            if fnmatchcase(destination_text, pattern) and (best is None or len(pattern) > best[0]):
                best = (len(pattern), policy)
        return best[1] if best is not None else self._default

    def dead_letter_queue_names(self) -> frozenset[str]:
        """The shared dead-letter queues any policy names (``DLQ.*`` queues are dead-letter
        queues by their name)."""
        named = {p.dead_letter_queue for p in self._policies.values()}
        named.add(self._default.dead_letter_queue)
        return frozenset(name for name in named if name is not None)
