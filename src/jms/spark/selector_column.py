"""``selector_to_column``: a JMS selector as one native Spark SQL ``Column``, never a Python UDF.

Theory of operation. The selector text is parsed by ``jms.selector.parse`` (there is no second
parser) and its tree is translated node by node, following the meaning ``jms.selector.ast``
writes down. A condition becomes a Spark boolean whose NULL is the selector's UNKNOWN, so Spark's
own AND/OR/NOT are already the spec's tables. A *value* is harder: a property's Java type is known
only per row, and Spark would happily compare ``'2' > 1`` by casting. So a value compiles to a
``_Typed``: a few *variants*, one per Java type it may have, each a Spark column that is non-null
exactly on the rows where the value has that type ("self-guarding"), plus a test for NULL. A
comparison is then ``coalesce`` of one term per pair of variants that Java can compare (unlike
types contribute no term), ending in FALSE unless a side is NULL; because the terms guard
themselves, a row pays only for the first term that applies, one map lookup for the common
``weight > 2500``. Arithmetic pairs variants the same way, by Java's binary numeric promotion.

Numbers: ints and longs are carried as Spark ``long``, floats and doubles as ``double`` (a float is
exact there). Int results wrap at 32 bits by masking a 64-bit result; long results wrap at 64 bits
through ``decimal(38,0)``, which holds any sum or product of two longs exactly; float results are
rounded through a Spark ``float`` cast; integer division by zero is NULL; floating division by zero
is IEEE (``a * pow(b, -1)``). NaN is unequal to everything, as in Java (Spark says ``NaN = NaN``).
Every expression built here is total — it cannot raise for any input — so the result never depends
on ``spark.sql.ansi.enabled``. This module must never fall back to Python evaluation of a row.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import reduce
from typing import Final

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DecimalType,
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

__all__ = ["selector_to_column"]


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

_INT_BIAS: Final = 2**31
_LONG_BIAS: Final = 2**63
_WIDE: Final = DecimalType(20, 0)  # holds every long; sums and products stay within 38 digits


@dataclass(frozen=True, slots=True)
class _Variant:
    """Values of ``kinds`` in one Spark column, non-null exactly on rows holding such a value.

    Several kinds share a variant when one column holds them all (a property's ``long`` field
    holds ints and longs); ``parts`` then gives a self-guarding column per kind, for operations
    that must tell them apart. Ints and longs are Spark longs, floats and doubles Spark doubles.
    """

    kinds: frozenset[_Kind]
    value: Column
    parts: Mapping[_Kind, Column]

    @staticmethod
    def of(kind: _Kind, value: Column) -> _Variant:
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
    is_null: Column | None
    literal: JavaValue | None = None

    def present(self) -> Column | None:
        """TRUE where the value is not NULL, or None when it never is."""
        return None if self.is_null is None else ~self.is_null


def _and_all(columns: list[Column | None]) -> Column | None:
    known = [column for column in columns if column is not None]
    return reduce(lambda a, b: a & b, known) if known else None


def _coalesce(terms: list[Column]) -> Column:
    return terms[0] if len(terms) == 1 else F.coalesce(*terms)


def _false_unless(present: Column | None) -> Column:
    """FALSE where ``present`` holds (or always, for None), NULL elsewhere."""
    return F.lit(False) if present is None else F.when(present, F.lit(False))


# --- numbers ----------------------------------------------------------------------------------


def _wrap_int(value: Column) -> Column:
    """A long holding an exact int result, wrapped to 32 bits as Java's int arithmetic does."""
    return (value + F.lit(_INT_BIAS)).bitwiseAND(F.lit(2**32 - 1)) - F.lit(_INT_BIAS)


def _wide(value: Column) -> Column:
    return value.cast(_WIDE)


def _wrap_long(value: Column) -> Column:
    """An exact decimal result wrapped to 64 bits as Java's long arithmetic does."""
    bias = F.lit(Decimal(_LONG_BIAS)).cast(_WIDE)
    return (F.pmod(value + bias, F.lit(Decimal(2**64)).cast(_WIDE)) - bias).cast(LongType())


def _round_to_float(value: Column) -> Column:
    return value.cast(FloatType()).cast(DoubleType())


