"""The client's MCP roots are the file roots when neither ``--root`` nor
``CLAUDE_PROJECT_DIR`` is given (issue 14, item 6), through the official client's
roots callback: in the handshake era by ``roots/list``, in the 2026-07-28 era by an
``input_required`` round trip; and as a subprocess started in ``/`` the way Claude
Desktop starts servers."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.context import ClientRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import ErrorData, ListRootsResult, Root

from tests.stdio.conftest import MODES, structured
from werkbaum_core.engine import LazyEngine
from werkbaum_stdio.roots import Roots
from werkbaum_stdio.server import StdioConfig, build_server

pytestmark = pytest.mark.anyio

SERVER = Path(sys.executable).with_name("werkbaum-mcp")
CWD_PLAN = "[ ] #cwd: The working directory's plan\n"
CLIENT_PLAN = "[ ] #client: The client's plan\n"
OTHER_PLAN = "[ ] #other: Another root's plan\n"


class Offered:
    """A roots callback that counts its calls; ``roots`` can change between them."""

    def __init__(self, *paths: Path | str) -> None:
        self.roots = list(paths)
        self.calls = 0

    async def __call__(self, context: ClientRequestContext) -> ListRootsResult | ErrorData:
        self.calls += 1
        return ListRootsResult(roots=[Root(uri=as_uri(p)) for p in self.roots])  # type: ignore[arg-type]


def as_uri(path: Path | str) -> str:
    return path.as_uri() if isinstance(path, Path) else path


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, text in (("cwd", CWD_PLAN), ("client", CLIENT_PLAN), ("other", OTHER_PLAN)):
        path = tmp_path / name
        path.mkdir()
        (path / "plan.werkbaum").write_text(text, encoding="utf-8")
        out[name] = Path(os.path.realpath(path))
    return out


def server_for(
    dirs: dict[str, Path],
    engine: LazyEngine,
    roots: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Any:
    config = StdioConfig(roots=Roots.from_args(roots, env=env or {}, cwd=dirs["cwd"]))
    return build_server(config, engine)


async def refuse(context: ClientRequestContext) -> ListRootsResult | ErrorData:
    """A client that answers roots/list with an error."""
    return ErrorData(code=-32603, message="no roots today")


async def read(client: Client, source: str = "plan.werkbaum") -> Any:
    return structured(await client.call_tool("werkbaum_read", {"source": source}))


async def file_uris(client: Client) -> list[str]:
    listed = [str(r.uri) for r in (await client.list_resources()).resources]
    return [uri for uri in listed if uri.startswith("werkbaum://file/")]


@pytest.mark.parametrize("mode", MODES)
async def test_the_clients_roots_are_the_roots(
    mode: str, dirs: dict[str, Path], shared_engine: LazyEngine
) -> None:
    offered = Offered(dirs["client"])
    server = server_for(dirs, shared_engine)
    async with Client(server, mode=mode, list_roots_callback=offered) as client:
        assert (await read(client))["text"] == CLIENT_PLAN
        refused = await read(client, str(dirs["cwd"] / "plan.werkbaum"))
        assert refused["error"]["code"] == "forbidden_source"
        assert "the client's MCP roots" in refused["error"]["message"]
        assert await file_uris(client) == ["werkbaum://file/plan.werkbaum"]
        resource = (await client.read_resource("werkbaum://file/plan.werkbaum")).contents[0]
        assert resource.text == CLIENT_PLAN  # type: ignore[union-attr]
        await read(client)
    assert offered.calls == 1, "asked once"


@pytest.mark.parametrize("mode", MODES)
async def test_several_roots_and_unusable_ones(
    mode: str, dirs: dict[str, Path], shared_engine: LazyEngine, tmp_path: Path
) -> None:
    (dirs["other"] / "plan.werkbaum").rename(dirs["other"] / "other.werkbaum")
    offered = Offered(
        "file://example.org/project",
        tmp_path / "missing",
        dirs["client"],
        dirs["other"],
    )
    async with Client(
        server_for(dirs, shared_engine), mode=mode, list_roots_callback=offered
    ) as client:
        assert (await read(client))["text"] == CLIENT_PLAN
        assert (await read(client, "other.werkbaum"))["text"] == OTHER_PLAN
        listed = structured(await client.call_tool("werkbaum_list", {}))
        assert [p["source"] for p in listed["plans"]] == ["plan.werkbaum", "other.werkbaum"]


async def test_in_the_2026_era_a_listing_before_the_first_call_sees_the_working_directory(
    dirs: dict[str, Path], shared_engine: LazyEngine
) -> None:
    """``resources/list`` cannot carry an ``input_required`` round trip."""
    offered = Offered(dirs["client"])
    (dirs["cwd"] / "cwd-only.werkbaum").write_text(CWD_PLAN, encoding="utf-8")
    async with Client(server_for(dirs, shared_engine), list_roots_callback=offered) as client:
        before = await file_uris(client)
        assert offered.calls == 0 and "werkbaum://file/cwd-only.werkbaum" in before
        assert (await read(client))["text"] == CLIENT_PLAN
        assert offered.calls == 1
        assert await file_uris(client) == ["werkbaum://file/plan.werkbaum"]


async def test_in_the_2026_era_a_first_resource_read_asks_too(
    dirs: dict[str, Path], shared_engine: LazyEngine
) -> None:
    offered = Offered(dirs["client"])
    async with Client(server_for(dirs, shared_engine), list_roots_callback=offered) as client:
        resource = (await client.read_resource("werkbaum://file/plan.werkbaum")).contents[0]
        assert resource.text == CLIENT_PLAN  # type: ignore[union-attr]
    assert offered.calls == 1


@pytest.mark.parametrize("mode", MODES)
async def test_the_working_directory_without_client_roots(
    mode: str, dirs: dict[str, Path], shared_engine: LazyEngine
) -> None:
    async with Client(server_for(dirs, shared_engine), mode=mode) as client:
        assert (await read(client))["text"] == CWD_PLAN


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("given", ["--root", "CLAUDE_PROJECT_DIR"])
async def test_root_flag_and_project_dir_come_first(
    mode: str, given: str, dirs: dict[str, Path], shared_engine: LazyEngine
) -> None:
    offered = Offered(dirs["client"])
    other = str(dirs["other"])
    if given == "--root":
        server = server_for(dirs, shared_engine, roots=(other,))
    else:
        server = server_for(dirs, shared_engine, env={"CLAUDE_PROJECT_DIR": other})
    async with Client(server, mode=mode, list_roots_callback=offered) as client:
        assert (await read(client))["text"] == OTHER_PLAN
        await client.list_resources()
    assert offered.calls == 0


async def test_a_changed_root_list_is_asked_again_in_the_handshake_era(
    dirs: dict[str, Path], shared_engine: LazyEngine
) -> None:
    offered = Offered(dirs["client"])
    server = server_for(dirs, shared_engine)
    async with Client(server, mode="legacy", list_roots_callback=offered) as client:
        assert (await read(client))["text"] == CLIENT_PLAN
        offered.roots = [dirs["other"]]
        with pytest.warns(MCPDeprecationWarning, match="roots capability is deprecated"):
            await client.send_roots_list_changed()
        assert (await read(client))["text"] == OTHER_PLAN
    assert offered.calls == 2


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_offering_no_usable_root_keeps_the_working_directory(
    mode: str, dirs: dict[str, Path], shared_engine: LazyEngine, tmp_path: Path
) -> None:
    offered = Offered("file://example.org/", tmp_path / "missing")
    async with Client(
        server_for(dirs, shared_engine), mode=mode, list_roots_callback=offered
    ) as client:
        assert (await read(client))["text"] == CWD_PLAN


async def test_a_refusing_client_is_asked_twice_then_the_working_directory_serves(
    dirs: dict[str, Path], shared_engine: LazyEngine
) -> None:
    async with Client(server_for(dirs, shared_engine), list_roots_callback=refuse) as client:
        for _ in range(2):
            with pytest.raises(MCPError, match="no roots today"):
                await read(client)
        assert (await read(client))["text"] == CWD_PLAN


async def test_a_refusing_client_in_the_handshake_era_gets_the_working_directory(
    dirs: dict[str, Path], shared_engine: LazyEngine
) -> None:
    server = server_for(dirs, shared_engine)
    async with Client(server, mode="legacy", list_roots_callback=refuse) as client:
        assert (await read(client))["text"] == CWD_PLAN


@pytest.mark.parametrize("mode", MODES)
async def test_a_server_started_in_the_root_directory_serves_the_clients_roots(
    mode: str, dirs: dict[str, Path]
) -> None:
    """Claude Desktop starts servers in ``/`` without ``--root``: the client's roots
    then keep the agent in the project instead of the whole file system."""
    offered = Offered(dirs["client"])
    env = {"PATH": os.environ["PATH"], "HOME": str(dirs["client"])}
    params = StdioServerParameters(command=str(SERVER), args=[], cwd="/", env=env)
    async with Client(params, mode=mode, list_roots_callback=offered) as client:
        assert (await read(client))["text"] == CLIENT_PLAN
        refused = await read(client, str(dirs["cwd"] / "plan.werkbaum"))
        assert refused["error"]["code"] == "forbidden_source"
        assert "the client's MCP roots if it offers them" in (client.instructions or "")
    assert offered.calls == 1
