"""Consumers as the broker sees them: what a client asks for (``ConsumerSpec``) and the broker's
record of one attached consumer (``Consumer``: selector, credit, where deliveries go).

Credit is the flow-control window: a consumer may hold at most ``prefetch`` deliveries that its
application has not taken yet. The broker spends one unit per delivery; the client gives units
back (``Broker.credit``) as its application takes messages, and a requeued undelivered message
gives its unit back by itself. This module only describes consumers; dispatch decisions live in
``jms.broker.message_queue``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jms.errors import InvalidDestinationException
from jms.message import Destination, Message, Topic
from jms.selector import Selector, selector_or_none

if TYPE_CHECKING:
    from jms.broker.delivery import Delivery
    from jms.broker.message_queue import MessageQueue
    from jms.broker.subscription import Subscription

__all__ = ["DEFAULT_PREFETCH", "Consumer", "ConsumerSpec", "DeliverySink"]

#: Deliveries a consumer may hold before its application takes them, unless configured.
DEFAULT_PREFETCH = 100

#: Where the broker hands a consumer's deliveries. Called with the broker's lock held: it must
#: return at once, must not raise, and must not call the broker.
DeliverySink = Callable[["Delivery"], None]


@dataclass(frozen=True, slots=True)
class ConsumerSpec:
    """What a consumer subscribes to.

    ``subscription_name`` with ``durable`` names a durable subscription (unshared unless
    ``shared``); with ``shared`` alone a shared non-durable one; without a name a topic consumer
    has a private non-durable subscription. ``max_deliveries`` overrides the destination policy's
    redelivery limit for messages this consumer fails. ``read_only_messages`` says the consumer
    only reads the messages it is delivered and never hands them on (a front end writing them
    out): it is handed the broker's own message, not a copy, with the delivery's count in
    ``Delivery.delivery_count`` instead of in the message (``jms.broker.delivery``).
    """

    destination: Destination
    selector: str | None = None
    no_local: bool = False
    subscription_name: str | None = None
    durable: bool = False
    shared: bool = False
    prefetch: int = DEFAULT_PREFETCH
    max_deliveries: int | None = None
    read_only_messages: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.destination, Destination):
            raise InvalidDestinationException(
                f"a consumer needs a Queue or Topic, got {type(self.destination).__name__} "
                f"{self.destination!r}"
            )
        if type(self.prefetch) is not int or self.prefetch < 1:
            raise ValueError(f"prefetch must be an int of at least 1; got {self.prefetch!r}")
        if self.max_deliveries is not None and (
            type(self.max_deliveries) is not int or self.max_deliveries < 1
        ):
            raise ValueError(
                f"max_deliveries must be an int of at least 1 or None; got {self.max_deliveries!r}"
            )
        named = self.durable or self.shared
        if named and not isinstance(self.destination, Topic):
            raise InvalidDestinationException(
                f"durable and shared subscriptions are on topics; {self.destination} is a queue"
            )
        if named and not (isinstance(self.subscription_name, str) and self.subscription_name):
            raise ValueError(
                "a durable or shared subscription needs a non-empty name; "
                f"got {self.subscription_name!r}"
            )
        if self.subscription_name is not None and not named:
            raise ValueError(
                f"subscription name {self.subscription_name!r} given for a consumer that is "
                "neither durable nor shared"
            )

    @property
    def selector_text(self) -> str | None:
        """The selector; None for no selector, the empty string or white space only (the spec:
        "If the value of a message selector is an empty string, the value is treated as a null")."""
        return selector_or_none(self.selector)


class Consumer:
    """One attached consumer: where it takes messages from and how many more it may be sent."""

    __slots__ = (
        "closed",
        "connection_id",
        "credit",
        "id",
        "queue",
        "selector",
        "sink",
        "spec",
        "subscription",
    )

    def __init__(
        self,
        consumer_id: int,
        connection_id: int,
        spec: ConsumerSpec,
        selector: Selector | None,
        sink: DeliverySink,
        queue: MessageQueue,
        subscription: Subscription | None,
    ) -> None:
        self.id = consumer_id
        self.connection_id = connection_id
        self.spec = spec
        # Queue consumers filter here; topic consumers' subscriptions filter on fan-out instead.
        self.selector = selector
        self.sink = sink
        self.queue = queue
        self.subscription = subscription
        self.credit = 0  # granted by MessageQueue.attach
        self.closed = False

    def accepts(self, message: Message) -> bool:
        return self.selector is None or self.selector.matches(message)

    def __repr__(self) -> str:
        return f"<Consumer {self.id} on {self.queue.name} credit={self.credit}>"
