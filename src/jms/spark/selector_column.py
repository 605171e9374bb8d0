"""``selector_to_column``: a JMS selector as one native Spark SQL ``Column`` that keeps exactly the
rows ``Selector(text).matches`` keeps, with the answer the same under every Spark session setting.
It translates the syntax tree ``jms.selector.parse`` builds (there is no second parser) and gives
each node the meaning ``jms.selector.ast`` writes down; it must never fall back to evaluating a
row in Python, and never lean on a Spark rule (casts, NaN order, overflow errors) where Java's
differs.
"""

# Theory of operation. A condition becomes a Spark boolean whose NULL is the selector's UNKNOWN, so
# Spark's own AND/OR/NOT are already the spec's tables. A *value* is harder: a property's Java type
# is known only per row, and Spark would happily compare '2' > 1 by casting. So a value becomes a
# `_Typed`: a few *variants*, one per Java type it may have, each an expression that is non-null
# exactly on the rows where the value has that type ("self-guarding"), plus a test for NULL. A
# comparison is then `coalesce` of one term per pair of variants that Java can compare (unlike
# types contribute no term), ending in FALSE unless a side is NULL; because the terms guard
# themselves, a row pays only for the terms up to the one that applies: one map lookup for the
# common `weight > 2500`. Arithmetic pairs variants the same way, by binary numeric promotion.
#
# Variants refer to the same sub-expressions many times, so expressions are first built as `_Expr`
# nodes that a `_Builder` makes once each, and only then turned into Columns: each distinct node
# costs one call into the JVM, and Spark receives a tree that shares them. (Spark SQL text through
# `functions.expr` would be one call, but Spark's parser keeps a cache that grows without bound on
# large generated expressions.)
#
# Numbers: ints and longs are carried as Spark bigint, floats and doubles as double (a float is
# exact there). Int results wrap at 32 bits by masking a 64-bit result; long results wrap at 64
# bits through decimal(38,0), which holds any sum or product of two longs exactly; float results
# are rounded through a Spark float cast; integer division by zero is NULL; floating division by
# zero is IEEE (a * pow(b, -1)). NaN is unequal to everything, as in Java (Spark says NaN = NaN).
# Every expression built here is total -- it cannot raise for any input -- so the result never
# depends on spark.sql.ansi.enabled.

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import reduce
from typing import Any, Final

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

from jms.selector import parse
from jms.selector.ast import (
    HEADER_TYPES,
    And,
    Arithmetic,
    ArithmeticOperator,
    Between,
    Comparison,
    ComparisonOperator,
    Expression,
    Identifier,
    In,
    IsNull,
    JavaValue,
    Like,
    LikeWildcard,
    Literal,
    Not,
    Or,
    Unary,
    UnaryOperator,
)
from jms.types import Double, Float, Int, Long, round_to_float32

__all__ = ["MAX_EXPRESSION_SIZE", "selector_to_column"]

#: The most expression nodes a selector may become in Spark. Arithmetic on properties whose type
#: varies per message multiplies the cases at each level; beyond this Spark's planner would crawl.
MAX_EXPRESSION_SIZE: Final = 200_000


class _Kind(enum.IntEnum):
    """The Java types a selector value can have; numbers are ranked for binary promotion."""

    INT = 0  # byte and short too: promotion makes them ints before any operation
    LONG = 1
    FLOAT = 2
    DOUBLE = 3
    BOOLEAN = 10
    STRING = 11
    TYPE_ERROR = 12  # arithmetic on a String or boolean: not NULL, unequal to everything


_INTEGRAL: Final = frozenset({_Kind.INT, _Kind.LONG})
_FLOATING: Final = frozenset({_Kind.FLOAT, _Kind.DOUBLE})
_NUMERIC: Final = _INTEGRAL | _FLOATING


# --- expressions, built once each ---------------------------------------------------------------


class _Expr:
    """A Spark expression under construction. Only ``_Builder.make`` creates them, once for each
    distinct (operation, arguments), so identity is equality and sharing is free."""

    __slots__ = ("arguments", "operation", "size")

    def __init__(self, operation: str, arguments: tuple[Any, ...], size: int) -> None:
        self.operation = operation
        self.arguments = arguments
        self.size = size  # nodes in the tree Spark will see, shared nodes counted each time


