"""``jms-spark-python``: this interpreter, for Spark's Python workers, importing PySpark from the
installed package instead of from the zip Spark puts first on their path, and starting PySpark's
own processes by fork from a server that has imported PySpark already.

**The zip.** Spark starts every Python process it runs (the worker daemons, the planner of a
Python data source, and the runner of each Python streaming query) with
``SPARK_HOME/python/lib/pyspark.zip`` at the head of ``PYTHONPATH``. Python compiles modules
imported from a zip every time (it caches no bytecode for them), so each such process spends most
of a second compiling PySpark before it does anything (docs/spark.md, "Python workers"). When that
zip is the one inside the ``pyspark`` package this interpreter imports anyway (a pip-installed
PySpark: both come from one wheel), the code is the same, so this drops the zip from
``PYTHONPATH``: PySpark then comes from the installed package, byte-compiled. Every other entry of
``PYTHONPATH`` (py4j, files shipped with ``--py-files``, the user's own) stays, in order; a zip of
a separate Spark distribution stays too.

**The fork server.** Even byte-compiled, importing PySpark, Arrow and NumPy takes each of those
processes a third of a second or more, and Spark starts one per daemon kind and one for every
streaming query on a Python source. A process Spark starts as ``-m MODULE ...`` with ``MODULE``
under one of the prefixes in ``JMS_SPARK_PYTHON_FORK`` (default ``pyspark.``; empty turns this
off) is therefore run by a fork of a server process: one per Spark JVM (this process's parent),
interpreter, working directory, ``PYTHONPATH`` and interpreter settings, started by the first
such process, with PySpark and ``jms.spark.datasource`` imported, and ending after that JVM (once
the children it still serves have ended).
The forked child takes this process's standard streams, environment, working directory and
arguments and runs the module as ``python -m`` would; this process stays as Spark's handle on it:
it passes on every signal it gets and exits as the child does. Where the server cannot be used
(no ``pidfd`` on this system, a private directory that is not private, a server that failed) the
module runs here as before. Linux only, as ``pidfd`` is.

A top-level module, not part of ``jms``: importing ``jms`` would cost this start-up a good part of
what it saves. For the same reason it imports what only one side needs (the server, starting one)
where that side starts, and passes requests in a format of its own rather than JSON (whose import
alone costs a start-up ten milliseconds).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import stat
import sys
import time
import zlib
from collections.abc import Iterable

__all__ = [
    "DEFAULT_FORK_PREFIXES",
    "FORK_VARIABLE",
    "fork_server_jvm",
    "main",
    "served_jvm",
    "served_module",
    "without_installed_pyspark_zip",
]

_ZIP_TAIL = os.path.join("python", "lib", "pyspark.zip")

#: Comma-separated module prefixes whose ``-m`` processes are forked from the server; empty: none.
FORK_VARIABLE = "JMS_SPARK_PYTHON_FORK"
#: What ``FORK_VARIABLE`` means when it is not set: every process of PySpark's own.
DEFAULT_FORK_PREFIXES = "pyspark."
#: What a server imports before it serves, besides each module asked for (imported when asked).
_PRELOADED = ("pyspark.daemon", "pyspark.worker", "jms.spark.datasource")
#: A new server's imports on a loaded machine take seconds; past this the module runs here.
_SERVER_START_SECONDS = 30.0
_FORWARDED_SIGNALS = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
_REQUEST_BYTES = 1 << 20
#: A Unix socket's path is at most 107 bytes on Linux (``sun_path``, NUL-terminated).
_LONGEST_ADDRESS = 108


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


def served_module(arguments: list[str], prefixes: str) -> str | None:
    """The module of ``python -m MODULE ...`` (``arguments`` without the interpreter) when it is
    under one of the comma-separated ``prefixes``; None for anything else."""
    if len(arguments) < 2 or arguments[0] != "-m":
        return None
    module = arguments[1]
    if any(prefix and module.startswith(prefix) for prefix in prefixes.split(",")):
        return module
    return None


#: How a server's command line starts after the interpreter: ``... PLACE KEY JVM JVM_STARTED``.
_SERVE = ("-m", "_jms_spark_python", "--serve")


def served_jvm(command: list[str]) -> int | None:
    """The process ID of the JVM a fork server serves, read from the server's command line
    (``/proc/PID/cmdline`` split at its NULs, decoded); None for any other command line."""
    if tuple(command[1:4]) != _SERVE or len(command) < 8:
        return None
    return int(command[6])


def fork_server_jvm(pid: int) -> int | None:
    """The process ID of the JVM that process ``pid`` serves when it is a fork server
    (``served_jvm`` of its ``/proc/PID/cmdline``); None for any other process, or one gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as command:
            arguments = command.read().split(b"\0")
    except OSError:
        return None
    return served_jvm([os.fsdecode(argument) for argument in arguments])


