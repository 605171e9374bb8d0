"""The lexer and parser: literal typing, tree shapes, error messages, limits, and the AST's own
rules."""

from __future__ import annotations

import math

import pytest

from jms.errors import InvalidSelectorException
from jms.selector import MAX_DEPTH, Selector, parse
from jms.selector.ast import (
    And,
    Arithmetic,
    ArithmeticOperator,
    Between,
    Comparison,
    ComparisonOperator,
    Identifier,
    In,
    IsNull,
    Like,
    LikeWildcard,
    Literal,
    Not,
    Or,
    Unary,
    UnaryOperator,
    children,
    describe,
    like_parts,
    to_text,
)
from jms.types import Double, Float, Int, Long
from tests.selector.selector_testing import make_message

EQUAL = ComparisonOperator.EQUAL
ANY_RUN, ANY_CHAR = LikeWildcard.ANY_RUN, LikeWildcard.ANY_CHAR


def literal_of(text: str) -> Literal:
    tree = parse(f"a = {text}")
    assert isinstance(tree, Comparison) and isinstance(tree.right, Literal)
    return tree.right


def error_of(text: str) -> str:
    with pytest.raises(InvalidSelectorException) as raised:
        parse(text)
    return str(raised.value)


# --- literal typing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", Int(0)),
        ("57", Int(57)),
        ("-957", Int(-957)),
        ("+62", Int(62)),
        ("2147483647", Int(2**31 - 1)),
        ("-2147483648", Int(-(2**31))),  # the sign belongs to the literal, so this is an int
        ("2147483648", Long(2**31)),  # too big for an int: a long
        ("-2147483649", Long(-(2**31) - 1)),
        ("5L", Long(5)),
        ("5l", Long(5)),
        ("9223372036854775807", Long(2**63 - 1)),
        ("-9223372036854775808", Long(-(2**63))),
        ("-9223372036854775808L", Long(-(2**63))),
        ("0x1F", Int(31)),
        ("0X1f", Int(31)),
        ("0x7FFFFFFF", Int(2**31 - 1)),
        ("0x80000000", Int(-(2**31))),  # Java: radix digits are a bit pattern
        ("0xFFFFFFFF", Int(-1)),
        ("-0x80000000", Int(-(2**31))),  # -MIN_VALUE wraps, as in Java
        ("0x100000000", Long(2**32)),  # beyond 32 bits without L: a long (Java: an error)
        ("0xFFFFFFFFL", Long(2**32 - 1)),
        ("0xFFFFFFFFFFFFFFFFL", Long(-1)),
        ("017", Int(15)),
        ("00", Int(0)),
        ("0b101", Int(5)),
        ("0B1_0", Int(2)),
        ("1_000_000", Int(1000000)),
        ("7E3", Double(7000.0)),
        ("-57.9E2", Double(-5790.0)),
        ("7.", Double(7.0)),
        (".5", Double(0.5)),
        ("+6.2", Double(6.2)),
        ("1e+2", Double(100.0)),
        ("1_0.2_5", Double(10.25)),
        ("09.5", Double(9.5)),  # a leading zero does not make a floating literal octal
        ("2d", Double(2.0)),
        ("2D", Double(2.0)),
        ("1.5f", Float(1.5)),
        ("1F", Float(1.0)),
        ("0.1f", Float(0.1)),
        ("0x1.8p1", Double(3.0)),
        ("0x.8P0f", Float(0.5)),
        ("'x'", "x"),
        ("TRUE", True),
        ("false", False),
    ],
)
def test_literal_types(text: str, value: object) -> None:
    literal = literal_of(text)
    assert literal.java_type is type(value)
    assert literal.value == value


