"""The ``jms`` command line: one typer app whose subcommands are thin shells over the library.

Each command parses its options, calls the library, and renders the result with rich; none of
them holds logic the library does not also offer to Python callers.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

import jms
from jms.cli_render import body_bytes, body_text, message_json, properties_text, stats_rows
from jms.stomp.tls import ClientCertificates, ServerTls
from jms.types import PROPERTY_TYPE_NAMES


class _FlagHelp:
    """Typer shows its own ``--help`` with the value placeholder ``<bool>``; a flag takes none."""

    def get_help_option(self, ctx: typer.Context) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = ""
        return option


class _Command(_FlagHelp, TyperCommand):
    pass


class _Group(_FlagHelp, TyperGroup):
    pass


app = typer.Typer(
    name="jms",
    cls=_Group,
    help="Jakarta Messaging in Python: message model, selectors, broker, Spark pipeline.",
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"jms {jms.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        metavar="",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Jakarta Messaging in Python."""


@app.command(cls=_Command)
def demo() -> None:
    """A short tour: typed messages, the codec, and a selector filtering them."""
    from rich.console import Console
    from rich.table import Table

    from jms.message import MapMessage, Queue, TextMessage
    from jms.message.codec import decode, encode
    from jms.selector import Selector

    console = Console()
    orders = []
    for number, (kind, color, weight) in enumerate(
        [
            ("car", "blue", 3000),
            ("car", "red", 2800),
            ("truck", "blue", 9000),
            ("car", "blue", 1200),
        ]
    ):
        order = TextMessage(f"order {number}: a {color} {kind}")
        order.set_jms_message_id(f"ID:demo-{number}")
        order.set_jms_destination(Queue("orders"))
        order.set_jms_type(kind)
        order.set_string_property("color", color)
        order.set_int_property("weight", weight)
        orders.append(order)
    summary = MapMessage()
    summary.set_int("orders", len(orders))
    summary.set_double("total_weight", float(sum(o.get_int_property("weight") for o in orders)))

    selector = Selector("JMSType = 'car' AND color = 'blue' AND weight > 2500")
    table = Table(title=f"selector: {selector.text}")
    for column in ("JMSMessageID", "JMSType", "color", "weight", "wire bytes", "matches"):
        table.add_column(column)
    for order in orders:
        wire = encode(order)
        received = decode(wire)
        table.add_row(
            received.get_jms_message_id() or "",
            received.get_jms_type() or "",
            received.get_string_property("color") or "",
            str(received.get_object_property("weight")),
            str(len(wire)),
            "[green]yes[/green]" if selector.matches(received) else "[red]no[/red]",
        )
    console.print(table)
    console.print(
        f"MapMessage summary: orders={summary.get_int('orders')}, "
        f"total_weight as String={summary.get_string('total_weight')!r} (Double.toString)"
    )


# --- how a command fails, and stops on Ctrl-C ---------------------------------------------------

# Exit status after Ctrl-C, as a shell reports a command killed by SIGINT.
_INTERRUPTED = 130
# How long ``jms receive`` waits for a message at a time (it checks for Ctrl-C in between).
_POLL_MS = 200


def _fail(message: str, status: int = 1) -> typer.Exit:
    """Print ``error: message`` on one line of stderr; the exit to raise."""
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, soft_wrap=True, highlight=False, emoji=False).print(
        f"[red]error:[/red] {escape(message)}"
    )
    return typer.Exit(status)


@contextmanager
def _ctrl_c() -> Iterator[threading.Event]:
    """An event Ctrl-C sets, for a command to stop at its next safe point (between messages, not
    inside a commit) and say what it did; a second Ctrl-C interrupts at once."""
    import signal

    pressed = threading.Event()

    def press(signum: int, frame: object) -> None:
        if pressed.is_set():
            raise KeyboardInterrupt
        pressed.set()

    previous = signal.signal(signal.SIGINT, press)
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)


def _usage(message: str) -> typer.Exit:
    """A bad argument or option value: ``_fail`` with exit status 2, as for a usage error."""
    return _fail(message, 2)


def _interrupted(done: str) -> typer.Exit:
    """What a command did before Ctrl-C, on stderr; the exit to raise."""
    typer.echo(f"interrupted: {done}", err=True)
    return typer.Exit(_INTERRUPTED)


# --- jms selector ------------------------------------------------------------------------------

# How --header sets each header a selector can read: the setter and how to read the text.
_SELECTOR_HEADER_SETTERS: dict[str, tuple[str, Callable[[str], object]]] = {
    "JMSMessageID": ("set_jms_message_id", str),
    "JMSType": ("set_jms_type", str),
    "JMSCorrelationID": ("set_jms_correlation_id", str),
    "JMSPriority": ("set_jms_priority", int),
    "JMSTimestamp": ("set_jms_timestamp", int),
    "JMSDeliveryMode": (
        "set_jms_delivery_mode",
        lambda text: {"PERSISTENT": 2, "NON_PERSISTENT": 1, "2": 2, "1": 1}[text.upper()],
    ),
}


def _selector_property(option: str) -> tuple[str, object]:
    """``--property``'s ``name=type:value`` (``jms.types.parse_property_assignment``)."""
    from jms import types

    try:
        return types.parse_property_assignment(option)
    except ValueError as error:
        raise _usage(f"--property {error}") from None


