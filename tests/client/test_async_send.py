"""Asynchronous send (JMS 2.0 ``CompletionListener``), on memory:// and, through
tests/client_over_stomp, on stomp:// (where sends are in flight together, answered by RECEIPTs).
The rules quoted are the Jakarta Messaging 3.1 javadoc of ``MessageProducer.send(Message,
CompletionListener)`` and ``CompletionListener``."""

from __future__ import annotations

import threading
import time

import pytest

from jms import CompletionListener
from jms.broker import Broker, DestinationPolicy
from jms.client import Connection, ConnectionFactory, Session
from jms.errors import IllegalStateException, ResourceAllocationException
from jms.message import DeliveryMode, Message, Queue, TextMessage

JOBS = Queue("jobs")


class Recorder:
    """A CompletionListener that records what it is told, in order, and on which thread."""

    def __init__(self, expected: int, pause_s: float = 0.0) -> None:
        self.events: list[tuple[str, Message, Exception | None]] = []
        self.threads: set[threading.Thread] = set()
        self.pause_s = pause_s
        self.expected = expected
        self.all_told = threading.Event()

    def on_completion(self, message: Message) -> None:
        self._record("completion", message, None)

    def on_exception(self, message: Message, exception: Exception) -> None:
        self._record("exception", message, exception)

    def _record(self, kind: str, message: Message, error: Exception | None) -> None:
        time.sleep(self.pause_s)
        self.threads.add(threading.current_thread())
        self.events.append((kind, message, error))
        if len(self.events) >= self.expected:
            self.all_told.set()


