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


def serve_one_client(listener: socket.socket, received: list[Frame | ConnectRequest]) -> None:
    """Answer one client with only the state machine: CONNECTED, a MESSAGE per SUBSCRIBE, a
    RECEIPT for every ``receipt`` header; stop after DISCONNECT."""
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
                            ("key", TRICKY_VALUE),
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


def test_stomp_py_1_2_frames_cross_both_ways_intact() -> None:
    received: list[Frame | ConnectRequest] = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        server = threading.Thread(target=serve_one_client, args=(listener, received), daemon=True)
        server.start()
        client = stomp.Connection12([("127.0.0.1", port)], auto_decode=False)
        collector = Collector()
        client.set_listener("collector", collector)
        client.connect("user", "pa:ss\\word", wait=True)
        client.send("/queue/a", b"hello\x00world", headers={"key": TRICKY_VALUE, "receipt": "r-1"})
        client.subscribe("/queue/a", id="sub:1", ack="client-individual")
        wait_for(lambda: collector.messages and "r-1" in collector.receipts)
        [message] = collector.messages
        client.ack(message.headers["ack"])
        client.disconnect()
        server.join(5)

    assert not collector.errors
    connect = received[0]
    assert isinstance(connect, ConnectRequest)
    assert connect.frame.header("passcode") == "pa:ss\\word"  # CONNECT is never escaped
    assert connect.version.value == "1.2"
    send, subscribe, ack, disconnect = received[1:]
    assert isinstance(send, Frame) and isinstance(subscribe, Frame)
    assert send.command == "SEND"
    assert send.header("key") == TRICKY_VALUE
    assert send.body == b"hello\x00world"
    assert subscribe.header("id") == "sub:1"
    assert ack == Frame("ACK", (("id", "ack:1"),))
    assert isinstance(disconnect, Frame) and disconnect.command == "DISCONNECT"
    assert message.headers["key"] == TRICKY_VALUE
    assert message.headers["message-id"] == "ID:m:1"
    assert message.body == MESSAGE_BODY
