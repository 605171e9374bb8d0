"""The JMS 2.0 simplified API: ``JMSContext`` (a connection and one session in one object),
``JMSProducer`` (fluent, sends bodies as well as messages) and ``JMSConsumer`` (``receive_body``).

These are thin layers over ``Connection``, ``Session``, ``MessageProducer`` and
``MessageConsumer`` — the same objects, the same semantics, the same exceptions (the JMS 2.0
``*RuntimeException`` names are aliases); they must never add semantics of their own. A context's session is created when first needed, so
``set_client_id`` still works right after ``create_context``; creating a consumer starts the
connection unless ``set_auto_start(False)``. Contexts made with ``create_context`` share their
parent's connection, which closes with the last of them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from typing import Any, Final

from jms.client.browser import QueueBrowser
from jms.client.completion import CompletionListener, check_completion_listener
from jms.client.connection import Connection, ConnectionMetaData, ExceptionListener
from jms.client.consumer import MessageConsumer, MessageListener
from jms.client.producer import (
    MessageProducer,
    check_delivery_mode,
    check_milliseconds,
    check_priority,
)
from jms.client.session import Session
from jms.errors import IllegalStateException, JMSException, MessageFormatException
from jms.message import (
    BytesMessage,
    DeliveryMode,
    Destination,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    StreamMessage,
    TemporaryQueue,
    TemporaryTopic,
    TextMessage,
    Topic,
)

__all__ = ["JMSConsumer", "JMSContext", "JMSProducer"]


class _SharedConnection:
    """A connection and how many open contexts use it."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._users = 1
        self._lock = threading.Lock()

    def add_user(self) -> None:
        with self._lock:
            self._users += 1

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            last = self._users == 0
        if last:
            self.connection.close()


