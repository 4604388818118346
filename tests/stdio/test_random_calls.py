"""Any tool call shaped like its input schema gets a documented answer from a real
``werkbaum-mcp`` process, and no write slips past a guard rail, out of the roots or
over a human's line (the calls and checks: :mod:`tests.random_calls`).

Each session runs through the server's pipes, one project directory per session;
after it the file outside the root is untouched and the server exits 0 when
stdin closes.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
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
from tests.stdio.test_pipes import HANDSHAKE, encoded, start

FILE_CALLS = calls(files=True)
LONG = st.integers(40, 70)
"""Calls per session: a server start costs as much as dozens of calls."""


class Session:
    """One server process spoken to one request at a time over its pipes."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self._buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(encoded(message))
        self.process.stdin.flush()

    def answer(self, request_id: int | str, timeout: float = 60) -> dict[str, Any]:
        """The next message with ``request_id``; the first other one with an id fails."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                message: dict[str, Any] = json.loads(line)
                if "id" in message:
                    assert message["id"] == request_id, message
                    return message
            left = deadline - time.monotonic()
            assert left > 0, f"no answer to {request_id} within {timeout} s"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 1 << 20)
                assert chunk, "the server closed its stdout"
                self._buffer += chunk

    def call(self, number: int | str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
        return self.answer(number)


@contextmanager
def session(project: Path, *options: str) -> Iterator[Session]:
    """A served session; at its end stdin closes and the server must exit 0."""
    process = start(project, *options)
    try:
        talk = Session(process)
        talk.send(HANDSHAKE[0])
        talk.answer(HANDSHAKE[0]["id"])
        talk.send(HANDSHAKE[1])
        yield talk
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


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
