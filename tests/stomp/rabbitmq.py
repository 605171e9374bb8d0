"""Start and stop a private RabbitMQ 3.x node with only its STOMP listener, on 127.0.0.1, for the
interop test and the side-by-side benchmark (docs/INTEROP.md of the design notes).

``RabbitMQ()`` is a context manager: on entry it writes a config into a fresh directory and starts
a node of its own — its own node name, data and logs in that directory, STOMP on a free loopback
port, no AMQP listener, the ``rabbitmq_stomp`` plugin only, Erlang distribution on another free
loopback port, registered with a private ``epmd`` on a third one — and waits until STOMP answers
CONNECT with CONNECTED. On exit it stops the node (SIGTERM; SIGKILL if it lingers), then its
``epmd`` (so no name stays registered and no daemon outlives it), and removes the directory —
always, whatever happened in between. It runs as root too: the node is started with
``/usr/lib/rabbitmq/bin/rabbitmq-server`` directly, not through the ``/usr/sbin`` wrapper that
switches to the ``rabbitmq`` user. ``RabbitMQ.unavailable()`` says why it cannot run here, or None.

STOMP clients log in as ``guest`` (RabbitMQ's default user, allowed from loopback) and must name
the node's virtual host in CONNECT's ``host`` header: RabbitMQ reads that header as a virtual host
name and refuses any other ("Virtual host 'localhost' access denied"). A fresh node has one, ``/``;
``RabbitMQ(virtual_host="NAME")`` gives it that name instead (RabbitMQ's ``default_vhost``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Final

from tests.stomp.peer_process import PeerBroker, free_port, stop_process_group

__all__ = ["RabbitMQ"]

RABBITMQ_SERVER: Final = Path("/usr/lib/rabbitmq/bin/rabbitmq-server")
_PLUGINS: Final = Path("/usr/lib/rabbitmq/lib")
_EPMD_TIMEOUT_S: Final = 10.0

_CONFIG: Final = """listeners.tcp = none
stomp.listeners.tcp.1 = 127.0.0.1:{port}
default_vhost = {virtual_host}
stomp.default_vhost = {virtual_host}
"""


class RabbitMQ(PeerBroker):
    """A running RabbitMQ node with STOMP on ``127.0.0.1:port`` (see the module docstring)."""

    NAME = "RabbitMQ"
    LOG_NAME = "rabbitmq.log"

    def __init__(self, *, virtual_host: str = "/") -> None:
        if not virtual_host or any(character.isspace() for character in virtual_host):
            raise ValueError(
                f"a RabbitMQ virtual host name is one or more characters without whitespace, "
                f"got {virtual_host!r}"
            )
        super().__init__()
        self.virtual_host = virtual_host
        self._epmd: subprocess.Popen[bytes] | None = None
        self._node: subprocess.Popen[bytes] | None = None

    @staticmethod
    def unavailable() -> str | None:
        """Why RabbitMQ cannot be started here, or None when it can."""
        if not RABBITMQ_SERVER.exists():
            return f"RabbitMQ is not installed ({RABBITMQ_SERVER} missing; apt-get install rabbitmq-server)"
        if not any(_PLUGINS.glob("rabbitmq_server-*/plugins/rabbitmq_stomp-*")):
            return f"RabbitMQ's STOMP plugin is missing (no rabbitmq_stomp under {_PLUGINS})"
        if shutil.which("epmd") is None:
            return "no epmd on PATH (it comes with Erlang, which rabbitmq-server needs)"
        return None

    def _start(self, base: Path) -> None:
        self.port = free_port()
        epmd_port = free_port()
        (base / "rabbitmq.conf").write_text(
            _CONFIG.format(port=self.port, virtual_host=self.virtual_host)
        )
        (base / "enabled_plugins").write_text("[rabbitmq_stomp].\n")
        # Read instead of /etc/rabbitmq/rabbitmq-env.conf, so the machine's settings stay out.
        (base / "rabbitmq-env.conf").write_text("")
        self._epmd = subprocess.Popen(
            ["epmd", "-port", str(epmd_port), "-address", "127.0.0.1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._await_epmd(epmd_port)
        environment = {
            **os.environ,
            "HOME": str(base),  # the node's Erlang cookie goes here, not into root's home
            "RABBITMQ_CONF_ENV_FILE": str(base / "rabbitmq-env.conf"),
            "RABBITMQ_NODENAME": f"jms-{uuid.uuid4().hex[:12]}@localhost",
            "RABBITMQ_CONFIG_FILE": str(base / "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(base / "advanced.config"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(base / "enabled_plugins"),
            "RABBITMQ_MNESIA_BASE": str(base / "mnesia"),
            "RABBITMQ_LOG_BASE": str(base / "log"),
            "RABBITMQ_DIST_PORT": str(free_port()),
            "ERL_EPMD_PORT": str(epmd_port),
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": (
                "-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}"
            ),
        }
        self._node = self._launch([str(RABBITMQ_SERVER)], cwd=base, env=environment)
        self._await_stomp(self._node, self.virtual_host)

    def _await_epmd(self, port: int) -> None:
        assert self._epmd is not None
        deadline = time.monotonic() + _EPMD_TIMEOUT_S
        while (
            subprocess.run(
                ["epmd", "-port", str(port), "-names"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            ).returncode
            != 0
        ):
            if self._epmd.poll() is not None:
                raise RuntimeError(
                    f"epmd on port {port} exited at once (code {self._epmd.returncode})"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"epmd did not answer on port {port} within {_EPMD_TIMEOUT_S:g} s"
                )
            time.sleep(0.1)

    def _stop(self) -> None:
        # The node first: its name leaves epmd's registry when its connection to epmd closes.
        node, self._node = self._node, None
        if node is not None:
            stop_process_group(node)
        epmd, self._epmd = self._epmd, None
        if epmd is not None:
            stop_process_group(epmd, grace_s=10)
