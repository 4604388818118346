"""The client's MCP roots as the file roots (issue 14, item 6).

Precedence of the roots: ``--root``, else ``CLAUDE_PROJECT_DIR``, else the
directories the client offers as MCP roots, else the working directory. The
first two are decided at start-up (:meth:`Roots.from_args`); this module
handles the third, which only a connected client can answer: a host that
starts servers in ``/`` (Claude Desktop does) but offers its workspace as
roots then gets that workspace instead of the whole file system.

How the server asks depends on the protocol era, and only if the client
declared the ``roots`` capability:

* **Handshake era** (2025-11-25 and older): a ``roots/list`` request to the
  client, sent from the first request that needs files (a tool call, a
  resource read, ``resources/list``), with a deadline; asked again after the
  client's ``notifications/roots/list_changed``.
* **2026-07-28**: server-to-client requests are gone; a tool call or a
  resource read answers ``input_required`` with a ``roots/list`` input
  request (multi round-trip requests), and the client retries the same
  request with its roots. ``resources/list`` cannot ask, so it lists under
  the working directory until a first tool call or read has asked. That era
  has no change notification, so the roots are asked once per server process.

Roots are deprecated by 2026-07-28 (SEP-2577) but still part of it. A client
whose answer is unusable (an error, no answer within the deadline, no
``file://`` URI of an existing directory) leaves the working directory as
the root, with one warning on stderr.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from werkbaum_stdio.files import FileStore
from werkbaum_stdio.registration import Context, PlanServer
from werkbaum_stdio.roots import Roots

log = logging.getLogger(__name__)

ORIGIN_CLIENT = "the client's MCP roots"
ASK_TIMEOUT = 10.0
"""Seconds the server waits for a handshake-era client's ``roots/list`` answer."""
MAX_ASKS = 2
"""2026-07-28 ``input_required`` rounds without an answer before the server stops asking
(a client that declared roots but never answers must not make every call fail)."""
MAX_CLIENT_ROOTS = 64
"""Roots taken from one answer; more are ignored (a bound, as for every input)."""
INPUT_KEY = "roots"
"""The key of the ``roots/list`` input request in an ``input_required`` result."""
GATED = ("tools/call", "resources/read", "resources/list")
"""The requests that need the file roots (the others never touch a file)."""
ROOTS = types.ClientCapabilities(roots=types.RootsCapability())

Handler = Callable[[Context, Any], Awaitable[Any]]


class ClientRoots:
    """Asks the client for its roots and makes them the file store's roots.

    One instance per server (a stdio server serves one client). Until the
    client has answered, the file store keeps ``fallback`` (the working
    directory).
    """

    def __init__(self, files: FileStore, fallback: Roots) -> None:
        self._files = files
        self._fallback = fallback
        self._pending = True
        self._asks = 0
        self._lock = anyio.Lock()

    def install(self, server: PlanServer) -> None:
        """Wrap the handlers of :data:`GATED` and listen for root changes."""
        for method in GATED:
            entry = server.get_request_handler(method)
            if entry is not None:
                server.add_request_handler(method, entry.params_type, self._gated(entry.handler))
        server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, self._changed
        )

    def _gated(self, handler: Handler) -> Handler:
        async def handle(ctx: Context, params: Any) -> Any:
            if self._pending and ctx.session.check_client_capability(ROOTS):
                if ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                    await self._ask(ctx)
                elif isinstance(params, types.InputResponseRequestParams):
                    answer = (params.input_responses or {}).get(INPUT_KEY)
                    if answer is not None:
                        self._adopt(answer)
                    elif self._asks < MAX_ASKS:
                        self._asks += 1
                        return types.InputRequiredResult(
                            input_requests={INPUT_KEY: types.ListRootsRequest()}
                        )
                    else:
                        self._give_up("it did not answer the roots input request")
            return await handler(ctx, params)

        return handle

    async def _ask(self, ctx: Context) -> None:
        """The handshake era: one ``roots/list`` request at a time, with a deadline."""
        async with self._lock:
            if not self._pending:
                return
            try:
                with anyio.fail_after(ASK_TIMEOUT):
                    answer = await ctx.session.send_request(
                        types.ListRootsRequest(),
                        types.ListRootsResult,
                        request_read_timeout_seconds=ASK_TIMEOUT,
                    )
            except (MCPError, ValidationError, TimeoutError) as exc:
                self._give_up(f"roots/list failed: {exc}")
                return
            self._adopt(answer)

    def _adopt(self, answer: object) -> None:
        self._pending = False
        if not isinstance(answer, types.ListRootsResult):
            self._give_up("its answer to roots/list is not a list of roots")
            return
        paths = directories(answer.roots[:MAX_CLIENT_ROOTS])
        if not paths:
            self._give_up("it offered no file:// root that is an existing directory")
            return
        roots = Roots(paths=paths, base=self._fallback.base, origin=ORIGIN_CLIENT)
        self._files.roots = roots
        log.info("file roots: %s", roots.describe())

    def _give_up(self, why: str) -> None:
        self._pending = False
        self._files.roots = self._fallback
        log.warning(
            "the client declared MCP roots, but %s; file roots: %s", why, self._fallback.describe()
        )

    async def _changed(self, ctx: Context, params: types.NotificationParams) -> None:
        """``notifications/roots/list_changed``: ask again on the next request."""
        self._pending = True
        self._asks = 0


def directories(roots: Sequence[types.Root]) -> tuple[Path, ...]:
    """The existing local directories among ``file://`` root URIs, as realpaths."""
    found: dict[Path, None] = {}
    for root in roots:
        parts = urlsplit(str(root.uri))
        if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
            continue
        path = unquote(parts.path, errors="surrogateescape")  # %E9: the byte, as os names it
        if not path.startswith("/") or "\0" in path:
            continue
        real = Path(os.path.realpath(path))
        if real.is_dir():
            found.setdefault(real)
    return tuple(found)
