"""Audit lines of the HTTP server (spec §14, issue 13 item 14): the JSON-RPC request id,
the client's ``X-Request-Id`` and the ``clientId`` on every line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.backend import Backend
from tests.documents.test_audit import set_status_in_process
from tests.http.conftest import (
    FULL_TOKEN,
    PLAN,
    create_document,
    history_names,
    server_process,
)
from tests.http.test_transport import modern_call
from werkbaum_core import checksum
from werkbaum_core.engine import LazyEngine
from werkbaum_core.rules.catalogue import Caller
from werkbaum_core.stores.documents import DocumentStore

TRACE = "trace-4bf92f3577b34da6a3ce929d0e0e4736"


def set_status(base_url: str, document: str, base: dict[str, Any], request_id: str) -> Any:
    """A ``tools/call`` with a string id and an ``X-Request-Id``."""
    arguments = {"source": document, "base": base, "id": "a", "status": "x"}
    response = modern_call(
        base_url,
        "werkbaum_set_status",
        arguments,
        FULL_TOKEN,
        request_id=request_id,
        client="audit-test",
        headers={"X-Request-Id": TRACE},
    )
    assert response.status_code == 200, response.text
    return response.json()


def audit_of(log: Path) -> list[dict[str, Any]]:
    lines = log.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.startswith('{"time"')]


@pytest.fixture(scope="module")
def written(
    backend: Backend, tmp_path_factory: pytest.TempPathFactory
) -> tuple[list[dict[str, Any]], str]:
    """One document write through a real ``werkbaum-mcp-http``: its audit lines, the client."""
    document = create_document(backend)
    base = httpx.get(document).json()
    log = tmp_path_factory.mktemp("audit") / "server.log"
    with server_process(["--server", backend.base_url], log) as served:
        answer = set_status(
            served.base_url,
            document,
            {"version": base["version"], "checksum": checksum(base["content"])},
            "audit-1",
        )
    assert answer["result"]["structuredContent"]["base"]["version"] == 2
    assert history_names(document)[-1] == "audit-test"
    return audit_of(log), httpx.get(f"{document}/history").json()[-1]["clientId"]


def test_an_http_write_line_has_the_request_id_and_the_client_id(
    written: tuple[list[dict[str, Any]], str],
) -> None:
    lines, client_id = written
    [line] = lines
    assert line["requestId"] == "audit-1" and line["outcome"] == "ok"
    assert line["clientId"] == client_id and client_id.startswith("mcp-")
    assert PLAN.splitlines()[1] not in json.dumps(line)


def test_an_http_write_line_has_the_x_request_id(
    written: tuple[list[dict[str, Any]], str],
) -> None:
    [line] = written[0]
    assert line["httpRequestId"] == TRACE


def test_the_audit_line_carries_the_x_request_id_it_is_given(
    backend: Backend, http_engine: LazyEngine, tmp_path: Path
) -> None:
    """The audit side alone: a caller with an ``X-Request-Id`` (at most 128 characters kept)."""
    document = create_document(backend)
    audit = tmp_path / "audit.jsonl"
    with DocumentStore([backend.base_url], allow_any_host=False) as store:
        caller = Caller("Agent", request_id="9", http_request_id=TRACE + "x" * 200)
        set_status_in_process(store, http_engine, audit, document, caller)
    [line] = [json.loads(text) for text in audit.read_text(encoding="utf-8").splitlines()]
    assert line["httpRequestId"] == (TRACE + "x" * 200)[:128]
    assert (line["requestId"], line["clientId"]) == ("9", store.client_id)
