"""The stdio server as a real subprocess, started the way MCP hosts start it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO
from tests.stdio.conftest import (
    MODES,
    SERVER,
    audit_lines,
    claude_code,
    claude_code_style,
    raw_handshake,
    structured,
)
from tests.tools import require_tool

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
async def test_reference_plan_end_to_end(mode: str, project: Path) -> None:
    audit = project / "audit.jsonl"
    async with claude_code(project, mode, audit) as client:
        assert len((await client.list_tools()).tools) == 10
        snapshot = structured(
            await client.call_tool("werkbaum_read", {"source": "werkbaum.werkbaum"})
        )
        assert snapshot["lines"] > 900
        inspected = structured(
            await client.call_tool("werkbaum_inspect", {"source": "werkbaum.werkbaum"})
        )
        assert inspected["warnings"] == []
        assert len(inspected["path"]["stations"]) == 30
        assert inspected["base"] == snapshot["base"]
        written = structured(
            await client.call_tool(
                "werkbaum_set_size",
                {
                    "source": "werkbaum.werkbaum",
                    "base": snapshot["base"],
                    "id": "wb",
                    "size": "XL",
                },
            )
        )
        assert written["base"]["checksum"] != snapshot["base"]["checksum"]
    assert audit_lines(audit)[-1]["displayName"] == "claude-code"


def test_stdout_carries_json_rpc_only(project: Path) -> None:
    requests = [
        *raw_handshake(1, "raw-test"),
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "werkbaum_inspect",
                "arguments": {"source": "werkbaum.werkbaum", "include": ["warnings"]},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "werkbaum_read", "arguments": {"source": "/etc/passwd"}},
        },
    ]
    params = claude_code_style(project)
    assert params.env is not None
    process = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=project,
        env=params.env,
    )
    assert process.stdin is not None and process.stdout is not None
    for request in requests:
        process.stdin.write(json.dumps(request) + "\n")
    process.stdin.flush()
    lines: list[str] = []
    # Read until every request has its answer, then close stdin: the server ends.
    while len([m for m in lines if "id" in json.loads(m)]) < 4:
        line = process.stdout.readline()
        assert line, "the server closed stdout early"
        lines.append(line)
    process.stdin.close()
    rest = process.stdout.read()
    assert process.wait(timeout=30) == 0
    messages = [json.loads(line) for line in [*lines, *rest.splitlines()] if line.strip()]
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    by_id = {m["id"]: m for m in messages if "id" in m}
    assert set(by_id) == {1, 2, 3, 4}
    assert len(by_id[2]["result"]["tools"]) == 10
    assert by_id[3]["result"]["structuredContent"]["warnings"] == []
    assert by_id[4]["result"]["isError"] is True


def _mcp_json_server() -> dict[str, Any]:
    config = json.loads((REPO / ".mcp.json").read_text(encoding="utf-8"))
    server: dict[str, Any] = config["mcpServers"]["werkbaum"]
    return server


def test_checked_in_mcp_json_holds_no_secrets() -> None:
    text = (REPO / ".mcp.json").read_text(encoding="utf-8").lower()
    assert "token" not in text and "password" not in text and "bearer" not in text


async def test_repository_mcp_json_starts_the_server_on_the_examples() -> None:
    require_tool("uv")  # the checked-in .mcp.json runs uv
    server = _mcp_json_server()
    env = {
        k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")
    }
    params = StdioServerParameters(
        command=server["command"], args=server["args"], cwd=str(REPO), env=env
    )
    async with Client(params, mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "werkbaum_inspect" in names
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        # --root examples: sources (and the listed URIs) are relative to that root
        assert "werkbaum://file/launch.werkbaum" in listed
        result = structured(
            await client.call_tool("werkbaum_inspect", {"source": "launch.werkbaum"})
        )
        assert result["warnings"] == []


@pytest.mark.parametrize(
    ("cwd", "args", "warned"),
    [("/", [], True), ("/", ["--root", "{tmp}"], False), ("{tmp}", [], False)],
)
def test_a_start_in_the_file_system_root_without_roots_is_warned_about(
    tmp_path: Path, cwd: str, args: list[str], warned: bool
) -> None:
    """Round 25 newcomer M3: a host that starts servers in / without a workspace made the
    whole disk's plan files readable and writable, and nothing said so."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}  # no CLAUDE_PROJECT_DIR
    done = subprocess.run(
        [str(SERVER), *(a.format(tmp=tmp_path) for a in args)],
        cwd=cwd.format(tmp=tmp_path),
        env=env,
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == b""
    said = "the working directory / is the root, and every plan file on this machine"
    assert (said in done.stderr.decode()) is warned


def test_typed_in_a_terminal_it_says_what_it_is(tmp_path: Path) -> None:
    """Round 25 newcomer L6: on a terminal it waited silently for JSON-RPC; from an MCP
    host (a pipe) it says nothing."""
    master, slave = os.openpty()
    try:
        server = subprocess.Popen(
            [str(SERVER), "--root", str(tmp_path)],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.close(slave)
        os.write(master, b"\x04")  # Ctrl-D: end of input, as a person would end it
        out, err = server.communicate(timeout=60)
    finally:
        os.close(master)
    assert out == b""
    assert "speaks MCP (JSON-RPC) on stdin and stdout: start it from an MCP host" in err.decode()
