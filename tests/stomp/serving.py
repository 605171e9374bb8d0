"""A STOMP server on its own event-loop thread, for tests that talk to it over real sockets.

``ServedBroker(broker)`` serves ``broker`` on 127.0.0.1 at a free port while the ``with`` block
runs, and always stops the loop and the server afterwards (the broker stays open: its owner
closes it).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from jms.broker import Broker
from jms.stomp.server import StompServer

__all__ = ["ServedBroker"]


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
