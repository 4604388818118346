"""``werkbaum-mcp-http``: the remote MCP server's command line.

It checks everything it can before serving — the tokens, the backends
(``GET /api/v1/info``), a checkout's module set — so that a misconfiguration
is a one-line error and a non-zero exit, not a failure of an agent's first
call. Then it hands the settings to uvicorn's workers through the environment.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click

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
from werkbaum_http.hosts import loopback
from werkbaum_stdio.command_line import (
    CONTEXT,
    engine_options,
    fail,
    probe_backends,
    run,
    version,
)
from werkbaum_stdio.logs import LogLevel, configure, uvicorn_config
from werkbaum_stdio.server_options import log_level_option

PROG = "werkbaum-mcp-http"
EXIT_CONFIG = 2
EXIT_START = 1
STDIO_ONLY = {
    "--root": "it serves shared documents only, no files (werkbaum-mcp serves local files)",
    "--mirror": "it serves shared documents only, no git mirror (werkbaum-mcp mirrors)",
    "--name": "changes carry each client's own name (or Agent)",
    "--audit-log": "audit lines go to stderr",
}
"""stdio options a user may carry over by habit; each gets a clear refusal, not click's
generic "No such option"."""


class Count(click.types.IntParamType):
    """A whole number, at least 1 (worker processes, requests in flight).

    Not ``click.IntRange``: its help would add an ``x>=1`` tag to each option,
    where the help text says "at least 1" in words.
    """

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        number = int(super().convert(value, param, ctx))
        if number < 1:
            self.fail(f"{number} is not at least 1", param, ctx)
        return number


def _fail(message: str, code: int) -> NoReturn:
    fail(message, code, PROG)


def _say(message: str) -> None:
    click.echo(f"{PROG}: {message}", err=True)


@click.command(context_settings=CONTEXT)
@click.option(
    "--host", default="127.0.0.1", show_default=True, metavar="HOST", help="Interface to listen on."
)
@click.option(
    "--port", type=int, default=8000, show_default=True, metavar="PORT", help="Port to listen on."
)
@click.option(
    "--server",
    "servers",
    multiple=True,
    metavar="URL",
    help="Werkbaum backend, probed at start-up (required, repeatable; the first is the "
    "default for bare uuids). Only documents on these backends are served.",
)
@engine_options
@click.option("--read-only", is_flag=True, help="Offer only the read tools, to every token.")
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="HOST",
    help="Allowed Host header: NAME, NAME:PORT or NAME:* (repeatable; default: "
    f"{' and '.join(DEFAULT_ALLOWED_HOSTS)}).",
)
@click.option(
    "--workers",
    type=Count(),
    default=1,
    show_default=True,
    metavar="N",
    help="Worker processes sharing the port (at least 1).",
)
@click.option(
    "--max-concurrent",
    type=Count(),
    default=DEFAULT_MAX_CONCURRENT,
    show_default=True,
    metavar="N",
    help="MCP requests in flight per worker before new ones get 503 (at least 1).",
)
@log_level_option
@version(PROG)
def serve(
    host: str,
    port: int,
    servers: Sequence[str],
    engine: str | None,
    frontend: str | None,
    read_only: bool,
    allowed_hosts: Sequence[str],
    workers: int,
    max_concurrent: int,
    log_level: LogLevel,
) -> None:
    """Serve shared Werkbaum documents to AI agents at http://HOST:PORT/mcp.

    MCP over Streamable HTTP, stateless, with JSON responses; /healthz is open.
    Needs WERKBAUM_MCP_TOKEN (at least 32 characters) in the environment, which
    clients send as "Authorization: Bearer TOKEN"; WERKBAUM_MCP_READ_TOKEN
    optionally adds a token that sees only the read tools. With the dukpy
    engine (neither v8 nor node installed) it warns at start-up. Exit status:
    1 a backend or module set that cannot be used, 2 a bad argument or token.

    \b
    Examples:
      werkbaum-mcp-http --server https://werkbaum.example.org
      werkbaum-mcp-http --server https://werkbaum.example.org --port 8080 --workers 4
      werkbaum-mcp-http --server https://werkbaum.example.org --allowed-host mcp.example.org
    """
    configure(log_level)
    try:
        Tokens.from_env()
        config = HttpConfig(
            servers=tuple(servers),
            engine=engine,
            frontend=frontend,
            read_only=read_only,
            allowed_hosts=tuple(allowed_hosts or DEFAULT_ALLOWED_HOSTS),
            max_concurrent=max_concurrent,
        )
    except ConfigError as exc:
        _fail(str(exc), EXIT_CONFIG)
    kind = choose_executor(engine, frontend=frontend)
    _check_engine(kind, frontend)
    probe_backends(config.servers, PROG, EXIT_START, allow_any_host=False)
    if kind == "dukpy":
        _say(f"warning: {DUKPY_WARNING}")
    if not allowed_hosts and not loopback(host):
        _say(
            f"warning: listening on {host}, but answering only requests whose Host is "
            f"{' or '.join(DEFAULT_ALLOWED_HOSTS)} (421 for any other): add --allowed-host "
            "NAME:* for the name (or address) clients use to reach this server"
        )
    _say(
        f"serving http://{host}:{port}/mcp — engine {kind}, workers {workers}, backends "
        f"{', '.join(config.servers)}{', read-only' if read_only else ''}"
    )
    os.environ[ENV_CONFIG] = config.to_json()

    import uvicorn

    from werkbaum_http.connections import uvicorn_settings

    uvicorn.run(
        "werkbaum_http.app:served_app",
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
    """Load the module set once, as the workers will: a missing export or a missing node
    is a start-up error."""
    from werkbaum_core.engine import Engine

    try:
        with Engine.create(kind, frontend, separate_process=True) as eng:
            if frontend:
                _say(f"modules: {eng.modules.origins()}")
    except WerkbaumError as exc:
        _fail(exc.message, EXIT_START)


def _refuse_stdio_options(argv: list[str]) -> None:
    for arg in argv:
        flag = arg.split("=", 1)[0]
        if flag in STDIO_ONLY:
            _say(f"{flag} is not an option of the HTTP server: {STDIO_ONLY[flag]}")
            sys.exit(EXIT_CONFIG)


def main() -> None:
    """Console entry point of ``werkbaum-mcp-http``: a bad argument is one line on stderr,
    exit 2."""
    _refuse_stdio_options(sys.argv[1:])
    run(serve, PROG)