class _Builder:
    """Makes ``_Expr`` nodes (each distinct one once) and turns a finished one into a Column."""

    def __init__(self) -> None:
        self._made: dict[tuple[Any, ...], _Expr] = {}

    def make(self, operation: str, *arguments: Any) -> _Expr:
        # Nodes are keyed by identity; constants by type and repr, so 0.0 and -0.0 differ.
        key = (
            operation,
            *(
                id(argument) if isinstance(argument, _Expr) else (type(argument), repr(argument))
                for argument in arguments
            ),
        )
        made = self._made.get(key)
        if made is None:
            size = 1 + sum(a.size for a in arguments if isinstance(a, _Expr))
            made = self._made[key] = _Expr(operation, arguments, size)
        return made

    # The operations; each is one Spark expression.
    def column(self, name: str) -> _Expr:
        return self.make("column", name)

    def constant(self, value: Any, spark_type: str | None = None) -> _Expr:
        return self.make("constant", value, spark_type)

    def long(self, value: int) -> _Expr:
        return self.constant(value, "bigint")

    def double(self, value: float) -> _Expr:
        return self.constant(float(value), "double")

    def cast(self, value: _Expr, spark_type: str) -> _Expr:
        return self.make("cast", value, spark_type)

    def compare(self, symbol: str, a: _Expr, b: _Expr) -> _Expr:
        return self.make(symbol, a, b)

    def all(self, *terms: _Expr) -> _Expr:
        return terms[0] if len(terms) == 1 else self.make("and", *terms)

    def any(self, *terms: _Expr) -> _Expr:
        return terms[0] if len(terms) == 1 else self.make("or", *terms)

    def negation(self, condition: _Expr) -> _Expr:
        return self.make("not", condition)

    def is_null(self, value: _Expr) -> _Expr:
        return self.make("is null", value)

    def is_not_null(self, value: _Expr) -> _Expr:
        return self.make("is not null", value)

    def when(self, condition: _Expr, value: _Expr, otherwise: _Expr | None = None) -> _Expr:
        """``value`` where ``condition`` is TRUE, else ``otherwise`` (NULL when not given)."""
        return self.make("when", condition, value, otherwise)

    def coalesce(self, *terms: _Expr) -> _Expr:
        return terms[0] if len(terms) == 1 else self.make("coalesce", *terms)

    def function(self, name: str, *arguments: _Expr) -> _Expr:
        return self.make("function", name, *arguments)

    def to_column(self, root: _Expr) -> Column:
        """The Column for ``root``: one JVM call per distinct node, shared subtrees shared."""
        columns: dict[int, Column] = {}
        pending = [root]
        while pending:
            node = pending[-1]
            if id(node) in columns:
                pending.pop()
                continue
            missing = [a for a in node.arguments if isinstance(a, _Expr) and id(a) not in columns]
            if missing:
                pending.extend(missing)
                continue
            pending.pop()
            arguments = [columns[id(a)] if isinstance(a, _Expr) else a for a in node.arguments]
            columns[id(node)] = _SPARK[node.operation](*arguments)
        return columns[id(root)]


def _constant_column(value: Any, spark_type: str | None) -> Column:
    column = F.lit(value)
    return column if spark_type is None else column.cast(spark_type)


def _when_column(condition: Column, value: Column, otherwise: Column | None) -> Column:
    chosen = F.when(condition, value)
    return chosen if otherwise is None else chosen.otherwise(otherwise)


_SPARK: Final[dict[str, Callable[..., Column]]] = {
    "column": lambda name: F.col("`" + name.replace("`", "``") + "`"),
    "constant": _constant_column,
    "cast": lambda value, spark_type: value.cast(spark_type),
    "item": lambda value, key: value.getItem(key),
    "field": lambda value, name: value.getField(name),
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "negative": lambda a: -a,
    "bitwise and": lambda a, b: a.bitwiseAND(b),
    "and": lambda *terms: reduce(lambda a, b: a & b, terms),
    "or": lambda *terms: reduce(lambda a, b: a | b, terms),
    "not": lambda a: ~a,
    "is null": lambda a: a.isNull(),
    "is not null": lambda a: a.isNotNull(),
    "when": _when_column,
    "coalesce": lambda *terms: F.coalesce(*terms),
    "function": lambda name, *arguments: F.call_function(name, *arguments),
    "in": lambda a, values: a.isin(list(values)),
    "like": lambda a, pattern: F.like(a, F.lit(pattern), F.lit("!")),
}


