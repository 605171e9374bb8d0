"""The JMS broker core: destinations, subscriptions, dispatch, acknowledgements, transactions,
priority, expiry, delivery delay, redelivery with dead-letter queues, message groups, flow control.

``Broker`` is a thread-safe object with no sockets; clients reach it through ``jms.client``'s
in-process transport, and a STOMP server can sit in front of it. Storage is ``jms.store``'s.
``embedded_broker(url)`` gives the process's broker for a ``memory://`` or ``embedded:///path``
URL; ``open_broker(url, ...)`` opens one with settings (what a broker process does).
``jms.broker.staging`` defines the parts of ``Broker.stage_encoded`` and ``Broker.publish_staged``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from jms.broker.consumer import DEFAULT_PREFETCH, ConsumerSpec, DeliverySink
from jms.broker.delivery import DEFAULT_BROWSE_PAGE, BrowsePage, Delivery, EncodedBrowsePage
from jms.broker.policy import DEAD_LETTER_PREFIX, DEFAULT_MEMORY_WINDOW, DestinationPolicy
from jms.broker.registry import close_embedded_broker, embedded_broker, open_broker
from jms.broker.staging import MARKER_BATCH, BatchMarker, StagedRange
from jms.broker.stats import QueueStats
from jms.broker.subscription import SubscriptionName
from jms.broker.timer import wall_clock_ms

if TYPE_CHECKING:
    from jms.broker.broker import DEAD_LETTER_REASON, ORIGINAL_DESTINATION, Broker

# The engine is imported when first named: a client (a Spark task, the Python process Spark
# starts for each streaming query) reaches a broker over STOMP and needs only the values above.
_ENGINE = frozenset({"Broker", "DEAD_LETTER_REASON", "ORIGINAL_DESTINATION"})


def __getattr__(name: str) -> Any:
    if name in _ENGINE:
        return getattr(importlib.import_module("jms.broker.broker"), name)
    raise AttributeError(f"module 'jms.broker' has no attribute {name!r}")


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
