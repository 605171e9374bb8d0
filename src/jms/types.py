"""Java primitive types in Python, and Java's string forms of them.

A Python ``int`` or ``float`` does not say whether it was a Java ``byte`` or a ``long``, a ``float``
or a ``double``; JMS properties, Map and Stream bodies keep that distinction, and selectors depend on
it (``int`` arithmetic wraps at 32 bits, ``float`` arithmetic rounds to 32 bits). The classes here
are ``int``/``float``/``str`` subclasses that carry the Java type in their Python type: a value
stored as ``Int(5)`` *is* the int 5 for every Python purpose, and ``type(v) is Int`` tells its Java
type. ``Float`` rounds to the nearest 32-bit float; integer types check their range.

The string conversions follow Java exactly (``Float.toString`` in its JDK 19+ shortest-digits form,
``Integer.valueOf`` and ``Double.valueOf`` grammars, ``Boolean.valueOf``), because other JMS
clients read the strings we write and write the strings we read. Java's NumberFormatException is
Python's ``ValueError``. This module does no I/O and imports nothing from ``jms``.
"""

from __future__ import annotations

import math
import re
import struct
import unicodedata
from decimal import Decimal
from fractions import Fraction
from typing import Final

__all__ = [
    "BYTE_RANGE",
    "INT_RANGE",
    "JAVA_TYPE_NAMES",
    "LONG_RANGE",
    "PROPERTY_TYPE_NAMES",
    "SELECTOR_RESERVED_WORDS",
    "SHORT_RANGE",
    "Byte",
    "Char",
    "Double",
    "Float",
    "Int",
    "Long",
    "Short",
    "a_java_type",
    "is_java_letter",
    "is_java_letter_or_digit",
    "is_selector_identifier",
    "java_type_name",
    "parse_boolean",
    "parse_byte",
    "parse_double",
    "parse_float",
    "parse_int",
    "parse_long",
    "parse_property_assignment",
    "parse_short",
    "round_to_float32",
    "to_java_string",
]

BYTE_RANGE: Final = (-(2**7), 2**7 - 1)
SHORT_RANGE: Final = (-(2**15), 2**15 - 1)
INT_RANGE: Final = (-(2**31), 2**31 - 1)
LONG_RANGE: Final = (-(2**63), 2**63 - 1)

_pack_f = struct.Struct(">f").pack
_unpack_f = struct.Struct(">f").unpack


