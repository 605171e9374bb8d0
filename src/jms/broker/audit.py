"""``SendAudit``: the JMSMessageIDs of the latest sends a broker accepted, so that a send it gets
again is dropped instead of delivered twice (ActiveMQ's producer audit does the same).

A client that fails over (``failover:`` URLs, ``jms.client.failover``) sends again every send
whose receipt the lost connection never brought back, marked as a resend (``jms-resend:true``);
the broker may have accepted it — the one now serving, or a broker that died before answering.
The audit remembers the IDs of the last ``window`` non-transacted sends in a bounded FIFO; a
broker opening a store fills it with the IDs of the newest messages the store still holds (those
the dead broker committed), so the check sees them too. Only resends are checked: a send that is
not one is taken whatever its ID (a dead letter moved back keeps its JMSMessageID). What the
audit keys on is the JMSMessageID alone: this provider's clients make every one unique
(``ID:<connection uuid>:<n>``), and a STOMP server gives a plain SEND a unique one.
"""

from __future__ import annotations

from collections import deque
from typing import Final

__all__ = ["DEFAULT_AUDIT_WINDOW", "SendAudit"]

#: How many message IDs the audit remembers: the sends of several seconds at full speed, more
#: than a failover takes to resend what was in flight.
DEFAULT_AUDIT_WINDOW: Final = 65_536


class SendAudit:
    """A bounded set of message IDs, the oldest forgotten first. Not thread-safe: the broker
    calls it under its lock."""

    __slots__ = ("_ids", "_order", "window")

    def __init__(self, window: int = DEFAULT_AUDIT_WINDOW) -> None:
        if type(window) is not int or window < 1:
            raise ValueError(f"a send audit's window is an int of at least 1; got {window!r}")
        self.window = window
        self._ids: set[str] = set()
        self._order: deque[str] = deque()

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, message_id: str) -> bool:
        return message_id in self._ids

    def record(self, message_id: str) -> None:
        """Remember ``message_id`` (forgetting the oldest one if the window is full)."""
        if message_id in self._ids:
            return
        self._ids.add(message_id)
        self._order.append(message_id)
        if len(self._order) > self.window:
            self._ids.discard(self._order.popleft())
