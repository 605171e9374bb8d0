"""The command line takes a ``failover:`` URL wherever it takes ``--url`` (docs/ha.md): it works
with the broker that answers, and a bad failover URL is one line saying what is wrong."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from tests.cli_process import JmsBroker, run_jms


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with JmsBroker() as broker:
        yield broker.url


def _down() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"stomp://127.0.0.1:{probe.getsockname()[1]}"


def test_send_receive_and_stats_go_to_the_listed_broker_that_answers(url: str) -> None:
    failover = f"failover:({_down()},{url})?randomize=false"
    sent = run_jms("send", "fo", "over the failover URL", "--url", failover)
    assert sent.returncode == 0, sent.stderr
    stats = run_jms("stats", "--json", "--interval", "0.1", "--url", failover)
    assert stats.returncode == 0, stats.stderr
    rows = {row["name"]: row for row in json.loads(stats.stdout)["destinations"]}
    assert rows["queue://fo"]["depth"] == 1
    received = run_jms("receive", "fo", "--count", "1", "--timeout", "5", "--url", failover)
    assert received.returncode == 0, received.stderr
    assert "over the failover URL" in received.stdout


def test_a_bad_failover_url_is_one_line_naming_the_problem() -> None:
    for command in (["send", "q", "x"], ["stats"]):
        result = run_jms(*command, "--url", "failover:(stomp://h:1)?retries=3")
        assert result.returncode != 0
        assert "Traceback" not in result.stderr
        assert "unknown option 'retries'" in result.stderr.strip().splitlines()[-1]