def test_negative_zero_literal_keeps_its_sign() -> None:
    assert math.copysign(1.0, literal_of("-0.0").value) == -1.0  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "08",
        "09",
        "1_",
        "_1",  # an identifier, so "a = _1" is fine; checked below
        "0x",
        "0x_1",
        "0xG",
        "1__",
        "5LL",
        "0b2",
        "1e",
        "1.5e+",
        "1.2.3",
        "1..2",
        "0x1.8",
        "1e5x",
        "1uncorrect",
        "9223372036854775808",
        "9223372036854775808L",
        "-9223372036854775809",
        "0x10000000000000000",
        "1E309",
        "3.5e38f",
        "1e-46f",
        "1E-400",
        "5 5",
    ],
)
def test_malformed_numbers_are_rejected(text: str) -> None:
    if text == "_1":
        assert parse(f"a = {text}") == Comparison(EQUAL, Identifier("a"), Identifier("_1"))
        return
    with pytest.raises(InvalidSelectorException):
        parse(f"a = {text}")


def test_sign_before_a_literal_is_folded_but_not_before_parentheses() -> None:
    assert literal_of("- 5") == Literal(Int(-5))
    assert parse("a = -(5)") == Comparison(
        EQUAL, Identifier("a"), Unary(UnaryOperator.MINUS, Literal(Int(5)))
    )


def test_signs_elsewhere_are_unary_operators() -> None:
    tree = parse("-a = --5")
    assert tree == Comparison(
        EQUAL,
        Unary(UnaryOperator.MINUS, Identifier("a")),
        Unary(UnaryOperator.MINUS, Literal(Int(-5))),
    )
    assert parse("a - -5 = 0") == Comparison(
        EQUAL,
        Arithmetic(ArithmeticOperator.SUBTRACT, Identifier("a"), Literal(Int(-5))),
        Literal(Int(0)),
    )


# --- tree shapes ------------------------------------------------------------------------------


def test_precedence_of_logical_operators() -> None:
    a, b, c = (Comparison(EQUAL, Identifier(name), Literal(Int(1))) for name in "abc")
    assert parse("a = 1 OR b = 1 AND c = 1") == Or((a, And((b, c))))
    assert parse("a = 1 AND b = 1 OR c = 1") == Or((And((a, b)), c))
    assert parse("NOT a = 1 AND b = 1") == And((Not(a), b))
    assert parse("NOT NOT a = 1") == Not(Not(a))
    assert parse("a = 1 AND b = 1 AND c = 1") == And((a, b, c))  # one flat chain
    assert parse("(a = 1 AND b = 1) AND c = 1") == And((And((a, b)), c))


def test_precedence_of_arithmetic() -> None:
    x, y, z = Identifier("x"), Identifier("y"), Identifier("z")
    tree = parse("x + y * -z > 0")
    assert tree == Comparison(
        ComparisonOperator.GREATER,
        Arithmetic(
            ArithmeticOperator.ADD,
            x,
            Arithmetic(ArithmeticOperator.MULTIPLY, y, Unary(UnaryOperator.MINUS, z)),
        ),
        Literal(Int(0)),
    )


def test_predicates() -> None:
    s = Identifier("s")
    assert parse("s NOT BETWEEN 1 AND 2 + 3") == Between(
        s,
        Literal(Int(1)),
        Arithmetic(ArithmeticOperator.ADD, Literal(Int(2)), Literal(Int(3))),
        negated=True,
    )
    assert parse("s NOT IN ('a', 'b''c')") == In(s, ("a", "b'c"), negated=True)
    assert parse("s LIKE 'a%' ESCAPE '!'") == Like(s, "a%", "!")
    assert parse("s IS NOT NULL") == IsNull(s, negated=True)
    assert parse("(s = 1) = TRUE") == Comparison(
        EQUAL, Comparison(EQUAL, s, Literal(Int(1))), Literal(True)
    )


