"""The agent task suite over stdio: ``werkbaum-mcp`` as a subprocess started the way
Claude Code starts it, the official client, the reference plan as a file."""

from __future__ import annotations

import os
from pathlib import Path

import attrs
import pytest
from mcp import Client
from mcp.types import Implementation

from tests.agent.tasks import UPDATE, Agent, check_budgets, record, recorded, report
from tests.stdio.conftest import MODES, claude_code_style

pytestmark = pytest.mark.anyio


@attrs.frozen
class FileHost:
    """The plan is ``werkbaum.werkbaum`` in the project; a human edits it in an editor."""

    root: Path
    source: str = "werkbaum.werkbaum"
    files: bool = True

    def human_edit(self, marker: str, old: str, new: str) -> None:
        path = self.root / self.source
        lines = path.read_text(encoding="utf-8").split("\n")
        index = next(i for i, line in enumerate(lines) if marker in line)
        lines[index] = lines[index].replace(old, new, 1)
        path.write_text("\n".join(lines), encoding="utf-8")

    def new_source(self, name: str) -> str:
        return name


@pytest.mark.parametrize("mode", MODES)
async def test_every_task_within_its_calls_and_tokens(mode: str, project: Path) -> None:
    audit = project / "audit.jsonl"
    params = claude_code_style(project, "--audit-log", str(audit))
    info = Implementation(name="claude-code", version="2.1")
    async with Client(params, mode=mode, client_info=info) as client:
        measured = await Agent(client, FileHost(project)).run()
    print(report(f"stdio ({mode})", measured))
    check_budgets(measured)
    numbers = {key: m.to_json() for key, m in measured.items()}
    if os.environ.get(UPDATE) and mode == MODES[0]:
        record("stdio", measured)
    assert numbers == recorded()["stdio"], "refresh tests/agent/measured.json deliberately"
