"""Header fields of a known type in every position a selector allows (issue 13).

The spec: "Only like type values can be compared. [...] If the comparison of non-like type values
is attempted, the value of the operation is false. If either of the type values evaluates to NULL,
the value of the expression is unknown." So a header compared with a value of another type is a
valid selector with a meaning, and evaluates exactly as the same expression on a property holding
the header's value with the header's Java type does.
"""

from __future__ import annotations

from typing import Any

import pytest

from jms.errors import InvalidSelectorException
from jms.selector import Selector
from jms.types import Int, Long
from tests.selector.selector_testing import make_message

# Each selectable header, the value the message holds, and that value as its selector type.
HEADERS: dict[str, tuple[Any, Any]] = {
    "JMSDeliveryMode": (2, "PERSISTENT"),
    "JMSPriority": (7, Int(7)),
    "JMSTimestamp": (1_700_000_000_000, Long(1_700_000_000_000)),
    "JMSMessageID": ("ID:42", "ID:42"),
    "JMSCorrelationID": ("7", "7"),
    "JMSType": ("car", "car"),
}

# Every position an identifier may take, with unlike types on the other side.
TEMPLATES = [
    "{h} = '7'",
    "{h} <> '7'",
    "'7' = {h}",
    "{h} = 2",
    "{h} <> 2",
    "2 = {h}",
    "{h} > 1",
    "{h} <= 1.5E0",
    "{h} = TRUE",
    "{h} <> FALSE",
    "{h} = {h}",
    "{h} = (a = 1)",
    "{h} BETWEEN 1 AND 9",
    "{h} NOT BETWEEN 1 AND 9",
    "5 BETWEEN {h} AND 9",
    "5 BETWEEN 1 AND {h}",
    "{h} IN ('7', 'car')",
    "{h} NOT IN ('7', 'car')",
    "{h} LIKE '%'",
    "{h} NOT LIKE '7%'",
    "{h}",
    "NOT ({h})",
    "NOT {h}",
    "{h} AND a = 1",
    "{h} OR a = 1",
    "{h} * 2 < 5",
    "-{h} < 0",
    "{h} + a > 0",
    "{h} / 0 = 1",
    "{h} IS NULL",
    "{h} IS NOT NULL",
]


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("header", sorted(HEADERS))
def test_header_evaluates_like_a_property_of_its_type(header: str, template: str) -> None:
    # "If the comparison of non-like type values is attempted, the value of the operation is
    # false" — the selector is valid, whatever the header's type.
    held, selector_value = HEADERS[header]
    on_header = Selector(template.format(h=header))
    on_property = Selector(template.format(h="h"))
    for a in (None, Int(1)):
        properties = {} if a is None else {"a": a}
        message = make_message({header: held}, **properties)
        twin = make_message(h=selector_value, **properties)
        assert on_header.evaluate(message) is on_property.evaluate(twin), (template, a)


def test_issue_examples_are_false() -> None:
    # "comparing unlike types is *false* (or unknown with NULL), arithmetic on a non-number is
    # unknown, a non-boolean where a condition is expected is unknown" — in jms a non-boolean
    # condition is FALSE and arithmetic on a non-number a type error, exactly as for properties.
    message = make_message({"JMSPriority": 7, "JMSType": "car", "JMSCorrelationID": "c"})
    for text in (
        "JMSPriority = '7'",
        "JMSDeliveryMode = 2",
        "JMSType BETWEEN 1 AND 9",
        "JMSCorrelationID = TRUE",
        "JMSCorrelationID * 2 < 5",
        "JMSType",
    ):
        assert Selector(text).evaluate(message) is False, text
    assert Selector("NOT (JMSType)").evaluate(message) is True


def test_null_header_is_unknown_with_unlike_types() -> None:
    # "If either of the type values evaluates to NULL, the value of the expression is unknown."
    message = make_message()  # JMSType, JMSCorrelationID and JMSMessageID are null
    for text in ("JMSType = 2", "JMSCorrelationID = TRUE", "JMSType * 2 < 5", "NOT JMSType"):
        assert Selector(text).evaluate(message) is None, text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("TRUE = 1", "cannot compare a boolean with a number"),
        ("'7' = 7", "cannot compare a String with a number"),
        ("JMSPriority < '7'", "String values compare only with = and <>"),
        ("JMSType >= TRUE", "boolean values compare only with = and <>"),
        ("JMSType BETWEEN 'a' AND 'b'", "must be a number"),
        ("JMSPriority + 'x' > 1", "must be a number"),
        ("NOT (JMSPriority + 1)", "must be a condition"),
    ],
)
def test_rejected_where_activemq_rejects_or_the_grammar_has_no_place(
    text: str, reason: str
) -> None:
    # ActiveMQ rejects `=` between a boolean literal and another literal, ordering a String or
    # boolean literal, and a non-boolean expression where a condition goes. "Arithmetic
    # expressions are composed of themselves, arithmetic operations, identifiers [...] and numeric
    # literals": a String literal has no place in one (ActiveMQ would concatenate instead).
    with pytest.raises(InvalidSelectorException, match=reason):
        Selector(text)
