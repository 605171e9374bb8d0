"""The interpreter to give Spark's Python workers (``PYSPARK_PYTHON``): ``jms-spark-python``.

Spark puts its ``pyspark.zip`` first on the path of every Python process it starts, and Python
compiles what it imports from a zip each time: most of a second per process, paid again by every
streaming query on a Python source (its runner is a new process each time). ``jms-spark-python``
(``_jms_spark_python``) is this interpreter with that zip dropped when it is the installed PySpark's
own, so PySpark comes from the package, byte-compiled; and PySpark's own processes start as forks
of a server that has imported PySpark already, one per Spark JVM (docs/spark.md, "Python
workers").
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path
from typing import Final

__all__ = ["WORKER_PYTHON_SCRIPT", "worker_python"]

#: The console script ``pip`` installs with ``jms``, next to this interpreter.
WORKER_PYTHON_SCRIPT: Final = "jms-spark-python"


def worker_python() -> str:
    """The path of ``jms-spark-python`` installed for this interpreter (beside it, or in its
    scripts directory), to set as ``PYSPARK_PYTHON`` before a session starts; this interpreter
    itself (``sys.executable``) when the script is missing, so the workers still run the
    driver's Python."""
    for directory in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        script = directory / WORKER_PYTHON_SCRIPT
        if script.is_file() and os.access(script, os.X_OK):
            return str(script)
    return sys.executable
