"""Hypothesis strategies for the Spark tests: messages Spark can hold, and well-typed selector trees.

Spark strings are UTF-8, so strings here never hold a lone surrogate (``tests/strategies.py``'s do,
on purpose, for the codec); everything else about a message is drawn as freely as there. Selector
trees are built from ``jms.selector.ast`` nodes, rendered with ``to_text`` and parsed back by the
tests, over a small pool of identifiers so that comparisons meet values of every Java type.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from jms.message import (
    Message,
    TextMessage,
)
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
)
from jms.types import Byte, Char, Double, Float, Int, Long, Short
from tests.strategies import (
    java_ints,
    java_longs,
    messages_of,
    property_values_of,
)

# --- messages ---------------------------------------------------------------------------------

utf8_strings = st.text(st.characters(codec="utf-8"), max_size=30)
utf8_chars = st.characters(codec="utf-8", max_codepoint=0xFFFF).map(Char)
property_values = property_values_of(utf8_strings)


def spark_messages() -> st.SearchStrategy[Message]:
    """Any message of any class whose every string is valid UTF-8 (Spark strings cannot hold a
    lone surrogate), all headers drawn."""
    return messages_of(utf8_strings, utf8_chars)


# --- selector trees ---------------------------------------------------------------------------

#: Property names the differential tests use; "missing" is never set.
DYNAMIC_PROPERTIES = ("a", "b", "c", "größe", "$x", "missing")
NUMBER_HEADERS = ("JMSPriority", "JMSTimestamp", "JMSXDeliveryCount")
STRING_HEADERS = ("JMSType", "JMSMessageID", "JMSCorrelationID", "JMSDeliveryMode")

# Values on the edges a translation can get wrong: wrap-around, rounding to float, NaN, -0.0.
EDGE_NUMBERS = (
    *(Int(n) for n in (-1, 0, 1, 2, 3, 7, 16777217, 2**31 - 1, -(2**31))),
    *(Long(n) for n in (0, -5, 2**31, 2**53 + 1, 2**63 - 1, -(2**63))),
    *(Byte(n) for n in (-128, 0, 127)),
    *(Short(n) for n in (-32768, 2, 32767)),
    *(Float(x) for x in (0.0, -0.0, 0.5, 16777216.0, 3.4028234663852886e38, float("nan"))),
    *(Float(x) for x in (float("inf"), float("-inf"), 1.401298464324817e-45)),
    *(Double(x) for x in (0.0, -0.0, 0.1, 2.0**53, 1e308, float("nan"), float("-inf"))),
)
EDGE_STRINGS = ("", "a", "ab", "a%b", "a_b", "a\nb", "PERSISTENT", "car", "é")

edge_values = st.one_of(
    st.sampled_from(EDGE_NUMBERS),
    st.sampled_from(EDGE_STRINGS),
    st.booleans(),
)
selector_values = st.one_of(edge_values, edge_values, property_values)

numeric_literals = st.one_of(
    st.integers(-3, 3).map(lambda n: Literal(Int(n))),
    st.sampled_from([n for n in EDGE_NUMBERS if type(n) in (Int, Long)]).map(Literal),
    java_ints.map(Literal),
    java_longs.map(Literal),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: Literal(Double(x))),
    st.floats(width=32, allow_nan=False, allow_infinity=False).map(lambda x: Literal(Float(x))),
    st.sampled_from(
        [Double(0.5), Double(-0.0), Double(2.0**53), Float(16777216.0), Float(0.1), Double(2.5)]
    ).map(Literal),
)
string_literals = st.one_of(st.sampled_from(EDGE_STRINGS), st.text("ab%_\n", max_size=3)).map(
    Literal
)
boolean_literals = st.booleans().map(Literal)
orderings = st.sampled_from(list(ComparisonOperator))
equalities = st.sampled_from([ComparisonOperator.EQUAL, ComparisonOperator.NOT_EQUAL])


def _valid_like(pair: tuple[str, str | None]) -> bool:
    try:
        like_parts(*pair)
    except ValueError:
        return False
    return True


like_patterns = st.tuples(
    st.text("ab%_!\\\n", max_size=6), st.sampled_from([None, "!", "\\", "%", "_"])
).filter(_valid_like)


def selector_trees(
    properties: tuple[str, ...], headers: tuple[str, ...] = NUMBER_HEADERS + STRING_HEADERS
) -> st.SearchStrategy[Expression]:
    """Selector trees the parser accepts, over these names. Header fields of every type take
    every place an identifier may, unlike types included (`JMSPriority = 'a'` is FALSE)."""
    identifiers = st.sampled_from(properties + headers).map(Identifier)
    numbers = st.recursive(
        st.one_of(numeric_literals, identifiers),
        lambda inner: st.one_of(
            st.builds(Unary, st.sampled_from(list(UnaryOperator)), inner),
            st.builds(Arithmetic, st.sampled_from(list(ArithmeticOperator)), inner, inner),
        ),
        max_leaves=3,
    )
    strings = st.one_of(string_literals, identifiers)
    booleans = st.one_of(boolean_literals, identifiers)
    base = st.one_of(
        boolean_literals,
        identifiers,
        st.builds(Comparison, orderings, numbers, numbers),
        st.builds(Comparison, orderings, identifiers, identifiers),
        st.builds(Comparison, equalities, strings, strings),
        st.builds(Comparison, equalities, booleans, booleans),
        # Unlike types, an identifier (often a header) on either side; `TRUE = 1` is rejected.
        st.builds(Comparison, equalities, identifiers, st.one_of(numbers, strings, booleans)),
        st.builds(Comparison, equalities, st.one_of(numbers, strings, booleans), identifiers),
        st.builds(Between, numbers, numbers, numbers, st.booleans()),
        st.builds(
            In,
            identifiers,
            st.lists(
                string_literals.map(lambda literal: literal.value), min_size=1, max_size=3
            ).map(tuple),
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
    return st.recursive(
        base,
        lambda inner: st.one_of(
            st.builds(Not, inner),
            st.lists(inner, min_size=2, max_size=3).map(lambda items: And(tuple(items))),
            st.lists(inner, min_size=2, max_size=3).map(lambda items: Or(tuple(items))),
            # A condition in value position: "(a > 1) = (b < 2)".
            st.builds(Comparison, equalities, inner, inner),
        ),
        max_leaves=5,
    )


@st.composite
def selector_messages(draw: st.DrawFn, properties: tuple[str, ...] = DYNAMIC_PROPERTIES) -> Message:
    """A TextMessage whose pool properties hold values of any type (or are absent)."""
    message = TextMessage("body")
    for name in properties:
        if name != "missing" and draw(st.booleans()):
            message.set_object_property(name, draw(selector_values))
    message.set_jms_type(draw(st.none() | st.sampled_from(EDGE_STRINGS)))
    message.set_jms_message_id(draw(st.none() | st.sampled_from(EDGE_STRINGS)))
    if draw(st.booleans()):
        message.set_jms_correlation_id(draw(st.none() | st.sampled_from(EDGE_STRINGS)))
    else:
        message.set_jms_correlation_id_as_bytes(draw(st.sampled_from([b"a", b"ab", b"\xff"])))
    message.set_jms_priority(draw(st.integers(0, 9)))
    message.set_jms_timestamp(draw(st.one_of(st.integers(-3, 3), java_longs)))
    message.set_jms_delivery_mode(draw(st.sampled_from([1, 2])))
    if draw(st.booleans()):
        message.set_object_property("JMSXDeliveryCount", draw(st.sampled_from(EDGE_NUMBERS[:9])))
    return message


def value_record(type_name: str, **fields: Any) -> dict[str, Any]:
    """A ``PROPERTY_VALUE`` struct as a row holds it: ``type_name`` and the given fields set."""
    return {
        "type": type_name,
        "boolean": None,
        "long": None,
        "double": None,
        "string": None,
        **fields,
    }
