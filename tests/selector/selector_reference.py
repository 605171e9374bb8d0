"""A deliberately simple reference interpreter of the selector AST, for differential tests.

It walks the tree on every call, reads messages only through their public getters, encodes the
spec's AND/OR/NOT tables as literal data, matches LIKE patterns with a plain dynamic-programming
matcher (no regular expressions), and converts integers to float by searching the neighbouring
floats with exact fractions. Nothing here is fast, and nothing is shared with ``jms.selector``'s
compiler or numeric helpers, so the two can only agree by both being right.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from typing import Any

from jms.selector.ast import (
    And,
    Arithmetic,
    Between,
    Comparison,
    Expression,
    Identifier,
    In,
    IsNull,
    Like,
    Literal,
    Not,
    Or,
    Unary,
)
from jms.types import Byte, Double, Float, Int, Long, Short

T, F, U = True, False, None

# The spec's tables, row = left operand, column = right operand.
AND_TABLE = {
    (T, T): T, (T, F): F, (T, U): U,
    (F, T): F, (F, F): F, (F, U): F,
    (U, T): U, (U, F): F, (U, U): U,
}  # fmt: skip
OR_TABLE = {
    (T, T): T, (T, F): T, (T, U): T,
    (F, T): T, (F, F): F, (F, U): U,
    (U, T): T, (U, F): U, (U, U): U,
}  # fmt: skip
NOT_TABLE = {T: F, F: T, U: U}


class _TypeError:
    def __repr__(self) -> str:
        return "type error"


TYPE_ERROR = _TypeError()

RANK = {Byte: 0, Short: 0, Int: 0, Long: 1, Float: 2, Double: 3}
RANK_TYPE = {0: Int, 1: Long, 2: Float, 3: Double}


def float32_bits(value: float) -> int:
    return struct.unpack(">I", struct.pack(">f", value))[0]


def float32_from_bits(bits: int) -> float:
    return struct.unpack(">f", struct.pack(">I", bits))[0]


def nearest_float32(number: int) -> float:
    """The float nearest to ``number`` (ties to the even bit pattern), by exact comparison."""
    if number == 0:
        return 0.0
    guess = struct.unpack(">f", struct.pack(">f", float(number)))[0]
    bits = float32_bits(guess)
    candidates = {
        float32_from_bits(b)
        for b in (bits - 1, bits, bits + 1)
        if 0 <= b < 0xFFFFFFFF and not math.isnan(float32_from_bits(b))
    }
    exact = Fraction(number)
    return min(candidates, key=lambda c: (abs(Fraction(c) - exact), float32_bits(c) & 1))


def to_float32(value: Any) -> float:
    if type(value) is Float:
        return float(value)
    return nearest_float32(int(value))


def round32(value: float) -> float:
    try:
        return struct.unpack(">f", struct.pack(">f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def wrap(value: int, bits: int) -> int:
    value %= 1 << bits
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def promote(a: Any, b: Any) -> tuple[int, Any, Any]:
    rank = max(RANK[type(a)], RANK[type(b)])
    if rank <= 1:
        return rank, int(a), int(b)
    if rank == 2:
        return rank, to_float32(a), to_float32(b)
    return rank, float(a), float(b)


def is_number(value: Any) -> bool:
    return type(value) in RANK


def java_divide_floats(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def arithmetic(symbol: str, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if not (is_number(a) and is_number(b)):
        return TYPE_ERROR
    rank, x, y = promote(a, b)
    if rank <= 1:
        bits = 32 if rank == 0 else 64
        if symbol == "/":
            if y == 0:
                return None
            result = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        else:
            result = {"+": x + y, "-": x - y, "*": x * y}[symbol]
        return RANK_TYPE[rank](wrap(result, bits))
    if symbol == "/":
        result = java_divide_floats(x, y)
    else:
        result = {"+": x + y, "-": x - y, "*": x * y}[symbol]
    return Float(round32(result)) if rank == 2 else Double(result)


def unary(symbol: str, a: Any) -> Any:
    if a is None:
        return None
    if not is_number(a):
        return TYPE_ERROR
    rank = RANK[type(a)]
    if symbol == "+":
        return RANK_TYPE[rank](a) if rank <= 1 else RANK_TYPE[rank](float(a))
    if rank <= 1:
        return RANK_TYPE[rank](wrap(-int(a), 32 if rank == 0 else 64))
    return RANK_TYPE[rank](-float(a))


def compare(symbol: str, a: Any, b: Any) -> bool | None:
    if a is None or b is None:
        return None
    if is_number(a) and is_number(b):
        _, x, y = promote(a, b)
    elif type(a) is type(b) and type(a) in (str, bool):
        if symbol not in ("=", "<>"):
            return False
        x, y = a, b
    else:
        return False
    return {
        "=": x == y, "<>": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y,
    }[symbol]  # fmt: skip


def like_matches(value: str, pattern: str, escape: str | None) -> bool:
    """Whole-string LIKE by dynamic programming over (pattern token, value position)."""
    tokens: list[tuple[str, str]] = []  # ("char", c) | ("one", "") | ("any", "")
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if escape is not None and char == escape:
            tokens.append(("char", pattern[index + 1]))
            index += 2
            continue
        tokens.append(
            ("one", "") if char == "_" else ("any", "") if char == "%" else ("char", char)
        )
        index += 1
    reachable = {0}
    for kind, char in tokens:
        following: set[int] = set()
        for position in reachable:
            if kind == "any":
                following.update(range(position, len(value) + 1))
            elif position < len(value) and (kind == "one" or value[position] == char):
                following.add(position + 1)
        reachable = following
    return len(value) in reachable


def header(name: str, message: Any) -> Any:
    if name == "JMSDeliveryMode":
        return {1: "NON_PERSISTENT", 2: "PERSISTENT"}[message.get_jms_delivery_mode()]
    if name == "JMSPriority":
        return Int(message.get_jms_priority())
    if name == "JMSTimestamp":
        return Long(message.get_jms_timestamp())
    if name == "JMSMessageID":
        return message.get_jms_message_id()
    if name == "JMSCorrelationID":
        return message.get_jms_correlation_id()
    if name == "JMSType":
        return message.get_jms_type()
    return message.get_object_property(name)


def value(node: Expression, message: Any) -> Any:
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, Identifier):
        return header(node.name, message)
    if isinstance(node, Unary):
        return unary(node.operator.value, value(node.operand, message))
    if isinstance(node, Arithmetic):
        left, right = value(node.left, message), value(node.right, message)
        return arithmetic(node.operator.value, left, right)
    return evaluate(node, message)


def evaluate(node: Expression, message: Any) -> bool | None:
    """TRUE, FALSE or UNKNOWN (None) of a condition node."""
    if isinstance(node, Literal | Identifier):
        held = value(node, message)
        return held if held is None or type(held) is bool else False
    if isinstance(node, Not):
        return NOT_TABLE[evaluate(node.operand, message)]
    if isinstance(node, And):
        result = evaluate(node.operands[0], message)
        for operand in node.operands[1:]:
            result = AND_TABLE[result, evaluate(operand, message)]
        return result
    if isinstance(node, Or):
        result = evaluate(node.operands[0], message)
        for operand in node.operands[1:]:
            result = OR_TABLE[result, evaluate(operand, message)]
        return result
    if isinstance(node, Comparison):
        left, right = value(node.left, message), value(node.right, message)
        return compare(node.operator.value, left, right)
    if isinstance(node, Between):
        operand = value(node.operand, message)
        low, high = value(node.low, message), value(node.high, message)
        if node.negated:
            return OR_TABLE[compare("<", operand, low), compare(">", operand, high)]
        return AND_TABLE[compare(">=", operand, low), compare("<=", operand, high)]
    if isinstance(node, In):
        held = value(node.identifier, message)
        result = None if held is None else type(held) is str and held in node.values
        return NOT_TABLE[result] if node.negated else result
    if isinstance(node, Like):
        held = value(node.identifier, message)
        if held is None:
            result = None
        else:
            result = type(held) is str and like_matches(held, node.pattern, node.escape)
        return NOT_TABLE[result] if node.negated else result
    if isinstance(node, IsNull):
        is_null = value(node.identifier, message) is None
        return not is_null if node.negated else is_null
    raise TypeError(node)
