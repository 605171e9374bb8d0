"""Staged publishing: messages parked in *staging queues* by many writers, then published by one
atomic, idempotent request to the broker (``Broker.publish_staged``) — how a distributed writer
(the Spark sink) makes a batch visible at once and at most once while its data crosses the
network only once.

A *staged message* is a BytesMessage whose body is the ``jms.message.codec`` encoding of the
message to publish (its destination, headers, properties and body) and whose String property
``STAGING_TAG`` names the writer that staged it (a Spark task attempt). Nobody consumes a staging
queue: its messages are inert until a publish names them. ``StagedRange`` names the staged
messages of one writer in one staging queue (those tagged ``tag`` numbered up to
``through_seq``, ``count`` of them); ``BatchMarker`` names the queue whose marker message
remembers the highest batch id published, so that a batch is published at most once.

This module only defines the format and the request's parts; the broker executes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from jms.errors import MessageFormatException
from jms.message import BytesMessage, Message, Queue, TemporaryQueue
from jms.message.codec import decode

__all__ = ["MARKER_BATCH", "STAGING_TAG", "BatchMarker", "StagedRange", "staged_message", "unstage"]

# Both names are the ones the Spark sink wrote before publishing moved into the broker, so staging
# queues and markers left by an older sink are still understood.
#: On a staged message: the writer (task attempt) that staged it.
STAGING_TAG: Final = "JMS_jms_SparkAttempt"
#: On a batch marker: the highest batch id published.
MARKER_BATCH: Final = "JMS_jms_SparkBatch"

_LONG_MAX: Final = 2**63 - 1


def _check_queue(queue: object, what: str) -> None:
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
        _check_queue(self.queue, "a staging queue")
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
        _check_queue(self.queue, "a marker queue")
        if type(self.batch_id) is not int or not 0 <= self.batch_id <= _LONG_MAX:
            raise ValueError(f"batch_id must be an int from 0 to 2**63-1; got {self.batch_id!r}")


def staged_message(encoded: bytes, tag: str) -> BytesMessage:
    """The staged form of the message whose codec encoding is ``encoded``, tagged ``tag``."""
    wrapper = BytesMessage()
    wrapper._buffer += encoded
    wrapper._properties[STAGING_TAG] = tag
    return wrapper


def unstage(wrapper: Message, where: str) -> Message:
    """The message a staged message carries (``where`` names it in errors)."""
    if not isinstance(wrapper, BytesMessage):
        raise MessageFormatException(
            f"{where} is a {type(wrapper).__name__}, not a staged message (a BytesMessage)"
        )
    try:
        return decode(wrapper._content())
    except MessageFormatException as error:
        raise MessageFormatException(
            f"{where} does not carry a message: {error.reason}", linked_exception=error
        ) from None
