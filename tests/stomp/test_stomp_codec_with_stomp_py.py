"""The codec and connection state machine against a STOMP client nobody here wrote (stomp-py):
a plain socket moves bytes between them, so every frame crosses in both directions as the real
peer writes and reads it. (The real server is a later layer; this proves the codec alone.)"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from jms.stomp import ConnectRequest, Frame, ServerConnection, receipt_frame

stomp = pytest.importorskip("stomp", reason="stomp-py (a dev dependency) is not installed")

TRICKY_VALUE = "a:b\nc\\d\re"
MESSAGE_BODY = b"hi\x00there"


def serve_one_client(
    listener: socket.socket, received: list[Frame | ConnectRequest], header_value: str
) -> None:
    """Answer one client with only the state machine: CONNECTED, a MESSAGE (with a ``key``
    header of ``header_value``) per SUBSCRIBE, a RECEIPT for every ``receipt`` header; stop
    after DISCONNECT."""
    client, _ = listener.accept()
    connection = ServerConnection()
    with client:
        while data := client.recv(65536):
            for event in connection.feed(data):
                if isinstance(event, ConnectRequest):
                    received.append(event)
                    client.sendall(connection.accept(session="s-1", server="jms-test/0"))
                    continue
                if not isinstance(event, Frame):
                    continue
                received.append(event)
                if event.command == "SUBSCRIBE":
                    message = Frame(
                        "MESSAGE",
                        (
                            ("destination", event.header("destination") or ""),
                            ("message-id", "ID:m:1"),
                            ("subscription", event.header("id") or ""),
                            ("ack", "ack:1"),
                            ("key", header_value),
                        ),
                        MESSAGE_BODY,
                    )
                    client.sendall(connection.send(message))
                receipt = event.header("receipt")
                if receipt is not None:
                    client.sendall(connection.send(receipt_frame(receipt)))
                if event.command == "DISCONNECT":
                    return


class Collector(stomp.ConnectionListener):
    """What stomp-py hands its listener (its frames have ``headers`` and ``body``)."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.receipts: list[str] = []
        self.errors: list[Any] = []

    def on_message(self, frame: Any) -> None:
        self.messages.append(frame)

    def on_receipt(self, frame: Any) -> None:
        self.receipts.append(frame.headers["receipt-id"])

    def on_error(self, frame: Any) -> None:
        self.errors.append(frame)


def wait_for(condition: Callable[[], object], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "stomp-py did not get there in time"
        time.sleep(0.01)


@pytest.mark.parametrize(
    ("version", "header_value"),
    [
        ("1.0", "a:b c"),  # nothing is escaped in 1.0: no line breaks
        ("1.1", TRICKY_VALUE),  # 1.1 does not escape CR; one inside a value is kept
        ("1.2", TRICKY_VALUE),
    ],
)
def test_stomp_py_frames_cross_both_ways_intact(version: str, header_value: str) -> None:
    received: list[Frame | ConnectRequest] = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        server = threading.Thread(
            target=serve_one_client, args=(listener, received, header_value), daemon=True
        )
        server.start()
        connection_class = {
            "1.0": stomp.Connection10,
            "1.1": stomp.Connection11,
            "1.2": stomp.Connection12,
        }[version]
        client = connection_class([("127.0.0.1", port)], auto_decode=False)
        collector = Collector()
        client.set_listener("collector", collector)
        client.connect("user", "pa:ss\\word", wait=True)
        client.send("/queue/a", b"hello\x00world", headers={"key": header_value, "receipt": "r-1"})
        client.subscribe("/queue/a", id="sub:1", ack="client")
        wait_for(lambda: collector.messages and "r-1" in collector.receipts)
        [message] = collector.messages
        if version == "1.0":
            client.ack(message.headers["message-id"])
            expected_ack = {"message-id": "ID:m:1"}
        elif version == "1.1":
            client.ack(message.headers["message-id"], "sub:1")
            expected_ack = {"message-id": "ID:m:1", "subscription": "sub:1"}
        else:
            client.ack(message.headers["ack"])
            expected_ack = {"id": "ack:1"}
        client.disconnect()
        server.join(5)

    assert not collector.errors
    connect = received[0]
    assert isinstance(connect, ConnectRequest)
    assert connect.version.value == version
    assert connect.frame.header("passcode") == "pa:ss\\word"  # CONNECT is never escaped
    send, subscribe, ack, disconnect = received[1:]
    assert isinstance(send, Frame) and isinstance(subscribe, Frame) and isinstance(ack, Frame)
    assert send.command == "SEND"
    assert send.header("key") == header_value
    assert send.body == b"hello\x00world"
    assert subscribe.header("id") == "sub:1"
    assert (ack.command, dict(ack.headers)) == ("ACK", expected_ack)
    assert isinstance(disconnect, Frame) and disconnect.command == "DISCONNECT"
    assert message.headers["key"] == header_value
    assert message.headers["message-id"] == "ID:m:1"
    assert message.body == MESSAGE_BODY
