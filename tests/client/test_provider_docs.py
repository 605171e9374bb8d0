"""docs/provider.md's promises: every Python example on the page runs as written."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from jms.broker import close_embedded_broker

PAGE = Path(__file__).resolve().parents[2] / "docs" / "provider.md"
TEXT = PAGE.read_text(encoding="utf-8")
# Each example, preceded by as many blank lines as come before it, so tracebacks name page lines.
EXAMPLES = [
    "\n" * TEXT.count("\n", 0, match.start(1)) + match.group(1)
    for match in re.finditer(r"```python\n(.*?)```", TEXT, flags=re.DOTALL)
]


def test_every_feature_has_an_example() -> None:
    assert len(EXAMPLES) >= 17


@pytest.fixture
def example_brokers(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    for url in set(re.findall(r"memory://[\w-]+", request.node.callspec.params["example"])):
        close_embedded_broker(url)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.strip().splitlines()[0][:50])
@pytest.mark.usefixtures("example_brokers")
def test_example_runs(example: str) -> None:
    exec(compile(example, str(PAGE), "exec"), {"__name__": "provider_docs"})
