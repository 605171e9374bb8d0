"""The broker's memory budget: how many bytes the messages it holds in memory take, the estimate
of one message's share, and what the broker reports about it (``MemoryStats``).

The broker counts every entry a queue or subscription holds in memory (paged-out entries cost
8 bytes and are not counted): ``ENTRY_OVERHEAD`` for the Python objects of one entry and its
message, plus the message's body and properties. A message a topic fans out to several
subscriptions is counted once per subscription — an upper bound, since they share it. What it
does when the count reaches the budget is the broker's (docs/storage.md, "Memory budget"); this
module only measures. Standard library only, no locks (the broker's lock guards the gauge).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from jms.message import (
    BytesMessage,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "ENTRY_OVERHEAD",
    "MemoryBudget",
    "MemoryStats",
    "check_max_memory",
    "message_size",
    "parse_memory_size",
]

#: The broker's memory budget unless configured: bytes of messages held in memory.
DEFAULT_MAX_MEMORY: Final = 64 * 1024 * 1024
#: The smallest budget accepted: below it a single page of stored messages would not fit.
MIN_MAX_MEMORY: Final = 1024 * 1024
#: Bytes one held entry costs besides its body and properties (entry, message object, the
#: queue's dict slots, the message ID), measured on CPython 3.11 to 3.13.
ENTRY_OVERHEAD: Final = 800
# Bytes one message property costs (dict slot, name, boxed value), a typical short one.
_PROPERTY_SIZE: Final = 120
# A value in a map or stream body: its slot and a boxed number or a short string.
_VALUE_SIZE: Final = 64

_UNITS: Final = {"": 1, "b": 1, "kib": 1024, "mib": 1024**2, "gib": 1024**3}
_SIZE: Final = re.compile(r"\s*(\d+)\s*([a-z]*)\s*", re.IGNORECASE)


class MemoryBudget:
    """The state of one broker's memory budget: ``used``, the bytes its queues hold (each
    ``MessageQueue`` adds and takes its entries' sizes), ``limit`` (None: no budget), the
    ``ceiling`` compared with ``used`` (infinite without a budget) and the ``stored_ceiling``
    stored messages may fill, whether producers are held back and who waits for that to end,
    and the counters ``MemoryStats`` reports. Plain state: the broker's lock guards it, the
    broker decides."""

    __slots__ = (
        "ceiling",
        "limit",
        "paged_for_memory",
        "producer_blocks",
        "producers_blocked",
        "slow_consumers_closed",
        "stored_ceiling",
        "used",
        "waiters",
    )

    def __init__(self, limit: int | None, stored_share: float = 1.0) -> None:
        self.used = 0
        self.limit = limit
        self.ceiling: float = limit if limit is not None else float("inf")
        self.stored_ceiling = self.ceiling * stored_share
        self.producers_blocked = False
        self.waiters: list[Callable[[], None]] = []
        self.producer_blocks = 0
        self.slow_consumers_closed = 0
        self.paged_for_memory = 0


@dataclass(frozen=True, slots=True)
class MemoryStats:
    """A snapshot of the broker's memory budget. ``used`` and ``limit`` are bytes (``limit``
    None: no budget); ``producers_blocked`` whether producers are held back now. Counters since
    the broker started: ``producer_blocks`` times the budget was reached and producers were held
    back, ``slow_consumers_closed`` non-durable subscriptions ended (their connections closed) as
    slow consumers, ``paged_for_memory`` stored messages left in the store, or kept to a
    smaller window, because the budget was reached."""

    used: int
    limit: int | None
    producers_blocked: bool
    producer_blocks: int
    slow_consumers_closed: int
    paged_for_memory: int


def message_size(message: Message) -> int:
    """The bytes one held entry of ``message`` is counted for (see the module docstring). Runs
    once per message sent: the common bodies are found by their exact type first."""
    size = ENTRY_OVERHEAD + _PROPERTY_SIZE * len(message._properties)
    kind = type(message)
    if kind is TextMessage or (kind is not BytesMessage and isinstance(message, TextMessage)):
        text = message._text  # type: ignore[attr-defined]
        # A str holds 1 byte a character when all are ASCII, else up to 4 (counted so).
        return size if text is None else size + len(text) * (1 if text.isascii() else 4)
    if isinstance(message, BytesMessage):
        return size + len(message._buffer) + len(message._data)
    if isinstance(message, MapMessage):
        return size + _values_size(message._map.values()) + _VALUE_SIZE * len(message._map)
    if isinstance(message, StreamMessage):
        return size + _values_size(message._values)
    if isinstance(message, ObjectMessage):
        serialized = message._serialized
        return size if serialized is None else size + len(serialized)
    return size


def _values_size(values: object) -> int:
    total = 0
    for value in values:  # type: ignore[attr-defined]
        total += _VALUE_SIZE + (len(value) if isinstance(value, str | bytes | bytearray) else 0)
    return total


def check_max_memory(value: object, where: str) -> int | None:
    """``value`` as a memory budget in bytes (None: no budget), or ``ValueError`` saying what is
    wrong with it and ``where`` it came from."""
    if value is None:
        return None
    if type(value) is not int or value < MIN_MAX_MEMORY:
        raise ValueError(
            f"{where}: the memory budget must be a whole number of bytes of at least "
            f"{MIN_MAX_MEMORY} (1MiB); got {value!r}"
        )
    return value


def parse_memory_size(text: str, where: str) -> int:
    """Bytes written as ``67108864``, ``65536KiB``, ``64MiB`` or ``1GiB`` (units case-blind);
    ``ValueError`` says what is wrong, ``where``, and how to write it."""
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match is not None else ""
    if match is None or unit not in _UNITS:
        raise ValueError(
            f"{where}: {text!r} is not a size; write bytes as a whole number with an optional "
            "unit B, KiB, MiB or GiB, e.g. 64MiB"
        )
    size = check_max_memory(int(match.group(1)) * _UNITS[unit], where)
    assert size is not None
    return size
