"""Queues, topics, every kind of subscription, no_local, and temporary destinations."""

from __future__ import annotations

import pytest

from jms.client import Connection, ConnectionFactory, MessageConsumer, Session
from jms.errors import (
    IllegalStateException,
    InvalidDestinationException,
    JMSException,
)
from jms.message import Destination, Queue, TextMessage, Topic

ORDERS = Queue("orders")
NEWS = Topic("news")


def _send(session: Session, destination: Destination, *texts: str) -> None:
    producer = session.create_producer(destination)
    for text in texts:
        producer.send(TextMessage(text))


def _texts(consumer: MessageConsumer, timeout_ms: int = 50) -> list[str]:
    texts = []
    while (message := consumer.receive(timeout_ms)) is not None:
        texts.append(message.get_text())
    return texts


def _client(factory: ConnectionFactory, client_id: str | None = None) -> Connection:
    connection = factory.create_connection()
    if client_id is not None:
        connection.set_client_id(client_id)
    connection.start()
    return connection


# -- point-to-point and publish/subscribe ------------------------------------------------------


def test_a_queue_gives_each_message_to_one_consumer(session: Session) -> None:
    first = session.create_consumer(ORDERS)
    second = session.create_consumer(ORDERS)
    _send(session, ORDERS, *[str(n) for n in range(10)])
    got_first, got_second = _texts(first), _texts(second)
    assert sorted(got_first + got_second, key=int) == [str(n) for n in range(10)]
    assert got_first and got_second
    assert not set(got_first) & set(got_second)


def test_a_queue_keeps_messages_until_a_consumer_comes(session: Session) -> None:
    _send(session, ORDERS, "early")
    assert _texts(session.create_consumer(ORDERS)) == ["early"]


def test_a_topic_gives_every_subscription_a_copy(session: Session) -> None:
    first = session.create_consumer(NEWS)
    second = session.create_consumer(NEWS)
    _send(session, NEWS, "a", "b")
    assert _texts(first) == ["a", "b"]
    assert _texts(second) == ["a", "b"]


def test_a_non_durable_subscription_sees_only_what_is_published_while_it_exists(
    session: Session,
) -> None:
    _send(session, NEWS, "before")
    subscriber = session.create_consumer(NEWS)
    _send(session, NEWS, "during")
    subscriber.close()
    _send(session, NEWS, "after")
    assert _texts(session.create_consumer(NEWS)) == []


# -- durable subscriptions ---------------------------------------------------------------------


def test_a_durable_subscription_survives_its_subscribers_absence(
    factory: ConnectionFactory,
) -> None:
    subscriber = _client(factory, "reader")
    session = subscriber.create_session()
    session.create_durable_consumer(NEWS, "feed").close()
    subscriber.close()
    publisher = _client(factory)
    _send(publisher.create_session(), NEWS, "while away")
    publisher.close()
    subscriber = _client(factory, "reader")
    consumer = subscriber.create_session().create_durable_consumer(NEWS, "feed")
    assert _texts(consumer) == ["while away"]
    subscriber.close()


def test_an_unshared_durable_subscription_needs_a_client_id(session: Session) -> None:
    with pytest.raises(IllegalStateException, match="needs a client ID"):
        session.create_durable_consumer(NEWS, "feed")


def test_an_unshared_durable_subscription_has_one_active_consumer(
    factory: ConnectionFactory,
) -> None:
    connection = _client(factory, "reader")
    session = connection.create_session()
    session.create_durable_consumer(NEWS, "feed")
    with pytest.raises(IllegalStateException, match="already has an active consumer"):
        session.create_durable_consumer(NEWS, "feed")
    connection.close()


def test_unsubscribe_deletes_the_durable_subscription(factory: ConnectionFactory) -> None:
    connection = _client(factory, "reader")
    session = connection.create_session()
    consumer = session.create_durable_consumer(NEWS, "feed")
    with pytest.raises(IllegalStateException, match="active consumer"):
        session.unsubscribe("feed")
    consumer.close()
    _send(session, NEWS, "kept")
    session.unsubscribe("feed")
    with pytest.raises(InvalidDestinationException, match="no durable subscription named 'feed'"):
        session.unsubscribe("feed")
    assert _texts(session.create_durable_consumer(NEWS, "feed")) == []
    connection.close()


def test_unsubscribe_is_refused_while_a_message_is_unacknowledged(
    factory: ConnectionFactory,
) -> None:
    connection = _client(factory, "reader")
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    consumer = session.create_durable_consumer(NEWS, "feed")
    _send(session, NEWS, "held")
    message = consumer.receive(1000)
    consumer.close()
    with pytest.raises(IllegalStateException, match="not acknowledged"):
        session.unsubscribe("feed")
    message.acknowledge()
    session.unsubscribe("feed")
    connection.close()


def test_changing_the_selector_of_an_inactive_durable_subscription_replaces_it(
    factory: ConnectionFactory,
) -> None:
    connection = _client(factory, "reader")
    session = connection.create_session()
    session.create_durable_consumer(NEWS, "feed").close()
    _send(session, NEWS, "old")
    consumer = session.create_durable_consumer(NEWS, "feed", "color = 'red'")
    red = TextMessage("red")
    red.set_string_property("color", "red")
    session.create_producer(NEWS).send(red)
    assert _texts(consumer) == ["red"]
    connection.close()


# -- shared subscriptions ----------------------------------------------------------------------


