"""The STOMP server over real sockets, frame by frame: receipts, errors, acknowledgement modes,
NACK and dead letters, transactions, prefetch, browsing, durable subscriptions, temporary
destinations, heart-beats and timeouts, and the JMS mapping seen from an in-process JMS client on
the same broker."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest

from jms import (
    BytesMessage,
    ConnectionFactory,
    DeliveryMode,
    MapMessage,
    Queue,
    Session,
    TextMessage,
)
from jms.broker import Broker, DestinationPolicy
from jms.errors import ResourceAllocationException
from jms.message.codec import decode
from jms.stomp import Frame, HeartBeatOffer, Version
from jms.stomp.durability import DeferredStore
from jms.store import DONE, AppendMessage, Completion, MemoryStore, StoreOperation
from tests.stomp.serving import RawClient, ServedBroker


def _depth(broker: Broker, name: str) -> int:
    return {s.name: s.depth for s in broker.stats()}.get(name, 0)


def _acknowledged(broker: Broker, name: str) -> int:
    return {s.name: s.acknowledged for s in broker.stats()}.get(name, 0)


def _messages(client: RawClient, count: int, timeout_s: float = 5.0) -> list[Frame]:
    frames = [client.read(timeout_s) for _ in range(count)]
    assert all(f.command == "MESSAGE" for f in frames), frames
    return frames


def _nothing_more(client: RawClient, wait_s: float = 0.2) -> None:
    with pytest.raises(TimeoutError):
        client.read(wait_s)


def _send(client: RawClient, destination: str, *bodies: str, **headers: str) -> None:
    for body in bodies:
        client.send("SEND", {"destination": destination, **headers}, body.encode())


# -- connecting, receipts, errors ---------------------------------------------------------------


def test_connected_names_the_version_the_server_and_a_session(served: ServedBroker) -> None:
    with RawClient(served.port) as raw:
        connected = raw.connect(heart_beat="0,0")
        assert connected.header("version") == "1.2"
        assert (connected.header("server") or "").startswith("jms/")
        assert connected.header("session")
        assert connected.header("heart-beat") == "10000,10000"


def test_every_frame_that_asks_gets_its_receipt_in_order(client: RawClient) -> None:
    frames = [
        ("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client-individual"}),
        ("SEND", {"destination": "/queue/a"}),
        ("BEGIN", {"transaction": "t"}),
        ("SEND", {"destination": "/queue/a", "transaction": "t"}),
        ("COMMIT", {"transaction": "t"}),
        ("BEGIN", {"transaction": "u"}),
        ("ABORT", {"transaction": "u"}),
    ]
    for number, (command, headers) in enumerate(frames):
        client.send(command, {**headers, "receipt": f"r{number}"})
    seen = [client.read() for _ in range(len(frames) + 2)]  # + the two MESSAGEs
    receipts = [f.header("receipt-id") for f in seen if f.command == "RECEIPT"]
    assert receipts == [f"r{n}" for n in range(len(frames))]
    messages = [f for f in seen if f.command == "MESSAGE"]
    client.send("ACK", {"id": messages[0].header("ack") or "", "receipt": "ack"})
    client.send("NACK", {"id": messages[1].header("ack") or "", "receipt": "nack"})
    client.send("UNSUBSCRIBE", {"id": "s", "receipt": "unsub"})
    client.send("DISCONNECT", {"receipt": "bye"})
    ids = []
    while True:
        try:
            frame = client.read()
        except EOFError:
            break
        if frame.command == "RECEIPT":
            ids.append(frame.header("receipt-id"))
    assert ids == ["ack", "nack", "unsub", "bye"]


@pytest.mark.parametrize(
    ("frame", "complaint"),
    [
        (Frame("SEND", (("destination", "/nowhere/x"),)), "must be a name after one of"),
        (Frame("ACK", (("id", "12345"),)), "names no message awaiting acknowledgement"),
        (Frame("COMMIT", (("transaction", "never"),)), "transaction 'never' was not begun"),
        (Frame("UNSUBSCRIBE", (("id", "ghost"),)), "no subscription with id 'ghost'"),
        (
            Frame("SUBSCRIBE", (("destination", "/queue/a"), ("id", "s"), ("selector", "a = "))),
            "selector",
        ),
        (Frame("SEND", (("destination", "/queue/a"), ("priority", "high"))), "priority"),
        (Frame("SEND", (("destination", "/queue/a"), ("amq-msg-type", "map"))), "amq-msg-type"),
        (
            Frame("SEND", (("destination", "/queue/a"), ("amq-msg-type", "text")), b"\xff\xfe"),
            "not UTF-8",
        ),
    ],
)
def test_a_mistake_is_answered_with_error_then_the_connection_closes(
    client: RawClient, frame: Frame, complaint: str
) -> None:
    frame = Frame(frame.command, (*frame.headers, ("receipt", "r")), frame.body)
    client.write(frame.to_bytes(client._parser.version))
    error = client.read()
    assert error.command == "ERROR"
    assert complaint in (error.header("message") or "")
    assert error.header("receipt-id") == "r"
    assert client.closed_by_server()


def _sends(destination: str, count: int, **extra: dict[str, str]) -> bytes:
    """``count`` SENDs with receipts r0, r1... in one piece, as one read takes them; ``extra``
    maps a receipt to more headers for its SEND."""
    return b"".join(
        Frame(
            "SEND",
            (("destination", destination), ("receipt", f"r{n}"), *extra.get(f"r{n}", {}).items()),
            f"m{n}".encode(),
        ).to_bytes(Version.V1_2)
        for n in range(count)
    )


@pytest.mark.parametrize(
    ("refused", "complaint"),
    [
        ({}, "queue://full holds 2 messages"),  # by the broker, sending the read's SENDs at once
        ({"r1": {"priority": "high"}}, "priority"),  # before the broker
    ],
)
def test_sends_of_one_read_before_a_refused_one_are_sent_and_none_after_it(
    client: RawClient, broker: Broker, refused: dict[str, dict[str, str]], complaint: str
) -> None:
    broker.set_policy("queue://full", DestinationPolicy(max_backlog=2))
    client.write(_sends("/queue/full", 4, **refused))
    frames = []
    while True:
        frame = client.read()
        frames.append(frame)
        if frame.command == "ERROR":
            break
    refused_number = 1 if refused else 2
    assert complaint in (frames[-1].header("message") or "")
    assert frames[-1].header("receipt-id") == f"r{refused_number}"
    assert client.closed_by_server()
    assert _depth(broker, "queue://full") == refused_number


def test_a_jms_client_hears_of_a_refused_send_and_the_sends_after_it_go_on(
    served: ServedBroker, broker: Broker
) -> None:
    broker.set_policy("queue://full", DestinationPolicy(max_backlog=2))
    with RawClient(served.port) as raw:
        raw.connect(**{"jms-extensions": "1"})
        raw.write(_sends("/queue/full", 3) + _sends("/queue/other", 2))
        receipts = [raw.read() for _ in range(5)]
    assert [r.header("receipt-id") for r in receipts] == ["r0", "r1", "r2", "r0", "r1"]
    assert [r.header("jms-exception") for r in receipts] == [
        None,
        None,
        "ResourceAllocationException",
        None,
        None,
    ]
    assert _depth(broker, "queue://full") == 2
    assert _depth(broker, "queue://other") == 2


def test_a_frame_before_connect_is_an_error(served: ServedBroker) -> None:
    with RawClient(served.port) as raw:
        raw.send("SEND", {"destination": "/queue/a"}, b"x")
        error = raw.read()
        assert error.command == "ERROR" and "must be CONNECT or STOMP" in (
            error.header("message") or ""
        )
        assert raw.closed_by_server()


def test_a_client_that_never_connects_is_closed(broker: Broker) -> None:
    with ServedBroker(broker, connect_timeout_s=0.2) as served, RawClient(served.port) as raw:
        error = raw.read(2)
        assert error.command == "ERROR" and "no CONNECT within 0.2 s" in (
            error.header("message") or ""
        )
        assert raw.closed_by_server()


def test_a_connection_past_max_connections_gets_an_error_and_the_others_go_on(
    broker: Broker,
) -> None:
    with (
        ServedBroker(broker, max_connections=2) as served,
        RawClient(served.port) as first,
        RawClient(served.port) as second,
    ):
        first.connect()
        with RawClient(served.port) as third:
            error = third.read(2)
            assert error.command == "ERROR"
            assert error.header("jms-exception") == "ResourceAllocationException"
            assert "at most 2 connections at once" in (error.header("message") or "")
            assert third.closed_by_server()
        second.connect()  # an idle connection still counts; it is served
        assert served.server.counters.connections_refused == 1
        first.close()
        deadline = time.monotonic() + 5
        while served.server.connection_count > 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        with RawClient(served.port) as again:
            assert again.connect().command == "CONNECTED"  # room again


# -- heart-beats --------------------------------------------------------------------------------


def test_the_server_sends_the_heart_beats_it_promised(broker: Broker) -> None:
    with (
        ServedBroker(broker, heart_beat=HeartBeatOffer(100, 100)) as served,
        RawClient(served.port) as raw,
    ):
        connected = raw.connect(heart_beat="0,100")
        assert connected.header("heart-beat") == "100,100"
        _nothing_more(raw, 0.6)
        assert raw.heart_beats >= 3


def test_a_client_silent_past_its_heart_beat_promise_is_disconnected(broker: Broker) -> None:
    with (
        ServedBroker(broker, heart_beat=HeartBeatOffer(100, 100)) as served,
        RawClient(served.port) as raw,
    ):
        raw.connect(heart_beat="100,0")
        began = time.monotonic()
        error = raw.read(3)
        assert error.command == "ERROR"
        assert "promised heart-beats every 100 ms" in (error.header("message") or "")
        assert time.monotonic() - began < 1.5
        assert raw.closed_by_server()


def test_a_client_that_keeps_beating_stays_connected(broker: Broker) -> None:
    with (
        ServedBroker(broker, heart_beat=HeartBeatOffer(100, 100)) as served,
        RawClient(served.port) as raw,
    ):
        raw.connect(heart_beat="100,0")
        for _ in range(8):
            raw.write(b"\n")
            time.sleep(0.05)
        raw.send("SEND", {"destination": "/queue/a", "receipt": "alive"}, b"x")
        assert raw.read().header("receipt-id") == "alive"


# -- acknowledgement ----------------------------------------------------------------------------


def test_auto_acknowledges_what_was_written(client: RawClient, broker: Broker) -> None:
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s"})
    _send(client, "/queue/a", "1", "2", receipt="sent")
    frames = [client.read() for _ in range(3)]
    assert sorted(f.command for f in frames) == ["MESSAGE", "MESSAGE", "RECEIPT"]
    client.send("DISCONNECT", {"receipt": "bye"})
    client.closed_by_server()
    assert _depth(broker, "queue://a") == 0 and _acknowledged(broker, "queue://a") == 2


def test_a_message_due_after_disconnect_stays_in_the_queue(
    client: RawClient, broker: Broker
) -> None:
    """SEND then DISCONNECT in one write, to a queue the client itself subscribes to: the
    delivery comes due after DISCONNECT, so it is not written (nor auto-acknowledged) but stays
    queued, and the client still gets its RECEIPT."""
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "receipt": "subscribed"})
    assert client.read().header("receipt-id") == "subscribed"
    client.write(
        Frame("SEND", (("destination", "/queue/a"),), b"late").to_bytes(Version.V1_2)
        + Frame("DISCONNECT", (("receipt", "bye"),)).to_bytes(Version.V1_2)
    )
    answer = client.read()
    assert (answer.command, answer.header("receipt-id")) == ("RECEIPT", "bye")
    assert client.closed_by_server()
    assert _depth(broker, "queue://a") == 1 and _acknowledged(broker, "queue://a") == 0


def test_client_acknowledgement_is_cumulative(client: RawClient, broker: Broker) -> None:
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client"})
    _send(client, "/queue/a", "1", "2", "3")
    messages = _messages(client, 3)
    client.send("ACK", {"id": messages[1].header("ack") or "", "receipt": "acked"})
    assert client.read().header("receipt-id") == "acked"
    assert _acknowledged(broker, "queue://a") == 2 and _depth(broker, "queue://a") == 1


def test_client_individual_acknowledges_one_message(client: RawClient, broker: Broker) -> None:
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client-individual"})
    _send(client, "/queue/a", "1", "2", "3")
    messages = _messages(client, 3)
    client.send("ACK", {"id": messages[1].header("ack") or "", "receipt": "acked"})
    assert client.read().header("receipt-id") == "acked"
    assert _acknowledged(broker, "queue://a") == 1 and _depth(broker, "queue://a") == 2


@pytest.mark.parametrize(
    ("version", "ack_mode", "with_subscription", "settled"),
    [
        ("1.1", "client-individual", True, 1),
        ("1.1", "client", True, 2),
        ("1.0", "client", False, 2),
    ],
)
def test_before_1_2_an_ack_names_the_message_id(
    served: ServedBroker,
    broker: Broker,
    version: str,
    ack_mode: str,
    with_subscription: bool,
    settled: int,
) -> None:
    with RawClient(served.port) as client:
        client.connect(accept_version=version)
        client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": ack_mode})
        _send(client, "/queue/a", "1", "2", "3")
        messages = _messages(client, 3)
        ack = {"message-id": messages[1].header("message-id") or "", "receipt": "acked"}
        if with_subscription:
            ack["subscription"] = "s"
        frame = Frame("ACK", tuple(ack.items())).to_bytes(Version(version))
        client.write(frame)
        assert client.read().header("receipt-id") == "acked"
        assert _acknowledged(broker, "queue://a") == settled
        client.write(frame)  # settled already
        refused = client.read()
        assert refused.command == "ERROR" and "names no message awaiting" in (
            refused.header("message") or ""
        )


def test_unacknowledged_messages_come_back_when_the_client_goes(
    served: ServedBroker, broker: Broker
) -> None:
    with RawClient(served.port) as first:
        first.connect()
        first.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client"})
        _send(first, "/queue/a", "1")
        _messages(first, 1)
    with RawClient(served.port) as second:
        second.connect()
        second.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client"})
        (again,) = _messages(second, 1)
        assert again.body == b"1" and again.header("redelivered") == "true"


def test_nack_redelivers_and_counts_toward_the_dead_letter_limit(
    client: RawClient, broker: Broker
) -> None:
    broker.set_policy("queue://a", DestinationPolicy(max_deliveries=3))
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client-individual"})
    _send(client, "/queue/a", "poison")
    seen = []
    for _ in range(3):
        (message,) = _messages(client, 1)
        seen.append((message.header("redelivered"), message.header("JMSXDeliveryCount")))
        client.send("NACK", {"id": message.header("ack") or ""})
    _nothing_more(client)
    assert seen == [(None, "1"), ("true", "2"), ("true", "3")]
    client.send("SUBSCRIBE", {"destination": "/queue/DLQ.a", "id": "dlq"})
    (dead,) = _messages(client, 1)
    assert dead.body == b"poison"
    assert dead.header("JMS_jms_OriginalDestination") == "queue://a"
    assert "max_deliveries 3" in (dead.header("JMS_jms_DeadLetterReason") or "")


def test_prefetch_size_bounds_unacknowledged_deliveries(client: RawClient) -> None:
    client.send(
        "SUBSCRIBE",
        {
            "destination": "/queue/a",
            "id": "s",
            "ack": "client-individual",
            "activemq.prefetchSize": "2",
        },
    )
    _send(client, "/queue/a", *"12345")
    first = _messages(client, 2)
    _nothing_more(client)
    client.send("ACK", {"id": first[0].header("ack") or ""})
    (third,) = _messages(client, 1)
    assert third.body == b"3"
    _nothing_more(client)


# -- transactions -------------------------------------------------------------------------------


def test_sends_in_a_transaction_appear_at_commit_and_vanish_at_abort(
    client: RawClient, broker: Broker
) -> None:
    client.send("BEGIN", {"transaction": "t"})
    _send(client, "/queue/a", "kept", transaction="t")
    client.send("BEGIN", {"transaction": "u"})
    _send(client, "/queue/a", "dropped", transaction="u", receipt="sent")
    assert client.read().header("receipt-id") == "sent"
    assert _depth(broker, "queue://a") == 0
    client.send("COMMIT", {"transaction": "t"})
    client.send("ABORT", {"transaction": "u", "receipt": "done"})
    assert client.read().header("receipt-id") == "done"
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s"})
    (message,) = _messages(client, 1)
    assert message.body == b"kept"
    _nothing_more(client)


def test_acks_in_an_aborted_transaction_are_redelivered(client: RawClient, broker: Broker) -> None:
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client-individual"})
    _send(client, "/queue/a", "1")
    (message,) = _messages(client, 1)
    client.send("BEGIN", {"transaction": "t"})
    client.send("ACK", {"id": message.header("ack") or "", "transaction": "t"})
    client.send("ABORT", {"transaction": "t"})
    (again,) = _messages(client, 1)
    assert again.header("redelivered") == "true"
    client.send("BEGIN", {"transaction": "u"})
    client.send("ACK", {"id": again.header("ack") or "", "transaction": "u"})
    client.send("COMMIT", {"transaction": "u", "receipt": "c"})
    assert client.read().header("receipt-id") == "c"
    assert _depth(broker, "queue://a") == 0


def test_a_nack_in_a_transaction_redelivers_after_the_commit(client: RawClient) -> None:
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client-individual"})
    _send(client, "/queue/a", "1")
    (message,) = _messages(client, 1)
    client.send("BEGIN", {"transaction": "t"})
    client.send("NACK", {"id": message.header("ack") or "", "transaction": "t"})
    _nothing_more(client)
    client.send("COMMIT", {"transaction": "t"})
    (again,) = _messages(client, 1)
    assert again.body == b"1" and again.header("redelivered") == "true"


# -- browsing, durable subscriptions, temporary destinations -----------------------------------


def test_a_browser_sees_the_queue_then_browser_end(client: RawClient, broker: Broker) -> None:
    _send(client, "/queue/a", "1", "2", persistent="true", colour="red")
    _send(client, "/queue/a", "3", colour="blue")
    client.send(
        "SUBSCRIBE",
        {"destination": "/queue/a", "id": "b", "browser": "true", "selector": "colour = 'red'"},
    )
    first, second, end = client.read(), client.read(), client.read()
    assert (first.body, second.body) == (b"1", b"2")
    assert end.header("browser") == "end" and end.header("subscription") == "b"
    assert _depth(broker, "queue://a") == 3


@pytest.mark.parametrize("header", ["activemq.subscriptionName", "durable-subscription-name"])
def test_a_durable_subscription_keeps_messages_while_its_client_is_away(
    served: ServedBroker, header: str
) -> None:
    def subscribe(raw: RawClient) -> None:
        raw.connect(client_id="reader")
        raw.send("SUBSCRIBE", {"destination": "/topic/news", "id": "d", header: "feed"})

    with RawClient(served.port) as reader:
        subscribe(reader)
        _send(reader, "/topic/news", "while here", receipt="r")
        frames = [reader.read(), reader.read()]
        assert sorted(f.command for f in frames) == ["MESSAGE", "RECEIPT"]
    with RawClient(served.port) as publisher:
        publisher.connect()
        _send(publisher, "/topic/news", "while away", receipt="r")
        assert publisher.read().header("receipt-id") == "r"
    with RawClient(served.port) as reader:
        subscribe(reader)
        (message,) = _messages(reader, 1)
        assert message.body == b"while away"
        reader.send("UNSUBSCRIBE", {"id": "d", header: "feed", "receipt": "gone"})
        assert reader.read().header("receipt-id") == "gone"
    with RawClient(served.port) as publisher:
        publisher.connect()
        _send(publisher, "/topic/news", "nobody listens", receipt="r")
        publisher.read()
    with RawClient(served.port) as reader:
        subscribe(reader)
        _nothing_more(reader)


def test_a_durable_subscription_needs_a_client_id(client: RawClient) -> None:
    client.send(
        "SUBSCRIBE",
        {"destination": "/topic/news", "id": "d", "activemq.subscriptionName": "feed"},
    )
    error = client.read()
    assert error.command == "ERROR" and "needs a client ID" in (error.header("message") or "")


def test_replies_reach_a_temporary_queue_through_reply_to(
    served: ServedBroker, client: RawClient
) -> None:
    client.send("SUBSCRIBE", {"destination": "/temp-queue/replies", "id": "r"})
    _send(client, "/queue/requests", "question", **{"reply-to": "/temp-queue/replies"})
    with RawClient(served.port) as server_side:
        server_side.connect()
        server_side.send("SUBSCRIBE", {"destination": "/queue/requests", "id": "q"})
        (request,) = _messages(server_side, 1)
        reply_to = request.header("reply-to") or ""
        assert reply_to.startswith("/remote-temp-queue/")
        _send(server_side, reply_to, "answer")
        (reply,) = _messages(client, 1)
        assert reply.body == b"answer"
        assert reply.header("destination") == "/temp-queue/replies"


# -- the JMS mapping, seen from a JMS client on the same broker ---------------------------------


def test_a_send_without_a_timestamp_is_stamped_when_the_broker_reads_it(
    client: RawClient, memory_url: str
) -> None:
    """JMSTimestamp is taken once per read of the socket: every frame of a read gets it, and
    it lies between the client's write and the broker's receipt."""
    before = int(time.time() * 1000)
    frames = [
        Frame("SEND", (("destination", "/queue/stamped"), ("content-length", "1")), b"x")
        for _ in range(3)
    ]
    client.write(b"".join(frame.to_bytes(Version.V1_2) for frame in frames))
    client.send("SEND", {"destination": "/queue/stamped", "receipt": "r"}, b"y")
    assert client.read().command == "RECEIPT"
    after = int(time.time() * 1000)
    with ConnectionFactory(memory_url).create_connection() as connection:
        connection.start()
        consumer = connection.create_session().create_consumer(Queue("stamped"))
        received = [consumer.receive(1000) for _ in range(4)]
    stamps = [message.get_jms_timestamp() for message in received if message is not None]
    assert len(stamps) == 4
    assert all(before <= stamp <= after for stamp in stamps)
    assert stamps == sorted(stamps)


def test_send_headers_become_jms_headers_and_properties(client: RawClient, memory_url: str) -> None:
    expires = int(time.time() * 1000) + 60_000
    client.send(
        "SEND",
        {
            "amq-msg-type": "text",
            "destination": "/queue/a",
            "persistent": "true",
            "priority": "7",
            "expires": str(expires),
            "correlation-id": "c-1",
            "reply-to": "/queue/replies",
            "type": "order",
            "JMSXGroupID": "g",
            "JMSXGroupSeq": "2",
            "colour": "red",
            "content-type": "text/plain",
            "receipt": "r",
        },
        b"text",
    )
    client.read()
    with ConnectionFactory(memory_url).create_connection() as connection:
        connection.start()
        received = connection.create_session().create_consumer(Queue("a")).receive(1000)
    assert isinstance(received, TextMessage) and received.get_text() == "text"
    assert received.get_jms_delivery_mode() == DeliveryMode.PERSISTENT
    assert received.get_jms_priority() == 7
    assert received.get_jms_expiration() == expires
    assert received.get_jms_correlation_id() == "c-1"
    assert received.get_jms_reply_to() == Queue("replies")
    assert received.get_jms_type() == "order"
    assert received.get_string_property("JMSXGroupID") == "g"
    assert received.get_object_property("JMSXGroupSeq") == 2
    assert received.get_string_property("colour") == "red"
    assert received.get_string_property("JMS_jms_STOMP_content_2d_type") == "text/plain"
    assert (received.get_jms_message_id() or "").startswith("ID:")
    assert received.get_jms_timestamp() > 0


@pytest.mark.parametrize(
    ("headers", "body", "kind"),
    [
        ({}, b"text", TextMessage),
        ({"content-length": "5"}, b"bytes", BytesMessage),
        ({"content-length": "4", "amq-msg-type": "text"}, b"text", TextMessage),
        ({"amq-msg-type": "bytes"}, b"byte", BytesMessage),
    ],
)
def test_text_or_bytes_by_content_length_and_amq_msg_type(
    client: RawClient, memory_url: str, headers: dict[str, str], body: bytes, kind: type
) -> None:
    head = "".join(f"{name}:{value}\n" for name, value in headers.items())
    client.write(f"SEND\ndestination:/queue/a\nreceipt:r\n{head}\n".encode() + body + b"\0")
    assert client.read().command == "RECEIPT"
    with ConnectionFactory(memory_url).create_connection() as connection:
        connection.start()
        received = connection.create_session().create_consumer(Queue("a")).receive(1000)
    assert type(received) is kind
    assert received.get_body(str if kind is TextMessage else bytes) == (
        body.decode() if kind is TextMessage else body
    )


def test_jms_headers_and_properties_become_message_headers(
    client: RawClient, memory_url: str
) -> None:
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s"})
    with ConnectionFactory(memory_url).create_connection() as connection:
        session = connection.create_session()
        producer = session.create_producer(Queue("a"))
        producer.set_priority(6)
        text = TextMessage("héllo")
        text.set_jms_correlation_id("c-9")
        text.set_jms_type("greeting")
        text.set_jms_reply_to(Queue("replies"))
        text.set_int_property("weight", 3000)
        text.set_boolean_property("urgent", True)
        text.set_string_property("type", "a property named like a header")
        producer.send(text, time_to_live=60_000)
        data = BytesMessage()
        data.write_bytes(b"\x00\x01")
        producer.send(data, delivery_mode=DeliveryMode.NON_PERSISTENT)
    first, second = _messages(client, 2)
    assert first.body == "héllo".encode()
    assert first.header("amq-msg-type") == "text"
    assert first.header("persistent") == "true"
    assert first.header("priority") == "6"
    assert int(first.header("expires") or 0) > time.time() * 1000
    assert first.header("correlation-id") == "c-9"
    assert first.header("type") == "greeting"
    assert first.header("reply-to") == "/queue/replies"
    assert first.header("weight") == "3000" and first.header("urgent") == "true"
    assert first.header("jms-property-type") == "a property named like a header"
    assert (first.header("message-id") or "").startswith("ID:")
    assert second.body == b"\x00\x01" and second.header("amq-msg-type") == "bytes"
    assert second.header("persistent") is None


def test_other_bodies_travel_in_the_jms_codec(client: RawClient, memory_url: str) -> None:
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s"})
    with ConnectionFactory(memory_url).create_connection() as connection:
        map_message = MapMessage()
        map_message.set_int("count", 3)
        connection.create_session().create_producer(Queue("a")).send(map_message)
    (frame,) = _messages(client, 1)
    assert frame.header("content-type") == "application/x-jms-message"
    decoded = decode(frame.body)
    assert isinstance(decoded, MapMessage) and decoded.get_int("count") == 3


# -- durability and the event loop --------------------------------------------------------------


class _GatedStore(MemoryStore):
    """A memory store whose batches only count as durable once ``release()`` is called."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        applied = super().submit(batch)
        return _GatedCompletion(applied, self.gate) if batch else DONE


