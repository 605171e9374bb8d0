"""docs/selectors.md tells the truth: its Python snippet runs, its transcript and error message are
what the code prints, and its LIKE examples hold."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jms.cli import app
from jms.errors import InvalidSelectorException
from jms.selector import Selector
from tests.selector.selector_testing import make_message

DOC = (Path(__file__).resolve().parents[2] / "docs" / "selectors.md").read_text(encoding="utf-8")


def test_python_snippet_runs_and_its_comments_hold() -> None:
    (snippet,) = re.findall(r"```python\n(.*?)```", DOC, flags=re.DOTALL)
    namespace: dict[str, object] = {}
    exec(compile(snippet, "docs/selectors.md", "exec"), namespace)
    selector, message = namespace["selector"], namespace["message"]
    assert isinstance(selector, Selector)
    assert selector.matches(message) is True
    assert selector.evaluate(message) is True
    assert selector.identifiers == frozenset({"color", "weight"})


def test_error_message_example_is_what_is_raised() -> None:
    (line,) = re.findall(r"^InvalidSelectorException: (.*)$", DOC, flags=re.MULTILINE)
    with pytest.raises(InvalidSelectorException) as raised:
        Selector("color IN ('red', 'blue'")
    assert str(raised.value) == line


def test_cli_transcript_is_what_the_command_prints() -> None:
    block = DOC.split("$ jms selector ", 1)[1].split("```", 1)[0]
    command, *expected = block.rstrip("\n").splitlines()
    result = CliRunner().invoke(app, ["selector", *shlex.split(command)], env={"COLUMNS": "120"})
    assert result.exit_code == 0
    assert result.output.rstrip("\n").splitlines() == expected


@pytest.mark.parametrize(
    ("selector", "name", "true_for", "false_for"),
    [
        ("phone LIKE '12%3'", "phone", ["123", "12993"], ["1234"]),
        ("word LIKE 'l_se'", "word", ["lose"], ["loose"]),
        ("underscored LIKE '\\_%' ESCAPE '\\'", "underscored", ["_foo"], ["bar"]),
        ("discount LIKE '100!%' ESCAPE '!'", "discount", ["100%"], ["1000", "100"]),
    ],
)
def test_like_examples(selector: str, name: str, true_for: list[str], false_for: list[str]) -> None:
    assert selector in DOC
    for value in true_for:
        assert Selector(selector).matches(make_message(**{name: value}))
    for value in false_for:
        assert Selector(selector).evaluate(make_message(**{name: value})) is False
