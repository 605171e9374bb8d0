"""The interop scenario with Python's stomp-py (PyPI ``stomp-py``) speaking STOMP 1.2, written as
its users write it: a listener collects what arrives; see tests/interop/peers.py for the modes and
what each prints. Bodies stay bytes (``auto_decode=False``), so NUL bytes come through as sent."""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from typing import Any

import stomp

BIG = b"0123456789abcdef" * 65536
NUL = b"nul\0in\0the\0middle"


class Collector(stomp.ConnectionListener):  # type: ignore[misc]
    def __init__(self) -> None:
        self.frames: list[Any] = []
        self.receipts: list[str] = []
        self.errors: list[Any] = []
        self.arrived = threading.Condition()

    def on_message(self, frame: Any) -> None:
        with self.arrived:
            self.frames.append(frame)
            self.arrived.notify_all()

    def on_receipt(self, frame: Any) -> None:
        with self.arrived:
            self.receipts.append(frame.headers["receipt-id"])
            self.arrived.notify_all()

    def on_error(self, frame: Any) -> None:
        with self.arrived:
            self.errors.append(frame)
            self.arrived.notify_all()

    def wait(self, what: str, ready: Any) -> None:
        deadline = time.monotonic() + 10
        with self.arrived:
            while not ready():
                if self.errors:
                    raise RuntimeError(f"ERROR from the broker: {self.errors[0].headers}")
                if not self.arrived.wait(deadline - time.monotonic()):
                    raise TimeoutError(f"no {what} within 10 s")

    def next_message(self) -> Any:
        self.wait("MESSAGE", lambda: self.frames)
        with self.arrived:
            return self.frames.pop(0)


def connect(port: int) -> tuple[Any, Collector]:
    connection = stomp.Connection12([("127.0.0.1", port)], auto_decode=False)
    collector = Collector()
    connection.set_listener("collector", collector)
    connection.connect(wait=True)
    return connection, collector


def scenario(port: int, name: str) -> dict:
    connection, collector = connect(port)
    select = f"/queue/{name}.select"
    connection.send(select, "red-1", headers={"colour": "red"})
    connection.send(select, "blue-1", headers={"colour": "blue"})
    connection.send(select, "red-2", headers={"colour": "red", "receipt": "sent-3"})
    collector.wait("RECEIPT", lambda: "sent-3" in collector.receipts)
    connection.subscribe(
        select, "select", ack="client-individual", headers={"selector": "colour = 'red'"}
    )
    selected = []
    for _ in range(2):
        frame = collector.next_message()
        selected.append(frame.body.decode())
        if frame.body == b"red-2":
            connection.ack(frame.headers["ack"])
    connection.unsubscribe("select")

    tx = f"/queue/{name}.tx"
    aborted = connection.begin()
    connection.send(tx, "tx-aborted", transaction=aborted)
    connection.abort(aborted)
    committed = connection.begin()
    connection.send(tx, "tx-committed", transaction=committed)
    connection.commit(committed)

    bodies = f"/queue/{name}.bodies"
    connection.subscribe(bodies, "bodies")
    connection.send(bodies, BIG)
    connection.send(bodies, NUL)
    big = collector.next_message().body
    nul = collector.next_message().body
    connection.disconnect()
    return {
        "selected": selected,
        "receipt": True,
        "big": {"length": len(big), "sha256": hashlib.sha256(big).hexdigest()},
        "nul_hex": nul.hex(),
    }


def send(port: int, destination: str, message_json: str) -> dict:
    message = json.loads(message_json)
    connection, collector = connect(port)
    connection.send(
        destination, message["body"], headers={**message["headers"], "receipt": "crossing"}
    )
    collector.wait("RECEIPT", lambda: "crossing" in collector.receipts)
    connection.disconnect()
    return {"sent": True}


def receive(port: int, destination: str) -> dict:
    connection, collector = connect(port)
    connection.subscribe(destination, "crossing")
    frame = collector.next_message()
    connection.disconnect()
    return {"headers": frame.headers, "body": frame.body.decode()}


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: stomp_py_client.py PORT scenario NAME | send DEST JSON | receive DEST")
    modes = {"scenario": scenario, "send": send, "receive": receive}
    print(json.dumps(modes[sys.argv[2]](int(sys.argv[1]), *sys.argv[3:])))
