"""Fixtures for the stdio server: a plan directory, a server over it, connected clients."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, Implementation

from tests.conftest import FIXTURES
from werkbaum_core.engine import LazyEngine
from werkbaum_stdio.roots import Roots
from werkbaum_stdio.server import StdioConfig, build_server

PLAN = """[ ] #plan: Plan
  - [ ] #a: A (S)
  - [ ] #b: B (M)
    - [ ] #b1: B1 (XS)
  - [x] #c: C (S)
"""
CLIENT_NAME = "claude-code"
MODES = ["auto", "legacy"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def plans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A root with two plans; the working directory is the root, as when a host
    starts the server in the project (relative sources start at the cwd)."""
    root = tmp_path / "plans"
    root.mkdir()
    monkeypatch.chdir(root)
    (root / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
    (root / "werkbaum.werkbaum").write_bytes((FIXTURES / "werkbaum.werkbaum").read_bytes())
    return root


@pytest.fixture
def audit_file(tmp_path: Path) -> Path:
    return tmp_path / "audit.jsonl"


def make_server(root: Path, engine: LazyEngine, audit: Path, **options: Any) -> Any:
    config = StdioConfig(roots=Roots.from_args([str(root)]), audit_log=audit, **options)
    return build_server(config, engine)


@pytest.fixture(params=MODES)
async def client(
    request: pytest.FixtureRequest, plans: Path, shared_engine: LazyEngine, audit_file: Path
) -> AsyncIterator[Client]:
    server = make_server(plans, shared_engine, audit_file)
    info = Implementation(name=CLIENT_NAME, version="1.0")
    async with Client(server, mode=request.param, client_info=info) as connected:
        yield connected


def structured(result: CallToolResult) -> Any:
    """The structured content, checked to equal the text content (both are complete).

    Tool errors carry their JSON in the text only (see ``registration.error_result``).
    """
    assert result.content, "a result always has text content"
    text = json.loads(result.content[0].text)  # type: ignore[union-attr]
    if result.is_error:
        assert result.structured_content is None
        return text
    assert text == result.structured_content
    return result.structured_content


def audit_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


SERVER = Path(sys.executable).with_name("werkbaum-mcp")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory as Claude Code sees it, holding the reference plan."""
    shutil.copy(FIXTURES / "werkbaum.werkbaum", tmp_path / "werkbaum.werkbaum")
    return tmp_path


def claude_code_style(project: Path, *extra: str) -> StdioServerParameters:
    # `claude mcp add werkbaum -- werkbaum-mcp --root .`, started in the project
    # with CLAUDE_PROJECT_DIR set and nothing else special.
    env = {"PATH": os.environ["PATH"], "CLAUDE_PROJECT_DIR": str(project), "HOME": str(project)}
    return StdioServerParameters(
        command=str(SERVER), args=["--root", ".", *extra], cwd=str(project), env=env
    )


@contextlib.asynccontextmanager
async def claude_code(project: Path, mode: str, audit: Path) -> AsyncIterator[Client]:
    """The official client, named as Claude Code names itself, on ``werkbaum-mcp`` started
    as :func:`claude_code_style` starts it, with the audit lines in ``audit``."""
    params = claude_code_style(project, "--audit-log", str(audit))
    info = Implementation(name="claude-code", version="2.1")
    async with Client(params, mode=mode, client_info=info) as client:
        yield client


def raw_handshake(request_id: int | str, client: str) -> list[dict[str, Any]]:
    """The legacy handshake as raw JSON-RPC messages, for tests that talk over the pipes."""
    return [
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": client, "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
