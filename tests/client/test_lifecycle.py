"""Connections and sessions: start/stop, close, client IDs, threads, closed objects, options."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from jms.broker import Broker, close_embedded_broker
from jms.client import Connection, ConnectionFactory, Session
from jms.errors import (
    IllegalStateException,
    InvalidClientIDException,
    InvalidSelectorException,
    JMSException,
)
from jms.message import Message, ObjectMessage, Queue, TextMessage

ORDERS = Queue("orders")


def _send(connection: Connection, *texts: str) -> None:
    producer = connection.create_session().create_producer(ORDERS)
    for text in texts:
        producer.send(TextMessage(text))


# -- start / stop ------------------------------------------------------------------------------


def test_a_new_connection_is_stopped_until_start(factory: ConnectionFactory) -> None:
    with factory.create_connection() as connection:
        consumer = connection.create_session().create_consumer(ORDERS)
        _send(connection, "a")
        assert consumer.receive(50) is None
        assert consumer.receive_no_wait() is None
        connection.start()
        assert consumer.receive(1000).get_text() == "a"


def test_a_receive_waiting_on_a_stopped_connection_returns_when_started(
    factory: ConnectionFactory,
) -> None:
    with factory.create_connection() as connection:
        consumer = connection.create_session().create_consumer(ORDERS)
        _send(connection, "a")
        timer = threading.Timer(0.05, connection.start)
        timer.start()
        assert consumer.receive(2000).get_text() == "a"
        timer.join(1)


def test_stop_pauses_listeners_and_start_resumes_them(connection: Connection) -> None:
    seen: list[str] = []
    arrived = threading.Event()

    def listener(message: Message) -> None:
        seen.append(message.get_text())  # type: ignore[attr-defined]
        arrived.set()

    connection.create_session().create_consumer(ORDERS).set_message_listener(listener)
    connection.stop()
    _send(connection, "a")
    assert not arrived.wait(0.1)
    connection.start()
    assert arrived.wait(2)
    assert seen == ["a"]


def test_stop_waits_for_a_running_listener(connection: Connection) -> None:
    entered, release = threading.Event(), threading.Event()
    finished: list[bool] = []

    def listener(message: Message) -> None:
        entered.set()
        release.wait(2)
        finished.append(True)

    connection.create_session().create_consumer(ORDERS).set_message_listener(listener)
    _send(connection, "a")
    assert entered.wait(2)
    threading.Timer(0.05, release.set).start()
    connection.stop()
    assert finished == [True]


def test_listeners_of_a_session_run_on_one_session_thread(connection: Connection) -> None:
    session = connection.create_session()
    threads: set[str] = set()
    done = threading.Event()

    def listener(message: Message) -> None:
        threads.add(threading.current_thread().name)
        if message.get_text() == "last":  # type: ignore[attr-defined]
            done.set()

    session.create_consumer(ORDERS).set_message_listener(listener)
    session.create_consumer(Queue("other")).set_message_listener(listener)
    producer = connection.create_session().create_producer(None)
    producer.send(ORDERS, TextMessage("a"))
    producer.send(Queue("other"), TextMessage("last"))
    assert done.wait(2)
    assert len(threads) == 1 and threads.pop().startswith("jms-session-")


def test_a_listener_may_not_stop_or_close_its_own_connection_or_session(
    connection: Connection,
) -> None:
    session = connection.create_session()
    errors: list[str] = []
    done = threading.Event()

    def listener(message: Message) -> None:
        for action in (connection.stop, connection.close, session.close):
            try:
                action()
            except IllegalStateException as error:
                errors.append(str(error))
        done.set()

    session.create_consumer(ORDERS).set_message_listener(listener)
    _send(connection, "a")
    assert done.wait(2)
    assert len(errors) == 3
    assert "must not stop its own connection" in errors[0]


def test_a_listener_may_close_its_own_consumer(connection: Connection) -> None:
    consumer = connection.create_session().create_consumer(ORDERS)
    seen: list[str] = []
    done = threading.Event()

    def listener(message: Message) -> None:
        seen.append(message.get_text())  # type: ignore[attr-defined]
        consumer.close()
        done.set()

    consumer.set_message_listener(listener)
    _send(connection, "a", "b")
    assert done.wait(2)
    time.sleep(0.05)
    assert seen == ["a"]
    assert connection.create_session().create_consumer(ORDERS).receive(1000).get_text() == "b"


def test_receive_is_refused_on_a_consumer_with_a_listener(session: Session) -> None:
    consumer = session.create_consumer(ORDERS)
    consumer.set_message_listener(lambda message: None)
    with pytest.raises(IllegalStateException, match="has a message listener"):
        consumer.receive(10)


# -- close -------------------------------------------------------------------------------------


def test_a_blocked_receive_returns_none_when_its_consumer_is_closed(session: Session) -> None:
    consumer = session.create_consumer(ORDERS)
    threading.Timer(0.05, consumer.close).start()
    began = time.monotonic()
    assert consumer.receive(5000) is None
    assert time.monotonic() - began < 2


def test_a_blocked_receive_returns_none_when_the_connection_closes(
    factory: ConnectionFactory,
) -> None:
    connection = factory.create_connection()
    connection.start()
    consumer = connection.create_session().create_consumer(ORDERS)
    threading.Timer(0.05, connection.close).start()
    assert consumer.receive(5000) is None


def test_close_gives_prefetched_messages_back(factory: ConnectionFactory) -> None:
    first = factory.create_connection()
    first.create_session().create_consumer(ORDERS)  # prefetches, never started
    _send(first, "a", "b")
    first.close()
    with factory.create_connection() as second:
        second.start()
        consumer = second.create_session().create_consumer(ORDERS)
        received = [consumer.receive(1000) for _ in range(2)]
        assert [(m.get_text(), m.get_jms_redelivered()) for m in received] == [
            ("a", False),
            ("b", False),
        ]


def _closed_objects(factory: ConnectionFactory) -> dict[str, Callable[[], object]]:
    connection = factory.create_connection()
    session = connection.create_session()
    producer = session.create_producer(ORDERS)
    consumer = session.create_consumer(ORDERS)
    browser = session.create_browser(ORDERS)
    connection.close()
    connection.close()  # idempotent
    return {
        "connection.start": connection.start,
        "connection.create_session": connection.create_session,
        "session.create_producer": lambda: session.create_producer(ORDERS),
        "session.commit": session.commit,
        "producer.send": lambda: producer.send(TextMessage("x")),
        "consumer.receive": consumer.receive_no_wait,
        "consumer.set_message_listener": lambda: consumer.set_message_listener(print),
        "browser.get_enumeration": browser.get_enumeration,
    }


@pytest.mark.parametrize(
    "operation",
    [
        "connection.start",
        "connection.create_session",
        "session.create_producer",
        "session.commit",
        "producer.send",
        "consumer.receive",
        "consumer.set_message_listener",
        "browser.get_enumeration",
    ],
)
def test_closed_objects_raise_illegal_state(factory: ConnectionFactory, operation: str) -> None:
    with pytest.raises(IllegalStateException, match="closed"):
        _closed_objects(factory)[operation]()


def test_every_object_is_a_context_manager(factory: ConnectionFactory) -> None:
    with factory.create_connection() as connection, connection.create_session() as session:
        with session.create_producer(ORDERS) as producer:
            producer.send(TextMessage("x"))
        with session.create_consumer(ORDERS) as consumer:
            pass
        with session.create_browser(ORDERS) as browser:
            pass
    with pytest.raises(IllegalStateException):
        producer.send(TextMessage("x"))
    with pytest.raises(IllegalStateException):
        consumer.receive()
    with pytest.raises(IllegalStateException):
        browser.get_enumeration()
    with pytest.raises(IllegalStateException):
        session.create_message()
    with pytest.raises(IllegalStateException):
        connection.get_client_id()


# -- client IDs --------------------------------------------------------------------------------


def test_client_ids_are_unique_per_broker(factory: ConnectionFactory) -> None:
    first = factory.create_connection()
    first.set_client_id("app")
    second = factory.create_connection()
    with pytest.raises(InvalidClientIDException, match="'app' is already in use"):
        second.set_client_id("app")
    first.close()
    second.set_client_id("app")
    assert second.get_client_id() == "app"
    second.close()


def test_the_factory_client_id_option(url: str) -> None:
    factory = ConnectionFactory(url, client_id="service")
    with factory.create_connection() as connection:
        assert connection.get_client_id() == "service"
        with pytest.raises(IllegalStateException, match="set by its ConnectionFactory"):
            connection.set_client_id("other")
        with pytest.raises(InvalidClientIDException):
            factory.create_connection()


def test_the_client_id_is_set_before_anything_else(factory: ConnectionFactory) -> None:
    with factory.create_connection() as connection:
        connection.create_session()
        with pytest.raises(IllegalStateException, match="right after the connection is created"):
            connection.set_client_id("late")


# -- factory, sessions, metadata ---------------------------------------------------------------


def test_factory_refuses_unknown_urls_and_options(url: str) -> None:
    with pytest.raises(JMSException, match="unsupported broker URL 'amqp://h:1'"):
        ConnectionFactory("amqp://h:1")
    with pytest.raises(JMSException, match="'stomp://h' is not a STOMP broker URL"):
        ConnectionFactory("stomp://h")
    with pytest.raises(ValueError, match=r"unknown ConnectionFactory option\(s\) prefech"):
        ConnectionFactory(url, prefech=3)
    with pytest.raises(ValueError, match="prefetch must be an int of at least 1"):
        ConnectionFactory(url, prefetch=0)


def test_memory_urls_name_shared_brokers(url: str) -> None:
    with ConnectionFactory(url).create_connection() as sender:
        _send(sender, "shared")
    with ConnectionFactory(url).create_connection() as receiver:
        receiver.start()
        assert (
            receiver.create_session().create_consumer(ORDERS).receive(1000).get_text() == "shared"
        )


def test_session_modes(connection: Connection) -> None:
    assert connection.create_session().get_acknowledge_mode() == Session.AUTO_ACKNOWLEDGE
    assert connection.create_session(Session.CLIENT_ACKNOWLEDGE).get_acknowledge_mode() == 2
    assert connection.create_session(True, Session.CLIENT_ACKNOWLEDGE).get_transacted()
    with pytest.raises(JMSException, match="invalid session mode 7"):
        connection.create_session(False, 7)


def test_meta_data_names_the_supported_jmsx_properties(connection: Connection) -> None:
    meta = connection.get_meta_data()
    assert meta.get_jms_major_version() == 3
    assert "JMSXDeliveryCount" in meta.get_jmsx_property_names()
    assert meta.get_jms_provider_name()


def test_the_exception_listener_hears_when_the_broker_goes(
    url: str, factory: ConnectionFactory, broker: Broker
) -> None:
    connection = factory.create_connection()
    heard: list[JMSException] = []
    connection.set_exception_listener(heard.append)
    close_embedded_broker(url)
    assert len(heard) == 1 and "was closed" in heard[0].reason
    with pytest.raises(IllegalStateException, match="closed by the broker"):
        connection.create_session()
    connection.close()


def test_a_bad_selector_fails_when_presented(session: Session) -> None:
    with pytest.raises(InvalidSelectorException):
        session.create_consumer(ORDERS, "color = ")
    with pytest.raises(InvalidSelectorException):
        session.create_browser(ORDERS, "AND")


class Order:
    """An application class: not deserialisable unless allowed."""

    def __init__(self, number: int) -> None:
        self.number = number


def test_allowed_classes_apply_to_received_object_messages(url: str) -> None:
    plain, trusting = ConnectionFactory(url), ConnectionFactory(url, allowed_classes=[Order])
    with plain.create_connection() as connection:
        connection.start()
        session = connection.create_session()
        producer = session.create_producer(ORDERS)
        producer.send(ObjectMessage(Order(7)))
        producer.send(ObjectMessage(Order(8)))
        refused = session.create_consumer(ORDERS).receive(1000)
        with pytest.raises(JMSException, match=r"refuses to deserialise class 'tests\.client"):
            refused.get_object()
    with trusting.create_connection() as connection:
        connection.start()
        received = connection.create_session().create_consumer(ORDERS).receive(1000)
        assert received.get_object().number == 8


def test_receive_with_zero_or_no_timeout_waits_as_long_as_it_takes(connection: Connection) -> None:
    consumer = connection.create_session().create_consumer(ORDERS)
    for timeout in (0, None):
        threading.Timer(0.05, _send, args=(connection, f"after {timeout}")).start()
        assert consumer.receive(timeout).get_text() == f"after {timeout}"


def test_iterating_a_consumer_ends_when_it_is_closed(connection: Connection) -> None:
    consumer = connection.create_session().create_consumer(ORDERS)
    _send(connection, "a", "b")
    seen = []
    for message in consumer:
        seen.append(message.get_text())
        if len(seen) == 2:
            threading.Timer(0.05, consumer.close).start()
    assert seen == ["a", "b"]


def test_a_listener_running_during_close_may_still_use_its_session(
    factory: ConnectionFactory, broker: Broker
) -> None:
    connection = factory.create_connection()
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    entered, outcome = threading.Event(), []

    def listener(message: Message) -> None:
        entered.set()
        time.sleep(0.1)  # the connection is being closed meanwhile
        try:
            session.create_producer(Queue("audit")).send(TextMessage("processed"))
            message.acknowledge()
            outcome.append("ok")
        except IllegalStateException as error:
            outcome.append(str(error))

    session.create_consumer(ORDERS).set_message_listener(listener)
    connection.start()
    _send(connection, "a")
    assert entered.wait(2)
    connection.close()
    assert outcome == ["ok"]
    depth = {s.name: s.depth for s in broker.stats()}
    assert (depth["queue://orders"], depth["queue://audit"]) == (0, 1)
