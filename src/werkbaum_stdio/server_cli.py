"""``werkbaum-mcp``: the stdio MCP server's command line (what an MCP host starts)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from werkbaum_core import WerkbaumError
from werkbaum_core.engine import choose_executor
from werkbaum_stdio.logs import DEFAULT_LEVEL, LogLevelOption, configure
from werkbaum_stdio.server_options import (
    EXIT_UNREADABLE,
    EngineOption,
    FrontendOption,
    fail,
    version_option,
)

server_app = typer.Typer(
    name="werkbaum-mcp",
    help="MCP server over stdio: exact, safe access to Werkbaum plans for AI agents.",
    add_completion=False,
)


@server_app.command()
def serve(
    root: Annotated[
        list[str] | None,
        typer.Option(
            "--root", help="Allowed directory (repeatable; default CLAUDE_PROJECT_DIR, else cwd)."
        ),
    ] = None,
    server: Annotated[
        list[str] | None,
        typer.Option(
            "--server", help="Werkbaum backend (repeatable; the first serves bare uuids)."
        ),
    ] = None,
    mirror: Annotated[
        list[str] | None,
        typer.Option("--mirror", help="DOCUMENT=FILE: commit each agent write to FILE in git."),
    ] = None,
    plan_glob: Annotated[
        list[str] | None,
        typer.Option(
            "--plan-glob", help="More file names that are plans, e.g. '*.plan' (repeatable)."
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Display name for changes (default: the client's).")
    ] = None,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="Offer only the read tools.")
    ] = False,
    audit_log: Annotated[
        Path | None, typer.Option("--audit-log", help="Append audit lines here instead of stderr.")
    ] = None,
    engine: EngineOption = None,
    frontend: FrontendOption = None,
    log_level: LogLevelOption = DEFAULT_LEVEL,
    version: Annotated[bool, version_option("werkbaum-mcp")] = False,
) -> None:
    """Serve MCP on stdin/stdout (stdout carries JSON-RPC only; logs go to stderr)."""
    configure(log_level)
    import anyio

    from werkbaum_core.engine import LazyEngine
    from werkbaum_core.engine.lifetime import close_on_exit
    from werkbaum_stdio.roots import Roots
    from werkbaum_stdio.server import StdioConfig, build_server, serve_stdio

    try:
        roots = Roots.from_args(root or [])
    except WerkbaumError as exc:
        fail(exc.message, EXIT_UNREADABLE)
    config = StdioConfig(
        roots=roots,
        servers=tuple(server or ()),
        mirrors=tuple(mirror or ()),
        plan_globs=tuple(plan_glob or ()),
        name=name,
        read_only=read_only,
        engine=engine,
        frontend=frontend,
        audit_log=audit_log,
    )
    if server:
        # A mistyped backend is a start-up error, not the agent's first failure.
        from werkbaum_core.stores.documents import DocumentStore

        try:
            with DocumentStore(config.servers) as probe:
                probe.probe()
        except WerkbaumError as exc:
            fail(exc.message, EXIT_UNREADABLE)
    # The engine starts on the first call that needs it: a server that a host
    # starts and never asks stays small (a node process alone is ~40 MiB).
    lazy = LazyEngine(choose_executor(engine, frontend=frontend), frontend)
    close_on_exit(lazy)  # end of stdin, a failed start, SIGTERM, SIGINT, SIGHUP
    if frontend:
        # A checkout's module set is checked before serving: a missing export is a
        # start-up error, not a failure of the agent's first call.
        try:
            lazy.get()
        except WerkbaumError as exc:
            fail(exc.message, EXIT_UNREADABLE)
        typer.echo(f"werkbaum-mcp: modules: {lazy.get().modules.origins()}", err=True)
    try:
        app = build_server(config, lazy)
    except WerkbaumError as exc:  # a bad --mirror (not a document, not in git), --plan-glob
        fail(exc.message, EXIT_UNREADABLE)
    anyio.run(serve_stdio, app)


def main() -> None:
    """Console entry point of ``werkbaum-mcp``."""
    sys.exit(server_app())
