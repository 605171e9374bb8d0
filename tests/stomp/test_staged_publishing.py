"""The STOMP side of staged publishing (docs/stomp.md, "Staged publishing"): ``/admin/stage``
bodies of length-prefixed encodings, ``/admin/publish-staged`` JSON answered in its RECEIPT once
durable, what a malformed request gets, and permissions checked for every destination published
to before anything is."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from jms.broker import Broker
from jms.broker.security import Security, hash_password
from jms.broker.staging import split_stage_frames, stage_frames
from jms.client import ConnectionFactory
from jms.errors import JMSException
from jms.message import Queue, TextMessage
from jms.message.codec import encode
from tests.stomp.serving import RawClient, ServedBroker


def _encoded(text: str, to: str) -> bytes:
    message = TextMessage(text)
    message.set_jms_destination(Queue(to))
    return encode(message)


_ONE = _encoded("a", "out")


def test_stage_frames_split_back_and_a_cut_body_is_named() -> None:
    items = [b"", b"one", b"\x00" * 70_000]
    body = stage_frames(items)
    assert split_stage_frames(body) == items
    with pytest.raises(ValueError, match="claims 70000 bytes; only 69999 follow"):
        split_stage_frames(body[:-1])
    with pytest.raises(ValueError, match="length at byte 4 is cut off: 2 of its 4 bytes"):
        split_stage_frames(body[:6])


def test_a_plain_client_stages_and_publishes_and_reads_the_count_in_the_receipt(
    client: RawClient, broker: Broker
) -> None:
    body = stage_frames([_encoded("a", "out"), _encoded("b", "out")])
    client.send(
        "SEND",
        {"destination": "/admin/stage", "target": "/queue/staging", "receipt": "r1"},
        body,
    )
    staged = client.read()
    assert staged.command == "RECEIPT"
    assert (staged.header("jms-staged-first"), staged.header("jms-staged-last")) == ("1", "2")
    request = {
        "staged": [{"queue": "/queue/staging", "first_seq": 1, "last_seq": 2}],
        "marker": {"queue": "/queue/markers", "batch_id": 9},
    }
    client.send(
        "SEND",
        {"destination": "/admin/publish-staged", "receipt": "r2"},
        json.dumps(request).encode(),
    )
    answer = client.read()
    assert (answer.command, answer.header("jms-published")) == ("RECEIPT", "2")
    assert broker.last_sequence(Queue("out")) == 2
    client.send(
        "SEND",
        {"destination": "/admin/publish-staged", "receipt": "r3"},
        json.dumps(request).encode(),
    )
    assert client.read().header("jms-published") == "0"  # batch 9 was published


@pytest.mark.parametrize(
    ("headers", "body", "message"),
    [
        ({"destination": "/admin/publish-staged"}, b"{", "needs a JSON body"),
        ({"destination": "/admin/publish-staged"}, b'{"staged": 3}', "staged is not a list"),
        (
            {"destination": "/admin/publish-staged"},
            b'{"staged": [{"queue": "/queue/s", "first_seq": 1}]}',
            "KeyError: 'last_seq'",
        ),
        (
            {"destination": "/admin/publish-staged"},
            b'{"staged": [{"queue": "/queue/s", "first_seq": 2, "last_seq": 1}]}',
            "a staged range ends at or after its start; got 2 to 1",
        ),
        (
            {"destination": "/admin/stage", "target": "/queue/s"},
            b"",
            "a stage request holds at least one message; got none",
        ),
        (
            {"destination": "/admin/stage", "target": "/queue/s"},
            stage_frames([b"junk"]),
            "staged message 0 is not a message",
        ),
        (
            {"destination": "/admin/stage", "target": "/queue/s"},
            stage_frames([_ONE])[:-1],
            f"the staged message at byte 4 claims {len(_ONE)} bytes; only {len(_ONE) - 1} follow",
        ),
    ],
)
def test_a_malformed_request_is_an_error_that_says_what(
    client: RawClient, headers: dict[str, str], body: bytes, message: str
) -> None:
    client.send("SEND", headers, body)
    error = client.read()
    assert error.command == "ERROR"
    assert message in (error.header("message") or "")


def test_an_internal_failure_of_a_publish_is_an_error_not_silence(
    client: RawClient, broker: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The publish runs on an executor thread after the frame was handled: whatever goes wrong
    there, the client hears of it instead of waiting for a RECEIPT forever."""

    client.send(
        "SEND",
        {"destination": "/admin/stage", "target": "/queue/staging", "receipt": "r0"},
        stage_frames([_ONE]),
    )
    assert client.read().command == "RECEIPT"

    def broken(*args: object) -> object:
        raise RuntimeError("the store went away")

    # The store, not the broker: the broker's class may be compiled, its methods fixed.
    monkeypatch.setattr(broker._store, "submit", broken)
    request = {"staged": [{"queue": "/queue/staging", "first_seq": 1, "last_seq": 1}]}
    client.send(
        "SEND",
        {"destination": "/admin/publish-staged", "receipt": "r1"},
        json.dumps(request).encode(),
    )
    error = client.read()
    assert error.command == "ERROR"
    assert error.header("receipt-id") == "r1"
    assert "internal error: RuntimeError: the store went away" in (error.header("message") or "")


@pytest.fixture
def secured(broker: Broker) -> Iterator[ServedBroker]:
    security = Security.from_mapping(
        {
            "users": {"writer": {"password": hash_password("rows")}},
            "permissions": [
                {
                    "destination": "queue://staging",
                    "send": ["writer"],
                    "receive": ["writer"],
                    "browse": ["writer"],
                },
                {"destination": "queue://allowed", "send": ["writer"], "browse": ["writer"]},
            ],
            "allow_anonymous": False,
        }
    )
    with ServedBroker(broker, security=security) as served:
        yield served


def test_a_destination_the_user_may_not_send_to_publishes_nothing(
    secured: ServedBroker, broker: Broker
) -> None:
    with ConnectionFactory(secured.url).create_connection("writer", "rows") as connection:
        session = connection.create_session()
        staging = Queue("staging")
        staged = session.stage_encoded(
            staging, [_encoded("ok", "allowed"), _encoded("no", "secret")]
        )
        with pytest.raises(JMSException, match="may not send queue://secret"):
            session.publish_staged(staged)
        assert broker.last_sequence(Queue("allowed")) == 0
        assert session.create_sequence_reader(staging).last_sequence() == 2
