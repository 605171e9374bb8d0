"""The ``jms`` command line: one typer app whose subcommands are thin shells over the library.

Each command parses its options, calls the library, and renders the result with rich; none of
them holds logic the library does not also offer to Python callers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

import jms

app = typer.Typer(
    name="jms",
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
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Jakarta Messaging in Python."""


@app.command()
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
    """``name=type:value`` (type: boolean byte short int long float double string) or
    ``name=value`` for a String, as ``--property`` takes it."""
    from jms import types

    parsers: dict[str, Callable[[str], object]] = {
        "byte": types.parse_byte,
        "short": types.parse_short,
        "int": types.parse_int,
        "long": types.parse_long,
        "float": types.parse_float,
        "double": types.parse_double,
        "string": str,
    }
    name, equals, spec = option.partition("=")
    if not equals or not name:
        raise typer.BadParameter(f"{option!r} is not name=type:value (e.g. weight=int:3000)")
    kind, colon, raw = spec.partition(":")
    if colon and kind == "boolean":
        if raw.lower() not in ("true", "false"):
            raise typer.BadParameter(f"{option!r}: a boolean is true or false")
        return name, raw.lower() == "true"
    if colon and kind in parsers:
        try:
            return name, parsers[kind](raw)
        except ValueError as error:
            raise typer.BadParameter(f"{option!r}: {error}") from None
    return name, spec


def _selector_message(properties: list[str], headers: list[str]) -> jms.Message:
    message = jms.TextMessage()
    for option in properties:
        name, value = _selector_property(option)
        try:
            message.set_object_property(name, value)
        except ValueError as error:
            raise typer.BadParameter(str(error)) from None
    for option in headers:
        name, _, text = option.partition("=")
        if name not in _SELECTOR_HEADER_SETTERS:
            raise typer.BadParameter(
                f"{name!r} is not a header a selector reads ({', '.join(_SELECTOR_HEADER_SETTERS)});"
                " any other name is a property: use --property"
            )
        setter, read = _SELECTOR_HEADER_SETTERS[name]
        try:
            getattr(message, setter)(read(text))
        except (KeyError, ValueError) as error:
            raise typer.BadParameter(f"{option!r}: bad value for {name} ({error})") from None
    return message


@app.command("selector")
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
            help="A property, name=type:value (type: boolean byte short int long float double "
            "string; name=value is a String). Repeatable.",
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
        Console(stderr=True).print(f"[red]InvalidSelectorException:[/red] {escape(str(error))}")
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
_URL_OPTION = typer.Option("--url", "-u", help="The broker, stomp://HOST:PORT.")
_USER_OPTION = typer.Option("--user", help="Login (default: anonymous).")
_PASSWORD_OPTION = typer.Option("--password", help="Password for --user.")


def _fail(message: str) -> typer.Exit:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(1)


def _destination(text: str) -> jms.Destination:
    """``queue://x``, ``topic://x``, ``/queue/x``, ``/topic/x``, or a bare name (a queue)."""
    if "://" in text:
        return jms.Destination.parse(text)
    for prefix, kind in (("/queue/", jms.Queue), ("/topic/", jms.Topic)):
        if text.startswith(prefix) and len(text) > len(prefix):
            return kind(text[len(prefix) :])
    return jms.Queue(text)


@app.command()
def broker(
    store: Annotated[
        str,
        typer.Option(
            "--store",
            help="Directory of the durable store (created if missing), or "
            "postgresql://USER:PASSWORD@HOST:PORT/DB: a PostgreSQL store, where several brokers "
            "run as one active and standbys (docs/storage.md).",
        ),
    ] = "jms-data",
    memory: Annotated[
        bool, typer.Option("--memory", help="Keep messages in memory only (no store).")
    ] = False,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="STOMP port (0: any free port).")] = 61613,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", help="TOML file: users, permissions, destination policies (docs/stomp.md)."
        ),
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            "--metrics-port", help="Serve Prometheus metrics on http://HOST:PORT/metrics."
        ),
    ] = None,
) -> None:
    """Run the broker: STOMP on HOST:PORT over the durable store, until SIGTERM or Ctrl-C."""
    import logging

    from jms.stomp.service import BrokerOptions, run
    from jms.store.location import is_postgresql_url

    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    options = BrokerOptions(
        store=None if memory else (store if is_postgresql_url(store) else Path(store)),
        host=host,
        port=port,
        config=config,
        metrics_port=metrics_port,
    )
    try:
        run(options, announce=lambda line: print(line, flush=True))
    except (ValueError, jms.JMSException, OSError) as error:
        raise _fail(str(error)) from None


@app.command("hash-password")
def hash_password_command(
    scheme: Annotated[
        str, typer.Option("--scheme", help="scrypt (default) or pbkdf2_sha256.")
    ] = "scrypt",
) -> None:
    """Print a salted hash of a password (asked for twice), for a user in a broker config."""
    from jms.broker.security import hash_password

    password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        typer.echo(hash_password(password, scheme=scheme))
    except ValueError as error:
        raise _fail(str(error)) from None


