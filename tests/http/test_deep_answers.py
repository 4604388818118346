"""No single request takes the HTTP server down (issue 13, item 4).

A deep plan inspects (the tree is cut at its cap) in a real server process;
an answer nested deeper than pydantic's serialiser goes gets the documented
-32603 for its id in both protocol eras; a request nested deeper than the
SDK's parser reads gets a JSON-RPC error. After each, a normal request is
served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.backend import Backend
from tests.http.conftest import FULL_TOKEN, auth, create_document, server_process, serving
from tests.http.test_transport import legacy_post, modern_call
from tests.plangen import nested_plan
from tests.stdio.deep_tool import deep_server
from tests.stdio.test_answers import assert_answered_or_too_deep


def answer_of(response: httpx.Response, request_id: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text[:300]
    message: dict[str, Any] = response.json()
    assert message["id"] == request_id
    return message


def legacy_call(base_url: str, name: str, arguments: dict[str, Any]) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": "deep",
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return legacy_post(base_url, body, {**auth(), "MCP-Protocol-Version": "2025-11-25"})


@pytest.mark.parametrize("levels", [130, 2000])
def test_a_deep_plan_inspects_in_both_eras(backend: Backend, tmp_path: Path, levels: int) -> None:
    deep = create_document(backend, nested_plan(levels), title="Deep")
    normal = create_document(backend)
    with server_process(["--server", backend.base_url], tmp_path / "server.log") as served:
        legacy = legacy_call(served.base_url, "werkbaum_inspect", {"source": deep})
        modern = modern_call(served.base_url, "werkbaum_inspect", {"source": deep}, FULL_TOKEN)
        for answer in (answer_of(legacy, "deep"), answer_of(modern, 7)):
            assert "cut" in answer["result"]["structuredContent"]
        read = modern_call(served.base_url, "werkbaum_read", {"source": normal}, FULL_TOKEN)
        assert answer_of(read, 7)["result"]["structuredContent"]["lines"] == 6
        assert served.process.poll() is None


@pytest.mark.parametrize("levels", [200, 300, 600])
def test_an_answer_too_deep_to_encode_is_an_error_for_its_request(levels: int) -> None:
    app = deep_server().streamable_http_app(stateless_http=True, json_response=True)
    with serving(app) as url:
        legacy = answer_of(legacy_call(url, "nest", {"levels": levels}), "deep")
        modern = answer_of(modern_call(url, "nest", {"levels": levels}, FULL_TOKEN), 7)
        for answer in (legacy, modern):
            assert assert_answered_or_too_deep(answer, levels) is (levels > 255)
        again = answer_of(modern_call(url, "nest", {"levels": 3}, FULL_TOKEN), 7)
        assert again["result"]["structuredContent"] == {"c": {"c": {}}}


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
