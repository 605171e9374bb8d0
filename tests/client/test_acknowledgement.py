"""Acknowledgement modes and transactions, on queues and on topic subscriptions."""

from __future__ import annotations

import threading

import pytest

from jms.broker import Broker
from jms.client import Connection, ConnectionFactory, MessageConsumer, Session
from jms.errors import IllegalStateException
from jms.message import Destination, Message, Queue, TextMessage, Topic

ORDERS = Queue("orders")
NEWS = Topic("news")
DESTINATIONS = [pytest.param(ORDERS, id="queue"), pytest.param(NEWS, id="topic")]


def _send(session: Session, destination: Destination, *texts: str) -> None:
    producer = session.create_producer(destination)
    for text in texts:
        producer.send(TextMessage(text))


def _receive_all(consumer: MessageConsumer, timeout_ms: int = 50) -> list[Message]:
    received = []
    while (message := consumer.receive(timeout_ms)) is not None:
        received.append(message)
    return received


def _summary(messages: list[Message]) -> list[tuple[str, bool, int]]:
    return [
        (m.get_text(), m.get_jms_redelivered(), m.get_int_property("JMSXDeliveryCount"))  # type: ignore[attr-defined]
        for m in messages
    ]


def _depth(broker: Broker, name: str) -> int:
    return {s.name: s.depth for s in broker.stats()}.get(name, 0)


# -- AUTO and DUPS_OK --------------------------------------------------------------------------


def test_auto_acknowledge_consumes_on_receive(connection: Connection, broker: Broker) -> None:
    session = connection.create_session(False, Session.AUTO_ACKNOWLEDGE)
    consumer = session.create_consumer(ORDERS)
    _send(session, ORDERS, "a")
    assert consumer.receive(1000).get_text() == "a"
    session.close()
    assert _depth(broker, "queue://orders") == 0


def test_dups_ok_acknowledges_lazily_but_surely(connection: Connection, broker: Broker) -> None:
    session = connection.create_session(False, Session.DUPS_OK_ACKNOWLEDGE)
    consumer = session.create_consumer(ORDERS)
    _send(session, ORDERS, "a", "b")
    assert [m.get_text() for m in _receive_all(consumer)] == ["a", "b"]
    # Before the empty receive blocked, the pending acknowledgements went out.
    assert _depth(broker, "queue://orders") == 0


def test_acknowledge_is_ignored_in_automatic_modes(connection: Connection) -> None:
    session = connection.create_session(False, Session.AUTO_ACKNOWLEDGE)
    _send(session, ORDERS, "a")
    message = session.create_consumer(ORDERS).receive(1000)
    message.acknowledge()
    session.recover()  # nothing unacknowledged: nothing comes back
    assert session.create_consumer(ORDERS).receive(50) is None


# -- CLIENT_ACKNOWLEDGE ------------------------------------------------------------------------


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_acknowledge_covers_everything_the_session_consumed(
    connection: Connection, destination: Destination
) -> None:
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    first = session.create_consumer(destination)
    other_queue = Queue("other")
    second = session.create_consumer(other_queue)
    _send(session, destination, "a", "b")
    _send(session, other_queue, "c")
    a = first.receive(1000)
    first.receive(1000)
    second.receive(1000)
    a.acknowledge()  # the first message acknowledges all three
    session.recover()
    assert first.receive(50) is None and second.receive(50) is None


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_recover_redelivers_from_the_oldest_unacknowledged(
    connection: Connection, destination: Destination
) -> None:
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    consumer = session.create_consumer(destination)
    _send(session, destination, "a", "b", "c")
    consumer.receive(1000).acknowledge()
    consumer.receive(1000)
    session.recover()
    assert _summary(_receive_all(consumer)) == [("b", True, 2), ("c", False, 1)]


def test_closing_a_session_redelivers_its_unacknowledged_messages(
    connection: Connection,
) -> None:
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    consumer = session.create_consumer(ORDERS)
    _send(session, ORDERS, "a")
    consumer.receive(1000)
    session.close()
    again = connection.create_session().create_consumer(ORDERS)
    assert _summary(_receive_all(again)) == [("a", True, 2)]


def test_closing_a_session_redelivers_to_a_durable_subscription(
    factory: ConnectionFactory,
) -> None:
    # A non-durable subscription ends with its session, so the topic variant needs a durable one.
    connection = factory.create_connection()
    connection.set_client_id("reader")
    connection.start()
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    consumer = session.create_durable_consumer(NEWS, "feed")
    _send(session, NEWS, "a")
    consumer.receive(1000)
    session.close()
    again = connection.create_session().create_durable_consumer(NEWS, "feed")
    assert _summary(_receive_all(again)) == [("a", True, 2)]
    connection.close()


def test_messages_of_a_closed_consumer_stay_acknowledgeable(connection: Connection) -> None:
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    consumer = session.create_consumer(ORDERS)
    _send(session, ORDERS, "a")
    message = consumer.receive(1000)
    consumer.close()
    message.acknowledge()
    session.close()
    assert connection.create_session().create_consumer(ORDERS).receive(50) is None


def test_acknowledge_after_the_session_closed_is_illegal(connection: Connection) -> None:
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    _send(session, ORDERS, "a")
    message = session.create_consumer(ORDERS).receive(1000)
    session.close()
    with pytest.raises(IllegalStateException, match="Session is closed"):
        message.acknowledge()


