"""Choices where the spec is silent (each is listed in docs/semantics.md under "Selectors")."""

from __future__ import annotations

import pytest

from jms.errors import InvalidSelectorException
from jms.selector import Selector, parse
from jms.types import Double, Int
from tests.selector.selector_testing import make_message


def evaluate(selector: str, **properties: object) -> bool | None:
    return Selector(selector).evaluate(make_message(**properties))


def test_in_and_like_on_a_non_string_are_false_and_their_negations_true() -> None:
    assert evaluate("n IN ('1')", n=Int(1)) is False
    assert evaluate("n NOT IN ('1')", n=Int(1)) is True
    assert evaluate("n LIKE '1'", n=Int(1)) is False
    assert evaluate("n NOT LIKE '1'", n=Int(1)) is True
    assert evaluate("b NOT LIKE '%'", b=True) is True


def test_like_underscore_is_one_code_point() -> None:
    assert evaluate("s LIKE '_'", s="😀") is True  # one code point (two UTF-16 units in Java)
    assert evaluate("s LIKE '__'", s="😀") is False
    assert evaluate("s LIKE 'e_'", s="e\u0301") is True  # a combining mark is its own character


def test_comparisons_do_not_chain() -> None:
    with pytest.raises(InvalidSelectorException, match="expected AND, OR or end of input"):
        parse("a = b = c")
    with pytest.raises(InvalidSelectorException):
        parse("1 < a < 3")
    assert evaluate("(a = 1) = (b = 1)", a=Int(1), b=Int(2)) is False


def test_conditions_compare_as_booleans_and_unknown_as_null() -> None:
    assert evaluate("(a = 1) = (b = 2)", a=Int(1), b=Int(2)) is True
    assert evaluate("(a = 1) <> TRUE", a=Int(2)) is True
    assert evaluate("(a = 1) = TRUE") is None
    assert evaluate("(a = 1) = flag", a=Int(1), flag=True) is True


def test_keywords_are_matched_like_property_names_are_checked() -> None:
    # str.upper() maps the dotless ı to I, so "ın" is the keyword IN, never an identifier —
    # the same rule the message layer applies to property names.
    assert evaluate("s ın ('x')", s="x") is True
    with pytest.raises(ValueError):
        make_message(ın="x")


def test_identifiers_may_use_letters_beyond_the_basic_plane() -> None:
    assert evaluate("𝒳 = 1", **{"𝒳": Int(1)}) is True


def test_a_type_error_is_false_but_null_is_unknown() -> None:
    assert evaluate("s * 2 > 1", s="3") is False
    assert evaluate("s * x > 1", s="3") is None
    assert evaluate("s * 2 > x", s="3") is None  # a NULL operand makes the comparison UNKNOWN


def test_division_follows_java_for_each_type() -> None:
    assert evaluate("a / 0 > 0", a=Int(1)) is None
    assert evaluate("a / 0 > 0", a=Double(1.0)) is True
