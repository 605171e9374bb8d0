"""``SnapshotReader``: what the read-only views of a store have in common — ``StoreSnapshot`` (a
SQLite directory, ``jms.store.snapshot``) and ``PostgreSQLSnapshot`` (``jms.store.postgresql``) —
for readers such as the Spark source, which take either (``jms.store.location.open_snapshot``)."""

from __future__ import annotations

from abc import ABC, abstractmethod

from jms.errors import IllegalStateException, InvalidDestinationException
from jms.message import Queue, Topic

__all__ = ["SnapshotReader"]


class SnapshotReader(ABC):
    """A read-only view of a store; a context manager. ``label`` names the store in errors
    ("the store in '/var/lib/jms'")."""

    label: str

    def __enter__(self) -> SnapshotReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @abstractmethod
    def close(self) -> None:
        """Release the view's connection."""

    def _require_schema(self, version: int, readable: int) -> None:
        """Close the view and refuse a store whose schema version this jms does not read."""
        if version != readable:
            self.close()
            raise IllegalStateException(
                f"{self.label} has schema version {version}; this jms reads version {readable}"
            )

    def queue_key(
        self,
        destination: Queue | Topic,
        subscription_name: str | None = None,
        client_id: str | None = None,
    ) -> str:
        """The store's name for a queue, or for the durable subscription ``subscription_name``
        (of ``client_id``) of a topic; ``InvalidDestinationException`` if the store has none."""
        if isinstance(destination, Queue):
            return str(destination)
        found = self._subscription(subscription_name, client_id)
        if found is None or found[1] != str(destination):
            where = f"it is on {found[1]}" if found is not None else "there is none"
            raise InvalidDestinationException(
                f"{self.label} has no durable subscription {subscription_name!r} "
                f"(client ID {client_id!r}) of {destination}: {where}"
            )
        return found[0]

    @abstractmethod
    def _subscription(
        self, subscription_name: str | None, client_id: str | None
    ) -> tuple[str, str] | None:
        """``(key, topic)`` of the durable subscription so named, or None."""

    @abstractmethod
    def sequence_bounds(self, key: str) -> tuple[int, int] | None:
        """``(first, last)`` sequence numbers of the messages ``key`` holds, None if none."""

    @abstractmethod
    def read_encoded(
        self, key: str, start_seq: int, end_seq: int, limit: int
    ) -> list[tuple[int, bytes]]:
        """Up to ``limit`` messages of ``key`` numbered ``start_seq`` to ``end_seq``, in order,
        as ``(seq, codec bytes)`` -- as stored, with JMSRedelivered set from their delivery
        count, as the broker would show them."""
