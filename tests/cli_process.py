"""The real ``jms`` command in a subprocess, for tests of what a user sees: ``run_jms`` runs one
command to its end; ``JmsBroker`` is a ``jms broker`` process on 127.0.0.1 at a free port, always
stopped (SIGTERM, then kill) when its ``with`` block ends."""

from __future__ import annotations

import re
import select
import signal
import subprocess
import sys
from pathlib import Path
from types import TracebackType

__all__ = ["RUN_CLI", "JmsBroker", "jms_command", "run_jms"]

#: A ``python -c`` program that runs the ``jms`` command line (as the installed script does).
RUN_CLI = "import sys; from jms.cli import main; sys.argv[0] = 'jms'; main()"


def jms_command(*arguments: str) -> list[str]:
    """The argv of ``jms ARGUMENTS`` with this interpreter."""
    return [sys.executable, "-c", RUN_CLI, *arguments]


def run_jms(
    *arguments: str,
    env: dict[str, str] | None = None,
    stdin: str | bytes | None = None,
    timeout_s: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``jms ARGUMENTS`` run to its end (stdin from ``stdin``, else empty), with its output."""
    return subprocess.run(
        jms_command(*arguments),
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=not isinstance(stdin, bytes),
        timeout=timeout_s,
        env=env,
    )


class JmsBroker:
    """``jms broker --port 0 ARGUMENTS`` (``--memory`` unless a ``--store`` is given) while the
    ``with`` block runs; ``url`` is where it listens. Its stderr (the log) is in ``log`` once it
    stopped."""

    def __init__(self, *arguments: str, store: Path | None = None) -> None:
        where = ["--store", str(store)] if store is not None else ["--memory"]
        self.arguments = ["broker", *where, "--port", "0", *arguments]
        self.url = ""
        self.startup_line = ""
        self.log = ""
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> JmsBroker:
        self._process = subprocess.Popen(
            jms_command(*self.arguments),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], 60)
        line = self._process.stdout.readline() if ready else ""
        found = re.search(r"listening on (stomp://\S+)", line)
        if found is None:
            self.stop()
            raise AssertionError(f"jms broker did not start: {line!r} {self.log!r}")
        self.url = found.group(1)
        self.startup_line = line
        return self

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def stop(self) -> int:
        """SIGTERM, wait (kill after 30 s); the exit status."""
        assert self._process is not None
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
        try:
            _, self.log = self._process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            _, self.log = self._process.communicate(timeout=10)
        return self._process.returncode

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
