"""Fixtures that run the client API tests of ``tests/client`` over STOMP: each test's in-process
broker is served by a ``StompServer`` on a free port, and ``url`` is that server's
``stomp://127.0.0.1:PORT`` (``broker`` is the same broker, for the tests that inspect it)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from jms.broker import Broker, close_embedded_broker, embedded_broker
from jms.client import Connection, ConnectionFactory, Session
from tests.stomp.serving import ServedBroker


@pytest.fixture
def memory_url() -> Iterator[str]:
    name = f"memory://stomp-{uuid.uuid4().hex[:12]}"
    yield name
    close_embedded_broker(name)


@pytest.fixture
def broker(memory_url: str) -> Broker:
    return embedded_broker(memory_url)


@pytest.fixture
def served(broker: Broker) -> Iterator[ServedBroker]:
    with ServedBroker(broker) as served:
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
