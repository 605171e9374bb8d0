"""The build of jms: pyproject.toml says what jms is; this compiles the broker's hot path.

The modules ``src/jms/_compiled.py`` names are ordinary, type-annotated Python; mypyc compiles
them to C extension modules, which Python imports instead of their source. Everything else stays
interpreted. Without a C compiler (or Python's headers), or with ``JMS_PURE_PYTHON=1`` set, jms
installs as pure Python and behaves the same, slower; ``jms broker`` says at start-up which of
the two it runs.

An editable install (``pip install -e .``) puts the compiled modules next to their source in
``src/``: after editing one of them, install again (``import jms`` refuses a stale one). Where a
compiler is, tests/test_build.py fails on a build that fell back to pure Python, so a type error
in a compiled module fails the tests rather than going unnoticed.
"""

from __future__ import annotations

import ast
import glob
import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

_ROOT = os.path.dirname(os.path.abspath(__file__))


def _compiled_modules() -> tuple[str, ...]:
    """``COMPILED_MODULES`` of src/jms/_compiled.py, read without importing jms."""
    with open(os.path.join(_ROOT, "src", "jms", "_compiled.py"), encoding="utf-8") as file:
        tree = ast.parse(file.read())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "COMPILED_MODULES":
            return ast.literal_eval(node.value)
    raise RuntimeError("src/jms/_compiled.py has no COMPILED_MODULES")


_COMPILED_MODULES = _compiled_modules()


def _remove_earlier_builds() -> None:
    """Delete what an earlier editable build left in src/: a pure build must not import it, and
    a module no longer compiled must not be imported from its old build."""
    built = os.path.join(_ROOT, "src", "**", "*.so")  # jms has no other extension modules
    for path in glob.glob(built, recursive=True):
        os.remove(path)


class _BuildExtOrPure(build_ext):
    """Builds the compiled modules, or, when they cannot be built, leaves jms pure Python."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler, no headers: the pure build is whole
            _remove_earlier_builds()
            self.extensions = []
            print(
                f"jms: the compiled modules could not be built ({error}); installing pure Python",
                file=sys.stderr,
            )


def _extensions() -> list:  # type: ignore[type-arg]
    _remove_earlier_builds()
    if os.environ.get("JMS_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("jms: mypyc is not installed; installing pure Python", file=sys.stderr)
        return []
    sources = [os.path.join("src", *module.split(".")) + ".py" for module in _COMPILED_MODULES]
    # The modules they import are read for their types, not checked: they are not compiled.
    # Code the type checker deems unreachable (an attribute narrowed across a call that changes
    # it) would be compiled as such: refuse it.
    options = [
        "--follow-imports=silent",
        "--ignore-missing-imports",
        "--warn-unreachable",
        "--error-summary",
    ]
    try:
        return mypycify([*options, *sources], opt_level="3")
    except SystemExit:  # it has printed why (a type error): a user still gets a working jms
        print(
            "jms: mypyc refused the compiled modules (above); installing pure Python",
            file=sys.stderr,
        )
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": _BuildExtOrPure})
