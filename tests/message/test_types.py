"""Java types in Python (``jms.types``) and Java's string forms of them.

API.md: "Byte, Short, Int, Long, Float, Double mark an exact Java type where a Python value is
ambiguous. Range is checked (Byte(300) → ValueError); Float rounds to 32 bits." and "Conversions to
and from String follow Java exactly, because other JMS clients read these strings". The expected
strings below are what the JDK prints (Float/Double.toString in the JDK 19+ shortest-digit form) and
what Integer.valueOf / Double.valueOf / Float.valueOf / Boolean.valueOf accept.
"""

from __future__ import annotations

import math
import struct
import time
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from jms.types import (
    BYTE_RANGE,
    INT_RANGE,
    LONG_RANGE,
    SHORT_RANGE,
    Byte,
    Char,
    Double,
    Float,
    Int,
    Long,
    Short,
    is_java_letter,
    is_java_letter_or_digit,
    is_selector_identifier,
    java_type_name,
    parse_boolean,
    parse_byte,
    parse_double,
    parse_float,
    parse_int,
    parse_long,
    parse_property_assignment,
    parse_short,
    round_to_float32,
    to_java_string,
)

FLT_MAX = 3.4028234663852886e38
FLT_MIN_SUBNORMAL = 1.401298464324817e-45


def f32(value: float) -> float:
    """The float32 nearest to a double, by the C cast struct does (independent of jms.types)."""
    return struct.unpack(">f", struct.pack(">f", value))[0]


def bits64(value: float) -> int:
    return struct.unpack(">Q", struct.pack(">d", value))[0]


