"""The selector syntax tree: the one definition of what a parsed message selector means.

Every back end reads these nodes and nothing else: ``jms.selector`` compiles them to a Python
predicate, ``jms.spark`` to a ``pyspark.sql.Column``, and the tests interpret them directly. So the
meaning of each node is written here, in its docstring, once; back ends must not reinterpret it.
Nodes are small frozen dataclasses that the parser builds already checked (a literal carries its
Java type, an identifier knows whether it names a header or a property, a LIKE pattern is split
into its wildcards). This module holds data and pure functions over it; it must never evaluate a
selector against a message, parse text, or do I/O.

Evaluation is SQL three-valued: a condition is TRUE, FALSE or UNKNOWN (a missing property or null
header, the "NULL" of the spec), and a message matches only when the whole selector is TRUE.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from jms.types import Double, Float, Int, Long, is_selector_identifier

__all__ = [
    "HEADER_TYPES",
    "JAVA_LITERAL_TYPES",
    "NULLABLE_HEADERS",
    "And",
    "Arithmetic",
    "ArithmeticOperator",
    "Between",
    "Comparison",
    "ComparisonOperator",
    "Expression",
    "Identifier",
    "IdentifierKind",
    "In",
    "IsNull",
    "JavaValue",
    "Like",
    "LikeWildcard",
    "Literal",
    "Not",
    "Or",
    "Unary",
    "UnaryOperator",
    "children",
    "describe",
    "like_parts",
    "to_text",
]

#: A literal's value; its Python type is its Java type (``Int(5)`` is the int literal ``5``).
JavaValue: TypeAlias = bool | str | Int | Long | Float | Double

#: The Java types a literal can have: boolean, String, int, long, float (``1.5F``), double.
JAVA_LITERAL_TYPES: Final = frozenset({bool, str, Int, Long, Float, Double})

#: The only header fields a selector can read, with the Java type each has in a selector.
#: ``JMSDeliveryMode`` reads as the String ``'PERSISTENT'`` or ``'NON_PERSISTENT'``. Every other
#: name, ``JMSX*``, ``JMS_*``, ``JMSExpiration`` or ``JMSRedelivered`` included, is a property.
HEADER_TYPES: Final[dict[str, type]] = {
    "JMSDeliveryMode": str,
    "JMSPriority": Int,
    "JMSMessageID": str,
    "JMSTimestamp": Long,
    "JMSCorrelationID": str,
    "JMSType": str,
}

#: Header fields that may be null (UNKNOWN in a selector); the other three always have a value.
NULLABLE_HEADERS: Final = frozenset({"JMSMessageID", "JMSCorrelationID", "JMSType"})


class IdentifierKind(enum.Enum):
    HEADER = "header"
    PROPERTY = "property"


class UnaryOperator(enum.Enum):
    PLUS = "+"
    MINUS = "-"


class ArithmeticOperator(enum.Enum):
    ADD = "+"
    SUBTRACT = "-"
    MULTIPLY = "*"
    DIVIDE = "/"


class ComparisonOperator(enum.Enum):
    EQUAL = "="
    NOT_EQUAL = "<>"
    LESS = "<"
    LESS_EQUAL = "<="
    GREATER = ">"
    GREATER_EQUAL = ">="

    @property
    def is_ordering(self) -> bool:
        """True for ``< <= > >=``, which strings and booleans do not support."""
        return self not in (ComparisonOperator.EQUAL, ComparisonOperator.NOT_EQUAL)

    @property
    def mirrored(self) -> ComparisonOperator:
        """The operator with its operands swapped: ``a < b`` is ``b > a``."""
        return _MIRRORED[self]


_MIRRORED: Final = {
    ComparisonOperator.EQUAL: ComparisonOperator.EQUAL,
    ComparisonOperator.NOT_EQUAL: ComparisonOperator.NOT_EQUAL,
    ComparisonOperator.LESS: ComparisonOperator.GREATER,
    ComparisonOperator.LESS_EQUAL: ComparisonOperator.GREATER_EQUAL,
    ComparisonOperator.GREATER: ComparisonOperator.LESS,
    ComparisonOperator.GREATER_EQUAL: ComparisonOperator.LESS_EQUAL,
}


class LikeWildcard(enum.Enum):
    """The two wildcards of a LIKE pattern (after ESCAPE has been applied)."""

    ANY_CHAR = "_"  # exactly one character (one Unicode code point)
    ANY_RUN = "%"  # any run of characters, the empty run and line breaks included


# --- value nodes ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant. ``type(value)`` is its Java type, one of ``JAVA_LITERAL_TYPES``.

    An exact literal without suffix is ``Int`` when it fits 32 bits, else ``Long``; with ``L`` it is
    ``Long``. An approximate literal is ``Double`` (``Float`` with an ``F`` suffix). A sign written
    directly before a numeric literal is part of it (``-5`` is ``Literal(Int(-5))``), which is how
    ``-9223372036854775808L`` can be written at all. Numeric literals are finite.
    """

    value: JavaValue

    def __post_init__(self) -> None:
        if type(self.value) not in JAVA_LITERAL_TYPES:
            raise TypeError(
                f"a literal's value must be bool, str, Int, Long, Float or Double; "
                f"got {type(self.value).__name__} {self.value!r}"
            )
        if isinstance(self.value, float) and not math.isfinite(self.value):
            raise ValueError(f"numeric literals are finite; got {self.value!r}")

    @property
    def java_type(self) -> type:
        return type(self.value)


