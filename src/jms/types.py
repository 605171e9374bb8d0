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
    "LONG_RANGE",
    "SELECTOR_RESERVED_WORDS",
    "SHORT_RANGE",
    "Byte",
    "Char",
    "Double",
    "Float",
    "Int",
    "Long",
    "Short",
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
        as_double = float(value)
        rounded = round_to_float32(as_double)
        if math.isinf(rounded) and not math.isinf(as_double):
            raise ValueError(f"{value!r} is out of range for a Java float (±3.4028235E38)")
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
        return super().__new__(cls, float(value))

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


_TYPE_NAMES: Final[dict[type, str]] = {
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
    name = _TYPE_NAMES.get(type(value))
    if name is None:
        raise TypeError(f"{type(value).__name__} {value!r} is not a Java-typed value")
    return name


# ---------------------------------------------------------------------------------------------
# To String: Boolean.toString, Integer.toString, Float.toString, Double.toString


def _shortest_digits(value: float, significant_max: int, is_float32: bool) -> tuple[str, int]:
    """Shortest decimal digits ``d1d2…dn`` and exponent ``e`` with value ≈ 0.d1…dn × 10^e that read
    back as the same double (or float32)."""
    if not is_float32:
        # repr is the shortest round-tripping form for a double (and the closest such).
        _, digits, exponent = Decimal(repr(value)).as_tuple()
        text = "".join(map(str, digits)).rstrip("0") or "0"
        assert isinstance(exponent, int)
        return text, exponent + len(digits)
    for precision in range(1, significant_max + 1):
        candidate = f"{value:.{precision - 1}e}"
        if round_to_float32(float(candidate)) == value:
            mantissa, exp = candidate.split("e")
            text = mantissa.replace(".", "").replace("-", "").rstrip("0") or "0"
            return text, int(exp) + 1
    raise AssertionError(f"no round-tripping decimal form for float {value!r}")


def _java_floating_string(value: float, is_float32: bool) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, point = _shortest_digits(abs(value), 9 if is_float32 else 17, is_float32)
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

# Character.digit(c, 10) accepts every Unicode decimal digit (category Nd), as does \d here.
_INTEGER_TEXT = re.compile(r"[+-]?\d+")


def _parse_integer(text: object, java_name: str, bounds: tuple[int, int]) -> int:
    if text is None:
        raise ValueError(f"cannot read null as a Java {java_name} (NumberFormatException: null)")
    if not isinstance(text, str) or not _INTEGER_TEXT.fullmatch(text):
        raise ValueError(f"{text!r} is not a valid Java {java_name} (NumberFormatException)")
    value = int(text)
    if not bounds[0] <= value <= bounds[1]:
        raise ValueError(
            f"{text!r} is out of range for a Java {java_name} ({bounds[0]}..{bounds[1]})"
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
_DECIMAL_FLOAT_TEXT = re.compile(
    r"(?P<sign>[+-]?)(?:(?P<special>NaN|Infinity)"
    r"|(?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?"
    r"|(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)",
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


def _parse_floating(text: object, java_name: str) -> tuple[float, Fraction | None]:
    """The nearest double to ``text``, and its exact rational value when it was decimal."""
    if text is None:
        raise ValueError(f"cannot read null as a Java {java_name} (NullPointerException)")
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a valid Java {java_name} (NumberFormatException)")
    match = _DECIMAL_FLOAT_TEXT.fullmatch(_java_trim(text))
    if match is None:
        raise ValueError(f"{text!r} is not a valid Java {java_name} (NumberFormatException)")
    negative = match["sign"] == "-"
    if match["special"] == "NaN":
        return math.nan, None
    if match["special"] == "Infinity":
        return (-math.inf if negative else math.inf), None
    if match["hex"] is not None:
        value = float.fromhex(match["hex"])
        return (-value if negative else value), Fraction(value)
    exact = Fraction(Decimal(match["number"]))
    value = float(Decimal(match["number"]))
    if negative:
        return -value, -exact
    return value, exact


def parse_double(text: str | None) -> Double:
    """``Double.valueOf(text)``: trims, accepts ``1e3``, ``1.5d``, ``NaN``, ``Infinity``, hex."""
    return Double(_parse_floating(text, "double")[0])


def parse_float(text: str | None) -> Float:
    """``Float.valueOf(text)``, rounded once from the exact decimal value to the nearest float."""
    nearest_double, exact = _parse_floating(text, "float")
    rounded = round_to_float32(nearest_double)
    if exact is not None and not math.isinf(rounded) and rounded != nearest_double:
        # Rounding decimal→double→float can differ from decimal→float only when the double lands
        # exactly halfway between two floats; settle such ties against the exact value.
        low, high = sorted((rounded, _next_float32_towards(rounded, nearest_double)))
        midpoint = (Fraction(low) + Fraction(high)) / 2
        if Fraction(nearest_double) == midpoint and exact != midpoint:
            rounded = high if exact > midpoint else low
    if math.isinf(rounded) and not math.isinf(nearest_double):
        return Float(math.copysign(math.inf, nearest_double))
    return Float(rounded)


def _next_float32_towards(value: float, target: float) -> float:
    bits = struct.unpack(">i", _pack_f(value))[0]
    # Stepping the bit pattern by one moves to the adjacent float, away from or towards zero.
    step = 1 if (target > value) == (value >= 0) else -1
    if value == 0.0:
        return math.copysign(1.401298464324817e-45, target)
    return _unpack_f(struct.pack(">i", bits + step))[0]


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
