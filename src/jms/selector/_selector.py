"""``Selector``: a message selector parsed once and compiled once, then matched many times.

This is the object consumers, browsers and subscriptions hold. It parses at construction (so a bad
selector fails where it is presented, as the spec requires), keeps the checked tree for other back
ends, and answers ``matches``/``evaluate`` with the compiled predicates. It must never parse or
compile per message, and never change a message.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jms.selector._compiler import compile_selector
from jms.selector._parser import parse
from jms.selector.ast import Expression, Identifier, IdentifierKind, children

if TYPE_CHECKING:
    from jms.message import Message

__all__ = ["Selector"]


def _always(_message: Any) -> bool:
    return True


def _never(_message: Any) -> bool:
    return False


def _property_names(tree: Expression | None) -> frozenset[str]:
    names: set[str] = set()
    pending = [] if tree is None else [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, Identifier):
            if node.kind is IdentifierKind.PROPERTY:
                names.add(node.name)
        else:
            pending.extend(children(node))
    return frozenset(names)


class Selector:
    """A JMS message selector (``Selector("JMSType = 'car' AND weight > 2500")``).

    ``None``, ``""`` or white space select every message. Invalid text raises
    ``InvalidSelectorException`` here, naming the column. Two selectors are equal when their texts
    are (``None`` counts as ``""``).
    """

    __slots__ = ("_identifiers", "_is_false", "_source", "_text", "_tree", "matches")

    #: ``matches(message) -> bool``: True when the selector is TRUE for ``message`` (FALSE and
    #: UNKNOWN do not match). It is the compiled predicate itself, not a method wrapping it, which
    #: saves a Python call on every message a consumer filters.
    matches: Callable[[Message], bool]
    _is_false: Callable[[Message], bool]

    def __init__(self, text: str | None = None) -> None:
        tree = parse(text)
        self._text = "" if text is None else text
        self._tree = tree
        self._identifiers = _property_names(tree)
        if tree is None:
            self.matches, self._is_false, self._source = _always, _never, ""
        else:
            compiled = compile_selector(tree, self._text)
            self.matches, self._is_false = compiled.is_true, compiled.is_false
            self._source = compiled.source

    @staticmethod
    @functools.lru_cache(maxsize=1024)
    def parse(text: str | None) -> Selector:
        """``Selector(text)``, cached: the same text returns the same (immutable) object."""
        return Selector(text)

    @property
    def text(self) -> str:
        """The selector text as given (``""`` for None)."""
        return self._text

    @property
    def tree(self) -> Expression | None:
        """The checked syntax tree (``jms.selector.ast``), None when the selector is empty."""
        return self._tree

    @property
    def identifiers(self) -> frozenset[str]:
        """The property names the selector reads (the six header fields are not included)."""
        return self._identifiers

    @property
    def python_source(self) -> str:
        """The generated Python source of the compiled predicates, for the curious."""
        return self._source

    def evaluate(self, message: Message) -> bool | None:
        """The three-valued result: True, False, or None for UNKNOWN."""
        if self.matches(message):
            return True
        if self._is_false(message):
            return False
        return None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Selector):
            return NotImplemented
        return self._text == other._text

    def __hash__(self) -> int:
        return hash(self._text)

    def __repr__(self) -> str:
        return f"Selector({self._text!r})"

    def __reduce__(self) -> tuple[type[Selector], tuple[str]]:
        return (Selector, (self._text,))
