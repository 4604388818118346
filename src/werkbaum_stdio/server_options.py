"""Options and helpers that the two MCP servers' command lines share (typer).

The human ``werkbaum`` command line is built on click directly (its help shows
exactly the metavariables it names); the servers keep typer.
"""

from __future__ import annotations

from typing import Annotated, Any, NoReturn

import typer

from werkbaum_core import __version__

EXIT_UNREADABLE = 2
"""Start-up failures of ``werkbaum-mcp`` (bad roots, backend, mirror, module set)."""

EngineOption = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help="JS executor: auto (v8 if installed, else node, else dukpy), v8, node, dukpy.",
    ),
]
FrontendOption = Annotated[
    str | None,
    typer.Option("--frontend", help="A Werkbaum checkout's frontend/src to load modules from."),
]


def fail(message: str, code: int) -> NoReturn:
    """One line on stderr, then exit with ``code``."""
    typer.echo(f"werkbaum: {message}", err=True)
    raise typer.Exit(code)


def version_option(prog: str) -> Any:
    """A ``--version`` option for a typer command: prints ``PROG VERSION`` and exits 0."""

    def show(value: bool) -> None:
        if value:
            typer.echo(f"{prog} {__version__}")
            raise typer.Exit()

    return typer.Option(
        "--version", callback=show, is_eager=True, help="Show the version and exit."
    )
