"""An access log that never writes a query string or a header.

uvicorn's own access log prints the full request target; a client that puts a
token into the URL (``/mcp?token=…``, which this server ignores) would get it
written to the log. This log line has the client address, method, path
without query, status and duration — enough to operate the service, nothing
secret — and goes to stderr. The CLI turns uvicorn's access log off.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("werkbaum_http.access")
QUIET_PATH = "/healthz"


def configure_logging() -> None:
    """One stderr handler for the access log (idempotent: every worker calls it)."""
    if log.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(handler)
    if log.level == logging.NOTSET:  # else --log-level set it (werkbaum_stdio.logs)
        log.setLevel(logging.INFO)
    log.propagate = False


class AccessLog:
    """ASGI middleware writing one line per HTTP request after its response started."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: list[int] = []

        async def recording(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        try:
            await self.app(scope, receive, recording)
        finally:
            # A load balancer's health checks would drown everything else.
            if not (scope.get("path") == QUIET_PATH and status == [200]):
                log.info(
                    '%s "%s %s" %s %.1fms',
                    _client(scope.get("client")),
                    scope.get("method", "?"),
                    scope.get("path", "?"),
                    status[0] if status else "-",
                    (time.perf_counter() - started) * 1000,
                )


def _client(client: Any) -> str:
    if isinstance(client, list | tuple) and len(client) == 2:
        return f"{client[0]}:{client[1]}"
    return "-"
