"""The public ``Selector`` object: construction, text, identifiers, equality, caching, pickling."""

from __future__ import annotations

import pickle

import pytest

import jms.selector
from jms.errors import InvalidSelectorException
from jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage
from jms.selector import Selector, parse
from jms.types import Int
from tests.selector.selector_testing import make_message


def test_package_exports() -> None:
    assert set(jms.selector.__all__) == {
        "MAX_DEPTH",
        "InvalidSelectorException",
        "Selector",
        "ast",
        "parse",
        "selector_or_none",
    }


def test_selector_or_none_reads_blank_text_as_no_selector() -> None:
    # The spec: an empty selector "is treated as a null"; white space alone parses to no selector.
    for blank in (None, "", " ", "\t\r\n\f "):
        assert jms.selector.selector_or_none(blank) is None
    assert jms.selector.selector_or_none(" a = 1 ") == " a = 1 "


def test_text_and_tree() -> None:
    selector = Selector("a = 1")
    assert selector.text == "a = 1"
    assert selector.tree == parse("a = 1")
    assert Selector(None).text == "" and Selector(None).tree is None
    assert repr(selector) == "Selector('a = 1')"


def test_identifiers_are_the_property_names_read() -> None:
    selector = Selector(
        "JMSType = 'car' AND (color = 'blue' OR weight * 2 BETWEEN lo AND hi) "
        "AND s IN ('x') AND t LIKE '%' AND u IS NULL AND JMSPriority > 4 AND NOT flag"
    )
    assert selector.identifiers == frozenset({"color", "weight", "lo", "hi", "s", "t", "u", "flag"})
    assert Selector("JMSTimestamp > 0").identifiers == frozenset()
    assert Selector("").identifiers == frozenset()


def test_matches_and_evaluate() -> None:
    selector = Selector("a > 1")
    assert selector.matches(make_message(a=Int(2))) is True
    assert selector.matches(make_message(a=Int(1))) is False
    assert selector.matches(make_message()) is False
    assert selector.evaluate(make_message(a=Int(2))) is True
    assert selector.evaluate(make_message(a=Int(1))) is False
    assert selector.evaluate(make_message()) is None


def test_works_on_every_message_type() -> None:
    selector = Selector("k = 'v' AND JMSPriority = 4")
    for kind in (Message, BytesMessage, MapMessage, StreamMessage, ObjectMessage):
        message = kind()
        message.set_string_property("k", "v")
        assert selector.matches(message), kind


def test_equality_and_hash_by_text() -> None:
    assert Selector("a = 1") == Selector("a = 1")
    assert hash(Selector("a = 1")) == hash(Selector("a = 1"))
    assert Selector("a = 1") != Selector("a=1")  # same meaning, different text
    assert Selector(None) == Selector("")
    assert len({Selector("a = 1"), Selector("a = 1"), Selector("b = 1")}) == 2
    assert Selector("a = 1") != "a = 1"


def test_parse_is_cached() -> None:
    first = Selector.parse("cached = 1")
    assert Selector.parse("cached = 1") is first
    assert first == Selector("cached = 1")
    with pytest.raises(InvalidSelectorException):
        Selector.parse("cached =")
    with pytest.raises(InvalidSelectorException):  # errors are raised every time, not cached
        Selector.parse("cached =")


def test_pickles_by_text() -> None:
    selector = Selector("a = 1 OR b LIKE 'x%'")
    copy = pickle.loads(pickle.dumps(selector))
    assert copy == selector
    assert copy.matches(make_message(b="xyz"))


def test_invalid_selector_fails_at_construction() -> None:
    with pytest.raises(InvalidSelectorException):
        Selector("a = = 1")
    with pytest.raises(InvalidSelectorException):
        Selector(42)  # type: ignore[arg-type]


def test_python_source_is_the_compiled_predicate() -> None:
    source = Selector("JMSType = 'car' AND weight > 2500").python_source
    assert "def is_true(m):" in source and "def is_false(m):" in source
    assert "m._type == 'car'" in source
    assert "p.get('weight')" in source
    assert Selector("").python_source == ""