class DepthProbe:
    """A CompletionListener noting how many messages the broker's queue holds when it runs."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.depths: list[int] = []

    def on_completion(self, message: Message) -> None:
        self.depths.append({s.name: s.depth for s in self.broker.stats()}["queue://jobs"])

    def on_exception(self, message: Message, exception: Exception) -> None:
        raise AssertionError(f"the send failed: {exception}")


@pytest.mark.parametrize("mode", [DeliveryMode.PERSISTENT, DeliveryMode.NON_PERSISTENT])
def test_each_message_completes_once_in_send_order_after_the_broker_has_it(
    connection: Connection, broker: Broker, mode: int
) -> None:
    # "the JMS provider will call the CompletionListener's onCompletion method [...] once the
    # send has been completed"; "callbacks for [...] a given MessageProducer will be performed
    # in the same order as the corresponding calls to the send method".
    sent = [TextMessage(str(n)) for n in range(200)]
    recorder = Recorder(len(sent))
    probe = DepthProbe(broker)
    producer = connection.create_session().create_producer(JOBS)
    producer.send(TextMessage("first"), delivery_mode=mode, completion_listener=probe)
    for message in sent:
        producer.send(message, delivery_mode=mode, completion_listener=recorder)
    assert recorder.all_told.wait(10)
    assert [(kind, message) for kind, message, _ in recorder.events] == [
        ("completion", message) for message in sent
    ]
    assert len(probe.depths) == 1 and probe.depths[0] >= 1  # the broker had it by then
    assert threading.main_thread() not in recorder.threads
    consumer = connection.create_session().create_consumer(JOBS)
    received = [consumer.receive(1000) for _ in range(201)]
    assert [m.get_text() for m in received] == ["first", *(str(n) for n in range(200))]  # type: ignore[union-attr]


def test_a_refused_send_calls_on_exception(connection: Connection, broker: Broker) -> None:
    # "If an exception is encountered which cannot be thrown in the thread that is calling the
    # send method then the JMS provider must call the CompletionListener's onException method."
    broker.set_policy("queue://jobs", DestinationPolicy(max_backlog=2))
    recorder = Recorder(3)
    producer = connection.create_session().create_producer(JOBS)
    messages = [TextMessage(str(n)) for n in range(3)]
    for message in messages:
        producer.send(message, completion_listener=recorder)
    assert recorder.all_told.wait(10)
    assert [kind for kind, _, _ in recorder.events] == ["completion", "completion", "exception"]
    _, message, error = recorder.events[2]
    assert message is messages[2] and isinstance(error, ResourceAllocationException)
    assert "max_backlog is 2" in str(error)


def test_what_is_wrong_with_the_call_raises_in_the_caller(connection: Connection) -> None:
    # "If an exception is encountered during the call to the send method then an appropriate
    # exception should be thrown in the thread that is calling the send method. In this case the
    # JMS provider must not invoke the CompletionListener's onCompletion or onException method."
    recorder = Recorder(1)
    anonymous = connection.create_session().create_producer(None)
    with pytest.raises(Exception, match="created without a destination"):
        anonymous.send(TextMessage("x"), completion_listener=recorder)
    with pytest.raises(TypeError, match="on_completion"):
        anonymous.send(JOBS, TextMessage("x"), completion_listener=print)  # type: ignore[arg-type]
    anonymous.close()
    assert recorder.events == []


def test_close_and_commit_wait_for_every_completion_listener(connection: Connection) -> None:
    # "close [...] must block until any incomplete send operations have been completed and all
    # CompletionListener callbacks have returned"; the same holds for commit.
    session = connection.create_session(True, Session.SESSION_TRANSACTED)
    producer = session.create_producer(JOBS)
    recorder = Recorder(5, pause_s=0.05)
    for n in range(5):
        producer.send(TextMessage(str(n)), completion_listener=recorder)
    session.commit()
    assert len(recorder.events) == 5
    for n in range(5):
        producer.send(TextMessage(str(n)), completion_listener=recorder)
    producer.close()
    assert len(recorder.events) == 10
    session.close()


def test_a_listener_closing_or_committing_its_own_session_is_refused(
    connection: Connection,
) -> None:
    # "A CompletionListener callback method must not call close on its own Connection, Session or
    # MessageProducer or call commit or rollback on its own Session. Doing so will cause the
    # close, commit or rollback to throw an IllegalStateException."
    session = connection.create_session(True, Session.SESSION_TRANSACTED)
    producer = session.create_producer(JOBS)
    refused: list[Exception] = []
    done = threading.Event()

    class Meddler:
        def on_completion(self, message: Message) -> None:
            for call in (producer.close, session.commit, session.rollback, session.close):
                try:
                    call()
                except IllegalStateException as error:
                    refused.append(error)
            try:
                connection.close()
            except IllegalStateException as error:
                refused.append(error)
            done.set()

        def on_exception(self, message: Message, exception: Exception) -> None:
            done.set()

    assert isinstance(Meddler(), CompletionListener)
    producer.send(TextMessage("x"), completion_listener=Meddler())
    assert done.wait(5)
    assert len(refused) == 5
    assert all("must not call" in str(error) for error in refused)
    session.commit()  # from the application's thread it works, and the session is still open
    producer.close()


def test_jms_producer_set_async(factory: ConnectionFactory) -> None:
    # JMSProducer.setAsync: "Specifies whether subsequent calls to send on this JMSProducer
    # object should be synchronous or asynchronous"; null makes them synchronous again.
    recorder = Recorder(2)
    with factory.create_context() as context:
        producer = context.create_producer()
        assert producer.get_async() is None
        assert producer.set_async(recorder) is producer and producer.get_async() is recorder
        producer.send(JOBS, "a").send(JOBS, {"b": 1})
        assert recorder.all_told.wait(5)
        producer.set_async(None).send(JOBS, "c")
        assert len(recorder.events) == 2
        with pytest.raises(TypeError, match="set_async"):
            producer.set_async(object())  # type: ignore[arg-type]
        consumer = context.create_consumer(JOBS)
        assert [consumer.receive_body(object, 1000) for _ in range(3)] == ["a", {"b": 1}, "c"]


def test_changing_the_message_before_its_completion_changes_nothing_sent(
    connection: Connection,
) -> None:
    # JMS: "the application must not attempt to read or modify the message until the
    # CompletionListener has been invoked" — jms's choice (docs/provider.md): doing so is
    # harmless, as the send copies or encodes the message before it returns.
    recorder = Recorder(1, pause_s=0.05)
    message = TextMessage("as sent")
    connection.create_session().create_producer(JOBS).send(message, completion_listener=recorder)
    message.set_text("changed afterwards")
    message.set_string_property("late", "yes")
    assert recorder.all_told.wait(5)
    received = connection.create_session().create_consumer(JOBS).receive(1000)
    assert received.get_text() == "as sent"  # type: ignore[union-attr]
    assert received.get_string_property("late") is None  # type: ignore[union-attr]