# --- typed values -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Variant:
    """Values of ``kinds`` in one expression, non-null exactly on rows holding such a value.

    Several kinds share a variant when one field holds them all (a property's ``long`` field
    holds ints and longs); ``parts`` then gives a self-guarding expression per kind, for
    operations that must tell them apart. Ints and longs are bigints, floats and doubles doubles.
    """

    kinds: frozenset[_Kind]
    value: _Expr
    parts: Mapping[_Kind, _Expr]

    @staticmethod
    def of(kind: _Kind, value: _Expr) -> _Variant:
        return _Variant(frozenset({kind}), value, {kind: value})

    @property
    def is_numeric(self) -> bool:
        return self.kinds <= _NUMERIC


@dataclass(frozen=True, slots=True)
class _Typed:
    """A selector value: at most one variant is non-null on a row, and none exactly when the value
    is NULL. ``is_null`` tests that directly (None: never NULL); ``literal`` is the constant when
    the value is one."""

    variants: tuple[_Variant, ...]
    is_null: _Expr | None
    literal: JavaValue | None = None


def _present(b: _Builder, typed: _Typed) -> _Expr | None:
    """TRUE where the value is not NULL, or None when it never is."""
    return None if typed.is_null is None else b.negation(typed.is_null)


def _false_unless(b: _Builder, present: list[_Expr | None]) -> _Expr:
    """FALSE where every ``present`` holds (None always does), NULL elsewhere."""
    known = [condition for condition in present if condition is not None]
    return b.when(b.all(*known), b.constant(False)) if known else b.constant(False)


# --- numbers ----------------------------------------------------------------------------------


def _wrap_int(b: _Builder, value: _Expr) -> _Expr:
    """A bigint holding an exact int result, wrapped to 32 bits as Java's int arithmetic does."""
    biased = b.make("+", value, b.long(2**31))
    return b.make("-", b.make("bitwise and", biased, b.long(2**32 - 1)), b.long(2**31))


def _wide(b: _Builder, value: _Expr) -> _Expr:
    """A long as ``decimal(20,0)``: sums and products of two stay exact within 38 digits."""
    return b.cast(value, "decimal(20,0)")


def _wrap_long(b: _Builder, value: _Expr) -> _Expr:
    """An exact decimal result wrapped to 64 bits as Java's long arithmetic does."""
    bias = b.constant(Decimal(2**63), "decimal(20,0)")
    modulus = b.constant(Decimal(2**64), "decimal(20,0)")
    wrapped = b.make("-", b.function("pmod", b.make("+", value, bias), modulus), bias)
    return b.cast(wrapped, "bigint")


def _round_to_float(b: _Builder, value: _Expr) -> _Expr:
    return b.cast(b.cast(value, "float"), "double")


def _convert(b: _Builder, value: _Expr, source: _Kind, target: _Kind) -> _Expr:
    """A number of kind ``source`` converted to ``target`` by Java's widening conversion."""
    if source in _INTEGRAL and target == _Kind.FLOAT:
        # One rounding, long to float, as Java's (float) does. Spark's optimizer takes long to
        # float for a lossless widening and would fold cast(cast(x as float) as double) into
        # cast(x as double); multiplying the float by 1 keeps the rounding.
        as_float = b.make("*", b.cast(value, "float"), b.constant(1.0, "float"))
        return b.cast(as_float, "double")
    if source in _INTEGRAL and target == _Kind.DOUBLE:
        return b.cast(value, "double")
    return value  # int to long changes nothing here, and a float is already exact as a double


def _integral_divide(b: _Builder, a: _Expr, divisor: _Expr) -> _Expr:
    """Spark's truncating long division, NULL for a zero divisor instead of failing."""
    return b.function("div", a, b.function("nullif", divisor, b.long(0)))


