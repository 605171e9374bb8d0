"""A broker served over STOMP and HTTP on the test's own event loop, and a STOMP client over
aiohttp's WebSocket client, for the ``jms.web`` tests.

``served_http(allowed_origins, **server_options)`` starts a memory broker, a ``StompServer`` on a
free port and an ``HttpServer`` on another, and always closes all three. ``basic_auth`` is an HTTP Basic header. ``WebSocketStomp`` writes the frames a test
gives it (several per WebSocket message when asked) and parses what comes back with the codec.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from jms.broker import Broker
from jms.stomp import Frame, FrameParser, HeartBeat, Role, Version
from jms.stomp.server import StompServer
from jms.web import HttpServer

__all__ = ["WebSocketStomp", "basic_auth", "served_http"]


@asynccontextmanager
async def served_http(
    allowed_origins: tuple[str, ...] = (), **server_options: Any
) -> AsyncIterator[tuple[StompServer, HttpServer]]:
    broker = Broker()
    stomp = StompServer(broker, host="127.0.0.1", port=0, **server_options)
    http = HttpServer(stomp, "127.0.0.1", 0, allowed_origins=allowed_origins)
    try:
        await stomp.start()
        await http.start()
        yield stomp, http
    finally:
        await stomp.close()
        await http.close()
        await asyncio.get_running_loop().run_in_executor(None, broker.close)


def basic_auth(user: str, password: str) -> dict[str, str]:
    """The ``Authorization`` header of HTTP Basic credentials."""
    encoded = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return {"Authorization": f"Basic {encoded}"}


class WebSocketStomp:
    """One STOMP client over a WebSocket from ``aiohttp.ClientSession.ws_connect``."""

    def __init__(self, websocket: aiohttp.ClientWebSocketResponse, timeout_s: float = 5.0) -> None:
        self.websocket = websocket
        self.timeout_s = timeout_s
        self._parser = FrameParser(Role.SERVER)
        self._frames: list[Frame] = []
        self.heart_beats = 0
        self.message_kinds: list[aiohttp.WSMsgType] = []

    @staticmethod
    def encode(command: str, headers: dict[str, str] | None = None, body: bytes = b"") -> bytes:
        return Frame(command, tuple((headers or {}).items()), body).to_bytes(Version.V1_2)

    async def send(
        self, command: str, headers: dict[str, str] | None = None, body: bytes = b""
    ) -> None:
        await self.websocket.send_bytes(self.encode(command, headers, body))

    async def connect(self, **headers: str) -> Frame:
        wanted = {"accept-version": "1.2", "host": "localhost", "heart-beat": "0,0"}
        wanted.update({name.replace("_", "-"): value for name, value in headers.items()})
        await self.websocket.send_str(self.encode("CONNECT", wanted).decode())
        frame = await self.read()
        if frame.command == "CONNECTED":
            self._parser.version = Version(frame.header("version") or "1.0")
        return frame

    async def read(self) -> Frame:
        """The next frame; ``TimeoutError`` if none comes, ``EOFError`` once the server closed."""
        async with asyncio.timeout(self.timeout_s):
            while not self._frames:
                message = await self.websocket.receive()
                if message.type is aiohttp.WSMsgType.TEXT:
                    data = message.data.encode("utf-8")
                elif message.type is aiohttp.WSMsgType.BINARY:
                    data = message.data
                else:
                    raise EOFError(f"the WebSocket ended: {message.type.name}")
                self.message_kinds.append(message.type)
                for event in self._parser.feed(data):
                    if isinstance(event, HeartBeat):
                        self.heart_beats += 1
                    else:
                        self._frames.append(event)
        return self._frames.pop(0)

    async def closed_by_server(self) -> bool:
        async with asyncio.timeout(self.timeout_s):
            while True:
                message = await self.websocket.receive()
                if message.type in (
                    aiohttp.WSMsgType.CLOSE,
                    aiohttp.WSMsgType.CLOSED,
                    aiohttp.WSMsgType.CLOSING,
                ):
                    return True
