"""Our STOMP server against a client nobody here wrote (stomp-py, in 1.0, 1.1 and 1.2): send and
subscribe, every acknowledgement mode, NACK, transactions, selectors, receipts, durable
subscriptions across reconnects, heart-beats, browsing, request/reply through temporary queues,
and logins and permissions from a security config."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from jms import ConnectionFactory, Queue, TextMessage
from jms.broker import Broker, DestinationPolicy
from jms.broker.security import Security, hash_password
from tests.stomp.serving import ServedBroker

stomp = pytest.importorskip("stomp", reason="stomp-py (a dev dependency) is not installed")


class Collector(stomp.ConnectionListener):  # type: ignore[misc]
    """What stomp-py hands its listener."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.receipts: list[str] = []
        self.errors: list[Any] = []
        self.disconnected = False

    def on_message(self, frame: Any) -> None:
        self.messages.append(frame)

    def on_receipt(self, frame: Any) -> None:
        self.receipts.append(frame.headers["receipt-id"])

    def on_error(self, frame: Any) -> None:
        self.errors.append(frame)

    def on_disconnected(self) -> None:
        self.disconnected = True

    def bodies(self) -> list[str]:
        return [m.body for m in self.messages]


def wait_for(condition: Callable[[], object], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "stomp-py did not get there in time"
        time.sleep(0.01)


def settle(seconds: float = 0.2) -> None:
    """Let frames that should not come have their chance."""
    time.sleep(seconds)


_VERSIONS = {"1.0": "Connection10", "1.1": "Connection11", "1.2": "Connection12"}


class Client:
    """One stomp-py connection with its collector, closed by the test's end."""

    def __init__(self, port: int, version: str = "1.2", **connect: Any) -> None:
        options = {"heartbeats": connect.pop("heartbeats")} if "heartbeats" in connect else {}
        self.version = version
        self.connection = getattr(stomp, _VERSIONS[version])([("127.0.0.1", port)], **options)
        self.collector = Collector()
        self.connection.set_listener("collector", self.collector)
        self.connection.connect(wait=True, **connect)

    def send(self, destination: str, body: str, **headers: Any) -> None:
        self.connection.send(destination, body, headers=headers)

    def ack(self, frame: Any, subscription: str, **keywords: Any) -> None:
        if self.version == "1.2":
            self.connection.ack(frame.headers["ack"], **keywords)
        elif self.version == "1.1":
            self.connection.ack(frame.headers["message-id"], subscription, **keywords)
        else:
            self.connection.ack(frame.headers["message-id"], **keywords)

    def nack(self, frame: Any, subscription: str, **keywords: Any) -> None:
        if self.version == "1.2":
            self.connection.nack(frame.headers["ack"], **keywords)
        else:
            self.connection.nack(frame.headers["message-id"], subscription, **keywords)

    def receipt(self, name: str) -> None:
        """A frame with a receipt header that changes nothing, and wait for its RECEIPT: every
        frame sent before it was handled by then."""
        self.connection.begin(transaction=f"sync-{name}")
        self.connection.abort(transaction=f"sync-{name}", headers={"receipt": name})
        wait_for(lambda: name in self.collector.receipts)

    def close(self) -> None:
        if self.connection.is_connected():
            self.connection.disconnect()


@pytest.fixture
def clients(served: ServedBroker) -> Iterator[Callable[..., Client]]:
    opened: list[Client] = []

    def open_client(version: str = "1.2", **connect: Any) -> Client:
        client = Client(served.port, version, **connect)
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        client.close()


@pytest.mark.parametrize("version", ["1.0", "1.1", "1.2"])
def test_send_subscribe_and_client_individual_ack(
    clients: Callable[..., Client], broker: Broker, version: str
) -> None:
    client = clients(version)
    ack = "client-individual" if version != "1.0" else "client"
    client.connection.subscribe("/queue/a", id="s", ack=ack)
    for n in range(3):
        client.send("/queue/a", f"m{n}")
    wait_for(lambda: len(client.collector.messages) == 3)
    assert client.collector.bodies() == ["m0", "m1", "m2"]
    client.ack(client.collector.messages[2], "s")
    client.receipt("acked")
    stats = {s.name: s for s in broker.stats()}["queue://a"]
    expected = 3 if ack == "client" else 1  # 1.0 has only cumulative client acks
    assert (stats.acknowledged, stats.depth) == (expected, 3 - expected)
    assert not client.collector.errors


def test_auto_ack_consumes_on_delivery(clients: Callable[..., Client], broker: Broker) -> None:
    client = clients()
    client.connection.subscribe("/queue/a", id="s")
    client.send("/queue/a", "x")
    wait_for(lambda: client.collector.messages)
    client.receipt("done")
    assert {s.name: s.depth for s in broker.stats()}["queue://a"] == 0


@pytest.mark.parametrize("version", ["1.1", "1.2"])
def test_nack_redelivers_then_dead_letters(
    clients: Callable[..., Client], broker: Broker, version: str
) -> None:
    broker.set_policy("queue://a", DestinationPolicy(max_deliveries=2))
    client = clients(version)
    client.connection.subscribe("/queue/a", id="s", ack="client-individual")
    client.send("/queue/a", "poison")
    wait_for(lambda: len(client.collector.messages) == 1)
    client.nack(client.collector.messages[0], "s")
    wait_for(lambda: len(client.collector.messages) == 2)
    assert client.collector.messages[1].headers["redelivered"] == "true"
    client.nack(client.collector.messages[1], "s")
    client.connection.subscribe("/queue/DLQ.a", id="dlq")
    wait_for(lambda: len(client.collector.messages) == 3)
    dead = client.collector.messages[2]
    assert dead.body == "poison"
    assert "max_deliveries 2" in dead.headers["JMS_jms_DeadLetterReason"]


def test_transactions_cover_sends_and_acks(clients: Callable[..., Client], broker: Broker) -> None:
    client = clients()
    connection = client.connection
    transaction = connection.begin()
    client.send("/queue/a", "in tx", transaction=transaction)
    client.receipt("sent")
    assert {s.name: s.depth for s in broker.stats()}.get("queue://a", 0) == 0
    connection.commit(transaction)
    connection.subscribe("/queue/a", id="s", ack="client-individual")
    wait_for(lambda: client.collector.messages)
    message = client.collector.messages[0]
    aborted = connection.begin()
    client.ack(message, "s", transaction=aborted)
    connection.abort(aborted)
    wait_for(lambda: len(client.collector.messages) == 2)
    again = client.collector.messages[1]
    assert again.body == "in tx" and again.headers["redelivered"] == "true"
    committed = connection.begin()
    client.ack(again, "s", transaction=committed)
    connection.commit(committed)
    client.receipt("committed")
    assert {s.name: s.depth for s in broker.stats()}["queue://a"] == 0


def test_selectors_filter_on_headers_and_jms_fields(clients: Callable[..., Client]) -> None:
    client = clients()
    client.connection.subscribe(
        "/queue/a", id="s", headers={"selector": "colour = 'red' AND JMSPriority > 5"}
    )
    client.send("/queue/a", "red, urgent", colour="red", priority="7")
    client.send("/queue/a", "red, normal", colour="red")
    client.send("/queue/a", "blue, urgent", colour="blue", priority="9")
    wait_for(lambda: client.collector.messages)
    settle()
    assert client.collector.bodies() == ["red, urgent"]


def test_string_headers_compare_as_strings_in_selectors(clients: Callable[..., Client]) -> None:
    client = clients()
    client.connection.subscribe("/queue/a", id="s", headers={"selector": "weight > 2500"})
    client.send("/queue/a", "heavy", weight="3000")
    settle()
    assert client.collector.messages == []  # a STOMP header is a String property


def test_every_frame_gets_the_receipt_it_asks_for(clients: Callable[..., Client]) -> None:
    client = clients()
    connection = client.connection
    connection.subscribe("/queue/a", id="s", ack="client-individual", headers={"receipt": "sub"})
    connection.send("/queue/a", "x", headers={"receipt": "send"})
    wait_for(lambda: client.collector.messages)
    connection.ack(client.collector.messages[0].headers["ack"], receipt="ack")
    connection.begin(transaction="t", headers={"receipt": "begin"})
    connection.commit(transaction="t", headers={"receipt": "commit"})
    connection.unsubscribe(id="s", headers={"receipt": "unsub"})
    wait_for(lambda: len(client.collector.receipts) == 6)
    assert client.collector.receipts == ["sub", "send", "ack", "begin", "commit", "unsub"]
    connection.disconnect(receipt="bye")  # stomp-py waits for this one itself
    # Its disconnect returns once the receipt has marked it disconnected; its I/O thread tells
    # the listener a moment later.
    wait_for(lambda: client.collector.disconnected)


def test_a_durable_subscription_survives_reconnects(
    clients: Callable[..., Client], served: ServedBroker
) -> None:
    def subscribe() -> Client:
        client = clients(headers={"client-id": "reader"})
        client.connection.subscribe(
            "/topic/news", id="d", ack="client", headers={"activemq.subscriptionName": "feed"}
        )
        client.receipt("subscribed")
        return client

    reader = subscribe()
    reader.close()
    publisher = clients()
    publisher.send("/topic/news", "one", persistent="true")
    publisher.send("/topic/news", "two", persistent="true")
    publisher.receipt("published")
    reader = subscribe()
    wait_for(lambda: len(reader.collector.messages) == 2)
    assert reader.collector.bodies() == ["one", "two"]
    reader.ack(reader.collector.messages[0], "d")  # only "one": client acks are cumulative
    reader.receipt("acked")
    reader.close()
    reader = subscribe()
    wait_for(lambda: reader.collector.messages)
    assert reader.collector.bodies() == ["two"]
    assert reader.collector.messages[0].headers["redelivered"] == "true"


def test_heart_beats_flow_both_ways(broker: Broker) -> None:
    from jms.stomp import HeartBeatOffer

    with ServedBroker(broker, heart_beat=HeartBeatOffer(200, 200)) as served:
        client = Client(served.port, heartbeats=(200, 200))
        try:
            time.sleep(1.2)  # several intervals: neither side gives up on the other
            assert client.connection.is_connected()
            client.send("/queue/a", "still here", receipt="alive")
            wait_for(lambda: "alive" in client.collector.receipts)
            assert not client.collector.errors
        finally:
            client.close()


def test_browsing_shows_messages_without_taking_them(
    clients: Callable[..., Client], broker: Broker
) -> None:
    client = clients()
    for n in range(3):
        client.send("/queue/a", f"m{n}")
    client.connection.subscribe("/queue/a", id="b", headers={"browser": "true"})
    wait_for(lambda: len(client.collector.messages) == 4)
    assert client.collector.bodies()[:3] == ["m0", "m1", "m2"]
    assert client.collector.messages[3].headers["browser"] == "end"
    assert {s.name: s.depth for s in broker.stats()}["queue://a"] == 3


def test_request_reply_through_a_temporary_queue(clients: Callable[..., Client]) -> None:
    requester, responder = clients(), clients()
    requester.connection.subscribe("/temp-queue/answers", id="answers")
    responder.connection.subscribe("/queue/questions", id="q")
    requester.send("/queue/questions", "6 x 7?", **{"reply-to": "/temp-queue/answers"})
    wait_for(lambda: responder.collector.messages)
    question = responder.collector.messages[0]
    responder.send(
        question.headers["reply-to"], "42", **{"correlation-id": question.headers["message-id"]}
    )
    wait_for(lambda: requester.collector.messages)
    answer = requester.collector.messages[0]
    assert answer.body == "42" and answer.headers["destination"] == "/temp-queue/answers"


def test_stomp_py_and_a_jms_client_exchange_messages(
    clients: Callable[..., Client], served: ServedBroker
) -> None:
    client = clients()
    client.connection.subscribe("/queue/to-stomp", id="s")
    with ConnectionFactory(served.url).create_connection() as connection:
        connection.start()
        session = connection.create_session()
        message = TextMessage("from jms")
        message.set_string_property("origin", "jms")
        session.create_producer(Queue("to-stomp")).send(message)
        wait_for(lambda: client.collector.messages)
        frame = client.collector.messages[0]
        assert (frame.body, frame.headers["origin"]) == ("from jms", "jms")
        client.send("/queue/to-jms", "from stomp-py", origin="stomp-py", **{"amq-msg-type": "text"})
        received = session.create_consumer(Queue("to-jms")).receive(2000)
    assert isinstance(received, TextMessage)
    assert received.get_text() == "from stomp-py"
    assert received.get_string_property("origin") == "stomp-py"


# -- logins and permissions ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def security() -> Security:
    return Security.from_mapping(
        {
            "users": {
                "alice": {"password": hash_password("wonderland")},
                "bob": {"password": hash_password("builder", scheme="pbkdf2_sha256")},
            },
            "permissions": [
                {
                    "destination": "queue://orders*",
                    "send": ["alice"],
                    "receive": ["bob"],
                    "browse": ["*"],
                },
                {"destination": "*", "send": ["*"], "receive": ["*"]},
            ],
        }
    )


@pytest.fixture
def secured(broker: Broker, security: Security) -> Iterator[ServedBroker]:
    with ServedBroker(broker, security=security) as served:
        yield served


def _refused(port: int, **connect: Any) -> str:
    connection = stomp.Connection12([("127.0.0.1", port)])
    collector = Collector()
    connection.set_listener("c", collector)
    with pytest.raises(stomp.exception.ConnectFailedException):
        connection.connect(wait=True, **connect)
    wait_for(lambda: collector.errors)
    return str(collector.errors[0].headers["message"])


def test_logins_are_checked(secured: ServedBroker) -> None:
    assert "wrong user name or password" in _refused(
        secured.port, username="alice", passcode="looking-glass"
    )
    assert "wrong user name or password" in _refused(secured.port, username="eve", passcode="x")
    assert "does not accept anonymous clients" in _refused(secured.port)
    for user, password in (("alice", "wonderland"), ("bob", "builder")):
        client = Client(secured.port, username=user, passcode=password)
        assert client.connection.is_connected()
        client.close()


def test_permissions_are_per_destination_and_action(secured: ServedBroker) -> None:
    alice = Client(secured.port, username="alice", passcode="wonderland")
    bob = Client(secured.port, username="bob", passcode="builder")
    try:
        alice.send("/queue/orders", "order 1", receipt="sent")
        wait_for(lambda: "sent" in alice.collector.receipts)
        bob.connection.subscribe("/queue/orders", id="s")
        wait_for(lambda: bob.collector.messages)
        bob.send("/queue/orders", "not allowed")
        wait_for(lambda: bob.collector.errors)
        assert (
            "user 'bob' may not send queue://orders" in bob.collector.errors[0].headers["message"]
        )
        assert bob.collector.errors[0].headers["jms-exception"] == "JMSSecurityException"
        alice.connection.subscribe("/queue/orders.eu", id="s")
        wait_for(lambda: alice.collector.errors)
        assert "may not receive queue://orders.eu" in alice.collector.errors[0].headers["message"]
    finally:
        alice.close()
        bob.close()
