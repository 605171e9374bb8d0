"""The `jms` command line: version, help, the demo that README's first command runs, and what
`jms pipeline` says, in one line, when it cannot run: no broker, a refused login, no pyspark."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

import jms
from jms.broker.security import hash_password
from jms.cli import app
from tests.cli_process import JmsBroker, run_jms

runner = CliRunner()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"jms {jms.__version__}"


def test_help_lists_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "demo" in result.output


def test_demo_filters_with_the_spec_example_selector() -> None:
    result = runner.invoke(app, ["demo"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if "ID:demo-" in line]
    assert len(rows) == 4
    assert [("yes" in row) for row in rows] == [True, False, False, False]
    assert "'16000.0'" in result.output


# --- jms pipeline: what it says before starting Spark ----------------------------------------


def _free_port() -> int:
    """A port nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_jms_pipeline_says_in_one_line_that_the_broker_is_down_without_starting_spark() -> None:
    pytest.importorskip("pyspark")
    url = f"stomp://127.0.0.1:{_free_port()}"
    result = run_jms("pipeline", "--from", "queue://a", "--to", "parquet:/tmp/never", "--url", url)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"error: cannot reach the broker at {url} (connection refused); "
        "is `jms broker` running there?"
    )
    assert "log4j" not in result.stderr  # Spark was not started


def test_jms_pipeline_says_in_one_line_that_the_broker_refused_the_login(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    config = tmp_path / "broker.toml"
    config.write_text(f'[users.alice]\npassword = "{hash_password("right")}"\n')
    with JmsBroker("--config", str(config)) as broker:
        url = broker.url
        result = run_jms(
            "pipeline",
            "--from",
            "queue://a",
            "--to",
            "queue://b",
            "--url",
            url,
            "--user",
            "alice",
            "--password",
            "wrong",
        )
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "login 'alice' refused" in line, line
    assert line.endswith("check --user and --password"), line


def test_jms_pipeline_without_pyspark_says_how_to_install_it(tmp_path: Path) -> None:
    # What importing a package that is not installed raises, from a directory ahead of
    # site-packages, so the real pyspark is not found.
    (tmp_path / "pyspark").mkdir()
    (tmp_path / "pyspark" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pyspark'\", name='pyspark')\n"
    )
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    result = run_jms(
        "pipeline",
        "--from",
        "queue://a",
        "--to",
        "parquet:/tmp/never",
        env={**os.environ, "PYTHONPATH": path},
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: pyspark is not installed; install it with `pip install 'jms[spark]'` "
        "(from a checkout: `pip install -e '.[spark]'`)"
    )
    assert "Traceback" not in result.stdout + result.stderr