def round_to_float32(value: float) -> float:
    """Round a double to the nearest float (Java's ``(float) d``), overflowing to ±Infinity."""
    try:
        return _unpack_f(_pack_f(value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


class _JavaInt(int):
    """An int whose Python type names its Java integer type."""

    __slots__ = ()
    _java_name: str = ""
    _range: tuple[int, int] = (0, 0)

    def __new__(cls, value: object = 0) -> _JavaInt:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{cls.__name__}() takes an int, got {type(value).__name__} {value!r}")
        low, high = cls._range
        if not low <= value <= high:
            raise ValueError(f"{value} is out of range for a Java {cls._java_name} ({low}..{high})")
        return super().__new__(cls, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({int(self)})"

    def __reduce__(self) -> tuple[type, tuple[int]]:
        return (type(self), (int(self),))


class Byte(_JavaInt):
    """A Java ``byte``: an int in -128..127."""

    __slots__ = ()
    _java_name = "byte"
    _range = BYTE_RANGE


class Short(_JavaInt):
    """A Java ``short``: an int in -32768..32767."""

    __slots__ = ()
    _java_name = "short"
    _range = SHORT_RANGE


class Int(_JavaInt):
    """A Java ``int``: a 32-bit signed integer."""

    __slots__ = ()
    _java_name = "int"
    _range = INT_RANGE


class Long(_JavaInt):
    """A Java ``long``: a 64-bit signed integer."""

    __slots__ = ()
    _java_name = "long"
    _range = LONG_RANGE


class Float(float):
    """A Java ``float``: the value rounded to the nearest IEEE 754 single.

    A finite value too large for a float is a ``ValueError`` (not a silent Infinity); infinities
    and NaN are accepted as they are.
    """

    __slots__ = ()

    def __new__(cls, value: object = 0.0) -> Float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"Float() takes a number, got {type(value).__name__} {value!r}")
        try:
            rounded = round_to_float32(float(value))
        except OverflowError:  # an int too large even for a double
            rounded = math.inf
        if math.isinf(rounded) and not (isinstance(value, float) and math.isinf(value)):
            raise ValueError(f"{value!r:.40} is out of range for a Java float (±3.4028235E38)")
        return super().__new__(cls, rounded)

    def __repr__(self) -> str:
        return f"Float({float(self)!r})"

    def __reduce__(self) -> tuple[type, tuple[float]]:
        return (Float, (float(self),))


class Double(float):
    """A Java ``double`` (a Python ``float`` is one already; this names it explicitly)."""

    __slots__ = ()

    def __new__(cls, value: object = 0.0) -> Double:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"Double() takes a number, got {type(value).__name__} {value!r}")
        try:
            return super().__new__(cls, float(value))
        except OverflowError:
            raise ValueError(
                f"{value!r:.40} is out of range for a Java double (±1.7976931348623157E308)"
            ) from None

    def __repr__(self) -> str:
        return f"Double({float(self)!r})"

    def __reduce__(self) -> tuple[type, tuple[float]]:
        return (Double, (float(self),))


class Char(str):
    """A Java ``char``: exactly one UTF-16 code unit (U+0000..U+FFFF, lone surrogates included)."""

    __slots__ = ()

    def __new__(cls, value: object) -> Char:
        if not isinstance(value, str):
            raise TypeError(f"Char() takes a one-character str, got {type(value).__name__}")
        if len(value) != 1 or ord(value) > 0xFFFF:
            raise ValueError(f"a Java char is one UTF-16 code unit (U+0000..U+FFFF), got {value!r}")
        return super().__new__(cls, value)

    def __repr__(self) -> str:
        return f"Char({str(self)!r})"

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return (Char, (str(self),))


#: The Java type name of each Python type that holds a Java-typed value.
JAVA_TYPE_NAMES: Final[dict[type, str]] = {
    bool: "boolean",
    Byte: "byte",
    Short: "short",
    Int: "int",
    Long: "long",
    Float: "float",
    Double: "double",
    Char: "char",
    str: "String",
    bytes: "byte[]",
    type(None): "null",
}


def java_type_name(value: object) -> str:
    """The Java type name of a typed value (``Int(1)`` → ``'int'``), for messages and codecs."""
    name = JAVA_TYPE_NAMES.get(type(value))
    if name is None:
        raise TypeError(f"{type(value).__name__} {value!r} is not a Java-typed value")
    return name


def a_java_type(value: object) -> str:
    """``java_type_name`` with its article, for messages: ``'an int'``, ``'a String'``."""
    name = java_type_name(value)
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


# ---------------------------------------------------------------------------------------------
# To String: Boolean.toString, Integer.toString, Float.toString, Double.toString


def _float32_neighbour(value: float, up: bool) -> float:
    """The float next to a positive float ``value`` (up from Float.MAX_VALUE is Infinity)."""
    bits = struct.unpack(">I", _pack_f(value))[0]
    return _unpack_f(struct.pack(">I", bits + (1 if up else -1)))[0]


def _rounding_interval(value: float, is_float32: bool) -> tuple[Fraction, Fraction, bool]:
    """``(low, high, closed)``: the decimals that round to the positive finite ``value`` are those
    between the midpoints to its neighbours, the midpoints included when ``closed`` (ties go to
    the even value)."""
    if is_float32:
        below, above = _float32_neighbour(value, False), _float32_neighbour(value, True)
        even = struct.unpack(">I", _pack_f(value))[0] % 2 == 0
        top = Fraction(2**128)  # where the float after Float.MAX_VALUE would be
    else:
        below, above = math.nextafter(value, 0.0), math.nextafter(value, math.inf)
        even = struct.unpack(">Q", struct.pack(">d", value))[0] % 2 == 0
        top = Fraction(2**1024)
    exact = Fraction(value)
    above_exact = top if math.isinf(above) else Fraction(above)
    return (exact + Fraction(below)) / 2, (exact + above_exact) / 2, even


def _java_decimal(value: float, is_float32: bool) -> tuple[str, int]:
    """The decimal JDK 19+ ``Float/Double.toString`` prints for a positive finite ``value``: its
    digits ``d1…dn`` and the exponent ``e`` with the decimal = 0.d1…dn × 10^e.

    The javadoc's rule: of the decimals that round to ``value``, take those of the minimal length
    m (of length 1 or 2 when m = 1) and of these the closest to ``value``, the even one on a tie.
    """
    if not is_float32:
        # repr is the shortest round-tripping decimal, and the closest such. When it has one
        # digit a two-digit decimal can be closer, but only where doubles are sparser than
        # two-digit decimals: among the subnormals (Double.MIN_VALUE is 4.9E-324, not 5.0E-324).
        _, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
        assert isinstance(exponent, int)
        digits = "".join(map(str, digit_tuple)).rstrip("0")
        if len(digits) > 1 or value >= 2.2250738585072014e-308:
            return digits, exponent + len(digit_tuple)
    # Exactly, by the rule: for floats the closest decimal of a length may round to a neighbour
    # while another of that length does not (below a power of two the interval is half as wide),
    # and decimal -> double -> float rounds twice.
    low, high, closed = _rounding_interval(value, is_float32)
    exact = Fraction(value)
    decade = math.floor(math.log10(value))
    if Fraction(10) ** decade > exact:
        decade -= 1
    elif Fraction(10) ** (decade + 1) <= exact:
        decade += 1

    def rounding_to_value(length: int) -> list[Fraction]:
        # Of the decimals with `length` significant digits, the two around `value` are the
        # closest on each side; if neither rounds to `value`, none of that length does.
        step = Fraction(10) ** (decade + 1 - length)
        floor = exact // step
        candidates = {floor * step, (floor + 1) * step}
        return [d for d in candidates if low < d < high or (closed and d in (low, high))]

    length = 1
    while not (found := rounding_to_value(length)):
        length += 1
    if length == 1:
        length, found = 2, rounding_to_value(2)
    step = Fraction(10) ** (decade + 1 - length)
    chosen = min(found, key=lambda d: (abs(d - exact), (d / step) % 2))
    significand = int(chosen / step)
    digits = str(significand).rstrip("0")
    return digits, decade + 1 + (len(str(significand)) - length)


def _java_floating_string(value: float, is_float32: bool) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, point = _java_decimal(abs(value), is_float32)
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    fraction = digits[1:] or "0"
    return f"{sign}{digits[0]}.{fraction}E{point - 1}"


def to_java_string(value: object) -> str:
    """The string Java's ``String.valueOf`` gives for a typed value (``Float(1e-5)`` → ``'1.0E-5'``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, Float):
        return _java_floating_string(float(value), is_float32=True)
    if isinstance(value, float):
        return _java_floating_string(value, is_float32=False)
    if isinstance(value, str):
        return str(value)
    raise TypeError(f"{type(value).__name__} {value!r} has no Java string form")


# ---------------------------------------------------------------------------------------------
# From String: Boolean.valueOf, Byte/Short/Integer/Long.valueOf, Float/Double.valueOf

# Character.digit(c, 10) accepts every Unicode decimal digit (category Nd), as does \d here, but
# Java sees a digit outside the BMP as two surrogate chars, which are not digits.
_INTEGER_TEXT = re.compile(r"[+-]?\d+")


def _parse_integer(text: object, java_name: str, bounds: tuple[int, int]) -> int:
    if text is None:
        raise ValueError(f"cannot read null as a Java {java_name} (NumberFormatException: null)")
    if (
        not isinstance(text, str)
        or not _INTEGER_TEXT.fullmatch(text)
        or (not text.isascii() and max(text) > "\uffff")
    ):
        raise ValueError(f"{text!r} is not a valid Java {java_name} (NumberFormatException)")
    sign = text[0] if text[0] in "+-" else ""
    digits = text[len(sign) :]
    if not digits.isascii():
        digits = "".join(str(unicodedata.decimal(digit)) for digit in digits)
    # Leading zeros are free in Java; Python's int() counts them against its 4300-digit limit.
    digits = digits.lstrip("0") or "0"
    if len(digits) > 20 or not bounds[0] <= (value := int(sign + digits)) <= bounds[1]:
        raise ValueError(
            f"{text[:40]!r} is out of range for a Java {java_name} ({bounds[0]}..{bounds[1]})"
        )
    return value


def parse_byte(text: str | None) -> Byte:
    """``Byte.valueOf(text)``: optional sign and decimal digits only, in -128..127."""
    return Byte(_parse_integer(text, "byte", BYTE_RANGE))


def parse_short(text: str | None) -> Short:
    """``Short.valueOf(text)``."""
    return Short(_parse_integer(text, "short", SHORT_RANGE))


def parse_int(text: str | None) -> Int:
    """``Integer.valueOf(text)``."""
    return Int(_parse_integer(text, "int", INT_RANGE))


def parse_long(text: str | None) -> Long:
    """``Long.valueOf(text)`` (no ``L`` suffix: that is literal syntax, not valueOf syntax)."""
    return Long(_parse_integer(text, "long", LONG_RANGE))


def parse_boolean(text: str | None) -> bool:
    """``Boolean.valueOf(text)``: true iff ``text`` is ``"true"`` ignoring case; null is false."""
    return text is not None and len(text) == 4 and text.lower() == "true"


# Java's FloatingDecimal grammar: ASCII digits only, optional type suffix, hex floats need 'p'.
# The lookaheads ask for a digit before or after the point.
_FLOATING_TEXT = re.compile(
    r"(?P<sign>[+-]?)(?:(?P<special>NaN|Infinity)"
    r"|(?P<number>(?=\.?[0-9])(?P<whole>[0-9]*)(?:\.(?P<fraction>[0-9]*))?"
    r"(?:[eE](?P<exponent>[+-]?[0-9]+))?)[fFdD]?"
    r"|(?P<hex>0[xX](?=\.?[0-9a-fA-F])(?P<hex_whole>[0-9a-fA-F]*)(?:\.(?P<hex_fraction>[0-9a-fA-F]*))?"
    r"[pP](?P<hex_exponent>[+-]?[0-9]+))[fFdD]?)",
    re.ASCII,
)


def _java_trim(text: str) -> str:
    # String.trim() removes every char <= U+0020 from both ends, not Python's whitespace set.
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _floating_match(text: object, java_name: str) -> re.Match[str]:
    if text is None:
        raise ValueError(f"cannot read null as a Java {java_name} (NullPointerException)")
    match = _FLOATING_TEXT.fullmatch(_java_trim(text)) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{text!r:.60} is not a valid Java {java_name} (NumberFormatException)")
    return match


def _nearest_double(match: re.Match[str]) -> float:
    """The double nearest to the matched text. Python's ``float()`` and ``float.fromhex`` round
    correctly and in time for any exponent (``1e-99999999`` is 0.0 at once)."""
    if match["special"] is not None:
        value = math.nan if match["special"] == "NaN" else math.inf
    elif match["number"] is not None:
        value = float(match["number"])
    else:
        try:
            value = float.fromhex(match["hex"])
        except OverflowError:
            value = math.inf
    return -value if match["sign"] == "-" else value


def _exact_magnitude(match: re.Match[str]) -> Fraction:
    """The exact value of the matched number (sign dropped), kept to 200 significant digits plus
    a sticky digit: more cannot change how it compares with a float midpoint (≤ 115 digits). Only
    asked for numbers whose nearest double is in float range, so the exponent is small."""
    if match["number"] is not None:
        whole, fraction = match["whole"], match["fraction"] or ""
        digits = (whole + fraction).lstrip("0")
        exponent = int(match["exponent"] or 0) - len(fraction)
        if len(digits) > 200:
            sticky = "1" if digits[200:].strip("0") else "0"
            exponent += len(digits) - 201
            digits = digits[:200] + sticky
        return Fraction(int(digits or "0")) * Fraction(10) ** exponent
    whole, fraction = match["hex_whole"], match["hex_fraction"] or ""
    exponent = int(match["hex_exponent"]) - 4 * len(fraction)
    return Fraction(int(whole + fraction, 16)) * Fraction(2) ** exponent


def parse_double(text: str | None) -> Double:
    """``Double.valueOf(text)``: trims, accepts ``1e3``, ``1.5d``, ``NaN``, ``Infinity``, hex."""
    return Double(_nearest_double(_floating_match(text, "double")))


def parse_float(text: str | None) -> Float:
    """``Float.valueOf(text)``, rounded once from the exact value to the nearest float."""
    match = _floating_match(text, "float")
    nearest = _nearest_double(match)
    magnitude = abs(nearest)
    if math.isnan(nearest) or math.isinf(nearest) or magnitude == 0.0:
        return Float(nearest)
    rounded = round_to_float32(magnitude)  # ties to even; Infinity past Float.MAX_VALUE
    if rounded != magnitude:
        # Text -> double -> float can differ from text -> float only when the double lands
        # exactly halfway between two floats; then the exact value settles the tie.
        if rounded < magnitude:
            low, high = rounded, _float32_neighbour(rounded, True)
        else:
            low, high = _float32_neighbour(rounded, False), rounded
        high_exact = Fraction(2**128) if math.isinf(high) else Fraction(high)
        midpoint = (Fraction(low) + high_exact) / 2
        if Fraction(magnitude) == midpoint:
            exact = _exact_magnitude(match)
            if exact != midpoint:
                rounded = high if exact > midpoint else low
    return Float(math.copysign(rounded, nearest))


# ---------------------------------------------------------------------------------------------
# Identifiers: Character.isJavaLetter / isJavaLetterOrDigit, and the selector's reserved words

# isJavaIdentifierStart: letters, letter numbers, currency symbols, connecting punctuation.
_JAVA_LETTER_CATEGORIES: Final = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"})
# isJavaIdentifierPart adds digits, combining marks, and the "ignorable" format controls.
_JAVA_PART_CATEGORIES: Final = _JAVA_LETTER_CATEGORIES | {"Nd", "Mn", "Mc", "Cf"}

SELECTOR_RESERVED_WORDS: Final = frozenset(
    {"NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE"}
)


def is_java_letter(char: str) -> bool:
    """``Character.isJavaLetter(char)`` (= ``isJavaIdentifierStart``) for one character."""
    return unicodedata.category(char) in _JAVA_LETTER_CATEGORIES


def is_java_letter_or_digit(char: str) -> bool:
    """``Character.isJavaLetterOrDigit(char)`` (= ``isJavaIdentifierPart``) for one character."""
    code = ord(char)
    # Identifier-ignorable ISO controls: U+0000–U+0008, U+000E–U+001B, U+007F–U+009F.
    if code <= 0x08 or 0x0E <= code <= 0x1B or 0x7F <= code <= 0x9F:
        return True
    return unicodedata.category(char) in _JAVA_PART_CATEGORIES


_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def is_selector_identifier(name: object) -> bool:
    """True if ``name`` is a message selector identifier, hence a valid property name."""
    if not isinstance(name, str) or name == "" or name.upper() in SELECTOR_RESERVED_WORDS:
        return False
    if name.isascii() and _ASCII_IDENTIFIER.fullmatch(name):
        return True
    return is_java_letter(name[0]) and all(map(is_java_letter_or_digit, name[1:]))


#: The type names ``parse_property_assignment`` takes, for help texts.
PROPERTY_TYPE_NAMES: Final = "boolean, byte, short, int, long, float, double or string"
_PROPERTY_PARSERS: Final = {
    "byte": parse_byte,
    "short": parse_short,
    "int": parse_int,
    "long": parse_long,
    "float": parse_float,
    "double": parse_double,
    "string": str,
}


def parse_property_assignment(option: str) -> tuple[str, object]:
    """``name=type:value`` (type: boolean byte short int long float double string) or
    ``name=value`` for a String, as ``jms send --property`` and the web console take a property:
    its name and typed value. A ``word:`` prefix that is no type is a mistake
    (``weight=integer:3``), not a String (but ``scheme://...`` is a String, a URL):
    ``name=string:text`` gives such text. ``ValueError``
    says which part of ``option`` is wrong."""
    name, equals, spec = option.partition("=")
    if not equals or not name:
        raise ValueError(f"{option!r} is not name=type:value (e.g. weight=int:3000)")
    kind, colon, raw = spec.partition(":")
    if not colon or not kind.isalpha() or raw.startswith("//"):  # a URL is a String
        return name, spec
    if kind == "boolean":
        if raw.lower() not in ("true", "false"):
            raise ValueError(f"{option!r}: a boolean is true or false")
        return name, raw.lower() == "true"
    if kind not in _PROPERTY_PARSERS:
        raise ValueError(
            f"{option!r}: unknown type {kind!r}; the types are {PROPERTY_TYPE_NAMES} (for a "
            f"String with a colon write {name}=string:{spec})"
        )
    try:
        return name, _PROPERTY_PARSERS[kind](raw)
    except ValueError as error:
        raise ValueError(f"{option!r}: {error}") from None
