"""STOMP 1.0/1.1/1.2 for jms: a sans-IO frame codec and connection state machine.

``Frame`` and ``FrameParser`` turn frames into bytes and bytes into frames exactly as each
version specifies; ``ServerConnection`` knows which frames are valid when and what to answer;
``negotiate_version`` and ``negotiate_heart_beat`` settle what a CONNECT asks for. None of it
does I/O: the asyncio server and the client transport only move bytes through it. The frame
codec's rules are in docs/stomp.md.

Around that core, each in its module: ``mapping`` (JMS messages and destinations in frames, as
ActiveMQ maps them), ``server`` (the asyncio ``StompServer`` in front of a broker), ``durability``
(store waits off the event loop), ``service`` (``jms broker``, and ``ServerThread`` to serve a
broker from a thread), ``client`` (a blocking ``StompClient``), ``admin`` (stats and purge
requests) and ``metrics`` (Prometheus text over HTTP).
"""

from jms.stomp.connection import ConnectRequest, ServerConnection, ServerState, required_headers
from jms.stomp.errors import StompProtocolError, StompUsageError
from jms.stomp.frames import (
    BODY_COMMANDS,
    CLIENT_COMMANDS,
    FRAME_END,
    SERVER_COMMANDS,
    SUPPORTED_VERSIONS,
    UNESCAPED_COMMANDS,
    Frame,
    HeartBeat,
    Role,
    Version,
    encode_frame,
    error_frame,
    escape_header,
    parse_content_length,
    receipt_frame,
    unescape_header,
)
from jms.stomp.negotiation import (
    MAX_HEART_BEAT_MS,
    HeartBeatIntervals,
    HeartBeatOffer,
    negotiate_heart_beat,
    negotiate_version,
)
from jms.stomp.parser import FrameLimits, FrameParser

__all__ = [
    "BODY_COMMANDS",
    "CLIENT_COMMANDS",
    "FRAME_END",
    "MAX_HEART_BEAT_MS",
    "SERVER_COMMANDS",
    "SUPPORTED_VERSIONS",
    "UNESCAPED_COMMANDS",
    "ConnectRequest",
    "Frame",
    "FrameLimits",
    "FrameParser",
    "HeartBeat",
    "HeartBeatIntervals",
    "HeartBeatOffer",
    "Role",
    "ServerConnection",
    "ServerState",
    "StompProtocolError",
    "StompUsageError",
    "Version",
    "encode_frame",
    "error_frame",
    "escape_header",
    "negotiate_heart_beat",
    "negotiate_version",
    "parse_content_length",
    "receipt_frame",
    "required_headers",
    "unescape_header",
]