def same_float(a: float, b: float) -> bool:
    """Equal as IEEE values: NaN equals NaN, and -0.0 differs from 0.0."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


# ---------------------------------------------------------------------------------------------
# The integer types: exact range, Python type names the Java type

INTEGER_TYPES = [(Byte, BYTE_RANGE), (Short, SHORT_RANGE), (Int, INT_RANGE), (Long, LONG_RANGE)]


@pytest.mark.parametrize(("cls", "bounds"), INTEGER_TYPES)
def test_integer_type_accepts_its_range_and_refuses_one_past_it(cls, bounds):
    low, high = bounds
    assert cls(low) == low and cls(high) == high
    assert type(cls(low)) is cls and isinstance(cls(high), int)
    with pytest.raises(ValueError):
        cls(low - 1)
    with pytest.raises(ValueError):
        cls(high + 1)


def test_integer_ranges_are_javas():
    assert BYTE_RANGE == (-128, 127)
    assert SHORT_RANGE == (-32768, 32767)
    assert INT_RANGE == (-2147483648, 2147483647)
    assert LONG_RANGE == (-9223372036854775808, 9223372036854775807)


def test_byte_300_is_a_value_error():
    # API.md: "Range is checked (Byte(300) → ValueError)".
    with pytest.raises(ValueError):
        Byte(300)


@pytest.mark.parametrize("cls", [Byte, Short, Int, Long])
@pytest.mark.parametrize("bad", [True, 1.0, "1", None])
def test_integer_types_take_only_ints(cls, bad):
    with pytest.raises(TypeError):
        cls(bad)


def test_typed_values_are_plain_values_for_python():
    assert Int(5) == 5 and hash(Int(5)) == hash(5) and Int(5) + 1 == 6
    assert Float(0.5) == 0.5 and Double(0.25) == 0.25
    assert Char("x") == "x"


def test_float_rounds_to_32_bits():
    # API.md: "Float rounds to 32 bits."
    assert Float(0.1) == 0.10000000149011612
    assert Float(0.1) != 0.1
    assert Float(16777217) == 16777216.0  # 2**24 + 1 is not a float
    assert type(Float(0.1)) is Float and isinstance(Float(0.1), float)
    assert Float(1e-50) == 0.0  # underflow rounds to zero, as (float) 1e-50 does in Java


def test_float_keeps_infinities_nan_and_negative_zero():
    assert Float(math.inf) == math.inf and Float(-math.inf) == -math.inf
    assert math.isnan(Float(math.nan))
    assert math.copysign(1.0, Float(-0.0)) == -1.0


def test_float_of_a_finite_value_beyond_float_range_is_a_value_error():
    # Silent choice (docs/semantics.md): Float() of a finite value too large for a float is
    # ValueError, not a silent Infinity.
    assert Float(FLT_MAX) == FLT_MAX
    assert Float(3.4028235677973362e38) == FLT_MAX  # below the halfway point to 2**128: rounds down
    for too_big in (
        3.4028235677973366e38,
        1e39,
        -1e39,
        1e308,
    ):  # halfway point rounds to even = inf
        with pytest.raises(ValueError):
            Float(too_big)


@pytest.mark.parametrize("cls", [Float, Double])
@pytest.mark.parametrize("huge", [10**400, -(10**400)])
def test_an_int_beyond_double_range_is_a_value_error(cls, huge):
    # Not an OverflowError leaking out of float(): out of range is ValueError, as for Byte(300).
    with pytest.raises(ValueError):
        cls(huge)


def test_double_takes_numbers_and_not_bool():
    assert Double(1) == 1.0 and type(Double(1)) is Double
    with pytest.raises(TypeError):
        Double(True)
    with pytest.raises(TypeError):
        Float("1.0")


def test_char_is_one_utf16_code_unit():
    assert Char("a") == "a" and type(Char("a")) is Char
    assert Char("\uffff") == "\uffff"
    assert Char("\ud800") == "\ud800"  # a lone surrogate is a Java char
    for bad in ("", "ab", "\U0001f600"):
        with pytest.raises(ValueError):
            Char(bad)
    with pytest.raises(TypeError):
        Char(65)


def test_java_type_names():
    values = [True, Byte(1), Short(1), Int(1), Long(1), Float(1), Double(1), Char("c"), "s", b"b"]
    names = [
        "boolean",
        "byte",
        "short",
        "int",
        "long",
        "float",
        "double",
        "char",
        "String",
        "byte[]",
    ]
    assert [java_type_name(v) for v in values] == names
    assert java_type_name(None) == "null"
    with pytest.raises(TypeError):
        java_type_name(1)  # a plain int does not say which Java type it is
    with pytest.raises(TypeError):
        java_type_name([1])


def test_round_to_float32_overflows_to_infinity():
    assert round_to_float32(1e39) == math.inf and round_to_float32(-1e39) == -math.inf
    assert round_to_float32(0.1) == 0.10000000149011612


# ---------------------------------------------------------------------------------------------
# To String: String.valueOf of each Java type


def test_boolean_and_integer_strings():
    assert to_java_string(True) == "true" and to_java_string(False) == "false"
    assert to_java_string(Byte(-128)) == "-128"
    assert to_java_string(Long(LONG_RANGE[0])) == "-9223372036854775808"
    assert to_java_string("text") == "text"
    assert to_java_string(Char("c")) == "c"
    with pytest.raises(TypeError):
        to_java_string(None)
    with pytest.raises(TypeError):
        to_java_string(b"bytes")


DOUBLE_STRINGS = [
    (1e-5, "1.0E-5"),
    (100.0, "100.0"),
    (1e7, "1.0E7"),
    (9999999.0, "9999999.0"),
    (0.001, "0.001"),
    (0.0009999, "9.999E-4"),
    (5.0, "5.0"),
    (-5.0, "-5.0"),
    (1.0 / 3, "0.3333333333333333"),
    (123456789.0, "1.23456789E8"),
    (1e21, "1.0E21"),
    (0.0, "0.0"),
    (-0.0, "-0.0"),
    (math.nan, "NaN"),
    (math.inf, "Infinity"),
    (-math.inf, "-Infinity"),
    (1.7976931348623157e308, "1.7976931348623157E308"),  # Double.MAX_VALUE
    (2.2250738585072014e-308, "2.2250738585072014E-308"),  # Double.MIN_NORMAL
    # Double.MIN_VALUE: "5E-324" is the shortest decimal that rounds to it, but JDK 19+ picks among
    # decimals of length 1 *or 2* the one closest to the value when the shortest has one digit.
    (5e-324, "4.9E-324"),
    (1e-323, "9.9E-324"),
    (1.5e-323, "1.5E-323"),
    # Examples from the JDK 19 change to shortest digits (JDK-4511638).
    (2e23, "2.0E23"),
    (8.41e21, "8.41E21"),
    (2.82879384806159e17, "2.82879384806159E17"),
    (1.387364135037754e18, "1.387364135037754E18"),
    (1.45800632428665e17, "1.45800632428665E17"),
    (1.9400994884341945e25, "1.9400994884341945E25"),
    (5.684341886080802e-14, "5.684341886080802E-14"),
]


@pytest.mark.parametrize(("value", "text"), DOUBLE_STRINGS)
def test_double_to_string(value, text):
    assert to_java_string(Double(value)) == text
    assert to_java_string(value) == text  # a plain Python float is a double


FLOAT_STRINGS = [
    (0.1, "0.1"),
    (1.0, "1.0"),
    (100.0, "100.0"),
    (1e-5, "1.0E-5"),
    (1e7, "1.0E7"),
    (1e10, "1.0E10"),
    (16777216.0, "1.6777216E7"),
    (1.0 / 3, "0.33333334"),
    (0.3, "0.3"),
    (3.4028235e38, "3.4028235E38"),  # Float.MAX_VALUE
    # Float.MIN_NORMAL: JDK 18 and before printed 1.17549435E-38; eight digits already round to it.
    (1.17549435e-38, "1.1754944E-38"),
    (FLT_MIN_SUBNORMAL, "1.4E-45"),  # Float.MIN_VALUE: two digits, as 4.9E-324 for double
    (2 * FLT_MIN_SUBNORMAL, "2.8E-45"),
    (math.nan, "NaN"),
    (math.inf, "Infinity"),
    (-math.inf, "-Infinity"),
    (-0.0, "-0.0"),
    (-1.5, "-1.5"),
]


@pytest.mark.parametrize(("value", "text"), FLOAT_STRINGS)
def test_float_to_string(value, text):
    assert to_java_string(Float(value)) == text


# ---------------------------------------------------------------------------------------------
# From String: Byte/Short/Integer/Long.valueOf

INTEGER_TEXTS_ACCEPTED = [
    ("0", 0),
    ("-0", 0),
    ("+1", 1),
    ("-2147483648", -2147483648),
    ("2147483647", 2147483647),
    ("007", 7),
    ("\u0661\u0662", 12),  # Arabic-Indic digits: Character.digit accepts every Unicode digit
    ("\uff11\uff12", 12),  # fullwidth digits
    ("\u0967\u0966", 10),  # Devanagari
    ("0" * 5000 + "1", 1),  # Java has no limit on leading zeros
]


@pytest.mark.parametrize(("text", "value"), INTEGER_TEXTS_ACCEPTED)
def test_parse_int_accepts_what_integer_valueof_accepts(text, value):
    assert parse_int(text) == value and type(parse_int(text)) is Int


INTEGER_TEXTS_REFUSED = [
    "",
    " 1",
    "1 ",
    "1_000",
    "1.0",
    "1e3",
    "+",
    "-",
    "++1",
    "1L",
    "0x10",
    "one",
    "2147483648",
    "-2147483649",
    "\U0001d7cf",  # MATHEMATICAL BOLD DIGIT ONE is a surrogate pair in Java: not a digit char
    "1\u00a0",
]


@pytest.mark.parametrize("text", INTEGER_TEXTS_REFUSED)
def test_parse_int_refuses_what_integer_valueof_refuses(text):
    with pytest.raises(ValueError):
        parse_int(text)


@pytest.mark.parametrize(
    ("parse", "cls", "bounds"),
    [
        (parse_byte, Byte, BYTE_RANGE),
        (parse_short, Short, SHORT_RANGE),
        (parse_long, Long, LONG_RANGE),
    ],
)
def test_parse_integer_types_check_their_own_range(parse, cls, bounds):
    low, high = bounds
    assert parse(str(low)) == low and type(parse(str(high))) is cls
    for outside in (low - 1, high + 1):
        with pytest.raises(ValueError):
            parse(str(outside))
    with pytest.raises(ValueError):
        parse("1.0")


@pytest.mark.parametrize("parse", [parse_byte, parse_short, parse_int, parse_long])
def test_parse_integer_of_null_is_a_value_error(parse):
    # "Attempting to read a null value as a primitive type must be treated as calling the
    # primitive's corresponding valueOf(String) conversion method with a null value."
    with pytest.raises(ValueError):
        parse(None)


def test_parse_long_of_many_leading_zeros_is_fast_and_exact():
    assert parse_long("-" + "0" * 100_000 + "9223372036854775808") == LONG_RANGE[0]
    with pytest.raises(ValueError):
        parse_long("9" * 100_000)


# ---------------------------------------------------------------------------------------------
# From String: Double.valueOf / Float.valueOf

DOUBLE_TEXTS_ACCEPTED = [
    (" 1e3 ", 1000.0),  # String.trim() first
    ("\t1.5\n", 1.5),
    ("1.5f", 1.5),
    ("1.5F", 1.5),
    ("1.5d", 1.5),
    ("1d", 1.0),
    ("0x1.8p3", 12.0),
    ("0X1.8P3", 12.0),
    ("0x.8p1", 1.0),
    ("0x1p-2d", 0.25),
    ("NaN", math.nan),
    ("+NaN", math.nan),
    ("Infinity", math.inf),
    ("+Infinity", math.inf),
    ("-Infinity", -math.inf),
    ("1.", 1.0),
    (".5", 0.5),
    ("1.e5", 100000.0),
    ("1e+5", 100000.0),
    ("-0", -0.0),
    ("-0.0", -0.0),
    ("1e400", math.inf),
    ("-1e400", -math.inf),
    ("1e-400", 0.0),
    ("1e99999999999999999999", math.inf),
    ("1e-99999999999999999999", 0.0),
    ("0x1p99999999999", math.inf),
    ("0x1p-99999999999", 0.0),
    ("0x1.fffffffffffff8p1023", math.inf),  # halfway past Double.MAX_VALUE: rounds to even = inf
    ("4.9e-324", 5e-324),
    ("2.4703282292062328e-324", 5e-324),  # just above half of Double.MIN_VALUE
    ("0.1", 0.1),
]


@pytest.mark.parametrize(("text", "value"), DOUBLE_TEXTS_ACCEPTED)
def test_parse_double_accepts_what_double_valueof_accepts(text, value):
    parsed = parse_double(text)
    assert type(parsed) is Double
    assert same_float(parsed, value)


FLOATING_TEXTS_REFUSED = [
    "",
    "   ",
    "abc",
    "1e",
    "e3",
    ".",
    "0x1.8",  # a hex float needs its binary exponent
    "0x1p",
    "NaNf",
    "Infinityd",
    "inf",
    "nan",
    "infinity",
    "\u0661",  # Unicode digits are not accepted by FloatingDecimal
    "\u00a01.5",  # NBSP is not removed by String.trim()
    "1_000",
    "1,5",
    "1.5ff",
    "--1",
]


@pytest.mark.parametrize("text", FLOATING_TEXTS_REFUSED)
@pytest.mark.parametrize("parse", [parse_double, parse_float])
def test_parse_floating_refuses_what_valueof_refuses(parse, text):
    with pytest.raises(ValueError):
        parse(text)


@pytest.mark.parametrize("parse", [parse_double, parse_float])
def test_parse_floating_of_null_is_a_value_error(parse):
    # API.md: reading a null value as any numeric type, float/double included, is ValueError.
    with pytest.raises(ValueError):
        parse(None)


FLOAT_TEXTS = [
    ("0.1", 0.10000000149011612),
    ("3.4028235E38", FLT_MAX),
    ("1e39", math.inf),
    ("-1e39", -math.inf),
    ("1e-46", 0.0),
    ("1.4E-45", FLT_MIN_SUBNORMAL),
    # Decimal → double → float rounds twice; Float.valueOf rounds once. Each of these has a nearest
    # double that is exactly halfway between two floats, while the decimal itself is not.
    ("1.00000005960464477550", 1.0000001192092896),
    ("7.006492321624087e-46", FLT_MIN_SUBNORMAL),
    ("340282356779733661637539395458142568447", FLT_MAX),
    ("0x1.0000010000000001p0", 1.0000001192092896),  # hex digits beyond a double's precision
    ("0x1.fffffefp127", FLT_MAX),
    # The exact halfway points themselves round to even.
    ("340282356779733661637539395458142568448", math.inf),
    ("0x1.000001p0", 1.0),
    ("7.006492321624085354618647916449580656401309709382578858785341419448955413429303e-46", 0.0),
    ("1.5f", 1.5),
    (" -2.5 ", -2.5),
]


@pytest.mark.parametrize(("text", "value"), FLOAT_TEXTS)
def test_parse_float_rounds_once_to_the_nearest_float(text, value):
    parsed = parse_float(text)
    assert type(parsed) is Float
    assert same_float(parsed, value)


def test_parse_floating_of_a_huge_exponent_is_fast():
    # A string property is data from the network: its text must not cost minutes to read.
    started = time.monotonic()
    assert parse_double("1e-99999999") == 0.0
    assert parse_float("1e-99999999") == 0.0
    assert parse_double("1" + "0" * 100_000 + "e-100000") == 1.0
    assert parse_float("0." + "0" * 100_000 + "1e100001") == 1.0
    assert time.monotonic() - started < 2.0


BOOLEAN_TEXTS = [
    ("true", True),
    ("TRUE", True),
    ("TrUe", True),
    ("false", False),
    (" true", False),
    ("true ", False),
    ("yes", False),
    ("1", False),
    ("", False),
    (None, False),
    ("truee", False),
]


@pytest.mark.parametrize(("text", "value"), BOOLEAN_TEXTS)
def test_parse_boolean_is_boolean_valueof(text, value):
    # API.md: "Boolean.valueOf (case-insensitive true, anything else false)".
    assert parse_boolean(text) is value


# ---------------------------------------------------------------------------------------------
# Round trips (property based)


@given(st.integers(*BYTE_RANGE))
def test_byte_string_round_trip(value):
    assert parse_byte(to_java_string(Byte(value))) == value


@given(st.integers(*SHORT_RANGE))
def test_short_string_round_trip(value):
    assert parse_short(to_java_string(Short(value))) == value


@given(st.integers(*INT_RANGE))
def test_int_string_round_trip(value):
    assert parse_int(to_java_string(Int(value))) == value


@given(st.integers(*LONG_RANGE))
def test_long_string_round_trip(value):
    text = to_java_string(Long(value))
    assert text == str(value)
    assert parse_long(text) == value


@given(st.booleans())
def test_boolean_string_round_trip(value):
    assert parse_boolean(to_java_string(value)) is value


@given(st.floats())
@example(5e-324)
@example(-0.0)
@example(math.nan)
def test_double_string_round_trip(value):
    assert same_float(parse_double(to_java_string(Double(value))), value)


@given(st.floats(width=32))
@example(FLT_MIN_SUBNORMAL)
@example(FLT_MAX)
def test_float_string_round_trip(value):
    assert same_float(parse_float(to_java_string(Float(value))), value)


# An independent reading of the JDK 19+ Float/Double.toString specification, by brute force with
# exact arithmetic. "Let R be the set of all decimals that round to x according to the usual round
# to nearest rounding policy of IEEE 754; let m be the minimal length over all decimals in R; when
# m ≥ 2, let T be the set of all decimals in R with length m; otherwise, let T be the set of all
# decimals in R with length 1 or 2. Define d as the decimal in T that is closest to x. Or if there
# are two such decimals in T, select the one with the even significand."


def _exact_round(value: Fraction, is_float32: bool) -> float:
    """IEEE round-to-nearest-even of a positive rational to double or float32."""
    if not is_float32:
        try:
            return value.numerator / value.denominator  # correctly rounded int division
        except OverflowError:
            return math.inf
    guess = f32(min(float(value), FLT_MAX))
    bits = struct.unpack(">I", struct.pack(">f", guess))[0]
    candidates = []
    for b in range(max(bits - 2, 0), min(bits + 2, 0x7F800000) + 1):
        f = struct.unpack(">f", struct.pack(">I", b))[0]
        exact = Fraction(2**128) if math.isinf(f) else Fraction(f)
        candidates.append((abs(exact - value), b & 1, f))
    candidates.sort()
    if candidates[0][0] == candidates[1][0]:
        return candidates[0][2] if candidates[0][1] == 0 else candidates[1][2]
    return candidates[0][2]


def _jdk19_to_string(x: float, is_float32: bool) -> str:
    if x < 0 or (x == 0 and math.copysign(1.0, x) < 0):
        return "-" + _jdk19_to_string(-x, is_float32)
    if x == 0:
        return "0.0"
    exact = Fraction(x)
    decade = 0
    while Fraction(10) ** decade > exact:
        decade -= 1
    while Fraction(10) ** (decade + 1) <= exact:
        decade += 1

    def members(length: int) -> list[tuple[int, int]]:
        """(significand, exponent) of the decimals of at most `length` digits near x in R."""
        exponent = decade - length + 1
        step = Fraction(10) ** exponent
        start = math.floor(exact / step)
        return [
            (c, exponent)
            for c in range(max(start - 2, 1), start + 3)
            if _exact_round(c * step, is_float32) == x
        ]

    length = 1
    while not members(length):
        length += 1
    chosen = members(max(length, 2))
    best = min(abs(Fraction(c) * Fraction(10) ** q - exact) for c, q in chosen)
    closest = [(c, q) for c, q in chosen if abs(Fraction(c) * Fraction(10) ** q - exact) == best]
    significand, exponent = (
        next((c, q) for c, q in closest if c % 2 == 0) if len(closest) > 1 else closest[0]
    )
    while significand % 10 == 0:
        significand //= 10
        exponent += 1
    digits = str(significand)
    scientific = len(digits) + exponent - 1  # d = digits[0].digits[1:] × 10^scientific
    if -3 <= scientific < 7:
        if exponent >= 0:
            return digits + "0" * exponent + ".0"
        point = len(digits) + exponent
        if point <= 0:
            return "0." + "0" * -point + digits
        return digits[:point] + "." + digits[point:]
    return f"{digits[0]}.{digits[1:] or '0'}E{scientific}"


def test_reference_formatter_agrees_with_the_documented_examples():
    for value, text in DOUBLE_STRINGS:
        if math.isfinite(value):
            assert _jdk19_to_string(value, is_float32=False) == text
    for value, text in FLOAT_STRINGS:
        if math.isfinite(value):
            assert _jdk19_to_string(f32(value), is_float32=True) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
@example(5e-324)
@example(2.0**-1022)
@example(2.0**1023)
@example(1e23)
def test_double_to_string_is_the_jdk19_shortest_closest_decimal(value):
    assert to_java_string(Double(value)) == _jdk19_to_string(value, is_float32=False)


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_float_to_string_is_the_jdk19_shortest_closest_decimal(value):
    assert to_java_string(Float(value)) == _jdk19_to_string(value, is_float32=True)


@pytest.mark.parametrize("exponent", range(-149, 128))
def test_float_to_string_at_every_power_of_two(exponent):
    # Powers of two have a narrower rounding interval below than above: the case where the decimal
    # closest to x is outside R while another one of the same length is inside.
    value = f32(2.0**exponent)
    assert to_java_string(Float(value)) == _jdk19_to_string(value, is_float32=True)


@given(
    st.integers(0, 10**12),
    st.integers(-60, 45),
    st.sampled_from(["", "f", "d"]),
)
def test_parse_float_is_the_nearest_float_to_the_exact_decimal(significand, exponent, suffix):
    text = f"{significand}e{exponent}{suffix}"
    expected = _exact_round(Fraction(significand) * Fraction(10) ** exponent, is_float32=True)
    expected = expected if significand else 0.0
    assert same_float(parse_float(text), expected)


@given(st.integers(1, 2**64), st.integers(-1100, 1000))
def test_parse_double_is_the_nearest_double_to_the_exact_decimal(significand, exponent):
    expected = _exact_round(Fraction(significand) * Fraction(10) ** exponent, is_float32=False)
    assert same_float(parse_double(f"{significand}E{exponent}"), expected)


@given(st.text(alphabet="0123456789.eE+-xXpPfFdDaA NIanity", max_size=12))
def test_parse_double_either_parses_or_raises_value_error(text):
    # Whatever the text, the only failure is ValueError (Java's NumberFormatException).
    try:
        parse_double(text)
        parse_float(text)
    except ValueError:
        pass


# ---------------------------------------------------------------------------------------------
# Selector identifiers: the rule for property names


@pytest.mark.parametrize(
    "name",
    [
        "a",
        "_x",
        "$x",
        "x1",
        "é",
        "λ",
        "名前",
        "JMSX",
        "Nulls",
        "NULL_",
        "a\u0661",
        "a\u0301",
        "a\u200b",
        "a\x01",
    ],
)
def test_selector_identifiers(name):
    # "An identifier is an unlimited-length sequence of letters and digits, the first of which must
    # be a letter. A letter is any character for which the method Character.isJavaLetter returns
    # true. This includes '_' and '$'."
    assert is_selector_identifier(name)


@pytest.mark.parametrize(
    "name",
    [
        *["", "1a", "a-b", "a b", "a.b", "\u0661a", "\x01a", None, 5],
        *["NULL", "null", "True", "FALSE", "not", "AND", "Or", "between", "LIKE", "in", "IS"],
        "escape",
    ],
)
def test_not_selector_identifiers(name):
    # "Identifiers cannot be the names NULL, TRUE, and FALSE." "Identifiers cannot be NOT, AND, OR,
    # BETWEEN, LIKE, IN, IS, or ESCAPE." (Predefined selector literals and operator names are case
    # insensitive.)
    assert not is_selector_identifier(name)


def test_java_letter_classes():
    assert is_java_letter("$") and is_java_letter("_") and is_java_letter("€")  # currency symbol
    assert not is_java_letter("1") and not is_java_letter("-")
    assert is_java_letter_or_digit("1") and is_java_letter_or_digit("\u0661")
    assert not is_java_letter_or_digit(" ") and not is_java_letter_or_digit(".")


@given(st.integers(0, 2**80), st.integers(-240, 60), st.sampled_from(["", "f", "d"]))
def test_parse_float_of_a_hex_float_is_the_nearest_float_to_its_exact_value(
    mantissa, exponent, suffix
):
    # Hex digits may carry more bits than a double: the float is still rounded once.
    text = f"0x{mantissa:x}p{exponent}{suffix}"
    expected = _exact_round(Fraction(mantissa) * Fraction(2) ** exponent, is_float32=True)
    assert same_float(parse_float(text), expected if mantissa else 0.0)


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("weight=int:3000", ("weight", Int(3000))),
        ("flag=boolean:TRUE", ("flag", True)),
        ("ratio=float:0.5", ("ratio", Float(0.5))),
        ("plain=hello", ("plain", "hello")),
        ("empty=", ("empty", "")),
        ("origin=queue://orders", ("origin", "queue://orders")),  # a URL is a String
        ("link=https://example.org/a:b", ("link", "https://example.org/a:b")),
        ("text=string:integer:3", ("text", "integer:3")),
        ("note=12:30", ("note", "12:30")),  # not a word before the colon
    ],
)
def test_a_property_assignment_gives_its_name_and_typed_value(
    option: str, expected: tuple[str, object]
) -> None:
    name, value = parse_property_assignment(option)
    assert (name, value) == expected
    assert type(value) is type(expected[1])


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("weight=integer:3", "unknown type 'integer'.*weight=string:integer:3"),
        ("flag=boolean:yes", "a boolean is true or false"),
        ("n=int:x", "'n=int:x'"),
        ("noequals", "is not name=type:value"),
        ("=int:3", "is not name=type:value"),
    ],
)
def test_a_mistyped_property_assignment_says_what_is_wrong(option: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_property_assignment(option)
