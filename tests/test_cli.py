"""The `jms` command line: version, help, and the demo that README's first command runs."""

from __future__ import annotations

from typer.testing import CliRunner

import jms
from jms.cli import app

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
