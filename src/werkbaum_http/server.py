"""The remote MCP server: the stdio server's registration over the documents store alone.

Everything that defines a tool, a prompt or the guide comes from
:mod:`werkbaum_stdio.registration`, so the remote tool set is the local one
(same names, schemas, annotations and results) minus file resources, roots and
the mirror. A test proves the subset relation and byte-identical results.
"""

from __future__ import annotations

from collections.abc import Sequence

from werkbaum_core.rules.catalogue import Services
from werkbaum_http.sources import DocumentSources
from werkbaum_stdio.registration import (
    WORKING_ORDER,
    PlanServer,
    catalogue_tools,
    document_template,
    plan_server,
)


def instructions(servers: Sequence[str], *, read_only: bool) -> str:
    """What every client is told: the working order and what this server offers."""
    mode = "read-only (no write tools)" if read_only else "read and write"
    return (
        f"{WORKING_ORDER} This server: {mode}; shared documents only (no files), on "
        f"{', '.join(servers)}: pass a document URL there, a ?live= share link, or a bare "
        "uuid (first backend)."
    )


def build_server(services: Services, sources: DocumentSources, *, read_only: bool) -> PlanServer:
    """One MCP server; ``read_only`` lists (and dispatches) only the read tools.

    No ``subscriptions/listen``: a stateless JSON-response endpoint cannot hold
    its stream open, and nothing here changes on its own accord (an agent
    re-reads before each write).
    """
    return plan_server(
        instructions=instructions(sources.store.servers, read_only=read_only),
        tools=catalogue_tools(services, read_only=read_only),
        guide=services.guide,
        templates=[document_template(sources.read)],
        subscriptions=False,
    )
