"""README.md's promises: its Python snippets run as written, and its two commands are the ones
CI and a newcomer use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_readme_has_snippets() -> None:
    assert len(SNIPPETS) >= 3


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.splitlines()[0][:60])
def test_snippet_runs(snippet: str) -> None:
    exec(compile(snippet, str(README), "exec"), {"__name__": "readme"})


def test_readme_shows_exactly_two_commands_and_marks_the_test_command() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```\n(.*?)\n```", section, flags=re.DOTALL)
    assert len(commands) == 2
    assert "<!-- test-command -->\n```\n" + commands[1] in section
    assert "pytest" in commands[1]
