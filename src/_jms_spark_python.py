"""``jms-spark-python``: this interpreter, for Spark's Python workers, importing PySpark from the
installed package instead of from the zip Spark puts first on their path.

Spark starts every Python process it runs (the worker daemons, the planner of a Python data
source, and the runner of each Python streaming query) with ``SPARK_HOME/python/lib/pyspark.zip``
at the head of ``PYTHONPATH``. Python compiles modules imported from a zip every time (it caches
no bytecode for them), so each such process spends most of a second compiling PySpark before it
does anything (docs/spark.md, "Python workers"). When that zip is the one inside the ``pyspark``
package this interpreter imports anyway (a pip-installed PySpark: both come from one wheel), the
code is the same, so this drops the zip from ``PYTHONPATH`` and runs this interpreter with the
arguments given: PySpark then comes from the installed package, byte-compiled. Every other entry
of ``PYTHONPATH`` (py4j, files shipped with ``--py-files``, the user's own) stays, in order; a
zip of a separate Spark distribution stays too.

A top-level module, not part of ``jms``: importing ``jms`` would cost this start-up a good part of
what it saves.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

__all__ = ["main", "without_installed_pyspark_zip"]

_ZIP_TAIL = os.path.join("python", "lib", "pyspark.zip")


def _is_installed_zip(entry: str, importable: set[str]) -> bool:
    if not entry.endswith(_ZIP_TAIL):
        return False
    package = os.path.dirname(os.path.dirname(os.path.dirname(entry)))
    return (
        os.path.basename(package) == "pyspark"
        and os.path.isfile(os.path.join(package, "__init__.py"))
        and os.path.realpath(os.path.dirname(package)) in importable
    )


def without_installed_pyspark_zip(python_path: str, importable: Iterable[str]) -> str:
    """``python_path`` without the ``pyspark.zip`` of a ``pyspark`` package that sits in one of
    the ``importable`` directories (this interpreter's ``sys.path`` without ``PYTHONPATH``)."""
    places = {os.path.realpath(place) for place in importable if place}
    return os.pathsep.join(
        entry for entry in python_path.split(os.pathsep) if not _is_installed_zip(entry, places)
    )


def main() -> None:
    python_path = os.environ.get("PYTHONPATH")
    if python_path:
        given = set(python_path.split(os.pathsep))
        os.environ["PYTHONPATH"] = without_installed_pyspark_zip(
            python_path, (place for place in sys.path if place not in given)
        )
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
