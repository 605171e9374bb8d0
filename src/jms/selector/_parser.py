"""Selector tokens → a checked syntax tree (``jms.selector.ast``), or ``InvalidSelectorException``.

A recursive-descent parser for the spec's grammar (docs/selectors.md has it in EBNF), precedence
from loosest: OR, AND, NOT, comparison/BETWEEN/IN/LIKE/IS, ``+ -``, ``* /``, unary ``+ -``. So
``NOT a = 1`` is ``NOT (a = 1)``. It also does the "semantic checking" the spec allows at the time a
selector is presented, but only where ActiveMQ rejects the selector too or the grammar has no place
for it: unlike types compared between literals alone (``TRUE = 1``), ordering a String or boolean
literal or a condition, arithmetic on a String or boolean literal or a condition, LIKE/IN/IS on
something other than an identifier, a condition that is a bare number or String. Identifiers,
header fields included, have their type only per message: ``JMSPriority = '7'`` is valid and FALSE.
Every error names the column and what was expected. This module builds trees; it never evaluates
them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from jms.errors import InvalidSelectorException
from jms.selector._lexer import JAVA_WHITESPACE, Token, TokenKind, selector_error, tokenize
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
)
from jms.types import INT_RANGE, LONG_RANGE, Double, Float, Int, Long

__all__ = ["MAX_DEPTH", "parse", "selector_or_none"]

#: How deeply a selector may nest (parentheses, NOT, signs, and each level of the tree, so also
#: chains like ``a + b + c``; the operands of one AND or OR chain count as a single level). Deeper
#: selectors are rejected rather than risk Python's recursion limit while parsing or compiling.
MAX_DEPTH: Final = 64


class _Kind(enum.Enum):
    """What the parser knows of an expression's type before any message is seen."""

    BOOLEAN = "boolean"
    STRING = "String"
    NUMBER = "number"
    # An identifier: a property's type is known only per message, and a header of a known type
    # compared with anything still has the meaning the spec gives it (FALSE for unlike types).
    UNKNOWN = "identifier"


_COMPARISON_OPERATORS: Final = {operator.value: operator for operator in ComparisonOperator}
_ADDITIVE: Final = {"+": ArithmeticOperator.ADD, "-": ArithmeticOperator.SUBTRACT}
_MULTIPLICATIVE: Final = {"*": ArithmeticOperator.MULTIPLY, "/": ArithmeticOperator.DIVIDE}
_UNARY: Final = {"+": UnaryOperator.PLUS, "-": UnaryOperator.MINUS}


@dataclass(frozen=True, slots=True)
class _Parsed:
    node: Expression
    kind: _Kind
    position: int  # where the expression starts, for error messages
    depth: int
    constant: bool  # made of literals only: its value is the same for every message