def _ieee_divide(dividend: Column, divisor: Column) -> Column:
    """Java's floating ``/``: a zero divisor gives ±Infinity or NaN (Spark's gives NULL or fails)."""
    return F.coalesce(F.try_divide(dividend, divisor), dividend * F.pow(divisor, F.lit(-1.0)))


def _convert(value: Column, source: _Kind, target: _Kind) -> Column:
    """A number of kind ``source`` converted to ``target`` by Java's widening conversion."""
    if source == target or (source in _INTEGRAL and target == _Kind.LONG):
        return value
    if target == _Kind.FLOAT and source in _INTEGRAL:
        return value.cast(FloatType()).cast(DoubleType())
    if target == _Kind.DOUBLE and source in _INTEGRAL:
        return value.cast(DoubleType())
    return value  # a float is already exact as a double


_BINARY: Final[dict[ArithmeticOperator, Callable[[Column, Column], Column]]] = {
    ArithmeticOperator.ADD: lambda a, b: a + b,
    ArithmeticOperator.SUBTRACT: lambda a, b: a - b,
    ArithmeticOperator.MULTIPLY: lambda a, b: a * b,
}


def _integral_divide(a: Column, b: Column) -> Column:
    """Spark's truncating long division (``div``), NULL for a zero divisor instead of failing."""
    return F.call_function("div", a, F.nullif(b, F.lit(0).cast(LongType())))


def _arithmetic(operator: ArithmeticOperator, kind: _Kind, a: Column, b: Column) -> Column:
    """``a operator b`` for two operands already promoted to the numeric ``kind``."""
    divide = operator is ArithmeticOperator.DIVIDE
    if kind == _Kind.INT:
        # In 64 bits no int result overflows (MIN_VALUE / -1 included); then wrap to 32.
        return _wrap_int(_integral_divide(a, b) if divide else _BINARY[operator](a, b))
    if kind == _Kind.LONG:
        if divide:
            # MIN_VALUE / -1 would overflow Spark's long division, so a divisor of -1 negates.
            negated = _wrap_long(F.lit(0).cast(_WIDE) - _wide(a))
            return F.when(b == F.lit(-1), negated).otherwise(_integral_divide(a, b))
        return _wrap_long(_BINARY[operator](_wide(a), _wide(b)))
    result = _ieee_divide(a, b) if divide else _BINARY[operator](a, b)
    return _round_to_float(result) if kind == _Kind.FLOAT else result


def _negate(kind: _Kind, value: Column) -> Column:
    if kind == _Kind.INT:
        return _wrap_int(F.lit(0).cast(LongType()) - value)
    if kind == _Kind.LONG:
        return _wrap_long(F.lit(0).cast(_WIDE) - _wide(value))
    return -value


def _exact_in_float(value: int) -> bool:
    """True when the int or long converts to float (and so to double) without rounding."""
    as_double = float(value)
    return int(as_double) == value and round_to_float32(as_double) == as_double


# --- comparisons ------------------------------------------------------------------------------

_SPARK_COMPARISON: Final[dict[ComparisonOperator, Callable[[Column, Column], Column]]] = {
    ComparisonOperator.EQUAL: lambda a, b: a == b,
    ComparisonOperator.NOT_EQUAL: lambda a, b: a != b,
    ComparisonOperator.LESS: lambda a, b: a < b,
    ComparisonOperator.LESS_EQUAL: lambda a, b: a <= b,
    ComparisonOperator.GREATER: lambda a, b: a > b,
    ComparisonOperator.GREATER_EQUAL: lambda a, b: a >= b,
}


def _floating_comparison(
    operator: ComparisonOperator, a: Column, b: Column, *, b_is_finite_constant: bool
) -> Column:
    """``a operator b`` on doubles with Java's NaN rule (every comparison with NaN is false but
    ``<>``); NULL when either is NULL. Spark orders NaN above everything and equal to itself."""
    spark_answer = _SPARK_COMPARISON[operator](a, b)
    if b_is_finite_constant:
        # Only "NaN > b" and "NaN >= b" come out wrong against a finite constant.
        if operator in (ComparisonOperator.GREATER, ComparisonOperator.GREATER_EQUAL):
            return spark_answer & ~F.isnan(a)
        return spark_answer
    nan_answer = F.lit(operator is ComparisonOperator.NOT_EQUAL)
    return F.when(
        F.isnan(a) | F.isnan(b), F.when(a.isNotNull() & b.isNotNull(), nan_answer)
    ).otherwise(spark_answer)


