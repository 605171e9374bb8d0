"""Topic subscriptions: which published messages a subscription keeps, and how it is named.

A subscription owns a ``MessageQueue`` that receives a reference to every message published to its
topic that passes its selector and its ``noLocal`` rule. Four kinds, as JMS 2.0 defines them:

- private non-durable: one consumer, lives as long as that consumer;
- shared non-durable: named (with the client ID if set), shared by its consumers, lives while it
  has one;
- durable, unshared: named with the client ID (which must be set), survives its consumer, one
  active consumer at a time;
- durable, shared: named (with the client ID if set), any number of consumers.

Durable and shared non-durable subscriptions are separate namespaces ("there is no restriction on
durable subscriptions and shared non-durable subscriptions having the same name and clientId").
This module never dispatches; it only decides what a subscription keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from jms.broker.message_queue import MessageQueue
from jms.message import Message, Topic
from jms.selector import Selector
from jms.store import DurableSubscriptionRecord

__all__ = ["Subscription", "SubscriptionName", "durable_store_key"]


@dataclass(frozen=True, slots=True)
class SubscriptionName:
    """A durable subscription by its name and the client ID it was created with (None if none)."""

    name: str
    client_id: str | None = None


def durable_store_key(client_id: str | None, name: str) -> str:
    """The store queue key of a durable subscription: ``durable://<client id>/<name>``, each part
    percent-encoded so that any client ID and name give a distinct key."""
    return f"durable://{quote(client_id or '', safe='')}/{quote(name, safe='')}"


class Subscription:
    """One subscription to a topic and the queue of messages it holds."""

    __slots__ = (
        "client_id",
        "connection_id",
        "consumers",
        "durable",
        "name",
        "no_local",
        "queue",
        "selector",
        "selector_text",
        "shared",
        "topic",
    )

    def __init__(
        self,
        *,
        topic: Topic,
        queue: MessageQueue,
        selector_text: str | None,
        no_local: bool,
        name: str | None,
        client_id: str | None,
        connection_id: int | None,
        durable: bool,
        shared: bool,
    ) -> None:
        self.topic = topic
        self.queue = queue
        self.selector_text = selector_text
        self.selector = Selector(selector_text) if selector_text else None
        self.no_local = no_local
        self.name = name
        self.client_id = client_id
        # The subscribing connection, for a non-durable subscription's noLocal rule.
        self.connection_id = connection_id
        self.durable = durable
        self.shared = shared
        self.consumers = 0

    def keeps(
        self, message: Message, origin_connection_id: int, origin_client_id: str | None
    ) -> bool:
        """Whether a message published by that connection belongs in this subscription."""
        if self.no_local:
            if self.durable:
                # "published ... using this session's connection, or any other connection with
                # the same client identifier" (JMS 2.0, createDurableConsumer).
                if origin_client_id is not None and origin_client_id == self.client_id:
                    return False
            elif origin_connection_id == self.connection_id:
                return False
        return self.selector is None or self.selector.matches(message)

    def same_definition(self, topic: Topic, selector_text: str | None, no_local: bool) -> bool:
        return (
            self.topic == topic
            and self.selector_text == selector_text
            and self.no_local == no_local
        )

    def record(self) -> DurableSubscriptionRecord:
        assert self.durable and self.name is not None and self.queue.store_key is not None
        return DurableSubscriptionRecord(
            key=self.queue.store_key,
            client_id=self.client_id,
            name=self.name,
            topic=str(self.topic),
            selector=self.selector_text,
            no_local=self.no_local,
            shared=self.shared,
        )

    def describe(self) -> str:
        """How errors name this subscription."""
        kind = ("shared " if self.shared else "") + ("durable" if self.durable else "non-durable")
        client = f" of client ID {self.client_id!r}" if self.client_id is not None else ""
        return f"{kind} subscription {self.name!r}{client} on {self.topic}"
