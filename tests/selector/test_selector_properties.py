"""Generated selectors and generated text.

Random well-typed syntax trees are rendered to text, parsed back (the same tree must come out),
compiled, and evaluated on random typed messages; the compiled predicate must agree with the
reference interpreter in ``selector_reference.py`` on every one. Arbitrary text and token soup
fed to the parser may only ever produce a tree or ``InvalidSelectorException``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jms.errors import InvalidSelectorException
from jms.message import TextMessage
from jms.selector import Selector, parse
from jms.selector.ast import (
    And,
    Arithmetic,
    ArithmeticOperator,
    Between,
    Comparison,
    ComparisonOperator,
    Expression,
    Identifier,
    In,
    IsNull,
    Like,
    Literal,
    Not,
    Or,
    Unary,
    UnaryOperator,
    like_parts,
    to_text,
)
from jms.types import Double, Float, Int, Long
from tests.selector import selector_reference as reference
from tests.strategies import (
    java_ints,
    java_longs,
    java_strings,
    property_values,
)

PROPERTY_NAMES = ("a", "b", "c", "s", "größe", "_x")

# --- syntax trees -----------------------------------------------------------------------------

small_ints = st.integers(-3, 3)
numeric_literals = st.one_of(
    small_ints.map(lambda n: Literal(Int(n))),
    java_ints.map(Literal),
    java_longs.map(Literal),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: Literal(Double(x))),
    st.floats(width=32, allow_nan=False, allow_infinity=False).map(lambda x: Literal(Float(x))),
    # Where Java's promotion rounds: 2**53 + 1 is no double, 2**24 + 1 no float.
    st.sampled_from(
        [Double(0.5), Double(-0.0), Double(2.0**53), Float(16777216.0), Long(2**53 + 1)]
    ).map(Literal),
    st.sampled_from([Int(16777217), Int(2**31 - 1), Long(2**63 - 1)]).map(Literal),
)


properties = st.sampled_from(PROPERTY_NAMES).map(Identifier)
# Header fields of every type appear wherever an identifier may: "comparing unlike types is FALSE"
# holds for a header of a known type exactly as for a property holding that type (issue 13).
headers = st.sampled_from(
    [
        "JMSPriority",
        "JMSTimestamp",
        "JMSType",
        "JMSMessageID",
        "JMSCorrelationID",
        "JMSDeliveryMode",
    ]
).map(Identifier)
identifiers = st.one_of(properties, headers)
string_literals = st.text("ab'%_\n", max_size=4).map(Literal)
boolean_literals = st.booleans().map(Literal)
any_comparison = st.sampled_from(list(ComparisonOperator))
equality = st.sampled_from([ComparisonOperator.EQUAL, ComparisonOperator.NOT_EQUAL])

numeric = st.recursive(
    st.one_of(numeric_literals, identifiers),
    lambda inner: st.one_of(
        st.builds(Unary, st.sampled_from(list(UnaryOperator)), inner),
        st.builds(Arithmetic, st.sampled_from(list(ArithmeticOperator)), inner, inner),
    ),
    max_leaves=5,
)
string_sides = st.one_of(string_literals, identifiers)
boolean_sides = st.one_of(boolean_literals, identifiers)


def _valid_pattern(pair: tuple[str, str | None]) -> bool:
    try:
        like_parts(*pair)
    except ValueError:
        return False
    return True


like_patterns = st.tuples(
    st.text("ab%_!\\\n", max_size=6), st.sampled_from([None, "!", "\\", "%", "_"])
).filter(_valid_pattern)


base_conditions = st.one_of(
    boolean_literals,
    identifiers,
    st.builds(Comparison, any_comparison, numeric, numeric),
    st.builds(Comparison, equality, string_sides, string_sides),
    st.builds(Comparison, equality, boolean_sides, boolean_sides),
    st.builds(Comparison, any_comparison, identifiers, identifiers),
    # Unlike types, an identifier (often a header) on either side; `TRUE = 1` is rejected.
    st.builds(Comparison, equality, identifiers, st.one_of(numeric, string_sides, boolean_sides)),
    st.builds(Comparison, equality, st.one_of(numeric, string_sides, boolean_sides), identifiers),
    st.builds(Between, numeric, numeric, numeric, st.booleans()),
    st.builds(
        In,
        identifiers,
        st.lists(st.text("ab'%", max_size=3), min_size=1, max_size=3).map(tuple),
        st.booleans(),
    ),
    st.builds(
        lambda identifier, pattern, negated: Like(identifier, pattern[0], pattern[1], negated),
        identifiers,
        like_patterns,
        st.booleans(),
    ),
    st.builds(IsNull, identifiers, st.booleans()),
)

conditions = st.recursive(
    base_conditions,
    lambda inner: st.one_of(
        st.builds(Not, inner),
        st.lists(inner, min_size=2, max_size=3).map(lambda operands: And(tuple(operands))),
        st.lists(inner, min_size=2, max_size=3).map(lambda operands: Or(tuple(operands))),
        st.builds(Comparison, equality, inner, inner),
    ),
    max_leaves=8,
)

# --- messages ---------------------------------------------------------------------------------

# Values chosen to sit on the edges the selector must get right, mixed with arbitrary ones.
edge_values = st.sampled_from(
    [
        True,
        False,
        "",
        "a",
        "ab",
        "a%b",
        "PERSISTENT",
        *(Int(n) for n in (-1, 0, 1, 2, 16777217, 2**31 - 1, -(2**31))),
        Long(2**53 + 1),
        Long(2**63 - 1),
        Float(16777216.0),
        Double(2.0**53),
        Double(float("nan")),
    ]
)


@st.composite
def messages(draw: st.DrawFn) -> TextMessage:
    message = TextMessage()
    for name in PROPERTY_NAMES:
        if draw(st.booleans()):
            message.set_object_property(name, draw(st.one_of(edge_values, property_values)))
    message.set_jms_type(draw(st.one_of(st.none(), st.sampled_from(["a", "ab", "car"]))))
    message.set_jms_message_id(draw(st.one_of(st.none(), java_strings)))
    message.set_jms_correlation_id(draw(st.one_of(st.none(), st.sampled_from(["a", "b%"]))))
    message.set_jms_priority(draw(st.integers(0, 9)))
    message.set_jms_timestamp(draw(st.one_of(st.integers(-3, 3), java_longs)))
    message.set_jms_delivery_mode(draw(st.sampled_from([1, 2])))
    return message


# --- properties -------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conditions, st.lists(messages(), min_size=1, max_size=4))
def test_compiled_selector_agrees_with_reference_interpreter(
    tree: Expression, samples: list[TextMessage]
) -> None:
    text = to_text(tree)
    assert parse(text) == tree, text
    selector = Selector(text)
    for message in samples:
        expected = reference.evaluate(tree, message)
        assert selector.evaluate(message) is expected, (text, message.get_property_names())
        assert selector.matches(message) is (expected is True)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_parses_or_raises_invalid_selector(text: str) -> None:
    _parse_or_reject(text)


TOKENS = [
    "a", "b", "JMSType", "JMSPriority", "1", "-", "+", "*", "/", "2.5", "0x1F", "7L", "'x'",
    "''''", "'%'", "=", "<>", "<", ">=", "(", ")", ",", "AND", "or", "NOT", "between", "IN",
    "LIKE", "ESCAPE", "'!'", "IS", "NULL", "TRUE", "false", " ", "\n",
]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=14), st.lists(messages(), max_size=2))
def test_token_soup_parses_or_raises_and_evaluates_like_the_reference(
    tokens: list[str], samples: list[TextMessage]
) -> None:
    text = " ".join(tokens)
    tree = _parse_or_reject(text)
    if tree is None:
        return
    selector = Selector(text)
    for message in samples:
        assert selector.evaluate(message) is reference.evaluate(tree, message), text


def _parse_or_reject(text: str) -> Any:
    try:
        return parse(text)
    except InvalidSelectorException as error:
        assert "at column" in str(error)
        return None
