"""The remote server is a subset of the local one: same tools, same schemas, same JSON.

The stdio server runs in-memory (the official client's in-process transport)
on dukpy; the HTTP server runs over a real socket on its default executor
(node when installed) — so byte-identical results also show that the two
executors agree on the reference plan.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from mcp import Client
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp.types import Implementation

from tests.backend import Backend
from tests.conftest import FIXTURES
from tests.http.conftest import (
    CLIENT_NAME,
    FULL_TOKEN,
    MODES,
    READ_TOKEN,
    connect,
    create_document,
)
from werkbaum_core.engine import LazyEngine
from werkbaum_stdio.registration import PLAN_VIEW_URI
from werkbaum_stdio.roots import Roots
from werkbaum_stdio.server import StdioConfig, build_server

pytestmark = pytest.mark.anyio

REFERENCE = (FIXTURES / "werkbaum.werkbaum").read_text(encoding="utf-8")
INSPECT_CALLS: list[dict[str, Any]] = [
    {"text": REFERENCE},
    {"text": REFERENCE, "include": ["path"]},
    {"text": REFERENCE, "id": "be", "include": ["tree", "warnings"]},
]


@contextlib.asynccontextmanager
async def stdio_client(
    root: Path, engine: LazyEngine, mode: str, servers: tuple[str, ...] = ()
) -> AsyncIterator[Client]:
    config = StdioConfig(roots=Roots.from_args([str(root)]), servers=servers)
    server = build_server(config, engine)
    info = Implementation(name=CLIENT_NAME, version="1.0")
    async with Client(server, mode=mode, client_info=info) as client:
        yield client


def wire(tool: Any) -> dict[str, Any]:
    """A tool as ``tools/list`` puts it on the wire."""
    dumped: dict[str, Any] = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("token", [FULL_TOKEN, READ_TOKEN], ids=["full", "read"])
async def test_http_tools_are_a_subset_with_identical_definitions(
    mode: str, token: str, base_url: str, tmp_path: Path, shared_engine: LazyEngine
) -> None:
    async with stdio_client(tmp_path, shared_engine, mode) as local:
        local_tools = {tool.name: wire(tool) for tool in (await local.list_tools()).tools}
        local_prompts = [p.model_dump() for p in (await local.list_prompts()).prompts]
        local_guide = (await local.read_resource("werkbaum://guide")).contents[0]
    async with connect(base_url, token, mode) as remote:
        remote_tools = {tool.name: wire(tool) for tool in (await remote.list_tools()).tools}
        remote_prompts = [p.model_dump() for p in (await remote.list_prompts()).prompts]
        remote_guide = (await remote.read_resource("werkbaum://guide")).contents[0]
    assert remote_tools, "the remote server lists tools"
    assert set(remote_tools) <= set(local_tools)
    for name, definition in remote_tools.items():
        # name, title, description, inputSchema, outputSchema and annotations, all of it
        assert definition == local_tools[name], name
    assert remote_prompts == local_prompts
    assert remote_guide == local_guide


@pytest.mark.parametrize("mode", MODES)
async def test_http_serves_the_same_plan_view(
    mode: str, base_url: str, tmp_path: Path, shared_engine: LazyEngine
) -> None:
    """The MCP App view: the same resources/list entry, the same read (HTML, mime, _meta),
    the same extension in the 2026 era's capabilities."""
    views = []
    async with stdio_client(tmp_path, shared_engine, mode) as local:
        views.append(await plan_view_of(local))
    async with connect(base_url, READ_TOKEN, mode) as remote:
        views.append(await plan_view_of(remote))
    here, there = views
    assert here == there
    entry, contents, extensions = there
    assert entry["mimeType"] == contents["mimeType"] == APP_MIME_TYPE
    assert contents["text"].startswith("<!DOCTYPE html>")
    assert extensions == ({EXTENSION_ID: {}} if mode == "auto" else None)