def _connect(url: str, user: str | None, password: str | None) -> jms.Connection:
    try:
        return jms.ConnectionFactory(url).create_connection(user, password)
    except jms.JMSException as error:
        raise _fail(str(error)) from None


@app.command()
def send(
    destination: Annotated[str, typer.Argument(help="queue://NAME, topic://NAME or a queue name.")],
    body: Annotated[
        str | None,
        typer.Argument(help="Text body; {n} is replaced by the message number. Default: stdin."),
    ] = None,
    count: Annotated[int, typer.Option("--count", "-n", min=1, help="How many messages.")] = 1,
    properties: Annotated[
        list[str] | None,
        typer.Option(
            "--property",
            "-p",
            metavar="NAME=TYPE:VALUE",
            help="A property (as for jms selector). Repeatable.",
        ),
    ] = None,
    non_persistent: Annotated[
        bool, typer.Option("--non-persistent", help="Send NON_PERSISTENT (default PERSISTENT).")
    ] = False,
    priority: Annotated[int, typer.Option("--priority", min=0, max=9)] = 4,
    ttl_ms: Annotated[int, typer.Option("--ttl-ms", min=0, help="Time to live, 0 for ever.")] = 0,
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
) -> None:
    """Send text messages to a queue or topic (a progress bar when sending many)."""
    import sys

    from rich.progress import Progress

    target = _destination(destination)
    text = sys.stdin.read() if body is None else body
    typed = [_selector_property(option) for option in properties or []]
    with _connect(url, user, password) as connection:
        session = connection.create_session()
        producer = session.create_producer(target)
        producer.set_delivery_mode(
            jms.DeliveryMode.NON_PERSISTENT if non_persistent else jms.DeliveryMode.PERSISTENT
        )
        producer.set_priority(priority)
        producer.set_time_to_live(ttl_ms)
        with Progress(transient=True, disable=count < 100) as progress:
            task = progress.add_task(f"sending to {target}", total=count)
            try:
                for number in range(1, count + 1):
                    message = session.create_text_message(text.replace("{n}", str(number)))
                    for name, value in typed:
                        message.set_object_property(name, value)
                    producer.send(message)
                    progress.advance(task)
            except (jms.JMSException, ValueError) as error:
                raise _fail(f"message {number}: {error}") from None
    typer.echo(f"sent {count} message(s) to {target}")


def _body_text(message: jms.Message) -> str:
    if isinstance(message, jms.TextMessage):
        return message.get_text() or ""
    if isinstance(message, jms.BytesMessage):
        return repr(message.get_body(bytes))
    body = message.get_body(object)
    return "" if body is None else repr(body)


@app.command()
def receive(
    destination: Annotated[str, typer.Argument(help="queue://NAME, topic://NAME or a queue name.")],
    count: Annotated[int, typer.Option("--count", "-n", min=1, help="Stop after this many.")] = 1,
    timeout_s: Annotated[
        float, typer.Option("--timeout", help="Stop when nothing arrives for this long (s).")
    ] = 5.0,
    selector: Annotated[str | None, typer.Option("--selector", "-s")] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Count, do not print bodies.")
    ] = False,
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
) -> None:
    """Receive (and acknowledge) messages, printing their bodies; exit 1 if none arrived."""
    from rich.progress import Progress

    source = _destination(destination)
    received = 0
    with _connect(url, user, password) as connection:
        connection.start()
        try:
            consumer = connection.create_session().create_consumer(source, selector)
        except jms.JMSException as error:
            raise _fail(str(error)) from None
        with Progress(transient=True, disable=count < 100 or not quiet) as progress:
            task = progress.add_task(f"receiving from {source}", total=count)
            while received < count:
                message = consumer.receive(max(1, int(timeout_s * 1000)))
                if message is None:
                    break
                received += 1
                progress.advance(task)
                if not quiet:
                    typer.echo(_body_text(message))
    typer.echo(f"received {received} message(s) from {source}", err=not quiet)
    if received == 0:
        raise typer.Exit(1)


