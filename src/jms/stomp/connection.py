"""The server side of one STOMP connection as a pure state machine: bytes in, events out,
frames in, bytes out. It never touches a socket, a clock or the broker.

Theory of operation
-------------------
A ``ServerConnection`` is one state (``ServerState``) plus the frame parser for what the client
sends. The server's transport moves bytes only: it passes what it reads to ``feed`` and handles
the events that come out, and it writes what ``accept``, ``send`` and ``send_error`` return.

    AWAITING_CONNECT --CONNECT/STOMP--> CONNECTING --accept()--> CONNECTED --DISCONNECT--> DISCONNECTED
          any state --send(ERROR) / send_error()--> CLOSED

- AWAITING_CONNECT: only CONNECT or STOMP may arrive. It negotiates the version and the
  heart-beats and comes out as a ``ConnectRequest``; the connection then waits in CONNECTING
  for the server to authenticate and answer with ``accept()`` (the CONNECTED frame) or an ERROR.
  Reading further events while CONNECTING is a ``StompUsageError``: the version the next frames
  are read in is not in force until CONNECTED is written.
- CONNECTED: every client frame except CONNECT/STOMP comes out as the ``Frame`` itself, once
  checked for the headers its version requires (``required_headers``), SUBSCRIBE for a known
  ``ack`` mode and NACK for a version that has it. DISCONNECT moves to DISCONNECTED, where the
  server may still send the RECEIPT it asked for; any further frame is a protocol error.
- CLOSED: after an ERROR (the spec has the server close right after it); nothing more is read
  or written.
- End-of-lines between frames come out as ``HeartBeat`` in every state but CLOSED.

Two rules keep it honest. Everything that decides whether a frame is acceptable in the current
state lives here, and nothing about what frames mean (destinations, subscriptions, transactions,
authentication) does: that is the server's business. And a peer's mistake is always a
``StompProtocolError`` raised while iterating ``feed``, which the server answers with
``send_error(error)`` and then closes; our own mistakes are ``StompUsageError``.

Until CONNECTED is written, both directions use STOMP 1.0's verbatim headers (the client cannot
know the version yet); from then on the negotiated version's escaping applies both ways.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum, auto
from typing import Final

from jms.stomp.errors import StompProtocolError, StompUsageError, quote
from jms.stomp.frames import (
    FRAME_END,
    SERVER_COMMANDS,
    Frame,
    HeartBeat,
    Role,
    Version,
    encode_frame_head,
    error_frame,
    receipt_frame,
)
from jms.stomp.negotiation import (
    HeartBeatIntervals,
    HeartBeatOffer,
    negotiate_heart_beat,
    negotiate_version,
)
from jms.stomp.parser import FrameLimits, FrameParser

__all__ = ["ConnectRequest", "ServerConnection", "ServerState", "required_headers"]


class ServerState(Enum):
    """Where a server-side connection is in its life (see the module docstring)."""

    AWAITING_CONNECT = auto()
    CONNECTING = auto()
    CONNECTED = auto()
    DISCONNECTED = auto()
    CLOSED = auto()


@dataclass(frozen=True, slots=True)
class ConnectRequest:
    """A client asked to connect: its CONNECT/STOMP ``frame`` (``login``, ``passcode``, ``host``,
    ``client-id``... are its headers), the ``version`` the connection will speak and the
    ``heart_beat`` intervals the server must keep once it accepts."""

    frame: Frame
    version: Version
    heart_beat: HeartBeatIntervals


_CONNECT_COMMANDS: Final = frozenset({"CONNECT", "STOMP"})
_CLOSED_FOR_READING: Final = "the connection is closed; nothing more is read from it"

# Headers each frame must carry, per version ("Frames and Headers" of each spec), for the frames
# this side checks (CONNECT's are negotiation's business). Each entry is a group of names of
# which at least one must be present.
_Requirement = tuple[tuple[str, ...], ...]
_REQUIRED_IN_EVERY_VERSION: Final[dict[str, _Requirement]] = {
    "SEND": (("destination",),),
    "BEGIN": (("transaction",),),
    "COMMIT": (("transaction",),),
    "ABORT": (("transaction",),),
    "RECEIPT": (("receipt-id",),),
}
_REQUIRED_SINCE_1_1: Final[dict[str, _Requirement]] = {
    **_REQUIRED_IN_EVERY_VERSION,
    "SUBSCRIBE": (("destination",), ("id",)),
    "UNSUBSCRIBE": (("id",),),
    "MESSAGE": (("destination",), ("message-id",), ("subscription",)),
}
_REQUIRED_HEADERS: Final[dict[Version, dict[str, _Requirement]]] = {
    Version.V1_0: {
        **_REQUIRED_IN_EVERY_VERSION,
        "SUBSCRIBE": (("destination",),),
        "UNSUBSCRIBE": (("id", "destination"),),
        "ACK": (("message-id",),),
        "MESSAGE": (("destination",), ("message-id",)),
    },
    Version.V1_1: {
        **_REQUIRED_SINCE_1_1,
        "ACK": (("message-id",), ("subscription",)),
        "NACK": (("message-id",), ("subscription",)),
    },
    Version.V1_2: {
        **_REQUIRED_SINCE_1_1,
        "ACK": (("id",),),
        "NACK": (("id",),),
    },
}
_ACK_MODES: Final = {
    Version.V1_0: ("auto", "client"),
    Version.V1_1: ("auto", "client", "client-individual"),
    Version.V1_2: ("auto", "client", "client-individual"),
}


def required_headers(command: str, version: Version) -> tuple[tuple[str, ...], ...]:
    """The headers a ``command`` frame must carry in ``version``: groups of names of which at
    least one must be present (1.0's UNSUBSCRIBE takes ``id`` or ``destination``)."""
    return _REQUIRED_HEADERS[version].get(command, ())


# Bound once: an Enum member looked up through its class costs ~50 ns, on every frame.
_CONNECTED: Final = ServerState.CONNECTED
_NO_REQUIREMENTS: Final[dict[str, _Requirement]] = {}


def _missing_header(frame: Frame, required: _Requirement) -> str | None:
    """The first of the ``required`` headers (or groups, ``a or b``) ``frame`` lacks."""
    for names in required:
        for name, _ in frame.headers:
            if name in names:
                break
        else:
            return " or ".join(repr(name) for name in names)
    return None


class ServerConnection:
    """One client's STOMP connection, seen from the server. See the module docstring."""

    def __init__(
        self,
        *,
        heart_beat: HeartBeatOffer = HeartBeatOffer(),  # noqa: B008 - frozen, shared safely
        limits: FrameLimits = FrameLimits(),  # noqa: B008 - frozen, shared safely
    ) -> None:
        self.heart_beat_offer = heart_beat  # what CONNECTED's heart-beat header says
        self.state = ServerState.AWAITING_CONNECT
        self.version: Version | None = None  # in force from CONNECTED on
        self._required = _NO_REQUIREMENTS  # the version's _REQUIRED_HEADERS, once CONNECTED
        self.heart_beat = HeartBeatIntervals()  # negotiated; in force from CONNECTED on
        self._parser = FrameParser(Role.CLIENT, limits)
        self._connect_request: ConnectRequest | None = None
        self._frames_received = 0

    def feed(self, data: bytes) -> Iterator[ConnectRequest | Frame | HeartBeat]:
        """Take bytes the client sent and iterate over the events they complete.

        Each frame is parsed and checked only when the iteration reaches it, so the state the
        server's handling of one event leaves behind applies to the next: a ``ConnectRequest``
        must be answered before the iteration goes on to bytes that followed it
        (``StompUsageError`` otherwise). Raises ``StompProtocolError`` while iterating when the
        client broke the protocol.
        """
        if self.state is ServerState.CLOSED:
            raise StompUsageError(_CLOSED_FOR_READING)
        self._parser.feed(data)  # buffered: _events parses it one event at a time
        return self._events()

    def _events(self) -> Iterator[ConnectRequest | Frame | HeartBeat]:
        parser = self._parser
        # The parser's own iterator would parse the next frame before the state is checked.
        next_event = parser._next_event
        receive = self._receive
        while True:
            if self.state is not _CONNECTED:
                if not parser.buffered_bytes:
                    return
                self._check_readable()
            event = next_event()  # None when nothing more is buffered
            if event is None:
                return
            yield receive(event) if isinstance(event, Frame) else event

    def _check_readable(self) -> None:
        if self.state is ServerState.CONNECTING:
            raise StompUsageError(
                "a ConnectRequest is waiting: answer it with accept() or an ERROR before reading on"
            )
        if self.state is ServerState.CLOSED:
            raise StompUsageError(_CLOSED_FOR_READING)

    def _receive(self, frame: Frame) -> ConnectRequest | Frame:
        self._frames_received += 1
        command = frame.command
        if self.state is not _CONNECTED:
            if self.state is ServerState.AWAITING_CONNECT:
                if command not in _CONNECT_COMMANDS:
                    raise self._refusal(frame, "the first frame must be CONNECT or STOMP")
                return self._request_connection(frame)
            raise self._refusal(frame, "received after DISCONNECT")
        version = self.version
        assert version is not None
        if command in _CONNECT_COMMANDS:
            raise self._refusal(frame, "the connection is already connected")
        if command == "NACK" and version is Version.V1_0:
            raise self._refusal(frame, "NACK is not part of STOMP 1.0")
        missing = _missing_header(frame, self._required.get(command, ()))
        if missing is not None:
            raise self._refusal(frame, f"missing header {missing}, required in STOMP {version}")
        if command == "SUBSCRIBE":
            ack = frame.header("ack")
            if ack is not None and ack not in _ACK_MODES[version]:
                raise self._refusal(
                    frame, f"ack {quote(ack)} is not one of {', '.join(_ACK_MODES[version])}"
                )
        elif command == "DISCONNECT":
            self.state = ServerState.DISCONNECTED
        return frame

    def _refusal(self, frame: Frame, what: str) -> StompProtocolError:
        """The error refusing the frame just received, echoing its receipt."""
        return StompProtocolError(f"{self._where(frame)}: {what}", receipt=frame.header("receipt"))

    def _where(self, frame: Frame) -> str:
        return f"{frame.command} frame #{self._frames_received}"

    def _request_connection(self, frame: Frame) -> ConnectRequest:
        try:
            version = negotiate_version(frame.header("accept-version"))
            client_offer = HeartBeatOffer.parse(frame.header("heart-beat"))
        except StompProtocolError as error:
            raise StompProtocolError(
                f"{self._where(frame)}: {error.message}", error_headers=error.error_headers
            ) from None
        # ``host`` names a virtual host; there are none here, so a client (like stomp-py speaking
        # 1.1) may leave it out although the spec asks clients to send it.
        # STOMP 1.0 has no heart-beating: its CONNECTED carries no heart-beat header.
        heart_beat = (
            HeartBeatIntervals()
            if version is Version.V1_0
            else negotiate_heart_beat(self.heart_beat_offer, client_offer)
        )
        self._connect_request = ConnectRequest(frame, version, heart_beat)
        self.state = ServerState.CONNECTING
        return self._connect_request

    def accept(
        self,
        *,
        session: str | None = None,
        server: str | None = None,
        extra_headers: tuple[tuple[str, str], ...] = (),
    ) -> bytes:
        """Accept the pending ``ConnectRequest``: the CONNECTED frame to write, after which its
        version and heart-beats are in force. ``session`` and ``server`` are the optional
        CONNECTED headers (``server`` as ``name/version``); ``extra_headers`` follow them."""
        request = self._connect_request
        if self.state is not ServerState.CONNECTING or request is None:
            raise StompUsageError(
                f"accept() needs a pending ConnectRequest; the connection is {self.state.name}"
            )
        headers = [("version", request.version.value)]
        if request.version is not Version.V1_0:
            headers.append(("heart-beat", self.heart_beat_offer.header_value()))
        if session is not None:
            headers.append(("session", session))
        if server is not None:
            headers.append(("server", server))
        headers.extend(extra_headers)
        data = Frame("CONNECTED", tuple(headers)).to_bytes(request.version)
        self.version = request.version
        self._required = _REQUIRED_HEADERS[request.version]
        self.heart_beat = request.heart_beat
        self._parser.version = request.version
        self._connect_request = None
        self.state = ServerState.CONNECTED
        return data

    def send(self, frame: Frame) -> bytes:
        """The bytes of a MESSAGE, RECEIPT or ERROR frame for the client, in the version in force.

        MESSAGE needs CONNECTED; RECEIPT needs CONNECTED or DISCONNECTED; ERROR is allowed until
        CLOSED and moves there. Raises ``StompUsageError`` for a frame the state or the version
        does not allow (a client command, CONNECTED, a missing required header) and
        ``ValueError`` for one the version cannot write.
        """
        command = frame.command
        state = self.state
        if state is ServerState.CLOSED:
            raise StompUsageError(f"cannot send {command}: the connection is closed")
        if command not in SERVER_COMMANDS:
            raise StompUsageError(f"{command} is not a frame a server sends")
        if command == "CONNECTED":
            raise StompUsageError("CONNECTED is sent by accept()")
        if command == "MESSAGE" and state is not ServerState.CONNECTED:
            raise StompUsageError(f"cannot send MESSAGE while {state.name}")
        if command == "RECEIPT" and state not in (ServerState.CONNECTED, ServerState.DISCONNECTED):
            raise StompUsageError(f"cannot send RECEIPT while {state.name}")
        version = self.version or Version.V1_0
        missing = _missing_header(frame, required_headers(command, version))
        if missing is not None:
            raise StompUsageError(
                f"{command} frame lacks header {missing}, required in STOMP {version}"
            )
        data = frame.to_bytes(version)
        if command == "ERROR":
            self.state = ServerState.CLOSED
            self._connect_request = None
        return data

    def message(self, headers: Iterable[tuple[str, str]], body: bytes) -> bytes:
        """The bytes of a MESSAGE frame: ``send(Frame("MESSAGE", headers, body))`` for the
        server's hot path, without building the ``Frame``. The caller guarantees the required
        headers (``destination``, ``message-id``, ``subscription``); the state is checked."""
        return b"".join((self.message_head(headers, len(body)), body, FRAME_END))

    def message_head(self, headers: Iterable[tuple[str, str]], body_length: int) -> bytes:
        """``message(headers, body)`` up to its body, for a body of ``body_length`` bytes sent
        from its parts (followed by ``FRAME_END``)."""
        if self.state is not ServerState.CONNECTED:
            raise StompUsageError(f"cannot send MESSAGE while {self.state.name}")
        version = self.version
        assert version is not None
        return encode_frame_head("MESSAGE", headers, body_length, version)

    def receipt(self, receipt_id: str) -> bytes:
        """``send(receipt_frame(receipt_id))``, for the server's hot path (a RECEIPT per PERSISTENT
        SEND): a receipt id no version escapes is written without building the ``Frame``."""
        if (
            self.state is _CONNECTED
            and "\\" not in receipt_id
            and ":" not in receipt_id
            and "\n" not in receipt_id
            and "\r" not in receipt_id
        ):
            return b"RECEIPT\nreceipt-id:%s\n\n%s" % (receipt_id.encode(), FRAME_END)
        return self.send(receipt_frame(receipt_id))

    def send_error(self, error: StompProtocolError) -> bytes:
        """The ERROR frame answering ``error`` (with its receipt and extra headers); the
        connection is CLOSED after it and the server should close the socket once written."""
        return self.send(
            error_frame(error.message, receipt=error.receipt, extra_headers=error.error_headers)
        )
