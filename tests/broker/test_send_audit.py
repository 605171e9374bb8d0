"""The broker's send audit (jms.broker.audit): a resend (a failover client sending again what a
lost connection did not answer) of a non-transacted send it has — same JMSMessageID, within the
window — is dropped, also by a broker opened later on the same store; other sends never are."""

from __future__ import annotations

from pathlib import Path

import pytest

import jms.broker.broker
from jms.broker import Broker, ConsumerSpec
from jms.broker.audit import SendAudit
from jms.message import DeliveryMode, Queue, TextMessage, Topic
from jms.store.sqlite import SQLiteStore
from tests.broker.conftest import Recorder


def _message(message_id: str, text: str = "x") -> TextMessage:
    message = TextMessage(text)
    message.set_jms_destination(Queue("audited"))
    message.set_jms_message_id(message_id)
    message.set_jms_delivery_mode(DeliveryMode.PERSISTENT)
    return message


def _delivered(broker: Broker, connection_id: int) -> list[str]:
    recorder = Recorder()
    broker.add_consumer(connection_id, ConsumerSpec(Queue("audited"), prefetch=100), recorder)
    return recorder.texts()


def test_a_resend_with_a_message_id_the_broker_has_is_dropped(
    broker: Broker, connection_id: int
) -> None:
    broker.send(connection_id, _message("ID:a:1", "first"))
    broker.send(connection_id, _message("ID:a:1", "again"), resend=True)
    broker.send(connection_id, _message("ID:a:2", "second"), resend=True)
    assert _delivered(broker, connection_id) == ["first", "second"]


def test_a_send_that_is_no_resend_is_taken_whatever_its_message_id(
    broker: Broker, connection_id: int
) -> None:
    """A dead letter moved back keeps its JMSMessageID: the audit must not swallow it."""
    broker.send(connection_id, _message("ID:m:1", "first"))
    broker.send(connection_id, _message("ID:m:1", "moved back"))
    assert _delivered(broker, connection_id) == ["first", "moved back"]


def test_a_resend_of_a_transacted_send_is_taken(broker: Broker, connection_id: int) -> None:
    transaction = broker.begin(connection_id)
    broker.send(connection_id, _message("ID:t:1", "in a transaction"), transaction)
    broker.commit(connection_id, transaction)
    broker.send(connection_id, _message("ID:t:1", "not a resend"), resend=True)
    assert _delivered(broker, connection_id) == ["in a transaction", "not a resend"]


def test_sends_of_many_messages_are_audited_unless_their_sender_never_resends(
    broker: Broker, connection_id: int
) -> None:
    audited = [_message("ID:b:1", "audited"), _message("ID:b:2", "audited too")]
    assert broker.send_many(connection_id, audited) == (2, None)
    unaudited = [_message("ID:s:1", "server-given id")]
    assert broker.send_many(connection_id, unaudited, audit=False) == (1, None)
    broker.send(connection_id, _message("ID:b:2", "dropped"), resend=True)
    broker.send(connection_id, _message("ID:s:1", "taken"), resend=True)
    assert _delivered(broker, connection_id) == [
        "audited",
        "audited too",
        "server-given id",
        "taken",
    ]


def test_the_audit_forgets_the_oldest_ids_beyond_its_window() -> None:
    audit = SendAudit(window=3)
    for n in range(5):
        audit.record(f"ID:{n}")
    assert len(audit) == 3
    assert "ID:1" not in audit and "ID:2" in audit and "ID:4" in audit
    with pytest.raises(ValueError, match="got 0"):
        SendAudit(window=0)


def test_a_broker_opened_on_the_store_knows_the_messages_another_one_committed(
    tmp_path: Path,
) -> None:
    first = Broker(SQLiteStore(tmp_path / "store"), name="first")
    connection_id = first.connect()
    for n in range(5):
        first.send(connection_id, _message(f"ID:b:{n}", f"m{n}"))
    first.close()
    second = Broker(SQLiteStore(tmp_path / "store"), name="second", audit_window=3)
    try:
        connection_id = second.connect()
        # The newest three are known; an older one (beyond the window) is taken as new.
        for n in (4, 2, 1):
            second.send(connection_id, _message(f"ID:b:{n}", f"resent m{n}"), resend=True)
        assert _delivered(second, connection_id) == ["m0", "m1", "m2", "m3", "m4", "resent m1"]
    finally:
        second.close()


def test_a_broker_opening_a_store_reads_only_the_newest_messages_of_each_queue_and_subscription(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jms.broker.broker, "_AUDIT_RECOVERED_PER_QUEUE", 2)
    first = Broker(SQLiteStore(tmp_path / "store"), name="first")
    connection_id = first.connect(client_id="audit")
    reader = first.add_consumer(
        connection_id,
        ConsumerSpec(Topic("news"), subscription_name="reader", durable=True),
        Recorder(),
    )
    first.remove_consumer(connection_id, reader)
    for n in range(4):
        first.send(connection_id, _message(f"ID:q:{n}", f"m{n}"))
        news = _message(f"ID:t:{n}", f"n{n}")
        news.set_jms_destination(Topic("news"))
        first.send(connection_id, news)
    first.close()
    second = Broker(SQLiteStore(tmp_path / "store"), name="second")
    try:
        connection_id = second.connect()
        for n in (3, 2):  # the newest two of each log are known
            for message_id in (f"ID:q:{n}", f"ID:t:{n}"):
                resent = _message(message_id, "duplicate")
                if message_id.startswith("ID:t"):
                    resent.set_jms_destination(Topic("news"))
                second.send(connection_id, resent, resend=True)
        second.send(connection_id, _message("ID:q:1", "older, taken again"), resend=True)
        assert _delivered(second, connection_id) == ["m0", "m1", "m2", "m3", "older, taken again"]
    finally:
        second.close()


def test_a_resend_the_audit_does_not_know_is_delivered_flagged_redelivered_also_after_a_restart(
    tmp_path: Path,
) -> None:
    # The broker that took it may have delivered it, and its consumer acknowledged it, before
    # it died: a message acknowledged before its group commit is never written.
    first = Broker(SQLiteStore(tmp_path / "store"), name="first")
    try:
        connection_id = first.connect()
        first.send(connection_id, _message("ID:new:1", "resent"), resend=True)
        first.send(connection_id, _message("ID:new:2", "sent once"))
    finally:
        first.close()
    second = Broker(SQLiteStore(tmp_path / "store"), name="second")
    try:
        connection_id = second.connect()
        recorder = Recorder()
        second.add_consumer(connection_id, ConsumerSpec(Queue("audited"), prefetch=10), recorder)
        flags = [
            (
                d.message.get_text(),  # type: ignore[attr-defined]
                d.message.get_jms_redelivered(),
                d.message.get_int_property("JMSXDeliveryCount"),
            )
            for d in recorder.deliveries
        ]
        assert flags == [("resent", True, 2), ("sent once", False, 1)]
    finally:
        second.close()
