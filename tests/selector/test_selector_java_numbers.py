"""Java numeric semantics in selectors: overflow, truncation, float rounding, promotion in
comparisons, division by zero, NaN and infinities."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jms.selector import Selector
from jms.selector import _runtime as java
from jms.types import INT_RANGE, LONG_RANGE, Byte, Double, Float, Int, Long, Short
from tests.selector import selector_reference as reference
from tests.selector.selector_testing import make_message
from tests.strategies import (
    java_bytes,
    java_doubles,
    java_floats,
    java_ints,
    java_longs,
    java_shorts,
)

INT_MIN, INT_MAX = INT_RANGE
LONG_MIN, LONG_MAX = LONG_RANGE


def evaluate(selector: str, **properties: Any) -> Any:
    return Selector(selector).evaluate(make_message(**properties))


# --- integer overflow and promotion -----------------------------------------------------------


def test_int_arithmetic_wraps_at_32_bits() -> None:
    assert evaluate("a + 1 = -2147483648", a=Int(INT_MAX)) is True
    assert evaluate("a - 1 = 2147483647", a=Int(INT_MIN)) is True
    assert evaluate("a * a = 0", a=Int(65536)) is True
    assert evaluate("2147483647 + 1 = -2147483648") is True  # int literals are ints
    assert evaluate("-a = a", a=Int(INT_MIN)) is True  # negating MIN_VALUE gives MIN_VALUE


def test_byte_and_short_promote_to_int_without_wrapping_at_their_width() -> None:
    assert evaluate("a + b = 128", a=Byte(127), b=Byte(1)) is True
    assert evaluate("-a = 128", a=Byte(-128)) is True
    assert evaluate("a * b = 1073676289", a=Short(32767), b=Short(32767)) is True
    assert evaluate("+a = 5", a=Short(5)) is True


def test_long_arithmetic_wraps_at_64_bits() -> None:
    assert evaluate("a + 1 = -9223372036854775808", a=Long(LONG_MAX)) is True
    assert evaluate("a * 2 = -2", a=Long(LONG_MAX)) is True
    assert evaluate("-a = a", a=Long(LONG_MIN)) is True
    assert evaluate("a + 1 = 2147483648", a=Long(INT_MAX)) is True  # long does not wrap at 32
    assert evaluate("a + b = 2147483648", a=Int(INT_MAX), b=Long(1)) is True  # int + long is long
    assert evaluate("2147483647L + 1 = 2147483648") is True
    assert evaluate("2147483648 - 1 = 2147483647") is True  # too big for int: a long literal


def test_integer_division_truncates_toward_zero() -> None:
    assert evaluate("a / 2 = -3", a=Int(-7)) is True
    assert evaluate("a / -2 = -3", a=Int(7)) is True
    assert evaluate("a / -2 = 3", a=Int(-7)) is True
    assert evaluate("a / 3 = 0", a=Long(-2)) is True


def test_min_value_divided_by_minus_one_wraps() -> None:
    assert evaluate("a / -1 = -2147483648", a=Int(INT_MIN)) is True
    assert evaluate("a / -1 = -9223372036854775808", a=Long(LONG_MIN)) is True


def test_integer_division_by_zero_is_unknown() -> None:
    assert evaluate("a / 0 = 0", a=Int(1)) is None
    assert evaluate("a / b > 0", a=Long(1), b=Long(0)) is None
    assert evaluate("NOT a / 0 = 0", a=Int(1)) is None
    assert evaluate("a / 0 = 0 OR TRUE", a=Int(1)) is True


# --- floating point ---------------------------------------------------------------------------


def test_float_arithmetic_rounds_to_32_bits() -> None:
    assert evaluate("a * 3 = b", a=Float(0.1), b=Float(0.3)) is True
    assert evaluate("a * 3 = 0.3", a=Float(0.1)) is False  # a float times an int is a float
    assert evaluate("a * 3 = 0.30000000000000004", a=Double(0.1)) is True
    assert evaluate("a / 3 = b", a=Float(1.0), b=Float(1 / 3)) is True
    assert evaluate("a / 3 = b", a=Float(1.0), b=Double(1 / 3)) is False
    assert evaluate("a + 1 = 16777216", a=Float(16777216.0)) is True
    assert evaluate("a + b = 16777216", a=Float(0.0), b=Int(16777217)) is True  # int → float
    assert evaluate("a * a = b", a=Float(3e38), b=Double(math.inf)) is True  # float overflow


def test_float_plus_double_is_double() -> None:
    assert evaluate("a + 0.0 = 0.10000000149011612", a=Float(0.1)) is True
    assert evaluate("a + b = 0.10000000149011612", a=Float(0.1), b=Double(0.0)) is True


def test_floating_division_by_zero_is_infinity_or_nan() -> None:
    assert evaluate("a / 0 > 1E308", a=Double(1.0)) is True
    assert evaluate("a / 0.0 < -1E308", a=Int(-1)) is True
    assert evaluate("1 / a < 0", a=Double(-0.0)) is True  # a negative zero divisor
    assert evaluate("a / 0.0 = b", a=Float(2.0), b=Float(math.inf)) is True
    assert evaluate("a / 0.0 = a / 0.0", a=Double(0.0)) is False  # 0/0 is NaN
    assert evaluate("a / 0.0 <> a / 0.0", a=Double(0.0)) is True
    assert evaluate("a / b = 0", a=Double(0.0), b=Double(math.nan)) is False


def test_nan_compares_as_java_does() -> None:
    nan = Double(math.nan)
    for text, expected in (
        ("a = a", False),
        ("a <> a", True),
        ("a < 1", False),
        ("a >= 1", False),
        ("a = 1", False),
        ("NOT a = 1", True),
        ("a BETWEEN 0 AND 1", False),
        ("a NOT BETWEEN 0 AND 1", False),
        ("a + 1 = a + 1", False),
    ):
        assert evaluate(text, a=nan) is expected, text
    assert evaluate("a <> 1", a=Float(math.nan)) is True


def test_infinities_and_signed_zero() -> None:
    assert evaluate("a > 1.7976931348623157E308", a=Double(math.inf)) is True
    assert evaluate("a < -9223372036854775807L", a=Float(-math.inf)) is True
    assert evaluate("a = 0", a=Double(-0.0)) is True
    assert evaluate("a - a <> a - a", a=Double(math.inf)) is True  # inf - inf is NaN


# --- promotion in comparisons -----------------------------------------------------------------


def test_int_compared_with_float_is_rounded_to_float() -> None:
    assert evaluate("a = b", a=Int(16777217), b=Float(16777216.0)) is True
    assert evaluate("a = 16777217", a=Float(16777216.0)) is True  # the int literal becomes float
    assert evaluate("a > b", a=Int(16777217), b=Float(16777216.0)) is False
    assert evaluate("a = b", a=Int(16777217), b=Double(16777216.0)) is False  # double is exact


def test_long_compared_with_double_is_rounded_to_double() -> None:
    assert evaluate("a = b", a=Long(2**53 + 1), b=Double(2.0**53)) is True
    assert evaluate("a = 9007199254740993", a=Double(2.0**53)) is True  # long literal → double
    assert evaluate("a < 9007199254740993", a=Double(2.0**53)) is False
    assert evaluate("a BETWEEN 9007199254740993 AND 9007199254740995", a=Double(2.0**53)) is True


def test_long_compared_with_float_rounds_once() -> None:
    # 2**60 + 2**36 + 1 lies just above the midpoint of two floats. Rounding it to a double first
    # lands exactly on the midpoint, and then ties-to-even rounds down: Java rounds once, up.
    value = 2**60 + 2**36 + 1
    assert evaluate("a = b", a=Long(value), b=Float(float(2**60 + 2**37))) is True
    assert evaluate("a = b", a=Long(value), b=Float(float(2**60))) is False
    assert java.long_to_float32(value) == float(2**60 + 2**37)


def test_exact_comparison_between_ints_and_longs() -> None:
    assert evaluate("a < b", a=Long(2**62 + 1), b=Long(2**62 + 2)) is True
    assert evaluate("a = 9223372036854775807", a=Long(LONG_MAX)) is True
    assert evaluate("a = 9223372036854775806", a=Long(LONG_MAX)) is False


# --- type errors ------------------------------------------------------------------------------


def test_arithmetic_on_a_string_or_boolean_property_is_false_not_unknown() -> None:
    assert evaluate("s + 1 > 0", s="1") is False
    assert evaluate("NOT s + 1 > 0", s="1") is True
    assert evaluate("-s = -1", s="1") is False
    assert evaluate("+b = 1", b=True) is False
    assert evaluate("s * 2 BETWEEN 0 AND 10", s="1") is False
    assert evaluate("s + 1 = s + 1", s="1") is False  # a type error equals nothing


# --- the runtime helpers against the reference, on random typed values -------------------------

numbers = st.one_of(java_bytes, java_shorts, java_ints, java_longs, java_floats, java_doubles)
OPERATIONS = {"+": java.ADD, "-": java.SUBTRACT, "*": java.MULTIPLY, "/": java.DIVIDE}
JAVA_TYPE_OF_RESULT = {int: Int, Long: Long, Float: Float, float: Double}


def same_java_value(result: Any, expected: Any) -> bool:
    if expected is None or result is None:
        return result is None and expected is None
    if JAVA_TYPE_OF_RESULT[type(result)] is not type(expected):
        return False
    if isinstance(expected, float):
        if math.isnan(expected):
            return math.isnan(result)
        return result == expected and math.copysign(1, result) == math.copysign(1, expected)
    return result == expected


@given(numbers, numbers, st.sampled_from(sorted(OPERATIONS)))
def test_binary_arithmetic_matches_reference(a: Any, b: Any, symbol: str) -> None:
    result = OPERATIONS[symbol][type(a), type(b)](a, b)
    assert same_java_value(result, reference.arithmetic(symbol, a, b)), (a, symbol, b, result)


COMPARED_OPERATIONS = {
    "+": java.COMPARED_ADD,
    "-": java.COMPARED_SUBTRACT,
    "*": java.COMPARED_MULTIPLY,
    "/": java.COMPARED_DIVIDE,
}


@given(numbers, numbers, st.sampled_from(sorted(OPERATIONS)))
def test_a_compared_result_differs_only_in_leaving_a_long_a_plain_int(
    a: Any, b: Any, symbol: str
) -> None:
    # Comparisons do not tell int from long (both convert exactly to each other and round alike
    # to float and double), so a result that is only compared may skip making a Long.
    result = COMPARED_OPERATIONS[symbol][type(a), type(b)](a, b)
    expected = reference.arithmetic(symbol, a, b)
    if type(expected) is Long:
        assert type(result) is int and result == expected
    else:
        assert same_java_value(result, expected), (a, symbol, b, result)


INT_LITERAL_OPERANDS = [
    Int(INT_MAX), Int(INT_MIN), Byte(-128), Short(7), Long(LONG_MAX), Long(LONG_MIN), Float(1.5),
    Double(2.5), Double(float("nan")), "2", True, None,
]  # fmt: skip


@pytest.mark.parametrize("symbol", ["+", "-", "*"])
@pytest.mark.parametrize("value", INT_LITERAL_OPERANDS)
def test_arithmetic_with_an_int_literal_is_java_arithmetic(value: Any, symbol: str) -> None:
    # "x op 2" is compiled inline for ints and doubles; every type must give Java's answer.
    message = make_message(x=value) if value is not None else make_message()
    for text in (
        f"x {symbol} 2 > 0",
        f"2 {symbol} x < 0",
        f"(x {symbol} 2) / 2 = x",
        f"x {symbol} 2 = 0",
    ):
        tree = Selector(text).tree
        assert Selector(text).evaluate(message) is reference.evaluate(tree, message), text


@given(numbers)
def test_unary_arithmetic_matches_reference(a: Any) -> None:
    assert same_java_value(java.NEGATE[type(a)](a), reference.unary("-", a))
    assert same_java_value(java.PLUS[type(a)](a), reference.unary("+", a))


@given(numbers, numbers, st.sampled_from(["=", "<>", "<", "<=", ">", ">="]))
def test_comparison_matches_reference(a: Any, b: Any, symbol: str) -> None:
    assert java.compare(symbol, a, b) is reference.compare(symbol, a, b)


@given(st.integers(*LONG_RANGE))
def test_long_to_float32_rounds_to_nearest_even(value: int) -> None:
    assert java.long_to_float32(value) == reference.nearest_float32(value)


@pytest.mark.parametrize(
    "value",
    [2**24 + 1, 2**24 + 3, -(2**25) - 3, 2**60 + 2**36, 2**60 + 2**36 + 1, LONG_MAX, LONG_MIN],
)
def test_long_to_float32_on_ties_and_extremes(value: int) -> None:
    assert java.long_to_float32(value) == reference.nearest_float32(value)
