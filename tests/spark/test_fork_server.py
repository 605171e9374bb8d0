"""``jms-spark-python``'s fork server: a process Spark starts as ``-m MODULE`` runs as a fork of
one server per parent (Spark's JVM), exactly as ``python -m MODULE`` would run, and ends as it
would; the server ends with its parent. A parent process here stands in for the JVM: it starts
``jms-spark-python`` processes as Spark does (their streams on files) and waits for them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _jms_spark_python import FORK_VARIABLE, fork_server_jvm, served_jvm, served_module
from jms.spark import worker_python
from jms.spark.workers import WORKER_PYTHON_SCRIPT

pytestmark = pytest.mark.skipif(
    not hasattr(os, "pidfd_open"), reason="the fork server needs pidfd (Linux 5.3 or later)"
)

_PARENT = r"""
import json, subprocess, sys
children = {}
for line in sys.stdin:
    order = json.loads(line)
    if order[0] == "start":
        _, command, env, cwd, stdin, stdout, stderr = order
        with open(stdin, "rb") as i, open(stdout, "wb") as o, open(stderr, "wb") as e:
            child = subprocess.Popen(command, env=env, cwd=cwd, stdin=i, stdout=o, stderr=e)
        children[child.pid] = child
        print(child.pid, flush=True)
    else:
        print(children.pop(order[1]).wait(timeout=60), flush=True)
"""

_PROBE = r"""
import json, os, signal, sys, time


def _terminated(number, frame):
    print("SIGTERM received", flush=True)
    sys.exit(7)


if __name__ == "__main__":
    what = sys.argv[1]
    signal.signal(signal.SIGTERM, _terminated)
    print(json.dumps({
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "argv": sys.argv[1:],
        "cwd": os.getcwd(),
        "path0": sys.path[0],
        "value": os.environ.get("PROBE_VALUE"),
        "stdin": None if what == "sleep" else sys.stdin.read(),
        "main": __name__,
    }), flush=True)
    if what == "exit":
        sys.exit(int(sys.argv[2]))
    if what == "raise":
        raise RuntimeError("the probe failed as asked")
    if what == "sleep":
        time.sleep(60)
    if what == "die":
        os.kill(os.getpid(), signal.SIGUSR2)
    if what == "linger":
        time.sleep(float(sys.argv[2]))
        print("lingered", flush=True)
