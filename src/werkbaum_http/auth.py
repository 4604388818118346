"""Bearer-token authentication that also decides which MCP server a request reaches.

The token is a static shared secret, not OAuth: so a missing or wrong token
gets a plain ``401`` with ``WWW-Authenticate: Bearer realm="werkbaum",
error="invalid_token"`` and *no* ``resource_metadata`` (publishing OAuth
metadata would send OAuth-capable clients into a flow that cannot complete).

Each token maps to its own ASGI app: the full token to the full MCP server,
the read token to a separate read-only server whose tool manager holds only
the read tools. Routing by token — rather than filtering one server's tools
per request — means a read-token request cannot reach a write tool by any
path (``tools/list``, ``tools/call``, a cached schema): to it a write tool is
simply unknown, with exactly the unknown-tool error.

Every configured token is compared with :func:`hmac.compare_digest`, all of
them on every request, so timing reveals neither a token nor which one
matched. Token values never appear in a response, a log line or an error.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

from werkbaum_http.responses import respond

CHALLENGE = b'Bearer realm="werkbaum", error="invalid_token"'
_BODY = json.dumps(
    {"error": "invalid_token", "error_description": "a valid bearer token is required"}
).encode()


def bearer_credential(scope: Scope) -> bytes | None:
    """The credential of the request's ``Authorization: Bearer …`` header, if any."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, credential = bytes(value).partition(b" ")
            if scheme.lower() == b"bearer":
                return credential.strip() or None
            return None
    return None


class BearerRouter:
    """ASGI app: authenticate by bearer token, then hand the request to that token's app."""

    def __init__(self, routes: Sequence[tuple[str, ASGIApp]]) -> None:
        if not routes:
            raise ValueError("at least one token is required")
        self._routes = [(token.encode(), app) for token, app in routes]

    def _app_for(self, credential: bytes | None) -> ASGIApp | None:
        chosen: ASGIApp | None = None
        for token, app in self._routes:
            # No early exit: every token is compared on every request.
            if hmac.compare_digest(credential or b"", token) and credential:
                chosen = app
        return chosen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        app = self._app_for(bearer_credential(scope))
        if app is None:
            await unauthorized(send)
            return
        await app(scope, receive, send)


async def unauthorized(send: Send) -> None:
    """``401`` with the plain Bearer challenge (no OAuth discovery)."""
    headers = [(b"www-authenticate", CHALLENGE), (b"cache-control", b"no-store")]
    await respond(send, 401, _BODY, headers)
