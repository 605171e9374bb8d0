"""The two ways a STOMP conversation goes wrong: the peer broke the protocol, or we misused it.

``StompProtocolError`` is raised for anything the remote peer sent that STOMP does not allow
(malformed frames, limits exceeded, frames out of order); it carries what the answering ERROR
frame needs (the offending frame's ``receipt`` and any extra headers) and always ends the
connection. ``StompUsageError`` is raised when local code asks the connection for something the
protocol state forbids (a MESSAGE before CONNECTED, reading events while a CONNECT awaits its
answer): a bug in the caller, never the peer's fault. ``quote`` shows peer data in
error messages, cut short. This module must never import anything: every other module in
``jms.stomp`` uses it.
"""

from __future__ import annotations

__all__ = ["StompProtocolError", "StompUsageError", "quote"]

_QUOTED_LENGTH = 40


class StompProtocolError(Exception):
    """The peer sent something STOMP does not allow; the connection must end.

    ``message`` says what was wrong and where. ``receipt`` is the ``receipt`` header of the
    offending frame when it was parsed whole (the ERROR frame echoes it as ``receipt-id``);
    ``error_headers`` are extra headers the ERROR frame must carry (``version`` when no
    protocol version is shared).
    """

    def __init__(
        self,
        message: str,
        *,
        receipt: str | None = None,
        error_headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.receipt = receipt
        self.error_headers = error_headers


class StompUsageError(RuntimeError):
    """Local code asked for something the connection's state does not allow (a caller bug)."""


def quote(value: bytes | str) -> str:
    """``value`` as error messages show peer data: its repr, cut short when long."""
    if len(value) <= _QUOTED_LENGTH:
        return repr(value)
    return f"{value[:_QUOTED_LENGTH]!r}... ({len(value)} {'bytes' if isinstance(value, bytes) else 'characters'})"