class _GatedCompletion(Completion):
    def __init__(self, applied: Completion, gate: threading.Event) -> None:
        self._applied = applied
        self._gate = gate

    def wait(self) -> None:
        self._gate.wait(10)
        self._applied.wait()

    def done(self) -> bool:
        return self._gate.is_set()


@contextmanager
def _served_on_a_gated_store() -> Iterator[tuple[_GatedStore, ServedBroker]]:
    """A broker on a store whose batches are durable only once ``gate`` is set, served."""
    gated = _GatedStore()
    store = DeferredStore(gated)
    broker = Broker(store, name="gated")
    try:
        with ServedBroker(broker, store=store) as served:
            yield gated, served
    finally:
        gated.gate.set()
        broker.close()


def test_a_receipt_waits_for_durability_without_stalling_other_clients() -> None:
    with _served_on_a_gated_store() as (gated, served), RawClient(served.port) as producer:
        producer.connect()
        producer.send(
            "SEND", {"destination": "/queue/a", "persistent": "true", "receipt": "p"}, b"x"
        )
        _nothing_more(producer, 0.3)
        with RawClient(served.port) as other:  # the loop is free meanwhile
            assert other.connect().command == "CONNECTED"
        gated.gate.set()
        assert producer.read().header("receipt-id") == "p"