def main() -> None:
    python_path = os.environ.get("PYTHONPATH")
    if python_path:
        given = set(python_path.split(os.pathsep))
        os.environ["PYTHONPATH"] = without_installed_pyspark_zip(
            python_path, (place for place in sys.path if place not in given)
        )
    arguments = sys.argv[1:]
    if served_module(arguments, os.environ.get(FORK_VARIABLE, DEFAULT_FORK_PREFIXES)):
        code = _run_by_fork(arguments)
        if code is not None:
            _exit_as(code)
    os.execv(sys.executable, [sys.executable, *arguments])


# The client: this process, as Spark started it.


def _private_directory() -> str | None:
    """This user's directory for servers' sockets, made if missing; None unless it is a real
    directory owned by this user that nobody else may enter."""
    place = os.path.join(os.environ.get("TMPDIR") or "/tmp", f"jms-spark-python-{os.getuid()}")
    try:
        os.mkdir(place, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        facts = os.lstat(place)
    except OSError:
        return None
    private = (
        stat.S_ISDIR(facts.st_mode) and facts.st_uid == os.getuid() and facts.st_mode & 0o077 == 0
    )
    return place if private else None


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/PID/stat``), which
    tells it apart from a later process given the same number."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as facts:
            line = facts.read()
    except OSError:
        return None
    return line[line.rindex(b")") + 2 :].split()[19].decode()


def _server_key(jvm: int, jvm_started: str) -> str:
    """What a server is shared by: the JVM, this interpreter, the working directory, and the
    variables that shape an interpreter and its imports when it starts (``PYTHONPATH``,
    ``PYTHONHASHSEED``, ``PYTHONUNBUFFERED``, ..., the locale)."""
    settings = sorted(
        f"{name}={value}"
        for name, value in os.environ.items()
        if (name.startswith("PYTHON") and "_" not in name and name != "PYTHONPATH")
        or name.startswith(("LANG", "LC_"))
    )
    # Spark gives some processes their path twice over; a repeated entry changes no import.
    path = dict.fromkeys(os.environ.get("PYTHONPATH", "").split(os.pathsep))
    settings.append("PYTHONPATH=" + os.pathsep.join(path))
    facts = "\0".join([os.path.realpath(sys.executable), os.getcwd(), *settings])
    return f"{jvm}-{jvm_started}-{zlib.crc32(os.fsencode(facts)):08x}"


def _run_by_fork(arguments: list[str]) -> int | None:
    """Run ``python ARGUMENTS`` as a fork of this JVM's server and return its exit code
    (negative: the signal that ended it); None when no server can run it, and nothing has run."""
    if not hasattr(os, "pidfd_open"):
        return None
    place = _private_directory()
    jvm = os.getppid()
    jvm_started = _start_time(jvm)
    if place is None or jvm_started is None:
        return None
    try:  # nothing has run yet: any failure here leaves the module to run in this process
        key = _server_key(jvm, jvm_started)
        failed = os.path.join(place, f"{key}.failed")
        address = os.path.join(place, f"{key}.sock")
        if os.path.exists(failed) or len(os.fsencode(address)) >= _LONGEST_ADDRESS:
            return None
        connection = _connect(address)
        if connection is None:
            started = _start_server(place, key, jvm, jvm_started)
            if started == b"ready\n":
                connection = _connect(address)
            elif started == b"busy\n":  # another server is starting for this key
                connection = _connect(address, time.monotonic() + _SERVER_START_SECONDS)
    except OSError:
        return None
    code = None if connection is None else _run_through(connection, arguments)
    if code is None:
        with contextlib.suppress(OSError):
            open(failed, "ab").close()  # this JVM's processes run as before from now on
    return code


def _connect(address: str, deadline: float | None = None) -> socket.socket | None:
    """A connection to the server at ``address``, trying until ``deadline`` (once without)."""
    while True:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            connection.connect(address)
            return connection
        except OSError:
            connection.close()
            if deadline is None or time.monotonic() >= deadline:
                return None
            time.sleep(0.01)


