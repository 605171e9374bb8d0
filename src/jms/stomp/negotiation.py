"""What two STOMP peers agree on when they connect: the protocol version and heart-beating.

``negotiate_version`` picks the version a server speaks from a CONNECT frame's
``accept-version`` header (STOMP 1.0 when it is absent; otherwise the highest version both
sides know, or a ``StompProtocolError`` whose ERROR frame lists the versions this side supports).
``HeartBeatOffer`` is one peer's ``heart-beat`` header (what it can send, what it wants, in
milliseconds, 0 for nothing) and ``negotiate_heart_beat`` turns the two offers into the
intervals one side must send at and may expect data at, by the spec's ``MAX(cx, sy)`` rule.
These are pure functions of header values: no clocks, no timers, no sockets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from mypy_extensions import mypyc_attr

from jms.stomp.errors import StompProtocolError, quote
from jms.stomp.frames import SUPPORTED_VERSIONS, Version

__all__ = [
    "MAX_HEART_BEAT_MS",
    "HeartBeatIntervals",
    "HeartBeatOffer",
    "negotiate_heart_beat",
    "negotiate_version",
]

MAX_HEART_BEAT_MS: Final = 2**31 - 1  # a Java int, what other brokers read the header into
_HEART_BEAT_VALUE: Final = re.compile(r"([0-9]{1,10}),([0-9]{1,10})")


def negotiate_version(accept_version: str | None) -> Version:
    """The version to speak with a client whose CONNECT had ``accept-version: accept_version``.

    None (header absent) means the client speaks only 1.0. Otherwise the header is a
    comma-separated list (spaces around items are ignored; versions this side does not know are
    skipped) and the highest supported version in it wins. Raises ``StompProtocolError`` when it
    names none of them; its ``error_headers`` carry the ``version`` header the ERROR must list.
    """
    if accept_version is None:
        return Version.V1_0
    offered = {item.strip() for item in accept_version.split(",")}
    for version in reversed(SUPPORTED_VERSIONS):
        if version.value in offered:
            return version
    supported = ",".join(version.value for version in SUPPORTED_VERSIONS)
    raise StompProtocolError(
        f"no STOMP version in common: the client accepts {quote(accept_version)}; "
        f"supported protocol versions are {' '.join(version.value for version in SUPPORTED_VERSIONS)}",
        error_headers=(("version", supported),),
    )


# A plain class, not a compiled one: see FrameLimits.
@mypyc_attr(native_class=False)
@dataclass(frozen=True, slots=True)
class HeartBeatOffer:
    """A ``heart-beat`` header: the sender can send every ``outgoing_ms`` and would like to
    receive every ``incoming_ms`` milliseconds; 0 means it cannot send, or does not want any."""

    outgoing_ms: int = 0
    incoming_ms: int = 0

    def __post_init__(self) -> None:
        for name in ("outgoing_ms", "incoming_ms"):
            value = getattr(self, name)
            if (
                not isinstance(value, int)
                or isinstance(value, bool)
                or not 0 <= value <= MAX_HEART_BEAT_MS
            ):
                raise ValueError(
                    f"HeartBeatOffer.{name} must be an int from 0 to {MAX_HEART_BEAT_MS}, got {value!r}"
                )

    @classmethod
    def parse(cls, header: str | None) -> HeartBeatOffer:
        """The offer a ``heart-beat`` header value states; an absent header means ``0,0``.

        The value must be two decimal numbers joined by a comma, each at most
        ``MAX_HEART_BEAT_MS``; anything else raises ``StompProtocolError``.
        """
        if header is None:
            return cls()
        match = _HEART_BEAT_VALUE.fullmatch(header)
        if match is None:
            raise StompProtocolError(
                f"heart-beat {quote(header)} is not two millisecond counts joined by a comma"
            )
        outgoing, incoming = int(match.group(1)), int(match.group(2))
        if outgoing > MAX_HEART_BEAT_MS or incoming > MAX_HEART_BEAT_MS:
            raise StompProtocolError(
                f"heart-beat {quote(header)} has an interval above {MAX_HEART_BEAT_MS} ms"
            )
        return cls(outgoing, incoming)

    def header_value(self) -> str:
        """This offer as a ``heart-beat`` header value."""
        return f"{self.outgoing_ms},{self.incoming_ms}"


@dataclass(frozen=True, slots=True)
class HeartBeatIntervals:
    """What heart-beating means for one side of a connection, in milliseconds, 0 for none.

    ``send_every_ms``: send at least an end-of-line after this long without sending a frame.
    ``expect_every_ms``: the peer promised data at least this often; the spec asks receivers to
    allow an error margin before they declare the connection dead.
    """

    send_every_ms: int = 0
    expect_every_ms: int = 0


def negotiate_heart_beat(ours: HeartBeatOffer, theirs: HeartBeatOffer) -> HeartBeatIntervals:
    """The intervals for the side that offered ``ours`` when the peer offered ``theirs``.

    One direction has heart-beats only if its sender can send them and its receiver wants
    them, every ``MAX(sender's outgoing, receiver's incoming)`` ms. The rule is symmetric: a
    server passes its CONNECTED offer as ``ours``, a client its CONNECT offer.
    """
    send = (
        0
        if not ours.outgoing_ms or not theirs.incoming_ms
        else max(ours.outgoing_ms, theirs.incoming_ms)
    )
    expect = (
        0
        if not theirs.outgoing_ms or not ours.incoming_ms
        else max(theirs.outgoing_ms, ours.incoming_ms)
    )
    return HeartBeatIntervals(send, expect)