class _Outcome(Completion):
    """A batch already applied, or failed with ``error``: a completion still to be reported."""

    def __init__(self, error: Exception | None = None) -> None:
        self._error = error

    def wait(self) -> None:
        if self._error is not None:
            raise self._error

    def done(self) -> bool:
        return True


class _FailingStore(MemoryStore):
    """A memory store that fails each batch storing a message with the property ``fail``."""

    def submit(self, batch: Sequence[StoreOperation]) -> Completion:
        super().submit(batch)
        failing = any(
            isinstance(operation, AppendMessage) and operation.message.property_exists("fail")
            for operation in batch
        )
        return _Outcome(ResourceAllocationException("disk full") if failing else None)


def test_a_failed_store_batch_fails_the_connection_though_a_later_one_succeeded() -> None:
    store = DeferredStore(_FailingStore())
    broker = Broker(store, name="failing")
    try:
        with ServedBroker(broker, store=store) as served, RawClient(served.port) as producer:
            producer.connect()
            sends = [
                Frame(
                    "SEND",
                    (("destination", "/queue/a"), ("persistent", "true"), *headers),
                    b"x",
                ).to_bytes(Version.V1_2)
                for headers in ((("fail", "yes"), ("receipt", "bad")), (("receipt", "good"),))
            ]
            producer.write(b"".join(sends))  # read in one turn: reported together
            error = producer.read()
            assert error.command == "ERROR"
            assert "the broker's store failed: disk full" in (error.header("message") or "")
            with pytest.raises(EOFError):  # closed, without a RECEIPT for either SEND
                producer.read()
    finally:
        broker.close()


