"""``werkbaum-mcp``: the stdio MCP server's command line (what an MCP host starts)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import click

from werkbaum_core import WerkbaumError, display
from werkbaum_core.engine import choose_executor
from werkbaum_stdio.command_line import CONTEXT, engine_options, fail, probe_backends, run, version
from werkbaum_stdio.logs import LogLevel, configure
from werkbaum_stdio.server_options import log_level_option

PROG = "werkbaum-mcp"
EXIT_UNREADABLE = 2
"""Start-up failures (bad roots, backend, mirror, module set), like a bad argument."""


def _text_name(name: str | None) -> str | None:
    """``--name`` must be text: it is recorded as it is in audit lines, shared documents and
    commits. (A root or ``--plan-glob`` names what is on disk and is shown escaped instead.)"""
    if name is not None and not display.is_text(name):
        raise click.BadParameter(f"{display.text(name)} is not UTF-8 text")
    return name


@click.command(context_settings=CONTEXT)
@click.option(
    "--root",
    "roots",
    multiple=True,
    metavar="DIR",
    help="Allowed directory (repeatable). Without it: $CLAUDE_PROJECT_DIR, else the "
    "client's MCP roots, else the working directory.",
)
@click.option(
    "--server",
    "servers",
    multiple=True,
    metavar="URL",
    help="Werkbaum backend, probed at start-up (repeatable; the first serves bare document uuids).",
)
@click.option(
    "--mirror",
    "mirrors",
    multiple=True,
    metavar="DOCUMENT=FILE",
    help="Keep FILE in git equal to the shared DOCUMENT, one commit per agent write "
    "(repeatable; split at the last =).",
)
@click.option(
    "--plan-glob",
    "globs",
    multiple=True,
    metavar="PATTERN",
    help="More file names that are plans besides *.werkbaum, e.g. '*.plan' (repeatable).",
)
@click.option(
    "--name",
    metavar="NAME",
    callback=lambda ctx, param, value: _text_name(value),
    help="Display name recorded for changes (default: the client's name, else Agent).",
)
@click.option("--read-only", is_flag=True, help="Offer only the read tools.")
@click.option(
    "--audit-log",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Append the audit lines to FILE instead of stderr.",
)
@engine_options
@log_level_option
@version(PROG)
def serve(
    roots: Sequence[str],
    servers: Sequence[str],
    mirrors: Sequence[str],
    globs: Sequence[str],
    name: str | None,
    read_only: bool,
    audit_log: Path | None,
    engine: str | None,
    frontend: str | None,
    log_level: LogLevel,
) -> None:
    """Serve MCP on stdin/stdout: exact, safe access to Werkbaum plans for AI agents.

    An MCP host starts this command. Stdout carries JSON-RPC only; logs and
    audit lines go to stderr (audit lines to --audit-log if given). Files are
    read and written only under the roots.
    Exit status: 0 when the host closes stdin, 2 a bad argument or a root,
    backend, mirror or module set that cannot be used.

    \b
    Examples:
      werkbaum-mcp --root /home/me/project
      werkbaum-mcp --root . --read-only --plan-glob '*.plan'
      werkbaum-mcp --root . --server https://werkbaum.example.org --mirror UUID=plan.werkbaum
    """
    configure(log_level)
    import anyio

    from werkbaum_core.engine import LazyEngine
    from werkbaum_core.engine.lifetime import close_on_exit
    from werkbaum_stdio.roots import PROJECT_DIR_VAR, Roots
    from werkbaum_stdio.server import StdioConfig, build_server, serve_stdio

    try:
        root_dirs = Roots.from_args(roots)
    except WerkbaumError as exc:
        fail(exc.message, EXIT_UNREADABLE, PROG)
    if root_dirs.whole_file_system:
        click.echo(
            f"{PROG}: warning: no --root and no {PROJECT_DIR_VAR}: unless the client offers "
            "MCP roots, the working directory / is the root, and every plan file on this "
            "machine can be read and written; give --root DIR",
            err=True,
        )
    config = StdioConfig(
        roots=root_dirs,
        servers=tuple(servers),
        mirrors=tuple(mirrors),
        plan_globs=tuple(globs),
        name=name,
        read_only=read_only,
        engine=engine,
        frontend=frontend,
        audit_log=audit_log,
    )
    if servers:
        probe_backends(config.servers, PROG, EXIT_UNREADABLE)
    # The engine starts on the first call that needs it: a server that a host
    # starts and never asks stays small (a node process alone is ~40 MiB).
    lazy = LazyEngine(choose_executor(engine, frontend=frontend), frontend, separate_process=True)
    close_on_exit(lazy)  # end of stdin, a failed start, SIGTERM, SIGINT, SIGHUP
    if frontend:
        # A checkout's module set is checked before serving: a missing export is a
        # start-up error, not a failure of the agent's first call.
        try:
            lazy.get()
        except WerkbaumError as exc:
            fail(exc.message, EXIT_UNREADABLE, PROG)
        click.echo(f"{PROG}: modules: {lazy.get().modules.origins()}", err=True)
    try:
        app = build_server(config, lazy)
    except WerkbaumError as exc:  # a bad --mirror (not a document, not in git), --plan-glob
        fail(exc.message, EXIT_UNREADABLE, PROG)
    if os.isatty(0):  # a person typed the command: an MCP host never does
        click.echo(
            f"{PROG}: speaks MCP (JSON-RPC) on stdin and stdout: start it from an MCP host "
            "(see the README), or try it with the MCP Inspector; Ctrl-D or Ctrl-C ends it",
            err=True,
        )
    anyio.run(serve_stdio, app)


def main() -> None:
    """Console entry point of ``werkbaum-mcp``: a bad argument is one line on stderr, exit 2."""
    run(serve, PROG)
