"""Audit lines of document writes over stdio (spec §14, issue 13 item 14): a real
``werkbaum-mcp`` process with ``--audit-log``, the official client, the stand-in backend."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from tests.backend import Backend
from tests.backend.faults import Twice
from tests.backend.human import Human
from tests.documents.test_faults import DEEP, Answers, FailingReads
from tests.stdio.conftest import MODES, audit_lines, structured
from werkbaum_core import SourceUnavailable
from werkbaum_core.engine import LazyEngine
from werkbaum_core.rules.catalogue import CATALOGUE, Caller, Services
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_http.sources import DocumentSources
from werkbaum_stdio.audit import AuditLog

pytestmark = pytest.mark.anyio

SERVER = Path(sys.executable).with_name("werkbaum-mcp")
PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n  - [ ] #b: B (S)\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def audited_server(tmp_path: Path, backend: Backend, audit: Path) -> StdioServerParameters:
    """``werkbaum-mcp`` on ``tmp_path`` and the stand-in, its audit lines in ``audit``."""
    return StdioServerParameters(
        command=str(SERVER),
        args=["--root", str(tmp_path), "--server", backend.base_url, "--audit-log", str(audit)],
        cwd=str(tmp_path),
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )


def set_status_in_process(
    store: DocumentStore, engine: LazyEngine, audit: Path, document: str, caller: Caller
) -> None:
    """``werkbaum_set_status`` (``#a`` done) through the catalogue alone, audited to ``audit``."""
    services = Services(
        engine=engine,
        sources=DocumentSources(store),
        audit=AuditLog(audit, client_id=store.client_id),
    )
    tool = next(spec for spec in CATALOGUE if spec.name == "werkbaum_set_status")
    base = store.read(document).base.to_json()
    tool.call(services, {"source": document, "base": base, "id": "a", "status": "x"}, caller)


@pytest.mark.parametrize("mode", MODES)
async def test_every_line_has_the_request_id_and_document_writes_the_client_id(
    mode: str, tmp_path: Path, backend: Backend, human: Human
) -> None:
    doc = human.create(PLAN)
    (tmp_path / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
    audit = tmp_path / "audit.jsonl"
    params = audited_server(tmp_path, backend, audit)
    info = Implementation(name="claude-code", version="2")
    async with Client(params, mode=mode, client_info=info) as client:

        async def write(source: str, base: dict[str, Any]) -> Any:
            args = {"source": source, "base": base, "id": "a", "status": "x"}
            return await client.call_tool("werkbaum_set_status", args)

        snapshot = structured(await client.call_tool("werkbaum_read", {"source": doc}))
        structured(await write(doc, snapshot["base"]))
        stale = structured(await write(doc, snapshot["base"]))  # the base is gone: conflict
        local = structured(await client.call_tool("werkbaum_read", {"source": "plan.werkbaum"}))
        structured(await write("plan.werkbaum", local["base"]))
    assert stale["error"]["code"] == "conflict"
    document_ok, document_conflict, file_ok = audit_lines(audit)
    agent = human.history(doc)[-1]["clientId"]
    assert agent.startswith("mcp-")
    for line in (document_ok, document_conflict):
        assert line["clientId"] == agent  # the identity the backend stored
    assert (document_ok["outcome"], document_conflict["outcome"]) == ("ok", "conflict")
    assert file_ok["outcome"] == "ok" and "clientId" not in file_ok  # files have none
    ids = [line["requestId"] for line in (document_ok, document_conflict, file_ok)]
    assert len(set(ids)) == 3 and all(isinstance(i, str) and i for i in ids)
    assert stale["error"]["requestId"] == document_conflict["requestId"]
    assert PLAN.splitlines()[1] not in json.dumps([document_ok, document_conflict, file_ok])


@pytest.mark.parametrize("mode", MODES)
async def test_a_write_after_a_read_answered_twice_is_reported_and_audited_as_done(
    mode: str, tmp_path: Path, backend: Backend, human: Human
) -> None:
    """Round 23 F5: the stand-in answers the write's read of the document twice on one
    kept-alive socket, so the PATCH sent there next reads a document for its answer."""
    doc = human.create(PLAN)
    audit = tmp_path / "audit.jsonl"
    params = audited_server(tmp_path, backend, audit)
    async with Client(params, mode=mode) as client:
        snapshot = structured(await client.call_tool("werkbaum_read", {"source": doc}))
        args = {"source": doc, "base": snapshot["base"], "id": "a", "status": "x"}
        with backend.faults.injected(Twice(method="GET", path=doc)) as twice:
            result = structured(await client.call_tool("werkbaum_set_status", args))
    assert twice.answered, "the fault was on the wire"
    assert result["base"]["version"] == 2, result
    assert "[x] #a" in human.get(doc)["content"]
    assert [line["outcome"] for line in audit_lines(audit)] == ["ok"]


def test_a_write_with_an_unknown_outcome_is_audited_as_such(
    tmp_path: Path, backend: Backend, human: Human, shared_engine: LazyEngine
) -> None:
    """A PATCH answered twice with nothing that can be its answer: the error and the audit
    line both say the change may have landed (``applied: "unknown"``), not that it failed."""
    doc = human.create(PLAN)
    audit = tmp_path / "audit.jsonl"
    answers = Answers("PATCH", "/content", DEEP)
    with (
        DocumentStore([backend.base_url], transport=answers) as store,
        pytest.raises(SourceUnavailable) as caught,
    ):
        set_status_in_process(store, shared_engine, audit, doc, Caller())
    assert caught.value.details["applied"] == "unknown"
    [line] = audit_lines(audit)
    assert (line["outcome"], line["applied"]) == ("source_unavailable", "unknown")


def test_a_landed_write_without_its_text_is_audited_as_applied(
    tmp_path: Path, backend: Backend, human: Human, shared_engine: LazyEngine
) -> None:
    """Round 24 F2's other half: the backend said 200, the merged text can be neither
    rebuilt nor re-read: the error and the audit line say the change is in
    (``applied: true`` and its version), not that the write failed."""
    doc = human.create(PLAN)
    audit = tmp_path / "audit.jsonl"
    with (
        DocumentStore([backend.base_url], transport=FailingReads(unreadable_merge=True)) as store,
        pytest.raises(SourceUnavailable) as caught,
    ):
        set_status_in_process(store, shared_engine, audit, doc, Caller())
    assert (caught.value.details["applied"], caught.value.details["version"]) == (True, 2)
    [line] = audit_lines(audit)
    assert (line["outcome"], line["applied"]) == ("source_unavailable", True)
    assert "[x] #a" in human.get(doc)["content"]
