"""Clients on a ``failover:`` URL (jms.client.failover, docs/ha.md): when their broker goes away
they move to the next one and the application keeps its connection, sessions and consumers.

Here the brokers are STOMP servers in this process: "a failover" is one server stopping (its
connections end) and another starting on a port the URL names, in front of the same broker or of
a new broker opened on the same store (what a standby taking over does). A proxy that ends the
connection instead of passing on a RECEIPT loses a send's receipt on purpose."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from jms.broker import Broker
from jms.client import ConnectionFactory, Session
from jms.errors import JMSException, TransactionRolledBackException
from jms.message import DeliveryMode, Queue, TextMessage
from jms.store.location import open_store
from tests.stomp.serving import ServedBroker

_FAST = "initialReconnectDelay=20&maxReconnectDelay=200&randomize=false"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _failover_url(*ports: int, options: str = _FAST) -> str:
    inner = ",".join(f"stomp://127.0.0.1:{port}" for port in ports)
    return f"failover:({inner})?{options}"


def _texts(consumer_receive: object, count: int) -> list[TextMessage]:
    received: list[TextMessage] = []
    while len(received) < count:
        message = consumer_receive(5000)  # type: ignore[operator]
        assert message is not None, f"only {len(received)} of {count} messages came"
        received.append(message)
    return received


@pytest.fixture
def broker() -> Iterator[Broker]:
    opened = Broker(name="failover-test")
    yield opened
    opened.close()


def test_a_consumer_carries_on_after_a_failover_and_gets_what_it_had_not_acknowledged_again(
    broker: Broker,
) -> None:
    first_port, second_port = _free_port(), _free_port()
    heard: list[JMSException] = []
    first = ServedBroker(broker, port=first_port).start()
    try:
        factory = ConnectionFactory(_failover_url(first_port, second_port))
        with factory.create_connection() as connection:
            connection.set_exception_listener(heard.append)
            connection.start()
            session = connection.create_session(Session.CLIENT_ACKNOWLEDGE)
            producer = session.create_producer(Queue("orders"))
            consumer = session.create_consumer(Queue("orders"))
            for n in range(6):
                producer.send(TextMessage(f"m{n}"))
            before = _texts(consumer.receive, 3)
            assert [m.get_text() for m in before] == ["m0", "m1", "m2"]
            assert not any(m.get_jms_redelivered() for m in before)
            first.stop()
            with ServedBroker(broker, port=second_port):
                # Unacknowledged and buffered messages come back, flagged; sends go on.
                producer.send(TextMessage("m6"))
                after = _texts(consumer.receive, 7)
                assert sorted(m.get_text() for m in after) == [f"m{n}" for n in range(7)]
                flagged = {m.get_text() for m in after if m.get_jms_redelivered()}
                assert {"m0", "m1", "m2"} <= flagged
                assert "m6" not in flagged
                after[-1].acknowledge()
                assert consumer.receive_no_wait() is None
            assert heard == []
    finally:
        first.stop()


def test_a_transaction_open_across_a_failover_is_rolled_back_and_its_commit_says_so(
    broker: Broker,
) -> None:
    first_port, second_port = _free_port(), _free_port()
    first = ServedBroker(broker, port=first_port).start()
    try:
        factory = ConnectionFactory(_failover_url(first_port, second_port))
        with factory.create_connection() as connection:
            connection.start()
            plain = connection.create_session()
            plain.create_producer(Queue("in")).send(TextMessage("work"))
            session = connection.create_session(Session.SESSION_TRANSACTED)
            consumer = session.create_consumer(Queue("in"))
            producer = session.create_producer(Queue("out"))
            taken = consumer.receive(5000)
            assert taken is not None and taken.get_text() == "work"  # type: ignore[attr-defined]
            producer.send(TextMessage("result of work"))
            first.stop()
            with ServedBroker(broker, port=second_port):
                with pytest.raises(TransactionRolledBackException, match="failed over"):
                    session.commit()
                # Nothing of it happened: the work comes back, redelivered, and is done again.
                again = consumer.receive(5000)
                assert again is not None and again.get_jms_redelivered()
                producer.send(TextMessage("result of work"))
                session.commit()
                results = plain.create_consumer(Queue("out"))
                result = results.receive(5000)
                assert result is not None
                assert result.get_text() == "result of work"  # type: ignore[attr-defined]
                assert results.receive(300) is None
                assert plain.create_consumer(Queue("in")).receive(300) is None
    finally:
        first.stop()


def test_a_transaction_that_only_received_before_a_failover_is_rolled_back_too(
    broker: Broker,
) -> None:
    first_port, second_port = _free_port(), _free_port()
    first = ServedBroker(broker, port=first_port).start()
    try:
        factory = ConnectionFactory(_failover_url(first_port, second_port))
        with factory.create_connection() as connection:
            connection.start()
            connection.create_session().create_producer(Queue("in")).send(TextMessage("job"))
            session = connection.create_session(Session.SESSION_TRANSACTED)
            consumer = session.create_consumer(Queue("in"))
            assert consumer.receive(5000) is not None
            first.stop()
            with ServedBroker(broker, port=second_port):
                with pytest.raises(TransactionRolledBackException):
                    session.commit()
                again = consumer.receive(5000)
                assert again is not None and again.get_jms_redelivered()
                session.commit()
                assert consumer.receive(300) is None
    finally:
        first.stop()


class _ReceiptEater:
    """A TCP proxy to ``upstream_port`` that, once ``armed``, ends both connections instead of
    passing a RECEIPT on (the broker did what the frame asked; the client never hears it), and
    then accepts no more connections."""

    def __init__(self, upstream_port: int) -> None:
        self._upstream_port = upstream_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self.armed = threading.Event()
        self.ate = threading.Event()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        client, _ = self._listener.accept()
        server = socket.create_connection(("127.0.0.1", self._upstream_port))
        self._sockets += [client, server]
        threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
        self._pump(server, client, True)

    def _pump(self, source: socket.socket, target: socket.socket, from_broker: bool) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if from_broker and self.armed.is_set() and b"RECEIPT\n" in data:
                    self.ate.set()
                    break
                target.sendall(data)
        self.close()

    def close(self) -> None:
        self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


@contextmanager
def _behind_a_receipt_eater(broker: Broker) -> Iterator[tuple[_ReceiptEater, Session]]:
    """A started connection to ``broker`` through a receipt eater, then straight (failover)."""
    with ServedBroker(broker) as served:
        proxy = _ReceiptEater(served.port)
        factory = ConnectionFactory(_failover_url(proxy.port, served.port))
        with factory.create_connection() as connection:
            connection.start()
            yield proxy, connection.create_session()


def test_a_send_whose_receipt_was_lost_is_sent_again_and_the_broker_drops_the_duplicate(
    broker: Broker,
) -> None:
    with _behind_a_receipt_eater(broker) as (proxy, session):
        producer = session.create_producer(Queue("once"))
        producer.send(TextMessage("before"))
        proxy.armed.set()
        sent = TextMessage("receipt lost")
        producer.send(sent)  # the broker has it; its RECEIPT never comes; sent again
        assert proxy.ate.is_set()
        producer.send(TextMessage("after"))
        consumer = session.create_consumer(Queue("once"))
        texts = [m.get_text() for m in _texts(consumer.receive, 3)]  # type: ignore[attr-defined]
        assert texts == ["before", "receipt lost", "after"]
        assert consumer.receive(300) is None


def test_an_asynchronous_send_whose_receipt_was_lost_completes_once(broker: Broker) -> None:
    with _behind_a_receipt_eater(broker) as (proxy, session):
        producer = session.create_producer(Queue("async-once"))
        outcomes: list[Exception | None] = []
        done = threading.Event()

        class Listener:
            def on_completion(self, message: object) -> None:
                outcomes.append(None)
                done.set()

            def on_exception(self, message: object, error: Exception) -> None:
                outcomes.append(error)
                done.set()

        proxy.armed.set()
        producer.send(TextMessage("async"), completion_listener=Listener())
        assert done.wait(10)
        assert outcomes == [None]
        consumer = session.create_consumer(Queue("async-once"))
        assert [m.get_text() for m in _texts(consumer.receive, 1)] == ["async"]  # type: ignore[attr-defined]
        assert consumer.receive(300) is None


@pytest.mark.parametrize("store_kind", ["sqlite", "postgresql"])
def test_a_standby_broker_on_the_same_store_drops_a_send_the_dead_one_had_committed(
    request: pytest.FixtureRequest, tmp_path: Path, store_kind: str
) -> None:
    """The resent copy reaches a new broker opened on the store (what a standby taking over
    does); it knows the message from the store, though the broker that took it is gone."""
    store_dir = (
        request.getfixturevalue("postgresql_url")
        if store_kind == "postgresql"
        else str(tmp_path / "store")
    )
    first_port, second_port = _free_port(), _free_port()
    dead = Broker(open_store(store_dir), name="dead")
    first = ServedBroker(dead, port=first_port).start()
    proxy = _ReceiptEater(first_port)
    factory = ConnectionFactory(_failover_url(proxy.port, second_port))
    connection = factory.create_connection()
    try:
        session = connection.create_session()
        producer = session.create_producer(Queue("takeover"))
        proxy.armed.set()
        sending = threading.Thread(target=producer.send, args=(TextMessage("committed"),))
        sending.start()
        assert proxy.ate.wait(10)
        first.stop()
        dead.close()
        standby = Broker(open_store(store_dir), name="standby")
        try:
            with ServedBroker(standby, port=second_port):
                sending.join(20)
                assert not sending.is_alive()
                connection.start()
                consumer = session.create_consumer(Queue("takeover"))
                assert [m.get_text() for m in _texts(consumer.receive, 1)] == ["committed"]  # type: ignore[attr-defined]
                assert consumer.receive(300) is None
                connection.close()
        finally:
            standby.close()
    finally:
        connection.close()
        first.stop()


def test_the_exception_listener_hears_only_when_the_failover_gives_up(broker: Broker) -> None:
    first_port, nobody = _free_port(), _free_port()
    heard: list[JMSException] = []
    heard_once = threading.Event()
    first = ServedBroker(broker, port=first_port).start()
    url = _failover_url(
        first_port, nobody, options="initialReconnectDelay=10&maxReconnectAttempts=3"
    )
    with ConnectionFactory(url).create_connection() as connection:

        def listener(error: JMSException) -> None:
            heard.append(error)
            heard_once.set()

        connection.set_exception_listener(listener)
        session = connection.create_session()
        session.create_producer(Queue("q")).send(
            TextMessage("x"), delivery_mode=DeliveryMode.PERSISTENT
        )
        first.stop()
        assert heard_once.wait(10)
        time.sleep(0.1)
        assert len(heard) == 1
        assert "gave up reconnecting after 3 round(s)" in str(heard[0])
        assert f"127.0.0.1:{nobody}" in str(heard[0])
        with pytest.raises(JMSException):
            session.create_producer(Queue("q")).send(TextMessage("y"))


def test_creating_a_connection_fails_at_once_when_no_listed_broker_answers() -> None:
    url = _failover_url(_free_port(), _free_port())
    started = time.monotonic()
    with pytest.raises(JMSException, match="failover gave up connecting after 1 round"):
        ConnectionFactory(url).create_connection()
    assert time.monotonic() - started < 5
