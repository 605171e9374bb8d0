"""The STOMP side of range reads (docs/stomp.md, "Range reads"): ``/admin/last-sequence``,
``/admin/acknowledge-through`` (with a selector too) and ``/admin/first-not-due`` answered in their
RECEIPT, browse ranges with an end, permissions (browse to read, receive to consume), and what a
client without the jms extensions gets."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from jms.broker import Broker
from jms.broker.security import Security, hash_password
from jms.client import ConnectionFactory, Session
from jms.errors import JMSException
from jms.message import Queue, TextMessage
from tests.stomp.serving import RawClient, ServedBroker


def _fill(session: Session, queue: str, count: int) -> None:
    producer = session.create_producer(Queue(queue))
    for number in range(count):
        producer.send(session.create_text_message(f"m{number}"))


def test_a_plain_client_reads_the_answers_in_the_receipts(
    client: RawClient, broker: Broker
) -> None:
    connection = broker.connect()
    for _ in range(3):
        message = TextMessage("x")
        message.set_jms_destination(Queue("ledger"))
        broker.send(connection, message)
    client.send(
        "SEND", {"destination": "/admin/last-sequence", "target": "/queue/ledger", "receipt": "r1"}
    )
    answer = client.read()
    assert (answer.command, answer.header("jms-last-seq")) == ("RECEIPT", "3")
    client.send(
        "SEND",
        {
            "destination": "/admin/acknowledge-through",
            "target": "/queue/ledger",
            "jms-seq": "2",
            "receipt": "r2",
        },
    )
    answer = client.read()
    assert (answer.command, answer.header("jms-acknowledged")) == ("RECEIPT", "2")
    for start, acknowledged in (("4", "0"), ("3", "1")):  # only from jms-start-seq on
        client.send(
            "SEND",
            {
                "destination": "/admin/acknowledge-through",
                "target": "/queue/ledger",
                "jms-seq": "3",
                "jms-start-seq": start,
                "receipt": f"r-from-{start}",
            },
        )
        answer = client.read()
        assert (answer.command, answer.header("jms-acknowledged")) == ("RECEIPT", acknowledged)
    client.send("SEND", {"destination": "/admin/acknowledge-through", "target": "/queue/ledger"})
    error = client.read()
    assert error.command == "ERROR"
    assert "needs a jms-seq header" in (error.header("message") or "")
    assert client.closed_by_server()


def test_a_plain_client_commits_with_a_selector_and_asks_for_the_first_message_not_due(
    client: RawClient, broker: Broker
) -> None:
    connection = broker.connect()
    for number in range(4):
        message = TextMessage(f"m{number}")
        message.set_jms_destination(Queue("ledger"))
        message.set_int_property("n", number)
        if number == 3:
            message.set_jms_delivery_time(int(time.time() * 1000) + 60_000)
        broker.send(connection, message)
    client.send(
        "SEND",
        {
            "destination": "/admin/first-not-due",
            "target": "/queue/ledger",
            "jms-browse-start": "2",
            "receipt": "r1",
        },
    )
    answer = client.read()
    assert (answer.command, answer.header("jms-first-not-due")) == ("RECEIPT", "4")
    client.send(
        "SEND",
        {
            "destination": "/admin/first-not-due",
            "target": "/queue/ledger",
            "jms-browse-end": "3",
            "receipt": "r2",
        },
    )
    assert client.read().header("jms-first-not-due") == "0"
    client.send(
        "SEND",
        {
            "destination": "/admin/acknowledge-through",
            "target": "/queue/ledger",
            "jms-seq": "3",
            "selector": "n <> 1",
            "receipt": "r3",
        },
    )
    answer = client.read()
    assert (answer.command, answer.header("jms-acknowledged")) == ("RECEIPT", "2")
    left = broker.browse(connection, Queue("ledger"))
    assert [message.get_text() for _, message in left.messages] == ["m1"]  # m3 is not due


@pytest.fixture
def secured(broker: Broker) -> Iterator[ServedBroker]:
    security = Security.from_mapping(
        {
            "users": {"reader": {"password": hash_password("pages")}},
            "permissions": [
                {"destination": "queue://ledger", "browse": ["reader"], "send": ["*"]},
            ],
            "allow_anonymous": True,
        }
    )
    with ServedBroker(broker, security=security) as served:
        yield served


def test_reading_needs_browse_and_consuming_needs_receive(secured: ServedBroker) -> None:
    factory = ConnectionFactory(secured.url)
    with factory.create_connection("reader", "pages") as connection:
        session = connection.create_session()
        _fill(session, "ledger", 4)
        reader = session.create_sequence_reader(Queue("ledger"))
        assert reader.last_sequence() == 4
        assert [seq for page in reader.read(2, 3) for seq, _ in page] == [2, 3]
        # A refused permission is an ERROR, as for any frame: the connection ends.
        with pytest.raises(JMSException, match="may not receive queue://ledger"):
            reader.acknowledge_through(4)
    with factory.create_connection("reader", "pages") as connection:
        session = connection.create_session()
        assert session.create_sequence_reader(Queue("ledger")).first_sequence() == 1
        with pytest.raises(JMSException, match="may not browse queue://other"):
            session.create_sequence_reader(Queue("other")).last_sequence()