@dataclass(frozen=True, slots=True)
class Identifier:
    """A header field or property reference; names are case-sensitive.

    Its value is the header's (see ``HEADER_TYPES``) when ``name`` is one of the six selectable
    header fields, else the property's value with the Java type it was set with; an absent property
    or a null header is NULL. No conversion applies: a String property ``'2'`` is not a number.
    """

    name: str

    def __post_init__(self) -> None:
        if not is_selector_identifier(self.name):
            raise ValueError(f"{self.name!r} is not a selector identifier")

    @property
    def kind(self) -> IdentifierKind:
        return IdentifierKind.HEADER if self.name in HEADER_TYPES else IdentifierKind.PROPERTY

    @property
    def header_type(self) -> type | None:
        """The Java type of the header this names, or None for a property."""
        return HEADER_TYPES.get(self.name)


@dataclass(frozen=True, slots=True)
class Unary:
    """``+x`` or ``-x`` by Java unary numeric promotion (byte/short become int; ``-`` wraps
    ``Integer.MIN_VALUE`` to itself). NULL gives NULL; a non-number is a type error (see
    ``Comparison``)."""

    operator: UnaryOperator
    operand: Expression


@dataclass(frozen=True, slots=True)
class Arithmetic:
    """``left op right`` by Java binary numeric promotion.

    Both operands become the wider of int, long, float, double (byte and short count as int).
    int and long results wrap around at 32 and 64 bits; float results are rounded to 32 bits;
    integer division truncates toward zero and ``MIN_VALUE / -1`` wraps. Integer division by zero
    is NULL (Java would throw); floating division by zero gives ±Infinity or NaN as in Java.
    If either operand is NULL the result is NULL. If either is a String or boolean the result is
    a *type error*: not NULL, but every comparison of it is FALSE (the spec: a String "cannot be
    used in an arithmetic expression", so ``NumberOfOrders > 1`` is false).
    """

    operator: ArithmeticOperator
    left: Expression
    right: Expression


# --- condition nodes --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Comparison:
    """``left op right``: UNKNOWN if either side is NULL, else TRUE or FALSE.

    Two numbers compare after Java binary numeric promotion (an int or long compared with a float
    is first rounded to float, a long compared with a double to double). Two Strings or two
    booleans compare only by ``=`` and ``<>`` (any other operator is FALSE). Values of unlike types
    (a String and a number, a boolean and a String, a type error and anything) are FALSE for every
    operator, ``<>`` included. NaN is unequal to everything, itself included, as in Java.
    Either side may be a parenthesised condition, whose TRUE/FALSE is a boolean and UNKNOWN NULL.
    """

    operator: ComparisonOperator
    left: Expression
    right: Expression


@dataclass(frozen=True, slots=True)
class Between:
    """``operand [NOT] BETWEEN low AND high``.

    Exactly as the spec defines it: ``operand >= low AND operand <= high``, and when ``negated``,
    ``operand < low OR operand > high`` (not the NOT of the former: a String or NaN operand makes
    both forms FALSE). Each comparison follows ``Comparison``; AND and OR follow the spec's tables.
    """

    operand: Expression
    low: Expression
    high: Expression
    negated: bool = False


