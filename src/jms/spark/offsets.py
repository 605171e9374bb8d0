"""Offsets of the ``jms`` Spark source: broker sequence numbers as JSON, and offset ranges split
into partitions.

An offset is the **next sequence number to read** of one destination, as in Spark's Kafka source
(a start offset is inclusive, an end offset exclusive): ``{"queue://orders": 43}`` means every
message numbered up to 42 is behind the reader. The JSON object is keyed by the destination
(for a durable subscription, its topic), written with sorted keys so the same offset is always
the same text. ``startingOffsets``/``endingOffsets`` also accept ``"earliest"`` and ``"latest"``,
and inside the JSON Kafka's ``-2`` (earliest) and ``-1`` (latest). A range ``[start, end)`` becomes
partitions of consecutive numbers.

A stream's offsets also carry ``streamStart``, the number the stream started at, and
``selector``, the ``selector`` option its batches were read with (``{"queue://orders": 43,
"selector": null, "streamStart": 31}``): a stream consumes what it has read, and it has read
nothing numbered below its start, nor anything its selector did not match, so its consumption
never reaches either. This module is pure: it never talks to a broker.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "EARLIEST",
    "LATEST",
    "SELECTOR",
    "STREAM_START",
    "OffsetDict",
    "SequenceRange",
    "StreamOffset",
    "offset_dict",
    "offset_json",
    "parse_offset_option",
    "split_range",
    "stream_offset_of",
]

#: Kafka's JSON sentinels: -2 is the earliest available offset, -1 the latest.
EARLIEST: Final = -2
LATEST: Final = -1


@dataclass(frozen=True, slots=True)
class SequenceRange:
    """The sequence numbers ``start <= seq < end`` of one destination."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not 1 <= self.start <= self.end:
            raise ValueError(f"a sequence range needs 1 <= start <= end; got {self}")

    @property
    def size(self) -> int:
        return self.end - self.start


def offset_dict(key: str, next_seq: int) -> dict[str, int]:
    """The offset of ``key`` (a destination's text) as the dict Spark stores."""
    return {key: next_seq}


def offset_json(offsets: Mapping[str, object]) -> str:
    """Offsets as JSON text with sorted keys: one offset, one text."""
    return json.dumps(offsets, sort_keys=True, separators=(",", ":"))


#: An offset as Spark stores it: the destination's next number, and a stream's other fields.
OffsetDict = dict[str, int | str | None]

#: The key of a stream offset's starting number.
STREAM_START: Final = "streamStart"
#: The key of a stream offset's selector (null: none).
SELECTOR: Final = "selector"


@dataclass(frozen=True, slots=True)
class StreamOffset:
    """A stream's position: ``next_seq`` is the next number to read, ``stream_start`` the number
    the stream started at (it consumes nothing below it), ``selector`` the ``selector`` option
    its batches up to ``next_seq`` were read with (it consumes nothing else)."""

    next_seq: int
    stream_start: int
    selector: str | None

    def to_dict(self, key: str) -> OffsetDict:
        """The offset of ``key`` (a destination's text) as the dict Spark stores."""
        return {key: self.next_seq, SELECTOR: self.selector, STREAM_START: self.stream_start}


def stream_offset_of(offset: Any, key: str, what: str, selector_now: str | None) -> StreamOffset:
    """The stream offset an offset dict (from Spark's checkpoint) holds for ``key``; ``ValueError``
    saying ``what`` it was if it is not a stream offset of that destination. Offsets written by
    earlier versions go on as they did: without ``streamStart`` the stream started at 1 (it
    consumed from the lowest number), without ``selector`` it read with ``selector_now``."""
    expected = offset_json(StreamOffset(43, 31, None).to_dict(key))
    if (
        not isinstance(offset, dict)
        or not set(offset) <= {key, STREAM_START, SELECTOR}
        or key not in offset
    ):
        raise ValueError(
            f"{what} {offset!r} is not an offset of {key}: expected {expected}, the next sequence "
            "number to read, the selector read with and the number the stream started at (was "
            "the checkpoint written for another destination?)"
        )
    next_seq, stream_start = offset[key], offset.get(STREAM_START, 1)
    selector = offset.get(SELECTOR, selector_now)
    if (
        type(next_seq) is not int
        or type(stream_start) is not int
        or not 1 <= stream_start <= next_seq
    ):
        raise ValueError(
            f"{what} {offset!r} is not an offset of {key}: expected {expected}, with "
            f"1 <= {STREAM_START} <= the next sequence number"
        )
    if selector is not None and (type(selector) is not str or not selector.strip()):
        raise ValueError(
            f"{what} {offset!r} is not an offset of {key}: its {SELECTOR} must be a selector's "
            "text or null"
        )
    return StreamOffset(next_seq, stream_start, selector)


def parse_offset_option(option: str, text: str, key: str, *, earliest_allowed: bool) -> int:
    """The value of a ``startingOffsets``/``endingOffsets`` option for the destination ``key``:
    a next sequence number, ``EARLIEST`` or ``LATEST``. Errors name the option and the value."""
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered == "earliest" and earliest_allowed:
        return EARLIEST
    if lowered == "latest":
        return LATEST
    words = '"earliest", "latest"' if earliest_allowed else '"latest"'
    example = offset_json(offset_dict(key, 42))
    try:
        value = json.loads(stripped, object_pairs_hook=_refusing_repeated_keys)
    except json.JSONDecodeError:
        raise ValueError(
            f"option {option} is {text!r}; expected {words} or JSON like {example}"
        ) from None
    except _RepeatedKey as repeated:
        raise ValueError(
            f"option {option} is {text!r}, which gives {repeated.key} twice; give each "
            "destination once"
        ) from None
    if not isinstance(value, dict) or set(value) != {key}:
        named = sorted(value) if isinstance(value, dict) else type(value).__name__
        raise ValueError(
            f"option {option} is {text!r}, which names {named}; it must name exactly the "
            f"destination read, {key}, as in {example}"
        )
    seq = value[key]
    allowed = {LATEST} | ({EARLIEST} if earliest_allowed else set())
    if type(seq) is not int or (seq < 1 and seq not in allowed):
        sentinels = "-2 (earliest), -1 (latest)" if earliest_allowed else "-1 (latest)"
        raise ValueError(
            f"option {option} gives {key} the offset {seq!r}; an offset is the next sequence "
            f"number to read (at least 1), or {sentinels}"
        )
    return int(seq)


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _refusing_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice (``json`` keeps the last silently)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _RepeatedKey(key)
        found[key] = value
    return found


def split_range(
    whole: SequenceRange, min_partitions: int, max_per_partition: int
) -> list[SequenceRange]:
    """``whole`` as consecutive ranges: at least ``min_partitions`` of them (as far as it has
    numbers) and none wider than ``max_per_partition``; sizes differ by at most one."""
    if min_partitions < 1 or max_per_partition < 1:
        raise ValueError(
            f"min_partitions and max_per_partition must be at least 1; got {min_partitions}, "
            f"{max_per_partition}"
        )
    if whole.size == 0:
        return []
    count = min(whole.size, max(min_partitions, math.ceil(whole.size / max_per_partition)))
    base, extra = divmod(whole.size, count)
    ranges = []
    start = whole.start
    for index in range(count):
        end = start + base + (1 if index < extra else 0)
        ranges.append(SequenceRange(start, end))
        start = end
    return ranges