def _selector_message(properties: list[str], headers: list[str]) -> jms.Message:
    message = jms.TextMessage()
    for option in properties:
        name, value = _selector_property(option)
        try:
            message.set_object_property(name, value)
        except ValueError as error:
            raise _usage(f"--property {name!r}: {error}") from None
    for option in headers:
        name, _, text = option.partition("=")
        if name not in _SELECTOR_HEADER_SETTERS:
            raise _usage(
                f"--header {name!r} is not a header a selector reads ({', '.join(_SELECTOR_HEADER_SETTERS)});"
                " any other name is a property: use --property"
            )
        setter, read = _SELECTOR_HEADER_SETTERS[name]
        try:
            getattr(message, setter)(read(text))
        except (KeyError, ValueError) as error:
            raise _usage(f"--header {option!r}: bad value for {name} ({error})") from None
    return message


@app.command("selector", cls=_Command)
def selector_command(
    text: Annotated[
        str,
        typer.Argument(
            metavar="SELECTOR", help="The selector, e.g. \"JMSType = 'car' AND weight > 2500\"."
        ),
    ],
    properties: Annotated[
        list[str] | None,
        typer.Option(
            "--property",
            "-p",
            metavar="NAME=TYPE:VALUE",
            help=f"A property, name=type:value with type {PROPERTY_TYPE_NAMES} (weight=int:3000); "
            "name=value is a String. Repeatable.",
        ),
    ] = None,
    headers: Annotated[
        list[str] | None,
        typer.Option(
            "--header",
            "-H",
            metavar="NAME=VALUE",
            help="A header: JMSType, JMSMessageID or JMSCorrelationID=text, JMSPriority=0..9, "
            "JMSTimestamp=millis, JMSDeliveryMode=PERSISTENT|NON_PERSISTENT. Repeatable.",
        ),
    ] = None,
) -> None:
    """Parse a selector, print its tree, and evaluate it on one message.

    Each condition in the tree shows its own TRUE / FALSE / UNKNOWN. Exit status: 0 when the
    message matches, 1 when the selector is FALSE or UNKNOWN, 2 when it is invalid.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.tree import Tree

    from jms.selector import Selector, ast

    try:
        selector = Selector(text)
    except jms.InvalidSelectorException as error:
        Console(stderr=True, emoji=False).print(
            f"[red]InvalidSelectorException:[/red] {escape(str(error))}"
        )
        raise typer.Exit(2) from None
    message = _selector_message(properties or [], headers or [])
    shown = {
        True: "[green]TRUE[/green]",
        False: "[red]FALSE[/red]",
        None: "[yellow]UNKNOWN[/yellow]",
    }
    conditions = (
        ast.Comparison,
        ast.Between,
        ast.In,
        ast.Like,
        ast.IsNull,
        ast.Not,
        ast.And,
        ast.Or,
    )

    def label(node: ast.Expression) -> str:
        if isinstance(node, conditions):
            outcome = Selector(ast.to_text(node)).evaluate(message)
            return f"{escape(ast.describe(node))}  → {shown[outcome]}"
        return escape(ast.describe(node))

    def grow(branch: Tree, node: ast.Expression) -> None:
        for child in ast.children(node):
            grow(branch.add(label(child)), child)

    console = Console(highlight=False)
    if selector.tree is None:
        console.print("(no selector: every message matches)")
    else:
        root = Tree(label(selector.tree))
        grow(root, selector.tree)
        console.print(root)
    result = selector.evaluate(message)
    console.print(f"result: {shown[result]}")
    raise typer.Exit(0 if result is True else 1)


# --- jms broker and its STOMP clients ----------------------------------------------------------

_DEFAULT_URL = "stomp://127.0.0.1:61613"
_URL_OPTION = typer.Option(
    "--url",
    "-u",
    metavar="URL",
    envvar="JMS_URL",
    help="The broker, stomp://HOST:PORT, or stomp+ssl://HOST:PORT over TLS; "
    "failover:(URL,URL)?OPTIONS for whichever of several is active (docs/ha.md).",
)
_USER_OPTION = typer.Option(
    "--user", metavar="USER", envvar="JMS_USER", help="Login (default: anonymous)."
)
_PASSWORD_OPTION = typer.Option(
    "--password",
    metavar="PASSWORD",
    envvar="JMS_PASSWORD",
    help="Password for --user. Prefer JMS_PASSWORD, or leave it out to be asked: a command "
    "line stays in ps and in shell history.",
)
_SELECTOR_OPTION = typer.Option(
    "--selector",
    "-s",
    metavar="SELECTOR",
    help="Only the messages this SQL-92 selector matches, e.g. \"color = 'blue'\" "
    "(jms selector tries one).",
)
_CA_OPTION = typer.Option(
    "--ca",
    metavar="PEM",
    help="stomp+ssl: the CA that signed the broker's certificate (default: the system's CAs).",
)
_CERT_OPTION = typer.Option(
    "--cert", metavar="PEM", help="stomp+ssl: a client certificate to log in with (and --key)."
)
_KEY_OPTION = typer.Option("--key", metavar="PEM", help="stomp+ssl: the private key of --cert.")
_JSON_OPTION = typer.Option("--json", metavar="", help="Print JSON for scripts instead of a table.")
# Messages a bulk ``jms send`` commits per transaction: one store commit for each batch.
_SEND_BATCH = 500


_DESTINATION_FORMS = "queue://NAME, topic://NAME, /queue/NAME, /topic/NAME or a queue name"


def _destination(text: str) -> jms.Destination:
    """``queue://x``, ``topic://x``, ``/queue/x``, ``/topic/x``, or a bare name (a queue)."""
    if not text.strip():
        raise _usage(f"the destination is empty; give {_DESTINATION_FORMS}")
    try:
        if "://" in text:
            return jms.Destination.parse(text)
        for prefix, kind in (("/queue/", jms.Queue), ("/topic/", jms.Topic)):
            if text.startswith(prefix) and len(text) > len(prefix):
                return kind(text[len(prefix) :])
        return jms.Queue(text)
    except jms.InvalidDestinationException:
        raise _usage(f"{text!r} is not a destination; give {_DESTINATION_FORMS}") from None


