"""Which modules of jms the build compiles (setup.py, with mypyc), and whether this one did.

The compiled modules are the same source as the interpreted ones: the broker's hot path, where
the interpreter's per-operation cost is most of the broker's time. Importing this module
(``import jms`` does, first) refuses a compiled module older than its source: in an editable
install the compiled modules sit next to the source and Python imports them instead of it, so
an edit would otherwise be silently ignored.
"""

from __future__ import annotations

import importlib.machinery
import os
from typing import Final

__all__ = ["COMPILED_MODULES", "compiled"]

COMPILED_MODULES: Final = (
    "jms.stomp.frames",
    "jms.stomp.parser",
    "jms.stomp.packed",
    "jms.stomp.negotiation",
    "jms.stomp.connection",
    "jms.stomp.mapping",
    "jms.stomp.server",
    "jms.broker.broker",
    "jms.broker.consumer",
    "jms.broker.delivery",
    "jms.broker.destination",
    "jms.broker.memory",
    "jms.broker.message_queue",
    "jms.broker.stats",
    "jms.broker.subscription",
    "jms.message.codec",
)

# A wheel's files are written one after another at install time: a source may be a little newer
# than its compiled module without being edited.
_INSTALL_SLACK_SECONDS: Final = 5.0
_PACKAGE_DIR: Final = os.path.dirname(os.path.abspath(__file__))


def _paths(module: str) -> tuple[str, list[str]]:
    """The source of ``module`` and the compiled modules built from it, found next to it."""
    stem = os.path.join(_PACKAGE_DIR, *module.split(".")[1:])
    built = [
        stem + suffix
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
        if os.path.exists(stem + suffix)
    ]
    return stem + ".py", built


def compiled() -> bool:
    """True when this jms runs its compiled modules (the build could compile them)."""
    return all(_paths(module)[1] for module in COMPILED_MODULES)


def _check_not_stale() -> None:
    """Raise ImportError when a compiled module is older than its source."""
    for module in COMPILED_MODULES:
        source, built = _paths(module)
        if not built or not os.path.exists(source):
            continue
        if os.path.getmtime(source) > os.path.getmtime(built[0]) + _INSTALL_SLACK_SECONDS:
            raise ImportError(
                f"{source} changed after it was compiled to {built[0]}, which Python would "
                "import instead of it: install jms again (pip install -e .) to compile the "
                "change, or with JMS_PURE_PYTHON=1 set for a pure Python build"
            )


_check_not_stale()