def test_white_space_only_is_no_selector() -> None:
    assert parse(" \t\r\n\f ") is None
    assert Selector("  ").matches(make_message())


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("color IN ('red', 'blue'", "expected ',' or ')', found end of input at column 24"),
        ("a = ", "expected an identifier, a literal or '(', found end of input at column 5"),
        ("a = 1 b = 2", "expected AND, OR or end of input, found identifier b at column 7"),
        ("(a = 1", "expected ')' or an operator, found end of input at column 7"),
        ("a = 1)", "expected AND, OR or end of input, found ')' at column 6"),
        ("a != 1", "unexpected '!=' (use <> for 'not equal') at column 3"),
        ('a = "x"', "unexpected '\"' (string literals use single quotes) at column 5"),
        ("a = 'x", "unterminated string literal (no closing ') at column 5"),
        ("a ~ 1", "unexpected character '~' at column 3"),
        ("a NOT = 1", "expected BETWEEN, IN or LIKE after NOT, found '=' at column 7"),
        ("a BETWEEN 1 OR 2", "expected AND, found keyword OR at column 13"),
        ("a IN 'x'", "expected '(' to open the IN list, found string literal 'x' at column 6"),
        ("a IN ()", "an IN list needs at least one string literal at column 7"),
        ("a IN ('x', 2)", "expected a string literal (IN lists hold string literals only)"),
        (
            "a LIKE b",
            "expected a string literal pattern after LIKE, found identifier b at column 8",
        ),
        ("a LIKE 'x' ESCAPE", "expected a one-character string literal after ESCAPE"),
        ("a LIKE 'x' ESCAPE 'ab'", "exactly one character, got 'ab' at column 19"),
        ("a LIKE 'x!' ESCAPE '!'", "ends with its escape character at column 20"),
        ("a IS 5", "expected NULL, found exact numeric literal 5 at column 6"),
        ("a = NULL", "NULL is not a value here; test with IS NULL or IS NOT NULL at column 5"),
        ("'a' > 'b'", "String values compare only with = and <>, not '>' at column 5"),
        ("TRUE < FALSE", "boolean values compare only with = and <>, not '<' at column 6"),
        ("x = 1 + 'a'", "the operand of '+' must be a number, but this is a String at column 9"),
        ("1 IS NULL", "IS NULL applies to an identifier, not to an expression at column 1"),
        ("JMSType LIKE 5", "expected a string literal pattern after LIKE"),
        ("'x'", "a selector must be a condition or a boolean, but this is a String expression"),
        ("NOT 5", "the operand of NOT must be a condition or a boolean, but this is a number"),
        ("x = 1 OR 'y'", "an operand of OR must be a condition or a boolean, but this is a String"),
        ("a = 1\nAND", "found end of input at column 10"),
    ],
)
def test_error_messages_name_the_column_and_what_was_expected(text: str, message: str) -> None:
    error = error_of(text)
    assert message in error
    assert error.endswith(f'in "{text}"')


def test_non_string_selector_is_invalid() -> None:
    with pytest.raises(InvalidSelectorException, match="a selector is a str or None, got int 5"):
        parse(5)  # type: ignore[arg-type]


# --- limits -----------------------------------------------------------------------------------


def test_depth_limit_for_not_chains() -> None:
    allowed = MAX_DEPTH - 2  # "a = 1" takes two levels: the comparison and its operands
    selector = Selector("NOT " * allowed + "a = 1")
    assert selector.evaluate(make_message(a=Int(1))) is (allowed % 2 == 0)
    error = error_of("NOT " * (allowed + 1) + "a = 1")
    assert f"nests deeper than {MAX_DEPTH} levels" in error


def test_depth_limit_for_parentheses_and_signs() -> None:
    deep = "(" * MAX_DEPTH + "a = 1" + ")" * MAX_DEPTH
    assert Selector(deep).matches(make_message(a=Int(1)))
    assert "nests deeper" in error_of("(" + deep + ")")
    assert "nests deeper" in error_of("(" * 100_000)  # no RecursionError, however deep
    assert Selector("-" * (MAX_DEPTH - 2) + "a = 1").matches(make_message(a=Int(1)))
    assert "nests deeper" in error_of("-" * (MAX_DEPTH - 1) + "a = 1")


def test_depth_limit_for_arithmetic_chains() -> None:
    terms = MAX_DEPTH - 1  # a + a + ... is terms - 1 levels of +, one of a, one of =
    selector = Selector(" + ".join(["a"] * terms) + f" = {terms}")
    assert selector.matches(make_message(a=Int(1)))
    assert "nests deeper" in error_of(" + ".join(["a"] * (terms + 1)) + " = 1")


