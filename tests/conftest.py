"""Fixtures shared across test directories: a throwaway PostgreSQL server (one per test session,
started on first use) and a fresh database on it per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgresql_server import PostgreSQLServer


@pytest.fixture(scope="session")
def postgresql_server() -> Iterator[PostgreSQLServer]:
    reason = PostgreSQLServer.unavailable()
    if reason is not None:
        pytest.skip(f"no PostgreSQL server for this test: {reason}")
    with PostgreSQLServer() as server:
        yield server


@pytest.fixture
def postgresql_url(postgresql_server: PostgreSQLServer) -> str:
    """The URL of a fresh database: a store of its own for this test."""
    return postgresql_server.database()