# -- admin and stats ----------------------------------------------------------------------------


def test_admin_stats_and_purge_answer_through_reply_to(client: RawClient, broker: Broker) -> None:
    _send(client, "/queue/a", "1", "2", "3")
    client.send("SUBSCRIBE", {"destination": "/temp-queue/admin", "id": "admin"})
    client.send(
        "SEND",
        {"destination": "/admin/stats", "reply-to": "/temp-queue/admin", "correlation-id": "q1"},
    )
    (answer,) = _messages(client, 1)
    assert answer.header("correlation-id") == "q1"
    rows = {row["name"]: row for row in json.loads(answer.body)["destinations"]}
    assert rows["queue://a"]["depth"] == 3
    client.send(
        "SEND",
        {"destination": "/admin/purge", "target": "/queue/a", "reply-to": "/temp-queue/admin"},
    )
    (purged,) = _messages(client, 1)
    assert json.loads(purged.body) == {"purged": 3, "queue": "queue://a"}
    assert _depth(broker, "queue://a") == 0


def test_the_jms_client_api_works_over_the_server(served: ServedBroker) -> None:
    factory = ConnectionFactory(served.url)
    with factory.create_connection() as connection:
        connection.start()
        session = connection.create_session(Session.SESSION_TRANSACTED)
        consumer = session.create_consumer(Queue("a"))
        producer = session.create_producer(Queue("a"))
        stream = MapMessage()
        stream.set_double("price", 2.5)
        producer.send(stream)
        session.commit()
        received = consumer.receive(2000)
        session.commit()
    assert isinstance(received, MapMessage) and received.get_double("price") == 2.5


