"""Staged publishing, property-based: whatever is staged in which staging queues, and whichever
ranges a publish names (the others are what failed writers left), on a SQLite store with or
without a broker restart between staging and publishing, every message of a named range is
published exactly once to its own destination, PERSISTENT ones in the order of the ranges, and
nothing else is; the staging queues it names end empty, and the same batch is never published
twice."""

from __future__ import annotations

import tempfile
from itertools import count
from random import Random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jms.broker import BatchMarker, Broker, ConsumerSpec, DestinationPolicy, StagedRange
from jms.broker.subscription import SubscriptionName
from jms.message import DeliveryMode, Queue, TextMessage, Topic
from jms.message.codec import encode
from jms.store.sqlite import SQLiteStore

DESTINATIONS = (Queue("q1"), Queue("q2"), Topic("news"))
STAGING = (Queue("staging.p0"), Queue("staging.p1"))
MARKERS = Queue("markers")

# A request: its staging queue, whether the publish names it, and its messages as (destination
# index, persistent).
_requests = st.lists(
    st.tuples(
        st.sampled_from(range(len(STAGING))),
        st.booleans(),
        st.lists(
            st.tuples(st.sampled_from(range(len(DESTINATIONS))), st.booleans()),
            min_size=1,
            max_size=6,
        ),
    ),
    min_size=1,
    max_size=6,
)


def _texts(broker: Broker, connection: int, queue: Queue) -> list[tuple[str, bool]]:
    page = broker.browse(connection, queue, None, 1, None, 1000)
    return [
        (m.get_text(), m.get_jms_delivery_mode() == DeliveryMode.PERSISTENT)  # type: ignore[attr-defined]
        for _, m in page.messages
    ]


def _subscribed(broker: Broker, connection: int) -> list[str]:
    page = broker.browse(connection, SubscriptionName("reader", "news-reader"), None, 1, None, 1000)
    return [m.get_text() for _, m in page.messages]  # type: ignore[attr-defined]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_requests, st.booleans(), st.integers(min_value=2, max_value=5), st.randoms())
def test_every_named_staged_message_is_published_once_to_its_destination_in_order(
    requests: list[tuple[int, bool, list[tuple[int, bool]]]],
    restart: bool,
    window: int,
    shuffle: Random,
) -> None:
    """The publish names the ranges in any order (a writer whose requests were answered out of
    order reports them so); each range's messages are published in the order of the ranges."""
    policy = DestinationPolicy(memory_window=window)
    numbers = count()
    with tempfile.TemporaryDirectory() as directory:
        broker = Broker(SQLiteStore(directory), default_policy=policy)
        connection = broker.connect(client_id="news-reader")
        subscriber = broker.add_consumer(
            connection,
            ConsumerSpec(Topic("news"), subscription_name="reader", durable=True),
            lambda _: None,
        )
        broker.remove_consumer(connection, subscriber)  # the subscription stays, inactive
        named: list[tuple[StagedRange, list[tuple[str, str, bool]]]] = []
        for staging, publish, items in requests:
            encoded = []
            texts = []
            for destination, persistent in items:
                text = f"m{next(numbers)}"
                message = TextMessage(text)
                message.set_jms_destination(DESTINATIONS[destination])
                message.set_jms_delivery_mode(
                    DeliveryMode.PERSISTENT if persistent else DeliveryMode.NON_PERSISTENT
                )
                encoded.append(encode(message))
                texts.append((str(DESTINATIONS[destination]), text, persistent))
            staged = broker.stage_encoded(connection, STAGING[staging], encoded)
            assert staged.count == len(items)
            if publish:
                named.append((staged, texts))
        shuffle.shuffle(named)
        expected: dict[str, list[tuple[str, bool]]] = {str(d): [] for d in DESTINATIONS}
        for _, texts in named:
            for destination, text, persistent in texts:
                expected[destination].append((text, persistent))
        ranges = [staged for staged, _ in named]
        if restart:
            broker.close()
            broker = Broker(SQLiteStore(directory), default_policy=policy)
            connection = broker.connect(client_id="news-reader")
        published = broker.publish_staged(connection, ranges, BatchMarker(MARKERS, 1))
        assert published == sum(part.count for part in ranges)
        for queue in DESTINATIONS[:2]:
            shown = _texts(broker, connection, queue)
            wanted = expected[str(queue)]
            assert sorted(shown) == sorted(wanted)
            # NON_PERSISTENT messages are in memory and may pass paged-out PERSISTENT ones.
            assert [t for t in shown if t[1]] == [t for t in wanted if t[1]]
        news = [text for text, _ in expected["topic://news"]]
        assert sorted(_subscribed(broker, connection)) == sorted(news)
        for staging in {part.queue for part in ranges}:  # the ones named are consumed whole
            assert broker.browse(connection, staging, None, 1, None, 10).messages == ()
        assert broker.publish_staged(connection, ranges, BatchMarker(MARKERS, 1)) == 0
        broker.close()
