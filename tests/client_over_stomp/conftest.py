"""Fixtures that run the client API tests of ``tests/client`` over STOMP: each test's in-process
broker is served by a ``StompServer`` on a free port, and ``url`` is that server's
``stomp://127.0.0.1:PORT``. ``broker`` is the same broker, for the tests that inspect it, with
one difference: acknowledgements and credit travel without waiting for an answer over STOMP, so
its ``stats()`` first lets the server read and handle what clients already wrote."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from jms.broker import Broker, QueueStats, close_embedded_broker, embedded_broker
from jms.client import Connection, ConnectionFactory, Session
from tests.stomp.serving import ServedBroker


@pytest.fixture
def memory_url() -> Iterator[str]:
    name = f"memory://stomp-{uuid.uuid4().hex[:12]}"
    yield name
    close_embedded_broker(name)


class _SettledBroker:
    """The served broker, whose ``stats()`` waits for frames clients already sent."""

    def __init__(self, broker: Broker) -> None:
        self._broker = broker
        self.served: ServedBroker | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._broker, name)

    def stats(self) -> list[QueueStats]:
        if self.served is not None:
            time.sleep(0.05)  # the client's frames reach the server's socket
            self.served.call(lambda: None)  # and the loop has handled what it read
        return self._broker.stats()


@pytest.fixture
def real_broker(memory_url: str) -> Broker:
    return embedded_broker(memory_url)


@pytest.fixture
def broker(real_broker: Broker) -> _SettledBroker:
    return _SettledBroker(real_broker)


@pytest.fixture
def served(real_broker: Broker, broker: _SettledBroker) -> Iterator[ServedBroker]:
    with ServedBroker(real_broker) as served:
        broker.served = served
        yield served


@pytest.fixture
def url(served: ServedBroker) -> str:
    return served.url


@pytest.fixture
def factory(url: str) -> ConnectionFactory:
    return ConnectionFactory(url)


@pytest.fixture
def connection(factory: ConnectionFactory) -> Iterator[Connection]:
    opened = factory.create_connection()
    opened.start()
    yield opened
    opened.close()


@pytest.fixture
def session(connection: Connection) -> Session:
    return connection.create_session()
