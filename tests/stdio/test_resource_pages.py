"""``resources/list`` is paginated (issue 14, item 5): every plan file of a large root is
listed once, page by page, instead of the list stopping at 1,000 files."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client, MCPError

from tests.stdio.conftest import MODES, make_server
from werkbaum_core.engine import LazyEngine
from werkbaum_stdio.server import PAGE_SIZE

pytestmark = pytest.mark.anyio

FILES = 2 * PAGE_SIZE + 100
"""More than two pages, and more than the 1,000 files one answer used to stop at."""


@pytest.fixture(scope="module")
def large_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("large")
    for group in range(11):
        folder = root / f"team{group:02d}"
        folder.mkdir()
        for number in range(FILES // 11):
            (folder / f"plan{number:03d}.werkbaum").write_text("- [ ] #a: A\n", encoding="utf-8")
    return root


@pytest.fixture(autouse=True)
def in_the_root(large_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Started in the root, as a host starts it in the project: paths are relative to it."""
    monkeypatch.chdir(large_root)


@pytest.mark.parametrize("mode", MODES)
async def test_every_plan_file_is_listed_once_across_the_pages(
    mode: str, large_root: Path, shared_engine: LazyEngine, tmp_path: Path
) -> None:
    server = make_server(large_root, shared_engine, tmp_path / "audit.jsonl")
    async with Client(server, mode=mode) as client:
        pages = [await client.list_resources()]
        while pages[-1].next_cursor is not None:
            pages.append(await client.list_resources(cursor=pages[-1].next_cursor))
        plan = await client.read_resource("werkbaum://file/team10/plan099.werkbaum")
    uris = [str(r.uri) for page in pages for r in page.resources]
    assert [len(page.resources) for page in pages] == [2 + PAGE_SIZE, PAGE_SIZE, 100]
    # first, on the first page only
    assert uris[:2] == ["werkbaum://guide", "ui://werkbaum/plan-view.html"]
    files = uris[2:]
    assert len(files) == len(set(files)) == FILES
    assert files[0] == "werkbaum://file/team00/plan000.werkbaum"
    assert files[-1] == "werkbaum://file/team10/plan099.werkbaum"
    assert plan.contents[0].text == "- [ ] #a: A\n"  # type: ignore[union-attr]


@pytest.mark.parametrize("cursor", ["not-a-cursor", "-5", "1" * 40, "11000"])
async def test_a_cursor_the_server_did_not_hand_out_is_invalid_params(
    cursor: str, large_root: Path, shared_engine: LazyEngine, tmp_path: Path
) -> None:
    server = make_server(large_root, shared_engine, tmp_path / "audit.jsonl")
    async with Client(server) as client:
        with pytest.raises(MCPError) as raised:
            await client.list_resources(cursor=cursor)
    assert raised.value.error.code == -32602
    assert "cursor" in raised.value.error.message
