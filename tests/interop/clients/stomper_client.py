"""The interop scenario with Python's stomper (PyPI), written as its users write it: stomper makes
and reads frames (STOMP 1.1) as text, the program owns the socket; see tests/interop/peers.py for
the modes and what each prints. Frames travel as Latin-1 text, so that every byte of a body (NUL
bytes, UTF-8) survives stomper's string handling; header text is UTF-8 inside it."""

from __future__ import annotations

import hashlib
import json
import socket
import sys
import time

import stomper
from stomper.stompbuffer import StompBuffer

BIG = b"0123456789abcdef" * 65536
NUL = b"nul\0in\0the\0middle"


class Connection:
    def __init__(self, port: int) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = StompBuffer()
        self.write(stomper.connect("", "", "localhost"))
        self.next_frame("CONNECTED")

    def write(self, frame: str) -> None:
        self.socket.sendall(frame.encode("latin-1"))

    def send(self, destination: str, body: bytes, headers: dict[str, str]) -> None:
        frame = stomper.Frame()
        frame.cmd = "SEND"
        frame.headers = {
            **{name: utf8(value) for name, value in headers.items()},
            "destination": destination,
            "content-length": str(len(body)),
        }
        frame.body = body.decode("latin-1")
        self.write(frame.pack())

    def next_frame(self, command: str) -> dict:
        """The next frame of ``command`` (stomper's dict of cmd, headers and body)."""
        deadline = time.monotonic() + 10
        while True:
            frame = self.buffer.getOneMessage()
            if frame is not None:
                if frame["cmd"] == "ERROR":
                    raise RuntimeError(f"ERROR from the broker: {frame['headers']}")
                if frame["cmd"] == command:
                    return frame
                continue
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"no {command} within 10 s; buffered: {self.buffer.buffer[:200]!r}"
                )
            data = self.socket.recv(65536)
            if not data:
                raise EOFError(f"the connection closed while waiting for {command}")
            self.buffer.appendData(data.decode("latin-1"))

    def close(self) -> None:
        self.socket.close()


def utf8(text: str) -> str:
    return text.encode().decode("latin-1")


def text(wire: str) -> str:
    return wire.encode("latin-1").decode()


def scenario(port: int, name: str) -> dict:
    connection = Connection(port)
    select = f"/queue/{name}.select"
    connection.send(select, b"red-1", {"colour": "red"})
    connection.send(select, b"blue-1", {"colour": "blue"})
    connection.send(select, b"red-2", {"colour": "red", "receipt": "sent-3"})
    receipt = connection.next_frame("RECEIPT")["headers"]["receipt-id"] == "sent-3"
    subscribe = stomper.subscribe(select, "select", ack="client-individual")
    connection.write(subscribe.replace("\n\n", "\nselector:colour = 'red'\n\n", 1))
    selected = []
    for _ in range(2):
        frame = connection.next_frame("MESSAGE")
        selected.append(text(frame["body"]))
        if frame["body"] == "red-2":
            connection.write(stomper.ack(frame["headers"]["message-id"], "select"))
    connection.write(stomper.unsubscribe("select"))

    tx = f"/queue/{name}.tx"
    connection.write(stomper.begin("tx-aborted"))
    connection.send(tx, b"tx-aborted", {"transaction": "tx-aborted"})
    connection.write(stomper.abort("tx-aborted"))
    connection.write(stomper.begin("tx-committed"))
    connection.send(tx, b"tx-committed", {"transaction": "tx-committed"})
    connection.write(stomper.commit("tx-committed"))

    bodies = f"/queue/{name}.bodies"
    connection.write(stomper.subscribe(bodies, "bodies"))
    connection.send(bodies, BIG, {})
    connection.send(bodies, NUL, {})
    big = connection.next_frame("MESSAGE")["body"].encode("latin-1")
    nul = connection.next_frame("MESSAGE")["body"].encode("latin-1")
    connection.close()
    return {
        "selected": selected,
        "receipt": receipt,
        "big": {"length": len(big), "sha256": hashlib.sha256(big).hexdigest()},
        "nul_hex": nul.hex(),
    }


def send(port: int, destination: str, message_json: str) -> dict:
    message = json.loads(message_json)
    connection = Connection(port)
    connection.send(
        destination, message["body"].encode(), {**message["headers"], "receipt": "crossing"}
    )
    connection.next_frame("RECEIPT")
    connection.close()
    return {"sent": True}


def receive(port: int, destination: str) -> dict:
    connection = Connection(port)
    connection.write(stomper.subscribe(destination, "crossing"))
    frame = connection.next_frame("MESSAGE")
    connection.close()
    return {
        "headers": {name: text(value) for name, value in frame["headers"].items()},
        "body": text(frame["body"]),
    }


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: stomper_client.py PORT scenario NAME | send DEST JSON | receive DEST")
    modes = {"scenario": scenario, "send": send, "receive": receive}
    print(json.dumps(modes[sys.argv[2]](int(sys.argv[1]), *sys.argv[3:])))
