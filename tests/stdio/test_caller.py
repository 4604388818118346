"""A tool call knows who calls it: ``Caller`` gets the JSON-RPC request id, and over HTTP
the ``X-Request-Id`` header (bounded), in both protocol eras."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp import Client

from tests.http.conftest import serving
from tests.stdio.conftest import MODES, structured
from werkbaum_core.rules.catalogue import Caller, Services, ToolSpec
from werkbaum_core.stores.memory import MemoryStore
from werkbaum_stdio.registration import MAX_REQUEST_ID_HEADER, CatalogueTool, plan_server

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}
OUTPUT = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def recording_server(seen: list[Caller]) -> Any:
    def whoami(services: Services, arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
        seen.append(caller)
        return {"ok": True}

    spec = ToolSpec("whoami", "Who am I", "Records its caller.", SCHEMA, OUTPUT, whoami, True)
    services = Services(engine=None, sources=MemoryStore())  # type: ignore[arg-type]
    return plan_server(instructions="test", tools=[CatalogueTool(spec, services, None)])


@pytest.mark.parametrize("mode", MODES)
async def test_in_memory_the_request_id_and_no_header(mode: str) -> None:
    seen: list[Caller] = []
    async with Client(recording_server(seen), mode=mode) as client:
        assert structured(await client.call_tool("whoami", {})) == {"ok": True}
        await client.call_tool("whoami", {})
    assert [c.request_id for c in seen] == sorted({c.request_id for c in seen})
    assert all(c.request_id and c.request_id.isdigit() for c in seen)
    assert all(c.http_request_id is None for c in seen)


def call(base_url: str, request_id: Any, headers: dict[str, str], modern: bool) -> Any:
    params: dict[str, Any] = {"name": "whoami", "arguments": {}}
    version = "2026-07-28" if modern else "2025-11-25"
    if modern:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        headers = {**headers, "Mcp-Method": "tools/call", "Mcp-Name": "whoami"}
    response = httpx.post(
        f"{base_url}/mcp",
        json={"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params},
        headers={
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": version,
            **headers,
        },
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()["result"]["structuredContent"]


@pytest.mark.parametrize("modern", [False, True], ids=["legacy", "2026"])
def test_over_http_the_x_request_id_header(modern: bool) -> None:
    seen: list[Caller] = []
    server = recording_server(seen)
    app = server.streamable_http_app(stateless_http=True, json_response=True)
    with serving(app) as url:
        call(url, "call-1", {"X-Request-Id": "trace-abc"}, modern)
        call(url, 2, {}, modern)
        call(url, 3, {"X-Request-Id": "x" * 1000}, modern)
        call(url, 4, {"X-Request-Id": "tab\there"}, modern)  # not printable: dropped
    assert [(c.request_id, c.http_request_id) for c in seen] == [
        ("call-1", "trace-abc"),
        ("2", None),
        ("3", "x" * MAX_REQUEST_ID_HEADER),
        ("4", None),
    ]
