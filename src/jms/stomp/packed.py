"""The packed body of a range read (docs/stomp.md, "Range reads"): many messages in one MESSAGE
frame, each as its sequence number and its ``jms.message.codec`` encoding.

A body is a run of records, each ``seq`` (8 bytes, unsigned, big-endian), ``length`` (4 bytes,
unsigned, big-endian) and ``length`` bytes of codec encoding; the frame's ``jms-count`` header
says how many records it holds. ``pack_records`` writes one; ``unpack_records`` reads one from a
peer and checks every length against the bytes present, so a truncated or forged body is a
``StompProtocolError`` naming what is wrong and where, never an ``IndexError``. A server writes
``packed_parts`` instead of ``pack_records``: one join of a whole answer then copies each message
once.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Final

from jms.stomp.errors import StompProtocolError

__all__ = [
    "PACKED_CONTENT_TYPE",
    "RECORD_HEAD_SIZE",
    "pack_records",
    "packed_parts",
    "unpack_records",
]

#: The content-type of a MESSAGE frame whose body is packed records.
PACKED_CONTENT_TYPE: Final = "application/x-jms-packed"

_RECORD_HEAD: Final = struct.Struct(">QI")
#: Bytes a record takes besides its encoding.
RECORD_HEAD_SIZE: Final = _RECORD_HEAD.size


def pack_records(seqs: Sequence[int], messages: Sequence[bytes]) -> bytes:
    """The packed body of ``messages`` numbered ``seqs`` (the same length)."""
    return b"".join(packed_parts(seqs, messages))


def packed_parts(seqs: Sequence[int], messages: Sequence[bytes]) -> list[bytes]:
    """The packed body of ``messages`` numbered ``seqs`` as the pieces that joined make it (each
    record's head, then its encoding), for a writer that joins them once with more."""
    if len(seqs) != len(messages):
        raise ValueError(f"{len(seqs)} sequence numbers for {len(messages)} messages")
    pack = _RECORD_HEAD.pack
    parts: list[bytes] = []
    for seq, data in zip(seqs, messages, strict=True):
        parts.append(pack(seq, len(data)))
        parts.append(data)
    return parts


def unpack_records(body: bytes, count: int) -> tuple[list[int], list[bytes]]:
    """The ``count`` records of a packed ``body``: their sequence numbers, which must rise, and
    their encodings; ``StompProtocolError`` unless the body holds exactly that."""
    seqs: list[int] = []
    messages: list[bytes] = []
    unpack_from = _RECORD_HEAD.unpack_from
    head = RECORD_HEAD_SIZE
    end = len(body)
    offset = 0
    previous = 0
    for number in range(count):
        if end - offset < head:
            raise StompProtocolError(
                f"packed body truncated: record {number + 1} of {count} needs a {head}-byte head "
                f"at byte {offset}, but only {end - offset} bytes remain"
            )
        seq, length = unpack_from(body, offset)
        offset += head
        if length > end - offset:
            raise StompProtocolError(
                f"packed body truncated: record {number + 1} of {count} (seq {seq}) declares "
                f"{length} bytes at byte {offset}, but only {end - offset} remain"
            )
        if seq <= previous:
            raise StompProtocolError(
                f"packed body out of order: record {number + 1} has seq {seq} after {previous}"
            )
        seqs.append(seq)
        messages.append(body[offset : offset + length])
        offset += length
        previous = seq
    if offset != end:
        raise StompProtocolError(
            f"packed body has {end - offset} bytes after its {count} records (at byte {offset})"
        )
    return seqs, messages
