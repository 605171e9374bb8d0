"""The spec's three-valued AND / OR / NOT tables, exhaustively, through real selectors.

TRUE, FALSE and UNKNOWN operands are the boolean properties ``t`` and ``f`` and the absent
property ``u``; each is also produced by a comparison (``one = 1``, ``one = 2``, ``nothing = 1``)
so the tables hold whatever kind of condition feeds the operator.
"""

from __future__ import annotations

import itertools

import pytest

from jms.selector import Selector
from jms.types import Int
from tests.selector.selector_reference import AND_TABLE, NOT_TABLE, OR_TABLE
from tests.selector.selector_testing import make_message

T, F, U = True, False, None
MESSAGE = make_message(t=True, f=False, one=Int(1))
OPERANDS = {
    T: ("t", "one = 1", "TRUE", "(f OR t)"),
    F: ("f", "one = 2", "FALSE", "NOT t"),
    U: ("u", "nothing = 1", "(u AND t)", "NOT u"),
}
VALUES = (T, F, U)

# The spec's tables, transcribed once more here (row = left operand) to check the transcription
# the reference interpreter uses.
SPEC_AND = """
      T F U
    T T F U
    F F F F
    U U F U
"""
SPEC_OR = """
      T F U
    T T T T
    F T F U
    U T U U
"""
_LETTERS = {"T": T, "F": F, "U": U}


def _parse_table(text: str) -> dict[tuple[bool | None, bool | None], bool | None]:
    header, *rows = (line.split() for line in text.strip().splitlines())
    return {
        (_LETTERS[row[0]], _LETTERS[column]): _LETTERS[cell]
        for row in rows
        for column, cell in zip(header, row[1:], strict=True)
    }


def test_reference_tables_are_the_spec_tables() -> None:
    assert _parse_table(SPEC_AND) == AND_TABLE
    assert _parse_table(SPEC_OR) == OR_TABLE
    assert {T: F, F: T, U: U} == NOT_TABLE


def test_operands_have_the_values_they_stand_for() -> None:
    for expected, texts in OPERANDS.items():
        for text in texts:
            assert Selector(text).evaluate(MESSAGE) is expected, text


@pytest.mark.parametrize(("left", "right"), list(itertools.product(VALUES, VALUES)))
def test_and_table(left: bool | None, right: bool | None) -> None:
    for left_text, right_text in itertools.product(OPERANDS[left], OPERANDS[right]):
        selector = Selector(f"{left_text} AND {right_text}")
        assert selector.evaluate(MESSAGE) is AND_TABLE[left, right], selector.text
        assert selector.matches(MESSAGE) is (AND_TABLE[left, right] is True)


@pytest.mark.parametrize(("left", "right"), list(itertools.product(VALUES, VALUES)))
def test_or_table(left: bool | None, right: bool | None) -> None:
    for left_text, right_text in itertools.product(OPERANDS[left], OPERANDS[right]):
        selector = Selector(f"{left_text} OR {right_text}")
        assert selector.evaluate(MESSAGE) is OR_TABLE[left, right], selector.text
        assert selector.matches(MESSAGE) is (OR_TABLE[left, right] is True)


@pytest.mark.parametrize("operand", VALUES)
def test_not_table(operand: bool | None) -> None:
    for text in OPERANDS[operand]:
        selector = Selector(f"NOT {text}")
        assert selector.evaluate(MESSAGE) is NOT_TABLE[operand], selector.text
        assert selector.matches(MESSAGE) is (NOT_TABLE[operand] is True)


@pytest.mark.parametrize("values", list(itertools.product(VALUES, repeat=3)))
def test_chains_of_three_fold_left_to_right(values: tuple[bool | None, ...]) -> None:
    first, second, third = (OPERANDS[value][0] for value in values)
    a, b, c = values
    for text, expected in (
        (f"{first} AND {second} AND {third}", AND_TABLE[AND_TABLE[a, b], c]),
        (f"{first} OR {second} OR {third}", OR_TABLE[OR_TABLE[a, b], c]),
        (f"{first} AND {second} OR {third}", OR_TABLE[AND_TABLE[a, b], c]),
        (f"{first} OR {second} AND {third}", OR_TABLE[a, AND_TABLE[b, c]]),
        (f"NOT {first} AND {second}", AND_TABLE[NOT_TABLE[a], b]),
        (
            f"NOT ({first} OR {second}) OR NOT {third}",
            OR_TABLE[NOT_TABLE[OR_TABLE[a, b]], NOT_TABLE[c]],
        ),
    ):
        assert Selector(text).evaluate(MESSAGE) is expected, text


def test_non_boolean_operand_counts_as_false() -> None:
    # Where the spec is silent: a property holding a number or String used as a condition.
    message = make_message(n=Int(1), s="true")
    assert Selector("n").evaluate(message) is False
    assert Selector("s").evaluate(message) is False
    assert Selector("NOT n").evaluate(message) is True
    assert Selector("n OR TRUE").evaluate(message) is True
    assert Selector("n AND TRUE").evaluate(message) is False