def _check_selector(text: str | None) -> None:
    """A ``--selector`` that does not parse is a usage error, said before connecting."""
    if text is not None:
        from jms.selector import Selector

        try:
            Selector(text)
        except jms.InvalidSelectorException as error:
            raise _usage(f"--selector {text!r}: {error}") from None


def _queue(text: str, action: str) -> jms.Queue:
    target = _destination(text)
    if not isinstance(target, jms.Queue):
        raise _usage(f"only queues can be {action}, not {target}; give queue://NAME")
    return target


@app.command(cls=_Command)
def broker(
    store: Annotated[
        str,
        typer.Option(
            "--store",
            metavar="DIR|URL",
            help="Directory of the durable store (created if missing), or "
            "postgresql://USER:PASSWORD@HOST:PORT/DB: a PostgreSQL store, where several brokers "
            "run as one active and standbys (docs/storage.md).",
        ),
    ] = "jms-data",
    memory: Annotated[
        bool, typer.Option("--memory", metavar="", help="Keep messages in memory only (no store).")
    ] = False,
    host: Annotated[
        str, typer.Option("--host", metavar="ADDRESS", help="Address to listen on.")
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            "--port", metavar="PORT", min=0, max=65535, help="STOMP port (0: any free port)."
        ),
    ] = 61613,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="TOML file: users, permissions, destination policies (docs/stomp.md).",
        ),
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            "--metrics-port",
            metavar="PORT",
            min=0,
            max=65535,
            help="Serve Prometheus metrics on http://HOST:PORT/metrics.",
        ),
    ] = None,
    http_port: Annotated[
        int | None,
        typer.Option(
            "--http-port",
            help="Serve STOMP over WebSocket (ws://HOST:PORT/stomp), metrics (/metrics) and the "
            "web console (/) on one HTTP port (0: any free port).",
        ),
    ] = None,
    allow_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-origin",
            help="A site (https://app.example) whose pages may open ws://HOST:PORT/stomp; "
            "'*' for any. Repeatable. Pages of other sites are refused.",
        ),
    ] = None,
    log_level: Annotated[
        str,
        typer.Option(
            "--log-level",
            metavar="LEVEL",
            help="warning (refusals, denials, dead letters, store warnings), info (connections "
            "and ERROR frames too), debug or error.",
        ),
    ] = "warning",
    log_json: Annotated[
        bool,
        typer.Option(
            "--log-json", metavar="", help="Log one JSON object per line (for a log shipper)."
        ),
    ] = False,
    tls_cert: Annotated[
        Path | None,
        typer.Option(
            "--tls-cert", metavar="PEM", help="Certificate (chain) of a STOMP listener over TLS."
        ),
    ] = None,
    tls_key: Annotated[
        Path | None, typer.Option("--tls-key", metavar="PEM", help="Private key of --tls-cert.")
    ] = None,
    tls_port: Annotated[
        int, typer.Option("--tls-port", metavar="PORT", help="STOMP-over-TLS port (--tls-cert).")
    ] = 61614,
    tls_only: Annotated[
        bool,
        typer.Option("--tls-only", metavar="", help="No plain STOMP listener: TLS clients only."),
    ] = False,
    max_connections: Annotated[
        int,
        typer.Option(
            "--max-connections",
            metavar="N",
            min=1,
            help="Connections open at once (STOMP, TLS and WebSocket); one more gets an ERROR.",
        ),
    ] = 1000,
    connect_timeout: Annotated[
        float,
        typer.Option(
            "--connect-timeout",
            metavar="SECONDS",
            min=0.001,
            max=30.0,
            help="A connection that sends no CONNECT within this is closed (at most 30).",
        ),
    ] = 30.0,
    max_memory: Annotated[
        str | None,
        typer.Option(
            "--max-memory",
            metavar="SIZE",
            help="Memory budget for held messages (64MiB unless the --config file's max_memory "
            "says otherwise): past it, slow non-durable subscribers are closed and producers "
            "held back (docs/storage.md).",
        ),
    ] = None,
    tls_client_ca: Annotated[
        Path | None,
        typer.Option(
            "--tls-client-ca",
            metavar="PEM",
            help="The CA whose client certificates log users in (docs/stomp.md, TLS).",
        ),
    ] = None,
    tls_client_certs: Annotated[
        ClientCertificates | None,
        typer.Option(
            "--tls-client-certs",
            help="Ask clients for certificates: optional (default with --tls-client-ca) or "
            "required.",
        ),
    ] = None,
) -> None:
    """Run the broker: STOMP on HOST:PORT (and over TLS on --tls-port) over the durable store,
    until SIGTERM or Ctrl-C.

    Logs go to stderr, one line per event (docs/operations.md).
    """
    from jms.broker.memory import parse_memory_size
    from jms.stomp.service import BrokerOptions, configure_logging, run
    from jms.store.location import is_postgresql_url

    try:
        configure_logging(log_level, json_lines=log_json)
    except ValueError as error:
        raise _usage(f"--log-level: {error}") from None
    store_location: Path | str | None = None
    if not memory:
        store_location = store if is_postgresql_url(store) else Path(store)
    if isinstance(store_location, Path) and store_location.exists() and not store_location.is_dir():
        raise _usage(
            f"--store {store} is a file; give a directory for the store (it is created if missing)"
        )
    try:
        options = BrokerOptions(
            store=store_location,
            host=host,
            port=None if tls_only else port,
            config=config,
            metrics_port=metrics_port,
            http_port=http_port,
            allowed_origins=tuple(allow_origin or ()),
            tls=_server_tls(tls_cert, tls_key, tls_client_ca, tls_client_certs),
            tls_port=tls_port,
            max_connections=max_connections,
            connect_timeout_s=connect_timeout,
            max_memory=None
            if max_memory is None
            else parse_memory_size(max_memory, "--max-memory"),
        )
        run(options, announce=lambda line: print(line, flush=True))
    except (ValueError, jms.JMSException, OSError) as error:
        raise _fail(str(error)) from None


