"""At the default log level the HTTP server writes no line per request (issue 14, item 8):
its stderr holds its start-up lines and audit lines; ``--log-level info`` adds the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.backend import Backend
from tests.http.conftest import FULL_TOKEN, MODES, connect, create_document, server_process
from tests.stdio.conftest import structured


async def several_requests(base_url: str, document: str) -> None:
    """A session in each era: lists, reads, a tool error and a write."""
    for mode in MODES:
        async with connect(base_url, FULL_TOKEN, mode) as client:
            await client.list_tools()
            await client.list_resources()
            await client.read_resource("werkbaum://guide")
            await client.list_prompts()
            snapshot = structured(await client.call_tool("werkbaum_read", {"source": document}))
            await client.call_tool("werkbaum_inspect", {"source": document})
            await client.call_tool("werkbaum_read", {"source": "not-a-document"})
            args = {"source": document, "base": snapshot["base"], "id": "a", "status": "x"}
            await client.call_tool("werkbaum_set_status", {**args, "dryRun": True})


@pytest.mark.anyio
async def test_default_level_writes_no_line_per_request(backend: Backend, tmp_path: Path) -> None:
    document = create_document(backend)
    log = tmp_path / "server.log"
    with server_process(["--server", backend.base_url], log) as served:
        await several_requests(served.base_url, document)
    lines = log.read_text(encoding="utf-8").splitlines()
    audit = [json.loads(line) for line in lines if line.startswith('{"time"')]
    assert [a["outcome"] for a in audit] == ["dryRun", "dryRun"]  # one per era
    others = [line for line in lines if not line.startswith('{"time"')]
    assert others, "the start-up line"
    assert all(line.startswith("werkbaum-mcp-http: ") for line in others), others


@pytest.mark.anyio
async def test_log_level_info_adds_the_access_log(backend: Backend, tmp_path: Path) -> None:
    document = create_document(backend)
    log = tmp_path / "server.log"
    args = ["--server", backend.base_url, "--log-level", "info"]
    with server_process(args, log) as served:
        await several_requests(served.base_url, document)
    text = log.read_text(encoding="utf-8")
    assert text.count('"POST /mcp" 200') >= 10
    assert "INFO uvicorn.error: Started server process" in text