def _arithmetic(
    b: _Builder, operator: ArithmeticOperator, kind: _Kind, x: _Expr, y: _Expr
) -> _Expr:
    """``x operator y`` for two operands already promoted to the numeric ``kind``."""
    if operator is ArithmeticOperator.DIVIDE:
        if kind == _Kind.INT:
            # In 64 bits even MIN_VALUE / -1 fits; wrapping to 32 bits then gives Java's answer.
            return _wrap_int(b, _integral_divide(b, x, y))
        if kind == _Kind.LONG:
            # MIN_VALUE / -1 would overflow Spark's long division, so a divisor of -1 negates.
            negated = _wrap_long(
                b, b.make("-", b.constant(Decimal(0), "decimal(20,0)"), _wide(b, x))
            )
            return b.when(b.compare("=", y, b.long(-1)), negated, _integral_divide(b, x, y))
        # Java's floating division by zero is ±Infinity or NaN; Spark's is NULL or an error.
        reciprocal = b.function("pow", y, b.double(-1.0))
        result = b.coalesce(b.function("try_divide", x, y), b.make("*", x, reciprocal))
    else:
        symbol = operator.value
        if kind == _Kind.INT:
            return _wrap_int(b, b.make(symbol, x, y))  # no int result overflows 64 bits
        if kind == _Kind.LONG:
            return _wrap_long(b, b.make(symbol, _wide(b, x), _wide(b, y)))
        result = b.make(symbol, x, y)
    return _round_to_float(b, result) if kind == _Kind.FLOAT else result


def _negate(b: _Builder, kind: _Kind, value: _Expr) -> _Expr:
    if kind == _Kind.INT:
        return _wrap_int(b, b.make("-", b.long(0), value))
    if kind == _Kind.LONG:
        return _wrap_long(b, b.make("-", b.constant(Decimal(0), "decimal(20,0)"), _wide(b, value)))
    return b.make("negative", value)


def _exact_in_float(value: int) -> bool:
    """True when the int or long converts to float (and so to double) without rounding."""
    as_double = float(value)
    return int(as_double) == value and round_to_float32(as_double) == as_double


# --- comparisons ------------------------------------------------------------------------------


def _floating_comparison(
    b: _Builder,
    operator: ComparisonOperator,
    x: _Expr,
    y: _Expr,
    *,
    y_is_finite_constant: bool,
    x_is_integral: bool,
) -> _Expr:
    """``x operator y`` on doubles with Java's NaN rule (every comparison with NaN is false but
    ``<>``); NULL when either is NULL. Spark orders NaN above everything and equal to itself.
    ``x_is_integral`` says ``x`` is a converted int or long, so never NaN."""
    spark_answer = b.compare(operator.value, x, y)
    if y_is_finite_constant:
        # Against a finite constant only "NaN > y" and "NaN >= y" come out wrong.
        if x_is_integral or operator not in (
            ComparisonOperator.GREATER,
            ComparisonOperator.GREATER_EQUAL,
        ):
            return spark_answer
        return b.all(spark_answer, b.negation(b.function("isnan", x)))
    nan_answer = b.constant(operator is ComparisonOperator.NOT_EQUAL)
    if x_is_integral:
        some_nan, both_present = b.function("isnan", y), b.is_not_null(x)
    else:
        some_nan = b.any(b.function("isnan", x), b.function("isnan", y))
        both_present = b.all(b.is_not_null(x), b.is_not_null(y))
    return b.when(some_nan, b.when(both_present, nan_answer), spark_answer)