def _start_server(place: str, key: str, jvm: int, jvm_started: str) -> bytes:
    """Start this key's server, detached, and return what it said: ``ready``, or ``busy`` when
    another server has the key (one started at the same moment), or nothing when it failed."""
    import subprocess

    command = [sys.executable, *_SERVE, place, key, str(jvm), jvm_started]
    with open(os.path.join(place, f"{key}.log"), "ab") as log:
        started = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
        )
    assert started.stdout is not None
    with started.stdout as ready:
        started.wait()  # the first process forks the server and ends at once
        with selectors.DefaultSelector() as selector:
            selector.register(ready, selectors.EVENT_READ)
            if not selector.select(_SERVER_START_SECONDS):
                return b""
        return os.read(ready.fileno(), 16)


def _request(arguments: list[str]) -> bytes:
    """``arguments``, this process's working directory and environment, NUL-separated (none of
    them can hold a NUL)."""
    fields = [
        os.getcwd(),
        str(len(arguments)),
        *arguments,
        *(f"{name}={value}" for name, value in os.environ.items()),
    ]
    return b"\0".join(map(os.fsencode, fields))


def _run_through(connection: socket.socket, arguments: list[str]) -> int | None:
    with connection:
        try:
            socket.send_fds(connection, [_request(arguments)], [0, 1, 2])
            reply = connection.recv(64)
        except OSError:
            return None
        if not reply.startswith(b"pid "):
            return None  # the server refused or failed before forking: nothing ran
        # From here on the child runs: whatever happens, this process must not run it again.
        child = int(reply[4:])
        try:
            handle: int | None = os.pidfd_open(child)
        except OSError:
            handle = None  # ended already (the server still reports how), or no descriptor left

        def pass_on(number: int, _frame: object) -> None:
            if handle is not None:
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(handle, number)

        for number in _FORWARDED_SIGNALS:
            signal.signal(number, pass_on)
        try:
            reply = connection.recv(64)
        except OSError:
            reply = b""
    if reply.startswith(b"exit "):
        return int(reply[5:])
    # The server ended before its child: wait for the child, whose exit code only it could tell.
    if handle is not None:
        with selectors.DefaultSelector() as selector:
            selector.register(handle, selectors.EVENT_READ)
            selector.select()
    print(f"jms-spark-python: the fork server ended before its process {child}", file=sys.stderr)
    return 1


def _exit_as(code: int) -> None:
    """Exit as the child did: with its status, or killed by the same signal."""
    sys.stdout.flush()
    sys.stderr.flush()
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code
    os._exit(code)


# The server: one process per key, forking a child for every request.


class _Request:
    __slots__ = ("arguments", "directory", "environment", "streams")

    def __init__(self, message: bytes, streams: list[int]) -> None:
        fields = [os.fsdecode(field) for field in message.split(b"\0")]
        count = int(fields[1])
        if count < 2 or fields[2] != "-m" or len(fields) < 2 + count:
            raise ValueError("not a request to run a module")
        self.directory = fields[0]
        self.arguments = fields[2 : 2 + count]
        self.environment = dict(field.split("=", 1) for field in fields[2 + count :])
        self.streams = streams

    def modules(self) -> list[str]:
        """The module ``-m`` runs, and the worker module a PySpark daemon is asked to fork."""
        module = self.arguments[1]
        return [module, *(self.arguments[2:3] if module == "pyspark.daemon" else [])]


class _Child:
    __slots__ = ("connection", "handle", "pid")

    def __init__(self, pid: int, connection: socket.socket) -> None:
        self.pid = pid
        self.handle = os.pidfd_open(pid)
        self.connection = connection


