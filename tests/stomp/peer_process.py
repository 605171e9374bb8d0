"""What the private peer brokers (``tests/stomp/activemq.py``, ``tests/stomp/rabbitmq.py``) share:
``PeerBroker``, the context manager both are (a fresh directory, cleaned up whatever happens), a
free loopback port, waiting until a broker really answers STOMP ``CONNECT`` (an open port is not
enough), and stopping a process group (SIGTERM, then SIGKILL if it lingers)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Final, Self

__all__ = ["PeerBroker", "free_port", "stop_process_group"]

_STARTUP_TIMEOUT_S: Final = 90.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _stomp_server_header(port: int, virtual_host: str) -> str | None:
    """The ``server`` header of the CONNECTED answer on ``127.0.0.1:port`` (``unknown`` when it
    has none), or None while nothing answers CONNECT with CONNECTED there."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as probe:
            probe.sendall(f"CONNECT\naccept-version:1.2\nhost:{virtual_host}\n\n\0".encode())
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


def _await_stomp(
    process: subprocess.Popen[bytes],
    port: int,
    virtual_host: str,
    timeout_s: float,
    name: str,
    log_tail: Callable[[], str],
) -> str:
    """Wait until the broker ``process`` answers CONNECT (with ``host:virtual_host``) on
    ``127.0.0.1:port``; return its ``server`` header. ``RuntimeError`` with the tail of its log
    if it exits first or does not answer within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited at startup:\n{log_tail()}")
        server = _stomp_server_header(port, virtual_host)
        if server is not None:
            return server
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{name} did not answer CONNECT within {timeout_s:g} s:\n{log_tail()}"
            )
        time.sleep(0.2)


def stop_process_group(process: subprocess.Popen[bytes], grace_s: float = 30) -> None:
    """Stop ``process`` and its process group (it was started with ``start_new_session``)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


class PeerBroker(ABC):
    """A private broker with STOMP on ``127.0.0.1:port``, as a context manager: on entry a fresh
    directory and ``_start`` in it (``port`` and ``server``, its CONNECTED ``server`` header, set
    once it answers); on exit ``_stop`` and the directory removed — always, also when ``_start``
    fails halfway. The broker writes its output to ``LOG_NAME`` in that directory."""

    NAME: ClassVar[str]
    LOG_NAME: ClassVar[str]

    def __init__(self) -> None:
        self.port = 0
        self.server = ""
        self._directory: Path | None = None

    @staticmethod
    @abstractmethod
    def unavailable() -> str | None:
        """Why the broker cannot be started here, or None when it can."""

    @abstractmethod
    def _start(self, base: Path) -> None:
        """Start the broker in the directory ``base``; return once it answers STOMP."""

    @abstractmethod
    def _stop(self) -> None:
        """Stop every process ``_start`` started (also after it failed halfway)."""

    @property
    def url(self) -> str:
        return f"stomp://127.0.0.1:{self.port}"

    def __enter__(self) -> Self:
        reason = self.unavailable()
        if reason is not None:
            raise RuntimeError(reason)
        self._directory = Path(tempfile.mkdtemp(prefix=f"jms-{self.NAME.lower()}-"))
        try:
            self._start(self._directory)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _launch(self, command: list[str], **options: Any) -> subprocess.Popen[bytes]:
        """Start ``command`` in a process group of its own, its output going to the log."""
        assert self._directory is not None
        with open(self._directory / self.LOG_NAME, "wb") as log:
            return subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                **options,
            )

    def _await_stomp(self, process: subprocess.Popen[bytes], virtual_host: str) -> None:
        """Wait until ``process`` answers CONNECT on ``port``; take its ``server`` header."""
        self.server = _await_stomp(
            process, self.port, virtual_host, _STARTUP_TIMEOUT_S, self.NAME, self._log_tail
        )

    def _log_tail(self) -> str:
        assert self._directory is not None
        try:
            return (self._directory / self.LOG_NAME).read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"

    def __exit__(self, *exc_info: object) -> None:
        self._stop()
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
