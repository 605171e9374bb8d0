"""The JMS broker core: destinations, subscriptions, dispatch, acknowledgements, transactions,
priority, expiry, delivery delay, redelivery with dead-letter queues, message groups, flow control.

``Broker`` is a thread-safe object with no sockets; clients reach it through ``jms.client``'s
in-process transport, and a STOMP server can sit in front of it. Storage is ``jms.store``'s.
``embedded_broker(url)`` gives the process's broker for a ``memory://`` or ``embedded:///path``
URL; ``open_broker(url, ...)`` opens one with settings (what a broker process does).
``jms.broker.staging`` defines the parts of ``Broker.stage_encoded`` and ``Broker.publish_staged``.
"""

from jms.broker.broker import (
    DEAD_LETTER_REASON,
    DEFAULT_BROWSE_PAGE,
    ORIGINAL_DESTINATION,
    Broker,
    wall_clock_ms,
)
from jms.broker.consumer import DEFAULT_PREFETCH, ConsumerSpec, DeliverySink
from jms.broker.delivery import BrowsePage, Delivery, EncodedBrowsePage
from jms.broker.policy import DEAD_LETTER_PREFIX, DEFAULT_MEMORY_WINDOW, DestinationPolicy
from jms.broker.registry import close_embedded_broker, embedded_broker, open_broker
from jms.broker.staging import MARKER_BATCH, BatchMarker, StagedRange
from jms.broker.stats import QueueStats
from jms.broker.subscription import SubscriptionName

__all__ = [
    "DEAD_LETTER_PREFIX",
    "DEAD_LETTER_REASON",
    "DEFAULT_BROWSE_PAGE",
    "DEFAULT_MEMORY_WINDOW",
    "DEFAULT_PREFETCH",
    "MARKER_BATCH",
    "ORIGINAL_DESTINATION",
    "BatchMarker",
    "Broker",
    "BrowsePage",
    "ConsumerSpec",
    "Delivery",
    "DeliverySink",
    "DestinationPolicy",
    "EncodedBrowsePage",
    "QueueStats",
    "StagedRange",
    "SubscriptionName",
    "close_embedded_broker",
    "embedded_broker",
    "open_broker",
    "wall_clock_ms",
]
