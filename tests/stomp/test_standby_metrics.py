"""A standby broker says so in ``/metrics`` (docs/ha.md): while it waits for the PostgreSQL
store its metrics port serves ``jms_broker_standby 1`` and nothing of a broker it does not run
yet; the active broker serves ``jms_broker_standby 0``, and so does the standby once it took
over, on the same port."""

from __future__ import annotations

import os
import signal
import socket
import urllib.request
from contextlib import ExitStack

import pytest

from tests.stomp.test_standby import _LISTENING, _BrokerProcess

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return response.read().decode()


def test_a_standby_says_so_in_metrics_until_it_takes_over(postgresql_url: str) -> None:
    active_metrics, standby_metrics = _free_port(), _free_port()
    with ExitStack() as stack:
        active = _BrokerProcess(
            postgresql_url, "--port", "0", "--metrics-port", str(active_metrics)
        )
        stack.callback(active.stop)
        assert _LISTENING.search(active.line(30)), active.stderr()
        standby = _BrokerProcess(
            postgresql_url, "--port", "0", "--metrics-port", str(standby_metrics)
        )
        stack.callback(standby.stop)
        assert "standby" in standby.line(30), standby.stderr()
        assert "jms_broker_standby 0.0" in _metrics(active_metrics)
        waiting = _metrics(standby_metrics)
        assert "jms_broker_standby 1.0" in waiting
        assert "jms_stomp_connections" not in waiting
        os.kill(active.process.pid, signal.SIGKILL)
        assert _LISTENING.search(standby.line(15))
        serving = _metrics(standby_metrics)
        assert "jms_broker_standby 0.0" in serving
        assert "jms_stomp_connections" in serving
