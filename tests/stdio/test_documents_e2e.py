"""Shared documents end to end: ``werkbaum-mcp`` as a subprocess against the local backend."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from tests.backend import Backend
from tests.backend.human import Human
from tests.stdio.conftest import MODES, structured

pytestmark = pytest.mark.anyio

SERVER = Path(sys.executable).with_name("werkbaum-mcp")
PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n  - [ ] #b: B (S)\n  - [ ] #c: C (S)\n"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=MODES)
async def agent(
    request: pytest.FixtureRequest, backend: Backend, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    """One server process per protocol era, shared by the module's tests (each uses its
    own document)."""
    tmp_path = tmp_path_factory.mktemp("agent")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    params = StdioServerParameters(
        command=str(SERVER),
        args=["--root", str(tmp_path), "--server", backend.base_url],
        cwd=str(tmp_path),
        env=env,
    )
    info = Implementation(name="claude-code", version="2.1")
    async with Client(params, mode=request.param, client_info=info) as client:
        yield client


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    return structured(await client.call_tool(tool, args))  # type: ignore[no-any-return]


async def test_agent_write_shows_in_history_with_the_clients_name(
    agent: Client, human: Human
) -> None:
    doc = human.create(PLAN)
    snapshot = await call(agent, "werkbaum_read", source=doc)
    assert snapshot["base"]["version"] == 1 and snapshot["text"] == PLAN
    result = await call(
        agent, "werkbaum_set_status", source=doc, base=snapshot["base"], id="a", status="~"
    )
    assert result["base"]["version"] == 2
    last = human.history(doc)[-1]
    assert last["displayName"] == "claude-code"
    assert last["clientId"].startswith("mcp-")
    assert human.get(doc)["content"].split("\n")[1] == "  - [~] #a: A (S)"


async def test_url_share_link_and_uuid_read_the_same(
    agent: Client, human: Human, backend: Backend
) -> None:
    doc = human.create(PLAN)
    url = f"{backend.base_url}/api/v1/documents/{doc}"
    link = f"{backend.base_url}/?live={quote(url, safe='')}"
    reads = [await call(agent, "werkbaum_read", source=s) for s in (url, link, doc)]
    assert reads[0] == reads[1] == reads[2]
    # the resource URIs the template describes, as a tools-only host passes them
    for uri in (f"werkbaum://doc/{doc}", f"werkbaum://doc/{quote(url, safe='')}"):
        assert await call(agent, "werkbaum_read", source=uri) == reads[0]
    inspected = await call(agent, "werkbaum_inspect", source=f"werkbaum://doc/{doc}")
    assert inspected["base"] == reads[0]["base"]


async def test_concurrent_edit_of_the_same_line_is_a_conflict(agent: Client, human: Human) -> None:
    doc = human.create(PLAN)
    base = (await call(agent, "werkbaum_read", source=doc))["base"]
    human.patch(
        doc,
        [{"op": "replace", "index": 1, "count": 1, "lines": ["  - [x] #a: A (S) done by Anna"]}],
    )
    result = await agent.call_tool(
        "werkbaum_set_status", {"source": doc, "base": base, "id": "a", "status": "~"}
    )
    assert result.is_error
    error = structured(result)["error"]
    assert error["code"] == "conflict"
    assert "  - [x] #a: A (S) done by Anna" in error["current"]["text"].split("\n")
    assert "done by Anna" in human.get(doc)["content"], "nothing overwritten"
    assert human.history(doc)[-1]["displayName"] == "Anna"


async def test_non_overlapping_concurrent_edit_is_merged(agent: Client, human: Human) -> None:
    doc = human.create(PLAN)
    base = (await call(agent, "werkbaum_read", source=doc))["base"]
    human.patch(doc, [{"op": "replace", "index": 3, "count": 1, "lines": ["  - [/] #c: C (S)"]}])
    result = await call(agent, "werkbaum_set_status", source=doc, base=base, id="a", status="x")
    stored = human.get(doc)["content"]
    assert "  - [x] #a: A (S)" in stored.split("\n") and "  - [/] #c: C (S)" in stored.split("\n")
    assert result["base"]["version"] == human.get(doc)["version"]


async def test_prod_is_refused_and_nothing_written(agent: Client, human: Human) -> None:
    doc = human.create(PLAN)
    base = (await call(agent, "werkbaum_read", source=doc))["base"]
    result = await agent.call_tool(
        "werkbaum_set_status", {"source": doc, "base": base, "id": "a", "status": "^"}
    )
    assert result.is_error and structured(result)["error"]["code"] == "blocked"
    assert human.get(doc)["version"] == 1


async def test_unknown_document_is_source_unavailable(agent: Client) -> None:
    result = await agent.call_tool(
        "werkbaum_read", {"source": "6f1c2a7e-0000-4000-8000-000000000000"}
    )
    assert result.is_error and structured(result)["error"]["code"] == "source_unavailable"


async def test_document_resource_carries_version_and_checksum(agent: Client, human: Human) -> None:
    doc = human.create(PLAN)
    read = await agent.read_resource(f"werkbaum://doc/{doc}")
    content = read.contents[0]
    assert content.text == PLAN  # type: ignore[union-attr]
    assert content.meta is not None and content.meta["version"] == 1
    assert content.meta["checksum"].startswith("sha256:")
