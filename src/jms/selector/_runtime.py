"""The run-time helpers compiled selectors call: Java numbers and SQL three-valued logic.

Inside a compiled selector a value is NULL (``None``), a boolean, a String, ``TYPE_ERROR`` (the
result of arithmetic on a String or boolean), or a number whose Python type tells its Java type:
``Byte``/``Short``/``Int`` and a plain ``int`` are Java ints, ``Long`` a long, ``Float`` a float,
``Double`` and a plain ``float`` doubles. Arithmetic returns plain ``int``/``float`` for int/double
results so that the common case allocates nothing beyond the number itself, and the ``COMPARED_``
tables, for a result that is only compared, a plain ``int`` for a long too (comparisons treat int
and long alike: both convert exactly to each other and round the same way to float and double). Conditions evaluated
as a whole are True, False or None (UNKNOWN). The functions here are pure and total: they never
raise for any such values (Java's ArithmeticException on integer division by zero becomes NULL),
and never look at a message."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any, Final

from jms.types import Byte, Double, Float, Int, Long, Short, round_to_float32

__all__ = [
    "ADD",
    "COMPARED_ADD",
    "COMPARED_DIVIDE",
    "COMPARED_MULTIPLY",
    "COMPARED_SUBTRACT",
    "DIVIDE",
    "DOUBLE_TYPES",
    "INT_TYPES",
    "MULTIPLY",
    "NEGATE",
    "NUMBER_TYPES",
    "PLUS",
    "SUBTRACT",
    "TYPE_ERROR",
    "as_long",
    "compare",
    "logical_and",
    "logical_not",
    "logical_or",
    "long_to_float32",
    "not_a_number",
    "not_numbers",
    "truth",
    "wrap_int",
]


class _TypeError:
    """The value of arithmetic on a String or boolean: not NULL, and unequal to everything."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "TYPE_ERROR"


TYPE_ERROR: Final = _TypeError()

_INT, _LONG, _FLOAT, _DOUBLE = 0, 1, 2, 3

_RANK: Final[dict[type, int]] = {
    int: _INT,
    Byte: _INT,
    Short: _INT,
    Int: _INT,
    Long: _LONG,
    Float: _FLOAT,
    float: _DOUBLE,
    Double: _DOUBLE,
}

#: The Python types that hold a Java number inside a compiled selector; those of ints, of doubles.
NUMBER_TYPES: Final = frozenset(_RANK)
INT_TYPES: Final = frozenset(kind for kind, rank in _RANK.items() if rank == _INT)
DOUBLE_TYPES: Final = frozenset(kind for kind, rank in _RANK.items() if rank == _DOUBLE)

_new_int = int.__new__
_new_float = float.__new__


def as_long(value: int) -> Long:
    """A header's plain-int long value marked as a Java long (no range check: it is in range)."""
    return _new_int(Long, value)


def wrap_int(value: int) -> int:
    """An exact integer result wrapped to 32 bits, as Java's int arithmetic does."""
    if -2147483648 <= value <= 2147483647:
        return value
    return ((value + 2147483648) & 0xFFFFFFFF) - 2147483648


def _wrap_long(value: int) -> Long:
    if not -9223372036854775808 <= value <= 9223372036854775807:
        value = ((value + 9223372036854775808) & 0xFFFFFFFFFFFFFFFF) - 9223372036854775808
    return _new_int(Long, value)


def long_to_float32(value: int) -> float:
    """Java's ``(float) value`` for an int or long: round once, to nearest, ties to even.

    Going through a double first would round twice, which differs for some longs above 2**53.
    """
    if -(2**53) <= value <= 2**53:
        return round_to_float32(float(value))
    magnitude = abs(value)
    drop = magnitude.bit_length() - 24
    kept, rest = magnitude >> drop, magnitude & ((1 << drop) - 1)
    half = 1 << (drop - 1)
    if rest > half or (rest == half and kept & 1):
        kept += 1
    result = float(kept << drop)
    return -result if value < 0 else result


def _float32_value(value: Any) -> float:
    """A Java float (or an int or long converted to one) as a Python float."""
    return float(value) if type(value) is Float else long_to_float32(value)


