"""``Transaction``: the sends and acknowledgements a transacted session has made since it last
committed or rolled back, held by the broker until ``commit`` applies them as one unit.

Sends are kept as the messages to route (nothing is visible to consumers before commit);
acknowledgements as delivery tags (the messages stay in flight, so a rollback can redeliver them).
Plain data: the broker validates and applies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jms.message import Message

__all__ = ["Transaction"]


@dataclass(slots=True)
class Transaction:
    id: int
    connection_id: int
    sends: list[Message] = field(default_factory=list)
    acknowledged: list[int] = field(default_factory=list)
