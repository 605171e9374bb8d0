"""A STOMP server on its own event-loop thread, and a raw client, for tests over real sockets.

``ServedBroker(broker)`` serves ``broker`` on 127.0.0.1 at a free port while the ``with`` block
runs, and always stops the loop and the server afterwards (the broker stays open: its owner
closes it). ``RawClient(port)`` writes exactly the bytes a test gives it and reads frames back.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

from jms.broker import Broker
from jms.stomp import Frame, FrameParser, Role, Version
from jms.stomp.server import StompServer

__all__ = ["RawClient", "ServedBroker"]


class ServedBroker:
    """``with ServedBroker(broker, **server_options) as served: ... served.url ...``"""

    def __init__(self, broker: Broker, **server_options: Any) -> None:
        self.broker = broker
        self._options = server_options
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.server: StompServer | None = None
        self._thread = threading.Thread(target=self._run, name="test-stomp-server", daemon=True)

    def __enter__(self) -> ServedBroker:
        self._thread.start()
        if not self._ready.wait(10):
            raise TimeoutError("the STOMP server did not start within 10 s")
        if self._error is not None:
            raise self._error
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(20)
        assert not self._thread.is_alive(), "the STOMP server thread did not stop"

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.port

    @property
    def url(self) -> str:
        return f"stomp://127.0.0.1:{self.port}"

    def call(self, function: Any) -> Any:
        """Run ``function()`` on the server's loop and return its result."""
        assert self._loop is not None

        async def run() -> Any:
            return function()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            self.server = StompServer(self.broker, host="127.0.0.1", port=0, **self._options)
            try:
                await self.server.start()
            except BaseException as error:
                self._error = error
                self._ready.set()
                return
            self._ready.set()
            try:
                await self._stop.wait()
            finally:
                await self.server.close()

        asyncio.run(main())


class RawClient:
    """A STOMP client that writes exactly the bytes it is given and reads frames back with the
    codec: for tests that need to misbehave, or to see every frame the server writes."""

    def __init__(self, port: int, *, timeout_s: float = 5.0) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        self._parser = FrameParser(Role.SERVER)
        self._frames: list[Frame] = []
        self.heart_beats = 0
        self.timeout_s = timeout_s

    def close(self) -> None:
        self.socket.close()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def write(self, data: bytes) -> None:
        self.socket.sendall(data)

    def send(self, command: str, headers: dict[str, str] | None = None, body: bytes = b"") -> None:
        self.write(Frame(command, tuple((headers or {}).items()), body).to_bytes(Version.V1_2))

    def connect(self, **headers: str) -> Frame:
        """CONNECT in STOMP 1.2 (``headers`` with ``_`` for ``-``) and return CONNECTED."""
        wanted = {"accept-version": "1.2", "host": "localhost"}
        wanted.update({name.replace("_", "-"): value for name, value in headers.items()})
        self.write(Frame("CONNECT", tuple(wanted.items())).to_bytes(Version.V1_2))
        frame = self.read()
        assert frame.command == "CONNECTED", frame
        self._parser.version = Version(frame.header("version") or "1.0")
        return frame

    def read(self, timeout_s: float | None = None) -> Frame:
        """The next frame; ``TimeoutError`` if none comes, ``EOFError`` if the server closed."""
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        while not self._frames:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no frame from the server in time")
            self.socket.settimeout(remaining)
            try:
                data = self.socket.recv(65536)
            except TimeoutError:
                continue
            if not data:
                raise EOFError("the server closed the connection")
            for event in self._parser.feed(data):
                if isinstance(event, Frame):
                    self._frames.append(event)
                else:
                    self.heart_beats += 1
        return self._frames.pop(0)

    def closed_by_server(self, timeout_s: float = 5.0) -> bool:
        """Whether the server closes the connection within ``timeout_s`` (frames before the
        end are read and dropped)."""
        try:
            while True:
                self.read(timeout_s)
        except EOFError:
            return True
        except (TimeoutError, ConnectionResetError):
            return False
