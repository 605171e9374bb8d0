"""``InProcessTransport``: a client connection to a ``Broker`` in the same process.

Each call goes straight to the broker's method on the caller's thread, and deliveries reach the
client's sinks on whichever thread made the broker dispatch (a producer's ``send``, an
acknowledgement freeing credit, the broker's timer). The only translation is the one a network
would force: a sent message is copied, so the sender's later changes never reach the broker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from jms.broker import (
    BatchMarker,
    Broker,
    BrowsePage,
    ConsumerSpec,
    DeliverySink,
    EncodedBrowsePage,
    StagedRange,
    SubscriptionName,
)
from jms.client.transport import RangeSource, TopicSubscription, Transport
from jms.errors import JMSException
from jms.message import Destination, Message, Queue, TemporaryQueue, TemporaryTopic, Topic

__all__ = ["InProcessTransport"]


class InProcessTransport(Transport):
    """A ``Transport`` that calls a ``Broker`` object directly."""

    def __init__(
        self,
        broker: Broker,
        user: str | None,
        password: str | None,
        client_id: str | None,
        on_close: Callable[[JMSException], None],
    ) -> None:
        self._broker = broker
        self._id = broker.connect(user, password, client_id=client_id, on_close=on_close)

    def set_client_id(self, client_id: str) -> None:
        self._broker.set_client_id(self._id, client_id)

    def create_temporary_queue(self) -> TemporaryQueue:
        return self._broker.create_temporary_queue(self._id)

    def create_temporary_topic(self) -> TemporaryTopic:
        return self._broker.create_temporary_topic(self._id)

    def delete_temporary_destination(self, destination: Destination) -> None:
        self._broker.delete_temporary_destination(self._id, destination)

    def send(self, message: Message, transaction_id: int | None) -> None:
        self._broker.send(self._id, message._copy(), transaction_id)

    def begin(self) -> int:
        return self._broker.begin(self._id)

    def commit(self, transaction_id: int) -> None:
        self._broker.commit(self._id, transaction_id)

    def rollback(self, transaction_id: int) -> None:
        self._broker.rollback(self._id, transaction_id)

    def add_consumer(self, spec: ConsumerSpec, sink: DeliverySink) -> int:
        return self._broker.add_consumer(self._id, spec, sink)

    def remove_consumer(self, consumer_id: int) -> None:
        self._broker.remove_consumer(self._id, consumer_id)

    def credit(self, consumer_id: int, count: int) -> None:
        self._broker.credit(self._id, consumer_id, count)

    def acknowledge(self, tags: Iterable[int], transaction_id: int | None = None) -> None:
        self._broker.acknowledge(self._id, tags, transaction_id)

    def requeue(self, delivered: Iterable[int] = (), undelivered: Iterable[int] = ()) -> None:
        self._broker.requeue(self._id, delivered, undelivered)

    def unsubscribe(self, name: str) -> None:
        self._broker.unsubscribe(self._id, name)

    def browse(self, queue: Queue, selector: str | None, start_seq: int, limit: int) -> BrowsePage:
        return self._broker.browse(self._id, queue, selector, start_seq, None, limit)

    def browse_range(
        self,
        source: RangeSource,
        selector: str | None,
        start_seq: int,
        end_seq: int | None,
        limit: int,
    ) -> BrowsePage:
        return self._broker.browse(
            self._id, _broker_source(source), selector, start_seq, end_seq, limit
        )

    def browse_range_encoded(
        self,
        source: RangeSource,
        selector: str | None,
        start_seq: int,
        end_seq: int | None,
        limit: int,
    ) -> EncodedBrowsePage:
        return self._broker.browse_encoded(
            self._id, _broker_source(source), selector, start_seq, end_seq, limit
        )

    def acknowledge_through(
        self, source: RangeSource, seq: int, selector: str | None = None, start_seq: int = 1
    ) -> int:
        return self._broker.acknowledge_through(
            self._id, _broker_source(source), seq, selector, start_seq
        )

    def first_not_due(
        self, source: RangeSource, selector: str | None, start_seq: int, end_seq: int | None
    ) -> int | None:
        return self._broker.first_not_due(
            self._id, _broker_source(source), selector, start_seq, end_seq
        )

    def last_sequence(self, destination: Queue | Topic) -> int:
        return self._broker.last_sequence(destination)

    def stage_encoded(self, queue: Queue, encoded: Sequence[bytes]) -> list[StagedRange]:
        return [self._broker.stage_encoded(self._id, queue, encoded)]

    def publish_staged(self, staged: Sequence[StagedRange], marker: BatchMarker | None) -> int:
        return self._broker.publish_staged(self._id, staged, marker)

    def close(self) -> None:
        if not self._broker.closed:
            self._broker.disconnect(self._id)


def _broker_source(source: RangeSource) -> Queue | SubscriptionName:
    if isinstance(source, TopicSubscription):
        return SubscriptionName(source.name, source.client_id)
    return source
