"""The broker's state of one queue or topic: its sequence counter, its policy, its owner if temporary.

A queue has one ``MessageQueue``; a topic has the subscriptions that copy its messages. Each
destination numbers the messages sent to it, 1, 2, 3, … never reusing a number (the ``seq`` of
``jms.store``). This module holds state only; the broker routes and dispatches.
"""

from __future__ import annotations

from jms.broker.message_queue import MessageQueue
from jms.broker.policy import DestinationPolicy
from jms.broker.subscription import Subscription
from jms.message import Queue, Topic

__all__ = ["QueueDestination", "TopicDestination"]


class _Sequenced:
    __slots__ = ("last_seq", "owner_connection_id", "policy", "text")

    def __init__(
        self, text: str, policy: DestinationPolicy, owner_connection_id: int | None
    ) -> None:
        self.text = text
        self.policy = policy
        self.last_seq = 0
        # The connection that created a temporary destination; None for a permanent one.
        self.owner_connection_id = owner_connection_id

    def next_seq(self) -> int:
        self.last_seq += 1
        return self.last_seq

    @property
    def temporary(self) -> bool:
        return self.owner_connection_id is not None


class QueueDestination(_Sequenced):
    """A queue (permanent or temporary) and the messages it holds."""

    __slots__ = ("destination", "queue")

    def __init__(
        self, destination: Queue, policy: DestinationPolicy, owner_connection_id: int | None
    ) -> None:
        super().__init__(str(destination), policy, owner_connection_id)
        self.destination = destination
        store_key = None if owner_connection_id is not None else self.text
        self.queue = MessageQueue(self.text, destination, store_key)


class TopicDestination(_Sequenced):
    """A topic (permanent or temporary) and its subscriptions."""

    __slots__ = ("destination", "subscriptions")

    def __init__(
        self, destination: Topic, policy: DestinationPolicy, owner_connection_id: int | None
    ) -> None:
        super().__init__(str(destination), policy, owner_connection_id)
        self.destination = destination
        self.subscriptions: list[Subscription] = []
