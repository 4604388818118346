"""Per-worker limits in front of the MCP endpoint: a cap on calls in flight, and POST only.

The cap answers beyond its limit at once with ``503`` and ``Retry-After``
instead of queueing without end: a client (or its load balancer) can retry
on another worker, and a burst cannot pile up threads, request bodies (up to
8 MiB each) and JS work in one process. The counter needs no lock: it is only
touched from the worker's event loop, with no ``await`` between check and
increment.

Only ``POST`` reaches the MCP app. The server is stateless with JSON
responses, so it has nothing to push: a handshake-era ``GET`` stream would
only hold a connection (and a cap slot) open forever, and ``DELETE`` has no
session to end. The transport spec lets a server answer both with ``405``.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

RETRY_AFTER_SECONDS = 1
BUSY_CODE = -32000
"""JSON-RPC server-defined error: the server is at capacity (nothing was executed)."""


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *headers,
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class CallCap:
    """Counts MCP requests in flight across every app it wraps (full and read-only)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("the call cap must be at least 1")
        self.limit = limit
        self.in_flight = 0

    def wrap(self, app: ASGIApp) -> ASGIApp:
        async def capped(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            if self.in_flight >= self.limit:
                await busy(send)
                return
            self.in_flight += 1
            try:
                await app(scope, receive, send)
            finally:
                self.in_flight -= 1

        return capped


async def busy(send: Send) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": BUSY_CODE, "message": "server busy; retry shortly"},
        }
    ).encode()
    await _respond(send, 503, body, [(b"retry-after", str(RETRY_AFTER_SECONDS).encode())])


def post_only(app: ASGIApp, path: str) -> ASGIApp:
    """``405`` (``Allow: POST``) for anything but ``POST`` on the MCP endpoint ``path``."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == path and scope["method"] != "POST":
            body = json.dumps({"error": "method not allowed; MCP requests are POSTs"}).encode()
            await _respond(send, 405, body, [(b"allow", b"POST")])
            return
        await app(scope, receive, send)

    return guarded