def _numeric_terms(
    b: _Builder,
    operator: ComparisonOperator,
    left: _Variant,
    right: _Variant,
    left_constant: JavaValue | None,
    right_constant: JavaValue | None,
) -> list[_Expr]:
    """Self-guarding comparison terms for two numeric variants, after Java's promotion."""
    left_integral, right_integral = left.kinds <= _INTEGRAL, right.kinds <= _INTEGRAL
    if left_integral and right_integral:
        return [b.compare(operator.value, left.value, right.value)]
    if left_integral or (not right_integral and left_constant is not None):
        # From here the float or double is on the left, and a constant, if any, on the right.
        operator, left, right = operator.mirrored, right, left
        left_constant, right_constant = right_constant, left_constant
        right_integral = left_integral
    if not right_integral:
        return [
            _floating_comparison(
                b,
                operator,
                left.value,
                right.value,
                y_is_finite_constant=right_constant is not None,
                x_is_integral=False,
            )
        ]
    # A float or double meets an int or long, which is rounded to float, or to double.
    if right_constant is not None and _exact_in_float(int(right_constant)):
        exact = b.double(float(right_constant))
        return [
            _floating_comparison(
                b, operator, left.value, exact, y_is_finite_constant=True, x_is_integral=False
            )
        ]
    return [
        _floating_comparison(
            b,
            operator.mirrored,
            _convert(b, right.value, _Kind.LONG, kind),
            left.parts[kind],
            y_is_finite_constant=left_constant is not None,
            x_is_integral=True,
        )
        for kind in sorted(left.kinds)
    ]


# --- identifiers ------------------------------------------------------------------------------

#: Where each header a selector can read lives in MESSAGE_SCHEMA, and its kind there.
_HEADER_COLUMNS: Final[dict[str, tuple[str, _Kind]]] = {
    "JMSDeliveryMode": ("delivery_mode", _Kind.STRING),
    "JMSPriority": ("priority", _Kind.INT),
    "JMSMessageID": ("message_id", _Kind.STRING),
    "JMSTimestamp": ("timestamp", _Kind.LONG),
    "JMSCorrelationID": ("correlation_id", _Kind.STRING),
    "JMSType": ("type", _Kind.STRING),
    "JMSXDeliveryCount": ("delivery_count", _Kind.INT),
}

_KIND_OF_SPARK_TYPE: Final[dict[type[DataType], _Kind]] = {
    BooleanType: _Kind.BOOLEAN,
    StringType: _Kind.STRING,
    ByteType: _Kind.INT,
    ShortType: _Kind.INT,
    IntegerType: _Kind.INT,
    LongType: _Kind.LONG,
    FloatType: _Kind.FLOAT,
    DoubleType: _Kind.DOUBLE,
}

_KIND_OF_JAVA_TYPE: Final[dict[type, _Kind]] = {
    bool: _Kind.BOOLEAN,
    str: _Kind.STRING,
    Int: _Kind.INT,
    Long: _Kind.LONG,
    Float: _Kind.FLOAT,
    Double: _Kind.DOUBLE,
}

_Resolver = Callable[[_Builder, Identifier], _Typed]


def _column_typed(b: _Builder, name: str, kind: _Kind) -> _Typed:
    """A plain column of one kind, in the representation variants use."""
    column = b.column(name)
    if kind in _INTEGRAL:
        value = b.cast(column, "bigint")
    elif kind in _FLOATING:
        value = b.cast(column, "double")
    else:
        value = column
    return _Typed((_Variant.of(kind, value),), b.is_null(column))


def _message_identifier(b: _Builder, identifier: Identifier) -> _Typed:
    """An identifier's value in a MESSAGE_SCHEMA row: a header column or a typed property."""
    header = _HEADER_COLUMNS.get(identifier.name)
    if header is not None:
        return _column_typed(b, *header)
    value = b.make("item", b.column("properties"), identifier.name)
    type_name, integral, floating = (
        b.make("field", value, name) for name in ("type", "long", "double")
    )

    def of_type(name: str, content: _Expr, *, equal: bool = True) -> _Expr:
        return b.when(b.compare("=" if equal else "<>", type_name, b.constant(name)), content)

    # Each field is set only for its own types, so each variant guards itself; the type tag is
    # read only when an operation must tell an int from a long or a float from a double.
    variants = (
        _Variant.of(_Kind.STRING, b.make("field", value, "string")),
        _Variant(
            _INTEGRAL,
            integral,
            {
                _Kind.INT: of_type("long", integral, equal=False),
                _Kind.LONG: of_type("long", integral),
            },
        ),
        _Variant(
            _FLOATING,
            floating,
            {_Kind.FLOAT: of_type("float", floating), _Kind.DOUBLE: of_type("double", floating)},
        ),
        _Variant.of(_Kind.BOOLEAN, b.make("field", value, "boolean")),
    )
    # Every property value has its type tag, so a missing tag is a NULL property; testing it
    # rather than the whole struct lets Parquet skip the fields a selector does not read.
    return _Typed(variants, b.is_null(type_name))


