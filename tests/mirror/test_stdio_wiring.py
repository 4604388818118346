"""``--mirror`` wired into the stdio server: mirror files stand for their documents."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.types import Implementation

from tests.backend import Backend
from tests.backend.human import Human
from tests.mirror.conftest import PLAN, commits, git, trailers
from tests.stdio.conftest import structured
from werkbaum_core import WerkbaumError
from werkbaum_core.engine import LazyEngine
from werkbaum_stdio.roots import Roots
from werkbaum_stdio.server import StdioConfig, build_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def config(repo: Path, backend: Backend, doc: str) -> StdioConfig:
    return StdioConfig(
        roots=Roots.from_args([str(repo)]),
        servers=(backend.base_url,),
        mirrors=(f"{doc}={repo / 'plan.werkbaum'}",),
    )


async def test_reads_and_writes_of_the_mirror_file_go_to_the_document(
    repo: Path, backend: Backend, human: Human, shared_engine: LazyEngine
) -> None:
    doc = human.create(PLAN, title="Roadmap")
    url = f"{backend.base_url}/api/v1/documents/{doc}"
    server = build_server(config(repo, backend, doc), shared_engine)
    before = commits(repo)
    info = Implementation(name="claude-code", version="2")
    async with Client(server, mode="legacy", client_info=info) as client:
        path = str(repo / "plan.werkbaum")
        snapshot = structured(await client.call_tool("werkbaum_read", {"source": path}))
        assert snapshot["mirrorOf"] == url
        assert snapshot["base"]["version"] == 1 and snapshot["text"] == PLAN
        args = {"source": path, "base": snapshot["base"], "id": "a", "status": "~"}
        result = structured(await client.call_tool("werkbaum_set_status", args))
    assert result["redirectedTo"] == url
    assert "commit" in result["mirror"], result["mirror"]
    stored = human.get(doc)["content"]
    assert "  - [~] #a: A (S)" in stored.split("\n"), "the change landed in the document"
    assert (repo / "plan.werkbaum").read_bytes() == stored.encode("utf-8")
    assert len(commits(repo)) == len(before) + 1
    assert "Werkbaum-Changed-By: claude-code" in trailers(repo)
    assert git(repo, "status", "--porcelain") == ""


def test_a_mirror_outside_a_git_work_tree_is_a_start_up_error(
    tmp_path: Path, backend: Backend, human: Human, shared_engine: LazyEngine
) -> None:
    plain = tmp_path / "not-a-repo"
    plain.mkdir()
    doc = human.create(PLAN)
    with pytest.raises(WerkbaumError, match="git"):
        build_server(config(plain, backend, doc), shared_engine)
