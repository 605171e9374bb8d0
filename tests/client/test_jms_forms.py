"""Smaller JMS API forms (issue 13 §5), each as its javadoc gives it; memory:// here and stomp://
through tests/client_over_stomp."""

from __future__ import annotations

import re

import pytest

from jms.client import Connection, ConnectionFactory, JMSContext, Requestor, Session
from jms.errors import IllegalStateException, InvalidDestinationException, JMSException
from jms.message import Queue, TextMessage, Topic

NEWS = Topic("news")


@pytest.mark.parametrize(
    "mode",
    [
        JMSContext.AUTO_ACKNOWLEDGE,
        JMSContext.CLIENT_ACKNOWLEDGE,
        JMSContext.DUPS_OK_ACKNOWLEDGE,
        JMSContext.SESSION_TRANSACTED,
    ],
)
def test_create_context_with_one_int_is_the_session_mode(
    factory: ConnectionFactory, mode: int
) -> None:
    # ConnectionFactory.createContext(int sessionMode): "Creates a JMSContext with the default
    # user identity and the specified session mode."
    with factory.create_context(mode) as context:
        assert context.get_session_mode() == mode
    with pytest.raises(TypeError, match="one int is the session mode"):
        factory.create_context(JMSContext.CLIENT_ACKNOWLEDGE, "password")


def test_a_non_transacted_session_takes_only_acknowledgement_modes(connection: Connection) -> None:
    # Connection.createSession(boolean transacted, int acknowledgeMode): "If transacted is set to
    # false then the session will be non-transacted. [...] The permitted values are
    # Session.CLIENT_ACKNOWLEDGE, Session.AUTO_ACKNOWLEDGE and Session.DUPS_OK_ACKNOWLEDGE."
    with pytest.raises(JMSException, match="non-transacted session takes"):
        connection.create_session(False, Session.SESSION_TRANSACTED)
    # "If transacted is set to true then the session will use a local transaction [...] The
    # argument acknowledgeMode is ignored."
    assert connection.create_session(True, Session.CLIENT_ACKNOWLEDGE).get_transacted()
    assert connection.create_session(Session.SESSION_TRANSACTED).get_transacted()


def test_provider_major_and_minor_versions_are_those_of_the_provider_version(
    connection: Connection,
) -> None:
    # ConnectionMetaData.getProviderMajorVersion / getProviderMinorVersion.
    meta = connection.get_meta_data()
    numbers = [int(part) for part in re.findall(r"\d+", meta.get_provider_version())] + [0, 0]
    assert meta.get_provider_major_version() == numbers[0]
    assert meta.get_provider_minor_version() == numbers[1]


def test_create_durable_subscriber_in_both_forms(factory: ConnectionFactory) -> None:
    # Session.createDurableSubscriber(Topic, String) and (Topic, String, String, boolean):
    # "Creates an unshared durable subscription on the specified topic (if one does not already
    # exist)".
    with factory.create_connection() as connection:
        connection.set_client_id("subscriber")
        session = connection.create_session()
        session.create_durable_subscriber(NEWS, "all").close()
        session.create_durable_subscriber(NEWS, "red", "color = 'red'", False).close()
        publisher = session.create_producer(NEWS)
        for color in ("red", "blue"):
            message = TextMessage(color)
            message.set_string_property("color", color)
            publisher.send(message)
        connection.start()
        everything = session.create_durable_subscriber(NEWS, "all")
        assert [everything.receive(1000).get_text() for _ in range(2)] == ["red", "blue"]  # type: ignore[union-attr]
        red = session.create_durable_subscriber(NEWS, "red", "color = 'red'", False)
        assert red.get_message_selector() == "color = 'red'"
        assert red.receive(1000).get_text() == "red"  # type: ignore[union-attr]
        assert red.receive(50) is None


def test_closing_a_requestor_closes_its_session(connection: Connection) -> None:
    # QueueRequestor.close(): "Note that this method closes the QueueSession object passed to the
    # QueueRequestor constructor."
    session = connection.create_session()
    Requestor(session, Queue("service")).close()
    with pytest.raises(IllegalStateException, match="Session is closed"):
        session.create_producer(None)


def test_a_requestor_needs_a_destination(connection: Connection) -> None:
    # QueueRequestor(QueueSession, Queue): InvalidDestinationException "if an invalid queue is
    # specified".
    with pytest.raises(InvalidDestinationException, match="Queue or a Topic; got None"):
        Requestor(connection.create_session(), None)  # type: ignore[arg-type]


@pytest.mark.parametrize("blank", ["", "   ", " \t\r\n\f"])
def test_a_blank_selector_is_no_selector(connection: Connection, blank: str) -> None:
    # "If the value of a message selector is an empty string, the value is treated as a null and
    # indicates that there is no message selector for the message consumer." White space alone
    # parses to no selector as well, so it reads back as None too.
    session = connection.create_session()
    assert session.create_consumer(Queue("q"), blank).get_message_selector() is None
    assert session.create_browser(Queue("q"), blank).get_message_selector() is None