@dataclass(frozen=True, slots=True)
class In:
    """``identifier [NOT] IN ('a', 'b', ...)``.

    UNKNOWN if the identifier is NULL; else TRUE when it is a String equal to one of ``values``.
    A non-String value is FALSE (each ``=`` of unlike types is). ``negated`` is exactly NOT of
    that, as the spec's equivalence ``NOT ((c = 'a') OR (c = 'b'))`` says. ``values`` are
    non-empty and in source order.
    """

    identifier: Identifier
    values: tuple[str, ...]
    negated: bool = False

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("an IN list needs at least one string literal")
        if not all(type(value) is str for value in self.values):
            raise TypeError(f"IN lists hold strings only; got {self.values!r}")


@dataclass(frozen=True, slots=True)
class Like:
    """``identifier [NOT] LIKE 'pattern' [ESCAPE 'c']``.

    UNKNOWN if the identifier is NULL; else TRUE when it is a String that the whole pattern
    matches: ``_`` is one character, ``%`` any run (empty, or spanning line breaks), every other
    character itself. A non-String value is FALSE. ``negated`` is exactly NOT of that. ``parts``
    is the pattern with ESCAPE applied: literal text and ``LikeWildcard`` items, in order.
    """

    identifier: Identifier
    pattern: str
    escape: str | None = None
    negated: bool = False
    parts: tuple[str | LikeWildcard, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", like_parts(self.pattern, self.escape))


@dataclass(frozen=True, slots=True)
class IsNull:
    """``identifier IS [NOT] NULL``: always TRUE or FALSE, never UNKNOWN."""

    identifier: Identifier
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Not:
    """``NOT operand``: TRUE↔FALSE, UNKNOWN stays UNKNOWN.

    A bare operand that is not a boolean (an identifier holding a number or a String) counts as
    FALSE, so ``NOT`` of it is TRUE; a NULL one is UNKNOWN. The same holds for ``And``/``Or``
    operands and for a selector that is a lone identifier.
    """

    operand: Expression


@dataclass(frozen=True, slots=True)
class And:
    """``a AND b AND ...``: FALSE if any operand is FALSE, else UNKNOWN if any is, else TRUE."""

    operands: tuple[Expression, ...]

    def __post_init__(self) -> None:
        if len(self.operands) < 2:
            raise ValueError("AND needs at least two operands")


@dataclass(frozen=True, slots=True)
class Or:
    """``a OR b OR ...``: TRUE if any operand is TRUE, else UNKNOWN if any is, else FALSE."""

    operands: tuple[Expression, ...]

    def __post_init__(self) -> None:
        if len(self.operands) < 2:
            raise ValueError("OR needs at least two operands")


Expression: TypeAlias = (
    Literal
    | Identifier
    | Unary
    | Arithmetic
    | Comparison
    | Between
    | In
    | Like
    | IsNull
    | Not
    | And
    | Or
)


# --- pure functions over the tree -------------------------------------------------------------


def like_parts(pattern: str, escape: str | None) -> tuple[str | LikeWildcard, ...]:
    """Split a LIKE pattern into literal text and wildcards, applying the escape character.

    As in SQL-92, the escape character may precede only ``_``, ``%`` or itself; anything else
    after it, or nothing, is an error (``ValueError``), and so is an escape that is not exactly one
    character. Adjacent ``%`` collapse into one, since they match the same strings.
    """
    if escape is not None and len(escape) != 1:
        raise ValueError(f"the ESCAPE character must be exactly one character, got {escape!r}")
    parts: list[str | LikeWildcard] = []
    text: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == escape:
            if index + 1 == len(pattern):
                raise ValueError(f"the LIKE pattern {pattern!r} ends with its escape character")
            escaped = pattern[index + 1]
            if escaped not in ("_", "%", escape):
                raise ValueError(
                    f"in the LIKE pattern {pattern!r} the escape character {escape!r} is followed "
                    f"by {escaped!r}; it may only precede '_', '%' or itself"
                )
            text.append(escaped)
            index += 2
            continue
        if char in "_%":
            if text:
                parts.append("".join(text))
                text = []
            wildcard = LikeWildcard(char)
            if not (wildcard is LikeWildcard.ANY_RUN and parts and parts[-1] is wildcard):
                parts.append(wildcard)
        else:
            text.append(char)
        index += 1
    if text:
        parts.append("".join(text))
    return tuple(parts)


def children(node: Expression) -> tuple[Expression, ...]:
    """The direct sub-expressions of ``node``, left to right."""
    match node:
        case Unary(operand=operand) | Not(operand=operand):
            return (operand,)
        case Arithmetic(left=left, right=right) | Comparison(left=left, right=right):
            return (left, right)
        case Between(operand=operand, low=low, high=high):
            return (operand, low, high)
        case (
            In(identifier=identifier) | Like(identifier=identifier) | IsNull(identifier=identifier)
        ):
            return (identifier,)
        case And(operands=operands) | Or(operands=operands):
            return operands
    return ()


def _literal_text(value: JavaValue) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, Long):
        return f"{int(value)}L"
    if isinstance(value, int):
        return str(int(value))
    # repr is the shortest text that reads back as the same double; Java's syntax accepts it.
    text = repr(float(value))
    return text + "F" if isinstance(value, Float) else text


