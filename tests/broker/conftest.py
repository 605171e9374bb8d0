"""Fixtures for broker tests: a broker over a MemoryStore, a connection, and a recording sink."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jms.broker import Broker, Delivery
from jms.store import MemoryStore


class Recorder:
    """A delivery sink that keeps what it was given."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []

    def __call__(self, delivery: Delivery) -> None:
        self.deliveries.append(delivery)

    def texts(self) -> list[str]:
        return [d.message.get_text() for d in self.deliveries]  # type: ignore[attr-defined]

    def tags(self) -> list[int]:
        return [d.tag for d in self.deliveries]

    def take(self) -> list[Delivery]:
        taken, self.deliveries = self.deliveries, []
        return taken


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def broker(store: MemoryStore) -> Iterator[Broker]:
    opened = Broker(store, name="test")
    yield opened
    opened.close()


@pytest.fixture
def connection_id(broker: Broker) -> int:
    return broker.connect()
