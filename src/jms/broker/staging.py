"""Staged publishing: messages parked in *staging queues* by many writers, then published by one
atomic, idempotent request to the broker (``Broker.publish_staged``) — how a distributed writer
(the Spark sink) makes a batch visible at once and at most once while its data crosses the
network only once.

A *staged message* is a BytesMessage whose body is the ``jms.message.codec`` encoding of the
message to publish (its destination, headers, properties and body) and whose String property
``STAGING_TAG`` names the writer that staged it (a Spark task attempt). ``Broker.stage_encoded``
makes them from the encodings as they arrive, without decoding them (over STOMP, many in one
``/admin/stage`` frame: ``stage_frames``). Nobody consumes a staging queue: its messages are inert
until a publish names them. ``StagedRange`` names the staged messages of one writer in one
staging queue (those tagged ``tag`` numbered up to ``through_seq``, ``count`` of them);
``BatchMarker`` names the queue whose marker message remembers the highest batch id published,
so that a batch is published at most once.

This module only defines the format and the request's parts; the broker executes it.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from jms.errors import MessageFormatException
from jms.message import BytesMessage, Message, Queue, TemporaryQueue
from jms.message.codec import decode, split_bytes_message

__all__ = [
    "MARKER_BATCH",
    "STAGING_TAG",
    "BatchMarker",
    "StagedRange",
    "StoredStaging",
    "check_stage_request",
    "check_staging_queue",
    "split_stage_frames",
    "stage_frames",
    "staged_message",
    "unstage",
]

# Both names are the ones the Spark sink wrote before publishing moved into the broker, so staging
# queues and markers left by an older sink are still understood.
#: On a staged message: the writer (task attempt) that staged it.
STAGING_TAG: Final = "JMS_jms_SparkAttempt"
#: On a batch marker: the highest batch id published.
MARKER_BATCH: Final = "JMS_jms_SparkBatch"

_LONG_MAX: Final = 2**63 - 1
_LENGTH: Final = struct.Struct(">I")


def check_staging_queue(queue: object, what: str = "a staging queue") -> None:
    """``ValueError`` unless ``queue`` is a Queue that outlives connections (not temporary)."""
    if not isinstance(queue, Queue) or isinstance(queue, TemporaryQueue):
        raise ValueError(f"{what} must be a (non-temporary) Queue; got {queue!r}")


@dataclass(frozen=True, slots=True)
class StagedRange:
    """The ``count`` messages tagged ``tag`` that ``queue`` holds numbered up to ``through_seq``."""

    queue: Queue
    tag: str
    through_seq: int
    count: int

    def __post_init__(self) -> None:
        check_staging_queue(self.queue)
        if not isinstance(self.tag, str) or not self.tag:
            raise ValueError(f"a staging tag is a non-empty string; got {self.tag!r}")
        for name, value in (("through_seq", self.through_seq), ("count", self.count)):
            if type(value) is not int or not 0 <= value <= _LONG_MAX:
                raise ValueError(f"{name} must be an int from 0 to 2**63-1; got {value!r}")


@dataclass(frozen=True, slots=True)
class BatchMarker:
    """Publish as batch ``batch_id`` of the writer whose marker lives in ``queue``: nothing is
    published if the marker there already holds ``batch_id`` or a higher one."""

    queue: Queue
    batch_id: int

    def __post_init__(self) -> None:
        check_staging_queue(self.queue, "a marker queue")
        if type(self.batch_id) is not int or not 0 <= self.batch_id <= _LONG_MAX:
            raise ValueError(f"batch_id must be an int from 0 to 2**63-1; got {self.batch_id!r}")


def check_stage_request(queue: object, tag: object, encoded: Sequence[object]) -> None:
    """``ValueError``/``TypeError`` saying what is wrong with a request to stage ``encoded`` in
    ``queue`` tagged ``tag``."""
    check_staging_queue(queue)
    if not isinstance(tag, str) or not tag:
        raise ValueError(f"a staging tag is a non-empty string; got {tag!r}")
    for index, item in enumerate(encoded):
        if not isinstance(item, bytes):
            raise TypeError(
                f"staged message {index} is a {type(item).__name__}; encodings are bytes"
            )


def staged_message(encoded: bytes, tag: str) -> BytesMessage:
    """The staged form of the message whose codec encoding is ``encoded``, tagged ``tag`` (its
    body is read-only, as a received message's: it is sent, never written to)."""
    wrapper = BytesMessage()
    wrapper._data = encoded
    wrapper._reading = True
    wrapper._properties[STAGING_TAG] = tag
    return wrapper


def stage_frames(encoded: Sequence[bytes]) -> bytes:
    """Codec encodings, each after its length as 4 bytes big-endian: the body of a STOMP
    ``/admin/stage`` request (docs/stomp.md)."""
    return b"".join(part for item in encoded for part in (_LENGTH.pack(len(item)), item))


def split_stage_frames(body: bytes) -> list[bytes]:
    """The encodings ``stage_frames`` joined (``ValueError`` saying where it is not that)."""
    items: list[bytes] = []
    view = memoryview(body)
    offset = 0
    while offset < len(body):
        if offset + 4 > len(body):
            raise ValueError(
                f"a staged message's length at byte {offset} is cut off: {len(body) - offset} of "
                "its 4 bytes"
            )
        (length,) = _LENGTH.unpack_from(body, offset)
        offset += 4
        if offset + length > len(body):
            raise ValueError(
                f"the staged message at byte {offset} claims {length} bytes; only "
                f"{len(body) - offset} follow"
            )
        items.append(bytes(view[offset : offset + length]))
        offset += length
    return items


def unstage(wrapper: Message, where: str) -> tuple[Message, bytes]:
    """The message a staged message carries, and its encoding (``where`` names it in errors)."""
    if not isinstance(wrapper, BytesMessage):
        raise MessageFormatException(
            f"{where} is a {type(wrapper).__name__}, not a staged message (a BytesMessage)"
        )
    return _carried(wrapper._content(), where)


def _carried(encoded: bytes, where: str) -> tuple[Message, bytes]:
    try:
        return decode(encoded), encoded
    except MessageFormatException as error:
        raise MessageFormatException(
            f"{where} does not carry a message: {error.reason}", linked_exception=error
        ) from None


class StoredStaging:
    """Reads the staged messages tagged ``tag`` from their stored encodings (a staging queue's
    paged-out entries) without decoding the staged messages themselves: each is a BytesMessage
    whose head (headers and properties, ``codec.split_bytes_message``) is shared by every message
    staged by the same request, so a head is decoded once and each message after it is only
    checked to be that head, its body's length and its body."""

    __slots__ = ("_head", "_heads", "_tag", "_tagged")

    def __init__(self, tag: str) -> None:
        self._tag = tag
        self._heads: dict[bytes, bool] = {}  # head -> whether it is tagged ``tag``
        self._head: bytes | None = None  # the last head met, and whether it is tagged ``tag``
        self._tagged = False

    def unstage(self, encoded: bytes, where: str) -> tuple[Message, bytes] | None:
        """The message the stored message ``encoded`` carries, and its encoding, if it is a staged
        message tagged ``tag``; None if it is not tagged so (``where`` names it in errors)."""
        head = self._head
        start = 0 if head is None else len(head) + _LENGTH.size
        if (
            head is not None
            and encoded.startswith(head)
            and len(encoded) >= start
            and _LENGTH.unpack_from(encoded, len(head))[0] == len(encoded) - start
        ):
            return _carried(encoded[start:], where) if self._tagged else None
        try:
            head, body = split_bytes_message(encoded)
        except MessageFormatException:
            wrapper = decode(encoded)  # not a BytesMessage: refused if it is tagged ``tag``
            if wrapper._properties.get(STAGING_TAG) == self._tag:
                return unstage(wrapper, where)
            return None
        tagged = self._heads.get(head)
        if tagged is None:
            wrapper = decode(head + bytes(_LENGTH.size))
            tagged = self._heads[head] = wrapper._properties.get(STAGING_TAG) == self._tag
        self._head, self._tagged = head, tagged
        return _carried(body, where) if tagged else None
