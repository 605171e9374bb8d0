"""Java's numeric promotion, comparison and arithmetic over selector values, as compiled code calls it.

Inside a compiled selector a value is NULL (``None``), a boolean, a String, ``TYPE_ERROR`` (the
result of arithmetic on a String or boolean), or a number whose Python type tells its Java type:
``Byte``/``Short``/``Int`` and a plain ``int`` are Java ints, ``Long`` a long, ``Float`` a float,
``Double`` and a plain ``float`` doubles. Arithmetic returns plain ``int``/``float`` for int/double
results so that the common case allocates nothing beyond the number itself. The functions here are
pure and total: they never raise for any such values (Java's ArithmeticException on integer
division by zero becomes NULL), and never look at a message.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any, Final

from jms.types import Byte, Double, Float, Int, Long, Short, round_to_float32

__all__ = [
    "NUMBER_TYPES",
    "TYPE_ERROR",
    "add",
    "as_long",
    "compare",
    "divide",
    "long_to_float32",
    "multiply",
    "negate",
    "plus",
    "subtract",
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

#: The Python types that hold a Java number inside a compiled selector.
NUMBER_TYPES: Final = frozenset(_RANK)

_new_int = int.__new__
_new_float = float.__new__


def as_long(value: int) -> Long:
    """A header's plain-int long value marked as a Java long (no range check: it is in range)."""
    return _new_int(Long, value)


def _wrap_int(value: int) -> int:
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


def _as_float32(value: Any, rank: int) -> float:
    return long_to_float32(value) if rank <= _LONG else float(value)


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
        return rank, _as_float32(a, rank_a), _as_float32(b, rank_b)
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


def _arithmetic(a: Any, b: Any) -> tuple[int, Any, Any] | Any:
    """Promoted operands, or the NULL / TYPE_ERROR result the operation has instead."""
    if a is None or b is None:
        return None
    promoted = _promote(a, b)
    return TYPE_ERROR if promoted is None else promoted


def _finish(rank: int, result: Any) -> Any:
    if rank == _INT:
        return _wrap_int(result)
    if rank == _LONG:
        return _wrap_long(result)
    if rank == _FLOAT:
        return _new_float(Float, round_to_float32(result))
    return result


def add(a: Any, b: Any) -> Any:
    promoted = _arithmetic(a, b)
    if type(promoted) is not tuple:
        return promoted
    rank, x, y = promoted
    return _finish(rank, x + y)


def subtract(a: Any, b: Any) -> Any:
    promoted = _arithmetic(a, b)
    if type(promoted) is not tuple:
        return promoted
    rank, x, y = promoted
    return _finish(rank, x - y)


def multiply(a: Any, b: Any) -> Any:
    promoted = _arithmetic(a, b)
    if type(promoted) is not tuple:
        return promoted
    rank, x, y = promoted
    return _finish(rank, x * y)


def divide(a: Any, b: Any) -> Any:
    """Java division: integers truncate toward zero (÷0 is NULL), floating ÷0 is ±Infinity/NaN."""
    promoted = _arithmetic(a, b)
    if type(promoted) is not tuple:
        return promoted
    rank, x, y = promoted
    if rank <= _LONG:
        if y == 0:
            return None
        quotient = abs(x) // abs(y)
        return _finish(rank, -quotient if (x < 0) != (y < 0) else quotient)
    if y == 0.0:
        if x == 0.0 or math.isnan(x):
            return _finish(rank, math.nan)
        # The sign is the exclusive-or of the signs, a negative zero divisor included.
        negative = (math.copysign(1.0, x) < 0) != (math.copysign(1.0, y) < 0)
        return _finish(rank, -math.inf if negative else math.inf)
    return _finish(rank, x / y)


def negate(a: Any) -> Any:
    if a is None:
        return None
    rank = _RANK.get(type(a))
    if rank is None:
        return TYPE_ERROR
    return _finish(rank, -a)


def plus(a: Any) -> Any:
    """Unary plus: promotes byte and short to int, and is a type error on a non-number."""
    if a is None:
        return None
    rank = _RANK.get(type(a))
    if rank is None:
        return TYPE_ERROR
    return _finish(rank, a if rank <= _LONG else float(a))
