"""Our JMS client over STOMP against a real ActiveMQ Classic 5.17, started once for this module:
text and bytes messages, properties, selectors, client acknowledgement and recover, transactions
on both sides, durable subscriptions, browsing, request/reply through a temporary queue, and
typed messages between two jms clients through ActiveMQ. Skips (saying why) only when ActiveMQ
cannot be installed or started here."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest

from jms import (
    BytesMessage,
    Connection,
    ConnectionFactory,
    MapMessage,
    Message,
    Queue,
    Session,
    TextMessage,
    Topic,
)
from jms.errors import JMSException
from tests.stomp.activemq import ActiveMQ

pytestmark = pytest.mark.skipif(
    ActiveMQ.unavailable() is not None, reason=f"ActiveMQ: {ActiveMQ.unavailable()}"
)


@pytest.fixture(scope="module")
def activemq() -> Iterator[ActiveMQ]:
    with ActiveMQ() as broker:
        yield broker


@pytest.fixture
def factory(activemq: ActiveMQ) -> ConnectionFactory:
    return ConnectionFactory(activemq.url)


@pytest.fixture
def connection(factory: ConnectionFactory) -> Iterator[Connection]:
    with factory.create_connection() as opened:
        opened.start()
        yield opened


@pytest.fixture
def queue() -> Queue:
    return Queue(f"interop-{uuid.uuid4().hex[:10]}")


def _drain(consumer: object, timeout_ms: int = 300) -> list[str]:
    texts = []
    while (message := consumer.receive(timeout_ms)) is not None:  # type: ignore[attr-defined]
        texts.append(message.get_text())
    return texts


def test_it_is_activemq(activemq: ActiveMQ) -> None:
    assert activemq.server.startswith("ActiveMQ/5.17")


def test_text_and_bytes_messages_with_properties(connection: Connection, queue: Queue) -> None:
    session = connection.create_session()
    producer = session.create_producer(queue)
    text = TextMessage("héllo, ActiveMQ")
    text.set_string_property("colour", "red")
    text.set_int_property("weight", 3000)
    text.set_jms_correlation_id("c-1")
    text.set_jms_type("greeting")
    producer.send(text, priority=7)
    data = BytesMessage()
    data.write_bytes(b"\x00\x01\x02binary\xff")
    producer.send(data)
    consumer = session.create_consumer(queue)
    first, second = consumer.receive(5000), consumer.receive(5000)
    assert isinstance(first, TextMessage) and first.get_text() == "héllo, ActiveMQ"
    assert first.get_string_property("colour") == "red"
    assert first.get_string_property("weight") == "3000"  # STOMP headers are strings
    assert first.get_jms_correlation_id() == "c-1" and first.get_jms_type() == "greeting"
    assert first.get_jms_priority() == 7
    assert (first.get_jms_message_id() or "").startswith("ID:")
    assert isinstance(second, BytesMessage)
    assert second.get_body(bytes) == b"\x00\x01\x02binary\xff"


def test_selectors(connection: Connection, queue: Queue) -> None:
    session = connection.create_session()
    producer = session.create_producer(queue)
    for colour in ("red", "blue", "red"):
        message = TextMessage(colour)
        message.set_string_property("colour", colour)
        producer.send(message)
    assert _drain(session.create_consumer(queue, "colour = 'blue'")) == ["blue"]
    assert _drain(session.create_consumer(queue, "colour = 'red'")) == ["red", "red"]


def test_client_acknowledgement_and_recover(connection: Connection, queue: Queue) -> None:
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    producer = session.create_producer(queue)
    for text in ("a", "b"):
        producer.send(TextMessage(text))
    consumer = session.create_consumer(queue)
    first = consumer.receive(5000)
    assert first is not None and first.get_text() == "a" and not first.get_jms_redelivered()
    session.recover()
    again = [consumer.receive(5000) for _ in range(2)]
    assert [m.get_text() for m in again if m is not None] == ["a", "b"]
    assert again[0] is not None and again[0].get_jms_redelivered()
    again[1].acknowledge()  # type: ignore[union-attr]
    consumer.close()
    assert _drain(session.create_consumer(queue)) == []


def test_unacknowledged_messages_return_when_the_connection_closes(
    factory: ConnectionFactory, queue: Queue
) -> None:
    with factory.create_connection() as first:
        first.start()
        session = first.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        session.create_producer(queue).send(TextMessage("held"))
        assert session.create_consumer(queue).receive(5000) is not None
    with factory.create_connection() as second:
        second.start()
        message = second.create_session().create_consumer(queue).receive(5000)
        assert message is not None and message.get_text() == "held"
        assert message.get_jms_redelivered()


def test_transactions_on_both_sides(connection: Connection, queue: Queue) -> None:
    producing = connection.create_session(True)
    producer = producing.create_producer(queue)
    producer.send(TextMessage("rolled back"))
    producing.rollback()
    producer.send(TextMessage("committed"))
    producing.commit()
    consuming = connection.create_session(True)
    consumer = consuming.create_consumer(queue)
    message = consumer.receive(5000)
    assert message is not None and message.get_text() == "committed"
    consuming.rollback()
    again = consumer.receive(5000)
    assert again is not None and again.get_text() == "committed" and again.get_jms_redelivered()
    consuming.commit()
    assert consumer.receive(300) is None
    consumer.close()
    assert _drain(connection.create_session().create_consumer(queue)) == []


def test_a_durable_subscription_outlives_its_consumer(factory: ConnectionFactory) -> None:
    topic = Topic(f"interop-news-{uuid.uuid4().hex[:8]}")
    client_id = f"reader-{uuid.uuid4().hex[:8]}"
    durable = ConnectionFactory(factory.url, client_id=client_id)
    with durable.create_connection() as reader:
        reader.create_session().create_durable_consumer(topic, "feed").close()
    with factory.create_connection() as publisher:
        publisher.create_session().create_producer(topic).send(TextMessage("while away"))
    with durable.create_connection() as reader:
        reader.start()
        session = reader.create_session()
        consumer = session.create_durable_consumer(topic, "feed")
        message = consumer.receive(5000)
        assert message is not None and message.get_text() == "while away"
        consumer.close()
        session.unsubscribe("feed")


def test_browsing_a_queue(connection: Connection, queue: Queue) -> None:
    session = connection.create_session()
    producer = session.create_producer(queue)
    for text in ("1", "2", "3"):
        producer.send(TextMessage(text))
    browsed = [m.get_text() for m in session.create_browser(queue)]  # type: ignore[attr-defined]
    assert browsed == ["1", "2", "3"]
    assert _drain(session.create_consumer(queue)) == ["1", "2", "3"]


def test_request_reply_through_a_temporary_queue(connection: Connection, queue: Queue) -> None:
    session = connection.create_session()
    replies = session.create_temporary_queue()
    request = TextMessage("6 x 7?")
    request.set_jms_reply_to(replies)
    session.create_producer(queue).send(request)
    with ConnectionFactory(f"stomp://{_host_port(connection)}").create_connection() as other:
        other.start()
        responder = other.create_session()
        question = responder.create_consumer(queue).receive(5000)
        assert question is not None and question.get_jms_reply_to() is not None
        responder.create_producer(question.get_jms_reply_to()).send(TextMessage("42"))
    answer = session.create_consumer(replies).receive(5000)
    assert answer is not None and answer.get_text() == "42"


def _host_port(connection: Connection) -> str:
    return connection._transport._url.partition("://")[2]  # type: ignore[attr-defined]


def test_typed_messages_cross_activemq_between_jms_clients(
    connection: Connection, queue: Queue
) -> None:
    session = connection.create_session()
    sent = MapMessage()
    sent.set_int("count", 3)
    sent.set_double("price", 2.5)
    sent.set_long_property("big", 2**40)
    session.create_producer(queue).send(sent)
    received = session.create_consumer(queue).receive(5000)
    assert isinstance(received, MapMessage)
    assert (received.get_int("count"), received.get_double("price")) == (3, 2.5)
    assert received.get_long_property("big") == 2**40


def test_shared_subscriptions_are_refused_clearly(connection: Connection) -> None:
    with pytest.raises(JMSException, match="shared subscriptions need a jms broker"):
        connection.create_session().create_shared_consumer(Topic("t"), "s")


def test_asynchronous_sends_complete_in_order_on_activemq(
    connection: Connection, queue: Queue
) -> None:
    # JMS 2.0 asynchronous send over plain STOMP: each SEND asks for a RECEIPT, many in flight;
    # "callbacks [...] will be performed in the same order as the corresponding calls to send".
    completed: list[str] = []
    failed: list[Exception] = []
    done = threading.Event()

    class Tally:
        def on_completion(self, message: Message) -> None:
            completed.append(message.get_text())  # type: ignore[attr-defined]
            if len(completed) == 300:
                done.set()

        def on_exception(self, message: Message, exception: Exception) -> None:
            failed.append(exception)
            done.set()

    session = connection.create_session()
    producer = session.create_producer(queue)
    for n in range(300):
        producer.send(TextMessage(str(n)), completion_listener=Tally())
    assert done.wait(30) and not failed
    assert completed == [str(n) for n in range(300)]
    assert _drain(session.create_consumer(queue), 2000) == [str(n) for n in range(300)]
