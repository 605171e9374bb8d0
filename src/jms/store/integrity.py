"""What ``SQLiteStore`` checks when it opens a store file, and how it brings an older schema up to
date: a damaged or truncated file is refused with its name and what to do, never opened as an
empty store; a store written by an older ``jms`` is migrated in one transaction.

The checks, cheapest first: the file must not be empty when the directory already held a store
(SQLite would take a zero-byte file for a new, empty database), its header must be SQLite's, it
must be at least as long as its header says (a truncated copy is shorter; not while a write-ahead
log holds pages a killed checkpoint had not yet copied), and ``PRAGMA
quick_check`` must pass (every page and index readable; about 1.5 s per GB read from the page
cache). Each migration takes a store from one ``user_version`` to the next; docs/storage.md lists
them.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Final

from jms.errors import IllegalStateException

__all__ = ["DamagedStoreError", "check_file", "check_pages", "damaged", "upgrade_schema"]

logger = logging.getLogger(__name__)

_HEADER: Final = b"SQLite format 3\x00"
_HEADER_LENGTH: Final = 100
_RESTORE: Final = (
    'restore the last backup into an empty directory (docs/storage.md, "Backing up and restoring")'
)


class DamagedStoreError(IllegalStateException):
    """The store file is damaged or truncated; the message names the file and what to do."""


def check_file(path: Path, *, had_store: bool) -> None:
    """Refuse a database file that is empty although the directory held a store before
    (``had_store``: its lock file existed), that is not an SQLite database, or that is shorter
    than its header says. A missing file is a new store."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        if had_store:
            raise DamagedStoreError(
                f"the store file {path} is empty (0 bytes): it was truncated or never written; "
                f"{_RESTORE}, or delete the file to start an empty store"
            )
        return
    with open(path, "rb") as file:
        header = file.read(_HEADER_LENGTH)
    if len(header) < _HEADER_LENGTH or not header.startswith(_HEADER):
        raise DamagedStoreError(
            f"the store file {path} is not an SQLite database (its first {_HEADER_LENGTH} bytes "
            f"are not an SQLite header); {_RESTORE}"
        )
    page_size = int.from_bytes(header[16:18], "big")
    if page_size == 1:
        page_size = 65536
    pages = int.from_bytes(header[28:32], "big")
    change_counter, valid_for = header[24:28], header[92:96]
    # The page count in the header is only trustworthy when written with the current change
    # counter (SQLite's own rule); a legacy writer leaves it stale, and quick_check still runs.
    # Nor is the file's length while a write-ahead log is beside it: a checkpoint writes page 1
    # before the pages that lengthen the file, so one killed midway leaves a short file whose
    # missing pages the log still holds, and SQLite reads them from there (quick_check follows).
    wal = path.with_name(path.name + "-wal")
    checkpointing = wal.exists() and wal.stat().st_size > 0
    if change_counter == valid_for and size < pages * page_size and not checkpointing:
        raise DamagedStoreError(
            f"the store file {path} is truncated: {size:,} bytes where its header says "
            f"{pages * page_size:,}; {_RESTORE}"
        )


def check_pages(connection: sqlite3.Connection, path: Path) -> None:
    """``PRAGMA quick_check`` on ``connection``: every page readable, every index consistent."""
    problems = [" ".join(row[0].split()) for row in connection.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        raise DamagedStoreError(
            f"the store file {path} is damaged ({'; '.join(problems)}); {_RESTORE}"
        )


def damaged(path: Path, error: sqlite3.DatabaseError) -> DamagedStoreError:
    """The error to raise when SQLite itself fails reading ``path`` while opening it."""
    return DamagedStoreError(f"the store file {path} is damaged ({error}); {_RESTORE}")


def _version_1_to_2(connection: sqlite3.Connection) -> None:
    """2: ``sequences.reserved`` (a store of version 1 may already have it) and ``messages`` as a
    rowid table (version 1 had it WITHOUT ROWID)."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(sequences)")}
    if "reserved" not in columns:
        connection.execute("ALTER TABLE sequences ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0")
    connection.execute(
        "CREATE TABLE messages_v2 (log TEXT NOT NULL, seq INTEGER NOT NULL, "
        "refs INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (log, seq))"
    )
    connection.execute(
        "INSERT INTO messages_v2 (log, seq, refs, data) SELECT log, seq, refs, data FROM messages"
    )
    connection.execute("DROP TABLE messages")
    connection.execute("ALTER TABLE messages_v2 RENAME TO messages")


def _version_3_to_4(connection: sqlite3.Connection) -> None:
    """4: ``entries.message_seq``, a moved entry's message's number in its log (``MoveEntries``);
    a store older than 3 whose tables the current schema script created may have it already."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(entries)")}
    if "message_seq" not in columns:
        connection.execute("ALTER TABLE entries ADD COLUMN message_seq INTEGER")


#: The migration from each version to the next.
_MIGRATIONS: Final[dict[int, Callable[[sqlite3.Connection], None]]] = {
    1: _version_1_to_2,
    # 3 adds the ``consumed`` table and the ``live_entries`` view, which the schema script
    # creates in every store it opens: a version 2 store only needs its number raised. A jms
    # that reads version 2 must not open it: it would not know that consumed entries are gone.
    2: lambda connection: None,
    3: _version_3_to_4,
}


def upgrade_schema(connection: sqlite3.Connection, path: Path, current: int) -> None:
    """Bring the store on ``connection`` (in autocommit mode) from its ``user_version`` to
    ``current``, all steps in one transaction: a failure leaves it as it was. Version 0 is a
    store just created with the current schema; a store newer than ``current`` is refused."""
    (version,) = connection.execute("PRAGMA user_version").fetchone()
    if version == 0:
        connection.execute(f"PRAGMA user_version={current}")
        return
    if version > current:
        raise IllegalStateException(
            f"the store file {path} has schema version {version}, newer than this jms reads "
            f"({current}); run the jms version that wrote it, or restore a backup taken "
            "before that upgrade (docs/storage.md)"
        )
    if version == current:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        for step in range(version, current):
            _MIGRATIONS[step](connection)
        connection.execute(f"PRAGMA user_version={current}")
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    logger.warning(
        "upgraded the store file %s from schema version %d to %d", path, version, current
    )
