"""``QueueStats``: a snapshot of one queue or subscription, for tests, tools and monitoring.

Counters are since the broker started (they are not stored). Read-only values; computing them is
the broker's job.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["QueueStats"]


@dataclass(frozen=True, slots=True)
class QueueStats:
    """``name`` is ``queue://x`` for a queue, or the subscription's label for a topic
    subscription (``durable://client/name``, ``shared://client/name``, ``subscriber://<id>``);
    ``destination`` is the queue or topic messages were sent to. ``depth`` counts every message
    held, in flight included; ``paged`` how many of those wait in the store only, beyond the
    memory window; ``dead_letter_queue`` whether the broker moves dead letters there.
    ``purged`` counts messages removed by a purge (not ``acknowledged``)."""

    name: str
    destination: str
    depth: int
    in_flight: int
    consumers: int
    enqueued: int
    acknowledged: int
    expired: int
    dead_lettered: int
    paged: int = 0
    dead_letter_queue: bool = False
    purged: int = 0
