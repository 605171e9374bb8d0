"""A STOMP server on its own event-loop thread, and a raw client, for tests over real sockets.

``ServedBroker(broker)`` (``jms.stomp.service.ServerThread``) serves ``broker`` on 127.0.0.1 at a
free port while the ``with`` block runs, and always stops the loop and the server afterwards (the
broker stays open: its owner closes it). ``RawClient(port)`` writes exactly the bytes a test gives it and reads frames back.
``broker_process(*arguments)`` runs ``jms broker ARGUMENTS`` as a process and gives its startup
line; ``stop_process`` stops it with SIGTERM as an operator would.
"""

from __future__ import annotations

import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from jms.stomp import Frame, FrameParser, Role, Version
from jms.stomp.service import ServerThread

__all__ = ["RawClient", "ServedBroker", "broker_process", "stop_process"]


_RUN_CLI = "import sys; from jms.cli import main; sys.argv[0] = 'jms'; main()"


@contextmanager
def broker_process(*arguments: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``jms broker ARGUMENTS`` running; its process and startup line. Always stopped."""
    process = subprocess.Popen(
        [sys.executable, "-c", _RUN_CLI, "broker", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 30)
        line = process.stdout.readline() if ready else ""
        yield process, line
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)


def stop_process(process: subprocess.Popen[str]) -> tuple[int, str]:
    """SIGTERM, then the exit code and what it printed after its startup line."""
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=30)
    return process.returncode, out


#: The library's background server, under the name these tests use.
ServedBroker = ServerThread


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