def _server_tls(
    cert: Path | None,
    key: Path | None,
    client_ca: Path | None,
    client_certificates: ClientCertificates | None,
) -> ServerTls | None:
    if cert is None or key is None:
        if cert is not None or key is not None:
            raise ValueError("a TLS listener needs both --tls-cert and --tls-key")
        if client_ca is not None or client_certificates is not None:
            raise ValueError("--tls-client-ca and --tls-client-certs need --tls-cert and --tls-key")
        return None
    if client_certificates is None:
        client_certificates = (
            ClientCertificates.NONE if client_ca is None else ClientCertificates.OPTIONAL
        )
    return ServerTls(cert, key, client_ca, client_certificates)


@app.command("hash-password", cls=_Command)
def hash_password_command(
    scheme: Annotated[
        str, typer.Option("--scheme", metavar="SCHEME", help="scrypt (default) or pbkdf2_sha256.")
    ] = "scrypt",
) -> None:
    """Print a salted hash of a password, for a user in a broker config: H=$(jms hash-password).

    Asks for the password twice on the terminal; with no terminal, reads one line from stdin.
    Only the hash goes to stdout.
    """
    import sys

    from jms.broker.security import hash_password

    if sys.stdin.isatty():
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True, err=True)
    else:
        password = sys.stdin.readline().removesuffix("\n").removesuffix("\r")
        if not password:
            raise _fail("no password on stdin; type it at a terminal or pipe one line")
    try:
        typer.echo(hash_password(password, scheme=scheme))
    except ValueError as error:
        raise _usage(f"--scheme: {error}") from None


def _password(user: str | None, password: str | None) -> str | None:
    """The password for ``user``: given, or asked for on the terminal."""
    import sys

    if user is None or password is not None:
        return password
    if not sys.stdin.isatty():
        raise _fail(
            f"--user {user} needs a password: set JMS_PASSWORD, or run at a terminal to be asked"
        )
    return typer.prompt(f"Password for {user}", hide_input=True, err=True)


def _unreachable(error: jms.JMSException, url: str) -> str:
    """The error's message, with a hint when nothing answered at ``url``."""
    if isinstance(error.linked_exception, OSError):
        return f"{error}; is `jms broker` running at {url}? (--url or JMS_URL names the broker)"
    return str(error)


def _ssl_context(
    url: str, ca: Path | None, cert: Path | None, key: Path | None
) -> ssl.SSLContext | None:
    """The TLS context a ``stomp+ssl://`` URL (or a failover URL listing one) connects with;
    None for other URLs."""
    from jms.client import client_ssl_context
    from jms.client.failover import uses_tls

    try:
        tls = uses_tls(url)
    except jms.JMSException as error:
        raise _usage(str(error)) from None
    if not tls:
        given = [name for name, path in (("--ca", ca), ("--cert", cert), ("--key", key)) if path]
        if given:
            raise _usage(f"{', '.join(given)}: for stomp+ssl:// URLs only; --url is {url}")
        return None
    try:
        return client_ssl_context(ca, cert, key)
    except ValueError as error:
        raise _usage(str(error)) from None


def _connect(
    url: str, user: str | None, password: str | None, tls: ssl.SSLContext | None
) -> jms.Connection:
    password = _password(user, password)
    try:
        return jms.ConnectionFactory(url, ssl_context=tls).create_connection(user, password)
    except jms.JMSException as error:
        raise _fail(_unreachable(error, url)) from None


