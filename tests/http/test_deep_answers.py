"""No single request takes the HTTP server down (issue 13, item 4), in a real server process.

A plan nested deeper than pydantic's serialiser goes (~127 levels as an
inspect tree) gets the documented -32603 for its id in both protocol eras;
a request nested deeper than the SDK's parser reads gets a JSON-RPC error;
after each, a normal request is served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.backend import Backend
from tests.http.conftest import FULL_TOKEN, auth, create_document, server_process
from tests.http.test_transport import legacy_post, modern_call
from tests.stdio.test_answers import DEEPEST, assert_answered_or_too_deep, chain


def inspect_legacy(base_url: str, document: str) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": "deep",
        "method": "tools/call",
        "params": {"name": "werkbaum_inspect", "arguments": {"source": document}},
    }
    return legacy_post(base_url, body, {**auth(), "MCP-Protocol-Version": "2025-11-25"})


def answer_of(response: httpx.Response, request_id: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text[:300]
    message: dict[str, Any] = response.json()
    assert message["id"] == request_id
    return message


@pytest.mark.parametrize("levels", [130, DEEPEST])
def test_a_deep_plan_is_answered_in_both_eras(
    backend: Backend, tmp_path: Path, levels: int
) -> None:
    deep = create_document(backend, chain(levels), title="Deep")
    normal = create_document(backend)
    with server_process(["--server", backend.base_url], tmp_path / "server.log") as served:
        legacy = answer_of(inspect_legacy(served.base_url, deep), "deep")
        modern = answer_of(
            modern_call(served.base_url, "werkbaum_inspect", {"source": deep}, FULL_TOKEN), 7
        )
        for answer in (legacy, modern):
            assert_answered_or_too_deep(answer)
        read = modern_call(served.base_url, "werkbaum_read", {"source": normal}, FULL_TOKEN)
        assert answer_of(read, 7)["result"]["structuredContent"]["lines"] == 6
        assert served.process.poll() is None


@pytest.mark.parametrize("levels", [300, 50_000])
def test_a_deeply_nested_request_gets_a_json_rpc_error(
    backend: Backend, tmp_path: Path, levels: int
) -> None:
    body = (
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"werkbaum_inspect",'
        b'"arguments":{"text":' + b"[" * levels + b"]" * levels + b"}}}"
    )
    normal = create_document(backend)
    with server_process(["--server", backend.base_url], tmp_path / "server.log") as served:
        response = httpx.post(
            f"{served.base_url}/mcp",
            content=body,
            headers={
                **auth(),
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            },
            timeout=60,
        )
        assert response.status_code == 400
        assert response.json()["error"]["code"] == -32700  # the SDK's parser gives up
        read = modern_call(served.base_url, "werkbaum_read", {"source": normal}, FULL_TOKEN)
        assert answer_of(read, 7)["result"]["structuredContent"]["lines"] == 6
