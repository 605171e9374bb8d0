"""Start and stop a private ActiveMQ Classic broker with one STOMP connector on 127.0.0.1, for the
interop tests and the side-by-side benchmark (docs/INTEROP.md of the design notes).

``ActiveMQ()`` is a context manager: on entry it writes a config into a fresh directory, starts
the broker on a free port and waits until it answers CONNECT with CONNECTED; on exit it stops the
broker (SIGTERM, then SIGKILL if it lingers) and removes the directory — always, whatever
happened in between. ``ActiveMQ.unavailable()`` says why it cannot run here (no Java, no
``activemq`` package), or None.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Final

from tests.stomp.peer_process import PeerBroker, free_port, stop_process_group

__all__ = ["ACTIVEMQ_HOME", "ActiveMQ"]

ACTIVEMQ_HOME: Final = Path("/usr/share/activemq")

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


class ActiveMQ(PeerBroker):
    """A running ActiveMQ 5.x with STOMP on ``127.0.0.1:port`` (see the module docstring)."""

    NAME = "ActiveMQ"
    LOG_NAME = "activemq.log"

    def __init__(self, *, persistent: bool = False, heap: str = "512m") -> None:
        super().__init__()
        self.persistent = persistent
        self.heap = heap
        self._process: subprocess.Popen[bytes] | None = None

    @staticmethod
    def unavailable() -> str | None:
        """Why ActiveMQ cannot be started here, or None when it can."""
        if shutil.which("java") is None:
            return "no java on PATH (ActiveMQ needs a JVM)"
        if not (ACTIVEMQ_HOME / "bin" / "activemq.jar").exists():
            return f"ActiveMQ is not installed ({ACTIVEMQ_HOME}/bin/activemq.jar missing; apt-get install activemq)"
        return None

    def _start(self, base: Path) -> None:
        for name in ("conf", "data", "tmp"):
            (base / name).mkdir()
        self.port = free_port()
        config = base / "conf" / "activemq.xml"
        config.write_text(
            _CONFIG.format(
                persistent="true" if self.persistent else "false",
                data=base / "data",
                port=self.port,
            )
        )
        self._process = self._launch(
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
            ]
        )
        self._await_stomp(self._process, "localhost")

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            stop_process_group(process)
