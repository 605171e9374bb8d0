"""``StoreSnapshot``: a read-only view of a SQLite store directory — a stopped broker's store, or a
copy of a live one (docs/storage.md says how to take it) — for readers such as the Spark source.

It opens ``jms-store.sqlite3`` with ``mode=ro``: it never writes, never takes the directory lock
(so a copy can be read while its broker runs elsewhere) and never changes what a broker would
recover. It reads what a broker would hold: the entries of a queue or durable subscription by
sequence number, each message as the broker's browse shows it (``JMSRedelivered`` set when it was
delivered before). It knows the schema of ``jms.store.sqlite`` and refuses any other version.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from jms.errors import IllegalStateException
from jms.message.codec import with_redelivered
from jms.store.reading import SnapshotReader
from jms.store.sqlite import DATABASE_NAME, ENTRY_ROWS, SCHEMA_VERSION

__all__ = ["StoreSnapshot"]


class StoreSnapshot(SnapshotReader):
    """The store in ``directory``, read-only; a context manager."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.label = f"the store in {str(self.directory)!r}"
        path = self.directory / DATABASE_NAME
        if not path.is_file():
            raise IllegalStateException(
                f"{str(self.directory)!r} holds no jms store: {DATABASE_NAME} is not there"
            )
        try:
            self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            (version,) = self._db.execute("PRAGMA user_version").fetchone()
        except sqlite3.Error as error:
            raise IllegalStateException(
                f"cannot read the store in {str(self.directory)!r}: {error}"
            ) from error
        self._require_schema(version, SCHEMA_VERSION)

    def close(self) -> None:
        self._db.close()

    def _subscription(
        self, subscription_name: str | None, client_id: str | None
    ) -> tuple[str, str] | None:
        row = self._db.execute(
            "SELECT key, topic FROM subscriptions WHERE name = ? AND client_id IS ?",
            (subscription_name, client_id),
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def sequence_bounds(self, key: str) -> tuple[int, int] | None:
        first, last = self._db.execute(
            "SELECT min(seq), max(seq) FROM live_entries WHERE queue = ?", (key,)
        ).fetchone()
        return None if first is None else (int(first), int(last))

    def read_encoded(
        self, key: str, start_seq: int, end_seq: int, limit: int
    ) -> list[tuple[int, bytes]]:
        rows = self._db.execute(ENTRY_ROWS, (key, start_seq, end_seq, limit)).fetchall()
        return [
            (int(seq), with_redelivered(data, delivery_count > 0))
            for seq, _, delivery_count, data in rows
        ]