def test_long_flat_chains_have_no_depth_limit() -> None:
    text = " OR ".join(f"a = {n}" for n in range(3000))
    selector = Selector(text)
    assert selector.matches(make_message(a=Int(2999)))
    assert not selector.matches(make_message(a=Int(3000)))
    members = ", ".join(f"'v{n}'" for n in range(5000))
    assert Selector(f"s IN ({members})").matches(make_message(s="v4999"))


def test_deep_selectors_compile_to_linear_code() -> None:
    # Conditions used as values nest here at every level; code and time must stay linear.
    depth = MAX_DEPTH // 2 - 2
    text = "(" * depth + "a = 1" + ") = TRUE" * depth
    selector = Selector(text)
    assert len(selector.python_source) < 100 * len(text)
    for a, expected in ((1, True), (2, False), (None, None)):
        message = make_message() if a is None else make_message(a=Int(a))
        assert selector.evaluate(message) is expected
    alternating = "NOT (" * 20 + "a = 1" + ") = TRUE" * 20
    assert Selector(alternating).evaluate(make_message(a=Int(1))) is True


# --- the AST's own rules ----------------------------------------------------------------------


def test_literal_values_must_carry_a_java_type() -> None:
    with pytest.raises(TypeError):
        Literal(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Literal(5.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Literal(Double(math.inf))
    assert Literal(Int(5)).java_type is Int


def test_node_invariants() -> None:
    with pytest.raises(ValueError):
        In(Identifier("a"), ())
    with pytest.raises(TypeError):
        In(Identifier("a"), (1,))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        And((Literal(True),))
    with pytest.raises(ValueError):
        Or(())
    with pytest.raises(ValueError):
        Like(Identifier("a"), "x!", "!")
    for not_an_identifier in ("", "1a", "a b", "AND", "null"):
        with pytest.raises(ValueError):
            Identifier(not_an_identifier)


@pytest.mark.parametrize(
    ("pattern", "escape", "parts"),
    [
        ("", None, ()),
        ("abc", None, ("abc",)),
        ("a%", None, ("a", ANY_RUN)),
        ("%%a%%%", None, (ANY_RUN, "a", ANY_RUN)),  # adjacent % match what one % matches
        ("_%_", None, (ANY_CHAR, ANY_RUN, ANY_CHAR)),
        ("a!%b!_c!!", "!", ("a%b_c!",)),
        ("%%", "%", ("%",)),  # the escape character may itself be a wildcard
        ("\\_%", "\\", ("_", ANY_RUN)),
    ],
)
def test_like_parts(pattern: str, escape: str | None, parts: tuple[object, ...]) -> None:
    assert like_parts(pattern, escape) == parts


@pytest.mark.parametrize(
    ("pattern", "escape"),
    [("a!b", "!"), ("a!", "!"), ("a", ""), ("a", "!!")],
)
def test_like_escape_rules(pattern: str, escape: str) -> None:
    with pytest.raises(ValueError):
        like_parts(pattern, escape)


def test_to_text_round_trips_and_parenthesises() -> None:
    text = "NOT a + 1 * -b BETWEEN 1 AND 2L OR s LIKE 'ax%''' ESCAPE 'x' AND t IS NULL OR f"
    tree = parse(text)
    assert tree is not None
    rendered = to_text(tree)
    assert rendered == (
        "((NOT ((a + (1 * -(b))) BETWEEN 1 AND 2L)) OR "
        "((s LIKE 'ax%''' ESCAPE 'x') AND (t IS NULL)) OR f)"
    )
    assert parse(rendered) == tree


def test_children_and_describe_walk_the_tree() -> None:
    tree = parse("JMSType = 'car' AND NOT weight / 2 > 1.5E3 AND c IN ('x')")
    assert isinstance(tree, And)
    labels = []
    pending = [tree]
    while pending:
        node = pending.pop(0)
        labels.append(describe(node))
        pending.extend(children(node))
    assert labels == [
        "AND",
        "=",
        "NOT",
        "IN ('x')",
        "JMSType  (header, String)",
        "'car'  (String)",
        ">",
        "c  (property)",
        "/",
        "1500.0  (double)",
        "weight  (property)",
        "2  (int)",
    ]