"""

_BOUND_SECONDS = 20.0


def _until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + _BOUND_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {_BOUND_SECONDS} s: {what}")
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        facts = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return facts[facts.rindex(")") + 2] != "Z"


class Parent:
    """A process that starts ``jms-spark-python`` processes, as Spark's JVM does."""

    def __init__(self, place: Path, environment: dict[str, str]) -> None:
        self.place = place
        self.environment = environment
        self.process = subprocess.Popen(
            [sys.executable, "-c", _PARENT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.launches = 0

    def _order(self, *order: object) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(order) + "\n")
        self.process.stdin.flush()
        return int(self.process.stdout.readline())

    def start(self, *arguments: str, stdin: bytes = b"", **variables: str) -> Launch:
        """``jms-spark-python ARGUMENTS`` started by this parent, with ``variables`` set."""
        self.launches += 1
        files = [self.place / f"launch-{self.launches}.{name}" for name in ("in", "out", "err")]
        files[0].write_bytes(stdin)
        pid = self._order(
            "start",
            [worker_python(), *arguments],
            {**self.environment, **variables},
            str(self.place),
            *map(str, files),
        )
        return Launch(self, pid, files[1], files[2])

    def wait(self, pid: int) -> int:
        return self._order("wait", pid)

    def __enter__(self) -> Parent:
        return self

    def __exit__(self, *_exception: object) -> None:
        """End this parent: its stdin closed, it exits (what it started lives on)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


class Launch:
    def __init__(self, parent: Parent, pid: int, out: Path, err: Path) -> None:
        self.parent = parent
        self.pid = pid
        self.out = out
        self.err = err

    def report(self) -> dict[str, Any]:
        """What the probe printed about itself, once it has."""
        _until(lambda: self.out.read_text().endswith("\n"), f"a report from {self.pid}")
        report: dict[str, Any] = json.loads(self.out.read_text().splitlines()[0])
        return report

    def wait(self) -> int:
        return self.parent.wait(self.pid)


@pytest.fixture
def temporary() -> Iterator[Path]:
    # Short, unlike pytest's own: a server's socket path must fit in 107 bytes.
    place = Path(tempfile.mkdtemp(prefix="jsp-", dir="/tmp"))
    yield place
    shutil.rmtree(place, ignore_errors=True)


@pytest.fixture
def environment(temporary: Path) -> dict[str, str]:
    # In a package, as PySpark's modules are (runpy treats those apart).
    package = temporary / "lib" / "jmsprobe"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(_PROBE)
    return {
        **os.environ,
        "PYTHONPATH": str(temporary / "lib"),
        "TMPDIR": str(temporary),
        FORK_VARIABLE: "jmsprobe",
        "PROBE_VALUE": "from the caller",
    }


@pytest.fixture
def parent(temporary: Path, environment: dict[str, str]) -> Iterator[Parent]:
    assert Path(worker_python()).name == WORKER_PYTHON_SCRIPT, "jms-spark-python is not installed"
    with Parent(temporary, environment) as started:
        yield started


def _private(temporary: Path) -> Path:
    """The directory of this user's servers under ``temporary`` (their ``TMPDIR``)."""
    return temporary / f"jms-spark-python-{os.getuid()}"


def _servers(temporary: Path) -> list[Path]:
    place = _private(temporary)
    return sorted(place.glob("*.sock")) if place.exists() else []


def test_a_server_s_command_line_names_the_jvm_it_serves() -> None:
    command = ["/venv/bin/python", "-m", "_jms_spark_python", "--serve", "/tmp/d", "k", "4242"]
    assert served_jvm([*command, "1234567", ""]) == 4242  # as /proc/PID/cmdline splits
    assert served_jvm(command) is None  # cut short
    assert served_jvm(["/venv/bin/python", "-m", "pyspark.daemon", "pyspark.worker"]) is None
    assert served_jvm([]) is None


def test_served_modules_are_those_run_with_dash_m_under_a_prefix() -> None:
    prefixes = "pyspark.,jmsprobe"
    assert served_module(["-m", "pyspark.daemon", "pyspark.worker"], prefixes) == "pyspark.daemon"
    assert served_module(["-m", "jmsprobe"], prefixes) == "jmsprobe"
    assert served_module(["-m", "pysparkling"], prefixes) is None
    assert served_module(["-c", "import pyspark"], prefixes) is None
    assert served_module(["-m"], prefixes) is None
    assert served_module(["script.py", "-m", "pyspark.daemon"], prefixes) is None
    assert served_module(["-m", "pyspark.daemon"], "") is None


def test_a_module_runs_in_a_fork_of_one_server_as_python_dash_m_would(
    parent: Parent, temporary: Path
) -> None:
    first = parent.start("-m", "jmsprobe.probe", "exit", "3", stdin=b"first input")
    second = parent.start("-m", "jmsprobe.probe", "exit", "0", stdin=b"second input")
    assert first.wait() == 3
    assert second.wait() == 0
    reports = [first.report(), second.report()]
    # One server forked both: neither runs in the process its parent started.
    assert reports[0]["ppid"] == reports[1]["ppid"]
    assert reports[0]["pid"] != first.pid and reports[1]["pid"] != second.pid
    assert fork_server_jvm(reports[0]["ppid"]) == parent.process.pid
    assert fork_server_jvm(os.getpid()) is None  # any process but a server
    assert len(_servers(temporary)) == 1
    assert first.err.read_text() == second.err.read_text() == ""
    for report, arguments, given in zip(
        reports, (["exit", "3"], ["exit", "0"]), ("first input", "second input"), strict=True
    ):
        assert report["argv"] == arguments
        assert report["stdin"] == given
        assert report["value"] == "from the caller"
        assert report["cwd"] == str(temporary)
        assert report["path0"] == str(temporary)
        assert report["main"] == "__main__"


def test_each_caller_s_own_environment_reaches_its_child(parent: Parent) -> None:
    parent.start("-m", "jmsprobe.probe", "exit", "0").wait()  # the server is up
    launch = parent.start("-m", "jmsprobe.probe", "exit", "0", PROBE_VALUE="only for this one")
    assert launch.wait() == 0
    assert launch.report()["value"] == "only for this one"


def test_an_uncaught_exception_is_printed_and_ends_the_caller_with_1(parent: Parent) -> None:
    launch = parent.start("-m", "jmsprobe.probe", "raise")
    assert launch.wait() == 1
    assert launch.report()["pid"] != launch.pid
    assert "RuntimeError: the probe failed as asked" in launch.err.read_text()


def test_a_missing_module_fails_as_python_dash_m_does(parent: Parent) -> None:
    launch = parent.start("-m", "jmsprobe.not_there")
    assert launch.wait() == 1
    assert "No module named jmsprobe.not_there" in launch.err.read_text()


def test_a_signal_to_the_caller_reaches_its_child_and_the_caller_ends_as_the_child_did(
    parent: Parent,
) -> None:
    launch = parent.start("-m", "jmsprobe.probe", "sleep")
    child = launch.report()["pid"]
    assert child != launch.pid
    os.kill(launch.pid, signal.SIGTERM)
    assert launch.wait() == 7  # the probe's own handler of SIGTERM
    assert launch.out.read_text().splitlines()[1:] == ["SIGTERM received"]
    _until(lambda: not _alive(child), f"the end of the child {child}")


def test_a_child_ended_by_a_signal_ends_its_caller_by_the_same_signal(parent: Parent) -> None:
    launch = parent.start("-m", "jmsprobe.probe", "die")
    assert launch.wait() == -signal.SIGUSR2
    assert launch.report()["pid"] != launch.pid


def test_a_caller_killed_outright_takes_its_child_with_it(parent: Parent) -> None:
    launch = parent.start("-m", "jmsprobe.probe", "sleep")
    child = launch.report()["pid"]
    os.kill(launch.pid, signal.SIGKILL)
    assert launch.wait() == -signal.SIGKILL
    _until(lambda: not _alive(child), f"the end of the child {child}")


def test_the_server_ends_with_its_parent_and_leaves_no_files(
    temporary: Path, environment: dict[str, str]
) -> None:
    with Parent(temporary, environment) as parent:
        launch = parent.start("-m", "jmsprobe.probe", "exit", "0")
        assert launch.wait() == 0
        server = launch.report()["ppid"]
        assert _alive(server)
        assert len(_servers(temporary)) == 1
    _until(lambda: not _alive(server), f"the end of the server {server}")
    assert list(_private(temporary).iterdir()) == []


def test_children_still_running_when_the_parent_ends_are_served_to_their_end(
    temporary: Path, environment: dict[str, str]
) -> None:
    with Parent(temporary, environment) as parent:
        launch = parent.start("-m", "jmsprobe.probe", "linger", "2")
        report = launch.report()
    # The parent has ended; its child, the caller, lives on, as its own child does.
    _until(lambda: launch.out.read_text().endswith("lingered\n"), "the child's last line")
    _until(lambda: not _alive(launch.pid), f"the end of the caller {launch.pid}")
    assert launch.err.read_text() == ""  # the server told the caller how its child ended
    _until(lambda: not _alive(report["ppid"]), "the end of the server")


def test_a_server_killed_outright_is_replaced_by_the_next_caller_s(
    parent: Parent, temporary: Path
) -> None:
    running = parent.start("-m", "jmsprobe.probe", "linger", "1")
    server = running.report()["ppid"]
    os.kill(server, signal.SIGKILL)
    _until(lambda: not _alive(server), f"the end of the server {server}")
    # Its child lives on; with no server to report how it ended, its caller says so and fails.
    assert running.wait() == 1
    assert running.out.read_text().endswith("lingered\n")
    assert "the fork server ended before its process" in running.err.read_text()
    launch = parent.start("-m", "jmsprobe.probe", "exit", "0")
    assert launch.wait() == 0
    assert launch.report()["ppid"] not in (server, launch.pid)  # a new server forked it
    assert len(_servers(temporary)) == 1


def test_a_second_parent_gets_a_server_of_its_own(
    temporary: Path, environment: dict[str, str]
) -> None:
    with Parent(temporary, environment) as first, Parent(temporary, environment) as second:
        servers = {
            parent.start("-m", "jmsprobe.probe", "exit", "0").report()["ppid"]
            for parent in (first, second)
        }
    assert len(servers) == 2


def test_other_interpreter_settings_get_a_server_of_their_own(parent: Parent) -> None:
    plain = parent.start("-m", "jmsprobe.probe", "exit", "0")
    hashed = parent.start("-m", "jmsprobe.probe", "exit", "0", PYTHONHASHSEED="123")
    assert plain.wait() == hashed.wait() == 0
    assert plain.report()["ppid"] != hashed.report()["ppid"]


def test_callers_starting_together_share_the_server_one_of_them_started(
    parent: Parent, temporary: Path
) -> None:
    launches = [parent.start("-m", "jmsprobe.probe", "exit", "0") for _ in range(4)]
    assert [launch.wait() for launch in launches] == [0, 0, 0, 0]
    reports = [launch.report() for launch in launches]
    assert all(
        report["pid"] != launch.pid for report, launch in zip(reports, launches, strict=True)
    )
    assert len({report["ppid"] for report in reports}) == 1
    assert len(_servers(temporary)) == 1


def test_when_the_server_cannot_start_modules_run_in_their_callers_from_then_on(
    parent: Parent, temporary: Path
) -> None:
    # The server runs as python -m _jms_spark_python in the caller's directory: this one wins.
    (temporary / "_jms_spark_python.py").write_text("raise SystemExit(3)\n")
    launches = [parent.start("-m", "jmsprobe.probe", "exit", "0") for _ in range(2)]
    assert [launch.wait() for launch in launches] == [0, 0]
    assert all(launch.report()["pid"] == launch.pid for launch in launches)
    failed = list(_private(temporary).glob("*.failed"))
    assert len(failed) == 1 and failed[0].name.startswith(f"{parent.process.pid}-")


def test_a_module_outside_the_prefixes_runs_in_the_caller(parent: Parent) -> None:
    launch = parent.start("-m", "jmsprobe.probe", "exit", "5", **{FORK_VARIABLE: "pyspark."})
    assert launch.wait() == 5
    assert launch.report()["pid"] == launch.pid


def test_an_empty_prefix_list_turns_the_server_off(parent: Parent, temporary: Path) -> None:
    launch = parent.start("-m", "jmsprobe.probe", "exit", "0", **{FORK_VARIABLE: ""})
    assert launch.wait() == 0
    assert launch.report()["pid"] == launch.pid
    assert _servers(temporary) == []


def test_a_directory_others_may_enter_is_not_used(parent: Parent, temporary: Path) -> None:
    shared = _private(temporary)
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    launch = parent.start("-m", "jmsprobe.probe", "exit", "0")
    assert launch.wait() == 0
    assert launch.report()["pid"] == launch.pid
    assert list(shared.iterdir()) == []


def test_a_socket_path_too_long_for_the_system_runs_the_module_in_the_caller(
    parent: Parent, temporary: Path
) -> None:
    deep = temporary / ("d" * 100)
    deep.mkdir()
    launch = parent.start("-m", "jmsprobe.probe", "exit", "0", TMPDIR=str(deep))
    assert launch.wait() == 0
    assert launch.report()["pid"] == launch.pid
