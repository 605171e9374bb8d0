"""The ``jms`` command line: one typer app whose subcommands are thin shells over the library.

Each command parses its options, calls the library, and renders the result with rich; none of
them holds logic the library does not also offer to Python callers.
"""

from __future__ import annotations

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


def main() -> None:
    app()
