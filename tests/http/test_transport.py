"""Raw HTTP against the server on a real socket: tokens, discovery, health, Host, body size."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.backend import Backend
from tests.http.conftest import (
    FULL_TOKEN,
    READ_TOKEN,
    auth,
    create_document,
    make_app,
    serving,
)
from werkbaum_core.engine import LazyEngine
from werkbaum_http.config import MAX_BODY_BYTES

CHALLENGE = 'Bearer realm="werkbaum", error="invalid_token"'
LEGACY = "2025-11-25"
MODERN = "2026-07-28"


def initialize(request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }


def legacy_post(
    base_url: str, body: Any, headers: dict[str, str] | None = None, **kwargs: Any
) -> httpx.Response:
    return httpx.post(
        f"{base_url}/mcp",
        json=body,
        headers={"Accept": "application/json, text/event-stream", **(headers or {})},
        timeout=60,
        **kwargs,
    )


def modern_call(base_url: str, name: str, arguments: dict[str, Any], token: str) -> httpx.Response:
    """A 2026-07-28 ``tools/call``: self-contained, no handshake, no session."""
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            },
        },
    }
    headers = {
        **auth(token),
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    return httpx.post(f"{base_url}/mcp", json=body, headers=headers, timeout=60)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token-wrong-token-wrong-token-wrong"},
        {"Authorization": f"Bearer {FULL_TOKEN}x"},
        {"Authorization": f"Bearer {FULL_TOKEN[:-1]}"},
        {"Authorization": f"Basic {FULL_TOKEN}"},
        {"Authorization": FULL_TOKEN},
        {"Authorization": "Bearer"},
    ],
    ids=["none", "wrong", "longer", "shorter", "basic", "no-scheme", "empty"],
)
def test_missing_or_wrong_token_is_401_with_a_plain_bearer_challenge(
    base_url: str, headers: dict[str, str]
) -> None:
    response = legacy_post(base_url, initialize(), headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == CHALLENGE
    assert "resource_metadata" not in response.headers["www-authenticate"]
    assert FULL_TOKEN not in response.text and READ_TOKEN not in response.text


def test_token_in_the_query_string_is_not_accepted(base_url: str) -> None:
    response = legacy_post(base_url, initialize(), params={"access_token": FULL_TOKEN})
    assert response.status_code == 401


def test_every_path_but_healthz_needs_the_token(base_url: str) -> None:
    for path in ("/", "/mcp", "/mcp/", "/anything", "/healthz/x"):
        assert httpx.get(base_url + path).status_code == 401, path


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/.well-known",
    ],
)
def test_no_oauth_discovery_anywhere(base_url: str, path: str) -> None:
    assert httpx.get(base_url + path).status_code == 404
    assert httpx.get(base_url + path, headers=auth()).status_code == 404


def test_healthz_is_open(base_url: str) -> None:
    response = httpx.get(f"{base_url}/healthz")
    assert response.status_code == 200
    assert response.json() == {"ok": True}
    assert httpx.head(f"{base_url}/healthz").status_code == 200


@pytest.mark.parametrize("token", [FULL_TOKEN, READ_TOKEN], ids=["full", "read"])
def test_both_tokens_pass_legacy_handshake_without_a_session(base_url: str, token: str) -> None:
    response = legacy_post(base_url, initialize(), auth(token))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in response.headers  # stateless: nothing to lose on restart
    assert response.json()["result"]["protocolVersion"] == LEGACY


def test_only_post_reaches_mcp(base_url: str) -> None:
    for method in ("GET", "DELETE", "PUT"):
        response = httpx.request(method, f"{base_url}/mcp", headers=auth())
        assert response.status_code == 405, method
        assert response.headers["allow"] == "POST"
    assert httpx.get(f"{base_url}/elsewhere", headers=auth()).status_code == 404


def test_modern_request_needs_no_handshake(base_url: str, backend: Backend) -> None:
    document = create_document(backend)
    response = modern_call(base_url, "werkbaum_read", {"source": document}, FULL_TOKEN)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["structuredContent"]["lines"] == 6
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "werkbaum"


def test_unknown_host_is_refused(base_url: str) -> None:
    response = legacy_post(base_url, initialize(), {**auth(), "Host": "evil.example:8000"})
    assert response.status_code in (400, 421)
    response = legacy_post(base_url, initialize(), {**auth(), "Host": "evil.example"})
    assert response.status_code in (400, 421)


def test_foreign_browser_origin_is_refused(base_url: str) -> None:
    response = legacy_post(base_url, initialize(), {**auth(), "Origin": "https://evil.example"})
    assert response.status_code == 403
    same = legacy_post(base_url, initialize(), {**auth(), "Origin": base_url})
    assert same.status_code == 200


def test_allowed_host_for_a_reverse_proxy(backend: Backend, http_engine: LazyEngine) -> None:
    app = make_app(backend, http_engine, allowed_hosts=("mcp.example.org",))
    with serving(app) as url:
        proxied = legacy_post(url, initialize(), {**auth(), "Host": "mcp.example.org"})
        assert proxied.status_code == 200, proxied.text
        direct = legacy_post(url, initialize(), auth())  # Host: 127.0.0.1:<port>
        assert direct.status_code in (400, 421)
        assert httpx.get(f"{url}/healthz").status_code == 200


def test_oversized_body_is_413(base_url: str) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"x" * MAX_BODY_BYTES
    body += b'"}}'
    response = httpx.post(
        f"{base_url}/mcp",
        content=body,
        headers={**auth(), "Content-Type": "application/json", "Accept": "application/json"},
        timeout=60,
    )
    assert response.status_code == 413


def test_oversized_body_without_token_is_401_not_read(base_url: str) -> None:
    body = b"x" * (MAX_BODY_BYTES + 1)
    response = httpx.post(f"{base_url}/mcp", content=body, timeout=60)
    assert response.status_code == 401


def test_a_two_million_character_plan_fits_the_body_limit(base_url: str) -> None:
    # The backend's text limit in the worst case for UTF-8 JSON: every character
    # outside the BMP (4 bytes), as a full-size werkbaum_write or inspect carries it.
    text = "- [ ] #big: " + "\N{GRINNING FACE}" * (2_000_000 - 13) + "\n"
    assert len(text) == 2_000_000
    response = modern_call(
        base_url, "werkbaum_inspect", {"text": text, "include": ["warnings"]}, FULL_TOKEN
    )
    assert response.status_code == 200, response.text[:300]
    assert len(response.request.content) > 7.5 * 1024 * 1024  # twice the SDK's default limit
    assert response.json()["result"]["structuredContent"] == {"warnings": []}
    too_big = modern_call(base_url, "werkbaum_inspect", {"text": text + "x"}, FULL_TOKEN)
    assert too_big.status_code == 200
    error = json.loads(too_big.json()["result"]["content"][0]["text"])["error"]
    assert error["code"] == "too_large"  # the same code as an oversized file, before any JS
