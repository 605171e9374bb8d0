"""The broker's state of one queue or topic: its sequence counter, its policy, its owner if temporary.

A queue has one ``MessageQueue``; a topic has the subscriptions that copy its messages. Each
destination numbers the messages sent to it, 1, 2, 3, … never reusing a number (the ``seq`` of
``jms.store``), not even across a crash: a permanent destination reserves its numbers in the store
a block at a time, ahead of use (the store sees NON_PERSISTENT messages' numbers no other way),
and remembers which reservations may not be durable yet — nobody may see a message whose number
is not durably reserved or stored. This module holds state only; the broker routes, dispatches
and submits the reservations.
"""

from __future__ import annotations

from collections import deque
from typing import Final

from jms.broker.memory import MemoryBudget
from jms.broker.message_queue import MessageQueue
from jms.broker.policy import DestinationPolicy
from jms.broker.subscription import Subscription
from jms.message import Queue, Topic
from jms.store import Completion

__all__ = ["SEQUENCE_BLOCK", "QueueDestination", "TopicDestination"]

#: Sequence numbers a destination reserves in the store at a time; the next block is reserved
#: when half of the current one is used, so the reservation is durable before it is needed.
#: Half a block must outlast a store batch under load (the writer thread waiting for the GIL, an
#: fsync: tens of milliseconds); with blocks of 1000, a quarter to a half of NON_PERSISTENT
#: deliveries at ~30k messages a second waited for their reservation. A crash skips at most a
#: block of numbers.
SEQUENCE_BLOCK: Final = 10_000


class _Sequenced:
    __slots__ = (
        "durable_through",
        "last_seq",
        "owner_connection_id",
        "policy",
        "reservations",
        "reserved_through",
        "temporary",
        "text",
    )

    def __init__(
        self, text: str, policy: DestinationPolicy, owner_connection_id: int | None
    ) -> None:
        self.text = text
        self.policy = policy
        self.last_seq = 0
        # Reserved in the store: submitted up to reserved_through, durable up to durable_through;
        # reservations holds the submitted ones that may not be durable yet, in order.
        self.reserved_through = 0
        self.durable_through = 0
        self.reservations: deque[tuple[int, Completion]] = deque()
        # The connection that created a temporary destination; None for a permanent one.
        self.owner_connection_id = owner_connection_id
        self.temporary = owner_connection_id is not None

    def next_seq(self) -> int:
        self.last_seq = seq = self.last_seq + 1
        return seq

    def recovered(self, last_seq: int) -> None:
        """Continue numbering above ``last_seq``, which the store holds durably."""
        self.last_seq = self.reserved_through = self.durable_through = last_seq

    def reservation_due(self) -> int | None:
        """How far to reserve now (after ``next_seq``), or None while enough is reserved."""
        if self.last_seq <= self.reserved_through - SEQUENCE_BLOCK // 2 or self.temporary:
            return None
        return max(self.reserved_through, self.last_seq) + SEQUENCE_BLOCK

    def reserved(self, through: int, completion: Completion) -> None:
        """A reservation up to ``through`` was submitted; ``completion`` says when it is durable."""
        self.reserved_through = through
        self.reservations.append((through, completion))

    def gate(self, seq: int) -> Completion | None:
        """The reservation that must be durable before the message numbered ``seq`` may be seen,
        or None if it already is."""
        # Checked before looking at the reservations: nearly every message is numbered within
        # a reservation already known to be durable.
        if seq <= self.durable_through or self.temporary:
            return None
        reservations = self.reservations
        while reservations and reservations[0][1].done():
            self.durable_through = reservations.popleft()[0]
        if seq <= self.durable_through:
            return None
        for through, completion in reservations:
            if seq <= through:
                return completion
        raise AssertionError(f"{self.text}: sequence {seq} was handed out without a reservation")


class QueueDestination(_Sequenced):
    """A queue (permanent or temporary) and the messages it holds."""

    __slots__ = ("destination", "queue")

    def __init__(
        self,
        destination: Queue,
        policy: DestinationPolicy,
        owner_connection_id: int | None,
        budget: MemoryBudget,
    ) -> None:
        super().__init__(str(destination), policy, owner_connection_id)
        self.destination = destination
        store_key = None if owner_connection_id is not None else self.text
        self.queue = MessageQueue(self.text, destination, store_key, budget)


class TopicDestination(_Sequenced):
    """A topic (permanent or temporary) and its subscriptions."""

    __slots__ = ("destination", "subscriptions")

    def __init__(
        self, destination: Topic, policy: DestinationPolicy, owner_connection_id: int | None
    ) -> None:
        super().__init__(str(destination), policy, owner_connection_id)
        self.destination = destination
        self.subscriptions: list[Subscription] = []