def _wrap(value: int, bits: int) -> int:
    """The two's-complement reading of the low ``bits`` bits of ``value``."""
    half = 1 << (bits - 1)
    return ((value + half) & ((1 << bits) - 1)) - half


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.index = 0
        self.nesting = 0

    # -- token helpers -------------------------------------------------------------------------

    @property
    def token(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def at_keyword(self, *words: str) -> bool:
        return self.token.kind is TokenKind.KEYWORD and self.token.value in words

    def at_operator(self, *operators: str) -> bool:
        return self.token.kind is TokenKind.OPERATOR and self.token.value in operators

    def error(self, position: int, message: str) -> InvalidSelectorException:
        return selector_error(self.text, position, message)

    def expected(self, what: str) -> InvalidSelectorException:
        return self.error(self.token.position, f"expected {what}, found {self.token.shown()}")

    def expect_keyword(self, word: str) -> Token:
        if not self.at_keyword(word):
            raise self.expected(word)
        return self.advance()

    def expect_operator(self, operator: str, what: str | None = None) -> Token:
        if not self.at_operator(operator):
            raise self.expected(what or f"'{operator}'")
        return self.advance()

    def made(self, node: Expression, kind: _Kind, position: int, *parts: _Parsed) -> _Parsed:
        depth = 1 + max((part.depth for part in parts), default=0)
        if depth > MAX_DEPTH:
            raise self.error(position, f"the selector nests deeper than {MAX_DEPTH} levels")
        constant = not isinstance(node, Identifier) and all(part.constant for part in parts)
        return _Parsed(node, kind, position, depth, constant)

    def enter(self, position: int) -> None:
        self.nesting += 1
        if self.nesting > MAX_DEPTH:
            raise self.error(position, f"the selector nests deeper than {MAX_DEPTH} levels")

    # -- static checks -------------------------------------------------------------------------

    def require_condition(self, parsed: _Parsed, where: str) -> None:
        if parsed.kind in (_Kind.BOOLEAN, _Kind.UNKNOWN):
            return
        raise self.error(
            parsed.position,
            f"{where} must be a condition or a boolean, but this is a {parsed.kind.value} "
            "expression",
        )

    def require_number(self, parsed: _Parsed, operator: Token) -> None:
        if parsed.kind in (_Kind.NUMBER, _Kind.UNKNOWN):
            return
        raise self.error(
            parsed.position,
            f"the operand of '{operator.text}' must be a number, but this is a {parsed.kind.value}",
        )

    def require_identifier(self, parsed: _Parsed, operation: str) -> Identifier:
        if not isinstance(parsed.node, Identifier):
            raise self.error(
                parsed.position, f"{operation} applies to an identifier, not to an expression"
            )
        return parsed.node

    def check_comparable(self, left: _Parsed, right: _Parsed, operator: Token) -> None:
        """Reject what ActiveMQ rejects too: unlike types between two constants (``TRUE = 1``),
        and ordering a String or boolean literal or a condition. Anything else that reads an
        identifier has a meaning for every message (unlike types are FALSE) and is evaluated."""
        op = operator.text
        kinds = {left.kind, right.kind} - {_Kind.UNKNOWN}
        if left.constant and right.constant and len(kinds) > 1:
            names = sorted(kind.value for kind in kinds)
            raise self.error(
                operator.position,
                f"cannot compare a {names[0]} with a {names[1]} using {op!r} (always false)",
            )
        if op in ("=", "<>"):
            return
        for side in (left, right):
            if side.kind in (_Kind.STRING, _Kind.BOOLEAN):
                raise self.error(
                    operator.position,
                    f"{side.kind.value} values compare only with = and <>, not {op!r}",
                )

    # -- grammar -------------------------------------------------------------------------------

    def selector(self) -> Expression:
        parsed = self.disjunction()
        if self.token.kind is not TokenKind.END:
            raise self.expected("AND, OR or end of input")
        self.require_condition(parsed, "a selector")
        return parsed.node

    def disjunction(self) -> _Parsed:
        first = self.conjunction()
        operands = [first]
        while self.at_keyword("OR"):
            self.advance()
            operands.append(self.conjunction())
        if len(operands) == 1:
            return first
        for operand in operands:
            self.require_condition(operand, "an operand of OR")
        node = Or(tuple(operand.node for operand in operands))
        return self.made(node, _Kind.BOOLEAN, first.position, *operands)

    def conjunction(self) -> _Parsed:
        first = self.negation()
        operands = [first]
        while self.at_keyword("AND"):
            self.advance()
            operands.append(self.negation())
        if len(operands) == 1:
            return first
        for operand in operands:
            self.require_condition(operand, "an operand of AND")
        node = And(tuple(operand.node for operand in operands))
        return self.made(node, _Kind.BOOLEAN, first.position, *operands)

    def negation(self) -> _Parsed:
        if not self.at_keyword("NOT"):
            return self.predicate()
        start = self.advance().position
        self.enter(start)
        operand = self.negation()
        self.nesting -= 1
        self.require_condition(operand, "the operand of NOT")
        return self.made(Not(operand.node), _Kind.BOOLEAN, start, operand)

    def predicate(self) -> _Parsed:
        left = self.additive()
        token = self.token
        if token.kind is TokenKind.OPERATOR and token.value in _COMPARISON_OPERATORS:
            self.advance()
            right = self.additive()
            self.check_comparable(left, right, token)
            operator = _COMPARISON_OPERATORS[str(token.value)]
            node = Comparison(operator, left.node, right.node)
            return self.made(node, _Kind.BOOLEAN, left.position, left, right)
        negated = False
        if self.at_keyword("NOT"):
            self.advance()
            negated = True
            if not self.at_keyword("BETWEEN", "IN", "LIKE"):
                raise self.expected("BETWEEN, IN or LIKE after NOT")
        if self.at_keyword("BETWEEN"):
            return self.between(left, negated)
        if self.at_keyword("IN"):
            return self.in_list(left, negated)
        if self.at_keyword("LIKE"):
            return self.like(left, negated)
        if self.at_keyword("IS"):
            return self.is_null(left)
        return left

    def between(self, operand: _Parsed, negated: bool) -> _Parsed:
        keyword = self.advance()
        low = self.additive()
        self.expect_keyword("AND")
        high = self.additive()
        for part in (operand, low, high):
            self.require_number(part, keyword)
        node = Between(operand.node, low.node, high.node, negated)
        return self.made(node, _Kind.BOOLEAN, operand.position, operand, low, high)

    def in_list(self, operand: _Parsed, negated: bool) -> _Parsed:
        self.advance()
        identifier = self.require_identifier(operand, "IN")
        self.expect_operator("(", "'(' to open the IN list")
        values: list[str] = []
        while True:
            token = self.token
            if token.kind is not TokenKind.STRING:
                if not values and self.at_operator(")"):
                    raise self.error(token.position, "an IN list needs at least one string literal")
                raise self.expected("a string literal (IN lists hold string literals only)")
            values.append(str(self.advance().value))
            if self.at_operator(")"):
                break
            self.expect_operator(",", "',' or ')'")
        self.advance()
        node = In(identifier, tuple(values), negated)
        return self.made(node, _Kind.BOOLEAN, operand.position, operand)

    def like(self, operand: _Parsed, negated: bool) -> _Parsed:
        self.advance()
        identifier = self.require_identifier(operand, "LIKE")
        if self.token.kind is not TokenKind.STRING:
            raise self.expected("a string literal pattern after LIKE")
        pattern = self.advance()
        escape: str | None = None
        escape_position = pattern.position
        if self.at_keyword("ESCAPE"):
            self.advance()
            if self.token.kind is not TokenKind.STRING:
                raise self.expected("a one-character string literal after ESCAPE")
            escape_position = self.token.position
            escape = str(self.advance().value)
        try:
            node = Like(identifier, str(pattern.value), escape, negated)
        except ValueError as problem:
            raise self.error(escape_position, str(problem)) from None
        return self.made(node, _Kind.BOOLEAN, operand.position, operand)

    def is_null(self, operand: _Parsed) -> _Parsed:
        self.advance()
        identifier = self.require_identifier(operand, "IS NULL")
        negated = False
        if self.at_keyword("NOT"):
            self.advance()
            negated = True
        self.expect_keyword("NULL")
        return self.made(IsNull(identifier, negated), _Kind.BOOLEAN, operand.position, operand)

    def additive(self) -> _Parsed:
        left = self.multiplicative()
        while self.token.kind is TokenKind.OPERATOR and self.token.value in _ADDITIVE:
            operator = self.advance()
            right = self.multiplicative()
            left = self.arithmetic(_ADDITIVE[str(operator.value)], operator, left, right)
        return left

    def multiplicative(self) -> _Parsed:
        left = self.unary()
        while self.token.kind is TokenKind.OPERATOR and self.token.value in _MULTIPLICATIVE:
            operator = self.advance()
            right = self.unary()
            left = self.arithmetic(_MULTIPLICATIVE[str(operator.value)], operator, left, right)
        return left

    def arithmetic(
        self, operator: ArithmeticOperator, token: Token, left: _Parsed, right: _Parsed
    ) -> _Parsed:
        # The spec composes arithmetic of numeric literals, identifiers and arithmetic only.
        self.require_number(left, token)
        self.require_number(right, token)
        node = Arithmetic(operator, left.node, right.node)
        return self.made(node, _Kind.NUMBER, left.position, left, right)

    def unary(self) -> _Parsed:
        if not (self.token.kind is TokenKind.OPERATOR and self.token.value in _UNARY):
            return self.primary()
        sign = self.advance()
        if self.token.kind in (TokenKind.EXACT, TokenKind.APPROXIMATE):
            return self.numeric_literal(self.advance(), sign)
        self.enter(sign.position)
        operand = self.unary()
        self.nesting -= 1
        self.require_number(operand, sign)
        node = Unary(_UNARY[str(sign.value)], operand.node)
        return self.made(node, _Kind.NUMBER, sign.position, operand)

    def primary(self) -> _Parsed:
        token = self.token
        if token.kind is TokenKind.IDENTIFIER:
            self.advance()
            return self.made(Identifier(str(token.value)), _Kind.UNKNOWN, token.position)
        if token.kind is TokenKind.STRING:
            self.advance()
            return self.made(Literal(str(token.value)), _Kind.STRING, token.position)
        if token.kind in (TokenKind.EXACT, TokenKind.APPROXIMATE):
            return self.numeric_literal(self.advance(), None)
        if self.at_keyword("TRUE", "FALSE"):
            self.advance()
            return self.made(Literal(token.value == "TRUE"), _Kind.BOOLEAN, token.position)
        if self.at_operator("("):
            self.advance()
            self.enter(token.position)
            inner = self.disjunction()
            self.nesting -= 1
            self.expect_operator(")", "')' or an operator")
            return _Parsed(inner.node, inner.kind, token.position, inner.depth, inner.constant)
        if self.at_keyword("NULL"):
            raise self.error(
                token.position, "NULL is not a value here; test with IS NULL or IS NOT NULL"
            )
        raise self.expected("an identifier, a literal or '('")

    def numeric_literal(self, token: Token, sign: Token | None) -> _Parsed:
        negative = sign is not None and sign.value == "-"
        start = token.position if sign is None else sign.position
        if token.kind is TokenKind.APPROXIMATE:
            magnitude = float(token.value)
            value = -magnitude if negative else magnitude
            typed: Float | Double = Float(value) if token.is_float32 else Double(value)
            return self.made(Literal(typed), _Kind.NUMBER, start)
        magnitude = int(token.value)
        if token.is_radix:
            # Java reads hex/octal/binary digits as a bit pattern: 0xFFFFFFFF is the int -1.
            if magnitude < 2**32 and not token.is_long:
                exact: Int | Long = Int(_wrap(magnitude, 32))
            else:
                exact = Long(_wrap(magnitude, 64))
            if negative:
                negated = -int(exact)
                bits = 32 if isinstance(exact, Int) else 64
                exact = type(exact)(_wrap(negated, bits))
            return self.made(Literal(exact), _Kind.NUMBER, start)
        value_int = -magnitude if negative else magnitude
        if not token.is_long and INT_RANGE[0] <= value_int <= INT_RANGE[1]:
            return self.made(Literal(Int(value_int)), _Kind.NUMBER, start)
        if LONG_RANGE[0] <= value_int <= LONG_RANGE[1]:
            return self.made(Literal(Long(value_int)), _Kind.NUMBER, start)
        raise self.error(start, f"number {token.text!r} is out of the range of a Java long")


def parse(text: str | None) -> Expression | None:
    """The syntax tree of selector ``text``, or None when there is no selector.

    None, the empty string and text of only white space mean "no selector" (every message
    matches), as the spec says of the empty string. Anything else either parses into a checked
    tree or raises ``InvalidSelectorException`` naming the column and what was expected.
    """
    if text is None:
        return None
    if not isinstance(text, str):
        raise InvalidSelectorException(
            f"a selector is a str or None, got {type(text).__name__} {text!r}"
        )
    parser = _Parser(text)
    if parser.token.kind is TokenKind.END:
        return None
    return parser.selector()


def selector_or_none(text: str | None) -> str | None:
    """``text`` as a consumer or browser reports its selector: None when it is no selector (None,
    the empty string, or white space only, which ``parse`` reads as no selector), else ``text``."""
    return text if text and text.strip(JAVA_WHITESPACE) else None
