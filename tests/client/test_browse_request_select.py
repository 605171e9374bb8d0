"""Queue browsers, the Requestor (request/reply), and selectors on consumers and subscriptions."""

from __future__ import annotations

import threading

import pytest

from jms.broker import DEFAULT_BROWSE_PAGE, Broker
from jms.client import Connection, ConnectionFactory, Requestor, Session
from jms.errors import IllegalStateException, InvalidDestinationException
from jms.message import Message, Queue, TextMessage, Topic

ORDERS = Queue("orders")
NEWS = Topic("news")


def _colored(text: str, color: str, weight: int = 0) -> TextMessage:
    message = TextMessage(text)
    message.set_string_property("color", color)
    message.set_int_property("weight", weight)
    return message


# -- browsing ----------------------------------------------------------------------------------


def test_browsing_shows_messages_in_order_without_consuming_them(
    session: Session, broker: Broker
) -> None:
    producer = session.create_producer(ORDERS)
    for text in ("a", "b", "c"):
        producer.send(TextMessage(text))
    browser = session.create_browser(ORDERS)
    assert [m.get_text() for m in browser] == ["a", "b", "c"]
    assert [m.get_text() for m in browser.get_enumeration()] == ["a", "b", "c"]
    assert {s.name: s.depth for s in broker.stats()}["queue://orders"] == 3
    assert session.create_consumer(ORDERS).receive(1000).get_text() == "a"


