"""The local MCP server: the core's catalogue over files (and shared documents), on stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anyio.from_thread
import attrs
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.types import Resource as MCPResource

from werkbaum_core.engine import LazyEngine, choose_executor
from werkbaum_core.errors import WerkbaumError
from werkbaum_core.guide import guide_for
from werkbaum_core.rules.catalogue import Services
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_stdio.audit import AuditLog
from werkbaum_stdio.files import FileStore
from werkbaum_stdio.mirror import MirrorFiles, after_write_hook, build_mirrors
from werkbaum_stdio.pipes import stdio_pipes
from werkbaum_stdio.registration import (
    GUIDE_URI,
    SERVER_NAME,
    VERSION,
    WORKING_ORDER,
    PlanServer,
    add_prompts,
    catalogue_tools,
    guide_resource,
    resource_error,
)
from werkbaum_stdio.roots import Roots
from werkbaum_stdio.sources import LocalSources

__all__ = ["GUIDE_URI", "SERVER_NAME", "VERSION", "StdioConfig", "build_server"]

FILE_TEMPLATE = "werkbaum://file/{+path}"


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


def instructions(config: StdioConfig) -> str:
    """What every client is told: the working order and this server's configuration."""
    mode = "read-only (no write tools)" if config.read_only else "read and write"
    parts = [f"{WORKING_ORDER} This server: {mode}; file roots: {config.roots.describe()}"]
    if config.servers:
        parts.append(f"document backends: {', '.join(config.servers)} (a bare uuid uses the first)")
    if config.mirrors:
        parts.append(
            "mirror files (reads and writes go to their shared document, and each agent "
            "write is committed to git): "
            + ", ".join(spec.rsplit("=", 1)[1] for spec in config.mirrors)
        )
    return "; ".join(parts) + "."


class WerkbaumServer(PlanServer):
    """``MCPServer`` whose resource list also names the plan files under the roots."""

    def __init__(self, config: StdioConfig, files: FileStore, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._files = files
        self._roots = config.roots

    async def run_stdio_async(self) -> None:
        """Serve over this process's stdin and stdout with :mod:`werkbaum_stdio.pipes`."""
        # The SDK's own in-memory transport reaches the low-level server the same way.
        lowlevel = self._lowlevel_server
        async with stdio_pipes() as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    async def list_resources(self) -> list[MCPResource]:
        listed = await super().list_resources()
        plans = await anyio.to_thread.run_sync(self._files.list_plans)
        for path in plans:
            listed.append(
                MCPResource(
                    uri=f"werkbaum://file/{_display_path(path, self._roots)}",
                    name=path.name,
                    mime_type="text/plain",
                )
            )
        return listed


def _display_path(path: Path, roots: Roots) -> str:
    """Relative to where relative sources start, when the file lies below it; else absolute."""
    try:
        return str(path.relative_to(roots.base))
    except ValueError:
        return str(path)


def build_server(config: StdioConfig, engine: LazyEngine | None = None) -> WerkbaumServer:
    engine = engine or LazyEngine(
        choose_executor(config.engine, frontend=config.frontend), config.frontend
    )
    files = FileStore(config.roots)
    documents = DocumentStore(config.servers, allow_any_host=True)
    mirrors = build_mirrors(config.mirrors, documents, config.roots)
    sources = LocalSources(files, documents, MirrorFiles.of(mirrors, config.roots))
    services = Services(
        engine=engine,
        sources=sources,
        after_write=after_write_hook(mirrors) if mirrors else None,
        audit=AuditLog(config.audit_log),
        checkpoint=anyio.from_thread.check_cancelled,
    )
    server = WerkbaumServer(
        config,
        files,
        documents=sources.read_document,
        name=SERVER_NAME,
        version=VERSION,
        instructions=instructions(config),
        tools=catalogue_tools(services, read_only=config.read_only, name=config.name),
    )
    server.add_resource(guide_resource(guide_for(config.frontend)))

    @server.resource(
        FILE_TEMPLATE,
        name="plan-file",
        title="Plan file",
        description="A plan file under the server's roots (path relative to the roots' base).",
        mime_type="text/plain",
        security=ResourceSecurity(exempt_params={"path"}),
    )
    def read_plan_file(path: str) -> str:
        # Containment is enforced by the roots (realpath), like for tool sources.
        try:
            return files.read(unquote(path)).text
        except WerkbaumError as exc:
            raise resource_error(exc) from exc

    add_prompts(server)
    return server