class JMSContext:
    """A connection plus one session (JMS 2.0). Created by ``ConnectionFactory.create_context``."""

    AUTO_ACKNOWLEDGE: Final = Session.AUTO_ACKNOWLEDGE
    CLIENT_ACKNOWLEDGE: Final = Session.CLIENT_ACKNOWLEDGE
    DUPS_OK_ACKNOWLEDGE: Final = Session.DUPS_OK_ACKNOWLEDGE
    SESSION_TRANSACTED: Final = Session.SESSION_TRANSACTED

    def __init__(self, shared: _SharedConnection, session_mode: int) -> None:
        if type(session_mode) is not int or session_mode not in (0, 1, 2, 3):
            raise JMSException(
                "session_mode must be JMSContext.AUTO_ACKNOWLEDGE (1), CLIENT_ACKNOWLEDGE (2), "
                f"DUPS_OK_ACKNOWLEDGE (3) or SESSION_TRANSACTED (0); got {session_mode!r}"
            )
        self._shared = shared
        self._connection = shared.connection
        self._mode = session_mode
        self._session: Session | None = None
        self._auto_start = True
        self._closed = False
        self._lock = threading.Lock()

    @classmethod
    def _open(cls, connection: Connection, session_mode: int) -> JMSContext:
        return cls(_SharedConnection(connection), session_mode)

    def __repr__(self) -> str:
        return f"<JMSContext mode={self._mode} on {self._connection!r}>"

    def __enter__(self) -> JMSContext:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the connection ------------------------------------------------------------------------

    def create_context(self, session_mode: int) -> JMSContext:
        """Another context on the same connection, with its own session."""
        self._check_open()
        context = JMSContext(self._shared, session_mode)
        self._shared.add_user()
        return context

    def get_client_id(self) -> str | None:
        self._check_open()
        return self._connection.get_client_id()

    def set_client_id(self, client_id: str) -> None:
        self._check_open()
        self._connection.set_client_id(client_id)

    def get_meta_data(self) -> ConnectionMetaData:
        self._check_open()
        return self._connection.get_meta_data()

    def get_exception_listener(self) -> ExceptionListener | None:
        self._check_open()
        return self._connection.get_exception_listener()

    def set_exception_listener(self, listener: ExceptionListener | None) -> None:
        self._check_open()
        self._connection.set_exception_listener(listener)

    def start(self) -> None:
        self._check_open()
        self._connection.start()

    def stop(self) -> None:
        self._check_open()
        self._connection.stop()

    def set_auto_start(self, auto_start: bool) -> None:
        self._check_open()
        self._auto_start = bool(auto_start)

    def get_auto_start(self) -> bool:
        self._check_open()
        return self._auto_start

    def close(self) -> None:
        """Close this context's session, and the connection if no other context uses it."""
        if self._closed:
            return
        if self._session is not None:
            self._session.close()
        self._closed = True
        self._shared.release()

    # -- the session ---------------------------------------------------------------------------

    def get_session_mode(self) -> int:
        self._check_open()
        return self._mode

    def get_transacted(self) -> bool:
        self._check_open()
        return self._mode == Session.SESSION_TRANSACTED

    def commit(self) -> None:
        self._session_for_use().commit()

    def rollback(self) -> None:
        self._session_for_use().rollback()

    def recover(self) -> None:
        self._session_for_use().recover()

    def acknowledge(self) -> None:
        """In CLIENT_ACKNOWLEDGE mode, acknowledge every message this context consumed."""
        self._session_for_use()._acknowledge_all()

    def unsubscribe(self, name: str) -> None:
        self._session_for_use().unsubscribe(name)

    def create_message(self) -> Message:
        return self._session_for_use().create_message()

    def create_text_message(self, text: str | None = None) -> TextMessage:
        return self._session_for_use().create_text_message(text)

    def create_bytes_message(self) -> BytesMessage:
        return self._session_for_use().create_bytes_message()

    def create_map_message(self) -> MapMessage:
        return self._session_for_use().create_map_message()

    def create_stream_message(self) -> StreamMessage:
        return self._session_for_use().create_stream_message()

    def create_object_message(self, obj: object = None) -> ObjectMessage:
        return self._session_for_use().create_object_message(obj)

    def create_queue(self, name: str) -> Queue:
        self._check_open()
        return Queue(name)

    def create_topic(self, name: str) -> Topic:
        self._check_open()
        return Topic(name)

    def create_temporary_queue(self) -> TemporaryQueue:
        return self._session_for_use().create_temporary_queue()

    def create_temporary_topic(self) -> TemporaryTopic:
        return self._session_for_use().create_temporary_topic()

    def create_producer(self) -> JMSProducer:
        return JMSProducer(self, self._session_for_use().create_producer(None))

    def create_consumer(
        self, destination: Destination, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        consumer = self._session_for_use().create_consumer(destination, message_selector, no_local)
        return self._started(consumer)

    def create_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        session = self._session_for_use()
        return self._started(
            session.create_durable_consumer(topic, name, message_selector, no_local)
        )

    def create_shared_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        session = self._session_for_use()
        return self._started(session.create_shared_consumer(topic, name, message_selector))

    def create_shared_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        session = self._session_for_use()
        return self._started(session.create_shared_durable_consumer(topic, name, message_selector))

    def create_browser(self, queue: Queue, message_selector: str | None = None) -> QueueBrowser:
        return self._session_for_use().create_browser(queue, message_selector)

    # -- internals -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("this JMSContext is closed")

    def _session_for_use(self) -> Session:
        self._check_open()
        with self._lock:
            if self._session is None:
                self._session = self._connection.create_session(self._mode)
            return self._session

    def _started(self, consumer: MessageConsumer) -> JMSConsumer:
        if self._auto_start:
            self._connection.start()
        return JMSConsumer(consumer)


class JMSProducer:
    """A fluent producer: setters return the producer, ``send(destination, body)`` sends a
    ``Message`` as is or wraps a body — ``str`` or None: TextMessage, ``bytes``: BytesMessage,
    ``dict``: MapMessage, anything else: ObjectMessage. Properties and header values set here
    go on every message it sends."""

    def __init__(self, context: JMSContext, producer: MessageProducer) -> None:
        self._context = context
        self._producer = producer
        self._delivery_mode: int = DeliveryMode.PERSISTENT
        self._priority = Message.DEFAULT_PRIORITY
        self._time_to_live = Message.DEFAULT_TIME_TO_LIVE
        # The properties live in a Message so that they follow exactly the rules of properties.
        self._properties = Message()
        self._correlation_id: str | bytes | None = None
        self._type: str | None = None
        self._reply_to: Destination | None = None
        self._async: CompletionListener | None = None

    def __repr__(self) -> str:
        return "<JMSProducer>"

    def send(self, destination: Destination, body: Any) -> JMSProducer:
        self._context._check_open()
        message = self._message_for(body)
        for name, value in self._properties.iter_properties():
            message.set_object_property(name, value)
        if isinstance(self._correlation_id, bytes):
            message.set_jms_correlation_id_as_bytes(self._correlation_id)
        elif self._correlation_id is not None:
            message.set_jms_correlation_id(self._correlation_id)
        if self._type is not None:
            message.set_jms_type(self._type)
        if self._reply_to is not None:
            message.set_jms_reply_to(self._reply_to)
        self._producer.send(
            destination,
            message,
            delivery_mode=self._delivery_mode,
            priority=self._priority,
            time_to_live=self._time_to_live,
            completion_listener=self._async,
        )
        return self

    def set_async(self, completion_listener: CompletionListener | None) -> JMSProducer:
        """Make later sends asynchronous, reporting to ``completion_listener`` (see
        ``MessageProducer.send``); None makes them synchronous again."""
        self._async = check_completion_listener(completion_listener, "set_async")
        return self

    def get_async(self) -> CompletionListener | None:
        return self._async

    def _message_for(self, body: Any) -> Message:
        if isinstance(body, Message):
            return body
        if body is None or isinstance(body, str):
            return TextMessage(body)
        if isinstance(body, bytes | bytearray):
            message = BytesMessage()
            message.write_bytes(body)
            return message
        if isinstance(body, dict):
            map_message = MapMessage()
            for name, value in body.items():
                map_message.set_object(name, value)
            return map_message
        return self._context.create_object_message(body)

    # -- delivery options ----------------------------------------------------------------------

    def set_delivery_mode(self, delivery_mode: int) -> JMSProducer:
        self._delivery_mode = check_delivery_mode(delivery_mode)
        return self

    def get_delivery_mode(self) -> int:
        return self._delivery_mode

    def set_priority(self, priority: int) -> JMSProducer:
        self._priority = check_priority(priority)
        return self

    def get_priority(self) -> int:
        return self._priority

    def set_time_to_live(self, time_to_live: int) -> JMSProducer:
        self._time_to_live = check_milliseconds(time_to_live, "time to live")
        return self

    def get_time_to_live(self) -> int:
        return self._time_to_live

    def set_delivery_delay(self, delivery_delay: int) -> JMSProducer:
        self._producer.set_delivery_delay(delivery_delay)
        return self

    def get_delivery_delay(self) -> int:
        return self._producer.get_delivery_delay()

    def set_disable_message_id(self, value: bool) -> JMSProducer:
        self._producer.set_disable_message_id(value)
        return self

    def get_disable_message_id(self) -> bool:
        return self._producer.get_disable_message_id()

    def set_disable_message_timestamp(self, value: bool) -> JMSProducer:
        self._producer.set_disable_message_timestamp(value)
        return self

    def get_disable_message_timestamp(self) -> bool:
        return self._producer.get_disable_message_timestamp()

    # -- headers -------------------------------------------------------------------------------

    def set_jms_correlation_id(self, correlation_id: str | None) -> JMSProducer:
        if correlation_id is not None and not isinstance(correlation_id, str):
            raise TypeError(f"JMSCorrelationID is a str or None; got {correlation_id!r}")
        self._correlation_id = correlation_id
        return self

    def get_jms_correlation_id(self) -> str | None:
        value = self._correlation_id
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else value

    def set_jms_correlation_id_as_bytes(self, correlation_id: bytes | bytearray) -> JMSProducer:
        self._correlation_id = bytes(correlation_id)
        return self

    def get_jms_correlation_id_as_bytes(self) -> bytes | None:
        value = self._correlation_id
        return value.encode("utf-8") if isinstance(value, str) else value

    def set_jms_type(self, jms_type: str | None) -> JMSProducer:
        self._type = jms_type
        return self

    def get_jms_type(self) -> str | None:
        return self._type

    def set_jms_reply_to(self, reply_to: Destination | None) -> JMSProducer:
        self._reply_to = reply_to
        return self

    def get_jms_reply_to(self) -> Destination | None:
        return self._reply_to

    # -- properties ----------------------------------------------------------------------------

    def set_property(self, name: str, value: object) -> JMSProducer:
        """Set a property for every message sent (typed as ``set_object_property`` types it)."""
        self._properties.set_object_property(name, value)
        return self

    def clear_properties(self) -> JMSProducer:
        self._properties.clear_properties()
        return self

    def property_exists(self, name: str) -> bool:
        return self._properties.property_exists(name)

    def get_property_names(self) -> list[str]:
        return self._properties.get_property_names()

    def get_object_property(self, name: str) -> Any:
        return self._properties.get_object_property(name)

    def get_boolean_property(self, name: str) -> bool:
        return self._properties.get_boolean_property(name)

    def get_byte_property(self, name: str) -> int:
        return self._properties.get_byte_property(name)

    def get_short_property(self, name: str) -> int:
        return self._properties.get_short_property(name)

    def get_int_property(self, name: str) -> int:
        return self._properties.get_int_property(name)

    def get_long_property(self, name: str) -> int:
        return self._properties.get_long_property(name)

    def get_float_property(self, name: str) -> float:
        return self._properties.get_float_property(name)

    def get_double_property(self, name: str) -> float:
        return self._properties.get_double_property(name)

    def get_string_property(self, name: str) -> str | None:
        return self._properties.get_string_property(name)


def _body_of(cls: type, message: Message) -> Any:
    if isinstance(message, StreamMessage):
        raise MessageFormatException(
            "receive_body cannot return the body of a StreamMessage; use receive()"
        )
    if not message._has_body():
        # JMSConsumer.receiveBody: MessageFormatRuntimeException "if the message has no body" --
        # returning None would look like a timeout.
        raise MessageFormatException(
            f"receive_body cannot return a body: the next message, a {type(message).__name__}, "
            "has no body; use receive()"
        )
    return message.get_body(cls)


class JMSConsumer:
    """A consumer of the simplified API; ``receive_body(cls)`` returns the body itself."""

    def __init__(self, consumer: MessageConsumer) -> None:
        self._consumer = consumer

    def __repr__(self) -> str:
        return f"<JMSConsumer on {self._consumer._spec.destination}>"

    def __enter__(self) -> JMSConsumer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Message]:
        return iter(self._consumer)

    def receive(self, timeout_ms: int | None = None) -> Message | None:
        return self._consumer.receive(timeout_ms)

    def receive_no_wait(self) -> Message | None:
        return self._consumer.receive_no_wait()

    def receive_body(self, cls: type, timeout_ms: int | None = None) -> Any:
        """The next message's body as ``cls`` (``str``, ``bytes``, ``dict``, a class), or None
        on timeout. A body that cannot be given as ``cls``, a StreamMessage and a message with no
        body raise ``MessageFormatException``; in AUTO/DUPS_OK that message stays the next one,
        as if the call had not occurred (not redelivered, its delivery count unchanged); in
        CLIENT/transacted modes it counts as consumed."""
        deadline = MessageConsumer._deadline(timeout_ms)
        return self._consumer._receive(deadline, wait=True, transform=partial(_body_of, cls))

    def receive_body_no_wait(self, cls: type) -> Any:
        return self._consumer._receive(None, wait=False, transform=partial(_body_of, cls))

    def get_message_selector(self) -> str | None:
        return self._consumer.get_message_selector()

    def get_message_listener(self) -> MessageListener | None:
        return self._consumer.get_message_listener()

    def set_message_listener(self, listener: MessageListener | None) -> None:
        self._consumer.set_message_listener(listener)

    def close(self) -> None:
        self._consumer.close()
