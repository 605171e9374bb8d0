"""Real brokers for Spark tests. ``ServedStore``: what ``jms broker --store DIR --port 0`` runs (the
SQLite store, the STOMP server), on its own event-loop thread in the test process, at
``stomp://127.0.0.1:PORT`` (``tests.broker_process.BrokerProcess`` is the ``jms broker`` command
itself, as a subprocess).

Spark runs a data source's readers and writers in Python worker processes, so they reach the
broker over the network, as a real pipeline does. ``with ServedStore(directory) as served:``
starts it and always stops it (closing the store) when the block ends.
"""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path

from jms.stomp.service import BrokerOptions, serve

__all__ = ["ServedStore"]


class ServedStore:
    """``with ServedStore(directory) as served: ... served.url ...``"""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.url = ""
        self._lines: list[str] = []
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="spark-test-broker", daemon=True)

    def __enter__(self) -> ServedStore:
        self._thread.start()
        if not self._ready.wait(20):
            raise TimeoutError("the broker did not start within 20 s")
        if self._error is not None:
            raise self._error
        found = re.search(r"listening on (stomp://\S+)", self._lines[0])
        assert found is not None, self._lines
        self.url = found.group(1)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        assert not self._thread.is_alive(), "the broker thread did not stop"

    def _announce(self, line: str) -> None:
        self._lines.append(line)
        self._ready.set()

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            options = BrokerOptions(store=self.directory, host="127.0.0.1", port=0)
            await serve(options, self._stop, self._announce)

        try:
            asyncio.run(main())
        except BaseException as error:
            self._error = error
            self._ready.set()
