"""The agent task suite over HTTP: ``werkbaum-mcp-http`` on a real socket, the official
client, the reference plan as a shared document on the local backend stand-in.

Two tasks are left out here, because the remote server serves shared documents only:
listing plan files (``werkbaum_list`` is not offered: there are no files) and creating a
plan (``base: null``: documents are created in the Werkbaum editor, spec §15)."""

from __future__ import annotations

import attrs
import pytest

from tests.agent.tasks import REFERENCE, Agent, settle
from tests.backend.human import Human
from tests.http.conftest import FULL_TOKEN, MODES, connect

pytestmark = pytest.mark.anyio


@attrs.frozen
class DocumentHost:
    """The plan is a shared document; a human edits one line in the browser (a PATCH)."""

    human: Human
    source: str
    """The bare uuid: the server's first backend serves it."""
    files: bool = False

    def human_edit(self, marker: str, old: str, new: str) -> None:
        lines = self.human.get(self.source)["content"].split("\n")
        index = next(i for i, line in enumerate(lines) if marker in line)
        changed = lines[index].replace(old, new, 1)
        self.human.patch(
            self.source, [{"op": "replace", "index": index, "count": 1, "lines": [changed]}]
        )

    def new_source(self, name: str) -> str:  # pragma: no cover - no create task here
        raise AssertionError("documents are not created by agents")


@pytest.mark.parametrize("mode", MODES)
async def test_every_task_within_its_calls_and_tokens(
    mode: str, base_url: str, human: Human
) -> None:
    host = DocumentHost(human, human.create(REFERENCE, title="Werkbaum"))
    async with connect(base_url, FULL_TOKEN, mode, name="claude-code") as client:
        measured = await Agent(client, host).run()
    settle("http", mode, measured)
