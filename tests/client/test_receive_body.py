"""``JMSConsumer.receive_body`` when the body cannot be returned, on memory://, embedded:// (and,
through tests/client_over_stomp, stomp://). The rules quoted are the Jakarta Messaging 3.1 javadoc
of ``JMSConsumer.receiveBody``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jms.broker import close_embedded_broker
from jms.client import ConnectionFactory, JMSContext
from jms.errors import MessageFormatRuntimeException
from jms.message import BytesMessage, MapMessage, Message, ObjectMessage, Queue, TextMessage

WORK = Queue("work")


@pytest.fixture(params=["memory", "embedded"], name="factory")
def _in_process_factory(
    request: pytest.FixtureRequest, url: str, tmp_path: Path
) -> Iterator[ConnectionFactory]:
    if request.param == "memory":
        yield ConnectionFactory(url)
        return
    address = f"embedded://{tmp_path / 'store'}"
    yield ConnectionFactory(address)
    close_embedded_broker(address)


AUTOMATIC_MODES = [
    pytest.param(JMSContext.AUTO_ACKNOWLEDGE, id="auto"),
    pytest.param(JMSContext.DUPS_OK_ACKNOWLEDGE, id="dups-ok"),
]


@pytest.mark.parametrize("mode", AUTOMATIC_MODES)
def test_a_failed_receive_body_is_as_if_it_had_not_occurred(
    factory: ConnectionFactory, mode: int
) -> None:
    # "the JMS provider will behave as if the unsuccessful call to receiveBody had not occurred.
    # The message will be delivered again before any subsequent messages. This is not considered
    # to be redelivery and does not cause the JMSRedelivered message header field to be set or
    # the JMSXDeliveryCount message property to be incremented."
    with factory.create_context(session_mode=mode) as context:
        producer = context.create_producer()
        for text in ("a", "b", "c"):
            producer.send(WORK, text)
        consumer = context.create_consumer(WORK)
        # More failed calls than any redelivery limit: nothing is dead-lettered.
        for _ in range(12):
            with pytest.raises(MessageFormatRuntimeException, match="cannot be assigned to bytes"):
                consumer.receive_body(bytes, 1000)
        first = consumer.receive(1000)
        assert first.get_text() == "a"  # type: ignore[union-attr]
        assert first.get_jms_redelivered() is False  # type: ignore[union-attr]
        assert first.get_int_property("JMSXDeliveryCount") == 1  # type: ignore[union-attr]
        assert [consumer.receive_body(str, 1000) for _ in range(2)] == ["b", "c"]
        assert consumer.receive_body_no_wait(str) is None


@pytest.mark.parametrize("mode", AUTOMATIC_MODES)
def test_the_message_a_failed_call_kept_is_there_for_receive_body_no_wait(
    factory: ConnectionFactory, mode: int
) -> None:
    # "The message will be delivered again before any subsequent messages": it is held, so even
    # a call that does not wait gets it.
    with factory.create_context(session_mode=mode) as context:
        context.create_producer().send(WORK, {"n": 1}).send(WORK, "after")
        consumer = context.create_consumer(WORK)
        with pytest.raises(MessageFormatRuntimeException, match="cannot be assigned to str"):
            consumer.receive_body(str, 1000)
        assert consumer.receive_body_no_wait(dict) == {"n": 1}
        assert consumer.receive_body(str, 1000) == "after"


def _bodiless() -> list[Message]:
    return [TextMessage(None), BytesMessage(), MapMessage(), ObjectMessage(None), Message()]


@pytest.mark.parametrize(
    "index", range(len(_bodiless())), ids=lambda i: type(_bodiless()[i]).__name__
)
def test_a_message_without_a_body_is_a_format_error_not_none(
    factory: ConnectionFactory, index: int
) -> None:
    # receiveBody throws MessageFormatRuntimeException "if the message has no body"; None would
    # mean "the timeout expired". In AUTO mode the message then stays the next one.
    with factory.create_context() as context:
        context.create_producer().send(WORK, _bodiless()[index])
        consumer = context.create_consumer(WORK)
        with pytest.raises(MessageFormatRuntimeException, match="has no body"):
            consumer.receive_body(object, 1000)
        kept = consumer.receive(1000)
        assert type(kept) is type(_bodiless()[index])
        assert kept.get_jms_redelivered() is False  # type: ignore[union-attr]
