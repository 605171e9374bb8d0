"""``embedded:///path``: the in-process broker over the SQLite store, through the client API."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from jms.broker import (
    DestinationPolicy,
    close_embedded_broker,
    embedded_broker,
    open_broker,
)
from jms.client import ConnectionFactory, Session
from jms.errors import IllegalStateException, JMSException
from jms.message import DeliveryMode, Queue, TextMessage, Topic

ORDERS = Queue("orders")


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    address = f"embedded://{tmp_path / 'store'}"
    yield address
    close_embedded_broker(address)


def test_one_broker_per_directory_however_it_is_spelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.chdir(tmp_path)
    broker = embedded_broker(url)
    assert embedded_broker("embedded://store") is broker
    assert embedded_broker(f"embedded://{tmp_path}/./x/../store/") is broker
    assert broker.name == str(tmp_path / "store")
    assert embedded_broker("memory://") is not broker


def test_persistent_messages_survive_a_restart_and_non_persistent_ones_do_not(url: str) -> None:
    with ConnectionFactory(url).create_connection() as connection:
        producer = connection.create_session().create_producer(ORDERS)
        producer.send(TextMessage("kept"))
        producer.send(TextMessage("lost"), delivery_mode=DeliveryMode.NON_PERSISTENT)
        producer.send(TextMessage("kept too"))
    close_embedded_broker(url)

    with ConnectionFactory(url).create_connection() as connection:
        connection.start()
        consumer = connection.create_session().create_consumer(ORDERS)
        texts = [consumer.receive(1000).get_text() for _ in range(2)]  # type: ignore[union-attr]
        assert texts == ["kept", "kept too"]
        assert consumer.receive(100) is None


def test_unacknowledged_messages_come_back_redelivered_with_their_count(url: str) -> None:
    with ConnectionFactory(url).create_connection() as connection:
        session = connection.create_session()
        session.create_producer(ORDERS).send(TextMessage("a"))
    with ConnectionFactory(url).create_connection() as connection:
        connection.start()
        session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        consumer = session.create_consumer(ORDERS)
        received = consumer.receive(1000)
        assert received is not None and not received.get_jms_redelivered()
        session.recover()  # a failed delivery, and a second one at once
        again = consumer.receive(1000)
        assert again is not None and again.get_int_property("JMSXDeliveryCount") == 2
    close_embedded_broker(url)  # the connection closed first: the second delivery failed too

    with ConnectionFactory(url).create_connection() as connection:
        connection.start()
        message = connection.create_session().create_consumer(ORDERS).receive(1000)
        assert message is not None and message.get_text() == "a"
        assert message.get_jms_redelivered()
        assert message.get_int_property("JMSXDeliveryCount") == 3


def test_durable_subscriptions_and_uncommitted_transactions_across_a_restart(url: str) -> None:
    news = Topic("news")
    factory = ConnectionFactory(url, client_id="reader")
    with factory.create_connection() as connection:
        connection.create_session().create_durable_consumer(news, "audit").close()
        transacted = connection.create_session(True)
        transacted.create_producer(ORDERS).send(TextMessage("never committed"))
    publisher = ConnectionFactory(url)
    with publisher.create_connection() as connection:
        connection.create_session().create_producer(news).send(TextMessage("while away"))
    close_embedded_broker(url)

    with factory.create_connection() as connection:
        connection.start()
        session = connection.create_session()
        message = session.create_durable_consumer(news, "audit").receive(1000)
        assert message is not None and message.get_text() == "while away"
        assert session.create_consumer(ORDERS).receive(100) is None


def test_open_broker_configures_the_broker_once(url: str) -> None:
    broker = open_broker(url, default_policy=DestinationPolicy(memory_window=4))
    with pytest.raises(IllegalStateException, match="already open in this process"):
        open_broker(url)
    assert embedded_broker(url) is broker
    with ConnectionFactory(url).create_connection() as connection:
        producer = connection.create_session().create_producer(ORDERS)
        for n in range(10):
            producer.send(TextMessage(str(n)))
    (stats,) = broker.stats()
    assert (stats.depth, stats.paged) == (10, 6)
    close_embedded_broker(url)
    assert open_broker(url) is not broker


def test_a_directory_open_in_another_process_is_refused(tmp_path: Path, url: str) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys
                from jms.broker import embedded_broker
                embedded_broker({url!r})
                print("open", flush=True)
                sys.stdin.read()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        with pytest.raises(IllegalStateException, match="already open in another broker"):
            ConnectionFactory(url)
    finally:
        holder.kill()
        holder.wait(10)
    ConnectionFactory(url)  # the lock died with the process


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("embedded://", "names no store directory"),
        ("embedded:///tmp/x?memory_window=5", "takes no query"),
        ("embedded:/tmp/x", "unsupported broker URL"),
    ],
)
def test_bad_embedded_urls_are_refused(address: str, message: str) -> None:
    with pytest.raises(JMSException, match=message):
        ConnectionFactory(address)