def _admin(url: str, user: str | None, password: str | None, tls: ssl.SSLContext | None) -> Any:
    """An admin client of the broker at ``url``: of a failover URL, the first listed broker
    that answers (standbys do not)."""
    from jms.client.failover import broker_urls
    from jms.client.stomp_transport import parse_stomp_url
    from jms.stomp.admin import AdminClient

    password = _password(user, password)
    failure: jms.JMSException | None = None
    try:
        for broker_url in broker_urls(url):
            host, port, secure = parse_stomp_url(broker_url)
            try:
                context = tls if secure else None
                return AdminClient(host, port, user=user, password=password, ssl_context=context)
            except jms.JMSException as error:
                failure = error
    except jms.JMSException as error:  # a malformed URL
        failure = error
    assert failure is not None
    raise _fail(_unreachable(failure, url))


def _stdin_text() -> str:
    """Standard input, less the line end a shell or an editor adds (``echo hi | jms send q``
    sends ``hi``)."""
    import sys

    return sys.stdin.read().removesuffix("\n").removesuffix("\r")


def _progress(total: int) -> Any:
    """A progress bar on stderr, shown only on a terminal and for at least 100 messages: count,
    rate and ETA, within 80 columns."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text("" if speed is None else f"{speed:,.0f} msg/s")

    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(bar_width=10),
        MofNCompleteColumn(),
        RateColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=total < 100 or not console.is_terminal,
    )


@app.command(cls=_Command)
def send(
    destination: Annotated[
        str,
        typer.Argument(metavar="DESTINATION", help=f"Where to: {_DESTINATION_FORMS}."),
    ],
    body: Annotated[
        str | None,
        typer.Argument(
            metavar="BODY",
            help="Text body; {n} is replaced by the message number. Default: stdin (less its "
            "final line end).",
        ),
    ] = None,
    count: Annotated[
        int, typer.Option("--count", "-n", metavar="N", min=1, help="How many messages.")
    ] = 1,
    properties: Annotated[
        list[str] | None,
        typer.Option(
            "--property",
            "-p",
            metavar="NAME=TYPE:VALUE",
            help=f"A property, name=type:value with type {PROPERTY_TYPE_NAMES} (weight=int:3000); "
            "name=value is a String. Repeatable.",
        ),
    ] = None,
    non_persistent: Annotated[
        bool,
        typer.Option(
            "--non-persistent", metavar="", help="Send NON_PERSISTENT (default PERSISTENT)."
        ),
    ] = False,
    priority: Annotated[
        int, typer.Option("--priority", metavar="0-9", min=0, max=9, help="JMSPriority.")
    ] = 4,
    ttl_ms: Annotated[
        int, typer.Option("--ttl-ms", metavar="MS", min=0, help="Time to live, 0 for ever.")
    ] = 0,
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
    ca: Annotated[Path | None, _CA_OPTION] = None,
    cert: Annotated[Path | None, _CERT_OPTION] = None,
    key: Annotated[Path | None, _KEY_OPTION] = None,
) -> None:
    """Send text messages to a queue or topic.

    More than one message goes in transactions of 500 (one store commit each): after Ctrl-C,
    what was committed stays sent and is reported, the rest is not sent.
    """
    target = _destination(destination)
    typed = [_selector_property(option) for option in properties or []]
    text = _stdin_text() if body is None else body
    numbered = "{n}" in text
    transacted = count > 1
    sent = number = 0
    with (
        _ctrl_c() as pressed,
        _connect(url, user, password, _ssl_context(url, ca, cert, key)) as connection,
    ):
        session = connection.create_session(transacted)
        producer = session.create_producer(target)
        producer.set_delivery_mode(
            jms.DeliveryMode.NON_PERSISTENT if non_persistent else jms.DeliveryMode.PERSISTENT
        )
        producer.set_priority(priority)
        producer.set_time_to_live(ttl_ms)
        try:
            with _progress(count) as progress:
                task = progress.add_task(f"sending to {target}", total=count)
                for number in range(1, count + 1):
                    if pressed.is_set():
                        break  # the open transaction rolls back as the connection closes
                    message = session.create_text_message(
                        text.replace("{n}", str(number)) if numbered else text
                    )
                    for name, value in typed:
                        message.set_object_property(name, value)
                    producer.send(message)
                    if not transacted:
                        sent = number
                    elif number % _SEND_BATCH == 0 or number == count:
                        session.commit()
                        sent = number
                        progress.update(task, completed=number)
        except (jms.JMSException, ValueError) as error:
            raise _fail(
                f"message {number}: {error} ({sent:,} of {count:,} sent before it)"
            ) from None
    if sent < count:
        raise _interrupted(f"sent {sent:,} of {count:,} message(s) to {target}")
    typer.echo(f"sent {count:,} message(s) to {target}")


def _print_body(message: jms.Message) -> None:
    import sys

    raw = body_bytes(message)
    if raw is None:
        typer.echo(body_text(message))
    else:
        sys.stdout.buffer.write(raw + b"\n")
        sys.stdout.buffer.flush()


@app.command(cls=_Command)
def receive(
    destination: Annotated[
        str,
        typer.Argument(metavar="DESTINATION", help=f"Where from: {_DESTINATION_FORMS}."),
    ],
    count: Annotated[
        int, typer.Option("--count", "-n", metavar="N", min=1, help="Stop after this many.")
    ] = 1,
    timeout_s: Annotated[
        float,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            min=0.001,
            help="Stop when nothing arrives for this long.",
        ),
    ] = 5.0,
    selector: Annotated[str | None, _SELECTOR_OPTION] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", metavar="", help="Count, do not print bodies.")
    ] = False,
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
    ca: Annotated[Path | None, _CA_OPTION] = None,
    cert: Annotated[Path | None, _CERT_OPTION] = None,
    key: Annotated[Path | None, _KEY_OPTION] = None,
) -> None:
    """Receive (and acknowledge) messages, printing each body on a line; exit 1 if none arrived.

    A text body prints as it is, a BytesMessage's bytes as they are, a map as {a=1, b=true} and a
    stream as [1, true]. Ctrl-C reports how many were received and exits 130.
    """
    import time

    source = _destination(destination)
    _check_selector(selector)
    received = 0
    with (
        _ctrl_c() as pressed,
        _connect(url, user, password, _ssl_context(url, ca, cert, key)) as connection,
    ):
        connection.start()
        try:
            consumer = connection.create_session().create_consumer(source, selector)
        except jms.JMSException as error:
            raise _fail(str(error)) from None
        with _progress(count if quiet else 0) as progress:
            task = progress.add_task(f"receiving from {source}", total=count)
            idle_until = time.monotonic() + timeout_s
            while received < count and not pressed.is_set():
                # Short waits, so that Ctrl-C is seen between messages, never inside one.
                left_ms = int((idle_until - time.monotonic()) * 1000)
                if left_ms <= 0:
                    break
                message = consumer.receive(min(_POLL_MS, left_ms))
                if message is None:
                    continue
                idle_until = time.monotonic() + timeout_s
                received += 1
                progress.advance(task)
                if not quiet:
                    _print_body(message)
    if pressed.is_set():
        raise _interrupted(f"received {received:,} of {count:,} message(s) from {source}")
    typer.echo(f"received {received:,} message(s) from {source}", err=not quiet)
    if received == 0:
        raise typer.Exit(1)


def _print_wide(renderable: Any) -> None:
    """Print a table whole: on a terminal its long cells wrap; to a pipe or a file the lines
    are as long as the table needs, so that ``grep`` finds every name."""
    from rich.console import Console
    from rich.measure import Measurement

    # Names and values are shown as they are: no markup, no emoji codes, no highlighting.
    plain = {"markup": False, "emoji": False, "highlight": False}
    console = Console(**plain)
    if not console.is_terminal:
        unbounded = console.options.update_width(100_000)
        needed = Measurement.get(console, unbounded, renderable).maximum
        console = Console(width=max(console.width, needed), **plain)
    console.print(renderable)


def _never_held(
    target: jms.Queue, url: str, user: str | None, password: str | None, tls: ssl.SSLContext | None
) -> bool:
    """Whether no message was ever sent to ``target`` (its last sequence number is 0)."""
    with _admin(url, user, password, tls) as admin:
        try:
            return admin.last_sequence(target.name) == 0
        except jms.JMSException as error:
            raise _fail(str(error)) from None


@app.command(cls=_Command)
def browse(
    queue: Annotated[
        str, typer.Argument(metavar="QUEUE", help="queue://NAME, /queue/NAME or a queue name.")
    ],
    selector: Annotated[str | None, _SELECTOR_OPTION] = None,
    limit: Annotated[
        int, typer.Option("--limit", metavar="N", min=1, help="Show at most this many.")
    ] = 100,
    as_json: Annotated[bool, _JSON_OPTION] = False,
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
    ca: Annotated[Path | None, _CA_OPTION] = None,
    cert: Annotated[Path | None, _CERT_OPTION] = None,
    key: Annotated[Path | None, _KEY_OPTION] = None,
) -> None:
    """List the messages a queue holds, without consuming them.

    Values show in their Java forms (0.1, true); --json prints every header, the typed properties
    and the whole body. A queue that never received a message is an error (exit 1): check its
    name.
    """
    import itertools
    import json

    from rich.table import Table

    target = _queue(queue, "browsed")
    _check_selector(selector)
    password = _password(user, password)
    with _connect(url, user, password, _ssl_context(url, ca, cert, key)) as connection:
        try:
            browser = connection.create_session().create_browser(target, selector)
            messages = list(itertools.islice(browser, limit))
        except jms.JMSException as error:
            raise _fail(str(error)) from None
    if not messages and _never_held(target, url, user, password, _ssl_context(url, ca, cert, key)):
        raise _fail(
            f"{target} has never received a message (is the name right? "
            "`jms stats` lists the queues)"
        )
    if as_json:
        document = {"queue": str(target), "messages": [message_json(m) for m in messages]}
        typer.echo(json.dumps(document, ensure_ascii=False))
        return
    table = Table(title=f"{target}: {len(messages)} message(s)", title_justify="left")
    for column in ("JMSMessageID", "priority", "redelivered", "properties", "body"):
        table.add_column(column, overflow="fold")
    for message in messages:
        text = body_text(message)
        table.add_row(
            message.get_jms_message_id() or "",
            str(message.get_jms_priority()),
            "yes" if message.get_jms_redelivered() else "",
            properties_text(message),
            text if len(text) <= 80 else f"{text[:79]}…",
        )
    _print_wide(table)


@app.command(cls=_Command)
def stats(
    interval_s: Annotated[
        float,
        typer.Option(
            "--interval",
            metavar="SECONDS",
            min=0.1,
            help="Seconds between the two samples rates come from.",
        ),
    ] = 1.0,
    show_all: Annotated[
        bool,
        typer.Option(
            "--all",
            metavar="",
            help="Include internal queues (jms.spark.staging.*, jms.spark.commits.*).",
        ),
    ] = False,
    as_json: Annotated[bool, _JSON_OPTION] = False,
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
    ca: Annotated[Path | None, _CA_OPTION] = None,
    cert: Annotated[Path | None, _CERT_OPTION] = None,
    key: Annotated[Path | None, _KEY_OPTION] = None,
) -> None:
    """Queues and topic subscriptions with depth, consumers, in/out rates and counters.

    Needs the admin permission. Names are never cut: to a pipe, lines are as long as they need.
    """
    import json
    import time

    from rich.table import Table

    with _admin(url, user, password, _ssl_context(url, ca, cert, key)) as admin:
        try:
            first = admin.stats()
            time.sleep(interval_s)
            second = admin.stats()
        except jms.JMSException as error:
            raise _fail(str(error)) from None
    rows, elapsed, hidden = stats_rows(first, second, include_internal=show_all)
    if as_json:
        document = {
            "broker": second["broker"],
            "connections": second["connections"],
            "interval_s": round(elapsed, 3),
            "destinations": rows,
        }
        typer.echo(json.dumps(document, ensure_ascii=False))
        return
    caption = f"rates over {elapsed:.1f} s; temporary destinations not shown"
    if hidden:
        caption += f"; {hidden} internal queue(s) not shown (--all shows them)"
    table = Table(
        title=f"broker {second['broker']}: {second['connections']} connection(s)",
        caption=caption,
    )
    table.add_column("queue / subscription", overflow="fold")
    table.add_column("topic", overflow="fold")
    columns = ("depth", "in flight", "consumers", "in/s", "out/s", "enqueued", "acked")
    for column in (*columns, "purged", "expired", "DLQ'd"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(
            row["name"],
            "" if row["destination"] == row["name"] else row["destination"],
            f"{row['depth']:,}",
            f"{row['in_flight']:,}",
            f"{row['consumers']:,}",
            f"{row['in_per_s']:,.1f}",
            f"{row['out_per_s']:,.1f}",
            f"{row['enqueued']:,}",
            f"{row['acknowledged']:,}",
            f"{row.get('purged', 0):,}",
            f"{row['expired']:,}",
            f"{row['dead_lettered']:,}",
        )
    _print_wide(table)


@app.command(cls=_Command)
def purge(
    queue: Annotated[
        str, typer.Argument(metavar="QUEUE", help="queue://NAME, /queue/NAME or a queue name.")
    ],
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
    ca: Annotated[Path | None, _CA_OPTION] = None,
    cert: Annotated[Path | None, _CERT_OPTION] = None,
    key: Annotated[Path | None, _KEY_OPTION] = None,
) -> None:
    """Delete every message of a queue that is not delivered to a consumer right now.

    Needs the admin permission. A queue the broker does not know is an error (exit 1).
    """
    target = _queue(queue, "purged")
    with _admin(url, user, password, _ssl_context(url, ca, cert, key)) as admin:
        try:
            purged = admin.purge(target.name)
        except jms.JMSException as error:
            raise _fail(str(error)) from None
    typer.echo(f"purged {purged:,} message(s) from {target}")


# --- jms pipeline (the Spark pipeline; docs/spark.md "jms pipeline") ---------------------------

# The distributions of the `spark` extra: an ImportError naming one of them means the extra is
# not installed, not that the pipeline is broken.
_SPARK_EXTRA = ("pyspark", "pyarrow", "pandas", "py4j")


@app.command(cls=_Command)
def pipeline(
    source: Annotated[
        str,
        typer.Option("--from", help="queue://NAME, or topic://NAME with --subscription."),
    ],
    target: Annotated[
        str,
        typer.Option("--to", help="parquet:/DIR (appended to), or queue://NAME / topic://NAME."),
    ],
    selector: Annotated[
        str | None, typer.Option("--selector", "-s", help="Keep the messages it selects.")
    ] = None,
    stream: Annotated[
        bool,
        typer.Option("--stream", metavar="", help="Consume continuously (needs --checkpoint)."),
    ] = False,
    checkpoint: Annotated[
        Path | None,
        typer.Option("--checkpoint", help="Streaming checkpoint directory (restart from it)."),
    ] = None,
    until_idle: Annotated[
        bool,
        typer.Option(
            "--until-idle", metavar="", help="--stream: stop once everything is processed."
        ),
    ] = False,
    max_per_trigger: Annotated[
        int | None,
        typer.Option("--max-per-trigger", min=1, help="--stream: offsets per micro-batch at most."),
    ] = None,
    subscription: Annotated[
        str | None,
        typer.Option("--subscription", help="Durable subscription name, for a topic source."),
    ] = None,
    client_id: Annotated[
        str | None, typer.Option("--client-id", help="Client ID of that durable subscription.")
    ] = None,
    master: Annotated[
        str,
        typer.Option("--master", help="Spark master: local[*], local-cluster[...], spark://..."),
    ] = "local[*]",
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
    ca: Annotated[Path | None, _CA_OPTION] = None,
    cert: Annotated[Path | None, _CERT_OPTION] = None,
    key: Annotated[Path | None, _KEY_OPTION] = None,
) -> None:
    """Run a Spark job from a destination to Parquet files or to another destination.

    Without --stream it copies what the source holds now (nothing is consumed); with --stream it
    consumes, exactly once across restarts from --checkpoint, until Ctrl-C (or --until-idle).
    """
    import os
    import signal
    import threading

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    try:
        from pyspark.sql import SparkSession

        from jms.spark.pipeline import SESSION_SETTINGS, Pipeline, check_broker, run_pipeline
    except ImportError as error:
        missing = (error.name or "").partition(".")[0]
        if missing not in _SPARK_EXTRA:
            raise
        raise _fail(
            f"{missing} is not installed; install it with `pip install 'jms[spark]'` "
            "(from a checkout: `pip install -e '.[spark]'`)"
        ) from None

    try:
        spec = Pipeline(
            source=source,
            target=target,
            url=url,
            selector=selector,
            stream=stream,
            checkpoint=None if checkpoint is None else str(checkpoint),
            until_idle=until_idle,
            subscription_name=subscription,
            client_id=client_id,
            user=user,
            password=password,
            ca=None if ca is None else str(ca),
            cert=None if cert is None else str(cert),
            key=None if key is None else str(key),
            max_offsets_per_trigger=max_per_trigger,
        )
        check_broker(spec)
    except ValueError as error:
        raise _fail(str(error)) from None
    console = Console(stderr=True, soft_wrap=True)  # the summary stays one line in a log
    console.print(f"[bold]jms pipeline[/bold] {source} -> {target} on {master}")
    import jms.spark

    os.environ.setdefault("PYSPARK_PYTHON", jms.spark.worker_python())

    running = SparkSession.getActiveSession()  # called from a Spark application: join it
    spark = running or (
        SparkSession.builder.master(master)
        .appName(f"jms pipeline {source} -> {target}")
        .config(map=dict(SESSION_SETTINGS))
        .getOrCreate()
    )
    if running is None:
        spark.sparkContext.setLogLevel("ERROR")
    jms.spark.register(spark)
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()]
    if stream:
        columns = [TextColumn("{task.description}"), TextColumn("{task.fields[detail]}")]
    try:
        with Progress(*columns, TimeElapsedColumn(), console=console) as bar:
            task = bar.add_task(
                "streaming" if stream else "copying", total=None if stream else 1, detail=""
            )

            def show(progress: Any) -> None:
                if stream:
                    rate = "" if progress.rate is None else f", {progress.rate:,.0f} msg/s"
                    detail = f"{progress.messages:,} messages in {progress.batches} batches{rate}"
                    bar.update(task, detail=detail)
                elif progress.tasks_total:
                    bar.update(task, completed=progress.tasks_done, total=progress.tasks_total)

            result = run_pipeline(spark, spec, show, stop)
    except (ValueError, jms.JMSException) as error:
        raise _fail(str(error)) from None
    except Exception as error:  # a Spark job failure: its message says what went wrong
        raise _fail(f"the Spark job failed: {error}") from None
    finally:
        signal.signal(signal.SIGINT, previous)
        if running is None:
            spark.stop()
    rate = result.messages / result.seconds if result.seconds else 0.0
    console.print(
        f"{result.messages:,} message(s) to {target} in {result.batches} batch(es), "
        f"{result.seconds:.1f} s ({rate:,.0f} msg/s)"
    )


def _reflow_help() -> None:
    """Each command's help from its docstring, a paragraph per line, so that help wraps at the
    terminal's width: typer keeps a docstring's own line breaks after its first paragraph."""
    import inspect

    for command in app.registered_commands:
        paragraphs = (inspect.getdoc(command.callback) or "").split("\n\n")
        command.help = "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs)


_reflow_help()


def main() -> None:
    """``jms``: the app, where a usage error (typer's, or a library error that no command turned
    into a message) is one line on stderr rather than a panel or a traceback."""
    import sys

    try:
        status = app(standalone_mode=False)
    except typer.TyperException as error:
        context = getattr(error, "ctx", None)
        if type(error).__name__ == "NoArgsIsHelpError":  # a bare `jms`: its help, exit status 2
            app(["--help"], standalone_mode=False)
            status = 2
        else:
            command = context.command_path if context is not None else "jms"
            message = error.format_message() if hasattr(error, "format_message") else str(error)
            status = _fail(f"{message} (`{command} --help` lists the options)", 2).exit_code
    except typer.Abort:
        status = _fail("aborted").exit_code
    except jms.JMSException as error:
        status = _fail(f"{type(error).__name__}: {error}").exit_code
    sys.exit(status or 0)
