"""Java's ``byte[]`` argument rules shared by the Bytes, Stream and Map bodies: a value sliced by
``offset``/``length`` (``writeBytes(value, offset, length)``, ``setBytes``) and a buffer filled up
to ``length`` (``readBytes(value, length)``), each checked as Java checks them, with
``ValueError`` standing for IndexOutOfBoundsException. Pure functions, no state.
"""

from __future__ import annotations

__all__ = ["read_length", "slice_of"]


def slice_of(value: object, offset: int, length: int | None, what: str) -> bytes:
    """A copy of ``value[offset:offset+length]`` (``length`` None: to the end), checked."""
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"{what} takes bytes, got {type(value).__name__}")
    end = len(value) if length is None else offset + length
    if not 0 <= offset <= len(value) or (length is not None and length < 0) or end > len(value):
        raise ValueError(
            f"{what}: offset {offset} and length {length} do not fit a value of {len(value)} bytes"
        )
    return bytes(value[offset:end])


def read_length(buffer: object, length: int | None, what: str) -> int:
    """How many bytes a read into ``buffer`` may fill: ``length``, or all of it when None."""
    if not isinstance(buffer, bytearray):
        raise TypeError(f"{what} fills a bytearray, got {type(buffer).__name__}")
    wanted = len(buffer) if length is None else length
    if not 0 <= wanted <= len(buffer):
        raise ValueError(
            f"{what} length {length} must be between 0 and the buffer size {len(buffer)}"
        )
    return wanted
