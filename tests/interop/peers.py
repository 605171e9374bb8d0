"""STOMP client libraries nobody here wrote, each driven by a small program of its own language in
``tests/interop/clients``, as their users would use them against ``jms broker``.

Every program takes ``PORT MODE ARGS`` and prints one JSON object on its last line of output:

- ``scenario NAME``: sends ``red-1`` (``colour:red``), ``blue-1`` (``colour:blue``) and ``red-2``
  (``colour:red``, with a receipt) to ``/queue/NAME.select``; subscribes there with the selector
  ``colour = 'red'`` and client-individual acknowledgement, and acknowledges ``red-2`` only; sends
  ``tx-aborted`` to ``/queue/NAME.tx`` in a transaction it aborts and ``tx-committed`` in one it
  commits; sends a 1 MiB body and a body with NUL bytes (``content-length``) to
  ``/queue/NAME.bodies`` and receives them back. Prints ``selected`` (the bodies received through
  the selector), ``receipt`` (whether the RECEIPT came), ``big`` (``length``, ``sha256``) and
  ``nul_hex``.
- ``send DEST JSON``: sends ``{"headers": {...}, "body": "..."}`` to DEST with a receipt and waits
  for it. Prints ``{"sent": true}``.
- ``receive DEST``: receives one message from DEST. Prints ``headers`` and ``body``.

``PEERS`` lists the clients; ``Peer.missing()`` says why one cannot run here (what to install), or
None; ``Peer.run()`` runs its program with a timeout and returns what it printed.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["CLIENTS", "PEERS", "Peer"]

CLIENTS: Final = Path(__file__).parent / "clients"
_RUN_TIMEOUT_S: Final = 60.0


def _probe(*command: str) -> bool:
    """Whether ``command`` runs and exits 0 (a library loads)."""
    if shutil.which(command[0]) is None:
        return False
    try:
        return subprocess.run(command, capture_output=True, timeout=30).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def _python_module(module: str) -> Callable[[], bool]:
    return lambda: importlib.util.find_spec(module) is not None


def _node_packages(*packages: str) -> Callable[[], bool]:
    return lambda: (
        shutil.which("node") is not None
        and all((CLIENTS / "node_modules" / package).is_dir() for package in packages)
    )


@dataclass(frozen=True)
class Peer:
    """One client library: its ``name``, the ``command`` that runs its program, a check that it
    is installed, and how to install it."""

    name: str
    command: tuple[str, ...]
    installed: Callable[[], bool]
    install: str

    def missing(self) -> str | None:
        if self.installed():
            return None
        return f"{self.name} is not installed here ({self.install}; .ci/run installs it)"

    def run(self, port: int, *arguments: str) -> dict[str, Any]:
        """Run the program against the broker on ``port``; its JSON result, or AssertionError
        with everything it said when it fails or outlives its timeout."""
        command = [*self.command, str(port), *arguments]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                timeout=_RUN_TIMEOUT_S,
                cwd=CLIENTS,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as expired:
            raise AssertionError(
                f"{self.name} {' '.join(arguments)[:80]} ran past {_RUN_TIMEOUT_S:g} s\n"
                f"stdout: {_text(expired.stdout)}\nstderr: {_text(expired.stderr)}"
            ) from None
        output = done.stdout.decode(errors="replace").strip()
        if done.returncode != 0 or not output:
            raise AssertionError(
                f"{self.name} {' '.join(arguments)[:80]} exited with {done.returncode}\n"
                f"stdout: {output[-2000:]}\nstderr: {_text(done.stderr)}"
            )
        result: dict[str, Any] = json.loads(output.splitlines()[-1])
        return result


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    text = data.decode(errors="replace") if isinstance(data, bytes) else data
    return text[-3000:]


PEERS: Final = (
    Peer(
        "PHP pecl-stomp",
        ("php", "php_stomp.php"),
        lambda: _probe("php", "-r", "exit(class_exists('Stomp') ? 0 : 1);"),
        "apt-get install php-cli php-stomp",
    ),
    Peer(
        "Ruby stomp",
        ("ruby", "ruby_stomp.rb"),
        lambda: _probe("ruby", "-e", "require 'stomp'"),
        "apt-get install ruby-stomp",
    ),
    Peer(
        "Perl Net::Stomp",
        ("perl", "perl_net_stomp.pl"),
        lambda: _probe("perl", "-MNet::Stomp", "-MJSON::PP", "-MDigest::SHA", "-e", "1"),
        "apt-get install libnet-stomp-perl",
    ),
    Peer(
        "Node stompit",
        ("node", "stompit.js"),
        _node_packages("stompit"),
        "npm ci --prefix tests/interop/clients",
    ),
    Peer(
        "Node @stomp/stompjs",
        ("node", "stompjs.mjs"),
        _node_packages("@stomp/stompjs", "@stomp/tcp-wrapper"),
        "npm ci --prefix tests/interop/clients",
    ),
    Peer(
        "Python stomper",
        (sys.executable, "stomper_client.py"),
        _python_module("stomper"),
        "pip install -e '.[dev]'",
    ),
    Peer(
        "Python stomp-py",
        (sys.executable, "stomp_py_client.py"),
        _python_module("stomp"),
        "pip install -e '.[dev]'",
    ),
)
