"""Start and stop a private ActiveMQ Classic broker with one STOMP connector on 127.0.0.1, for the
interop tests and the side-by-side benchmark (docs/INTEROP.md of the design notes).

``ActiveMQ()`` is a context manager: on entry it writes a config into a fresh directory, starts
the broker on a free port and waits until it answers CONNECT with CONNECTED; on exit it stops the
broker (SIGTERM, then SIGKILL if it lingers) and removes the directory — always, whatever
happened in between. ``ActiveMQ.unavailable()`` says why it cannot run here (no Java, no
``activemq`` package), or None.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Final

__all__ = ["ACTIVEMQ_HOME", "ActiveMQ"]

ACTIVEMQ_HOME: Final = Path("/usr/share/activemq")
_STARTUP_TIMEOUT_S: Final = 90.0

_CONFIG: Final = """<beans xmlns="http://www.springframework.org/schema/beans"
       xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
       xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
                           http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
  <broker xmlns="http://activemq.apache.org/schema/core" brokerName="interop" useJmx="false"
          persistent="{persistent}" advisorySupport="false" schedulerSupport="false"
          dataDirectory="{data}">
    <transportConnectors>
      <transportConnector name="stomp" uri="stomp://127.0.0.1:{port}"/>
    </transportConnectors>
  </broker>
</beans>
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ActiveMQ:
    """A running ActiveMQ 5.x with STOMP on ``127.0.0.1:port`` (see the module docstring)."""

    def __init__(self, *, persistent: bool = False, heap: str = "512m") -> None:
        self.persistent = persistent
        self.heap = heap
        self.port = 0
        self.server = ""
        self._directory: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @staticmethod
    def unavailable() -> str | None:
        """Why ActiveMQ cannot be started here, or None when it can."""
        if shutil.which("java") is None:
            return "no java on PATH (ActiveMQ needs a JVM)"
        if not (ACTIVEMQ_HOME / "bin" / "activemq.jar").exists():
            return f"ActiveMQ is not installed ({ACTIVEMQ_HOME}/bin/activemq.jar missing; apt-get install activemq)"
        return None

    @property
    def url(self) -> str:
        return f"stomp://127.0.0.1:{self.port}"

    def __enter__(self) -> ActiveMQ:
        reason = self.unavailable()
        if reason is not None:
            raise RuntimeError(reason)
        self._directory = Path(tempfile.mkdtemp(prefix="jms-activemq-"))
        try:
            self._start(self._directory)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self, base: Path) -> None:
        for name in ("conf", "data", "tmp"):
            (base / name).mkdir()
        self.port = _free_port()
        config = base / "conf" / "activemq.xml"
        config.write_text(
            _CONFIG.format(
                persistent="true" if self.persistent else "false",
                data=base / "data",
                port=self.port,
            )
        )
        log = open(base / "activemq.log", "wb")  # noqa: SIM115 - closed with the process
        self._process = subprocess.Popen(
            [
                "java",
                f"-Xmx{self.heap}",
                f"-Dactivemq.home={ACTIVEMQ_HOME}",
                f"-Dactivemq.base={base}",
                f"-Dactivemq.conf={base / 'conf'}",
                f"-Dactivemq.data={base / 'data'}",
                f"-Djava.io.tmpdir={base / 'tmp'}",
                "-jar",
                str(ACTIVEMQ_HOME / "bin" / "activemq.jar"),
                "start",
                f"xbean:file:{config}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"ActiveMQ exited at startup:\n{self._log_tail()}")
            connected = self._probe()
            if connected is not None:
                self.server = connected
                return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"ActiveMQ did not answer CONNECT within {_STARTUP_TIMEOUT_S:g} s:\n{self._log_tail()}"
                )
            time.sleep(0.2)

    def _probe(self) -> str | None:
        """The ``server`` header of a CONNECTED answer, or None while it does not answer."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as probe:
                probe.sendall(b"CONNECT\naccept-version:1.2\nhost:localhost\n\n\0")
                data = b""
                while b"\0" not in data:
                    chunk = probe.recv(4096)
                    if not chunk:
                        return None
                    data += chunk
                probe.sendall(b"DISCONNECT\n\n\0")
        except OSError:
            return None
        if not data.startswith(b"CONNECTED"):
            return None
        for line in data.split(b"\n"):
            if line.startswith(b"server:"):
                return line[len(b"server:") :].decode()
        return "unknown"

    def _log_tail(self) -> str:
        assert self._directory is not None
        try:
            return (self._directory / "activemq.log").read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"

    def __exit__(self, *exc_info: object) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
