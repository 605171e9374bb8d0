"""``jms broker`` (a real subprocess) with STOMP clients of other languages that nobody here wrote:
PHP pecl-stomp, Ruby stomp, Perl Net::Stomp, Node stompit and @stomp/stompjs, Python stomper and
stomp-py (tests/interop/peers.py). Each sends, subscribes with a selector and client-individual
acknowledgement, uses transactions and a receipt, and sends and receives a 1 MiB body and a body
with NUL bytes; and a message goes from each client to the next with its headers intact. A test
skips, naming what to install, only when its client is not installed here."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from jms import BytesMessage, ConnectionFactory, Message, Queue, TextMessage
from tests.broker_process import BrokerProcess
from tests.interop.peers import PEERS, Peer

BIG = b"0123456789abcdef" * 65536
NUL = b"nul\0in\0the\0middle"
# What a message carries from one client to the next: a selector-friendly property, text with a
# space, a comma and non-ASCII letters, a number as text, and a JMS header STOMP maps.
CROSSING_HEADERS = {
    "colour": "red",
    "x-greeting": "hello, wörld",
    "x-count": "42",
    "correlation-id": "corr-7",
}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("interop-broker")) as running:
        yield running


def _skip_unless_installed(*peers: Peer) -> None:
    for peer in peers:
        reason = peer.missing()
        if reason is not None:
            pytest.skip(reason)


def _queue_name(peer: Peer) -> str:
    slug = "".join(character if character.isalnum() else "-" for character in peer.name.lower())
    return f"interop-{slug}-{uuid.uuid4().hex[:8]}"


def _body(message: Message) -> str:
    if isinstance(message, TextMessage):
        return message.get_text() or ""
    assert isinstance(message, BytesMessage), message
    return message.get_body(bytes).decode()


def _drain(broker: BrokerProcess, queue: str, count: int) -> list[Message]:
    """The ``count`` messages left on ``queue`` (waiting for each, as the client's disconnect may
    still be returning its unacknowledged messages), and nothing after them."""
    with ConnectionFactory(broker.url).create_connection() as connection:
        connection.start()
        consumer = connection.create_session().create_consumer(Queue(queue))
        messages = []
        for _ in range(count):
            message = consumer.receive(10_000)
            assert message is not None, f"{queue}: {len(messages)} messages, {count} expected"
            messages.append(message)
        extra = consumer.receive(300)
        assert extra is None, f"{queue}: more than {count} messages: {_body(extra)!r}"
        return messages


@pytest.mark.parametrize("peer", PEERS, ids=[peer.name for peer in PEERS])
def test_a_client_sends_selects_acknowledges_transacts_and_carries_big_and_binary_bodies(
    broker: BrokerProcess, peer: Peer
) -> None:
    _skip_unless_installed(peer)
    name = _queue_name(peer)
    result = peer.run(broker.port, "scenario", name)
    assert result["selected"] == ["red-1", "red-2"], result
    assert result["receipt"] is True, result
    assert result["big"] == {"length": len(BIG), "sha256": hashlib.sha256(BIG).hexdigest()}
    assert result["nul_hex"] == NUL.hex()
    # red-1 was delivered and never acknowledged, so it is back (redelivered); red-2 was
    # acknowledged on its own; blue-1 never matched the selector.
    left = {_body(message): message for message in _drain(broker, f"{name}.select", 2)}
    assert sorted(left) == ["blue-1", "red-1"]
    assert left["red-1"].get_jms_redelivered()
    assert not left["blue-1"].get_jms_redelivered()
    assert [_body(message) for message in _drain(broker, f"{name}.tx", 1)] == ["tx-committed"]


_RING = [(sender, PEERS[(index + 1) % len(PEERS)]) for index, sender in enumerate(PEERS)]


@pytest.mark.parametrize(
    ("sender", "receiver"), _RING, ids=[f"{a.name} to {b.name}" for a, b in _RING]
)
def test_a_message_crosses_from_one_client_to_another_with_its_headers(
    broker: BrokerProcess, sender: Peer, receiver: Peer
) -> None:
    _skip_unless_installed(sender, receiver)
    destination = f"/queue/{_queue_name(sender)}"
    body = f"from {sender.name} to {receiver.name}: ünïcode, and a NUL-free body"
    sent = sender.run(
        broker.port, "send", destination, json.dumps({"headers": CROSSING_HEADERS, "body": body})
    )
    assert sent == {"sent": True}
    received = receiver.run(broker.port, "receive", destination)
    headers = received["headers"]
    assert {name: headers.get(name) for name in CROSSING_HEADERS} == CROSSING_HEADERS, headers
    assert headers.get("destination") == destination, headers
    assert received["body"] == body


def test_every_client_program_is_a_peer() -> None:
    """A program added to tests/interop/clients without a Peer would never run."""
    programs = {
        path.name
        for path in Path(__file__).parent.joinpath("clients").iterdir()
        if path.suffix in {".php", ".rb", ".pl", ".js", ".mjs", ".py"}
    }
    assert programs == {peer.command[-1] for peer in PEERS}


def test_a_client_not_installed_is_named_with_how_to_install_it() -> None:
    absent = Peer("Fortran stomp", ("no-such-program", "x.f"), lambda: False, "apt-get install f")
    assert absent.missing() == (
        "Fortran stomp is not installed here (apt-get install f; .ci/run installs it)"
    )
