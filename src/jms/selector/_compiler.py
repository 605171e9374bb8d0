"""Selector syntax tree → two Python functions, ``is_true(message)`` and ``is_false(message)``.

Theory of operation. Three-valued logic is compiled as two two-valued questions: "is this node
TRUE?" and "is this node FALSE?" (UNKNOWN is "neither"). They compose with Python's own
short-circuit ``and``/``or``: TRUE(a AND b) = TRUE(a) and TRUE(b), FALSE(a AND b) = FALSE(a) or
FALSE(b), TRUE(NOT a) = FALSE(a), and so on, so a selector becomes one flat Python expression per
question, generated as source and compiled once. Identifier access is resolved here (a property is
``p.get(name)``, a header its slot on the message), and so are literal types: a comparison with a
numeric literal compiles to a plain Python comparison when Java's promotion cannot change its
outcome for any operand type (checked per literal below), and to a call into ``_runtime``
otherwise; LIKE becomes a string method or one precompiled regular expression, IN a frozenset.
Arithmetic is one table lookup by the operand types, or, with an int literal on one side, inline
Python arithmetic for an int (with its 32-bit wrap) or a double operand; arithmetic whose result is
only compared uses the ``COMPARED_`` tables, and its result is then tested against NULL and
``TYPE_ERROR`` by identity instead of by type. A condition needed whole (an operand of a comparison, or a subtree deeper than
``_LEVELS_PER_FUNCTION``) becomes a generated function of its own that evaluates it to
True/False/None with each operand evaluated once, so the code grows linearly with the selector and
no expression nests deeper than Python's parser allows.

Only data reaches the generated source through ``repr`` of names, strings and ints; every other
constant is passed in the namespace, so selector text can never become code. This module must
not change what a node means (``ast.py`` says that); it only makes it fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from jms.selector import _runtime
from jms.selector.ast import (
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
from jms.types import Float, Int, Long

__all__ = ["CompiledSelector", "compile_selector", "like_regex"]

Predicate = Callable[[Any], bool]


@dataclass(frozen=True, slots=True)
class CompiledSelector:
    """The two questions a selector answers about a message, and the source they came from."""

    is_true: Predicate
    is_false: Predicate
    source: str


_ARITHMETIC_TABLES: Final = {
    ArithmeticOperator.ADD: "_ADD",
    ArithmeticOperator.SUBTRACT: "_SUBTRACT",
    ArithmeticOperator.MULTIPLY: "_MULTIPLY",
    ArithmeticOperator.DIVIDE: "_DIVIDE",
}
# For a result that is only compared: its long results are plain ints (see ``_runtime``).
_COMPARED_TABLES: Final = {
    ArithmeticOperator.ADD: "_COMPARED_ADD",
    ArithmeticOperator.SUBTRACT: "_COMPARED_SUBTRACT",
    ArithmeticOperator.MULTIPLY: "_COMPARED_MULTIPLY",
    ArithmeticOperator.DIVIDE: "_COMPARED_DIVIDE",
}
_UNARY_TABLES: Final = {UnaryOperator.PLUS: "_PLUS", UnaryOperator.MINUS: "_NEGATE"}
_PYTHON_COMPARISON: Final = {
    ComparisonOperator.EQUAL: "==",
    ComparisonOperator.NOT_EQUAL: "!=",
    ComparisonOperator.LESS: "<",
    ComparisonOperator.LESS_EQUAL: "<=",
    ComparisonOperator.GREATER: ">",
    ComparisonOperator.GREATER_EQUAL: ">=",
}

# How each selectable header's selector value is read from a ``jms.message.Message`` (its internal
# contract: the slots, and the getter for a correlation ID that may be stored as bytes). The two
# numeric headers are also compared with literals as the plain ints the message stores.
_HEADER_VALUES: Final = {
    "JMSDeliveryMode": "_DELIVERY_MODES[m._delivery_mode]",
    "JMSPriority": "m._priority",
    "JMSMessageID": "m._message_id",
    "JMSTimestamp": "_as_long(m._timestamp)",
    "JMSCorrelationID": "m.get_jms_correlation_id()",
    "JMSType": "m._type",
}
_RAW_HEADER_NUMBERS: Final = {"JMSPriority": "m._priority", "JMSTimestamp": "m._timestamp"}
_NEVER_NULL_HEADERS: Final = frozenset({"JMSDeliveryMode", "JMSPriority", "JMSTimestamp"})

_NAMESPACE: Final[dict[str, object]] = {
    "_compare": _runtime.compare,
    "_ADD": _runtime.ADD,
    "_SUBTRACT": _runtime.SUBTRACT,
    "_MULTIPLY": _runtime.MULTIPLY,
    "_DIVIDE": _runtime.DIVIDE,
    "_COMPARED_ADD": _runtime.COMPARED_ADD,
    "_COMPARED_SUBTRACT": _runtime.COMPARED_SUBTRACT,
    "_COMPARED_MULTIPLY": _runtime.COMPARED_MULTIPLY,
    "_COMPARED_DIVIDE": _runtime.COMPARED_DIVIDE,
    "_INTS": _runtime.INT_TYPES,
    "_DOUBLES": _runtime.DOUBLE_TYPES,
    "_wrap_int": _runtime.wrap_int,
    "_TYPE_ERROR": _runtime.TYPE_ERROR,
    "_NEGATE": _runtime.NEGATE,
    "_PLUS": _runtime.PLUS,
    "_not_numbers": _runtime.not_numbers,
    "_not_a_number": _runtime.not_a_number,
    "_as_long": _runtime.as_long,
    "_NUMBER": _runtime.NUMBER_TYPES,
    "_DELIVERY_MODES": {1: "NON_PERSISTENT", 2: "PERSISTENT"},
    "_truth": _runtime.truth,
    "_not": _runtime.logical_not,
    "_and": _runtime.logical_and,
    "_or": _runtime.logical_or,
}


#: A generated function inlines at most this many tree levels; a deeper subtree becomes a function
#: of its own. This keeps every expression far below Python's limit of 200 nested brackets.
_LEVELS_PER_FUNCTION: Final = 16


def _plain_comparison_is_exact(value: JavaValue) -> bool:
    """Whether ``x op value`` compared exactly (as Python compares int and float) gives Java's
    answer for every numeric type ``x`` may have.

    Java first converts both sides to their wider type. An int/long literal is safe when the float
    and the double nearest to it are the literal itself. A double (float) literal is safe below
    2**53 (2**24) in magnitude: a long that rounds on conversion is then beyond the literal either
    way, so the rounding cannot change the order, and equality is false both ways.
    """
    if isinstance(value, Float):
        return abs(value) < 2**24
    if isinstance(value, float):
        return abs(value) < 2**53
    assert isinstance(value, int)
    return _runtime.long_to_float32(value) == value and float(value) == value


class _Generator:
    def __init__(self) -> None:
        self.namespace: dict[str, object] = dict(_NAMESPACE)
        self.variables = 0
        self.reads_properties = False
        self.functions: list[tuple[str, str]] = []  # (name, the expression it returns)
        self.level = 0

    def variable(self) -> str:
        self.variables += 1
        return f"_v{self.variables}"

    def constant(self, value: object) -> str:
        name = f"_k{len(self.namespace)}"
        self.namespace[name] = value
        return name

    # -- values --------------------------------------------------------------------------------

    def literal(self, value: JavaValue) -> str:
        """Source for a literal's value; a plain int is a Java int, a plain float a double."""
        if type(value) is bool:
            return "True" if value else "False"
        if type(value) is str:
            return repr(value)
        if type(value) in (Long, Float):
            return self.constant(value)
        if isinstance(value, int):
            return repr(int(value))
        return repr(float(value))

    def identifier(self, identifier: Identifier) -> str:
        header = _HEADER_VALUES.get(identifier.name)
        if header is not None:
            return header
        self.reads_properties = True
        return f"p.get({identifier.name!r})"

    def function(self, body: Callable[[], str]) -> str:
        """Name of a new generated function ``name(m)`` returning the expression ``body()``
        builds, which starts again at nesting level 0."""
        outer_level, self.level = self.level, 0
        expression = body()
        self.level = outer_level
        name = f"_f{len(self.functions)}"
        self.functions.append((name, expression))
        return name

    def three_valued_function(self, node: Expression) -> str:
        """Name of a generated function returning the condition's True, False or None."""
        return self.function(lambda: self.three_valued(node))

    def three_valued(self, node: Expression) -> str:
        """Source for the condition's True, False or None that evaluates each operand once.

        Used where a condition's value is needed whole (as a comparison operand, or in a function
        of its own); the TRUE/FALSE pair would evaluate a nested function twice per level.
        """
        if self.level >= _LEVELS_PER_FUNCTION:
            return f"{self.three_valued_function(node)}(m)"
        self.level += 1
        try:
            match node:
                case Identifier():
                    return f"_truth({self.value(node)})"
                case Not(operand=operand):
                    return f"_not({self.three_valued(operand)})"
                case And(operands=operands):
                    return f"_and({', '.join(map(self.three_valued, operands))})"
                case Or(operands=operands):
                    return f"_or({', '.join(map(self.three_valued, operands))})"
                case Comparison(operator=operator, left=left, right=right):
                    left_value = self.value(left, compared=True)
                    right_value = self.value(right, compared=True)
                    return f"_compare({operator.value!r}, {left_value}, {right_value})"
            # Literals, BETWEEN, IN, LIKE, IS NULL: their two tests read values, never conditions,
            # so nothing nested is evaluated more than twice.
            true, false = self.inline_condition(node)
            return f"(True if {true} else False if {false} else None)"
        finally:
            self.level -= 1

    def value(self, node: Expression, *, compared: bool = False) -> str:
        """Source for the node's value: a Java-typed value, None (NULL) or TYPE_ERROR.

        ``compared``: the value is only compared (not an operand of more arithmetic), so a long
        result may be a plain int."""
        if not isinstance(node, Literal | Identifier | Unary | Arithmetic):
            # A condition used as a value, as in (a = 1) = (b = 2), is evaluated once in a
            # function of its own: inlining both its TRUE and FALSE tests here would double the
            # code at every such level.
            return f"{self.three_valued_function(node)}(m)"
        if self.level >= _LEVELS_PER_FUNCTION:
            return f"{self.function(lambda: self.value(node, compared=compared))}(m)"
        self.level += 1
        try:
            return self.inline_value(node, compared)
        finally:
            self.level -= 1

    def inline_value(self, node: Literal | Identifier | Unary | Arithmetic, compared: bool) -> str:
        match node:
            case Literal(value=value):
                return self.literal(value)
            case Identifier():
                return self.identifier(node)
            case Unary(operator=operator, operand=operand):
                held = self.variable()
                table = _UNARY_TABLES[operator]
                return f"{table}.get(type({held} := {self.value(operand)}), _not_a_number)({held})"
            case Arithmetic(operator=operator, left=left, right=right):
                return self.arithmetic(operator, left, right, compared)
        raise TypeError(f"not a value node: {node!r}")

    def arithmetic(
        self, operator: ArithmeticOperator, left: Expression, right: Expression, compared: bool
    ) -> str:
        table = (_COMPARED_TABLES if compared else _ARITHMETIC_TABLES)[operator]
        literals = [side for side in (left, right) if isinstance(side, Literal)]
        if (
            operator is not ArithmeticOperator.DIVIDE
            and len(literals) == 1
            and type(literals[0].value) is Int
        ):
            # ``x op 2``: inline Java int arithmetic when x is an int and Python's own when it is
            # a double; any other x takes the table.
            (literal,) = literals
            other = right if literal is left else left
            held, held_type, result = self.variable(), self.variable(), self.variable()
            constant = repr(int(literal.value))
            a, b = (constant, held) if literal is left else (held, constant)
            types = f"(int, {held_type})" if literal is left else f"({held_type}, int)"
            operation = f"{a} {operator.value} {b}"
            return (
                f"(({result} if -2147483648 <= ({result} := {operation}) <= 2147483647"
                f" else _wrap_int({result}))"
                f" if ({held_type} := type({held} := {self.value(other)})) in _INTS"
                f" else {operation} if {held_type} in _DOUBLES"
                f" else {table}.get({types}, _not_numbers)({a}, {b}))"
            )
        # One dictionary lookup by the operand types picks Java's promoted operation.
        held_left, held_right = self.variable(), self.variable()
        pair = (
            f"(type({held_left} := {self.value(left)}), type({held_right} := {self.value(right)}))"
        )
        return f"{table}.get({pair}, _not_numbers)({held_left}, {held_right})"

    # -- conditions ----------------------------------------------------------------------------

    def condition(self, node: Expression) -> tuple[str, str]:
        """Source for (node is TRUE, node is FALSE); both are Python bools."""
        if self.level >= _LEVELS_PER_FUNCTION:
            name = self.three_valued_function(node)
            return f"({name}(m) is True)", f"({name}(m) is False)"
        self.level += 1
        try:
            return self.inline_condition(node)
        finally:
            self.level -= 1

    def inline_condition(self, node: Expression) -> tuple[str, str]:
        match node:
            case Literal(value=value):
                assert type(value) is bool, "the parser admits only boolean literals as conditions"
                return repr(value), repr(not value)
            case Identifier():
                value = self.value(node)
                held = self.variable()
                return (
                    f"({value} is True)",
                    f"(({held} := {value}) is not None and {held} is not True)",
                )
            case Not(operand=operand):
                true, false = self.condition(operand)
                return false, true
            case And(operands=operands):
                pairs = [self.condition(operand) for operand in operands]
                return _joined(" and ", [t for t, _ in pairs]), _joined(
                    " or ", [f for _, f in pairs]
                )
            case Or(operands=operands):
                pairs = [self.condition(operand) for operand in operands]
                return _joined(" or ", [t for t, _ in pairs]), _joined(
                    " and ", [f for _, f in pairs]
                )
            case Comparison(operator=operator, left=left, right=right):
                return self.comparison(operator, left, right)
            case Between():
                return self.between(node)
            case In(identifier=identifier, values=values, negated=negated):
                members = self.constant(frozenset(values))
                value = self.identifier(identifier)
                held = self.variable()
                true = f"({value} in {members})"
                false = f"(({held} := {value}) is not None and {held} not in {members})"
                return (false, true) if negated else (true, false)
            case Like():
                return self.like(node)
            case IsNull(identifier=identifier, negated=negated):
                if identifier.name in _NEVER_NULL_HEADERS:
                    true, false = "False", "True"
                else:
                    value = self.identifier(identifier)
                    true, false = f"({value} is None)", f"({value} is not None)"
                return (false, true) if negated else (true, false)
        raise TypeError(f"not a condition node: {node!r}")

    def comparison(
        self, operator: ComparisonOperator, left: Expression, right: Expression
    ) -> tuple[str, str]:
        if isinstance(left, Literal) and isinstance(right, Literal):
            outcome = _runtime.compare(operator.value, left.value, right.value)
            return repr(outcome is True), repr(outcome is False)
        if isinstance(left, Literal):
            operator, left, right = operator.mirrored, right, left
        if isinstance(right, Literal):
            literal = right.value
            if type(literal) is str or type(literal) is bool:
                return self.equality(operator, left, literal)
            if _plain_comparison_is_exact(literal):
                return self.plain_numeric(operator, left, literal)
        return self.general_comparison(operator, left, right)

    def equality(
        self, operator: ComparisonOperator, operand: Expression, literal: str | bool
    ) -> tuple[str, str]:
        """``operand = literal`` / ``<>`` for a String or boolean literal: a value of another type
        is unequal *and* not "not equal" (unlike types compare FALSE either way)."""
        value = self.value(operand, compared=True)
        shown = self.literal(literal)
        held = self.variable()
        # Booleans compare by identity: Python's 0 == False must not make an int equal FALSE.
        kind, equal, unequal = (
            ("str", "==", "!=") if type(literal) is str else ("bool", "is", "is not")
        )
        if operator is ComparisonOperator.EQUAL:
            return (
                f"({value} {equal} {shown})",
                f"(({held} := {value}) is not None and {held} {unequal} {shown})",
            )
        return (
            f"(type({held} := {value}) is {kind} and {held} {unequal} {shown})",
            f"(({held} := {value}) is not None"
            f" and (type({held}) is not {kind} or {held} {equal} {shown}))",
        )

    def plain_numeric(
        self, operator: ComparisonOperator, operand: Expression, literal: JavaValue
    ) -> tuple[str, str]:
        symbol = _PYTHON_COMPARISON[operator]
        shown = repr(int(literal)) if isinstance(literal, int) else repr(float(literal))
        raw_header = (
            _RAW_HEADER_NUMBERS.get(operand.name) if isinstance(operand, Identifier) else None
        )
        if raw_header is not None:
            # JMSPriority and JMSTimestamp are always present, and always integers.
            return f"({raw_header} {symbol} {shown})", f"(not {raw_header} {symbol} {shown})"
        return self.numeric_test(operand, lambda held: f"{held} {symbol} {shown}")

    def numeric_test(self, operand: Expression, test: Callable[[str], str]) -> tuple[str, str]:
        """(TRUE, FALSE) of "``operand`` is a number and ``test`` of it holds": NULL is neither,
        any other value FALSE. ``test`` makes the Python test of the variable it is given."""
        value = self.value(operand, compared=True)
        held = self.variable()
        condition = test(held)
        if isinstance(operand, Arithmetic | Unary):
            # Arithmetic gives a number, NULL or TYPE_ERROR: identity tells them apart.
            return (
                f"(({held} := {value}) is not None and {held} is not _TYPE_ERROR and {condition})",
                f"(({held} := {value}) is not None and ({held} is _TYPE_ERROR or not {condition}))",
            )
        return (
            f"(type({held} := {value}) in _NUMBER and {condition})",
            f"(({held} := {value}) is not None and (type({held}) not in _NUMBER or not {condition}))",
        )

    def general_comparison(
        self, operator: ComparisonOperator, left: Expression, right: Expression
    ) -> tuple[str, str]:
        left_value, right_value = self.value(left, compared=True), self.value(right, compared=True)
        call = f"_compare({operator.value!r}, {left_value}, {right_value})"
        return f"({call} is True)", f"({call} is False)"

    def between(self, node: Between) -> tuple[str, str]:
        bounds = (node.low, node.high)
        if all(
            isinstance(bound, Literal)
            and type(bound.value) not in (bool, str)
            and _plain_comparison_is_exact(bound.value)
            for bound in bounds
        ):
            low, high = (self.literal_number(bound) for bound in bounds)
            if node.negated:
                return self.numeric_test(
                    node.operand, lambda held: f"({held} < {low} or {held} > {high})"
                )
            return self.numeric_test(node.operand, lambda held: f"{low} <= {held} <= {high}")
        held = self.variable()
        value = self.value(node.operand, compared=True)
        low, high = self.value(node.low, compared=True), self.value(node.high, compared=True)
        if node.negated:
            below = f"_compare('<', ({held} := {value}), {low})"
            above = f"_compare('>', {held}, {high})"
            return (
                f"({below} is True or {above} is True)",
                f"({below} is False and {above} is False)",
            )
        over_low = f"_compare('>=', ({held} := {value}), {low})"
        under_high = f"_compare('<=', {held}, {high})"
        return (
            f"({over_low} is True and {under_high} is True)",
            f"({over_low} is False or {under_high} is False)",
        )

    @staticmethod
    def literal_number(bound: Expression) -> str:
        assert isinstance(bound, Literal)
        value = bound.value
        return repr(int(value)) if isinstance(value, int) else repr(float(value))

    def like(self, node: Like) -> tuple[str, str]:
        value = self.identifier(node.identifier)
        held = self.variable()
        test = self.like_test(node.parts, held)
        true = f"(type({held} := {value}) is str and {test})"
        false = f"(({held} := {value}) is not None and (type({held}) is not str or not {test}))"
        return (false, true) if node.negated else (true, false)

    def like_test(self, parts: tuple[str | LikeWildcard, ...], held: str) -> str:
        """Source testing that the str in ``held`` matches the whole pattern."""
        run = LikeWildcard.ANY_RUN
        texts = [part for part in parts if type(part) is str]
        if len(texts) == len(parts):  # no wildcards: the whole string, exactly
            return f"{held} == {''.join(texts)!r}"
        if parts == (run,):
            return "True"
        if len(parts) == 2 and parts[1] is run and texts:
            return f"{held}.startswith({texts[0]!r})"
        if len(parts) == 2 and parts[0] is run and texts:
            return f"{held}.endswith({texts[0]!r})"
        if len(parts) == 3 and parts[0] is run and parts[2] is run and texts:
            return f"{texts[0]!r} in {held}"
        matcher = self.constant(like_regex(parts).fullmatch)
        return f"{matcher}({held}) is not None"


def like_regex(parts: tuple[str | LikeWildcard, ...]) -> re.Pattern[str]:
    """One regular expression for a whole LIKE pattern; use it with ``fullmatch``."""
    pieces = [
        re.escape(part) if type(part) is str else ("." if part is LikeWildcard.ANY_CHAR else ".*")
        for part in parts
    ]
    return re.compile("".join(pieces), re.DOTALL)


def _joined(separator: str, sources: list[str]) -> str:
    return "(" + separator.join(sources) + ")"


def compile_selector(node: Expression, text: str) -> CompiledSelector:
    """Compile a checked selector tree into its two predicates.

    ``text`` only names the generated code in tracebacks and profiles.
    """
    generator = _Generator()
    true, false = generator.condition(node)
    prologue = "    p = m._properties\n" if generator.reads_properties else ""
    functions = [*generator.functions, ("is_true", true), ("is_false", false)]
    source = "\n".join(
        f"def {name}(m):\n{prologue}    return {expression}\n" for name, expression in functions
    )
    namespace = generator.namespace
    exec(compile(source, f"<selector {text[:60]!r}>", "exec"), namespace)
    return CompiledSelector(namespace["is_true"], namespace["is_false"], source)  # type: ignore[arg-type]