@app.command()
def browse(
    queue: Annotated[str, typer.Argument(help="queue://NAME or a queue name.")],
    selector: Annotated[str | None, typer.Option("--selector", "-s")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most this many.")] = 100,
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
) -> None:
    """List the messages a queue holds, without consuming them."""
    import itertools

    from rich.console import Console
    from rich.table import Table

    target = _destination(queue)
    if not isinstance(target, jms.Queue):
        raise _fail(f"only queues can be browsed, not {target}")
    table = Table(title=f"{target}")
    for column in ("JMSMessageID", "priority", "redelivered", "properties", "body"):
        table.add_column(column, overflow="fold")
    with _connect(url, user, password) as connection:
        try:
            browser = connection.create_session().create_browser(target, selector)
            for message in itertools.islice(browser, limit):
                properties = ", ".join(
                    f"{name}={value!r}" for name, value in message.iter_properties()
                )
                table.add_row(
                    message.get_jms_message_id() or "",
                    str(message.get_jms_priority()),
                    "yes" if message.get_jms_redelivered() else "",
                    properties,
                    _body_text(message)[:80],
                )
        except jms.JMSException as error:
            raise _fail(str(error)) from None
    Console().print(table)


def _admin(url: str, user: str | None, password: str | None) -> Any:
    from jms.client.stomp_transport import parse_stomp_url
    from jms.stomp.admin import AdminClient

    try:
        host, port = parse_stomp_url(url)
        return AdminClient(host, port, user=user, password=password)
    except jms.JMSException as error:
        raise _fail(str(error)) from None


@app.command()
def stats(
    interval_s: Annotated[
        float, typer.Option("--interval", help="Seconds between the two samples rates come from.")
    ] = 1.0,
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
) -> None:
    """Queues and topic subscriptions with depth, consumers and in/out rates, in a table."""
    import time

    from rich.console import Console
    from rich.table import Table

    with _admin(url, user, password) as admin:
        try:
            first = admin.stats()
            time.sleep(max(0.0, interval_s))
            second = admin.stats()
        except jms.JMSException as error:
            raise _fail(str(error)) from None
    elapsed = max(1e-3, (second["time_ms"] - first["time_ms"]) / 1000)
    before = {row["name"]: row for row in first["destinations"]}
    table = Table(
        title=f"broker {second['broker']}: {second['connections']} connection(s)",
        caption=f"rates over {elapsed:.1f} s; temporary destinations not shown",
    )
    table.add_column("queue / subscription")
    table.add_column("topic")
    for column in (
        "depth",
        "in flight",
        "consumers",
        "in/s",
        "out/s",
        "enqueued",
        "acked",
        "DLQ'd",
    ):
        table.add_column(column, justify="right")
    rows = [r for r in second["destinations"] if not r["destination"].startswith("temp-")]
    for row in sorted(rows, key=lambda r: r["name"]):
        old = before.get(row["name"], row)
        table.add_row(
            row["name"],
            "" if row["destination"] == row["name"] else row["destination"],
            str(row["depth"]),
            str(row["in_flight"]),
            str(row["consumers"]),
            f"{(row['enqueued'] - old['enqueued']) / elapsed:.1f}",
            f"{(row['acknowledged'] - old['acknowledged']) / elapsed:.1f}",
            str(row["enqueued"]),
            str(row["acknowledged"]),
            str(row["dead_lettered"]),
        )
    Console().print(table)


@app.command()
def purge(
    queue: Annotated[str, typer.Argument(help="queue://NAME or a queue name.")],
    url: Annotated[str, _URL_OPTION] = _DEFAULT_URL,
    user: Annotated[str | None, _USER_OPTION] = None,
    password: Annotated[str | None, _PASSWORD_OPTION] = None,
) -> None:
    """Delete every message of a queue that is not delivered to a consumer right now."""
    target = _destination(queue)
    if not isinstance(target, jms.Queue):
        raise _fail(f"only queues can be purged, not {target}")
    with _admin(url, user, password) as admin:
        try:
            purged = admin.purge(target.name)
        except jms.JMSException as error:
            raise _fail(str(error)) from None
    typer.echo(f"purged {purged} message(s) from {target}")


# --- jms pipeline (the Spark pipeline; docs/spark.md "jms pipeline") ---------------------------

# The distributions of the `spark` extra: an ImportError naming one of them means the extra is
# not installed, not that the pipeline is broken.
_SPARK_EXTRA = ("pyspark", "pyarrow", "pandas", "py4j")


@app.command()
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
        bool, typer.Option("--stream", help="Consume continuously (needs --checkpoint).")
    ] = False,
    checkpoint: Annotated[
        Path | None,
        typer.Option("--checkpoint", help="Streaming checkpoint directory (restart from it)."),
    ] = None,
    until_idle: Annotated[
        bool, typer.Option("--until-idle", help="--stream: stop once everything is processed.")
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
) -> None:
    """Run a Spark job from a destination to Parquet files or to another destination.

    Without --stream it copies what the source holds now (nothing is consumed); with --stream it
    consumes, exactly once across restarts from --checkpoint, until Ctrl-C (or --until-idle).
    """
    import os
    import signal
    import sys
    import threading

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    try:
        from pyspark.sql import SparkSession

        from jms.spark.pipeline import Pipeline, check_broker, run_pipeline
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
            max_offsets_per_trigger=max_per_trigger,
        )
        check_broker(spec)
    except ValueError as error:
        raise _fail(str(error)) from None
    console = Console(stderr=True, soft_wrap=True)  # the summary stays one line in a log
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    console.print(f"[bold]jms pipeline[/bold] {source} -> {target} on {master}")
    import jms.spark

    running = SparkSession.getActiveSession()  # called from a Spark application: join it
    spark = running or (
        SparkSession.builder.master(master)
        .appName(f"jms pipeline {source} -> {target}")
        .config("spark.ui.showConsoleProgress", "false")
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


def main() -> None:
    app()