def _promote(a: Any, b: Any) -> tuple[int, Any, Any] | None:
    """Both numbers converted by Java binary numeric promotion, with the common rank.

    None if either is not a number. Ints and longs stay Python ints (exact); floats become the
    32-bit value as a Python float; doubles Python floats (``float(long)`` rounds as Java does).
    """
    rank_a = _RANK.get(type(a))
    rank_b = _RANK.get(type(b))
    if rank_a is None or rank_b is None:
        return None
    rank = max(rank_a, rank_b)
    if rank <= _LONG:
        return rank, a, b
    if rank == _FLOAT:
        return rank, _float32_value(a), _float32_value(b)
    return rank, float(a), float(b)


_ORDERINGS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "=": operator.eq,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def compare(symbol: str, a: Any, b: Any) -> bool | None:
    """``a symbol b`` in a selector: None (UNKNOWN) if either is NULL, else True or False.

    Numbers compare after promotion; two Strings or two booleans only by ``=``/``<>``; values of
    unlike types (or a ``TYPE_ERROR``) are False for every operator.
    """
    if a is None or b is None:
        return None
    promoted = _promote(a, b)
    if promoted is not None:
        return _ORDERINGS[symbol](promoted[1], promoted[2])
    kind = type(a)
    if kind is type(b) and (kind is str or kind is bool) and symbol in ("=", "<>"):
        return (a == b) == (symbol == "=")
    return False


def not_numbers(a: Any, b: Any) -> Any:
    """The result of binary arithmetic when an operand is not a number: NULL wins over a type
    error, as "arithmetic with an unknown value always yields an unknown value"."""
    return None if a is None or b is None else TYPE_ERROR


def not_a_number(a: Any) -> Any:
    """The result of unary arithmetic on something that is not a number."""
    return None if a is None else TYPE_ERROR


def _int_operation(apply: Callable[[int, int], int]) -> Callable[[int, int], int]:
    def int_operation(a: int, b: int) -> int:
        result = apply(a, b)
        if -2147483648 <= result <= 2147483647:
            return result
        return ((result + 2147483648) & 0xFFFFFFFF) - 2147483648

    return int_operation


def _long_operation(apply: Callable[[int, int], int]) -> Callable[[int, int], Long]:
    def long_operation(a: int, b: int) -> Long:
        return _wrap_long(apply(a, b))

    return long_operation


def _compared_long_operation(apply: Callable[[int, int], int]) -> Callable[[int, int], int]:
    """A long operation whose result is only compared: wrapped to 64 bits, but left a plain int
    (making a ``Long`` costs more than the arithmetic, and comparisons treat int and long alike)."""

    def compared_long_operation(a: int, b: int) -> int:
        result = apply(a, b)
        if -9223372036854775808 <= result <= 9223372036854775807:
            return result
        return ((result + 9223372036854775808) & 0xFFFFFFFFFFFFFFFF) - 9223372036854775808

    return compared_long_operation


def _float_operation(apply: Callable[[float, float], float]) -> Callable[[Any, Any], Float]:
    def float_operation(a: Any, b: Any) -> Float:
        x = long_to_float32(a) if type(a) is not Float else a
        y = long_to_float32(b) if type(b) is not Float else b
        return _new_float(Float, round_to_float32(apply(x, y)))

    return float_operation


def _truncating_division(a: int, b: int) -> int | None:
    """Java's integer ``/``: truncates toward zero; division by zero is NULL, not an error."""
    if b == 0:
        return None
    quotient = abs(a) // abs(b)
    return -quotient if (a < 0) != (b < 0) else quotient


def _int_division(a: int, b: int) -> int | None:
    quotient = _truncating_division(a, b)
    # Only Integer.MIN_VALUE / -1 leaves the range, and it wraps to itself.
    return None if quotient is None else wrap_int(quotient)


def _long_division(a: int, b: int) -> Long | None:
    quotient = _truncating_division(a, b)
    return None if quotient is None else _wrap_long(quotient)


def _compared_long_division(a: int, b: int) -> int | None:
    quotient = _truncating_division(a, b)
    # Only Long.MIN_VALUE / -1 leaves the range, and it wraps to itself.
    return None if quotient is None else quotient if quotient < 2**63 else -(2**63)