def _plain_identifiers(schema: StructType) -> _Resolver:
    """Identifiers resolved to the top-level columns of ``schema`` that carry their names."""
    types = {field.name: field.dataType for field in schema.fields}

    def resolve(b: _Builder, identifier: Identifier) -> _Typed:
        name = identifier.name
        if name not in types:
            listed = ", ".join(sorted(types)[:20]) + (", ..." if len(types) > 20 else "")
            raise ValueError(
                f"the selector reads {name!r}, but no column has that name (columns: {listed}); "
                "name a column like the identifier, or leave out columns= for MESSAGE_SCHEMA rows"
            )
        kind = _KIND_OF_SPARK_TYPE.get(type(types[name]))
        if kind is None:
            raise ValueError(
                f"column {name!r} is {types[name].simpleString()}; a selector reads boolean, "
                "string, tinyint, smallint, int, bigint, float or double columns"
            )
        header_type = HEADER_TYPES.get(name)
        if header_type is not None and _KIND_OF_JAVA_TYPE[header_type] != kind:
            java_name = "String" if header_type is str else header_type.__name__.lower()
            raise ValueError(
                f"column {name!r} is {types[name].simpleString()}, but the header {name} is a "
                f"Java {java_name}"
            )
        return _column_typed(b, name, kind)

    return resolve


# --- the translation --------------------------------------------------------------------------


def _utf8(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"the selector's string {text!r} holds a lone UTF-16 surrogate at index "
            f"{error.start}; Spark strings are UTF-8 and cannot hold it"
        ) from None
    return text


def _literal(b: _Builder, value: JavaValue) -> _Typed:
    kind = _KIND_OF_JAVA_TYPE[type(value)]
    if kind in _INTEGRAL:
        expression = b.long(int(value))
    elif kind in _FLOATING:
        expression = b.double(float(value))
    elif kind == _Kind.STRING:
        expression = b.constant(_utf8(str(value)))
    else:
        expression = b.constant(bool(value))
    return _Typed((_Variant.of(kind, expression),), None, value)


def _like_pattern(parts: tuple[str | LikeWildcard, ...]) -> str:
    """Spark's LIKE pattern, with ``!`` as its escape, for a pattern the parser has split."""
    pieces = []
    for part in parts:
        if part is LikeWildcard.ANY_CHAR:
            pieces.append("_")
        elif part is LikeWildcard.ANY_RUN:
            pieces.append("%")
        else:
            pieces.append("".join("!" + c if c in "!%_" else c for c in _utf8(part)))
    return "".join(pieces)