def describe(node: Expression) -> str:
    """A one-line label for ``node`` alone (its children are shown separately), for tree views."""
    match node:
        case Literal(value=value):
            return f"{_literal_text(value)}  ({_JAVA_NAMES[type(value)]})"
        case Identifier(name=name):
            header_type = node.header_type
            if header_type is None:
                return f"{name}  (property)"
            return f"{name}  (header, {_JAVA_NAMES[header_type]})"
        case Unary(operator=operator):
            return f"unary {operator.value}"
        case Arithmetic(operator=operator) | Comparison(operator=operator):
            return operator.value
        case Between(negated=negated):
            return "NOT BETWEEN" if negated else "BETWEEN"
        case In(values=values, negated=negated):
            listed = ", ".join(_literal_text(value) for value in values)
            return f"{'NOT IN' if negated else 'IN'} ({listed})"
        case Like(pattern=pattern, escape=escape, negated=negated):
            label = f"{'NOT LIKE' if negated else 'LIKE'} {_literal_text(pattern)}"
            return label if escape is None else f"{label} ESCAPE {_literal_text(escape)}"
        case IsNull(negated=negated):
            return "IS NOT NULL" if negated else "IS NULL"
        case Not():
            return "NOT"
        case And():
            return "AND"
        case Or():
            return "OR"
    raise TypeError(f"not a selector node: {node!r}")


_JAVA_NAMES: Final[dict[type, str]] = {
    bool: "boolean",
    str: "String",
    Int: "int",
    Long: "long",
    Float: "float",
    Double: "double",
}


def to_text(node: Expression) -> str:
    """Selector text for ``node`` that parses back to an equal tree.

    Every compound sub-expression is parenthesised, so the text shows the tree's grouping rather
    than relying on precedence; ``-(x)`` keeps a unary minus apart from a negative literal.
    """
    match node:
        case Literal(value=value):
            return _literal_text(value)
        case Identifier(name=name):
            return name
        case Unary(operator=operator, operand=operand):
            return f"{operator.value}({to_text(operand)})"
        case (
            Arithmetic(operator=operator, left=left, right=right)
            | Comparison(operator=operator, left=left, right=right)
        ):
            return f"({to_text(left)} {operator.value} {to_text(right)})"
        case Between(operand=operand, low=low, high=high, negated=negated):
            keyword = "NOT BETWEEN" if negated else "BETWEEN"
            return f"({to_text(operand)} {keyword} {to_text(low)} AND {to_text(high)})"
        case In(identifier=identifier, values=values, negated=negated):
            listed = ", ".join(_literal_text(value) for value in values)
            return f"({identifier.name} {'NOT IN' if negated else 'IN'} ({listed}))"
        case Like(identifier=identifier, pattern=pattern, escape=escape, negated=negated):
            text = f"{identifier.name} {'NOT LIKE' if negated else 'LIKE'} {_literal_text(pattern)}"
            return f"({text})" if escape is None else f"({text} ESCAPE {_literal_text(escape)})"
        case IsNull(identifier=identifier, negated=negated):
            return f"({identifier.name} {'IS NOT NULL' if negated else 'IS NULL'})"
        case Not(operand=operand):
            return f"(NOT {to_text(operand)})"
        case And(operands=operands):
            return "(" + " AND ".join(map(to_text, operands)) + ")"
        case Or(operands=operands):
            return "(" + " OR ".join(map(to_text, operands)) + ")"
    raise TypeError(f"not a selector node: {node!r}")
