"""The JMS conversion tables: which Java type may be read as which, and how.

Two tables exist in the spec. Properties use the Message table (eight types). Map and Stream
bodies use the larger Stream table, which adds ``char`` and ``byte[]``. Both agree on the common
rows: widening of integers, float to double, anything to String by ``String.valueOf``, and String
to a primitive by that primitive's ``valueOf`` (Python's ``ValueError`` standing for Java's
NumberFormatException). A conversion the table does not mark raises ``MessageFormatException``.
Null follows Java's ``valueOf(null)``: false as boolean, ``ValueError`` as a number, ``TypeError``
(NullPointerException) as char, null as String / byte[] / object. Pure functions, no state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from jms.errors import MessageFormatException
from jms.types import (
    Byte,
    Char,
    Double,
    Float,
    Int,
    Long,
    Short,
    a_java_type,
    parse_boolean,
    parse_byte,
    parse_double,
    parse_float,
    parse_int,
    parse_long,
    parse_short,
    to_java_string,
)

__all__ = ["BODY_TABLE", "PROPERTY_TABLE", "convert", "typed_value"]

# Reading targets are named by their Java type name.
_READABLE_AS: Final[dict[type, frozenset[str]]] = {
    bool: frozenset({"boolean", "String"}),
    Byte: frozenset({"byte", "short", "int", "long", "String"}),
    Short: frozenset({"short", "int", "long", "String"}),
    Char: frozenset({"char", "String"}),
    Int: frozenset({"int", "long", "String"}),
    Long: frozenset({"long", "String"}),
    Float: frozenset({"float", "double", "String"}),
    Double: frozenset({"double", "String"}),
    str: frozenset({"String", "boolean", "byte", "short", "int", "long", "float", "double"}),
    bytes: frozenset({"byte[]"}),
}

PROPERTY_TABLE: Final = {t: r for t, r in _READABLE_AS.items() if t not in (Char, bytes)}
BODY_TABLE: Final = _READABLE_AS

_FROM_STRING: Final[dict[str, Callable[[str | None], object]]] = {
    "boolean": parse_boolean,
    "byte": parse_byte,
    "short": parse_short,
    "int": parse_int,
    "long": parse_long,
    "float": parse_float,
    "double": parse_double,
}

_WIDEN: Final[dict[str, type]] = {
    "byte": Byte,
    "short": Short,
    "int": Int,
    "long": Long,
    "float": Float,
    "double": Double,
}


def _shown(value: object) -> str:
    """A value as a message shows it: text quoted, a byte array by its length, others in their
    Java form (``3``, ``0.1``, ``true``)."""
    if isinstance(value, str):
        return repr(str(value))
    if isinstance(value, bytes | bytearray):
        return f"{len(value)} bytes"
    return to_java_string(value)


def convert(value: object, target: str, what: str) -> object:
    """Read ``value`` (a typed value or None) as the Java type ``target``.

    ``what`` names the value for error messages, e.g. ``"property 'weight'"``.
    """
    if value is None:
        if target == "boolean":
            return False
        if target in ("String", "byte[]"):
            return None
        if target == "char":
            raise TypeError(f"{what} is null and cannot be read as a char (NullPointerException)")
        raise ValueError(f"{what} is null and cannot be read as a {target} (NumberFormatException)")
    kind = type(value)
    if target not in _READABLE_AS[kind]:
        raise MessageFormatException(
            f"{what} holds {a_java_type(value)} ({_shown(value)}), which cannot be read as a "
            f"{target}"
        )
    if target == "String":
        return to_java_string(value)
    if kind is str:
        try:
            return _FROM_STRING[target](value)  # type: ignore[arg-type]
        except ValueError as error:
            raise ValueError(f"{what}: {error}") from None
    if target in ("boolean", "char", "byte[]"):
        return value
    return _WIDEN[target](value)


def typed_value(value: object, what: str, *, allow_body_types: bool) -> object:
    """The typed form of a Python value per API.md's mapping, for set_object/write_object.

    ``bool``→boolean, ``int``→int if it fits 32 bits else long, ``float``→double, ``str``→String,
    a ``jms.types`` value→its type; bodies also take ``bytes``/``bytearray``→byte[] (copied),
    ``Char``, and ``None``. Anything else is a ``MessageFormatException``.
    """
    kind = type(value)
    if kind in (bool, str, Byte, Short, Int, Long, Float, Double):
        return value
    if kind is int:
        if -(2**31) <= value < 2**31:  # type: ignore[operator]
            return Int(value)
        if -(2**63) <= value < 2**63:  # type: ignore[operator]
            return Long(value)
        raise MessageFormatException(f"{what}: {value} does not fit a Java long (64 bits)")
    if kind is float:
        return Double(value)  # type: ignore[arg-type]
    if allow_body_types:
        if value is None or kind is Char:
            return value
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
    allowed = (
        "bool, int, float, str, bytes, None or a jms.types value"
        if allow_body_types
        else "bool, int, float, str or a jms.types number (not None, bytes or Char)"
    )
    raise MessageFormatException(
        f"{what}: a {kind.__name__} ({value!r:.80}) is not a JMS value; expected {allowed}"
    )
