"""Fixtures for the STOMP server tests: a fresh in-process broker (also reachable in-process at
``memory_url``) served on a free port, closed afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from jms.broker import Broker, close_embedded_broker, embedded_broker
from tests.stomp.serving import RawClient, ServedBroker


@pytest.fixture
def memory_url() -> Iterator[str]:
    name = f"memory://stomp-server-{uuid.uuid4().hex[:12]}"
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
def client(served: ServedBroker) -> Iterator[RawClient]:
    with RawClient(served.port) as raw:
        raw.connect()
        yield raw
