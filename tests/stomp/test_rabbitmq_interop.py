"""stomp-py and our JMS client (plain STOMP, ``ConnectionFactory("stomp://127.0.0.1:PORT",
virtual_host="/")``) exchange a text message with properties, both ways, through a real RabbitMQ
3.x (its STOMP plugin) as installed, with its one virtual host ``/``, started once for this
module. Skips (saying why) only when RabbitMQ cannot be installed or started here. RabbitMQ reads
CONNECT's ``host`` header as the virtual host to open: without the ``virtual_host`` option our
client says ``host:localhost``, which such a node refuses.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tests.stomp.rabbitmq as rabbitmq_module
from jms import ConnectionFactory, DeliveryMode, JMSException, Queue, TextMessage
from tests.stomp.peer_process import free_port
from tests.stomp.rabbitmq import RabbitMQ

stomp = pytest.importorskip("stomp", reason="stomp-py (a dev dependency) is not installed")

requires_rabbitmq = pytest.mark.skipif(
    RabbitMQ.unavailable() is not None, reason=f"RabbitMQ: {RabbitMQ.unavailable()}"
)


class _Inbox(stomp.ConnectionListener):  # type: ignore[misc]
    """The MESSAGE frames stomp-py hands its listener."""

    def __init__(self) -> None:
        self.frames: list[Any] = []
        self.arrived = threading.Event()

    def on_message(self, frame: Any) -> None:
        self.frames.append(frame)
        self.arrived.set()


@pytest.fixture(scope="module")
def rabbitmq() -> Iterator[RabbitMQ]:
    with RabbitMQ() as broker:
        yield broker


@pytest.fixture
def stomp_py(rabbitmq: RabbitMQ) -> Iterator[tuple[Any, _Inbox]]:
    connection = stomp.Connection12([("127.0.0.1", rabbitmq.port)], vhost=rabbitmq.virtual_host)
    inbox = _Inbox()
    connection.set_listener("inbox", inbox)
    connection.connect("guest", "guest", wait=True)
    yield connection, inbox
    connection.disconnect()


@pytest.fixture
def queue_name() -> str:
    return f"interop-{uuid.uuid4().hex[:10]}"


@requires_rabbitmq
def test_it_is_rabbitmq(rabbitmq: RabbitMQ) -> None:
    assert rabbitmq.server.startswith("RabbitMQ/3.")


@requires_rabbitmq
def test_a_jms_text_message_with_properties_reaches_stomp_py(
    rabbitmq: RabbitMQ, stomp_py: tuple[Any, _Inbox], queue_name: str
) -> None:
    connection, inbox = stomp_py
    connection.subscribe(f"/queue/{queue_name}", id="1", ack="auto")
    with ConnectionFactory(rabbitmq.url, virtual_host="/").create_connection() as jms_connection:
        message = TextMessage("héllo from jms")
        message.set_string_property("colour", "red")
        message.set_int_property("weight", 3000)
        message.set_jms_correlation_id("c-1")
        message.set_jms_type("greeting")
        session = jms_connection.create_session()
        session.create_producer(Queue(queue_name)).send(message, priority=7)
    assert inbox.arrived.wait(10), f"stomp-py received nothing on /queue/{queue_name}"
    [frame] = inbox.frames
    assert frame.body == "héllo from jms"
    headers = frame.headers
    assert headers["destination"] == f"/queue/{queue_name}"
    assert (headers["colour"], headers["weight"]) == ("red", "3000")
    assert (headers["correlation-id"], headers["type"]) == ("c-1", "greeting")
    assert (headers["priority"], headers["persistent"]) == ("7", "true")
    assert headers["amq-msg-type"] == "text"


@requires_rabbitmq
def test_a_stomp_py_text_message_with_properties_reaches_jms(
    rabbitmq: RabbitMQ, stomp_py: tuple[Any, _Inbox], queue_name: str
) -> None:
    connection, _ = stomp_py
    connection.send(
        f"/queue/{queue_name}",
        "héllo from stomp-py",
        headers={
            "amq-msg-type": "text",  # else a body with content-length is a BytesMessage (ActiveMQ's rule)
            "persistent": "true",
            "correlation-id": "c-2",
            "colour": "blue",
            "weight": "7",
        },
    )
    with ConnectionFactory(rabbitmq.url, virtual_host="/").create_connection() as jms_connection:
        jms_connection.start()
        session = jms_connection.create_session()
        received = session.create_consumer(Queue(queue_name)).receive(10_000)
    assert isinstance(received, TextMessage), f"got {received!r}"
    assert received.get_text() == "héllo from stomp-py"
    assert received.get_string_property("colour") == "blue"
    assert received.get_string_property("weight") == "7"
    assert received.get_jms_correlation_id() == "c-2"
    assert received.get_jms_delivery_mode() == DeliveryMode.PERSISTENT
    assert received.get_jms_destination() == Queue(queue_name)


@pytest.mark.parametrize("name", ["", "two words", "line\nbreak"])
def test_a_virtual_host_name_with_whitespace_or_none_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="virtual host name") as refused:
        RabbitMQ(virtual_host=name)
    assert repr(name) in str(refused.value)


@requires_rabbitmq
def test_a_node_that_fails_to_start_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its STOMP port is taken: the node exits at startup, and its epmd and directory go too."""
    started: list[subprocess.Popen[bytes]] = []
    directories: list[str] = []

    class RecordedPopen(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *arguments: Any, **options: Any) -> None:
            super().__init__(*arguments, **options)
            started.append(self)

    def recorded_mkdtemp(**options: Any) -> str:
        directories.append(original_mkdtemp(**options))
        return directories[-1]

    original_mkdtemp = tempfile.mkdtemp
    monkeypatch.setattr(subprocess, "Popen", RecordedPopen)
    monkeypatch.setattr(tempfile, "mkdtemp", recorded_mkdtemp)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ports = iter([taken.getsockname()[1]])
        monkeypatch.setattr(rabbitmq_module, "free_port", lambda: next(ports, None) or free_port())
        with pytest.raises(RuntimeError, match="RabbitMQ exited at startup"), RabbitMQ():
            pass
    assert {Path(process.args[0]).name for process in started} == {"epmd", "rabbitmq-server"}
    for process in started:
        assert process.poll() is not None, f"{process.args} still runs"
        if Path(process.args[0]).name == "rabbitmq-server":
            with pytest.raises(ProcessLookupError):  # nothing of the node's process group is left
                os.killpg(process.pid, 0)
    assert not Path(directories[0]).exists()


@requires_rabbitmq
def test_our_client_without_the_virtual_host_option_is_refused_saying_why(
    rabbitmq: RabbitMQ,
) -> None:
    with pytest.raises(JMSException, match=r"Bad CONNECT: .*[Vv]irtual host 'localhost'"):
        ConnectionFactory(rabbitmq.url).create_connection()
