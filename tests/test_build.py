"""The build (setup.py, src/jms/_compiled.py): the broker's hot path compiled where a C compiler
is, pure Python where none is, and a compiled module older than its source refused."""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from jms._compiled import COMPILED_MODULES, compiled
from tests.cli_process import JmsBroker

_ROOT = Path(__file__).resolve().parent.parent


def _copy_of_the_source(into: Path) -> Path:
    """The project's build inputs copied to ``into``, without any compiled module."""
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(_ROOT / name, into / name)
    shutil.copytree(
        _ROOT / "src", into / "src", ignore=shutil.ignore_patterns("*.so", "__pycache__")
    )
    return into


def test_the_hot_path_is_compiled_where_the_build_has_a_compiler() -> None:
    compiler = shutil.which(sysconfig.get_config_var("CC").split()[0])
    headers = Path(sysconfig.get_paths()["include"], "Python.h").exists()
    assert compiled() == bool(compiler and headers), (
        f"compiler {compiler}, Python headers {headers}, but compiled() is {compiled()}"
    )


def test_the_broker_says_whether_its_hot_path_is_compiled() -> None:
    with JmsBroker() as broker:
        expected = "compiled" if compiled() else "interpreted (a pure Python build)"
        assert f"hot path: {expected}" in broker.startup_line


def test_every_compiled_module_exists_as_source() -> None:
    for module in COMPILED_MODULES:
        assert (_ROOT / "src" / Path(*module.split("."))).with_suffix(".py").exists(), module


def test_a_compiled_module_older_than_its_source_is_refused(tmp_path: Path) -> None:
    source = _copy_of_the_source(tmp_path) / "src"
    stale = source / "jms" / "broker" / "broker.py"
    built = stale.with_name("broker" + importlib.machinery.EXTENSION_SUFFIXES[0])
    built.write_bytes(b"")  # never loaded: the check refuses it first
    os.utime(built, (1_000_000_000, 1_000_000_000))
    result = subprocess.run(
        [sys.executable, "-c", "import jms"],
        env={**os.environ, "PYTHONPATH": str(source)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert f"ImportError: {stale} changed after it was compiled to {built}" in result.stderr
    assert "install jms again" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("broken", "why"),
    [
        ("no compiler", "the compiled modules could not be built"),
        ("a type error", "mypyc refused the compiled modules"),
    ],
)
def test_a_build_that_cannot_compile_is_pure_python(tmp_path: Path, broken: str, why: str) -> None:
    project = _copy_of_the_source(tmp_path)
    environment = dict(os.environ)
    if broken == "no compiler":
        environment["CC"] = "false"  # a compiler that fails whatever it is given
    else:
        with (project / "src" / "jms" / "broker" / "broker.py").open("a") as source:
            source.write('\n_MISTYPED: int = "text"\n')
    result = subprocess.run(
        # The build step an install runs, in place as an editable install does, with this
        # environment's mypy (the dev extra's).
        [sys.executable, "setup.py", "build_ext", "--inplace"],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert why in result.stderr
    assert "installing pure Python" in result.stderr
    assert not list((project / "src").rglob("*.so"))
