"""Any tool call shaped like its input schema gets a documented answer from a real
``werkbaum-mcp`` process, and no write slips past a guard rail, out of the roots or
over a human's line (the calls and checks: :mod:`tests.random_calls`).

Each session runs through the server's pipes, one project directory per session;
after it the file outside the root is untouched and the server exits 0 when
stdin closes.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.backend import Backend
from tests.backend.human import Human
from tests.conftest import FIXTURES
from tests.random_calls import OUTSIDE, PLAN, Agent, calls, with_a_human
from tests.rawrpc import PipeClient
from tests.stdio.conftest import claude_code_style

FILE_CALLS = calls(files=True)
LONG = st.integers(40, 70)
"""Calls per session: a server start costs as much as dozens of calls."""


class PipeTalk:
    """:class:`~tests.random_calls.Talk` over a server's pipes: one request at a time,
    and its answer must be the next answer the server writes."""

    def __init__(self, client: PipeClient) -> None:
        self.client = client

    def call(self, number: int | str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        self.client.send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
        return self.client.receive(number, timeout=60, strict=True)


@contextmanager
def session(project: Path, *options: str) -> Iterator[PipeTalk]:
    """A served session (the server as Claude Code starts it); at its end stdin closes
    and the server must exit 0."""
    params = claude_code_style(project, *options)
    client = PipeClient([params.command, *params.args], project, params.env or {})
    try:
        client.handshake()
        yield PipeTalk(client)
        assert client.process.stdin is not None
        client.process.stdin.close()
        assert client.process.wait(timeout=60) == 0, client.stderr_tail()
    finally:
        client.close()


def _project(home: Path) -> Path:
    project, outside = home / "project", home / "outside"
    for folder in (project, project / "sub", outside):
        folder.mkdir()
    (project / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
    shutil.copy(FIXTURES / "werkbaum.werkbaum", project / "big.werkbaum")
    (project / "notes.txt").write_text(PLAN, encoding="utf-8")
    (outside / "secret.werkbaum").write_text(OUTSIDE, encoding="utf-8")
    return project


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_calls_get_documented_answers_and_respect_the_guard_rails(
    data: st.DataObject,
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        project = _project(Path(scratch))
        with session(project) as talk:
            agent = Agent(talk, ["plan.werkbaum", "big.werkbaum"])
            for number in range(data.draw(LONG, label="calls")):
                agent.act(data, number, FILE_CALLS)
        home = Path(scratch)
        assert (home / "outside" / "secret.werkbaum").read_text(encoding="utf-8") == OUTSIDE
        assert (project / "notes.txt").read_text(encoding="utf-8") == PLAN


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_calls_on_a_document_a_human_edits_meanwhile_lose_no_human_line(
    data: st.DataObject, backend: Backend, human: Human
) -> None:
    document = human.create(PLAN)
    with tempfile.TemporaryDirectory() as scratch:
        project = _project(Path(scratch))
        with session(project, "--server", backend.base_url) as talk:
            agent = Agent(talk, [document, "plan.werkbaum"])
            with_a_human(data, agent, human, document, FILE_CALLS, LONG)
