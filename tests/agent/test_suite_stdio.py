"""The agent task suite over stdio: ``werkbaum-mcp`` as a subprocess started the way
Claude Code starts it, the official client, the reference plan as a file."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from tests.agent.tasks import Agent, settle
from tests.stdio.conftest import MODES, claude_code

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
    async with claude_code(project, mode, project / "audit.jsonl") as client:
        measured = await Agent(client, FileHost(project)).run()
    settle("stdio", mode, measured)