def test_browsing_filters_with_a_selector(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    producer.send(_colored("red", "red"))
    producer.send(_colored("blue", "blue"))
    browser = session.create_browser(ORDERS, "color = 'blue'")
    assert browser.get_message_selector() == "color = 'blue'"
    assert [m.get_text() for m in browser] == ["blue"]


def test_browsing_a_large_queue_pages_through_all_of_it(session: Session) -> None:
    producer = session.create_producer(ORDERS)
    count = DEFAULT_BROWSE_PAGE * 2 + 7
    for n in range(count):
        producer.send(TextMessage(str(n)))
    assert [m.get_text() for m in session.create_browser(ORDERS)] == [str(n) for n in range(count)]


def test_browsed_messages_are_read_only(session: Session) -> None:
    session.create_producer(ORDERS).send(TextMessage("x"))
    (message,) = list(session.create_browser(ORDERS))
    with pytest.raises(Exception, match="read-only"):
        message.set_string_property("p", "v")


def test_only_queues_can_be_browsed(session: Session) -> None:
    with pytest.raises(InvalidDestinationException, match="only a queue can be browsed"):
        session.create_browser(NEWS)  # type: ignore[arg-type]


def test_an_empty_or_unknown_queue_browses_empty(session: Session) -> None:
    assert list(session.create_browser(Queue("nothing-here"))) == []


# -- request / reply ---------------------------------------------------------------------------


def _serve(connection: Connection, service: Queue) -> None:
    session = connection.create_session()

    def answer(request: Message) -> None:
        Requestor.reply(session, request, TextMessage(f"re: {request.get_text()}"))  # type: ignore[attr-defined]

    session.create_consumer(service).set_message_listener(answer)


def test_a_request_gets_its_correlated_reply(connection: Connection) -> None:
    service = Queue("service")
    _serve(connection, service)
    with Requestor(connection.create_session(), service) as requestor:
        request = TextMessage("ping")
        reply = requestor.request(request, timeout_ms=2000)
        assert reply.get_text() == "re: ping"
        assert reply.get_jms_correlation_id() == request.get_jms_message_id()
        assert request.get_jms_reply_to() is not None and request.get_jms_reply_to().is_temporary
        assert requestor.request(TextMessage("again"), timeout_ms=2000).get_text() == "re: again"


def test_a_request_with_no_answer_times_out(connection: Connection) -> None:
    with Requestor(connection.create_session(), Queue("nobody")) as requestor:
        assert requestor.request(TextMessage("hello?"), timeout_ms=60) is None


def test_a_late_reply_to_an_earlier_request_is_dropped(connection: Connection) -> None:
    service = Queue("slow-service")
    pending: list[Message] = []
    arrived = threading.Event()
    session = connection.create_session()

    def hold(request: Message) -> None:
        pending.append(request)
        arrived.set()

    session.create_consumer(service).set_message_listener(hold)
    with Requestor(connection.create_session(), service) as requestor:
        assert requestor.request(TextMessage("first"), timeout_ms=50) is None
        assert arrived.wait(2)
        responder = connection.create_session()
        Requestor.reply(responder, pending[0], TextMessage("late answer to first"))
        arrived.clear()
        thread = threading.Thread(
            target=lambda: (
                arrived.wait(2),
                Requestor.reply(responder, pending[1], TextMessage("second")),
            )
        )
        thread.start()
        assert requestor.request(TextMessage("second"), timeout_ms=2000).get_text() == "second"
        thread.join(2)


def test_a_requestor_needs_a_non_transacted_session(connection: Connection) -> None:
    with pytest.raises(IllegalStateException, match="non-transacted session"):
        Requestor(connection.create_session(True), Queue("service"))


def test_replying_needs_a_reply_to(session: Session) -> None:
    with pytest.raises(InvalidDestinationException, match="no JMSReplyTo"):
        Requestor.reply(session, TextMessage("no address"), TextMessage("answer"))


# -- selectors ---------------------------------------------------------------------------------


def test_a_queue_consumer_gets_only_what_its_selector_matches(connection: Connection) -> None:
    session = connection.create_session()
    heavy = session.create_consumer(ORDERS, "weight > 100")
    producer = session.create_producer(ORDERS)
    producer.send(_colored("light", "red", 5))
    producer.send(_colored("heavy", "red", 500))
    assert heavy.receive(1000).get_text() == "heavy"
    assert heavy.receive(50) is None
    assert heavy.get_message_selector() == "weight > 100"
    rest = connection.create_session().create_consumer(ORDERS)
    assert rest.receive(1000).get_text() == "light"


def test_a_topic_subscriber_gets_only_what_its_selector_matches(session: Session) -> None:
    red = session.create_consumer(NEWS, "color = 'red'")
    everything = session.create_consumer(NEWS)
    producer = session.create_producer(NEWS)
    producer.send(_colored("r", "red"))
    producer.send(_colored("b", "blue"))
    assert [red.receive(1000).get_text(), red.receive(50)] == ["r", None]
    assert [everything.receive(1000).get_text() for _ in range(2)] == ["r", "b"]


def test_a_durable_subscription_keeps_only_what_its_selector_matches(
    factory: ConnectionFactory,
) -> None:
    with factory.create_connection() as connection:
        connection.set_client_id("reader")
        connection.start()
        session = connection.create_session()
        session.create_durable_consumer(NEWS, "red-news", "color = 'red'").close()
        producer = session.create_producer(NEWS)
        producer.send(_colored("r1", "red"))
        producer.send(_colored("b1", "blue"))
        producer.send(_colored("r2", "red"))
        consumer = session.create_durable_consumer(NEWS, "red-news", "color = 'red'")
        assert [consumer.receive(1000).get_text() for _ in range(2)] == ["r1", "r2"]
        assert consumer.receive(50) is None


def test_selectors_see_header_fields(session: Session) -> None:
    urgent = session.create_consumer(ORDERS, "JMSPriority > 6 AND JMSType = 'order'")
    producer = session.create_producer(ORDERS)
    normal = TextMessage("normal")
    normal.set_jms_type("order")
    producer.send(normal)
    important = TextMessage("important")
    important.set_jms_type("order")
    producer.send(important, priority=8)
    assert urgent.receive(1000).get_text() == "important"
    assert urgent.receive(50) is None


def test_a_browser_shows_delivered_but_unacknowledged_messages(connection: Connection) -> None:
    session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
    session.create_producer(ORDERS).send(TextMessage("held"))
    held = session.create_consumer(ORDERS).receive(1000)
    assert [m.get_text() for m in session.create_browser(ORDERS)] == ["held"]
    held.acknowledge()
    assert list(session.create_browser(ORDERS)) == []
