"""The JMS 2.0 simplified API: JMSContext, JMSProducer, JMSConsumer.receive_body."""

from __future__ import annotations

import pytest

from jms.client import ConnectionFactory, JMSContext
from jms.errors import (
    IllegalStateRuntimeException,
    JMSRuntimeException,
    MessageFormatRuntimeException,
)
from jms.message import (
    BytesMessage,
    DeliveryMode,
    MapMessage,
    ObjectMessage,
    Queue,
    StreamMessage,
    TextMessage,
    Topic,
)

ORDERS = Queue("orders")


@pytest.fixture
def context(factory: ConnectionFactory) -> JMSContext:
    opened = factory.create_context()
    yield opened
    opened.close()


def test_bodies_become_the_matching_message_types(context: JMSContext) -> None:
    producer = context.create_producer()
    for body in ("text", b"\x00\x01", {"n": 1}, [1, 2], None):
        producer.send(ORDERS, body)
    consumer = context.create_consumer(ORDERS)
    received = [consumer.receive(1000) for _ in range(5)]
    assert [type(m) for m in received] == [
        TextMessage,
        BytesMessage,
        MapMessage,
        ObjectMessage,
        TextMessage,
    ]
    assert received[1].get_body(bytes) == b"\x00\x01"
    assert received[2].get_body(dict) == {"n": 1}
    assert received[4].get_text() is None


def test_receive_body_returns_the_body(context: JMSContext) -> None:
    producer = context.create_producer()
    producer.send(ORDERS, "hello").send(ORDERS, {"a": 1})
    consumer = context.create_consumer(ORDERS)
    assert consumer.receive_body(str, 1000) == "hello"
    assert consumer.receive_body(dict, 1000) == {"a": 1}
    assert consumer.receive_body(str, 50) is None
    assert consumer.receive_body_no_wait(str) is None


def test_a_body_of_the_wrong_type_stays_next_in_auto_mode(context: JMSContext) -> None:
    # receiveBody in AUTO_ACKNOWLEDGE: "as if the unsuccessful call to receiveBody had not
    # occurred [...] This is not considered to be redelivery" (tests/client/test_receive_body.py).
    context.create_producer().send(ORDERS, "text")
    consumer = context.create_consumer(ORDERS)
    with pytest.raises(MessageFormatRuntimeException, match="cannot be assigned to bytes"):
        consumer.receive_body(bytes, 1000)
    again = consumer.receive(1000)
    assert not again.get_jms_redelivered() and again.get_text() == "text"


def test_a_body_of_the_wrong_type_counts_as_consumed_in_client_mode(
    factory: ConnectionFactory,
) -> None:
    with factory.create_context(session_mode=JMSContext.CLIENT_ACKNOWLEDGE) as context:
        context.create_producer().send(ORDERS, "text")
        consumer = context.create_consumer(ORDERS)
        with pytest.raises(MessageFormatRuntimeException):
            consumer.receive_body(bytes, 1000)
        assert consumer.receive(50) is None
        context.acknowledge()
        context.recover()
        assert consumer.receive(50) is None


def test_receive_body_refuses_stream_and_bodiless_messages(context: JMSContext) -> None:
    stream = StreamMessage()
    stream.write_int(1)
    context.create_producer().send(ORDERS, stream).send(ORDERS, context.create_message())
    consumer = context.create_consumer(ORDERS)
    with pytest.raises(MessageFormatRuntimeException, match="StreamMessage"):
        consumer.receive_body(object, 1000)


def test_the_producer_is_fluent_and_applies_its_properties_and_headers(context: JMSContext) -> None:
    reply_to = Queue("replies")
    producer = (
        context.create_producer()
        .set_property("region", "eu")
        .set_property("weight", 3000)
        .set_jms_type("order")
        .set_jms_correlation_id("c-1")
        .set_jms_reply_to(reply_to)
        .set_priority(7)
        .set_delivery_mode(DeliveryMode.NON_PERSISTENT)
        .set_time_to_live(60_000)
    )
    assert producer.get_property_names() == ["region", "weight"]
    assert producer.get_int_property("weight") == 3000
    producer.send(ORDERS, "x")
    received = context.create_consumer(ORDERS).receive(1000)
    assert received.get_string_property("region") == "eu"
    assert received.get_int_property("weight") == 3000
    assert (received.get_jms_type(), received.get_jms_correlation_id()) == ("order", "c-1")
    assert received.get_jms_reply_to() == reply_to
    assert received.get_jms_priority() == 7
    assert received.get_jms_delivery_mode() == DeliveryMode.NON_PERSISTENT
    assert received.get_jms_expiration() > 0


def test_auto_start_and_its_opt_out(factory: ConnectionFactory) -> None:
    with factory.create_context() as context:
        context.set_auto_start(False)
        context.create_producer().send(ORDERS, "x")
        consumer = context.create_consumer(ORDERS)
        assert consumer.receive(50) is None
        context.start()
        assert consumer.receive_body(str, 1000) == "x"


def test_a_transacted_context(factory: ConnectionFactory) -> None:
    with factory.create_context(session_mode=JMSContext.SESSION_TRANSACTED) as context:
        assert context.get_transacted()
        observer = context.create_context(JMSContext.AUTO_ACKNOWLEDGE)
        watch = observer.create_consumer(ORDERS)
        context.create_producer().send(ORDERS, "a")
        context.rollback()
        context.create_producer().send(ORDERS, "b")
        assert watch.receive(50) is None
        context.commit()
        assert watch.receive_body(str, 1000) == "b"
        observer.close()


def test_contexts_share_a_connection_until_the_last_closes(factory: ConnectionFactory) -> None:
    first = factory.create_context()
    second = first.create_context(JMSContext.CLIENT_ACKNOWLEDGE)
    first.close()
    second.create_producer().send(ORDERS, "still open")
    assert second.create_consumer(ORDERS).receive_body(str, 1000) == "still open"
    second.close()
    with pytest.raises(IllegalStateRuntimeException, match="JMSContext is closed"):
        second.create_producer()


def test_client_id_and_durable_consumers_through_a_context(factory: ConnectionFactory) -> None:
    news = Topic("news")
    with factory.create_context() as context:
        context.set_client_id("reader")
        context.create_durable_consumer(news, "feed").close()
        context.create_producer().send(news, "while away")
        assert context.create_durable_consumer(news, "feed").receive_body(str, 1000) == "while away"
        shared = context.create_shared_consumer(news, "workers")
        durable_shared = context.create_shared_durable_consumer(news, "ledger")
        context.create_producer().send(news, "n")
        assert shared.receive_body(str, 1000) == durable_shared.receive_body(str, 1000) == "n"
        durable_shared.close()
        context.unsubscribe("ledger")


def test_the_context_browses_and_makes_temporary_queues(context: JMSContext) -> None:
    temporary = context.create_temporary_queue()
    context.create_producer().send(temporary, "t")
    assert [m.get_text() for m in context.create_browser(temporary)] == ["t"]
    assert context.create_queue("q") == Queue("q")
    assert context.get_session_mode() == JMSContext.AUTO_ACKNOWLEDGE


def test_an_unknown_session_mode_is_refused(factory: ConnectionFactory) -> None:
    with pytest.raises(JMSRuntimeException, match="session_mode must be"):
        factory.create_context(session_mode=9)