def _serve(place: str, key: str, jvm: int, jvm_started: str) -> _Request | None:
    """Serve this key until its JVM and every child have ended (None), or return, in a forked
    child, its request."""
    import fcntl

    if os.fork():
        os._exit(0)  # detached: the client that started the server reaps this process at once
    lock = os.open(os.path.join(place, f"{key}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.write(1, b"busy\n")  # another server has this key
        os._exit(0)
    if _start_time(jvm) != jvm_started:
        os._exit(0)
    jvm_handle = os.pidfd_open(jvm)
    _import_quietly(_PRELOADED)
    address = os.path.join(place, f"{key}.sock")
    if os.path.exists(address):
        os.unlink(address)  # a server that was killed: the lock is this one's now
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(address)
    listener.listen(64)
    os.write(1, b"ready\n")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.close(null)

    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(jvm_handle, selectors.EVENT_READ, "jvm")
    children: set[_Child] = set()
    serving = True
    while serving or children:
        for ready, _events in selector.select():
            what = ready.data
            if what == "accept":
                accepted = _accept(listener)
                if accepted is None:
                    continue
                connection, request = accepted
                _import_quietly(request.modules())
                sys.stderr.flush()
                try:
                    pid = os.fork()
                except OSError:  # its client, told nothing, runs the module itself
                    for descriptor in request.streams:
                        os.close(descriptor)
                    connection.close()
                    continue
                if pid == 0:
                    selector.close()
                    os.close(lock)
                    os.close(jvm_handle)
                    listener.close()
                    connection.close()
                    for child in children:
                        os.close(child.handle)
                        child.connection.close()
                    return request
                for descriptor in request.streams:
                    os.close(descriptor)
                child = _Child(pid, connection)
                children.add(child)
                selector.register(child.handle, selectors.EVENT_READ, ("ended", child))
                selector.register(connection, selectors.EVENT_READ, ("client", child))
                _send(connection, b"pid %d" % pid)
            elif what == "jvm":  # no more requests; the children still running are waited for
                serving = False
                selector.unregister(listener)
                selector.unregister(jvm_handle)
                listener.close()
                for name in (f"{key}.sock", f"{key}.log", f"{key}.lock"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(place, name))
            else:
                event, child = what
                if child not in children:
                    continue  # ended earlier in this round of events
                if event == "ended":
                    children.discard(child)
                    selector.unregister(child.handle)
                    if child.connection.fileno() >= 0:
                        selector.unregister(child.connection)
                    _pid, status = os.waitpid(child.pid, 0)
                    _send(child.connection, b"exit %d" % os.waitstatus_to_exitcode(status))
                    child.connection.close()
                    os.close(child.handle)
                elif not _receive(child.connection):
                    # Its client was killed: so is the child, as if the two were one process.
                    selector.unregister(child.connection)
                    child.connection.close()
                    with contextlib.suppress(ProcessLookupError):
                        signal.pidfd_send_signal(child.handle, signal.SIGKILL)
    return None


def _accept(listener: socket.socket) -> tuple[socket.socket, _Request] | None:
    try:
        connection, _address = listener.accept()
    except OSError:  # no descriptor left, say: the client finds its connection refused
        return None
    connection.settimeout(5.0)
    streams: list[int] = []
    try:
        message, streams, _flags, _address = socket.recv_fds(connection, _REQUEST_BYTES, 3)
        if len(streams) != 3:
            raise ValueError("a request passes three standard streams")
        request = _Request(message, streams)
    except (OSError, ValueError, IndexError):
        for descriptor in streams:
            os.close(descriptor)
        connection.close()
        return None
    connection.settimeout(None)
    return connection, request


def _receive(connection: socket.socket) -> bytes:
    """What a client sent (nothing is expected); empty when it has gone."""
    try:
        return connection.recv(64)
    except OSError:
        return b""


def _import_quietly(modules: Iterable[str]) -> None:
    """Import what children will import anyway; a failure is the child's to report."""
    for module in modules:
        if module not in sys.modules:
            with contextlib.suppress(BaseException):
                __import__(module)


def _send(connection: socket.socket, reply: bytes) -> None:
    with contextlib.suppress(OSError):  # its client is gone: the child is killed or reaped later
        connection.send(reply)


def _run(request: _Request) -> None:
    """In a forked child: become ``python -m MODULE ...`` as Spark started it."""
    import runpy

    for target, descriptor in enumerate(request.streams):
        os.dup2(descriptor, target)
        os.close(descriptor)
    sys.stdout.reconfigure(line_buffering=sys.stdout.isatty())  # type: ignore[union-attr]
    os.chdir(request.directory)
    os.environ.clear()
    os.environ.update(request.environment)
    sys.argv = ["-m", *request.arguments[2:]]
    module = request.arguments[1]
    sys.modules.pop(module, None)  # imported by the server; run afresh as __main__, as -m does
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__" and sys.argv[1:2] == [_SERVE[-1]]:
    _place, _key, _jvm, _jvm_started = sys.argv[2:6]
    _wanted = _serve(_place, _key, int(_jvm), _jvm_started)
    if _wanted is not None:
        _run(_wanted)
