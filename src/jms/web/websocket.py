"""STOMP over WebSocket (RFC 6455): ``ws://HOST:PORT/stomp``, as browsers' ``@stomp/stompjs`` and
ActiveMQ's, Artemis' and RabbitMQ's Web-STOMP speak it.

Nothing about STOMP is here. ``WebSocketTransport`` is an ``asyncio.Transport`` over one aiohttp
WebSocket, and ``serve_stomp`` hands it to ``StompServer.connection_protocol()`` — the very
connection the TCP listener makes, so frames, security, limits and heart-beats are the same. The
transport only moves bytes: each WebSocket message the client sends (text or binary, holding one
frame, several, or part of one) is fed to the connection as it came; what the connection writes
goes out as a text message when it is UTF-8 (what every STOMP-over-WebSocket client reads) and as
a binary message otherwise (a body with bytes that are not UTF-8). Flow control is the TCP
listener's: writes are queued and the connection is told to pause above a high-water mark;
pausing reading stops taking messages off the WebSocket, so aiohttp stops reading the socket.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Any, Final

from aiohttp import WSMsgType, hdrs, web

from jms.stomp.server import StompServer

__all__ = ["STOMP_SUBPROTOCOLS", "WebSocketTransport", "serve_stomp"]

#: The subprotocols of STOMP over WebSocket, the newest first (the server picks the client's
#: first one it knows; the STOMP version itself is negotiated by CONNECT's accept-version).
STOMP_SUBPROTOCOLS: Final = ("v12.stomp", "v11.stomp", "v10.stomp")
_DEFAULT_HIGH_WATER: Final = 64 * 1024


class WebSocketTransport(asyncio.Transport):
    """An ``asyncio.Transport`` writing to and reading from one aiohttp WebSocket; see the
    module docstring. ``run(protocol)`` pumps messages both ways until either side closes."""

    def __init__(self, websocket: web.WebSocketResponse, request: web.Request) -> None:
        super().__init__()
        self._websocket = websocket
        self._request = request
        self._protocol: asyncio.Protocol | None = None
        self._outgoing: deque[bytes] = deque()
        self._buffered = 0
        self._high_water = _DEFAULT_HIGH_WATER
        self._low_water = _DEFAULT_HIGH_WATER // 4
        self._writing_paused = False
        self._closing = False
        self._reading = asyncio.Event()
        self._reading.set()
        self._wake_writer = asyncio.Event()

    # -- asyncio.Transport ---------------------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing or not data:
            return
        self._outgoing.append(bytes(data))
        self._buffered += len(data)
        self._wake_writer.set()
        if not self._writing_paused and self._buffered > self._high_water:
            self._writing_paused = True
            if self._protocol is not None:
                self._protocol.pause_writing()

    def get_write_buffer_size(self) -> int:
        return self._buffered

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._low_water, self._high_water

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._high_water = _DEFAULT_HIGH_WATER if high is None else high
        self._low_water = self._high_water // 4 if low is None else low

    def pause_reading(self) -> None:
        self._reading.clear()

    def resume_reading(self) -> None:
        self._reading.set()

    def is_reading(self) -> bool:
        return self._reading.is_set()

    def close(self) -> None:
        """Close once what was written has gone out (as a socket transport does)."""
        self._closing = True
        self._reading.set()  # a paused reader wakes up to see the end
        self._wake_writer.set()

    def abort(self) -> None:
        self._outgoing.clear()
        self._buffered = 0
        self.close()

    def is_closing(self) -> bool:
        return self._closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        # The peer's address (login slowdown) and, over TLS, its certificate (certificate login).
        if name in ("peername", "ssl_object"):
            transport = self._request.transport
            return transport.get_extra_info(name, default) if transport is not None else default
        return default

    # -- pumping -------------------------------------------------------------------------------

    async def run(self, protocol: asyncio.Protocol) -> None:
        """Connect ``protocol`` and move messages until the client or the protocol closes; the
        protocol always sees ``connection_lost`` at the end."""
        self._protocol = protocol
        writer = asyncio.create_task(self._write_messages())
        error: Exception | None = None
        try:
            protocol.connection_made(self)
            await self._read_messages(protocol)
        except Exception as failure:  # the connection ends either way; the protocol hears why
            error = failure
        finally:
            self.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(writer), 10)
            writer.cancel()
            if not self._websocket.closed:
                await self._websocket.close()
            protocol.connection_lost(error)

    async def _read_messages(self, protocol: asyncio.Protocol) -> None:
        websocket = self._websocket
        while not self._closing:
            await self._reading.wait()
            if self._closing:
                return
            message = await websocket.receive()
            if message.type is WSMsgType.TEXT:
                protocol.data_received(message.data.encode("utf-8"))
            elif message.type is WSMsgType.BINARY:
                protocol.data_received(message.data)
            else:  # CLOSE, CLOSING, CLOSED or ERROR (a message over the size limit among them)
                return

    async def _write_messages(self) -> None:
        websocket = self._websocket
        while True:
            await self._wake_writer.wait()
            self._wake_writer.clear()
            while self._outgoing:
                data = self._outgoing.popleft()
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    await websocket.send_bytes(data)
                else:
                    await websocket.send_str(text)
                self._buffered -= len(data)
                if self._writing_paused and self._buffered <= self._low_water:
                    self._writing_paused = False
                    if self._protocol is not None:
                        self._protocol.resume_writing()
            if self._closing:
                await websocket.close()
                return


async def serve_stomp(
    request: web.Request, server: StompServer, allowed_origins: frozenset[str]
) -> web.StreamResponse:
    """The ``/stomp`` handler: upgrade to a WebSocket and serve one STOMP connection on it.

    Browsers let any page open a WebSocket anywhere, so a request whose ``Origin`` is another
    site's is refused (403) unless ``allowed_origins`` names it (``*``: every origin); clients
    that send no ``Origin`` (not browsers) and pages of this server are served. That keeps a
    broker on 127.0.0.1 as out of reach of the web pages a user happens to open as its TCP port.

    One message may carry up to twice the largest frame the server's ``FrameLimits`` allow
    (so that a frame just over a limit reaches the parser and gets its ERROR frame); a larger
    message is refused by aiohttp with close code 1009 before it is buffered whole.
    """
    origin = request.headers.get(hdrs.ORIGIN)
    if (
        origin is not None
        and origin != f"{request.scheme}://{request.host}"
        and origin not in allowed_origins
        and "*" not in allowed_origins
    ):
        raise web.HTTPForbidden(
            text=f"pages from {origin} may not open STOMP WebSockets here; the broker admits "
            f"them with --allow-origin {origin}\n"
        )
    limits = server.limits
    websocket = web.WebSocketResponse(
        protocols=STOMP_SUBPROTOCOLS,
        max_msg_size=2 * (limits.max_header_section_bytes + limits.max_body_bytes + 2),
    )
    await websocket.prepare(request)
    await WebSocketTransport(websocket, request).run(server.connection_protocol())
    return websocket