async def plan_view_of(client: Client) -> tuple[Any, ...]:
    [entry] = [r for r in (await client.list_resources()).resources if str(r.uri) == PLAN_VIEW_URI]
    [contents] = (await client.read_resource(PLAN_VIEW_URI)).contents
    return (
        entry.model_dump(mode="json", by_alias=True, exclude_none=True),
        contents.model_dump(mode="json", by_alias=True, exclude_none=True),
        client.server_capabilities.extensions,
    )


@pytest.mark.parametrize("mode", MODES)
async def test_inspect_gives_byte_identical_json_over_stdio_and_http(
    mode: str, base_url: str, tmp_path: Path, shared_engine: LazyEngine
) -> None:
    async with stdio_client(tmp_path, shared_engine, mode) as local:
        local_results = [await local.call_tool("werkbaum_inspect", a) for a in INSPECT_CALLS]
    async with connect(base_url, FULL_TOKEN, mode) as remote:
        remote_results = [await remote.call_tool("werkbaum_inspect", a) for a in INSPECT_CALLS]
    for args, here, there in zip(INSPECT_CALLS, local_results, remote_results, strict=True):
        assert not here.is_error and not there.is_error, args.keys()
        local_json = json.dumps(here.structured_content, sort_keys=False)
        remote_json = json.dumps(there.structured_content, sort_keys=False)
        assert local_json == remote_json
        assert here.content == there.content  # the text content too
    full = remote_results[0].structured_content
    assert full is not None
    assert full["warnings"] == []
    assert len(full["path"]["needed"]) == 188
    assert len(full["path"]["stations"]) == 30
    assert full["path"]["exact"] is True


def document_calls(document: str, base: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Reads, and writes as dry runs (nothing changes, so both servers see the same base)."""
    uuid = document.rsplit("/", 1)[1]
    return [
        ("werkbaum_read", {"source": document}),
        ("werkbaum_read", {"source": uuid}),
        ("werkbaum_inspect", {"source": document}),
        ("werkbaum_inspect", {"source": uuid, "id": "be", "include": ["tree"]}),
        (
            "werkbaum_set_status",
            {"source": document, "base": base, "id": "be", "status": "/", "dryRun": True},
        ),
        (
            "werkbaum_move_node",
            {"source": document, "base": base, "id": "be", "dryRun": True},
        ),
        ("werkbaum_set_status", {"source": document, "base": base, "id": "nope", "status": "x"}),
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_document_calls_give_byte_identical_json_over_stdio_and_http(
    mode: str, base_url: str, backend: Backend, tmp_path: Path, shared_engine: LazyEngine
) -> None:
    document = create_document(backend, REFERENCE, title="Werkbaum")
    servers = (backend.base_url,)
    async with stdio_client(tmp_path, shared_engine, mode, servers) as local:
        base = (await local.call_tool("werkbaum_read", {"source": document})).structured_content
        assert base is not None
        calls = document_calls(document, base["base"])
        local_results = [await local.call_tool(name, args) for name, args in calls]
        local_doc = await local.read_resource(f"werkbaum://doc/{quote(document, safe='')}")
    async with connect(base_url, FULL_TOKEN, mode) as remote:
        remote_results = [await remote.call_tool(name, args) for name, args in calls]
        remote_doc = await remote.read_resource(f"werkbaum://doc/{quote(document, safe='')}")
    for (name, args), here, there in zip(calls, local_results, remote_results, strict=True):
        assert here.is_error == there.is_error, (name, args)
        if here.is_error:
            # the error JSON differs only in the JSON-RPC request id of each transport
            local_error = json.loads(here.content[0].text)["error"]  # type: ignore[union-attr]
            remote_error = json.loads(there.content[0].text)["error"]  # type: ignore[union-attr]
            local_error.pop("requestId", None)
            remote_error.pop("requestId", None)
            assert local_error == remote_error
            continue
        local_json = json.dumps(here.structured_content, sort_keys=False)
        remote_json = json.dumps(there.structured_content, sort_keys=False)
        assert local_json == remote_json, (name, args)
        assert here.content == there.content
    assert local_doc.contents == remote_doc.contents  # text and _meta (version, checksum)
    # everything succeeded but the last call, whose error was compared as well
    assert [r.is_error for r in remote_results] == [False] * (len(calls) - 1) + [True]
