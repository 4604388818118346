"""Per-worker limits in front of the MCP endpoint: its path, POST only, the body, the call cap.

A request reaches the MCP app only through :meth:`McpGate.wrap`, in this order:

1. the path is ``/mcp``, or ``/mcp/`` served as ``/mcp``; anything else is
   ``404``. Starlette would answer ``/mcp/`` with a redirect whose ``Location``
   it builds from the ``Host`` header — before any Host check has run;
2. ``POST`` only, else ``405`` (``Allow: POST``). The server is stateless with
   JSON responses, so it has nothing to push: a handshake-era ``GET`` stream
   would only hold a connection (and a call slot) open forever, and ``DELETE``
   has no session to end. The transport spec lets a server answer both with
   ``405``;
3. the body is read whole: at most ``MAX_BODY_BYTES`` (else ``413``), and all
   bodies being received by the worker together at most
   :data:`BODY_BUDGET_BYTES` (else ``503``). How long a body may take is the
   connection's deadline (:data:`werkbaum_http.connections.BODY_SECONDS`);
4. the body must be one JSON-RPC message (:mod:`werkbaum_http.envelope`), else
   ``400`` with ``-32600``, in both protocol eras;
5. only then does the request count against ``--max-concurrent``; beyond it,
   ``503`` with ``Retry-After`` at once instead of a queue without end: a client
   (or its load balancer) can retry on another worker, and a burst cannot pile
   up threads and JS work in one process.

Counting only complete requests is what keeps slow clients from locking
others out: sixteen clients trickling their bodies used to hold all sixteen
slots, and everybody else got ``503`` for as long as they trickled. Now a
trickling body holds a connection and the bytes it has sent, no slot.

The counters need no lock: they are only touched from the worker's event
loop, with no ``await`` between check and change.
"""

from __future__ import annotations

import json

import anyio.to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from werkbaum_http.envelope import envelope_error
from werkbaum_http.responses import respond

RETRY_AFTER_SECONDS = 1
BUSY_CODE = -32000
"""JSON-RPC server-defined error: the server is at capacity (nothing was executed)."""
INLINE_ENVELOPE_BYTES = 64 * 1024
"""Bodies up to this size have their envelope checked on the event loop (well under a
millisecond); larger ones in a worker thread, as the tool's own argument check is."""
BODY_BUDGET_BYTES = 128 * 1024 * 1024
"""Request bytes a worker holds for bodies still arriving: sixteen full-size bodies."""

_CLOSE = (b"connection", b"close")


async def busy(send: Send, *, close: bool = False) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": BUSY_CODE, "message": "server busy; retry shortly"},
        }
    ).encode()
    headers = [(b"retry-after", str(RETRY_AFTER_SECONDS).encode())]
    await respond(send, 503, body, headers + ([_CLOSE] if close else []))


async def _refuse(send: Send, status: int, message: str, *extra: tuple[bytes, bytes]) -> None:
    await respond(send, status, json.dumps({"error": message}).encode(), extra)


class McpGate:
    """The limits of one worker, shared by every MCP app it wraps (full and read-only)."""

    def __init__(
        self,
        path: str,
        limit: int,
        max_body: int,
        body_budget: int = BODY_BUDGET_BYTES,
    ) -> None:
        if limit < 1:
            raise ValueError("the call cap must be at least 1")
        self.path = path
        self.limit = limit
        self.max_body = max_body
        self.in_flight = 0
        self.budget = body_budget
        self.receiving = 0
        """Bytes of bodies still arriving, held by this worker."""

    def wrap(self, app: ASGIApp) -> ASGIApp:
        async def gated(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            if scope["path"] not in (self.path, self.path + "/"):
                await _refuse(send, 404, "not found; the MCP endpoint is " + self.path)
                return
            if scope["method"] != "POST":
                allow = (b"allow", b"POST")
                await _refuse(send, 405, "method not allowed; MCP requests are POSTs", allow)
                return
            body = await self._body(scope, receive, send)
            if body is None:
                return
            # Parsing a large body takes time in proportion to it: off the event loop.
            invalid = (
                envelope_error(body)
                if len(body) <= INLINE_ENVELOPE_BYTES
                else await anyio.to_thread.run_sync(envelope_error, body)
            )
            if invalid is not None:
                await respond(send, 400, invalid)
                return
            if self.in_flight >= self.limit:
                await busy(send)
                return
            self.in_flight += 1
            try:
                await app(_at(scope, self.path), _replay(body, receive), send)
            finally:
                self.in_flight -= 1

        return gated

    async def _body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body, or None once a refusal went out (or the client went away)."""
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_body:
            await _refuse(send, 413, "request body too large", _CLOSE)
            return None
        parts: list[bytes] = []
        held = 0
        try:
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return None  # disconnected, or cut off by the body deadline
                part = message.get("body", b"")
                if held + len(part) > self.max_body:
                    await _refuse(send, 413, "request body too large", _CLOSE)
                    return None
                if self.receiving + len(part) > self.budget:
                    await busy(send, close=True)
                    return None
                self.receiving += len(part)
                held += len(part)
                parts.append(part)
                if not message.get("more_body", False):
                    return b"".join(parts)
        finally:
            self.receiving -= held


def _at(scope: Scope, path: str) -> Scope:
    """``scope`` for exactly ``path`` (``/mcp/`` is served as ``/mcp``, never redirected)."""
    if scope["path"] == path:
        return scope
    return {**scope, "path": path, "raw_path": path.encode()}


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body as one message, then the connection's own messages (a disconnect)."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed
