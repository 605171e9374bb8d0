"""The oldest PySpark ``jms.spark`` runs on, checked when it is imported.

The stream reader uses the admission control of PySpark's data source API (``ReadLimit``,
``ReadMaxRows``, ``SupportsTriggerAvailableNow``), which PySpark 4.2 introduced. With an older
PySpark the import fails with one line saying which version is there and what to install, rather
than an ``ImportError`` about a class name from deep inside the data source.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MINIMUM_PYSPARK", "require_pyspark"]

MINIMUM_PYSPARK: Final = (4, 2)


def require_pyspark(version: str | None = None) -> None:
    """Raise ``ImportError`` naming ``version`` (the installed PySpark's, by default) if it is
    older than ``MINIMUM_PYSPARK``."""
    if version is None:
        import pyspark

        version = pyspark.__version__
    release = re.match(r"(\d+)\.(\d+)", version)
    if release is None or (int(release[1]), int(release[2])) < MINIMUM_PYSPARK:
        floor = ".".join(map(str, MINIMUM_PYSPARK))
        raise ImportError(
            f"jms.spark needs PySpark {floor} or newer, and PySpark {version} is installed: "
            f"pip install 'pyspark>={floor},<5' (or pip install 'jms[spark]')"
        )
