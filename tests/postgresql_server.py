"""A throwaway PostgreSQL server for the tests of the PostgreSQL store and the standby broker.

``PostgreSQLServer()`` is a context manager: on entry it ``initdb``s a fresh directory (as the
``postgres`` user when the tests run as root: the server refuses to run as root), starts the server
with ``pg_ctl`` on 127.0.0.1 at a free port with its unix socket in that directory and password
authentication, and waits until it accepts connections; on exit it stops it (``pg_ctl stop -m
immediate``) and removes the directory — always. ``database()`` creates a fresh database and
returns its ``postgresql://`` URL, so tests never see each other's stores.
``PostgreSQLServer.unavailable()`` says why it cannot run here (no binaries, no psycopg, root
without a ``postgres`` user), or None.

The server runs with ``fsync=off`` unless told otherwise: the tests kill brokers, never the
database server, so what PostgreSQL writes to its own disk is not what they check, and they run
much faster (a benchmark asks for ``fsync=True``).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Final

__all__ = ["POSTGRESQL_BIN", "PostgreSQLServer"]

POSTGRESQL_BIN: Final = Path(
    os.environ.get("JMS_TEST_POSTGRESQL_BIN", "/usr/lib/postgresql/15/bin")
)
USER: Final = "jms"
PASSWORD: Final = "jms-test-secret"
_STARTUP_ATTEMPTS: Final = 3


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgreSQLServer:
    """A running PostgreSQL on ``127.0.0.1:port`` (see the module docstring)."""

    def __init__(self, *, fsync: bool = False) -> None:
        self.fsync = fsync
        self.port = 0
        self._directory: Path | None = None
        self._databases = 0

    @staticmethod
    def unavailable() -> str | None:
        """Why a PostgreSQL server cannot be started here, or None when it can."""
        if not (POSTGRESQL_BIN / "initdb").exists():
            return f"PostgreSQL is not installed ({POSTGRESQL_BIN}/initdb missing; apt-get install postgresql)"
        try:
            import psycopg  # noqa: F401
        except ImportError:
            return "psycopg is not installed (pip install 'jms[postgresql]')"
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                return "running as root and there is no 'postgres' user to run the server as"
        return None

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def __enter__(self) -> PostgreSQLServer:
        reason = self.unavailable()
        if reason is not None:
            raise RuntimeError(reason)
        self._directory = Path(tempfile.mkdtemp(prefix="jms-postgresql-"))
        try:
            self._initdb()
            for attempt in range(_STARTUP_ATTEMPTS):
                self.port = _free_port()
                if self._start():
                    return self
                if attempt == _STARTUP_ATTEMPTS - 1:
                    raise RuntimeError(f"PostgreSQL did not start: {self._log()}")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._directory is None:
            return
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self._run("pg_ctl", "stop", "-D", str(self._data), "-m", "immediate", "-w", timeout=60)
        shutil.rmtree(self._directory, ignore_errors=True)
        self._directory = None

    def database(self) -> str:
        """A fresh, empty database on this server; its URL."""
        import psycopg

        self._databases += 1
        name = f"jms_test_{self._databases}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def terminate_sessions(self, database_url: str, pid: int | None = None) -> int:
        """``pg_terminate_backend`` every session on the database of ``database_url`` (of the
        jms process ``pid`` only, when given) but this one's; how many it ended (cutting a
        broker off its store)."""
        import psycopg

        name = database_url.rpartition("/")[2]
        application = "%" if pid is None else f"jms-store pid {pid}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            rows = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid() AND application_name LIKE %s",
                (name, application),
            ).fetchall()
        return sum(1 for (ended,) in rows if ended)

    @property
    def _data(self) -> Path:
        assert self._directory is not None
        return self._directory / "data"

    def _log(self) -> str:
        assert self._directory is not None
        log = self._directory / "server.log"
        return log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"

    def _run(self, program: str, *arguments: str, timeout: float) -> None:
        command = [str(POSTGRESQL_BIN / program), *arguments]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=timeout)

    def _initdb(self) -> None:
        assert self._directory is not None
        password_file = self._directory / "password"
        password_file.write_text(PASSWORD + "\n")
        if os.geteuid() == 0:
            postgres = pwd.getpwnam("postgres")
            for path in (self._directory, password_file):
                os.chown(path, postgres.pw_uid, postgres.pw_gid)
        try:
            self._run(
                "initdb",
                "-D",
                str(self._data),
                "-U",
                USER,
                "--auth=scram-sha-256",
                f"--pwfile={password_file}",
                "--no-sync",
                timeout=120,
            )
        except subprocess.CalledProcessError as error:
            raise RuntimeError(f"initdb failed: {error.stderr.decode(errors='replace')}") from None

    def _start(self) -> bool:
        assert self._directory is not None
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self._directory} "
            f"-c fsync={'on' if self.fsync else 'off'} -c max_connections=100"
        )
        try:
            self._run(
                "pg_ctl",
                "start",
                "-D",
                str(self._data),
                "-l",
                str(self._directory / "server.log"),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                timeout=90,
            )
        except subprocess.CalledProcessError:
            return False
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 1),
            ):
                return True
            time.sleep(0.1)
        return False
