"""Fixtures for client tests: a fresh named in-process broker per test, closed afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from jms.broker import Broker, close_embedded_broker, embedded_broker
from jms.client import Connection, ConnectionFactory, Session


@pytest.fixture
def url() -> Iterator[str]:
    name = f"memory://test-{uuid.uuid4().hex[:12]}"
    yield name
    close_embedded_broker(name)


@pytest.fixture
def broker(url: str) -> Broker:
    return embedded_broker(url)


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