def _floating_division(a: float, b: float) -> float:
    """IEEE division as Java does it: a zero divisor gives ±Infinity, or NaN for 0/0 and NaN/0."""
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    # The sign is the exclusive-or of the signs, a negative zero divisor included.
    negative = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
    return -math.inf if negative else math.inf


def _double_division(a: Any, b: Any) -> float:
    return _floating_division(float(a), float(b))


_Operation = Callable[[Any, Any], Any]


def _table(
    int_op: _Operation, long_op: _Operation, float_op: _Operation, double_op: _Operation
) -> dict[tuple[type, type], _Operation]:
    """The operation for each pair of operand types, chosen by binary numeric promotion."""
    by_rank = (int_op, long_op, float_op, double_op)
    return {
        (type_a, type_b): by_rank[max(rank_a, rank_b)]
        for type_a, rank_a in _RANK.items()
        for type_b, rank_b in _RANK.items()
    }


def _arithmetic_tables(
    long_operation: Callable[[Callable[[int, int], int]], _Operation], long_division: _Operation
) -> tuple[dict[tuple[type, type], _Operation], ...]:
    """The tables of ``+ - * /``, with long results made by ``long_operation``/``long_division``.

    Python's own mixed int/float arithmetic is Java's double arithmetic (an int or long operand
    is rounded to the nearest double first), so double results use the operator itself.
    """
    plain = [
        _table(_int_operation(apply), long_operation(apply), _float_operation(apply), apply)
        for apply in (operator.add, operator.sub, operator.mul)
    ]
    division = _table(
        _int_division, long_division, _float_operation(_floating_division), _double_division
    )
    return (*plain, division)


# Binary arithmetic by operand types: ``ADD[type(a), type(b)](a, b)``; a pair that is missing
# (NULL, String, boolean, TYPE_ERROR) is ``not_numbers``.
ADD, SUBTRACT, MULTIPLY, DIVIDE = _arithmetic_tables(_long_operation, _long_division)
# The same for a result that is only compared (an operand of a comparison or of BETWEEN, never of
# more arithmetic): a long result stays a plain int, since comparisons do not tell int from long.
COMPARED_ADD, COMPARED_SUBTRACT, COMPARED_MULTIPLY, COMPARED_DIVIDE = _arithmetic_tables(
    _compared_long_operation, _compared_long_division
)


def _negate_int(a: int) -> int:
    return wrap_int(-a)


def _negate_long(a: int) -> Long:
    return _wrap_long(-a)


def _negate_float(a: float) -> Float:
    return _new_float(Float, -a)


def _negate_double(a: float) -> float:
    return -float(a)


def _identity_int(a: int) -> int:
    return int(a)


def _identity_long(a: int) -> Long:
    return a if type(a) is Long else _wrap_long(a)


def _identity_float(a: float) -> float:
    return a


def _identity_double(a: float) -> float:
    return float(a)


# Unary arithmetic by operand type (unary numeric promotion: byte and short become int); a missing
# type is ``not_a_number``.
NEGATE: Final = {
    kind: (_negate_int, _negate_long, _negate_float, _negate_double)[rank]
    for kind, rank in _RANK.items()
}
PLUS: Final = {
    kind: (_identity_int, _identity_long, _identity_float, _identity_double)[rank]
    for kind, rank in _RANK.items()
}


# --- three-valued logic, for conditions evaluated as a whole (True, False, or None for UNKNOWN) --


def truth(value: Any) -> bool | None:
    """A value used as a condition: a boolean is itself, NULL is UNKNOWN, anything else FALSE."""
    return value if value is None or type(value) is bool else False


def logical_not(value: bool | None) -> bool | None:
    return None if value is None else not value


def logical_and(*values: bool | None) -> bool | None:
    """The spec's AND table folded over the operands: FALSE wins, then UNKNOWN."""
    if False in values:
        return False
    return None if None in values else True


def logical_or(*values: bool | None) -> bool | None:
    """The spec's OR table folded over the operands: TRUE wins, then UNKNOWN."""
    if True in values:
        return True
    return None if None in values else False
