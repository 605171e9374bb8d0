"""``jms broker`` itself, as a subprocess, for tests that reach it as its users do: over the network
from other processes (Spark workers, STOMP clients written in other languages).

``with BrokerProcess(directory) as broker: ... broker.url ... broker.port ...`` runs ``jms broker
--store DIRECTORY/store --host 127.0.0.1 --port 0``, waits for its startup line, and always stops it
(SIGTERM, then SIGKILL) when the block ends. Its output goes to ``DIRECTORY/broker.log`` rather
than a pipe nobody reads, which would stall a broker that logs a lot; ``log_tail()`` shows it when
a test needs to say what the broker saw.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

__all__ = ["BrokerProcess"]

_STARTUP_TIMEOUT_S: Final = 20.0
_LISTENING: Final = re.compile(r"listening on (stomp://127\.0\.0\.1:(\d+))")


class BrokerProcess:
    """``with BrokerProcess(directory) as broker: ... broker.url ...`` (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.log = directory / "broker.log"
        self.url = ""
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> BrokerProcess:
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(
                [
                    *(sys.executable, "-c", "from jms.cli import main; main()", "broker"),
                    *("--store", str(self.directory / "store"), "--host", "127.0.0.1"),
                    *("--port", "0"),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while (found := _LISTENING.search(self.log_tail())) is None:
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise AssertionError(f"jms broker did not start:\n{self.log_tail()}")
            time.sleep(0.05)
        self.url = found.group(1)
        self.port = int(found.group(2))
        return self

    def log_tail(self, characters: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-characters:]

    def __exit__(self, *exc_info: object) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
