"""The local MCP server: the core's catalogue over files (and shared documents), on stdio."""

from __future__ import annotations

from pathlib import Path

import anyio.from_thread
import attrs
import mcp.types as types

from werkbaum_core.engine import LazyEngine, choose_executor
from werkbaum_core.errors import InvalidArgument, NotFound
from werkbaum_core.guide import GUIDE_URI, guide_for
from werkbaum_core.in_flight import WRITES
from werkbaum_core.rules.catalogue import Services
from werkbaum_core.rules.plan_hints import with_plan_hints
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_core.stores.protocol import Snapshot
from werkbaum_stdio.audit import AuditLog
from werkbaum_stdio.client_roots import ClientRoots
from werkbaum_stdio.collector import freeze_startup_objects
from werkbaum_stdio.files import FileStore
from werkbaum_stdio.mirror import MirrorFiles, after_write_hook, build_mirrors
from werkbaum_stdio.pipes import stdio_pipes
from werkbaum_stdio.plan_names import PlanNames
from werkbaum_stdio.registration import (
    SERVER_NAME,
    VERSION,
    WORKING_ORDER,
    InvalidCursor,
    Listing,
    PlanServer,
    ResourcePage,
    TemplateRoute,
    catalogue_tools,
    document_template,
    plan_server,
    snapshot_route,
)
from werkbaum_stdio.roots import ORIGIN_CWD, Roots
from werkbaum_stdio.sources import LocalSources, file_uri

__all__ = ["GUIDE_URI", "SERVER_NAME", "VERSION", "StdioConfig", "build_server", "serve_stdio"]

FILE_TEMPLATE = "werkbaum://file/{+path}"
PAGE_SIZE = 500
"""Plan files per ``resources/list`` page (the guide and the plan view come first, on the
first page)."""


@attrs.frozen
class StdioConfig:
    roots: Roots
    name: str | None = None
    read_only: bool = False
    engine: str | None = None
    frontend: str | None = None
    audit_log: Path | None = None
    servers: tuple[str, ...] = ()
    """Werkbaum backends (``--server``); the first is the default for bare uuids."""
    mirrors: tuple[str, ...] = ()
    """``--mirror DOCUMENT=FILE`` specs: files in git kept equal to their documents."""
    plan_globs: tuple[str, ...] = ()
    """``--plan-glob`` patterns: file names that are plans besides ``*.werkbaum``."""


def instructions(config: StdioConfig) -> str:
    """What every client is told: the working order and this server's configuration."""
    mode = "read-only (no write tools)" if config.read_only else "read and write"
    roots = config.roots.describe()
    if config.roots.origin == ORIGIN_CWD:
        roots = f"the client's MCP roots if it offers them, else {roots}"
    parts = [f"{WORKING_ORDER} This server: {mode}; file roots: {roots}"]
    if config.plan_globs:
        parts.append(f"plan files: {PlanNames.with_globs(config.plan_globs).describe()}")
    if config.servers:
        parts.append(f"document backends: {', '.join(config.servers)} (a bare uuid uses the first)")
    if config.mirrors:
        parts.append(
            "mirror files (reads and writes go to their shared document, and each agent "
            "write is committed to git): "
            + ", ".join(spec.rsplit("=", 1)[1] for spec in config.mirrors)
        )
    return "; ".join(parts) + "."


def file_template(files: FileStore) -> TemplateRoute:
    """``werkbaum://file/{+path}``: a plan file with its base (version, checksum) in ``_meta``.

    The file store's rules (plan files only, under the roots) apply as for tool sources.
    The template match has percent-decoded the path once, as a tool decodes a
    ``werkbaum://file/`` source once: a listed URI reads back the very file listed.
    """
    listed = types.ResourceTemplate(
        uri_template=FILE_TEMPLATE,
        name="plan-file",
        title="Plan file",
        description="A plan file under the server's roots (path relative to its root).",
        mime_type="text/plain",
    )

    def read(path: str) -> Snapshot:
        try:
            return files.read(path)
        except NotFound as exc:  # worded as the tool error for the same source
            raise with_plan_hints(exc, files) from None

    return snapshot_route(listed, "path", read)


def plan_files(files: FileStore, page_size: int = PAGE_SIZE) -> Listing:
    """The plan files under the roots as ``werkbaum://file/…`` resources, ``page_size``
    per page, in the store's stable order; the cursor is the store's own (opaque)."""

    def page(cursor: str | None) -> ResourcePage:
        try:
            found = files.list_plans(cursor, limit=page_size, lines=False)
        except InvalidArgument as exc:
            raise InvalidCursor(
                f"invalid cursor {(cursor or '')[:40]!r}: pass a nextCursor from resources/list"
            ) from exc
        listed = [
            types.Resource(uri=file_uri(plan.source), name=plan.path.name, mime_type="text/plain")
            for plan in found.plans
        ]
        return listed, found.next_cursor

    return page


def build_server(config: StdioConfig, engine: LazyEngine | None = None) -> PlanServer:
    engine = engine or LazyEngine(
        choose_executor(config.engine, frontend=config.frontend),
        config.frontend,
        separate_process=True,
    )
    files = FileStore(config.roots, plan_globs=config.plan_globs)
    documents = DocumentStore(config.servers, allow_any_host=True)
    mirrors = build_mirrors(config.mirrors, documents, config.roots)
    sources = LocalSources(files, documents, MirrorFiles.of(mirrors, config.roots))
    services = Services(
        engine=engine,
        sources=sources,
        after_write=after_write_hook(mirrors) if mirrors else None,
        audit=AuditLog(config.audit_log),
        checkpoint=anyio.from_thread.check_cancelled,
        guide=guide_for(config.frontend),
        plan_files=files,
        writes=WRITES,  # what the stop handler waits for (werkbaum_core.engine.lifetime)
    )
    server = plan_server(
        instructions=instructions(config),
        tools=catalogue_tools(services, read_only=config.read_only, name=config.name),
        guide=services.guide,
        templates=[document_template(sources.read_document), file_template(files)],
        listing=plan_files(files),
    )
    if config.roots.origin == ORIGIN_CWD:
        # No --root, no CLAUDE_PROJECT_DIR: the client's MCP roots, if it offers any.
        ClientRoots(files, config.roots).install(server)
    return server


async def serve_stdio(server: PlanServer) -> None:
    """Serve ``server`` over this process's stdin and stdout (:mod:`werkbaum_stdio.pipes`),
    the process's one job: what start-up made is exempt from the garbage collector."""
    freeze_startup_objects()
    async with stdio_pipes() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
