"""Bodies that are not one JSON-RPC message, in both protocol eras (round 21, finding 7).

Every request with an id gets an answer: ``-32600`` with a one-line reason and
the request's id when it is a valid one, never ``202`` and never a validation
dump. Raw HTTP on a real socket, the body exactly as sent.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.http.conftest import auth
from tests.http.test_transport import LEGACY, MODERN

META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
}
ERAS = {
    "legacy": {"MCP-Protocol-Version": LEGACY},
    "modern": {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"},
}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}

# (body, the id the answer names, a word of its message)
SHAPES: dict[str, tuple[Any, Any, str]] = {
    "jsonrpc 1.0": ({**LIST, "jsonrpc": "1.0"}, 1, "jsonrpc"),
    "no jsonrpc": ({key: LIST[key] for key in ("id", "method", "params")}, 1, "jsonrpc"),
    "numeric method": ({**LIST, "method": 5}, 1, "method"),
    "no method": ({"jsonrpc": "2.0", "id": "a"}, "a", "method"),
    "float id": ({**LIST, "id": 1.5}, None, "id"),
    "boolean id": ({**LIST, "id": True}, None, "id"),
    "object id": ({**LIST, "id": {"a": 1}}, None, "id"),
    "null id": ({**LIST, "id": None}, None, "id"),
    "batch": ([LIST], None, "one JSON-RPC message"),
    "string body": ("hello", None, "one JSON-RPC message"),
    "number body": (42, None, "one JSON-RPC message"),
    "malformed error response": ({"jsonrpc": "2.0", "id": 1, "error": "no"}, 1, "error"),
}


def post(base_url: str, body: Any, era: str, raw: bytes | None = None) -> httpx.Response:
    headers = {
        **auth(),
        **ERAS[era],
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    content = json.dumps(body).encode() if raw is None else raw
    return httpx.post(f"{base_url}/mcp", content=content, headers=headers, timeout=60)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_body_that_is_not_one_message_is_invalid_request(
    base_url: str, era: str, shape: str
) -> None:
    body, request_id, about = SHAPES[shape]
    response = post(base_url, body, era)
    assert response.status_code == 400
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["id"] == request_id
    assert answer["error"]["code"] == -32600
    message = answer["error"]["message"]
    assert about in message and len(message) < 100 and "validation" not in message.lower()


@pytest.mark.parametrize("era", ERAS)
def test_params_that_are_not_an_object_are_invalid_params_as_on_stdio(
    base_url: str, era: str
) -> None:
    response = post(base_url, {**LIST, "params": []}, era)
    assert response.status_code == 400
    answer = response.json()
    assert (answer["id"], answer["error"]["code"]) == (1, -32602)
    assert answer["error"]["message"] == "Invalid params: params must be an object"


@pytest.mark.parametrize("era", ERAS)
def test_well_formed_messages_still_reach_the_sdk(base_url: str, era: str) -> None:
    listed = post(base_url, LIST, era)
    assert listed.status_code == 200 and "werkbaum_read" in listed.text
    named = post(base_url, {**LIST, "id": "x"}, era)
    assert named.json()["id"] == "x" and "result" in named.json()
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(base_url, notification, era).status_code == 202
    broken = post(base_url, None, era, raw=b'{"jsonrpc": "2.0", "id": 1,').json()
    assert broken["error"]["code"] == -32700  # not JSON: the SDK's parse error


@pytest.mark.parametrize("era", ERAS)
def test_a_large_body_is_checked_alike(base_url: str, era: str) -> None:
    # Over INLINE_ENVELOPE_BYTES: checked in a worker thread, with the same answers.
    big = {**LIST, "params": {"_meta": META, "pad": "x" * 200_000}}
    response = post(base_url, [big], era)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600
    response = post(base_url, {**big, "params": ["x" * 200_000]}, era)
    assert response.json()["error"]["code"] == -32602
