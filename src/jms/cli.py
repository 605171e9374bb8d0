"""The ``jms`` command line: one typer app whose subcommands are thin shells over the library.

Each command parses its options, calls the library, and renders the result with rich; none of
them holds logic the library does not also offer to Python callers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

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


def main() -> None:
    app()
