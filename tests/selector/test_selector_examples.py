"""The 104 worked examples in ../shared/examples/selector-examples.json, each as its own test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jms.errors import InvalidSelectorException
from jms.selector import Selector
from jms.types import Byte, Double, Float, Int, Long, Short
from tests.selector.selector_testing import make_message

EXAMPLES_FILE = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "examples" / ("selector-examples.json")
)
TYPES = {
    "boolean": bool,
    "byte": Byte,
    "short": Short,
    "int": Int,
    "long": Long,
    "float": Float,
    "double": Double,
    "string": str,
}


def _load() -> list[Any]:
    if not EXAMPLES_FILE.exists():
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(reason=f"shared examples file absent: {EXAMPLES_FILE}"),
            )
        ]
    examples = json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))["examples"]
    return [
        pytest.param(example, id=f"{index:03d}:{example['selector'][:50]}")
        for index, example in enumerate(examples)
    ]


EXAMPLES = _load()


def test_all_examples_are_collected() -> None:
    if not EXAMPLES_FILE.exists():
        pytest.skip(f"shared examples file absent: {EXAMPLES_FILE}")
    assert len(EXAMPLES) == 104


@pytest.mark.parametrize("example", EXAMPLES)
def test_shared_example(example: dict[str, Any]) -> None:
    properties = {
        name: TYPES[spec["type"]](spec["value"]) for name, spec in example["properties"].items()
    }
    message = make_message(example["headers"], **properties)
    if example["expected"] == "invalid":
        with pytest.raises(InvalidSelectorException):
            Selector(example["selector"])
        return
    assert Selector(example["selector"]).matches(message) is example["expected"]
