"""Message selectors: the SQL-92 subset JMS consumers filter with, parsed, checked and compiled.

``Selector(text)`` is what applications and the provider use; ``parse(text)`` gives the checked
syntax tree (``jms.selector.ast``), the single definition of a selector's meaning that every back
end (the compiled Python predicate here, ``jms.spark``'s Column) translates. The package is pure:
it reads messages through their internal fields, imports only ``jms.types`` and ``jms.errors``
(and ``jms.message`` for typing), and must never do I/O or modify a message.
"""

from jms.errors import InvalidSelectorException
from jms.selector import ast
from jms.selector._parser import MAX_DEPTH, parse, selector_or_none
from jms.selector._selector import Selector

__all__ = ["MAX_DEPTH", "InvalidSelectorException", "Selector", "ast", "parse", "selector_or_none"]
