"""The command line around the STOMP server: ``jms broker`` as a process (startup line, metrics,
store lock, clean shutdown on SIGTERM), and ``jms send / receive / browse / stats / purge /
hash-password`` as clients."""

from __future__ import annotations

import gc
import re
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jms.broker import Broker
from jms.broker.security import hash_password, verify_password
from jms.cli import app
from jms.stomp.service import BROKER_GC_THRESHOLD, tune_garbage_collector
from tests.stomp.serving import ServedBroker, broker_process, stop_process


def test_jms_broker_runs_on_the_store_and_stops_cleanly(tmp_path: Path) -> None:
    store = tmp_path / "data"
    config = tmp_path / "broker.toml"
    config.write_text(
        f'[users.alice]\npassword = "{hash_password("a")}"\n\n'
        '[[policies]]\ndestination = "queue://orders"\nmax_deliveries = 3\n'
    )
    arguments = (
        "--store",
        str(store),
        "--port",
        "0",
        "--metrics-port",
        "0",
        "--config",
        str(config),
    )
    with broker_process(*arguments) as (process, line):
        assert "jms broker" in line and "listening on stomp://127.0.0.1:" in line, line
        assert f"store: {store} (SQLite)" in line
        assert f"auth: 1 user, login required, no permission rules ({config})" in line
        url = re.search(r"stomp://[\d.]+:\d+", line)
        metrics = re.search(r"http://[\d.:]+/metrics", line)
        assert url is not None and metrics is not None
        runner = CliRunner()
        sent = runner.invoke(
            app,
            [
                "send",
                "orders",
                "hello",
                "--url",
                url.group(0),
                "--user",
                "alice",
                "--password",
                "a",
            ],
        )
        assert sent.exit_code == 0, sent.output
        refused = runner.invoke(app, ["send", "orders", "x", "--url", url.group(0)])
        assert refused.exit_code == 1 and "does not accept anonymous clients" in refused.output
        with urllib.request.urlopen(metrics.group(0), timeout=10) as response:
            text = response.read().decode()
        assert 'jms_queue_depth{destination="queue://orders",queue="queue://orders"} 1.0' in text
        assert "jms_stomp_connections_refused_total 1.0" in text
        with broker_process("--store", str(store), "--port", "0") as (second, _):
            assert second.wait(30) == 1
            assert second.stderr is not None and "lock" in second.stderr.read().lower()
        code, out = stop_process(process)
    assert code == 0 and "jms broker stopped" in out
    assert any(store.iterdir())
    with broker_process("--store", str(store), "--port", "0") as (process, line):  # recovers
        assert "auth: anonymous access (no --config)" in line
        url = re.search(r"stomp://[\d.]+:\d+", line)
        assert url is not None
        received = CliRunner().invoke(app, ["receive", "orders", "--url", url.group(0)])
        assert received.exit_code == 0 and "hello" in received.output
        assert stop_process(process)[0] == 0


def test_jms_broker_explains_a_bad_config(tmp_path: Path) -> None:
    config = tmp_path / "broker.toml"
    config.write_text('[[policies]]\ndestination = "*"\nmax_deliveries = 0\n')
    with broker_process("--memory", "--port", "0", "--config", str(config)) as (process, _):
        assert process.wait(30) == 1
        assert process.stderr is not None
        assert "[[policies]] #1: max_deliveries must be at least 1" in process.stderr.read()


@pytest.fixture
def url(served: ServedBroker) -> str:
    return served.url


def test_send_receive_browse_stats_and_purge(url: str, broker: Broker) -> None:
    runner = CliRunner()
    sent = runner.invoke(
        app,
        ["send", "queue://orders", "order {n}", "-n", "150", "-p", "weight=int:3000", "--url", url],
    )
    assert sent.exit_code == 0 and "sent 150 message(s) to queue://orders" in sent.output
    browsed = runner.invoke(app, ["browse", "orders", "--limit", "2", "--url", url])
    assert browsed.exit_code == 0
    assert "order 1" in browsed.output and "order 2" in browsed.output
    assert "order 3" not in browsed.output
    received = runner.invoke(app, ["receive", "/queue/orders", "-n", "2", "--url", url])
    assert received.exit_code == 0 and received.output.splitlines()[:2] == ["order 1", "order 2"]
    selected = runner.invoke(
        app, ["receive", "orders", "-s", "weight > 9000", "--timeout", "0.2", "--url", url]
    )
    assert selected.exit_code == 1  # nothing matched
    stats = runner.invoke(app, ["stats", "--interval", "0.1", "--url", url], env={"COLUMNS": "200"})
    assert stats.exit_code == 0 and "queue://orders" in stats.output and "148" in stats.output
    purged = runner.invoke(app, ["purge", "orders", "--url", url])
    assert purged.exit_code == 0 and "purged 148 message(s) from queue://orders" in purged.output
    assert {s.name: s.depth for s in broker.stats()}["queue://orders"] == 0


def test_a_client_command_explains_an_unreachable_broker() -> None:
    result = CliRunner().invoke(app, ["send", "orders", "x", "--url", "stomp://127.0.0.1:1"])
    assert result.exit_code == 1 and "cannot connect to stomp://127.0.0.1:1" in result.output


def test_hash_password_prints_a_hash_of_the_password_typed_twice() -> None:
    result = CliRunner().invoke(app, ["hash-password"], input="s3cret\ns3cret\n")
    assert result.exit_code == 0
    stored = result.output.strip().splitlines()[-1]
    assert verify_password("s3cret", stored)


def test_a_broker_process_collects_young_objects_less_often() -> None:
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 11, 12)
        tune_garbage_collector()
        assert gc.get_threshold() == (BROKER_GC_THRESHOLD, 11, 12)
    finally:
        gc.set_threshold(*saved)
