"""One test (at least) per sentence of the spec's "Message Selectors", "Null Values" and "Special
Notes" sections (../shared/spec/jakarta-messaging-3-message-javadoc.txt), in the spec's order.
Each test quotes the sentence it holds us to."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from jms.errors import InvalidSelectorException, JMSException
from jms.message import TextMessage
from jms.selector import Selector, parse
from jms.selector.ast import (
    Arithmetic,
    ArithmeticOperator,
    Comparison,
    ComparisonOperator,
    Identifier,
    IdentifierKind,
    Literal,
)
from jms.types import Byte, Double, Float, Int, Long, Short
from tests.selector.selector_testing import make_message


def evaluate(selector: str, headers: dict[str, Any] | None = None, **properties: Any) -> Any:
    return Selector(selector).evaluate(make_message(headers, **properties))


def invalid(selector: str) -> InvalidSelectorException:
    with pytest.raises(InvalidSelectorException) as raised:
        Selector(selector)
    return raised.value


# --- Message Selectors ------------------------------------------------------------------------


def test_selects_by_header_and_property_references() -> None:
    # "A Jakarta Messaging message selector allows a client to specify, by header field
    # references and property references, the messages it is interested in."
    assert evaluate("JMSType = 'car' AND color = 'blue'", {"JMSType": "car"}, color="blue")
    assert evaluate("JMSType = 'car' AND color = 'blue'", {"JMSType": "bus"}, color="blue") is False


def test_only_matching_messages_are_selected() -> None:
    # "Only messages whose header and property values match the selector are delivered."
    selector = Selector("n > 1")
    messages = [make_message(n=Int(value)) for value in range(4)]
    assert [m.get_int_property("n") for m in messages if selector.matches(m)] == [2, 3]


def test_matching_leaves_the_message_as_it_was() -> None:
    # "What it means for a message not to be delivered depends on the MessageConsumer being used"
    # — so the selector only answers; it neither consumes nor changes the message.
    message = make_message({"JMSType": "car"}, n=Int(1))
    selector = Selector("n = 1 AND JMSType = 'car'")
    assert selector.matches(message) and selector.matches(message)
    assert message.get_property_names() == ["n"] and message.get_jms_type() == "car"


def test_body_values_cannot_be_referenced() -> None:
    # "Message selectors cannot reference message body values."
    message = TextMessage("text")
    for name in ("text", "body", "Text"):
        assert Selector(f"{name} = 'text'").evaluate(message) is None


def test_matches_when_true_after_substituting_values() -> None:
    # "A message selector matches a message if the selector evaluates to true when the message's
    # header field values and property values are substituted for their corresponding
    # identifiers in the selector."
    message = make_message({"JMSPriority": 7}, weight=Int(3000))
    assert Selector("JMSPriority = 7 AND weight = 3000").matches(message)
    assert Selector("7 = 7 AND 3000 = 3000").matches(message)


def test_selector_is_a_string_in_sql92_conditional_syntax() -> None:
    # "A message selector is a String whose syntax is based on a subset of the SQL92 conditional
    # expression syntax."
    assert evaluate("(a = 1 OR b = 2) AND NOT c IS NULL", a=Int(1), c="x") is True
    with pytest.raises(InvalidSelectorException):
        Selector(b"a = 1")  # type: ignore[arg-type]
    for sql_outside_the_subset in ("SELECT a", "a = 1 LIMIT 1", "a IN (SELECT b)", "a = ANY b"):
        invalid(sql_outside_the_subset)


def test_empty_string_means_no_selector() -> None:
    # "If the value of a message selector is an empty string, the value is treated as a null and
    # indicates that there is no message selector for the message consumer."
    assert parse("") is None and parse(None) is None
    assert Selector("") == Selector(None)
    for message in (TextMessage(), make_message(n=Int(1))):
        assert Selector("").matches(message) and Selector(None).evaluate(message) is True


def test_left_to_right_within_a_precedence_level() -> None:
    # "The order of evaluation of a message selector is from left to right within precedence
    # level."
    assert evaluate("8 / 4 / 2 = 1") is True
    assert evaluate("8 - 4 - 2 = 2") is True
    assert evaluate("a / b * c = 6", a=Int(7), b=Int(2), c=Int(2)) is True  # (7/2)*2, not 7/4
    tree = parse("a - b - c = 0")
    assert isinstance(tree, Comparison) and isinstance(tree.left, Arithmetic)
    assert tree.left.left == Arithmetic(
        ArithmeticOperator.SUBTRACT, Identifier("a"), Identifier("b")
    )


def test_parentheses_change_the_order() -> None:
    # "Parentheses can be used to change this order."
    assert evaluate("8 / (4 / 2) = 4") is True
    assert evaluate("8 - (4 - 2) = 6") is True
    assert evaluate("NOT (a = 1 OR a = 2)", a=Int(1)) is False


def test_keywords_and_literals_are_case_insensitive() -> None:
    # "Predefined selector literals and operator names are shown here in uppercase; however, they
    # are case insensitive."
    message = make_message(a=Int(5), s="abc", flag=True)
    for text in (
        "a between 1 and 9 And s like 'a%' aNd s iN ('abc') and s is not null",
        "NoT a NOT BETWEEN 1 AND 9 or FALSE",
        "flag = true AND NOT flag = False",
        "s lIkE 'a!_' eScApE '!' oR TRUE",
    ):
        assert Selector(text).matches(message), text


# Literals


def test_string_literal_with_doubled_quote() -> None:
    # "A string literal is enclosed in single quotes, with a single quote represented by doubled
    # single quote; for example, 'literal' and 'literal''s'."
    assert evaluate("s = 'literal''s'", s="literal's") is True
    assert evaluate("s = 'literal'", s="literal") is True
    assert evaluate("s = ''''", s="'") is True
    assert evaluate("s = ''", s="") is True
    invalid("s = 'unterminated")
    invalid("s = 'odd''")


def test_string_literals_are_unicode() -> None:
    # "Like string literals in the Java programming language, these use the Unicode character
    # encoding."
    assert evaluate("s = 'Grüße, 世界 😀'", s="Grüße, 世界 😀") is True
    assert evaluate("s = 'line\nbreak'", s="line\nbreak") is True


def test_exact_literals_without_decimal_point_in_long_range() -> None:
    # "An exact numeric literal is a numeric value without a decimal point, such as 57, -957, and
    # +62; numbers in the range of long are supported."
    assert parse("a = 57") == Comparison(
        ComparisonOperator.EQUAL, Identifier("a"), Literal(Int(57))
    )
    assert evaluate("a = -957", a=Int(-957)) is True
    assert evaluate("a = +62", a=Int(62)) is True
    assert evaluate("a = 9223372036854775807", a=Long(2**63 - 1)) is True
    assert evaluate("a = -9223372036854775808", a=Long(-(2**63))) is True
    invalid("a = 9223372036854775808")
    invalid("a = -9223372036854775809")


def test_exact_literals_use_java_integer_syntax() -> None:
    # "Exact numeric literals use the integer literal syntax of the Java programming language."
    assert evaluate("a = 0x1F AND a = 037 AND a = 0b11111 AND a = 3_1", a=Int(31)) is True
    assert evaluate("a = 31L AND a = 0x1fl", a=Int(31)) is True
    assert parse("a = 5L") == Comparison(
        ComparisonOperator.EQUAL, Identifier("a"), Literal(Long(5))
    )
    # Java reads radix digits as a two's-complement bit pattern: 0xFFFFFFFF is the int -1.
    assert evaluate("a = 0xFFFFFFFF", a=Int(-1)) is True
    assert evaluate("a = 0xFFFFFFFFFFFFFFFFL", a=Long(-1)) is True
    assert evaluate("a = 0x7fffffffffffffffL", a=Long(2**63 - 1)) is True
    for not_java in ("a = 08", "a = 1_", "a = 0x", "a = 0x_1", "a = 1__", "a = 5LL", "a = 0b2"):
        invalid(not_java)


def test_approximate_literals_scientific_or_with_decimal() -> None:
    # "An approximate numeric literal is a numeric value in scientific notation, such as 7E3 and
    # -57.9E2, or a numeric value with a decimal, such as 7., -95.7, and +6.2; numbers in the
    # range of double are supported."
    for text, value in (("7E3", 7000.0), ("-57.9E2", -5790.0), ("7.", 7.0), ("-95.7", -95.7)):
        assert parse(f"a = {text}") == Comparison(
            ComparisonOperator.EQUAL, Identifier("a"), Literal(Double(value))
        )
    assert evaluate("a = +6.2", a=Double(6.2)) is True
    assert evaluate("a = 1.7976931348623157E308", a=Double(1.7976931348623157e308)) is True
    assert evaluate("a = 4.9E-324", a=Double(5e-324)) is True
    invalid("a = 1E309")  # beyond double
    invalid("a = 1E-400")  # a non-zero literal that would round to zero


def test_approximate_literals_use_java_floating_syntax() -> None:
    # "Approximate literals use the floating-point literal syntax of the Java programming
    # language."
    assert evaluate("a = .5 AND a = 0.5e0 AND a = 5e-1d AND a = 0x1p-1 AND a = 0.5D", a=Double(0.5))
    assert parse("a = 1.5f") == Comparison(
        ComparisonOperator.EQUAL, Identifier("a"), Literal(Float(1.5))
    )
    assert parse("a = 2d") == Comparison(
        ComparisonOperator.EQUAL, Identifier("a"), Literal(Double(2.0))
    )
    # A float literal is rounded to 32 bits, as javac does.
    assert evaluate("a = 0.1f", a=Float(0.1)) is True
    assert evaluate("a = 0.1f", a=Double(0.1)) is False
    for not_java in ("a = 1e", "a = 1.5e+", "a = 1.2.3", "a = 0x1.8", "a = 1e5x"):
        invalid(not_java)


def test_boolean_literals() -> None:
    # "The boolean literals TRUE and FALSE."
    assert evaluate("TRUE") is True and evaluate("FALSE") is False
    assert evaluate("flag = TRUE", flag=True) is True
    assert evaluate("flag = FALSE", flag=True) is False


# Identifiers


def test_identifier_is_letters_and_digits_starting_with_a_letter() -> None:
    # "An identifier is an unlimited-length sequence of letters and digits, the first of which
    # must be a letter."
    long_name = "x" * 5000 + "9"
    assert Selector(f"{long_name} = 1").evaluate(TextMessage()) is None
    assert evaluate("a1b2 = 3", a1b2=Int(3)) is True
    invalid("1abc = 3")
    assert evaluate("a-b = 3", a=Int(5), b=Int(2)) is True  # "-" is not part of a name


def test_letters_are_java_letters_including_underscore_and_dollar() -> None:
    # "A letter is any character for which the method Character.isJavaLetter returns true. This
    # includes '_' and '$'."
    message = make_message(
        _x=Int(1), **{"$y": Int(2), "größe": Int(3), "名前": Int(4), "€": Int(5)}
    )
    assert Selector("_x = 1 AND $y = 2 AND größe = 3 AND 名前 = 4 AND € = 5").matches(message)
    for not_a_letter in ("#a = 1", "@a = 1", "٣a = 1", "\\a = 1"):
        invalid(not_a_letter)


def test_letter_or_digit_is_java_letter_or_digit() -> None:
    # "A letter or digit is any character for which the method Character.isJavaLetterOrDigit
    # returns true."
    message = make_message(**{"a٣": Int(1), "b$_9": Int(2), "é\u0301": Int(3)})  # Arabic-Indic 3
    assert Selector("a٣ = 1 AND b$_9 = 2 AND é\u0301 = 3").matches(message)
    invalid("a# = 1")


def test_identifiers_cannot_be_null_true_false() -> None:
    # "Identifiers cannot be the names NULL, TRUE, and FALSE."
    for name in ("NULL", "null", "True", "FALSE"):
        invalid(f"{name} = 'x'")
    error = invalid("NULL = 1")
    assert "IS NULL" in str(error)


def test_identifiers_cannot_be_keywords() -> None:
    # "Identifiers cannot be NOT, AND, OR, BETWEEN, LIKE, IN, IS, or ESCAPE."
    for name in ("NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE", "escape", "Is"):
        invalid(f"{name} = 1")
        invalid(f"x = 1 AND {name} = 1")
    # Longer names that start with a keyword are ordinary identifiers.
    assert evaluate("ORDER = 1 AND ISBN = 2 AND NOTE = 3", ORDER=Int(1), ISBN=Int(2), NOTE=Int(3))


def test_identifiers_are_header_or_property_references() -> None:
    # "Identifiers are either header field references or property references."
    assert Identifier("JMSType").kind is IdentifierKind.HEADER
    assert Identifier("color").kind is IdentifierKind.PROPERTY
    message = make_message({"JMSType": "t"}, color="c")
    assert Selector("JMSType = 't' AND color = 'c'").matches(message)


def test_property_type_is_the_type_it_was_set_with() -> None:
    # "The type of a property value in a message selector corresponds to the type used to set the
    # property."
    message = TextMessage()
    message.set_string_property("s", "5")
    message.set_int_property("i", 5)
    message.set_boolean_property("b", True)
    assert Selector("s = '5' AND i = 5 AND b = TRUE").matches(message)
    assert Selector("s = 5").evaluate(message) is False  # a String property is no number
    assert Selector("i = s").evaluate(message) is False  # an int is not a String
    assert Selector("b = i").evaluate(message) is False


def test_absent_property_is_null() -> None:
    # "If a property that does not exist in a message is referenced, its value is NULL."
    assert evaluate("missing = 1") is None
    assert evaluate("missing IS NULL") is True
    assert evaluate("missing <> 1") is None


def test_getter_conversions_do_not_apply() -> None:
    # "The conversions that apply to the get methods for properties do not apply when a property
    # is used in a message selector expression. For example, suppose you set a property as a
    # string value, as in the following: myMessage.setStringProperty("NumberOfOrders", "2"); The
    # following expression in a message selector would evaluate to false, because a string cannot
    # be used in an arithmetic expression: "NumberOfOrders > 1""
    message = TextMessage()
    message.set_string_property("NumberOfOrders", "2")
    assert message.get_int_property("NumberOfOrders") == 2  # the getter converts...
    selector = Selector("NumberOfOrders > 1")
    assert selector.evaluate(message) is False  # ...the selector does not
    assert Selector("NumberOfOrders + 0 > 1").evaluate(message) is False
    assert Selector("NumberOfOrders = 2").evaluate(message) is False
    message.set_string_property("flag", "true")
    assert Selector("flag = TRUE").evaluate(message) is False
    message.set_int_property("n", 2)
    assert Selector("n = '2'").evaluate(message) is False
    assert Selector("n IN ('2')").evaluate(message) is False


def test_identifiers_are_case_sensitive() -> None:
    # "Identifiers are case-sensitive."
    message = make_message(Color="blue")
    assert Selector("Color = 'blue'").evaluate(message) is True
    assert Selector("color = 'blue'").evaluate(message) is None
    assert Selector("jmstype IS NULL").matches(make_message({"JMSType": "car"}))


def test_header_references_are_restricted_to_six_fields() -> None:
    # "Message header field references are restricted to JMSDeliveryMode, JMSPriority,
    # JMSMessageID, JMSTimestamp, JMSCorrelationID, and JMSType."
    message = make_message(
        {
            "JMSDeliveryMode": "NON_PERSISTENT",
            "JMSPriority": 6,
            "JMSMessageID": "ID:1",
            "JMSTimestamp": 1234,
            "JMSCorrelationID": "c",
            "JMSType": "t",
        }
    )
    message.set_jms_expiration(99)
    message.set_jms_redelivered(True)
    assert Selector(
        "JMSDeliveryMode = 'NON_PERSISTENT' AND JMSPriority = 6 AND JMSMessageID = 'ID:1' "
        "AND JMSTimestamp = 1234 AND JMSCorrelationID = 'c' AND JMSType = 't'"
    ).matches(message)
    # Other header fields are not selectable: they are (absent) properties.
    for other in (
        "JMSExpiration",
        "JMSRedelivered",
        "JMSDestination",
        "JMSReplyTo",
        "JMSDeliveryTime",
    ):
        assert Identifier(other).kind is IdentifierKind.PROPERTY
        assert Selector(f"{other} IS NULL").matches(message)
    assert Selector("JMSExpiration = 99").evaluate(message) is None


def test_null_message_id_correlation_id_and_type_are_null() -> None:
    # "JMSMessageID, JMSCorrelationID, and JMSType values may be null and if so are treated as a
    # NULL value."
    message = TextMessage()
    for name in ("JMSMessageID", "JMSCorrelationID", "JMSType"):
        assert Selector(f"{name} IS NULL").evaluate(message) is True
        assert Selector(f"{name} = 'x'").evaluate(message) is None
        assert Selector(f"{name} <> 'x'").evaluate(message) is None
        assert Selector(f"{name} LIKE '%'").evaluate(message) is None
        assert Selector(f"{name} IN ('x')").evaluate(message) is None
    message.set_jms_correlation_id_as_bytes(b"abc")
    assert Selector("JMSCorrelationID = 'abc'").matches(message)


def test_jmsx_names_are_properties() -> None:
    # "Any name beginning with 'JMSX' is a Jakarta Messaging defined property name."
    message = make_message(JMSXGroupID="g1", JMSXGroupSeq=Int(3))
    assert Selector("JMSXGroupID = 'g1' AND JMSXGroupSeq = 3").matches(message)
    assert Identifier("JMSXDeliveryCount").kind is IdentifierKind.PROPERTY
    assert Selector("JMSXDeliveryCount IS NULL").matches(message)  # unsupported: just absent
    assert Selector("JMSXGroupID = 'g1'").identifiers == {"JMSXGroupID"}


def test_jms_underscore_names_are_provider_properties() -> None:
    # "Any name beginning with 'JMS_' is a provider-specific property name."
    message = make_message(JMS_jms_DeadLetterReason="expired")
    assert Identifier("JMS_jms_DeadLetterReason").kind is IdentifierKind.PROPERTY
    assert Selector("JMS_jms_DeadLetterReason = 'expired'").matches(message)


def test_other_names_are_application_properties() -> None:
    # "Any name that does not begin with 'JMS' is an application-specific property name."
    assert Identifier("Jms").kind is IdentifierKind.PROPERTY
    assert Selector("color = 'red' AND JmsType = 'x'").identifiers == {"color", "JmsType"}


def test_white_space_is_java_white_space() -> None:
    # "White space is the same as that defined for the Java programming language: space,
    # horizontal tab, form feed, and line terminator."
    assert evaluate(" a\t=\f1\r\nAND\n\rb = 2 ", a=Int(1), b=Int(2)) is True
    for not_java_white_space in ("\v", "\u00a0", "\u2003", "\u2028", "\x1c"):
        invalid(f"a ={not_java_white_space}1")


# Expressions


def test_selector_is_a_conditional_expression_true_matches() -> None:
    # "A selector is a conditional expression; a selector that evaluates to true matches; a
    # selector that evaluates to false or unknown does not match."
    message = make_message(a=Int(1))
    assert Selector("a = 1").matches(message)
    assert not Selector("a = 2").matches(message) and Selector("a = 2").evaluate(message) is False
    assert not Selector("b = 1").matches(message) and Selector("b = 1").evaluate(message) is None
    for not_a_condition in ("1", "'text'", "a + 1", "-a", "1.5", "(a * 2)"):
        invalid(not_a_condition)


def test_arithmetic_expressions_compose() -> None:
    # "Arithmetic expressions are composed of themselves, arithmetic operations, identifiers
    # (whose value is treated as a numeric literal), and numeric literals."
    assert evaluate("(a + 2) * (b - 1) / -(c) = -4", a=Int(2), b=Int(5), c=Int(4)) is True
    for not_arithmetic in ("a + 'x' = 1", "a * TRUE = 1", "-'x' = 1", "(a = 1) + 1 = 2"):
        invalid(not_arithmetic)


def test_conditional_expressions_compose() -> None:
    # "Conditional expressions are composed of themselves, comparison operations, and logical
    # operations."
    text = "(a = 1 AND (b BETWEEN 1 AND 3 OR NOT c LIKE 'x%')) OR (d IS NULL AND e IN ('y'))"
    assert evaluate(text, a=Int(1), b=Int(2)) is True
    assert evaluate(text, a=Int(0), e="y") is True
    assert evaluate(text, a=Int(0), d=Int(1), e="y") is False


def test_bracketing_orders_evaluation() -> None:
    # "Standard bracketing () for ordering expression evaluation is supported."
    assert evaluate("a = 1 AND (b = 2 OR c = 3)", a=Int(1), b=Int(0), c=Int(3)) is True
    assert evaluate("(a = 1 AND b = 2) OR c = 3", a=Int(0), b=Int(2), c=Int(3)) is True
    assert evaluate("a = 1 AND b = 2 OR c = 3", a=Int(0), b=Int(2), c=Int(3)) is True
    assert evaluate("a = 1 AND (b = 2 OR c = 3)", a=Int(0), b=Int(2), c=Int(3)) is False
    assert evaluate("((((a)))) = ((1))", a=Int(1)) is True
    invalid("(a = 1")
    invalid("a = 1)")


def test_logical_precedence_not_and_or() -> None:
    # "Logical operators in precedence order: NOT, AND, OR"
    # NOT binds tighter than AND, AND tighter than OR...
    assert evaluate("NOT a = 1 AND b = 1", a=Int(2), b=Int(1)) is True
    assert evaluate("a = 1 OR b = 1 AND c = 1", a=Int(1), b=Int(0), c=Int(0)) is True
    assert evaluate("FALSE AND TRUE OR TRUE") is True
    # ...and, being a logical operator, NOT applies to a whole comparison: NOT a = 1 is
    # NOT (a = 1), never (NOT a) = 1.
    assert parse("NOT a = 1") == parse("NOT (a = 1)")
    assert evaluate("NOT a = 1", a=Int(2)) is True
    assert evaluate("NOT a BETWEEN 1 AND 3", a=Int(5)) is True


def test_comparison_operators() -> None:
    # "Comparison operators: =, >, >=, <, <=, <> (not equal)"
    cases = {"=": (False, True, False), ">": (True, False, False), ">=": (True, True, False),
             "<": (False, False, True), "<=": (False, True, True), "<>": (True, False, True)}  # fmt: skip
    for operator, expected in cases.items():
        for a, outcome in zip((3, 2, 1), expected, strict=True):
            assert evaluate(f"a {operator} 2", a=Int(a)) is outcome, (operator, a)
    invalid("a != 2")
    invalid("a == 2")
    invalid("a =< 2")


def test_only_like_types_compare() -> None:
    # "Only like type values can be compared."
    message = make_message(s="1", n=Int(1), b=True)
    for text in ("s = n", "n = s", "s = b", "b = n", "s <> n", "b <> s", "n <> b"):
        assert Selector(text).evaluate(message) is False, text


def test_exact_and_approximate_compare_by_java_promotion() -> None:
    # "One exception is that it is valid to compare exact numeric values and approximate numeric
    # values; the type conversion required is defined by the rules of numeric promotion in the
    # Java programming language."
    assert evaluate("a = 2.0", a=Int(2)) is True
    assert evaluate("a = 2", a=Double(2.0)) is True
    assert evaluate("a < 2.5", a=Long(2)) is True
    assert evaluate("a = b", a=Byte(7), b=Float(7.0)) is True
    # An int compared with a float is converted to float: 16777217 becomes 16777216.
    assert evaluate("a = b", a=Int(16777217), b=Float(16777216.0)) is True
    # A long compared with a double is converted to double: 2**53 + 1 becomes 2**53.
    assert evaluate("a = 9007199254740992.0", a=Long(2**53 + 1)) is True
    assert evaluate("a > 9007199254740992.0", a=Long(2**53 + 1)) is False
    # A float compared with a double widens exactly: 0.1f is not 0.1.
    assert evaluate("a = 0.1", a=Float(0.1)) is False
    assert evaluate("a = b", a=Float(0.5), b=Double(0.5)) is True


def test_unlike_types_compare_false() -> None:
    # "If the comparison of non-like type values is attempted, the value of the operation is
    # false."
    assert evaluate("s = 1", s="1") is False
    assert evaluate("s <> 1", s="1") is False  # false, not true: the comparison itself is false
    assert evaluate("b > 0", b=True) is False
    assert evaluate("n = 'x'", n=Int(1)) is False
    assert evaluate("n <> TRUE", n=Int(1)) is False
    assert evaluate("NOT s = 1", s="1") is True


def test_null_operand_makes_comparison_unknown() -> None:
    # "If either of the type values evaluates to NULL, the value of the expression is unknown."
    for text in ("x = 1", "1 = x", "x <> 'a'", "x < y", "x = TRUE", "s = x"):
        assert evaluate(text, s="a") is None, text


def test_string_and_boolean_compare_only_with_equal_and_not_equal() -> None:
    # "String and boolean comparison is restricted to = and <>."
    message = make_message(s="b", t="a", p=True, q=False)
    assert Selector("s <> t AND p <> q AND s = s AND p = p").matches(message)
    for operator in ("<", "<=", ">", ">="):
        # Known at parse time when a side is a String or boolean literal...
        invalid(f"s {operator} 'a'")
        invalid(f"p {operator} TRUE")
        # ...and false at run time when only the values tell.
        assert Selector(f"s {operator} t").evaluate(message) is False
        assert Selector(f"p {operator} q").evaluate(message) is False


def test_strings_equal_iff_same_characters() -> None:
    # "Two strings are equal if and only if they contain the same sequence of characters."
    assert evaluate("s = 'abc'", s="abc") is True
    assert evaluate("s = 'abc'", s="ABC") is False
    assert evaluate("s = 'abc'", s="abc ") is False
    assert evaluate("s = 'é'", s="e\u0301") is False  # no Unicode normalisation
    assert evaluate("s = t", s="x\x00y", t="x\x00y") is True


def test_arithmetic_precedence() -> None:
    # "Arithmetic operators in precedence order: +, - (unary); *, / (multiplication and
    # division); +, - (addition and subtraction)"
    assert evaluate("2 + 3 * 4 = 14") is True
    assert evaluate("-2 * -3 = 6") is True
    assert evaluate("10 - 4 / 2 = 8") is True
    assert evaluate("-a * 2 = -6", a=Int(3)) is True
    assert evaluate("- a - - a = 0", a=Int(3)) is True
    assert evaluate("2 * 3 + 4 * 5 = 26") is True


def test_arithmetic_uses_java_numeric_promotion() -> None:
    # "Arithmetic operations must use numeric promotion in the Java programming language."
    assert evaluate("a + b = 300", a=Byte(100), b=Short(200)) is True
    assert evaluate("a * 2 = -2", a=Int(2**31 - 1)) is True  # int wraps at 32 bits
    assert evaluate("a * 2 = 4294967294", a=Long(2**31 - 1)) is True  # long does not
    assert evaluate("a / 2 = 3", a=Int(7)) is True  # int division truncates
    assert evaluate("a / 2 = 3.5", a=Double(7.0)) is True
    assert evaluate("a / 2.0 = 3.5", a=Int(7)) is True
    assert evaluate("a + 1 = 16777216", a=Float(16777216.0)) is True  # float arithmetic rounds


# [NOT] BETWEEN


def test_between_is_greater_equal_and_less_equal() -> None:
    # "arithmetic-expr1 [NOT] BETWEEN arithmetic-expr2 AND arithmetic-expr3 (comparison
    # operator)" — "age BETWEEN 15 AND 19" is equivalent to "age >= 15 AND age <= 19"
    for age in (14, 15, 17, 19, 20):
        expected = Selector("age >= 15 AND age <= 19").evaluate(make_message(age=Int(age)))
        assert evaluate("age BETWEEN 15 AND 19", age=Int(age)) is expected
        assert expected is (15 <= age <= 19)
    assert evaluate("age + 1 BETWEEN lo * 2 AND hi - 1", age=Int(9), lo=Int(5), hi=Int(11)) is True
    assert evaluate("age BETWEEN 15 AND 19") is None
    assert evaluate("age BETWEEN lo AND 19", age=Int(25)) is False  # UNKNOWN AND FALSE
    assert evaluate("age BETWEEN lo AND 19", age=Int(17)) is None  # UNKNOWN AND TRUE
    invalid("age BETWEEN 'a' AND 'c'")
    invalid("age BETWEEN 15")


def test_not_between_is_less_or_greater() -> None:
    # "age NOT BETWEEN 15 AND 19" is equivalent to "age < 15 OR age > 19"
    for age in (Int(14), Int(15), Int(19), Int(20), Double(float("nan")), "16", True):
        message = make_message(age=age)
        expected = Selector("age < 15 OR age > 19").evaluate(message)
        assert Selector("age NOT BETWEEN 15 AND 19").evaluate(message) is expected, age
    # So a String or NaN is neither between nor not between.
    assert evaluate("age NOT BETWEEN 15 AND 19", age="16") is False
    assert evaluate("age BETWEEN 15 AND 19", age="16") is False
    assert evaluate("age NOT BETWEEN 15 AND 19") is None
    assert evaluate("age NOT BETWEEN lo AND 19", age=Int(25)) is True  # UNKNOWN OR TRUE


# [NOT] IN


def test_in_is_an_or_of_equalities() -> None:
    # "identifier [NOT] IN (string-literal1, string-literal2,...) (comparison operator where
    # identifier has a String or NULL value)" — "Country IN (' UK', 'US', 'France')" is true for
    # 'UK' and false for 'Peru'; it is equivalent to the expression "(Country = ' UK') OR
    # (Country = ' US') OR (Country = ' France')"
    text = "Country IN ('UK', 'US', 'France')"
    assert evaluate(text, Country="UK") is True
    assert evaluate(text, Country="Peru") is False
    # (The spec's own example puts a space in ' UK', which 'UK' then does not equal.)
    assert evaluate("Country IN (' UK', 'US', 'France')", Country="UK") is False
    for value in ("UK", "Peru", "", Int(1), True):
        message = make_message(Country=value)
        expected = Selector("(Country = 'UK') OR (Country = 'US') OR (Country = 'France')")
        assert Selector(text).evaluate(message) is expected.evaluate(message)
    invalid("Country IN ()")
    invalid("Country IN ('UK', 1)")
    invalid("Country IN ('UK', other)")
    invalid("Country IN 'UK'")
    invalid("'UK' IN ('UK')")
    assert evaluate("JMSPriority IN ('4')", {"JMSPriority": 4}) is False  # an int is no String
    assert evaluate("JMSPriority NOT IN ('4')", {"JMSPriority": 4}) is True


def test_not_in_is_not_of_the_or() -> None:
    # "Country NOT IN (' UK', 'US', 'France')" is false for 'UK' and true for 'Peru'; it is
    # equivalent to the expression "NOT ((Country = ' UK') OR (Country = ' US') OR (Country =
    # ' France'))"
    text = "Country NOT IN ('UK', 'US', 'France')"
    assert evaluate(text, Country="UK") is False
    assert evaluate(text, Country="Peru") is True
    for value in ("UK", "Peru", Int(1), False):
        message = make_message(Country=value)
        expected = Selector("NOT ((Country = 'UK') OR (Country = 'US') OR (Country = 'France'))")
        assert Selector(text).evaluate(message) is expected.evaluate(message)


def test_in_with_null_identifier_is_unknown() -> None:
    # "If identifier of an IN or NOT IN operation is NULL, the value of the operation is
    # unknown."
    assert evaluate("Country IN ('UK')") is None
    assert evaluate("Country NOT IN ('UK')") is None
    assert evaluate("JMSType IN ('car')") is None


# [NOT] LIKE


def test_like_wildcards_and_escape() -> None:
    # "identifier [NOT] LIKE pattern-value [ESCAPE escape-character] (comparison operator, where
    # identifier has a String value; pattern-value is a string literal where '_' stands for any
    # single character; '%' stands for any sequence of characters, including the empty sequence;
    # and all other characters stand for themselves. The optional escape-character is a
    # single-character string literal whose character is used to escape the special meaning of
    # the '_' and '%' in pattern-value.)"
    assert evaluate("s LIKE 'a_c'", s="abc") is True
    assert evaluate("s LIKE 'a_c'", s="ac") is False
    assert evaluate("s LIKE 'a%c'", s="ac") is True
    assert evaluate("s LIKE 'a%c'", s="a\nb\nc") is True  # any sequence, line breaks included
    assert evaluate("s LIKE 'a.c'", s="abc") is False  # other characters stand for themselves
    assert evaluate("s LIKE '[a]*+?()|^$\\d{1}'", s="[a]*+?()|^$\\d{1}") is True
    assert evaluate("s LIKE '100!%' ESCAPE '!'", s="100%") is True
    assert evaluate("s LIKE '100!%' ESCAPE '!'", s="1000") is False
    assert evaluate("s LIKE 'a!_b' ESCAPE '!'", s="axb") is False
    assert evaluate("s LIKE 'a!!b' ESCAPE '!'", s="a!b") is True
    assert evaluate("s LIKE 'a_c'", s=Int(1)) is False  # not a String
    invalid("s LIKE 'a' ESCAPE ''")
    invalid("s LIKE 'a' ESCAPE '!!'")
    invalid("s LIKE other")
    invalid("5 LIKE '5'")
    assert evaluate("JMSPriority LIKE '4'", {"JMSPriority": 4}) is False  # an int is no String
    assert evaluate("JMSPriority NOT LIKE '4'", {"JMSPriority": 4}) is True


def test_like_spec_examples() -> None:
    # "phone LIKE '12%3'" is true for '123' or '12993' and false for '1234'
    assert evaluate("phone LIKE '12%3'", phone="123") is True
    assert evaluate("phone LIKE '12%3'", phone="12993") is True
    assert evaluate("phone LIKE '12%3'", phone="1234") is False
    # "word LIKE 'l_se'" is true for 'lose' and false for 'loose'
    assert evaluate("word LIKE 'l_se'", word="lose") is True
    assert evaluate("word LIKE 'l_se'", word="loose") is False
    # "underscored LIKE '\_%' ESCAPE '\'" is true for '_foo' and false for 'bar'
    assert evaluate("underscored LIKE '\\_%' ESCAPE '\\'", underscored="_foo") is True
    assert evaluate("underscored LIKE '\\_%' ESCAPE '\\'", underscored="bar") is False
    # "phone NOT LIKE '12%3'" is false for '123' or '12993' and true for '1234'
    assert evaluate("phone NOT LIKE '12%3'", phone="123") is False
    assert evaluate("phone NOT LIKE '12%3'", phone="12993") is False
    assert evaluate("phone NOT LIKE '12%3'", phone="1234") is True


def test_like_with_null_identifier_is_unknown() -> None:
    # "If identifier of a LIKE or NOT LIKE operation is NULL, the value of the operation is
    # unknown."
    assert evaluate("phone LIKE '12%3'") is None
    assert evaluate("phone NOT LIKE '12%3'") is None
    assert evaluate("JMSCorrelationID LIKE '%'") is None


# IS [NOT] NULL


def test_is_null_tests_null_header_or_missing_property() -> None:
    # "identifier IS NULL (comparison operator that tests for a null header field value or a
    # missing property value)" — "prop_name IS NULL"
    assert evaluate("prop_name IS NULL") is True
    assert evaluate("prop_name IS NULL", prop_name="") is False
    assert evaluate("JMSType IS NULL") is True
    assert evaluate("JMSType IS NULL", {"JMSType": "t"}) is False
    assert evaluate("JMSPriority IS NULL") is False
    invalid("1 IS NULL")
    invalid("a + 1 IS NULL")


def test_is_not_null_tests_existence() -> None:
    # "identifier IS NOT NULL (comparison operator that tests for the existence of a non-null
    # header field value or a property value)" — "prop_name IS NOT NULL"
    assert evaluate("prop_name IS NOT NULL", prop_name=Int(0)) is True
    assert evaluate("prop_name IS NOT NULL") is False
    assert evaluate("JMSMessageID IS NOT NULL", {"JMSMessageID": "ID:x"}) is True
    assert evaluate("JMSDeliveryMode IS NOT NULL") is True
    invalid("prop_name IS NOT")
    invalid("prop_name IS 1")


# Checking


def test_syntax_is_verified_when_presented() -> None:
    # "Jakarta Messaging providers are required to verify the syntactic correctness of a message
    # selector at the time it is presented."
    with pytest.raises(InvalidSelectorException):
        Selector("a = ")  # raised by the constructor, before any message is seen


def test_syntax_error_is_a_jms_exception_naming_the_place() -> None:
    # "A method that provides a syntactically incorrect selector must result in a JMSException."
    error = invalid("color IN ('red', 'blue'")
    assert isinstance(error, JMSException)
    assert str(error) == (
        "expected ',' or ')', found end of input at column 24 in \"color IN ('red', 'blue'\""
    )
    assert str(invalid("a = 1 AND AND b")).startswith(
        "expected an identifier, a literal or '(', found keyword AND at column 11"
    )


def test_semantic_checks_when_presented() -> None:
    # "Jakarta Messaging providers may also optionally provide some semantic checking at the time
    # the selector is presented."
    # jms checks only what is wrong for every message and ActiveMQ rejects too: unlike types
    # between two literals, ordering a String or boolean literal or a condition.
    assert "cannot compare a String with a number" in str(invalid("'abc' > 1"))
    assert "cannot compare a String with a number" in str(invalid("'abc' = 1"))
    assert "cannot compare a boolean with a number" in str(invalid("TRUE = 1"))
    assert "compare only with = and <>" in str(invalid("JMSType < 'car'"))
    assert "compare only with = and <>" in str(invalid("(a = 1) < 2"))
    assert "must be a number" in str(invalid("a + 'x' > 1"))
    assert "applies to an identifier" in str(invalid("5 LIKE '5'"))
    assert "at least one string literal" in str(invalid("a IN ()"))
    assert "must be a condition" in str(invalid("a = 1 AND 2"))
    assert "must be a condition" in str(invalid("a + 1 OR b"))


def test_some_checks_wait_for_the_message() -> None:
    # "Not all semantic checking can be performed at the time a message selector is presented,
    # because property types are not known."
    selector = Selector("a > b")  # fine for numbers, false for strings: known only per message
    assert selector.evaluate(make_message(a=Int(2), b=Int(1))) is True
    assert selector.evaluate(make_message(a="b", b="a")) is False
    assert Selector("a").evaluate(make_message(a=Int(1))) is False  # a bare non-boolean


def test_spec_example_selector() -> None:
    # "The following message selector selects messages with a message type of car and color of
    # blue and weight greater than 2500 pounds: "JMSType = 'car' AND color = 'blue' AND weight >
    # 2500""
    selector = Selector("JMSType = 'car' AND color = 'blue' AND weight > 2500")
    assert selector.matches(make_message({"JMSType": "car"}, color="blue", weight=Int(3000)))
    assert not selector.matches(make_message({"JMSType": "car"}, color="blue", weight=Int(2500)))
    assert not selector.matches(make_message({"JMSType": "car"}, color="red", weight=Int(3000)))
    assert not selector.matches(make_message({"JMSType": "bus"}, color="blue", weight=Int(3000)))
    assert not selector.matches(make_message(color="blue", weight=Int(3000)))


# --- Null Values ------------------------------------------------------------------------------


def test_property_values_may_be_null() -> None:
    # "As noted above, property values may be NULL."
    message = TextMessage()
    message.set_string_property("s", None)
    assert Selector("s IS NULL").matches(message)


def test_null_follows_sql92_semantics() -> None:
    # "The evaluation of selector expressions containing NULL values is defined by SQL92 NULL
    # semantics."
    assert evaluate("x = x") is None  # NULL is not even equal to itself
    assert evaluate("x <> x") is None
    assert evaluate("x IS NULL OR x = 1") is True


def test_null_is_unknown() -> None:
    # "SQL treats a NULL value as unknown."
    assert evaluate("x") is None
    assert evaluate("NOT x") is None
    assert not Selector("x").matches(TextMessage())
    assert not Selector("NOT x").matches(TextMessage())


def test_comparison_or_arithmetic_with_unknown_is_unknown() -> None:
    # "Comparison or arithmetic with an unknown value always yields an unknown value."
    for text in ("x + 1 = 1", "x * 0 = 0", "0 / x = 0", "-x = 0", "x - x = 0", "a + x > 0"):
        assert evaluate(text, a=Int(1)) is None, text
    assert evaluate("s + x > 0", s="str") is None  # NULL wins over a type error


def test_is_null_converts_unknown_to_true_or_false() -> None:
    # "The IS NULL and IS NOT NULL operators convert an unknown value into the respective TRUE and
    # FALSE values."
    assert evaluate("x IS NULL") is True and evaluate("x IS NOT NULL") is False


def test_boolean_operators_use_three_valued_logic() -> None:
    # "The boolean operators use three-valued logic as defined by the following tables:"
    # (the tables are tested exhaustively in test_selector_logic.py)
    assert evaluate("u AND f", f=False) is False
    assert evaluate("u OR t", t=True) is True
    assert evaluate("NOT u") is None


# --- Special Notes ----------------------------------------------------------------------------


def test_delivery_mode_reads_as_persistent_or_non_persistent() -> None:
    # "When used in a message selector, the JMSDeliveryMode header field is treated as having the
    # values 'PERSISTENT' and 'NON_PERSISTENT'."
    assert evaluate("JMSDeliveryMode = 'PERSISTENT'") is True  # the default
    assert evaluate("JMSDeliveryMode = 'NON_PERSISTENT'", {"JMSDeliveryMode": 1}) is True
    assert evaluate("JMSDeliveryMode = 'PERSISTENT'", {"JMSDeliveryMode": 1}) is False
    assert evaluate("JMSDeliveryMode IN ('NON_PERSISTENT')", {"JMSDeliveryMode": 1}) is True
    assert evaluate("JMSDeliveryMode LIKE '%PERSISTENT'", {"JMSDeliveryMode": 1}) is True
    assert evaluate("JMSDeliveryMode = 'persistent'") is False
    # A String compared with a number is FALSE, so "JMSDeliveryMode = 2" selects nothing.
    assert evaluate("JMSDeliveryMode = 2") is False
    assert evaluate("JMSDeliveryMode <> 2") is False


def test_dates_are_long_milliseconds() -> None:
    # "Date and time values should use the standard long millisecond value."
    assert evaluate("JMSTimestamp > 1700000000000", {"JMSTimestamp": 1700000000001}) is True
    assert evaluate("JMSTimestamp + 86400000 > 1700000000000", {"JMSTimestamp": 1699999999999})


def test_date_literals_are_integer_milliseconds() -> None:
    # "When a date or time literal is included in a message selector, it should be an integer
    # literal for a millisecond value."
    tree = parse("JMSTimestamp >= 1700000000000")
    assert isinstance(tree, Comparison) and tree.right == Literal(Long(1700000000000))
    assert evaluate("sent < 1700000000000", sent=Long(1600000000000)) is True


def test_milliseconds_from_a_calendar() -> None:
    # "The standard way to produce millisecond values is to use java.util.Calendar."
    # (Python's equivalent: a timezone-aware datetime's timestamp, in whole milliseconds.)
    moment = datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.UTC)
    millis = int(moment.timestamp() * 1000)
    assert millis == 1704164645678
    assert evaluate(f"JMSTimestamp = {millis}", {"JMSTimestamp": millis}) is True


def test_no_fixed_decimal_arithmetic() -> None:
    # "Although SQL supports fixed decimal comparison and arithmetic, Jakarta Messaging message
    # selectors do not."
    assert evaluate("0.1 + 0.2 = 0.3") is False  # binary doubles, not decimals
    assert evaluate("0.1 + 0.2 = 0.30000000000000004") is True
    assert evaluate("1.10 = 1.1") is True


def test_decimal_point_makes_a_literal_approximate() -> None:
    # "This is the reason for restricting exact numeric literals to those without a decimal (and
    # the addition of numerics with a decimal as an alternate representation for approximate
    # numeric values)."
    assert parse("a = 57.0") == Comparison(
        ComparisonOperator.EQUAL, Identifier("a"), Literal(Double(57.0))
    )
    assert evaluate("a / 2 = 28", a=Int(57)) is True
    assert evaluate("a / 2.0 = 28.5", a=Int(57)) is True


def test_sql_comments_are_not_supported() -> None:
    # "SQL comments are not supported."
    # "--" is two minus signs, so this is arithmetic on a property named comment.
    assert parse("a = 1 -- comment") == parse("a = 1 - (-comment)")
    assert evaluate("a = 1 -- comment", a=Int(3), comment=Int(2)) is True
    invalid("a = 1 -- a comment")
    invalid("a = 1 /* comment */")
    invalid("/* comment */ a = 1")
    assert evaluate("a = '-- not a comment'", a="-- not a comment") is True
