"""Filter pushdown for batch reads: simple Spark filters on header columns as selector text.

Spark offers a reader the conjuncts of a query's filter (``pyspark.sql.datasource.Filter``); the
ones translated here are evaluated by the broker as part of the selector, and Spark does not
evaluate them again — so a translation must keep exactly the rows Spark would keep, null rows
included. Only the six header columns a selector can name qualify (``message_id``,
``correlation_id``, ``type``, ``delivery_mode`` as strings; ``priority``, ``timestamp`` as
integers), with comparisons whose SQL and selector meanings agree: ``=``, ``<>``, ``<``, ``<=``,
``>``, ``>=`` on integers, ``=``, ``<>``, ``IN`` and prefix/suffix/substring ``LIKE`` on strings,
``IS [NOT] NULL``, and ``NOT`` of these. Anything else (properties, bodies, ``<=>`` under ``NOT``,
non-integer numbers) stays with Spark — or with ``selector_to_column``. This module never talks
to a broker.
"""

from __future__ import annotations

from typing import Final

from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

__all__ = ["filter_to_selector"]

#: Header columns of ``MESSAGE_SCHEMA`` a selector can name, and their identifiers.
_STRING_HEADERS: Final = {
    "message_id": "JMSMessageID",
    "correlation_id": "JMSCorrelationID",
    "type": "JMSType",
    "delivery_mode": "JMSDeliveryMode",
}
_INTEGER_HEADERS: Final = {"priority": "JMSPriority", "timestamp": "JMSTimestamp"}
_COMPARISONS: Final = {
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    LessThan: "<",
    LessThanOrEqual: "<=",
}
_LONG_MIN: Final = -(2**63)
_LONG_MAX: Final = 2**63 - 1


def _string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _like(value: str, before: str, after: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return _string(f"{before}{escaped}{after}") + " ESCAPE '\\'"


def _is_integer(value: object) -> bool:
    return type(value) is int and _LONG_MIN <= value <= _LONG_MAX


def _identifier(attribute: tuple[str, ...]) -> tuple[str, bool] | None:
    """(identifier, is a string header) of a column path, or None if no selector can name it."""
    if len(attribute) != 1:
        return None
    name = attribute[0]
    if name in _STRING_HEADERS:
        return _STRING_HEADERS[name], True
    if name in _INTEGER_HEADERS:
        return _INTEGER_HEADERS[name], False
    return None


def filter_to_selector(candidate: Filter, *, negated: bool = False) -> str | None:
    """Selector text keeping exactly the rows ``candidate`` keeps, or None if there is none."""
    if isinstance(candidate, Not):
        inner = filter_to_selector(candidate.child, negated=True)
        return None if inner is None else f"NOT ({inner})"
    found = _identifier(getattr(candidate, "attribute", ()))
    if found is None:
        return None
    identifier, is_string = found
    if isinstance(candidate, IsNull):
        return f"{identifier} IS NULL"
    if isinstance(candidate, IsNotNull):
        return f"{identifier} IS NOT NULL"
    value = getattr(candidate, "value", None)
    if isinstance(candidate, EqualNullSafe):
        # <=> is = except on null: equal when both are, false (not unknown) when one is. Under
        # NOT that difference keeps rows a selector would drop, so it stays with Spark there.
        if value is None:
            return f"{identifier} IS NULL"
        if negated:
            return None
        candidate = EqualTo(candidate.attribute, value)
    if is_string:
        return _string_condition(candidate, identifier, value)
    return _integer_condition(candidate, identifier, value)


def _string_condition(candidate: Filter, identifier: str, value: object) -> str | None:
    if isinstance(candidate, EqualTo) and isinstance(value, str):
        return f"{identifier} = {_string(value)}"
    if isinstance(candidate, In) and value and all(isinstance(item, str) for item in value):
        return f"{identifier} IN ({', '.join(_string(item) for item in value)})"
    if isinstance(value, str):
        if isinstance(candidate, StringStartsWith):
            return f"{identifier} LIKE {_like(value, '', '%')}"
        if isinstance(candidate, StringEndsWith):
            return f"{identifier} LIKE {_like(value, '%', '')}"
        if isinstance(candidate, StringContains):
            return f"{identifier} LIKE {_like(value, '%', '%')}"
    return None


def _integer_condition(candidate: Filter, identifier: str, value: object) -> str | None:
    if isinstance(candidate, EqualTo) and _is_integer(value):
        return f"{identifier} = {value}"
    operator = _COMPARISONS.get(type(candidate))
    if operator is not None and _is_integer(value):
        return f"{identifier} {operator} {value}"
    if isinstance(candidate, In) and value and all(_is_integer(item) for item in value):
        # A selector's IN takes strings only; a number is in the list if it equals one of them.
        return "(" + " OR ".join(f"{identifier} = {item}" for item in value) + ")"
    return None
