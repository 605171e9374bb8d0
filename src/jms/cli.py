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


def main() -> None:
    app()
