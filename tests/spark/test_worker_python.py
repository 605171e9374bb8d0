"""``jms-spark-python``: Spark's Python workers import PySpark from the installed package, not
from the zip Spark puts first on their path; everything else on their path stays."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pyspark
import pytest

from _jms_spark_python import without_installed_pyspark_zip
from jms.spark import worker_python
from jms.spark.workers import WORKER_PYTHON_SCRIPT


def _installed(root: Path) -> Path:
    """A site-packages directory under ``root`` holding a pip-style ``pyspark`` package."""
    site = root / "site-packages"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (site / "pyspark" / "__init__.py").write_text("")
    (lib / "pyspark.zip").write_bytes(b"")
    return site


def test_the_zip_of_the_installed_package_is_dropped_and_every_other_entry_stays_in_order(
    tmp_path: Path,
) -> None:
    site = _installed(tmp_path)
    lib = site / "pyspark" / "python" / "lib"
    path = os.pathsep.join(
        [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip"), "/work/deps.zip", "/app"]
    )
    assert without_installed_pyspark_zip(path, [str(site)]) == os.pathsep.join(
        [str(lib / "py4j-0.10.9.9-src.zip"), "/work/deps.zip", "/app"]
    )


def test_a_zip_the_interpreter_would_not_import_otherwise_stays(tmp_path: Path) -> None:
    site = _installed(tmp_path / "elsewhere")
    zip_path = str(site / "pyspark" / "python" / "lib" / "pyspark.zip")
    # The package is not on the interpreter's own path: its zip is the only PySpark there is.
    assert without_installed_pyspark_zip(zip_path, [str(tmp_path / "other")]) == zip_path


def test_the_zip_of_a_spark_distribution_stays(tmp_path: Path) -> None:
    spark_home = tmp_path / "spark-4.0.0-bin-hadoop3"
    (spark_home / "python" / "lib").mkdir(parents=True)
    zip_path = str(spark_home / "python" / "lib" / "pyspark.zip")
    assert without_installed_pyspark_zip(zip_path, [str(tmp_path)]) == zip_path


def test_a_zip_path_without_its_package_stays(tmp_path: Path) -> None:
    (tmp_path / "pyspark" / "python" / "lib").mkdir(parents=True)  # no pyspark/__init__.py
    zip_path = str(tmp_path / "pyspark" / "python" / "lib" / "pyspark.zip")
    assert without_installed_pyspark_zip(zip_path, [str(tmp_path)]) == zip_path


def test_the_installed_package_is_recognised_through_a_symbolic_link(tmp_path: Path) -> None:
    site = _installed(tmp_path / "real")
    (tmp_path / "linked").symlink_to(site)
    zip_path = str(tmp_path / "linked" / "pyspark" / "python" / "lib" / "pyspark.zip")
    assert without_installed_pyspark_zip(f"{zip_path}{os.pathsep}/app", [str(site)]) == "/app"


def test_worker_python_is_the_installed_script_beside_this_interpreter() -> None:
    script = Path(worker_python())
    assert script.name == WORKER_PYTHON_SCRIPT, (
        f"{WORKER_PYTHON_SCRIPT} is not installed beside {sys.executable}: reinstall jms"
    )
    assert os.access(script, os.X_OK)


def _script(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / WORKER_PYTHON_SCRIPT
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    return script


def test_worker_python_looks_in_the_scripts_directory_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))
    scripts = _script(tmp_path / "scripts")
    monkeypatch.setattr(sysconfig, "get_path", lambda name: str(tmp_path / name))
    assert worker_python() == str(scripts)


def test_without_the_script_the_workers_run_this_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    interpreter = tmp_path / "bin" / "python"
    monkeypatch.setattr(sys, "executable", str(interpreter))
    monkeypatch.setattr(sysconfig, "get_path", lambda name: str(tmp_path / name))
    _script(tmp_path / "scripts").chmod(0o644)  # there, but not executable
    assert worker_python() == str(interpreter)


def test_the_script_runs_this_interpreter_with_pyspark_from_the_package() -> None:
    package = Path(pyspark.__file__).parent
    lib = package / "python" / "lib"
    zip_path = lib / "pyspark.zip"
    if not zip_path.is_file():
        pytest.skip(f"this PySpark ships no {zip_path}: nothing for the script to drop")
    # As Spark starts a worker: its zips first, then what the application added.
    kept = [*map(str, lib.glob("py4j-*.zip")), "/app"]
    spark_path = os.pathsep.join([str(zip_path), *kept])
    result = subprocess.run(
        [
            worker_python(),
            "-c",
            "import os, sys, pyspark; "
            "print(sys.executable, pyspark.__file__, os.environ['PYTHONPATH'], sep='\\n')",
        ],
        env={**os.environ, "PYTHONPATH": spark_path},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    executable, imported, python_path = result.stdout.splitlines()
    assert Path(executable).resolve() == Path(sys.executable).resolve()
    assert Path(imported).resolve() == (package / "__init__.py").resolve()
    assert python_path == os.pathsep.join(kept)
