"""``werkbaum-mcp-http``: the remote MCP server's command line.

It checks everything it can before serving — the tokens, the backends
(``GET /api/v1/info``), a checkout's module set — so that a misconfiguration
is a one-line error and a non-zero exit, not a failure of an agent's first
call. Then it hands the settings to uvicorn's workers through the environment.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, NoReturn

import typer

from werkbaum_core.engine import choose_executor
from werkbaum_core.errors import WerkbaumError
from werkbaum_http.config import (
    DEFAULT_ALLOWED_HOSTS,
    DEFAULT_MAX_CONCURRENT,
    ENV_CONFIG,
    ConfigError,
    HttpConfig,
    Tokens,
)
from werkbaum_http.engine import DUKPY_WARNING
from werkbaum_stdio.logs import DEFAULT_LEVEL, LogLevelOption, configure, uvicorn_config
from werkbaum_stdio.server_options import version_option

PROG = "werkbaum-mcp-http"
EXIT_CONFIG = 2
EXIT_START = 1
STDIO_ONLY = {
    "--root": "it serves shared documents only, no files (werkbaum-mcp serves local files)",
    "--mirror": "it serves shared documents only, no git mirror (werkbaum-mcp mirrors)",
    "--name": "changes carry each client's own name (or Agent)",
    "--audit-log": "audit lines go to stderr",
}
"""stdio options a user may carry over by habit; each gets a clear refusal, not typer's
generic "No such option"."""

app = typer.Typer(
    name=PROG,
    help=(
        "Remote MCP server over Streamable HTTP: shared Werkbaum documents for AI agents. "
        "Needs WERKBAUM_MCP_TOKEN (>= 32 characters); WERKBAUM_MCP_READ_TOKEN optionally "
        "gives a second token that sees only the read tools."
    ),
    add_completion=False,
)


def _fail(message: str, code: int) -> NoReturn:
    typer.echo(f"{PROG}: {message}", err=True)
    raise typer.Exit(code)


def _say(message: str) -> None:
    typer.echo(f"{PROG}: {message}", err=True)


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    server: Annotated[
        list[str] | None,
        typer.Option(
            "--server",
            help="Werkbaum backend URL (repeatable; the first is the default for bare uuids). "
            "Only documents on these backends are served.",
        ),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option("--engine", help="JS executor: node (default when installed) or dukpy."),
    ] = None,
    frontend: Annotated[
        str | None,
        typer.Option("--frontend", help="A Werkbaum checkout's frontend/src to load modules from."),
    ] = None,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="Offer only the read tools, to every token.")
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="Allowed Host header, e.g. mcp.example.org or 127.0.0.1:* (repeatable; "
            "default 127.0.0.1:* and localhost:*).",
        ),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="uvicorn worker processes.")] = 1,
    max_concurrent: Annotated[
        int,
        typer.Option(
            "--max-concurrent", min=1, help="MCP requests in flight per worker before 503."
        ),
    ] = DEFAULT_MAX_CONCURRENT,
    log_level: LogLevelOption = DEFAULT_LEVEL,
    version: Annotated[bool, version_option(PROG)] = False,
) -> None:
    """Serve MCP at http://HOST:PORT/mcp (stateless, JSON responses); /healthz is open.

    Needs WERKBAUM_MCP_TOKEN (at least 32 characters) in the environment;
    WERKBAUM_MCP_READ_TOKEN optionally adds a token that sees only the read tools.
    """
    configure(log_level)
    try:
        Tokens.from_env()
        config = HttpConfig(
            servers=tuple(server or ()),
            engine=engine,
            frontend=frontend,
            read_only=read_only,
            allowed_hosts=tuple(allowed_host or DEFAULT_ALLOWED_HOSTS),
            max_concurrent=max_concurrent,
        )
    except ConfigError as exc:
        _fail(str(exc), EXIT_CONFIG)
    kind = choose_executor(engine, frontend=frontend)
    _check_engine(kind, frontend)
    _probe(config)
    if kind == "dukpy":
        _say(f"warning: {DUKPY_WARNING}")
    _say(
        f"serving http://{host}:{port}/mcp — engine {kind}, workers {workers}, backends "
        f"{', '.join(config.servers)}{', read-only' if read_only else ''}"
    )
    os.environ[ENV_CONFIG] = config.to_json()

    import uvicorn

    from werkbaum_http.connections import uvicorn_settings

    uvicorn.run(
        "werkbaum_http.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        access_log=False,  # werkbaum_http.access logs without query strings
        server_header=False,
        log_config=uvicorn_config(log_level),
        **uvicorn_settings(workers),
    )


def _check_engine(kind: str, frontend: str | None) -> None:
    """Load the module set once: a missing export or a missing node is a start-up error."""
    from werkbaum_core.engine import Engine

    try:
        with Engine.create(kind, frontend) as eng:
            if frontend:
                _say(f"modules: {eng.modules.origins()}")
    except WerkbaumError as exc:
        _fail(exc.message, EXIT_START)


def _probe(config: HttpConfig) -> None:
    """``GET /api/v1/info`` on every backend: a typo or a down backend fails now."""
    from werkbaum_core.stores.documents import DocumentStore

    try:
        with DocumentStore(config.servers, allow_any_host=False) as store:
            store.probe()
    except WerkbaumError as exc:
        _fail(exc.message, EXIT_START)


def _refuse_stdio_options(argv: list[str]) -> None:
    for arg in argv:
        flag = arg.split("=", 1)[0]
        if flag in STDIO_ONLY:
            _say(f"{flag} is not an option of the HTTP server: {STDIO_ONLY[flag]}")
            sys.exit(EXIT_CONFIG)


def main() -> None:
    """Console entry point of ``werkbaum-mcp-http``."""
    _refuse_stdio_options(sys.argv[1:])
    sys.exit(app())