def test_a_shared_subscription_splits_messages_between_its_consumers(session: Session) -> None:
    first = session.create_shared_consumer(NEWS, "workers")
    second = session.create_shared_consumer(NEWS, "workers")
    private = session.create_consumer(NEWS)
    _send(session, NEWS, *[str(n) for n in range(10)])
    shared = _texts(first) + _texts(second)
    assert sorted(shared, key=int) == [str(n) for n in range(10)]
    assert len(_texts(private)) == 10


def test_a_shared_subscription_ends_with_its_last_consumer(session: Session) -> None:
    consumer = session.create_shared_consumer(NEWS, "workers")
    consumer.close()
    _send(session, NEWS, "nobody")
    assert _texts(session.create_shared_consumer(NEWS, "workers")) == []


def test_a_shared_subscription_refuses_a_different_selector(session: Session) -> None:
    session.create_shared_consumer(NEWS, "workers", "a = 1")
    with pytest.raises(JMSException, match="cannot share it"):
        session.create_shared_consumer(NEWS, "workers", "a = 2")


def test_a_shared_durable_subscription_is_shared_and_survives(factory: ConnectionFactory) -> None:
    one, two = _client(factory), _client(factory)
    first = one.create_session().create_shared_durable_consumer(NEWS, "ledger")
    second = two.create_session().create_shared_durable_consumer(NEWS, "ledger")
    _send(one.create_session(), NEWS, *[str(n) for n in range(6)])
    assert sorted(_texts(first) + _texts(second), key=int) == [str(n) for n in range(6)]
    first.close()
    second.close()
    _send(one.create_session(), NEWS, "while away")
    again = two.create_session().create_shared_durable_consumer(NEWS, "ledger")
    assert _texts(again) == ["while away"]
    one.close()
    two.close()


def test_shared_and_unshared_durable_subscriptions_cannot_share_a_name(
    factory: ConnectionFactory,
) -> None:
    connection = _client(factory, "app")
    session = connection.create_session()
    session.create_durable_consumer(NEWS, "feed").close()
    with pytest.raises(JMSException, match="cannot also be opened as an shared one"):
        session.create_shared_durable_consumer(NEWS, "feed")
    connection.close()


def test_durable_and_shared_non_durable_names_are_separate(factory: ConnectionFactory) -> None:
    connection = _client(factory, "app")
    session = connection.create_session()
    durable = session.create_durable_consumer(NEWS, "same")
    shared = session.create_shared_consumer(NEWS, "same")
    _send(session, NEWS, "x")
    assert (_texts(durable), _texts(shared)) == (["x"], ["x"])
    connection.close()


def test_subscriptions_are_on_topics_only(session: Session) -> None:
    with pytest.raises(InvalidDestinationException, match="queue://orders is a queue"):
        session.create_shared_consumer(ORDERS, "x")  # type: ignore[arg-type]


# -- no_local ----------------------------------------------------------------------------------


def test_no_local_skips_what_the_own_connection_publishes(factory: ConnectionFactory) -> None:
    mine, theirs = _client(factory), _client(factory)
    session = mine.create_session()
    consumer = session.create_consumer(NEWS, no_local=True)
    _send(session, NEWS, "mine")
    _send(theirs.create_session(), NEWS, "theirs")
    assert _texts(consumer) == ["theirs"]
    mine.close()
    theirs.close()


def test_durable_no_local_skips_the_client_ids_own_publications(factory: ConnectionFactory) -> None:
    mine = _client(factory, "app")
    session = mine.create_session()
    session.create_durable_consumer(NEWS, "feed", no_local=True).close()
    _send(session, NEWS, "mine")
    other = _client(factory)
    _send(other.create_session(), NEWS, "theirs")
    assert _texts(session.create_durable_consumer(NEWS, "feed", no_local=True)) == ["theirs"]
    mine.close()
    other.close()


def test_no_local_does_not_apply_to_queues(session: Session) -> None:
    consumer = session.create_consumer(ORDERS, no_local=True)
    _send(session, ORDERS, "own")
    assert _texts(consumer) == ["own"]


# -- temporary destinations --------------------------------------------------------------------


def test_temporary_destinations_live_as_long_as_their_connection(
    factory: ConnectionFactory,
) -> None:
    owner, other = _client(factory), _client(factory)
    temporary = owner.create_session().create_temporary_queue()
    _send(other.create_session(), temporary, "to the owner")
    assert _texts(owner.create_session().create_consumer(temporary)) == ["to the owner"]
    owner.close()
    with pytest.raises(InvalidDestinationException, match="does not exist"):
        _send(other.create_session(), temporary, "too late")
    other.close()


def test_only_the_creating_connection_consumes_a_temporary_destination(
    factory: ConnectionFactory,
) -> None:
    owner, other = _client(factory), _client(factory)
    for temporary in (
        owner.create_session().create_temporary_queue(),
        owner.create_session().create_temporary_topic(),
    ):
        with pytest.raises(InvalidDestinationException, match="only the connection that created"):
            other.create_session().create_consumer(temporary)
    owner.close()
    other.close()


def test_a_temporary_topic_delivers_to_its_subscribers(session: Session) -> None:
    topic = session.create_temporary_topic()
    consumer = session.create_consumer(topic)
    _send(session, topic, "t")
    assert _texts(consumer) == ["t"]


def test_deleting_a_temporary_destination_in_use_is_refused(session: Session) -> None:
    temporary = session.create_temporary_queue()
    consumer = session.create_consumer(temporary)
    with pytest.raises(IllegalStateException, match="1 consumer"):
        temporary.delete()
    consumer.close()
    temporary.delete()
    with pytest.raises(InvalidDestinationException):
        _send(session, temporary, "gone")
