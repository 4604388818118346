"""The MCP App view on the wire (issue 17.3), through the official client in both eras.

``werkbaum_inspect`` names ``ui://werkbaum/plan-view.html`` in its ``_meta.ui``; the
resource is listed after the guide and reads as ``text/html;profile=mcp-app`` with an
empty CSP domain list. A host that speaks MCP Apps gets exactly the results of one that
does not (the extension only adds). The HTTP server serves the same: ``tests/http``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp import Client
from mcp.client import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from tests.conftest import REPO
from tests.stdio.conftest import MODES, make_server
from werkbaum_core.engine import LazyEngine
from werkbaum_stdio.plan_view import plan_view
from werkbaum_stdio.plan_view.__main__ import main
from werkbaum_stdio.registration import PLAN_VIEW_URI

pytestmark = pytest.mark.anyio

NO_DOMAINS = {"connectDomains": [], "resourceDomains": [], "frameDomains": []}
APPS_HOST = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})
"""What a host with MCP Apps declares (ext-apps: capabilities.extensions)."""


async def test_inspect_links_the_view_and_no_other_tool_has_meta(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["werkbaum_inspect"].meta == {"ui": {"resourceUri": PLAN_VIEW_URI}}
    assert [name for name, tool in tools.items() if tool.meta] == ["werkbaum_inspect"]


async def test_the_view_is_listed_and_reads_as_an_mcp_app(client: Client) -> None:
    listed = {str(r.uri): r for r in (await client.list_resources()).resources}
    entry = listed[PLAN_VIEW_URI]
    assert entry.mime_type == APP_MIME_TYPE == "text/html;profile=mcp-app"
    assert entry.meta == {"ui": {"csp": NO_DOMAINS, "prefersBorder": True}}
    contents = (await client.read_resource(PLAN_VIEW_URI)).contents
    assert len(contents) == 1
    view = contents[0]
    assert str(view.uri) == PLAN_VIEW_URI
    assert view.mime_type == APP_MIME_TYPE
    assert view.meta == entry.meta
    assert view.text == plan_view().html  # type: ignore[union-attr]
    assert view.text.startswith("<!DOCTYPE html>")  # type: ignore[union-attr]


async def test_the_2026_era_advertises_the_extension(
    plans: Path, shared_engine: LazyEngine, audit_file: Path
) -> None:
    """The handshake era's capabilities have no ``extensions`` (SEP-2133 came with
    2026-07-28); there a host finds the view by the tool's ``_meta`` alone."""
    async with Client(make_server(plans, shared_engine, audit_file)) as client:
        assert client.server_capabilities.extensions == {EXTENSION_ID: {}}


@pytest.mark.parametrize("mode", MODES)
async def test_a_host_with_apps_gets_exactly_what_a_host_without_them_gets(
    mode: str, plans: Path, shared_engine: LazyEngine, audit_file: Path
) -> None:
    answers = []
    for extensions in ([APPS_HOST], None):
        server = make_server(plans, shared_engine, audit_file)
        async with Client(server, mode=mode, extensions=extensions) as client:
            tools = (await client.list_tools()).tools
            inspected = await client.call_tool("werkbaum_inspect", {"source": "werkbaum.werkbaum"})
            answers.append(
                (
                    [t.model_dump(by_alias=True, exclude_none=True) for t in tools],
                    inspected.model_dump(by_alias=True, exclude_none=True),
                )
            )
    with_apps, without = answers
    assert with_apps == without
    assert not without[1]["isError"] and len(without[1]["structuredContent"]["tree"]) == 1


def test_the_readme_states_the_views_uri_size_and_csp() -> None:
    """The numbers in README's "Pictures" section are the view's own, measured here."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Pictures") :]
    section = section[: section.index("\n## ", 1)]
    view = plan_view()
    assert PLAN_VIEW_URI in section
    size = re.search(r"([\d,]+) bytes", section)
    assert size is not None, "README's Pictures section gives the view's size in bytes"
    assert int(size.group(1).replace(",", "")) == view.size, (
        f"README says {size.group(1)} bytes, the view has {view.size:,}: update the README "
        "(python -m werkbaum_stdio.plan_view prints the figures)"
    )
    policy = view.csp.replace(view.csp.split("'sha256-")[1].split("'")[0], "…")
    assert policy in section, policy


def test_the_script_prints_uri_size_and_csp(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    view = plan_view()
    assert capsys.readouterr().out.splitlines() == [PLAN_VIEW_URI, f"{view.size:,} bytes", view.csp]
    assert main(["--bogus"]) == 2