class _Translator:
    """Turns one checked selector tree into a Spark expression; ``resolve`` reads identifiers."""

    def __init__(self, resolve: _Resolver) -> None:
        self.b = _Builder()
        self.resolve = resolve

    def condition(self, node: Expression) -> _Expr:
        """The node as a Spark boolean: TRUE, FALSE, or NULL for UNKNOWN."""
        b = self.b
        match node:
            case Literal(value=value):
                return b.constant(bool(value))
            case Identifier():
                return self.test_of_kind(self.resolve(b, node), _Kind.BOOLEAN, lambda value: value)
            case Not(operand=operand):
                return b.negation(self.condition(operand))
            case And(operands=operands):
                return b.all(*map(self.condition, operands))
            case Or(operands=operands):
                return b.any(*map(self.condition, operands))
            case Comparison(operator=operator, left=left, right=right):
                return self.compare(operator, self.value(left), self.value(right))
            case Between(operand=operand, low=low, high=high, negated=negated):
                value, lowest, highest = self.value(operand), self.value(low), self.value(high)
                if negated:
                    return b.any(
                        self.compare(ComparisonOperator.LESS, value, lowest),
                        self.compare(ComparisonOperator.GREATER, value, highest),
                    )
                return b.all(
                    self.compare(ComparisonOperator.GREATER_EQUAL, value, lowest),
                    self.compare(ComparisonOperator.LESS_EQUAL, value, highest),
                )
            case In(identifier=identifier, values=values, negated=negated):
                members = tuple(map(_utf8, values))
                found = self.test_of_kind(
                    self.resolve(b, identifier),
                    _Kind.STRING,
                    lambda text: b.make("in", text, members),
                )
                return b.negation(found) if negated else found
            case Like(identifier=identifier, parts=parts, negated=negated):
                pattern = _like_pattern(parts)
                matched = self.test_of_kind(
                    self.resolve(b, identifier),
                    _Kind.STRING,
                    lambda text: b.make("like", text, pattern),
                )
                return b.negation(matched) if negated else matched
            case IsNull(identifier=identifier, negated=negated):
                is_null = self.resolve(b, identifier).is_null or b.constant(False)
                return b.negation(is_null) if negated else is_null
        raise TypeError(f"not a condition node: {node!r}")

    def value(self, node: Expression) -> _Typed:
        b = self.b
        match node:
            case Literal(value=value):
                return _literal(b, value)
            case Identifier():
                return self.resolve(b, node)
            case Unary(operator=operator, operand=operand):
                return self.unary(operator, self.value(operand))
            case Arithmetic(operator=operator, left=left, right=right):
                return self.arithmetic(operator, self.value(left), self.value(right))
        condition = self.condition(node)  # a condition as a value: a boolean, NULL if UNKNOWN
        return _Typed((_Variant.of(_Kind.BOOLEAN, condition),), b.is_null(condition))

    def test_of_kind(self, typed: _Typed, kind: _Kind, test: Callable[[_Expr], _Expr]) -> _Expr:
        """``test`` of the value when it has ``kind``; FALSE for another type; NULL for NULL."""
        terms = [test(variant.value) for variant in typed.variants if variant.kinds == {kind}]
        if terms and len(typed.variants) == 1:
            return terms[0]
        return self.b.coalesce(*terms, _false_unless(self.b, [_present(self.b, typed)]))

    def compare(self, operator: ComparisonOperator, left: _Typed, right: _Typed) -> _Expr:
        b = self.b
        terms: list[_Expr] = []
        for left_variant in left.variants:
            for right_variant in right.variants:
                if left_variant.is_numeric and right_variant.is_numeric:
                    terms += _numeric_terms(
                        b, operator, left_variant, right_variant, left.literal, right.literal
                    )
                elif (
                    left_variant.kinds == right_variant.kinds
                    and left_variant.kinds <= {_Kind.BOOLEAN, _Kind.STRING}
                    and not operator.is_ordering
                ):
                    terms.append(b.compare(operator.value, left_variant.value, right_variant.value))
        if len(terms) == 1 and len(left.variants) == 1 and len(right.variants) == 1:
            return terms[0]  # one type on each side: SQL's NULL propagation is the whole story
        return b.coalesce(*terms, _false_unless(b, [_present(b, left), _present(b, right)]))

    def arithmetic(self, operator: ArithmeticOperator, left: _Typed, right: _Typed) -> _Typed:
        b = self.b
        by_kind: dict[_Kind, list[_Expr]] = {}
        for left_kind, left_value in _numeric_parts(left):
            for right_kind, right_value in _numeric_parts(right):
                kind = max(left_kind, right_kind)
                by_kind.setdefault(kind, []).append(
                    _arithmetic(
                        b,
                        operator,
                        kind,
                        _convert(b, left_value, left_kind, kind),
                        _convert(b, right_value, right_kind, kind),
                    )
                )
        variants = [
            _Variant.of(kind, b.coalesce(*terms)) for kind, terms in sorted(by_kind.items())
        ]
        wrong_types = [
            t for t in (self.non_numeric(left), self.non_numeric(right)) if t is not None
        ]
        if wrong_types:
            # NULL wins over a type error: "arithmetic with an unknown value" is unknown.
            present = [t for t in (_present(b, left), _present(b, right)) if t is not None]
            error = b.all(b.any(*wrong_types), *present)
            variants.append(_Variant.of(_Kind.TYPE_ERROR, b.when(error, b.constant(True))))
        nulls = [test for test in (left.is_null, right.is_null) if test is not None]
        if operator is ArithmeticOperator.DIVIDE:
            dividend, divisor = _integral_value(b, left), _integral_value(b, right)
            if dividend is not None and divisor is not None:
                # Integer division by zero is NULL (where Java throws).
                by_zero = b.all(b.is_not_null(dividend), b.compare("=", divisor, b.long(0)))
                nulls.append(b.coalesce(by_zero, b.constant(False)))
        return _Typed(tuple(variants), b.any(*nulls) if nulls else None)

    def unary(self, operator: UnaryOperator, operand: _Typed) -> _Typed:
        b = self.b
        variants: list[_Variant] = []
        for variant in operand.variants:
            if not variant.is_numeric:
                continue
            if operator is UnaryOperator.PLUS:
                variants.append(variant)
            elif variant.kinds <= _FLOATING:
                parts = {kind: b.make("negative", part) for kind, part in variant.parts.items()}
                variants.append(_Variant(variant.kinds, b.make("negative", variant.value), parts))
            else:
                variants += [
                    _Variant.of(kind, _negate(b, kind, variant.parts[kind]))
                    for kind in sorted(variant.kinds)
                ]
        wrong_type = self.non_numeric(operand)
        if wrong_type is not None:
            variants.append(_Variant.of(_Kind.TYPE_ERROR, b.when(wrong_type, b.constant(True))))
        return _Typed(tuple(variants), operand.is_null)

    def non_numeric(self, typed: _Typed) -> _Expr | None:
        """TRUE where the value is a String, boolean or type error, or None if it never is."""
        present = [self.b.is_not_null(v.value) for v in typed.variants if not v.is_numeric]
        return self.b.any(*present) if present else None