# -- transactions ------------------------------------------------------------------------------


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_commit_makes_sends_visible(connection: Connection, destination: Destination) -> None:
    observer = connection.create_session().create_consumer(destination)
    session = connection.create_session(True)
    _send(session, destination, "a", "b")
    assert observer.receive(50) is None
    session.commit()
    assert [m.get_text() for m in _receive_all(observer)] == ["a", "b"]


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_rollback_discards_sends(connection: Connection, destination: Destination) -> None:
    observer = connection.create_session().create_consumer(destination)
    session = connection.create_session(True)
    _send(session, destination, "discarded")
    session.rollback()
    session.commit()
    assert observer.receive(50) is None


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_rollback_redelivers_what_was_received(
    connection: Connection, destination: Destination
) -> None:
    session = connection.create_session(True)
    consumer = session.create_consumer(destination)
    _send(connection.create_session(), destination, "a", "b")
    assert len(_receive_all(consumer)) == 2
    session.rollback()
    assert _summary(_receive_all(consumer)) == [("a", True, 2), ("b", True, 2)]
    session.commit()
    session.rollback()
    assert consumer.receive(50) is None


def test_commit_consumes_and_sends_atomically(connection: Connection, broker: Broker) -> None:
    _send(connection.create_session(), ORDERS, "order")
    session = connection.create_session(True)
    order = session.create_consumer(ORDERS).receive(1000)
    session.create_producer(Queue("invoices")).send(TextMessage(f"invoice for {order.get_text()}"))
    assert (_depth(broker, "queue://orders"), _depth(broker, "queue://invoices")) == (1, 0)
    session.commit()
    assert (_depth(broker, "queue://orders"), _depth(broker, "queue://invoices")) == (0, 1)


def test_closing_a_transacted_session_rolls_back(connection: Connection, broker: Broker) -> None:
    _send(connection.create_session(), ORDERS, "order")
    session = connection.create_session(True)
    session.create_consumer(ORDERS).receive(1000)
    _send(session, Queue("invoices"), "never")
    session.close()
    again = connection.create_session().create_consumer(ORDERS)
    assert _summary(_receive_all(again)) == [("order", True, 2)]
    assert _depth(broker, "queue://invoices") == 0


def test_transaction_methods_need_the_right_kind_of_session(connection: Connection) -> None:
    plain = connection.create_session()
    with pytest.raises(IllegalStateException, match="transacted session"):
        plain.commit()
    with pytest.raises(IllegalStateException, match="transacted session"):
        plain.rollback()
    with pytest.raises(IllegalStateException, match="use rollback"):
        connection.create_session(True).recover()
    assert connection.create_session(True).get_acknowledge_mode() == Session.SESSION_TRANSACTED
    assert connection.create_session(Session.SESSION_TRANSACTED).get_transacted()


# -- listeners ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode",
    [Session.AUTO_ACKNOWLEDGE, Session.DUPS_OK_ACKNOWLEDGE],
    ids=["auto", "dups-ok"],
)
def test_a_listener_that_raises_in_auto_mode_gets_it_again_before_prefetched_ones(
    connection: Connection, mode: int
) -> None:
    # JMS 2.0 §8.7: a listener that throws in AUTO/DUPS_OK — "the message will be immediately
    # redelivered", so messages already prefetched behind it do not overtake it.
    _send(connection.create_session(), ORDERS, "a", "b", "c")
    session = connection.create_session(False, mode)
    seen: list[tuple[str, bool]] = []
    done = threading.Event()

    def listener(message: Message) -> None:
        seen.append((message.get_text(), message.get_jms_redelivered()))  # type: ignore[attr-defined]
        if len(seen) == 1:
            raise RuntimeError("first attempt fails")
        if len(seen) == 4:
            done.set()

    session.create_consumer(ORDERS).set_message_listener(listener)
    assert done.wait(5)
    assert seen == [("a", False), ("a", True), ("b", False), ("c", False)]


def test_a_listener_that_raises_in_client_mode_moves_on(connection: Connection) -> None:
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    seen: list[str] = []
    done = threading.Event()

    def listener(message: Message) -> None:
        seen.append(message.get_text())  # type: ignore[attr-defined]
        if len(seen) == 2:
            done.set()
        raise RuntimeError("always fails")

    session.create_consumer(ORDERS).set_message_listener(listener)
    _send(connection.create_session(), ORDERS, "a", "b")
    assert done.wait(2)
    assert seen == ["a", "b"]


def test_recover_inside_a_listener_redelivers_the_current_message(connection: Connection) -> None:
    session = connection.create_session()
    seen: list[int] = []
    done = threading.Event()

    def listener(message: Message) -> None:
        seen.append(message.get_int_property("JMSXDeliveryCount"))
        if len(seen) < 3:
            session.recover()
        else:
            done.set()

    session.create_consumer(ORDERS).set_message_listener(listener)
    _send(connection.create_session(), ORDERS, "a")
    assert done.wait(2)
    assert seen == [1, 2, 3]


def test_closing_a_dups_ok_session_acknowledges_what_it_consumed(
    connection: Connection, broker: Broker
) -> None:
    session = connection.create_session(False, Session.DUPS_OK_ACKNOWLEDGE)
    consumer = session.create_consumer(ORDERS)
    _send(session, ORDERS, "a")
    assert consumer.receive(1000).get_text() == "a"
    assert _depth(broker, "queue://orders") == 1  # not yet acknowledged: lazily
    session.close()
    assert _depth(broker, "queue://orders") == 0
