"""The PySpark floor: ``pyproject.toml`` and the import-time check name the same version, and an
older PySpark is refused with one line saying what to install (issue 12, 1e)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from jms.spark.version import MINIMUM_PYSPARK, require_pyspark

_PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_declared_floor_is_the_checked_one() -> None:
    extras = tomllib.loads(_PYPROJECT.read_text())["project"]["optional-dependencies"]["spark"]
    (pyspark,) = [spec for spec in extras if spec.startswith("pyspark")]
    found = re.search(r">=(\d+)\.(\d+)", pyspark)
    assert found is not None, pyspark
    assert (int(found[1]), int(found[2])) == MINIMUM_PYSPARK


@pytest.mark.parametrize("version", ["4.2.0", "4.2.1", "4.3.0", "4.10.0.dev1", "5.0.0"])
def test_releases_from_the_floor_on_are_accepted(version: str) -> None:
    require_pyspark(version)


@pytest.mark.parametrize("version", ["4.1.4", "4.0.0", "3.5.9", "nonsense"])
def test_older_releases_are_refused_saying_what_to_install(version: str) -> None:
    with pytest.raises(ImportError) as refused:
        require_pyspark(version)
    assert str(refused.value) == (
        f"jms.spark needs PySpark 4.2 or newer, and PySpark {version} is installed: "
        "pip install 'pyspark>=4.2,<5' (or pip install 'jms[spark]')"
    )
