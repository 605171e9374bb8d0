"""Durable storage behind the broker: one small interface (``jms.store.base``) and its
implementations — ``MemoryStore`` for ``memory://`` brokers, ``SQLiteStore``
(``jms.store.sqlite``) for ``embedded:///dir`` ones and ``PostgreSQLStore``
(``jms.store.postgresql``, imported only when used: it needs psycopg) for
``embedded://postgresql://…`` ones; ``jms.store.location`` opens the one a store's name says.

The store sits below the broker and above the message model: it imports ``jms.message`` and
nothing from ``jms.broker`` or ``jms.client``.
"""

from jms.store.base import (
    DONE,
    AddDestination,
    AppendEncodedRun,
    AppendMessage,
    Completion,
    DeleteSubscription,
    DurableSubscriptionRecord,
    EncodedEntry,
    MessageStore,
    MoveEntries,
    RemoveEntry,
    RemoveRange,
    ReserveSequences,
    SaveSubscription,
    SetDeliveryCount,
    StoreContents,
    StoredEntry,
    StoreOperation,
)
from jms.store.memory import MemoryStore

__all__ = [
    "DONE",
    "AddDestination",
    "AppendEncodedRun",
    "AppendMessage",
    "Completion",
    "DeleteSubscription",
    "DurableSubscriptionRecord",
    "EncodedEntry",
    "MemoryStore",
    "MessageStore",
    "MoveEntries",
    "RemoveEntry",
    "RemoveRange",
    "ReserveSequences",
    "SaveSubscription",
    "SetDeliveryCount",
    "StoreContents",
    "StoreOperation",
    "StoredEntry",
]