# -- choices where STOMP and ActiveMQ leave room ------------------------------------------------


def test_a_send_without_persistent_true_is_non_persistent(
    client: RawClient, memory_url: str
) -> None:
    _send(client, "/queue/a", "plain", receipt="r")
    assert client.read().header("receipt-id") == "r"
    with ConnectionFactory(memory_url).create_connection() as connection:
        connection.start()
        received = connection.create_session().create_consumer(Queue("a")).receive(1000)
    assert received is not None
    assert received.get_jms_delivery_mode() == DeliveryMode.NON_PERSISTENT


def test_nack_is_cumulative_in_client_mode(client: RawClient, broker: Broker) -> None:
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client"})
    _send(client, "/queue/a", "1", "2", "3")
    messages = _messages(client, 3)
    client.send("NACK", {"id": messages[1].header("ack") or ""})
    again = _messages(client, 2)
    assert [m.body for m in again] == [b"1", b"2"]
    assert all(m.header("redelivered") == "true" for m in again)


def test_unsubscribe_gives_unacknowledged_messages_back_as_redelivered(
    client: RawClient,
) -> None:
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client-individual"})
    _send(client, "/queue/a", "1")
    _messages(client, 1)
    client.send("UNSUBSCRIBE", {"id": "s"})
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "t", "ack": "client-individual"})
    (again,) = _messages(client, 1)
    assert again.body == b"1" and again.header("redelivered") == "true"


def test_the_default_prefetch_is_activemqs_1000(client: RawClient) -> None:
    client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client-individual"})
    for number in range(1001):
        client.send("SEND", {"destination": "/queue/a"}, str(number).encode())
    messages = _messages(client, 1000)
    _nothing_more(client, 0.3)
    client.send("ACK", {"id": messages[0].header("ack") or ""})
    (last,) = _messages(client, 1)
    assert last.body == b"1000"


def test_a_receipt_follows_the_messages_its_send_caused_once_both_are_durable() -> None:
    """A client subscribed to the queue it sends a PERSISTENT message to: the delivery is held
    until the store records it, and the SEND's RECEIPT, durable in the same batch, still comes
    after the MESSAGE."""
    with _served_on_a_gated_store() as (gated, served), RawClient(served.port) as client:
        client.connect()
        client.send("SUBSCRIBE", {"destination": "/queue/a", "id": "s", "ack": "client"})
        client.send("SEND", {"destination": "/queue/a", "persistent": "true", "receipt": "p"}, b"x")
        _nothing_more(client, 0.3)
        gated.gate.set()
        assert [client.read().command, client.read().command] == ["MESSAGE", "RECEIPT"]
