"""Selector text → tokens, with Java's lexical rules for literals, identifiers and white space.

Numeric literals follow the Java language's literal syntax (decimal, hex ``0x``, octal ``0``,
binary ``0b``, ``_`` between digits, ``L`` for long; decimal or hex floating point with ``F``/``D``
suffixes); identifiers are a Java letter followed by Java letters or digits; keywords are
case-insensitive and never identifiers; white space is space, tab, form feed, CR and LF only.
The lexer only cuts and classifies: it reports a malformed token with its column and never decides
what a token means in context (that is the parser's job, e.g. whether a ``-`` belongs to a literal).
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from typing import Final

from jms.errors import InvalidSelectorException
from jms.types import (
    SELECTOR_RESERVED_WORDS,
    is_java_letter,
    is_java_letter_or_digit,
    parse_float,
    round_to_float32,
)

__all__ = ["JAVA_WHITESPACE", "Token", "TokenKind", "selector_error", "tokenize"]

JAVA_WHITESPACE: Final = " \t\f\r\n"


class TokenKind(enum.Enum):
    STRING = "string literal"
    EXACT = "exact numeric literal"
    APPROXIMATE = "approximate numeric literal"
    IDENTIFIER = "identifier"
    KEYWORD = "keyword"
    OPERATOR = "operator"
    END = "end of input"


@dataclass(frozen=True, slots=True)
class Token:
    """One token. ``value`` is the string's content, a keyword in upper case, an operator's text,
    an exact literal's magnitude (an ``int``, sign never included), or an approximate literal's
    ``float``. ``is_long`` marks an ``L`` suffix, ``is_float32`` an ``F`` suffix; ``is_radix``
    an exact literal written in hex, octal or binary (whose digits are a two's-complement bit
    pattern, as in Java)."""

    kind: TokenKind
    value: str | int | float
    position: int
    text: str
    is_long: bool = False
    is_float32: bool = False
    is_radix: bool = False

    def shown(self) -> str:
        """How an error message names this token."""
        if self.kind is TokenKind.END:
            return "end of input"
        if self.kind is TokenKind.KEYWORD:
            return f"keyword {self.value}"
        if self.kind is TokenKind.IDENTIFIER:
            return f"identifier {self.text}"
        if self.kind is TokenKind.OPERATOR:
            return f"'{self.text}'"
        return f"{self.kind.value} {self.text}"


def selector_error(text: str, position: int, message: str) -> InvalidSelectorException:
    """The exception for a problem at ``position`` (0-based) of selector ``text``.

    The column is 1-based and counts characters from the start of the whole text.
    """
    return InvalidSelectorException(f'{message} at column {position + 1} in "{text}"')


_DIGITS = r"[0-9](?:[0-9_]*[0-9])?"
_HEX_DIGITS = r"[0-9a-fA-F](?:[0-9a-fA-F_]*[0-9a-fA-F])?"
_EXPONENT = rf"[eE][+-]?{_DIGITS}"
# Order matters: the floating forms are tried before the integer forms they start like.
_NUMBER = re.compile(
    rf"""
    (?P<hex_float>0[xX](?:{_HEX_DIGITS}\.?(?:{_HEX_DIGITS})?|\.{_HEX_DIGITS})
        [pP][+-]?{_DIGITS})(?P<hex_float_suffix>[fFdD]?)
    | (?P<decimal_float>
        (?:{_DIGITS}\.(?:{_DIGITS})?(?:{_EXPONENT})? | \.{_DIGITS}(?:{_EXPONENT})?)
            (?P<point_suffix>[fFdD]?)
        | {_DIGITS}{_EXPONENT}(?P<exponent_suffix>[fFdD]?)
        | {_DIGITS}(?P<bare_suffix>[fFdD]))
    | 0[xX](?P<hex>{_HEX_DIGITS})(?P<hex_long>[lL]?)
    | 0[bB](?P<binary>[01](?:[01_]*[01])?)(?P<binary_long>[lL]?)
    | (?P<decimal>{_DIGITS})(?P<decimal_long>[lL]?)
    """,
    re.VERBOSE,
)

_OPERATORS: Final = ("<>", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "(", ")", ",")
_OPERATOR_HINTS: Final = {
    "!=": "use <> for 'not equal'",
    "==": "use = for 'equal'",
    '"': "string literals use single quotes",
}


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[Token] = []

    def error(self, position: int, message: str) -> InvalidSelectorException:
        return selector_error(self.text, position, message)

    def run(self) -> list[Token]:
        text = self.text
        index = 0
        while index < len(text):
            char = text[index]
            if char in JAVA_WHITESPACE:
                index += 1
            elif char == "'":
                index = self.string(index)
            elif "0" <= char <= "9" or (
                char == "." and index + 1 < len(text) and "0" <= text[index + 1] <= "9"
            ):
                index = self.number(index)
            elif is_java_letter(char):
                index = self.word(index)
            else:
                index = self.operator(index)
        self.tokens.append(Token(TokenKind.END, "", len(text), ""))
        return self.tokens

    def string(self, start: int) -> int:
        text = self.text
        chunks: list[str] = []
        index = start + 1
        while True:
            quote = text.find("'", index)
            if quote < 0:
                raise self.error(start, "unterminated string literal (no closing ')")
            chunks.append(text[index:quote])
            if text.startswith("''", quote):
                chunks.append("'")
                index = quote + 2
                continue
            end = quote + 1
            self.tokens.append(Token(TokenKind.STRING, "".join(chunks), start, text[start:end]))
            return end

    def word(self, start: int) -> int:
        text = self.text
        end = start + 1
        while end < len(text) and is_java_letter_or_digit(text[end]):
            end += 1
        word = text[start:end]
        upper = word.upper()
        if upper in SELECTOR_RESERVED_WORDS:
            self.tokens.append(Token(TokenKind.KEYWORD, upper, start, word))
        else:
            self.tokens.append(Token(TokenKind.IDENTIFIER, word, start, word))
        return end

    def operator(self, start: int) -> int:
        text = self.text
        for hint_text, hint in _OPERATOR_HINTS.items():
            if text.startswith(hint_text, start):
                raise self.error(start, f"unexpected {hint_text!r} ({hint})")
        for operator in _OPERATORS:
            if text.startswith(operator, start):
                self.tokens.append(Token(TokenKind.OPERATOR, operator, start, operator))
                return start + len(operator)
        raise self.error(start, f"unexpected character {text[start]!r}")

    def number(self, start: int) -> int:
        text = self.text
        match = _NUMBER.match(text, start)
        end = match.end() if match else start
        # A literal must end where a Java letter or digit cannot continue it ("1uncorrect", "08").
        stop = end
        while stop < len(text) and (is_java_letter_or_digit(text[stop]) or text[stop] == "."):
            stop += 1
        if match is None or stop != end:
            raise self.error(start, f"malformed number {text[start:stop]!r}")
        self.tokens.append(self.numeric_token(match, start, text[start:end]))
        return end

    def numeric_token(self, match: re.Match[str], start: int, literal: str) -> Token:
        if match["hex_float"] is not None:
            suffix = match["hex_float_suffix"]
            value = float.fromhex(match["hex_float"].replace("_", ""))
            return self.approximate(start, literal, value, suffix in ("f", "F"))
        if match["decimal_float"] is not None:
            suffix = match["point_suffix"] or match["exponent_suffix"] or match["bare_suffix"]
            digits = match["decimal_float"].replace("_", "")
            if suffix:
                digits = digits[:-1]
            if suffix in ("f", "F"):
                return self.approximate(start, literal, float(parse_float(digits)), True)
            return self.approximate(start, literal, float(digits), False)
        if match["hex"] is not None:
            value = int(match["hex"].replace("_", ""), 16)
            return self.exact(start, literal, value, bool(match["hex_long"]), is_radix=True)
        if match["binary"] is not None:
            value = int(match["binary"].replace("_", ""), 2)
            return self.exact(start, literal, value, bool(match["binary_long"]), is_radix=True)
        digits = match["decimal"].replace("_", "")
        is_long = bool(match["decimal_long"])
        if len(digits) > 1 and digits[0] == "0":
            if not all(char in "01234567" for char in digits):
                raise self.error(start, f"malformed number {literal!r} (octal digits are 0-7)")
            return self.exact(start, literal, int(digits, 8), is_long, is_radix=True)
        return self.exact(start, literal, int(digits), is_long, is_radix=False)

    def exact(self, start: int, literal: str, value: int, is_long: bool, is_radix: bool) -> Token:
        # Hex, octal and binary digits may spell any bit pattern of the type's width; a decimal
        # literal may reach 2**63 only because a minus sign may precede it (checked by the parser).
        limit = 2**64 if is_radix else 2**63 + 1
        if value >= limit:
            raise self.error(start, f"number {literal!r} is out of the range of a Java long")
        return Token(TokenKind.EXACT, value, start, literal, is_long=is_long, is_radix=is_radix)

    def approximate(self, start: int, literal: str, value: float, is_float32: bool) -> Token:
        if is_float32:
            value = round_to_float32(value)
        name = "float" if is_float32 else "double"
        if math.isinf(value):
            raise self.error(start, f"number {literal!r} is too large for a Java {name}")
        if value == 0.0 and _has_nonzero_digit(literal):
            raise self.error(start, f"number {literal!r} is too small for a Java {name}")
        return Token(TokenKind.APPROXIMATE, value, start, literal, is_float32=is_float32)


def _has_nonzero_digit(literal: str) -> bool:
    """Whether a floating literal's significand (before any exponent) has a non-zero digit."""
    significand = re.split(r"[eEpP]", literal, maxsplit=1)[0]
    if significand[:2] in ("0x", "0X"):
        return any(char not in "0._" for char in significand[2:])
    return any(char in "123456789" for char in significand)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an END token; ``InvalidSelectorException`` if malformed."""
    return _Lexer(text).run()
