"""Random tool calls on the HTTP server (the calls and checks: :mod:`tests.random_calls`):
the HTTP catalogue, 2026-07-28 requests over one keep-alive connection, on a shared
document that a human edits between the calls. Every call gets a JSON answer with
a documented code, no write passes a guard rail or loses a human's line, and each
write's new base is what the backend holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.backend import Backend
from tests.backend.human import Human
from tests.http.conftest import FULL_TOKEN, make_app, serving
from tests.http.test_transport import MODERN
from tests.random_calls import PLAN, Agent, calls, with_a_human
from werkbaum_core.engine import LazyEngine

DOCUMENT_CALLS = calls(files=False)


class HttpTalk:
    """Self-contained 2026-07-28 ``tools/call`` POSTs (no handshake, no session)."""

    def __init__(self, http: httpx.Client, url: str) -> None:
        self.http = http
        self.url = url

    def call(self, number: int | str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "random", "version": "0"},
        }
        body = {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta},
        }
        headers = {
            "Authorization": f"Bearer {FULL_TOKEN}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
        }
        response = self.http.post(self.url, json=body, headers=headers)
        assert response.status_code == 200, (name, arguments, response.text)
        answer: dict[str, Any] = response.json()
        assert answer.get("id") == number, answer
        return answer


@pytest.fixture(scope="module")
def talk(backend: Backend, http_engine: LazyEngine) -> Iterator[HttpTalk]:
    """One server for the module (each example works on a document of its own)."""
    with serving(make_app(backend, http_engine)) as url, httpx.Client(timeout=60) as http:
        yield HttpTalk(http, f"{url}/mcp")


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_calls_on_a_document_a_human_edits_meanwhile(
    data: st.DataObject, talk: HttpTalk, human: Human
) -> None:
    document = human.create(PLAN)
    with_a_human(data, Agent(talk, [document]), human, document, DOCUMENT_CALLS)
