"""The JMS getters and factory methods: each returns what was set or what JMS says it returns."""

from __future__ import annotations

import datetime

from jms.client import Connection, ConnectionFactory, JMSContext, Session
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


def test_session_message_factories(session: Session) -> None:
    assert session.create_text_message("t").get_text() == "t"
    assert isinstance(session.create_bytes_message(), BytesMessage)
    assert isinstance(session.create_map_message(), MapMessage)
    assert isinstance(session.create_stream_message(), StreamMessage)
    when = datetime.date(2024, 1, 2)
    assert session.create_object_message(when).get_object() == when
    assert session.create_topic("t") == Topic("t")
    assert session.create_queue("q") == Queue("q")


def test_producer_settings_read_back(session: Session) -> None:
    producer = session.create_producer(Queue("q"))
    assert producer.get_destination() == Queue("q")
    assert (producer.get_delivery_mode(), producer.get_priority()) == (DeliveryMode.PERSISTENT, 4)
    assert (producer.get_time_to_live(), producer.get_delivery_delay()) == (0, 0)
    producer.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
    producer.set_time_to_live(5)
    producer.set_delivery_delay(6)
    producer.set_disable_message_id(True)
    producer.set_disable_message_timestamp(True)
    assert producer.get_delivery_mode() == DeliveryMode.NON_PERSISTENT
    assert (producer.get_time_to_live(), producer.get_delivery_delay()) == (5, 6)
    assert producer.get_disable_message_id() and producer.get_disable_message_timestamp()
    assert session.create_producer(None).get_destination() is None


def test_consumer_and_browser_getters(session: Session) -> None:
    consumer = session.create_consumer(Queue("q"), "a = 1")
    assert consumer.get_message_listener() is None
    assert consumer.get_message_selector() == "a = 1"
    listener = print
    consumer.set_message_listener(listener)
    assert consumer.get_message_listener() is listener
    assert session.create_consumer(Queue("q"), "").get_message_selector() is None
    browser = session.create_browser(Queue("q"))
    assert (browser.get_queue(), browser.get_message_selector()) == (Queue("q"), None)


def test_connection_getters(connection: Connection) -> None:
    assert connection.get_exception_listener() is None
    connection.set_exception_listener(print)
    assert connection.get_exception_listener() is print
    meta = connection.get_meta_data()
    assert (meta.get_jms_version(), meta.get_jms_minor_version()) == ("3.1", 1)
    assert meta.get_provider_version()


def test_context_getters_and_factories(factory: ConnectionFactory) -> None:
    with factory.create_context() as context:
        assert context.get_auto_start()
        assert context.get_exception_listener() is None
        assert context.get_client_id() is None
        assert context.create_text_message("t").get_text() == "t"
        assert isinstance(context.create_bytes_message(), BytesMessage)
        assert isinstance(context.create_map_message(), MapMessage)
        assert isinstance(context.create_stream_message(), StreamMessage)
        assert isinstance(context.create_object_message(1), ObjectMessage)
        assert context.create_topic("t") == Topic("t")
        assert context.get_meta_data().get_jms_major_version() == 3
        consumer = context.create_consumer(Queue("q"), "a = 1")
        assert consumer.get_message_selector() == "a = 1"
        assert consumer.get_message_listener() is None
        assert context.get_session_mode() == JMSContext.AUTO_ACKNOWLEDGE


def test_jms_producer_settings_read_back(factory: ConnectionFactory) -> None:
    with factory.create_context() as context:
        producer = (
            context.create_producer()
            .set_delivery_mode(DeliveryMode.NON_PERSISTENT)
            .set_time_to_live(60_000)
            .set_delivery_delay(8)
            .set_disable_message_id(True)
            .set_disable_message_timestamp(True)
            .set_property("b", True)
            .set_property("n", 2**40)
            .set_jms_correlation_id_as_bytes(b"\x01")
        )
        assert producer.get_delivery_mode() == DeliveryMode.NON_PERSISTENT
        assert (producer.get_time_to_live(), producer.get_delivery_delay()) == (60_000, 8)
        assert producer.get_disable_message_id() and producer.get_disable_message_timestamp()
        assert producer.get_boolean_property("b") is True
        assert producer.get_long_property("n") == 2**40
        assert producer.get_string_property("n") == str(2**40)
        assert producer.get_jms_correlation_id_as_bytes() == b"\x01"
        producer.send(Queue("q"), "x")
        received = context.create_consumer(Queue("q")).receive(1000)
        assert received.get_jms_correlation_id_as_bytes() == b"\x01"
        assert received.get_jms_message_id() is None
        assert producer.clear_properties().get_property_names() == []


def test_object_message_factory_uses_the_allowed_classes(url: str) -> None:
    factory = ConnectionFactory(url, allowed_classes=[TextMessage])
    with factory.create_connection() as connection:
        message = connection.create_session().create_object_message()
        assert "jms.message.text.TextMessage" in message.get_allowed_classes()