def _numeric_terms(
    operator: ComparisonOperator,
    left: _Variant,
    right: _Variant,
    left_constant: JavaValue | None,
    right_constant: JavaValue | None,
) -> list[Column]:
    """Self-guarding comparison terms for two numeric variants, after Java's promotion."""
    left_integral, right_integral = left.kinds <= _INTEGRAL, right.kinds <= _INTEGRAL
    if left_integral and right_integral:
        return [_SPARK_COMPARISON[operator](left.value, right.value)]
    if not left_integral and not right_integral:
        if left_constant is not None:
            return [
                _floating_comparison(
                    operator.mirrored, right.value, left.value, b_is_finite_constant=True
                )
            ]
        return [
            _floating_comparison(
                operator, left.value, right.value, b_is_finite_constant=right_constant is not None
            )
        ]
    if not left_integral:
        operator, left, right = operator.mirrored, right, left
        left_constant, right_constant = right_constant, left_constant
    # An int or long meets a float or double: it is rounded to float, or to double.
    if left_constant is not None and _exact_in_float(int(left_constant)):
        exact = F.lit(float(left_constant))
        return [
            _floating_comparison(operator.mirrored, right.value, exact, b_is_finite_constant=True)
        ]
    return [
        _floating_comparison(
            operator,
            _convert(left.value, _Kind.LONG, kind),
            right.parts[kind],
            b_is_finite_constant=right_constant is not None,
        )
        for kind in sorted(right.kinds)
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


def _column_typed(column: Column, kind: _Kind) -> _Typed:
    """A plain column of one kind, in the representation variants use."""
    if kind in _INTEGRAL:
        value = column.cast(LongType())
    elif kind in _FLOATING:
        value = column.cast(DoubleType())
    else:
        value = column
    return _Typed((_Variant.of(kind, value),), column.isNull())


def _message_identifier(identifier: Identifier) -> _Typed:
    """An identifier's value in a MESSAGE_SCHEMA row: a header column or a typed property."""
    header = _HEADER_COLUMNS.get(identifier.name)
    if header is not None:
        return _column_typed(F.col(header[0]), header[1])
    value = F.col("properties").getItem(identifier.name)
    type_name = value.getField("type")
    integral, floating = value.getField("long"), value.getField("double")
    # Each field is set only for its own types, so each variant guards itself; the type tag is
    # read only when an operation must tell an int from a long or a float from a double.
    variants = (
        _Variant.of(_Kind.STRING, value.getField("string")),
        _Variant(
            _INTEGRAL,
            integral,
            {
                _Kind.INT: F.when(type_name != F.lit("long"), integral),
                _Kind.LONG: F.when(type_name == F.lit("long"), integral),
            },
        ),
        _Variant(
            _FLOATING,
            floating,
            {
                _Kind.FLOAT: F.when(type_name == F.lit("float"), floating),
                _Kind.DOUBLE: F.when(type_name == F.lit("double"), floating),
            },
        ),
        _Variant.of(_Kind.BOOLEAN, value.getField("boolean")),
    )
    return _Typed(variants, value.isNull())


def _plain_identifiers(schema: StructType) -> Callable[[Identifier], _Typed]:
    """Identifiers resolved to the top-level columns of ``schema`` that carry their names."""
    types = {field.name: field.dataType for field in schema.fields}

    def resolve(identifier: Identifier) -> _Typed:
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
            raise ValueError(
                f"column {name!r} is {types[name].simpleString()}, but the header {name} is a "
                f"Java {header_type.__name__ if header_type is not str else 'String'}"
            )
        return _column_typed(F.col(name), kind)

    return resolve


# --- the translation --------------------------------------------------------------------------


def _literal(value: JavaValue) -> _Typed:
    kind = _KIND_OF_JAVA_TYPE[type(value)]
    if kind in _INTEGRAL:
        column = F.lit(int(value)).cast(LongType())
    elif kind in _FLOATING:
        column = F.lit(float(value))
    else:
        column = F.lit(value)
    return _Typed((_Variant.of(kind, column),), None, value)


def _condition_typed(condition: Column) -> _Typed:
    """A condition used as a value: a boolean, NULL when UNKNOWN."""
    return _Typed((_Variant.of(_Kind.BOOLEAN, condition),), condition.isNull())


def _test_of_kind(typed: _Typed, kind: _Kind, test: Callable[[Column], Column]) -> Column:
    """``test`` of the value when it has ``kind``; FALSE for another type; NULL for NULL."""
    terms = [test(variant.value) for variant in typed.variants if variant.kinds == {kind}]
    if terms and len(typed.variants) == 1:
        return terms[0]
    return _coalesce([*terms, _false_unless(typed.present())])


def _non_numeric(typed: _Typed) -> Column | None:
    """TRUE where the value is a String, boolean or type error, or None if it never is."""
    present = [variant.value.isNotNull() for variant in typed.variants if not variant.is_numeric]
    return reduce(lambda a, b: a | b, present) if present else None


def _numeric_parts(typed: _Typed) -> list[tuple[_Kind, Column]]:
    return [
        (kind, variant.parts[kind])
        for variant in typed.variants
        if variant.is_numeric
        for kind in sorted(variant.kinds)
    ]


def _like_pattern(parts: tuple[str | LikeWildcard, ...]) -> str:
    """Spark's LIKE pattern (escape ``\\``) for a pattern already split by the parser."""
    pieces = []
    for part in parts:
        if part is LikeWildcard.ANY_CHAR:
            pieces.append("_")
        elif part is LikeWildcard.ANY_RUN:
            pieces.append("%")
        else:
            pieces.append("".join("\\" + c if c in "\\%_" else c for c in part))
    return "".join(pieces)


class _Translator:
    """Turns one checked selector tree into Spark columns; identifiers come from ``resolve``."""

    def __init__(self, resolve: Callable[[Identifier], _Typed]) -> None:
        self.resolve = resolve

    def condition(self, node: Expression) -> Column:
        """The node as a Spark boolean: TRUE, FALSE, or NULL for UNKNOWN."""
        match node:
            case Literal(value=value):
                return F.lit(bool(value))
            case Identifier():
                return _test_of_kind(self.resolve(node), _Kind.BOOLEAN, lambda value: value)
            case Not(operand=operand):
                return ~self.condition(operand)
            case And(operands=operands):
                return reduce(lambda a, b: a & b, map(self.condition, operands))
            case Or(operands=operands):
                return reduce(lambda a, b: a | b, map(self.condition, operands))
            case Comparison(operator=operator, left=left, right=right):
                return self.compare(operator, self.value(left), self.value(right))
            case Between(operand=operand, low=low, high=high, negated=negated):
                value, lowest, highest = self.value(operand), self.value(low), self.value(high)
                if negated:
                    return self.compare(ComparisonOperator.LESS, value, lowest) | self.compare(
                        ComparisonOperator.GREATER, value, highest
                    )
                return self.compare(ComparisonOperator.GREATER_EQUAL, value, lowest) & self.compare(
                    ComparisonOperator.LESS_EQUAL, value, highest
                )
            case In(identifier=identifier, values=values, negated=negated):
                members = list(values)
                found = _test_of_kind(
                    self.resolve(identifier), _Kind.STRING, lambda text: text.isin(members)
                )
                return ~found if negated else found
            case Like(identifier=identifier, parts=parts, negated=negated):
                pattern = _like_pattern(parts)
                matched = _test_of_kind(
                    self.resolve(identifier), _Kind.STRING, lambda text: text.like(pattern)
                )
                return ~matched if negated else matched
            case IsNull(identifier=identifier, negated=negated):
                is_null = self.resolve(identifier).is_null
                test = F.lit(False) if is_null is None else is_null
                return ~test if negated else test
        raise TypeError(f"not a condition node: {node!r}")

    def value(self, node: Expression) -> _Typed:
        match node:
            case Literal(value=value):
                return _literal(value)
            case Identifier():
                return self.resolve(node)
            case Unary(operator=operator, operand=operand):
                return self.unary(operator, self.value(operand))
            case Arithmetic(operator=operator, left=left, right=right):
                return self.arithmetic(operator, self.value(left), self.value(right))
        return _condition_typed(self.condition(node))

    def compare(self, operator: ComparisonOperator, left: _Typed, right: _Typed) -> Column:
        terms: list[Column] = []
        for left_variant in left.variants:
            for right_variant in right.variants:
                if left_variant.is_numeric and right_variant.is_numeric:
                    terms += _numeric_terms(
                        operator, left_variant, right_variant, left.literal, right.literal
                    )
                elif (
                    left_variant.kinds == right_variant.kinds
                    and left_variant.kinds <= {_Kind.BOOLEAN, _Kind.STRING}
                    and not operator.is_ordering
                ):
                    terms.append(
                        _SPARK_COMPARISON[operator](left_variant.value, right_variant.value)
                    )
        if len(terms) == 1 and len(left.variants) == 1 and len(right.variants) == 1:
            return terms[0]  # one type on each side: SQL's NULL propagation is the whole story
        return _coalesce([*terms, _false_unless(_and_all([left.present(), right.present()]))])

    def arithmetic(self, operator: ArithmeticOperator, left: _Typed, right: _Typed) -> _Typed:
        by_kind: dict[_Kind, list[Column]] = {}
        for left_kind, left_value in _numeric_parts(left):
            for right_kind, right_value in _numeric_parts(right):
                kind = max(left_kind, right_kind)
                by_kind.setdefault(kind, []).append(
                    _arithmetic(
                        operator,
                        kind,
                        _convert(left_value, left_kind, kind),
                        _convert(right_value, right_kind, kind),
                    )
                )
        variants = [_Variant.of(kind, _coalesce(terms)) for kind, terms in sorted(by_kind.items())]
        wrong_types = [
            test for test in (_non_numeric(left), _non_numeric(right)) if test is not None
        ]
        if wrong_types:
            # NULL wins over a type error: "arithmetic with an unknown value" is unknown.
            error = _and_all(
                [reduce(lambda a, b: a | b, wrong_types), left.present(), right.present()]
            )
            variants.append(_Variant.of(_Kind.TYPE_ERROR, F.when(error, F.lit(True))))
        return _typed_of(variants)

    def unary(self, operator: UnaryOperator, operand: _Typed) -> _Typed:
        variants: list[_Variant] = []
        for variant in operand.variants:
            if not variant.is_numeric:
                continue
            if operator is UnaryOperator.PLUS:
                variants.append(variant)
            elif variant.kinds <= _FLOATING:
                parts = {kind: -part for kind, part in variant.parts.items()}
                variants.append(_Variant(variant.kinds, -variant.value, parts))
            else:
                variants += [
                    _Variant.of(kind, _negate(kind, variant.parts[kind]))
                    for kind in sorted(variant.kinds)
                ]
        wrong_type = _non_numeric(operand)
        if wrong_type is not None:
            variants.append(_Variant.of(_Kind.TYPE_ERROR, F.when(wrong_type, F.lit(True))))
        return _Typed(tuple(variants), operand.is_null)


def _typed_of(variants: list[_Variant]) -> _Typed:
    """A value made of self-guarding variants: NULL exactly where all of them are."""
    if not variants:
        return _Typed((), F.lit(True))
    return _Typed(tuple(variants), _and_all([variant.value.isNull() for variant in variants]))


def selector_to_column(
    text: str | None, *, columns: StructType | DataFrame | None = None
) -> Column:
    """The JMS selector ``text`` as a native Spark boolean column.

    The column is TRUE where ``Selector(text).evaluate`` would say True, FALSE where False, and
    NULL where UNKNOWN; so ``df.filter(column)`` keeps exactly the rows ``Selector.matches`` keeps.
    By default it reads rows in ``MESSAGE_SCHEMA`` (headers from their columns, JMSXDeliveryCount
    from ``delivery_count``, every other identifier from ``properties``). With ``columns`` (a
    ``StructType`` or a DataFrame whose schema to use) every identifier reads the top-level column
    of the same name, whose Spark type is its Java type: boolean, string, tinyint/smallint/int (a
    Java int for the selector), bigint, float or double; a null is a missing value. None or an
    empty selector selects every row. Bad syntax raises ``InvalidSelectorException``; an
    identifier without a usable column, ``ValueError``.
    """
    tree = parse(text)
    if tree is None:
        return F.lit(True)
    if columns is None:
        resolve = _message_identifier
    elif isinstance(columns, DataFrame):
        resolve = _plain_identifiers(columns.schema)
    elif isinstance(columns, StructType):
        resolve = _plain_identifiers(columns)
    else:
        raise TypeError(f"columns= takes a StructType or a DataFrame, got {type(columns).__name__}")
    return _Translator(resolve).condition(tree)
