"""Where a store is: a directory (the SQLite store) or a ``postgresql://`` URL (the PostgreSQL
store) — one text names either, wherever a store is named (``jms broker --store``,
``embedded://…`` broker URLs, the Spark source's ``store`` option, read through ``open_snapshot``).
``jms.store.postgresql`` (and psycopg) is imported only when a URL names it."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

from jms.errors import JMSException
from jms.store.base import MessageStore
from jms.store.reading import SnapshotReader
from jms.store.snapshot import StoreSnapshot
from jms.store.sqlite import SQLiteStore

__all__ = [
    "describe_store",
    "is_postgresql_url",
    "open_snapshot",
    "open_store",
    "postgresql_module",
]

#: The URL schemes that name a PostgreSQL store (libpq accepts both).
_POSTGRESQL_PREFIXES = ("postgresql://", "postgres://")


def is_postgresql_url(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` names a PostgreSQL store rather than a directory."""
    return isinstance(location, str) and location.startswith(_POSTGRESQL_PREFIXES)


def open_store(location: str | os.PathLike[str]) -> MessageStore:
    """The store at ``location``, opened (and created if new): a PostgreSQL database for a
    ``postgresql://`` URL, else the SQLite store in that directory."""
    if is_postgresql_url(location):
        return postgresql_module().PostgreSQLStore(str(location))
    return SQLiteStore(Path(location).expanduser().resolve())


def open_snapshot(location: str | os.PathLike[str]) -> SnapshotReader:
    """A read-only view of the store at ``location``; close it after use."""
    if is_postgresql_url(location):
        snapshot: SnapshotReader = postgresql_module().PostgreSQLSnapshot(str(location))
        return snapshot
    return StoreSnapshot(location)


def describe_store(location: str | os.PathLike[str]) -> str:
    """``location`` as a log or a startup line shows it (a URL without its password)."""
    if is_postgresql_url(location):
        return postgresql_module().describe_url(str(location))
    return str(Path(location).expanduser().resolve())


def postgresql_module() -> ModuleType:
    """``jms.store.postgresql``, or a ``JMSException`` saying how to install what it needs."""
    try:
        from jms.store import postgresql
    except ImportError as error:
        raise JMSException(
            f"a postgresql:// store needs psycopg, which is not installed ({error}); "
            "pip install 'jms[postgresql]'"
        ) from None
    return postgresql
