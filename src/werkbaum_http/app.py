"""The ASGI application: ``/mcp`` behind bearer tokens, ``/healthz`` open, no OAuth discovery.

:func:`create_app` is what uvicorn calls in every worker (``factory=True``;
``--workers N`` needs an import string, so settings come from the
environment, see :mod:`werkbaum_http.config`). Tests call it with explicit
settings.

Request path, outermost first::

    AccessLog → Starlette routes
      /healthz         → {"ok": true}                      (no token: for load balancers)
      /.well-known/*   → 404                               (no OAuth metadata, ever)
      everything else  → HostCheck → BearerRouter ── full token ──→ McpGate → full MCP server
                                                  └─ read token ──→ McpGate → read-only server
                         (Host/Origin not allowed → 421/403; no/wrong token → 401)

:class:`~werkbaum_http.hosts.HostCheck` is the Host allowlist against DNS
rebinding; :class:`~werkbaum_http.limits.McpGate` takes only ``POST /mcp``,
reads the body whole (413 beyond the limit) and then counts the call (503
beyond ``--max-concurrent``). Each MCP server is the SDK's stateless Streamable
HTTP app with JSON responses: no session is kept, so any worker or replica
answers any request, in both protocol eras.

Below the ASGI app, :mod:`werkbaum_http.connections` bounds every connection
in time and the number of connections by the descriptor limit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import anyio.from_thread
import anyio.to_thread
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from werkbaum_core.engine import LazyEngine, choose_executor
from werkbaum_core.guide import guide_for
from werkbaum_core.in_flight import STOP_WAIT
from werkbaum_core.rules.catalogue import Services
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_http.access import AccessLog, configure_logging
from werkbaum_http.auth import BearerRouter
from werkbaum_http.config import MAX_BODY_BYTES, HttpConfig, Tokens
from werkbaum_http.connections import LoopErrors
from werkbaum_http.hosts import AllowedHosts, HostCheck
from werkbaum_http.limits import McpGate
from werkbaum_http.server import build_server
from werkbaum_http.sources import DocumentSources
from werkbaum_stdio.audit import AuditLog
from werkbaum_stdio.collector import freeze_startup_objects
from werkbaum_stdio.registration import PlanServer

MCP_PATH = "/mcp"
ALL_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


SDK_SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)
"""The SDK's Host check is off: :class:`HostCheck` has run before, matching exactly."""


async def healthz(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def not_found(scope: Scope, receive: Receive, send: Send) -> None:
    await Response(status_code=404)(scope, receive, send)


async def not_found_page(request: Request) -> Response:
    return Response(status_code=404)


FORCED_BY = "SIGINT"
"""What ends a worker with writes still running: uvicorn quits at once on a second SIGINT
(its graceful shutdown, the first signal, lets every request end before the app does)."""


def _let_writes_finish(services: Services) -> None:
    """Writes past their store step get up to ``STOP_WAIT`` before the store closes under
    them; one still running then gets its audit line, ``stopped`` (spec §6.5).

    After a second SIGINT uvicorn has cancelled the requests, not the threads that
    write: closing the store under them failed them mid-call, and their audit lines said
    ``error`` for writes that had landed. This blocks the loop on purpose: nothing else
    is served at this point.
    """
    writes = services.writes
    if writes.stop() and not writes.wait(STOP_WAIT):
        writes.abandon(FORCED_BY)


def served_app() -> ASGIApp:
    """uvicorn's factory: a worker process's app, configured from the environment."""
    return create_app(freeze_heap=True)


def create_app(
    config: HttpConfig | None = None,
    tokens: Tokens | None = None,
    *,
    engine: LazyEngine | None = None,
    store: DocumentStore | None = None,
    freeze_heap: bool = False,
) -> ASGIApp:
    """The whole service; without arguments from the environment.

    ``engine`` and ``store`` let tests share one engine and one backend client
    between apps; the app then leaves closing them to the caller. ``freeze_heap``:
    once started, the objects start-up made are exempt from the garbage collector
    (:mod:`werkbaum_stdio.collector`), for a process that serves this app alone.
    """
    config = config or HttpConfig.from_env()
    tokens = tokens or Tokens.from_env()
    configure_logging()
    # What the app creates it also closes; an engine or store passed in stays the caller's.
    owned_engine = engine is None
    owned_store = store is None
    engine = engine or LazyEngine(
        choose_executor(config.engine, frontend=config.frontend),
        config.frontend,
        separate_process=True,
    )
    # Every call here is a document call: as many backend calls as calls in flight.
    store = store or DocumentStore(
        config.servers, allow_any_host=False, max_calls=config.max_concurrent
    )
    sources = DocumentSources(store)
    services = Services(
        engine=engine,
        sources=sources,
        audit=AuditLog(client_id=store.client_id),
        checkpoint=anyio.from_thread.check_cancelled,
        guide=guide_for(config.frontend),
    )
    servers: list[tuple[str, PlanServer]] = [
        (tokens.full, build_server(services, sources, read_only=config.read_only))
    ]
    if tokens.read is not None:
        servers.append((tokens.read, build_server(services, sources, read_only=True)))

    allowed = AllowedHosts.parse(config.allowed_hosts)
    gate = McpGate(MCP_PATH, config.max_concurrent, MAX_BODY_BYTES)
    routes: list[tuple[str, ASGIApp]] = []
    for token, server in servers:
        mcp_app = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            transport_security=SDK_SECURITY,
            max_request_body_size=MAX_BODY_BYTES,
        )
        routes.append((token, gate.wrap(mcp_app)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # A worker must outlive a failing accept() at the descriptor limit.
        asyncio.get_running_loop().set_exception_handler(LoopErrors())
        # A mounted app's own lifespan never runs: each session manager is entered here.
        engine.start()
        try:
            async with contextlib.AsyncExitStack() as stack:
                for _, server in servers:
                    await stack.enter_async_context(server.session_manager.run())
                if freeze_heap:
                    freeze_startup_objects()
                yield
        finally:
            _let_writes_finish(services)
            if owned_engine:
                await anyio.to_thread.run_sync(engine.close)
            if owned_store:
                store.close()

    app = Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET", "HEAD"]),
            Route("/.well-known", not_found_page, methods=list(ALL_METHODS)),
            Mount("/.well-known", app=not_found),
            Mount("/", app=HostCheck(BearerRouter(routes), allowed)),
        ],
        lifespan=lifespan,
    )
    return AccessLog(app)
