"""The independent MCP Inspector CLI (TypeScript SDK) against the stdio server.

Installed from the repository's ``package.json``/``package-lock.json`` by
``npm install --no-save`` in the nox ``tests`` session.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.server.apps import APP_MIME_TYPE

from tests.conftest import FIXTURES
from tests.tools import require_tool
from werkbaum_stdio.plan_view import plan_view
from werkbaum_stdio.registration import PLAN_VIEW_META, PLAN_VIEW_URI

SERVER = Path(sys.executable).with_name("werkbaum-mcp")
EXIT_TOOL_ERROR = 5


@pytest.fixture(scope="module")
def inspector() -> Path:
    return Path(require_tool("mcp-inspector"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(FIXTURES / "werkbaum.werkbaum", tmp_path / "werkbaum.werkbaum")
    return tmp_path


def run_cli(inspector: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        str(inspector),
        "--cli",
        str(SERVER),
        "--root",
        str(project),
        *args,
        "--format",
        "json",
    ]
    return subprocess.run(command, capture_output=True, text=True, cwd=project, timeout=120)


def test_lists_the_ten_tools(inspector: Path, project: Path) -> None:
    done = run_cli(inspector, project, "--method", "tools/list")
    assert done.returncode == 0, done.stderr
    names = {tool["name"] for tool in json.loads(done.stdout)["result"]["tools"]}
    assert len(names) == 10 and "werkbaum_inspect" in names


def test_strict_mode_finds_no_schema_portability_warnings(inspector: Path, project: Path) -> None:
    """``--strict`` lists every portability warning on stderr (``Warning: tool …`` and a
    ``N errors, M warnings across K tools.`` summary); a type array was one of them."""
    done = run_cli(inspector, project, "--method", "tools/list", "--strict")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["result"]["tools"]) == 10
    assert "Warning:" not in done.stderr, done.stderr
    summary = re.search(r"(\d+) errors?, (\d+) warnings?", done.stderr + done.stdout)
    assert summary is None or summary.groups() == ("0", "0"), summary


def test_calls_inspect_on_the_reference_plan(inspector: Path, project: Path) -> None:
    done = run_cli(
        inspector,
        project,
        "--method",
        "tools/call",
        "--tool-name",
        "werkbaum_inspect",
        "--tool-arg",
        "source=werkbaum.werkbaum",
        "--tool-arg",
        'include=["warnings","path"]',
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["structuredContent"]["warnings"] == []
    assert len(result["structuredContent"]["path"]["stations"]) == 30


def test_a_refused_call_exits_with_the_tool_error_code(inspector: Path, project: Path) -> None:
    done = run_cli(
        inspector,
        project,
        "--method",
        "tools/call",
        "--tool-name",
        "werkbaum_read",
        "--tool-arg",
        "source=/etc/passwd",
    )
    assert done.returncode == EXIT_TOOL_ERROR
    result = json.loads(done.stdout)["result"]
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["code"] == "forbidden_source"


def test_reads_the_guide_resource(inspector: Path, project: Path) -> None:
    done = run_cli(inspector, project, "--method", "resources/read", "--uri", "werkbaum://guide")
    assert done.returncode == 0, done.stderr
    contents = json.loads(done.stdout)["result"]["contents"]
    assert contents[0]["mimeType"] == "text/markdown"


def test_tools_list_links_inspect_to_the_plan_view(inspector: Path, project: Path) -> None:
    done = run_cli(inspector, project, "--method", "tools/list")
    assert done.returncode == 0, done.stderr
    tools = {tool["name"]: tool for tool in json.loads(done.stdout)["result"]["tools"]}
    assert tools["werkbaum_inspect"]["_meta"] == {"ui": {"resourceUri": PLAN_VIEW_URI}}


def test_reads_the_plan_view_as_the_apps_html(inspector: Path, project: Path) -> None:
    done = run_cli(inspector, project, "--method", "resources/read", "--uri", PLAN_VIEW_URI)
    assert done.returncode == 0, done.stderr
    [view] = json.loads(done.stdout)["result"]["contents"]
    assert (view["uri"], view["mimeType"]) == (PLAN_VIEW_URI, APP_MIME_TYPE)
    assert view["_meta"] == PLAN_VIEW_META
    assert view["text"] == plan_view().html
