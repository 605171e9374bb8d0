"""Operating ``jms`` (issue 15), through the real command against a real ``jms broker``: every
user error is one line naming what was wrong and what to do, with a non-zero exit and no
traceback; a damaged store is refused at start; output is whole, in Java forms, and parseable;
bulk sends are batched and Ctrl-C reports what was done; passwords need not be on the command
line; the broker logs what an operator needs, one line per event."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import socket
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import jms
from jms.broker.security import hash_password, verify_password
from jms.message.codec import encode
from jms.store.sqlite import DATABASE_NAME
from tests.cli_process import JmsBroker, jms_command, run_jms


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with JmsBroker() as broker:
        yield broker.url


def _one_line_error(result: subprocess.CompletedProcess[str], status: int, *fragments: str) -> str:
    """The single ``error: ...`` line ``result`` printed on stderr, checked."""
    assert result.returncode == status, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    (line,) = lines
    assert line.startswith("error: "), line
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _stats(url: str, *extra: str) -> dict[str, dict[str, object]]:
    result = run_jms("stats", "--json", "--interval", "0.1", "--url", url, *extra)
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)["destinations"]}


# --- errors: one line, what was wrong and what to do ------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "status", "fragments"),
    [
        (["send", "", "x"], 2, ["the destination is empty", "queue://NAME"]),
        (["browse", "queue://"], 2, ["'queue://' is not a destination", "queue://NAME"]),
        (["send", "foo://bar", "x"], 2, ["'foo://bar' is not a destination", "topic://NAME"]),
        (["purge", "topic://news"], 2, ["only queues can be purged", "topic://news"]),
        (
            ["send", "q", "x", "--property", "weight=integer:3"],
            2,
            ["unknown type 'integer'", "int, long", "weight=string:integer:3"],
        ),
        (["send", "q", "x", "--property", "weight=int:three"], 2, ["weight=int:three"]),
        (["send", "q", "x", "--property", "=3"], 2, ["is not name=type:value"]),
        (["stats", "--interval", "-1"], 2, ["--interval", "0.1", "jms stats --help"]),
        (["receive", "q", "--timeout", "0"], 2, ["--timeout"]),
        (["send"], 2, ["Missing argument 'DESTINATION'"]),
        (["browse", "never.used"], 1, ["queue://never.used has never received a message"]),
        (["purge", "never.used"], 1, ["queue://never.used does not exist", "check the name"]),
        (["receive", "q", "--selector", "a ="], 2, ["--selector 'a ='", "column 4"]),
        (["browse", "q", "--selector", "a <> "], 2, ["--selector 'a <> '"]),
    ],
)
def test_a_user_error_is_one_line_and_a_non_zero_exit(
    url: str, arguments: list[str], status: int, fragments: list[str]
) -> None:
    _one_line_error(run_jms(*arguments, "--url", url), status, *fragments)


def test_a_broker_that_is_not_running_is_named_with_what_to_check() -> None:
    down = f"stomp://127.0.0.1:{_free_port()}"
    for command in (["send", "q", "x"], ["receive", "q"], ["stats"], ["browse", "q"]):
        _one_line_error(
            run_jms(*command, "--url", down),
            1,
            f"cannot connect to {down}",
            f"is `jms broker` running at {down}?",
        )


def test_a_bad_url_is_named() -> None:
    _one_line_error(
        run_jms("send", "q", "x", "--url", "http://x"), 1, "unsupported broker URL 'http://x'"
    )
    _one_line_error(
        run_jms("stats", "--url", "http://x"), 1, "'http://x' is not a STOMP broker URL"
    )


def test_a_store_that_is_a_file_is_named(tmp_path: Path) -> None:
    store = tmp_path / "file"
    store.write_text("")
    result = run_jms("broker", "--store", str(store), "--port", "0")
    _one_line_error(result, 2, f"--store {store} is a file", "give a directory")


def test_a_busy_port_is_named_with_its_option() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        stomp = run_jms("broker", "--memory", "--port", str(port))
        metrics = run_jms("broker", "--memory", "--port", "0", "--metrics-port", str(port))
    _one_line_error(stomp, 1, f"cannot listen for STOMP on 127.0.0.1:{port}", "--port")
    _one_line_error(
        metrics, 1, f"cannot listen for metrics on 127.0.0.1:{port}", "--metrics-port", "in use"
    )


def test_a_config_value_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    config = tmp_path / "broker.toml"
    config.write_text('[[policies]]\ndestination = "queue://*"\nmax_deliveries = "five"\n')
    result = run_jms("broker", "--memory", "--port", "0", "--config", str(config))
    _one_line_error(
        result, 1, f"{config}: [[policies]] #1", 'max_deliveries = "five"', "an integer, e.g. 5"
    )


def test_an_unknown_log_level_is_named() -> None:
    result = run_jms("broker", "--memory", "--port", "0", "--log-level", "loud")
    _one_line_error(result, 2, "--log-level", "'loud'", "debug, info, warning, error")


# --- store integrity -----------------------------------------------------------------------


def _filled_store(directory: Path, messages: int) -> Path:
    """A stopped broker's store holding ``messages`` PERSISTENT 1 KiB messages on queue
    ``kept``; its database file."""
    with JmsBroker(store=directory) as broker:
        sent = run_jms("send", "kept", "x" * 1024, "--count", str(messages), "--url", broker.url)
        assert sent.returncode == 0, sent.stderr
    return directory / DATABASE_NAME


def test_a_truncated_or_damaged_store_is_refused_at_start_naming_the_file(
    tmp_path: Path,
) -> None:
    database = _filled_store(tmp_path / "store", 2000)
    whole = database.read_bytes()
    half = database.stat().st_size // 2

    database.write_bytes(whole[:half])
    line = _one_line_error(
        run_jms("broker", "--store", str(database.parent), "--port", "0"),
        1,
        f"the store file {database} is truncated",
        "restore the last backup",
        "docs/storage.md",
    )
    assert len(line) < 300, line

    database.write_bytes(b"")
    _one_line_error(
        run_jms("broker", "--store", str(database.parent), "--port", "0"),
        1,
        f"the store file {database} is empty (0 bytes)",
        "restore the last backup",
    )

    damaged = bytearray(whole)
    damaged[half : half + 8192] = b"\xff" * 8192
    database.write_bytes(bytes(damaged))
    _one_line_error(
        run_jms("broker", "--store", str(database.parent), "--port", "0"),
        1,
        f"the store file {database} is damaged",
        "restore the last backup",
    )

    database.write_bytes(whole)  # the backup restored: every message is back
    with JmsBroker(store=database.parent) as broker:
        assert _stats(broker.url)["queue://kept"]["depth"] == 2000


def _version_1_store(directory: Path, message: jms.Message) -> None:
    """A store as jms wrote it with schema version 1: ``messages`` WITHOUT ROWID and no
    ``sequences.reserved``, holding ``message`` on queue ``old``."""
    directory.mkdir()
    (directory / "jms-store.lock").touch()
    with sqlite3.connect(directory / DATABASE_NAME) as database:
        database.executescript(
            """
            CREATE TABLE destinations (name TEXT PRIMARY KEY) WITHOUT ROWID;
            CREATE TABLE subscriptions (key TEXT PRIMARY KEY, client_id TEXT, name TEXT NOT NULL,
                topic TEXT NOT NULL, selector TEXT, no_local INTEGER NOT NULL,
                shared INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE sequences (log TEXT PRIMARY KEY, last_seq INTEGER NOT NULL)
                WITHOUT ROWID;
            CREATE TABLE messages (log TEXT NOT NULL, seq INTEGER NOT NULL,
                refs INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (log, seq)) WITHOUT ROWID;
            CREATE TABLE entries (queue TEXT NOT NULL, seq INTEGER NOT NULL, log TEXT NOT NULL,
                delivery_count INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (queue, seq))
                WITHOUT ROWID;
            INSERT INTO destinations VALUES ('queue://old');
            INSERT INTO sequences VALUES ('queue://old', 1);
            INSERT INTO entries VALUES ('queue://old', 1, 'queue://old', 0);
            PRAGMA user_version = 1;
            """
        )
        database.execute("INSERT INTO messages VALUES ('queue://old', 1, 1, ?)", (encode(message),))


def test_a_store_of_schema_version_1_is_upgraded_and_keeps_its_messages(tmp_path: Path) -> None:
    message = jms.TextMessage("written by an older jms")
    message.set_jms_message_id("ID:old-1")
    message.set_jms_destination(jms.Queue("old"))
    message.set_jms_delivery_mode(jms.DeliveryMode.PERSISTENT)
    _version_1_store(tmp_path / "store", message)
    with JmsBroker("--log-level", "warning", store=tmp_path / "store") as broker:
        received = run_jms("receive", "old", "--url", broker.url)
        sent = run_jms("send", "old", "new", "--url", broker.url)
    assert received.returncode == 0 and received.stdout == "written by an older jms\n"
    assert sent.returncode == 0, sent.stderr
    assert "from schema version 1 to 4" in broker.log
    with sqlite3.connect(tmp_path / "store" / DATABASE_NAME) as database:
        assert database.execute("PRAGMA user_version").fetchone() == (4,)
        (table,) = database.execute("SELECT sql FROM sqlite_master WHERE name = 'messages'")
        assert "WITHOUT ROWID" not in table[0]


def test_a_store_of_a_newer_schema_is_refused_with_what_to_do(tmp_path: Path) -> None:
    database = _filled_store(tmp_path / "store", 1)
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA user_version = 7")
    _one_line_error(
        run_jms("broker", "--store", str(database.parent), "--port", "0"),
        1,
        f"the store file {database} has schema version 7, newer than this jms reads (4)",
        "run the jms version that wrote it",
    )


# --- output ----------------------------------------------------------------------------------

_LONG_NAME = "orders.europe.west.priority-customers.with-a-name-longer-than-eighty-columns.v2"


def test_stats_never_cuts_names_hides_internal_queues_and_counts_purges(url: str) -> None:
    for name in (_LONG_NAME, "jms.spark.staging.sink.p0", "to.purge"):
        assert run_jms("send", name, "x", "--count", "3", "--url", url).returncode == 0
    assert run_jms("receive", "to.purge", "--url", url).returncode == 0
    assert run_jms("purge", "to.purge", "--url", url).stdout == (
        "purged 2 message(s) from queue://to.purge\n"
    )

    piped = run_jms("stats", "--interval", "0.1", "--url", url)
    assert piped.returncode == 0, piped.stderr
    assert [line for line in piped.stdout.splitlines() if f"queue://{_LONG_NAME}" in line]
    assert "jms.spark.staging" not in piped.stdout
    assert "internal queue(s) not shown (--all shows them)" in piped.stdout

    rows = _stats(url)
    assert "queue://jms.spark.staging.sink.p0" not in rows
    assert rows[f"queue://{_LONG_NAME}"]["depth"] == 3
    purged = rows["queue://to.purge"]
    assert (purged["acknowledged"], purged["purged"], purged["depth"]) == (1, 2, 0)
    assert "queue://jms.spark.staging.sink.p0" in _stats(url, "--all")


def test_browse_shows_java_forms_and_json(url: str) -> None:
    sent = run_jms(
        "send",
        "forms",
        "body",
        *("-p", "f=float:0.1", "-p", "a=boolean:true", "-p", "n=long:7", "-p", "s=string:x:y [b]"),
        "--url",
        url,
    )
    assert sent.returncode == 0, sent.stderr

    table = run_jms("browse", "forms", "--url", url)
    assert table.returncode == 0, table.stderr
    assert "f=0.1, a=true, n=7, s=x:y [b]" in table.stdout
    assert "Float(" not in table.stdout and "True" not in table.stdout

    document = json.loads(run_jms("browse", "forms", "--json", "--url", url).stdout)
    (message,) = document["messages"]
    assert document["queue"] == "queue://forms"
    assert message["properties"] == {"f": 0.1, "a": True, "n": 7, "s": "x:y [b]"}
    assert message["property_types"] == {"f": "float", "a": "boolean", "n": "long", "s": "String"}
    assert (message["body"], message["JMSDeliveryMode"]) == ("body", "PERSISTENT")


def test_an_empty_queue_that_held_messages_browses_as_empty(url: str) -> None:
    assert run_jms("send", "drained", "x", "--url", url).returncode == 0
    assert run_jms("receive", "drained", "--url", url).returncode == 0
    result = run_jms("browse", "drained", "--json", "--url", url)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["messages"] == []


def test_receive_prints_bytes_maps_and_streams_in_their_own_forms(url: str) -> None:
    with jms.ConnectionFactory(url).create_connection() as connection:
        session = connection.create_session()
        producer = session.create_producer(jms.Queue("forms.bodies"))
        raw = session.create_bytes_message()
        raw.write_bytes(b"hello\x00\xff")
        producer.send(raw)
        mapped = session.create_map_message()
        mapped.set_int("a", 1)
        mapped.set_boolean("b", True)
        mapped.set_float("c", 0.1)
        producer.send(mapped)
        stream = session.create_stream_message()
        stream.write_int(1)
        stream.write_boolean(False)
        producer.send(stream)
    result = subprocess.run(
        jms_command("receive", "forms.bodies", "--count", "3", "--url", url),
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"hello\x00\xff\n{a=1, b=true, c=0.1}\n[1, false]\n"


def test_a_body_from_stdin_loses_its_final_line_end(url: str) -> None:
    assert run_jms("send", "stdin.text", "--url", url, stdin="two\nlines\n").returncode == 0
    received = run_jms("receive", "stdin.text", "--url", url)
    assert received.stdout == "two\nlines\n"  # the text, then the line receive ends it with


def test_help_is_current() -> None:
    send = run_jms("send", "--help", env={**os.environ, "COLUMNS": "200"})
    assert send.returncode == 0
    assert "boolean, byte, short, int, long, float, double or string" in send.stdout
    commands = ("demo", "selector", "broker", "hash-password", "send", "receive", "browse")
    for command in ([], *([name] for name in (*commands, "stats", "purge", "pipeline"))):
        text = run_jms(*command, "--help", env={**os.environ, "COLUMNS": "200"}).stdout
        assert "<bool>" not in text, f"a flag shows a value placeholder in jms {command} --help"
    for command in ("receive", "browse"):
        text = run_jms(command, "--help", env={**os.environ, "COLUMNS": "200"}).stdout
        selector = next(line for line in text.splitlines() if "--selector" in line)
        assert "SQL-92 selector" in selector
    narrow = run_jms("send", "--help", env={**os.environ, "COLUMNS": "200"}).stdout
    assert "transactions of 500 (one store commit each): after Ctrl-C, what was" in narrow


def test_python_dash_m_jms_works_like_jms() -> None:
    result = subprocess.run(
        [jms_command()[0], "-m", "jms", "--version"], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout) == (0, f"jms {jms.__version__}\n")


# --- long work -------------------------------------------------------------------------------


def test_a_bulk_send_is_complete_and_quiet_when_piped(url: str) -> None:
    result = run_jms("send", "bulk", "m{n}", "--count", "1200", "--url", url)
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("sent 1,200 message(s) to queue://bulk\n", "")
    assert _stats(url)["queue://bulk"]["depth"] == 1200
    received = run_jms("receive", "bulk", "--count", "1200", "--url", url)
    assert received.stdout.splitlines() == [f"m{n}" for n in range(1, 1201)]


def _interrupt_when(process: subprocess.Popen[str], ready: object, deadline_s: float) -> None:
    end = time.monotonic() + deadline_s
    while not ready():  # type: ignore[operator]
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < end, "the command never got going"
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)


def test_ctrl_c_during_send_reports_what_was_sent_and_exits_130(url: str) -> None:
    process = subprocess.Popen(
        jms_command("send", "interrupted", "x", "--count", "1000000", "--url", url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _interrupt_when(process, lambda: _stats(url).get("queue://interrupted"), 60)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    (line,) = stderr.strip().splitlines()
    sent = int(line.removeprefix("interrupted: sent ").partition(" ")[0].replace(",", ""))
    assert line == f"interrupted: sent {sent:,} of 1,000,000 message(s) to queue://interrupted"
    assert _stats(url)["queue://interrupted"]["depth"] == sent  # exactly the committed ones


def test_ctrl_c_during_receive_reports_what_was_received_and_exits_130(url: str) -> None:
    assert run_jms("send", "waiting", "x", "--url", url).returncode == 0
    process = subprocess.Popen(
        jms_command("receive", "waiting", "--count", "5", "--timeout", "60", "--url", url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _interrupt_when(process, lambda: _stats(url)["queue://waiting"]["acknowledged"], 60)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert (process.returncode, stdout) == (130, "x\n"), stderr
    assert stderr.strip() == "interrupted: received 1 of 5 message(s) from queue://waiting"


# --- secrets and logs ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def secured_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A config where alice (password "a") may do everything and bob ("b") only send to and
    receive from queue://work, which dead-letters at the first failed delivery."""
    config = tmp_path_factory.mktemp("secured") / "broker.toml"
    config.write_text(
        f'[users.alice]\npassword = "{hash_password("a")}"\n'
        f'[users.bob]\npassword = "{hash_password("b")}"\n'
        '[[permissions]]\ndestination = "queue://work"\nsend = ["alice", "bob"]\n'
        'receive = ["alice", "bob"]\nbrowse = ["alice"]\nadmin = ["alice"]\n'
        '[[permissions]]\ndestination = "*"\nsend = ["alice"]\nreceive = ["alice"]\n'
        'browse = ["alice"]\nadmin = ["alice"]\n'
        '[[policies]]\ndestination = "queue://work"\nmax_deliveries = 1\n'
    )
    return config


@pytest.fixture(scope="module")
def secured(secured_config: Path) -> Iterator[JmsBroker]:
    with JmsBroker("--config", str(secured_config)) as broker:
        yield broker


def test_a_password_comes_from_jms_password_and_is_never_required_on_the_command_line(
    secured: JmsBroker,
) -> None:
    env = {**os.environ, "JMS_PASSWORD": "b"}
    sent = run_jms("send", "work", "x", "--user", "bob", "--url", secured.url, env=env)
    assert sent.returncode == 0, sent.stderr
    _one_line_error(
        run_jms("send", "work", "x", "--user", "bob", "--url", secured.url),
        1,
        "--user bob needs a password: set JMS_PASSWORD",
    )
    _one_line_error(
        run_jms("send", "work", "x", "--user", "bob", "--password", "wrong", "--url", secured.url),
        1,
        "login 'bob' refused",
    )


def _at_a_terminal(
    arguments: list[str], answers: list[tuple[bytes, bytes]]
) -> tuple[int, str, str]:
    """``jms ARGUMENTS`` with a terminal (a pty) as stdin and stderr: each time the terminal shows
    a prompt of ``answers``, its answer is typed. Its exit status, stdout, and what the terminal
    showed."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        jms_command(*arguments),
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=terminal,
        start_new_session=True,
    )
    os.close(terminal)
    shown = b""
    try:
        for prompt, answer in answers:
            deadline = time.monotonic() + 30
            while prompt not in shown:
                assert time.monotonic() < deadline, shown
                ready, _, _ = select.select([controller], [], [], 1)
                if ready:
                    shown += os.read(controller, 4096)
            shown = shown.partition(prompt)[2]
            os.write(controller, answer + b"\n")
        stdout, _ = process.communicate(timeout=60)
        while select.select([controller], [], [], 0)[0]:  # what it showed until it ended
            try:
                shown += os.read(controller, 4096)
            except OSError:  # the terminal's last holder is gone
                break
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        os.close(controller)
    return process.returncode, stdout.decode(), shown.decode(errors="replace")


def test_a_user_without_a_password_is_asked_for_it_at_a_terminal(secured: JmsBroker) -> None:
    status, stdout, shown = _at_a_terminal(
        ["send", "work", "x", "--user", "bob", "--url", secured.url],
        [(b"Password for bob: ", b"b")],
    )
    assert (status, stdout) == (0, "sent 1 message(s) to queue://work\n")
    assert "b\r\n" not in shown  # not echoed


def test_a_progress_bar_at_a_terminal_shows_count_rate_and_eta(url: str) -> None:
    status, stdout, shown = _at_a_terminal(
        ["send", "progress", "x" * 1024, "--count", "20000", "--url", url], []
    )
    assert (status, stdout) == (0, "sent 20,000 message(s) to queue://progress\n")
    assert "sending to queue://progress" in shown
    assert re.search(r"\d+/20000", shown), shown
    assert re.search(r"[\d,]+ msg/s", shown) and "ETA" in shown, shown


def test_hash_password_asks_twice_at_a_terminal_and_prints_only_the_hash() -> None:
    status, stdout, _ = _at_a_terminal(
        ["hash-password"], [(b"Password: ", b"pw"), (b"Repeat for confirmation: ", b"pw")]
    )
    assert status == 0 and stdout.count("\n") == 1 and verify_password("pw", stdout.strip())


def test_stats_without_the_admin_permission_is_refused(secured: JmsBroker) -> None:
    env = {**os.environ, "JMS_PASSWORD": "b"}
    _one_line_error(
        run_jms("stats", "--user", "bob", "--url", secured.url, env=env),
        1,
        "user 'bob' may not see the broker's stats",
        "admin permission",
    )
    env["JMS_PASSWORD"] = "a"
    assert run_jms("stats", "--user", "alice", "--url", secured.url, env=env).returncode == 0


def test_hash_password_reads_one_line_without_a_terminal_and_prints_only_the_hash() -> None:
    result = run_jms("hash-password", stdin="s3cret\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1 and verify_password("s3cret", result.stdout.strip())
    _one_line_error(run_jms("hash-password", stdin=""), 1, "no password on stdin")
    _one_line_error(
        run_jms("hash-password", "--scheme", "md5", stdin="x\n"), 2, "--scheme", "'md5'"
    )


def test_the_broker_logs_connections_refusals_denials_and_dead_letters_as_json_lines(
    secured_config: Path,
) -> None:
    env = {**os.environ, "JMS_PASSWORD": "b"}
    with JmsBroker("--config", str(secured_config), "--log-json", "--log-level", "info") as broker:
        run_jms("send", "work", "poison", "--user", "bob", "--url", broker.url, env=env)
        run_jms("send", "elsewhere", "x", "--user", "bob", "--url", broker.url, env=env)
        run_jms("send", "work", "x", "--user", "bob", "--password", "nope", "--url", broker.url)
        with jms.ConnectionFactory(broker.url).create_connection("bob", "b") as connection:
            connection.start()
            session = connection.create_session(True)
            consumer = session.create_consumer(jms.Queue("work"))
            assert consumer.receive(5000) is not None
            session.rollback()  # the first failed delivery: dead-lettered
    events = [json.loads(line) for line in broker.log.splitlines()]
    assert all({"time", "level", "logger", "message"} <= set(event) for event in events)
    text = "\n".join(f"{e['level']} {e['message']}" for e in events)
    assert "INFO STOMP connection" in text and "opened by bob" in text and ") closed" in text
    assert "refused: login 'bob' refused" in text
    assert "user 'bob' may not send queue://elsewhere" in text
    assert "WARNING queue://work: message ID:" in text
    assert "dead-lettered to queue://DLQ.work" in text
    assert "poison" not in broker.log and '"b"' not in broker.log  # no bodies, no passwords


def test_by_default_the_log_leaves_out_connections() -> None:
    with JmsBroker() as broker:
        assert run_jms("send", "q", "x", "--url", broker.url).returncode == 0
    assert "STOMP connection" not in broker.log