def _numeric_parts(typed: _Typed) -> list[tuple[_Kind, _Expr]]:
    return [
        (kind, variant.parts[kind])
        for variant in typed.variants
        if variant.is_numeric
        for kind in sorted(variant.kinds)
    ]


def _integral_value(b: _Builder, typed: _Typed) -> _Expr | None:
    """The value where it is an int or long (NULL elsewhere), or None if it never is one."""
    values = [variant.value for variant in typed.variants if variant.kinds <= _INTEGRAL]
    return b.coalesce(*values) if values else None


def selector_to_column(
    text: str | None, *, columns: StructType | DataFrame | None = None
) -> Column:
    """The JMS selector ``text`` as a native Spark boolean column.

    The column is TRUE where ``Selector(text).evaluate`` would say True, FALSE where False, and
    NULL where UNKNOWN; so ``df.filter(column)`` keeps exactly the rows ``Selector.matches`` keeps.
    By default it reads rows in ``MESSAGE_SCHEMA`` (headers from their columns, JMSXDeliveryCount
    from ``delivery_count``, every other identifier from ``properties``). With ``columns`` (a
    ``StructType``, or a DataFrame whose schema to use) every identifier reads the top-level
    column of the same name, whose Spark type is its Java type: boolean, string, tinyint/smallint/
    int (a Java int for the selector), bigint, float or double; a null is a missing value. None or
    an empty selector selects every row. Bad syntax raises ``InvalidSelectorException``; an
    identifier without a usable column, or a selector whose expression would exceed
    ``MAX_EXPRESSION_SIZE`` nodes, ``ValueError``.
    """
    if isinstance(columns, DataFrame):
        columns = columns.schema
    elif columns is not None and not isinstance(columns, StructType):
        raise TypeError(f"columns= takes a StructType or a DataFrame, got {type(columns).__name__}")
    tree = parse(text)
    if tree is None:
        return F.lit(True)
    translator = _Translator(
        _message_identifier if columns is None else _plain_identifiers(columns)
    )
    root = translator.condition(tree)
    if root.size > MAX_EXPRESSION_SIZE:
        raise ValueError(
            f"the selector {text!r:.200} would become a Spark expression of {root.size} nodes "
            f"(the limit is {MAX_EXPRESSION_SIZE}): nested arithmetic on properties whose Java "
            "type varies per message multiplies the cases at every level; name typed columns "
            "with columns=, or simplify the arithmetic"
        )
    return translator.b.to_column(root)
