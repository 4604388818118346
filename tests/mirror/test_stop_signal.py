"""A stop signal during a write (spec §6.5): what has begun to be stored is finished and audited.

SIGTERM is how an MCP host stops a stdio server. Each test runs the real
``werkbaum-mcp`` with a mirror, on the stand-in backend, over a raw pipe, and
signals it while a write is past its store step — the document written, the
mirror step held up by a late ``GET …/history`` — then reads the audit log, git
and the backend.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.backend import Backend
from tests.backend.faults import Delayed
from tests.backend.human import Human
from tests.mirror.conftest import PLAN, commits, git
from tests.mirror.test_cli import run
from tests.rawrpc import INITIALIZE, INITIALIZED, PipeClient
from werkbaum_core.engine.lifetime import CLOSE_WAIT
from werkbaum_core.in_flight import STOP_WAIT

SERVER = Path(sys.executable).with_name("werkbaum-mcp")
SLACK = 10.0
"""Seconds allowed beyond a bound for a loaded machine (the bounds are what is asserted)."""


class Session:
    """``werkbaum-mcp`` mirroring one document into ``repo``, audit lines in a file."""

    def __init__(self, repo: Path, backend: Backend, doc: str, tmp: Path | None = None) -> None:
        self.audit = repo.parent / "audit.log"
        self.file = repo / "plan.werkbaum"
        argv = [
            str(SERVER),
            "--root",
            str(repo),
            "--server",
            backend.base_url,
            "--mirror",
            f"{doc}={self.file}",
            "--audit-log",
            str(self.audit),
            "--engine",
            "dukpy",
        ]
        env = {"PATH": "/usr/bin:/bin", "HOME": str(repo.parent)}
        if tmp is not None:
            env["TMPDIR"] = str(tmp)
        self.client = PipeClient(argv, repo, env)
        self.client.send(INITIALIZE)
        self.client.receive(1)
        self.client.send(INITIALIZED)
        self.next_id = 100

    def start(self, tool: str, arguments: dict[str, Any]) -> int:
        self.next_id += 1
        params = {"name": tool, "arguments": arguments}
        self.client.send(
            {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params}
        )
        return self.next_id

    def result(self, request_id: int, timeout: float = 60.0) -> dict[str, Any]:
        answer = self.client.receive(request_id, timeout)
        return json.loads(answer["result"]["content"][0]["text"])  # type: ignore[no-any-return]

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.result(self.start(tool, arguments))

    def lines(self) -> list[dict[str, Any]]:
        text = self.audit.read_text(encoding="utf-8") if self.audit.exists() else ""
        return [json.loads(line) for line in text.splitlines()]

    def signal(self, number: int) -> None:
        self.client.process.send_signal(number)

    def exit_status(self, within: float) -> int:
        return self.client.process.wait(timeout=within)

    def close(self) -> None:
        """End the server (killed if a test left it running) and its pipes."""
        if self.client.process.poll() is None:
            self.client.process.kill()
        self.client.close()


@pytest.fixture
def session(repo: Path, backend: Backend, human: Human) -> Iterator[tuple[Session, str]]:
    doc = human.create(PLAN, title="Roadmap")
    started = Session(repo, backend, doc)
    try:
        yield started, doc
    finally:
        started.close()


def first_write(session: Session) -> dict[str, Any]:
    """A plain write (read, set_status) with its mirror commit: the base for the next."""
    snapshot = session.call("werkbaum_read", {"source": str(session.file)})
    args = {"source": str(session.file), "base": snapshot["base"], "id": "a", "status": "~"}
    written = session.call("werkbaum_set_status", args)
    assert "commit" in written["mirror"], written
    return written


def start_a_write_held_in_its_commit(
    repo: Path, session: Session, written: dict[str, Any], hook_seconds: float
) -> None:
    """A pre-commit hook that sleeps ``hook_seconds``; a status write with the base of
    ``written``, started; back once its mirror commit's hook runs."""
    hook = repo / ".git" / "hooks" / "pre-commit"
    started = repo.parent / "hook-started"
    hook.write_text(f"#!/bin/sh\n: > '{started}'\nsleep {hook_seconds}\n", "utf-8")
    hook.chmod(0o755)
    args = {"source": str(session.file), "base": written["base"], "id": "b", "status": "x"}
    session.start("werkbaum_set_status", args)
    deadline = time.monotonic() + 30
    while not started.exists():
        assert time.monotonic() < deadline, "the commit never started"
        time.sleep(0.05)


def landed(human: Human, doc: str, version: int, within: float = 30.0) -> None:
    """Wait until the backend holds ``version`` (the second write's store step is done)."""
    deadline = time.monotonic() + within
    while human.get(doc)["version"] < version:
        assert time.monotonic() < deadline, "the write never reached the backend"
        time.sleep(0.02)


@contextlib.contextmanager
def second_write_in_its_mirror_step(
    server: Session, backend: Backend, human: Human, doc: str, seconds: float
) -> Iterator[int]:
    """A first write, then a second whose document write has landed while its mirror
    step waits ``seconds`` for ``GET …/history``; yields the second's request id."""
    written = first_write(server)
    with backend.faults.injected(Delayed(seconds=seconds, path="/changes")):
        args = {"source": str(server.file), "base": written["base"], "id": "b", "status": "x"}
        pending = server.start("werkbaum_set_status", args)
        landed(human, doc, 3)
        yield pending


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=str)
def test_a_write_past_its_store_step_gets_its_mirror_commit_and_audit_line(
    session: tuple[Session, str], backend: Backend, human: Human, repo: Path, number: int
) -> None:
    server, doc = session
    with second_write_in_its_mirror_step(server, backend, human, doc, 2.0) as pending:
        before = commits(repo)
        server.signal(number)
        signalled = time.monotonic()
        refused = server.call("werkbaum_read", {"source": str(server.file)})
        result = server.result(pending)
        status = server.exit_status(within=STOP_WAIT + CLOSE_WAIT + SLACK)
    assert status == -number, "it dies of the signal, as the default would"
    assert time.monotonic() - signalled < STOP_WAIT + CLOSE_WAIT + SLACK
    assert refused["error"]["code"] == "source_unavailable"
    assert "stopping" in refused["error"]["message"], "a new call is refused while it stops"
    assert result["base"]["version"] == 3 and "commit" in result["mirror"], result
    assert len(commits(repo)) == len(before) + 1, "the mirror commit was made"
    assert server.file.read_text(encoding="utf-8") == human.get(doc)["content"]
    assert git(repo, "status", "--porcelain") == ""
    outcomes = [(line["outcome"], line.get("mirror", {}).get("commit")) for line in server.lines()]
    assert outcomes == [("ok", before[0]), ("ok", result["mirror"]["commit"])]


def test_a_write_still_in_its_mirror_step_at_the_bound_is_audited_as_stopped(
    session: tuple[Session, str], backend: Backend, human: Human, repo: Path
) -> None:
    server, doc = session
    with second_write_in_its_mirror_step(server, backend, human, doc, STOP_WAIT + 20.0):
        before = commits(repo)
        server.signal(signal.SIGTERM)
        signalled = time.monotonic()
        status = server.exit_status(within=STOP_WAIT + CLOSE_WAIT + SLACK)
        waited = time.monotonic() - signalled
    assert status == -signal.SIGTERM
    assert STOP_WAIT <= waited < STOP_WAIT + CLOSE_WAIT + SLACK, waited
    last = server.lines()[-1]
    assert len(server.lines()) == 2, "one line per write, also for the stopped one"
    assert last["outcome"] == "stopped" and last["stoppedBy"] == "SIGTERM"
    assert last["new"]["version"] == 3, "the line says the document write landed"
    assert "not committed" in last["mirror"]["error"], "and that the mirror commit was not made"
    assert commits(repo) == before


def test_a_second_signal_stops_at_once_with_the_audit_line(
    session: tuple[Session, str], backend: Backend, human: Human
) -> None:
    server, doc = session
    with second_write_in_its_mirror_step(server, backend, human, doc, STOP_WAIT + 20.0):
        server.signal(signal.SIGTERM)
        time.sleep(0.3)
        server.signal(signal.SIGINT)
        signalled = time.monotonic()
        status = server.exit_status(within=CLOSE_WAIT + SLACK)
    assert status == -signal.SIGTERM, "it dies of the first signal"
    assert time.monotonic() - signalled < CLOSE_WAIT + SLACK
    assert [line["outcome"] for line in server.lines()] == ["ok", "stopped"]


def test_a_write_before_its_store_step_is_not_waited_for(
    session: tuple[Session, str], backend: Backend, human: Human
) -> None:
    server, doc = session
    written = first_write(server)
    with backend.faults.injected(Delayed(seconds=STOP_WAIT + 20.0, path=doc)):
        args = {"source": str(server.file), "base": written["base"], "id": "b", "status": "x"}
        server.start("werkbaum_set_status", args)  # its read of the base waits
        time.sleep(1.0)
        server.signal(signal.SIGTERM)
        status = server.exit_status(within=CLOSE_WAIT + SLACK)
    assert status == -signal.SIGTERM
    assert human.get(doc)["version"] == 2, "nothing of it was written"
    assert [line["outcome"] for line in server.lines()] == ["ok"]


def test_a_stop_with_nothing_in_flight_is_prompt(session: tuple[Session, str]) -> None:
    server, _ = session
    first_write(server)
    server.signal(signal.SIGTERM)
    signalled = time.monotonic()
    assert server.exit_status(within=CLOSE_WAIT + SLACK) == -signal.SIGTERM
    assert time.monotonic() - signalled < STOP_WAIT, "no wait for writes that are not there"


def test_a_stop_during_a_hung_commit_hook_leaves_no_scratch_index(
    repo: Path, backend: Backend, human: Human
) -> None:
    """The commit runs its hooks against a scratch index in the temp directory; a stop
    signal that ends the process before the commit does removes it (on_stop)."""
    tmp = repo.parent / "tmp"
    tmp.mkdir()
    doc = human.create(PLAN, title="Roadmap")
    server = Session(repo, backend, doc, tmp)
    try:
        written = first_write(server)
        hook = repo / ".git" / "hooks" / "pre-commit"
        hook.write_text("#!/bin/sh\nsleep 60\n", encoding="utf-8")
        hook.chmod(0o755)
        args = {"source": str(server.file), "base": written["base"], "id": "b", "status": "x"}
        server.start("werkbaum_set_status", args)
        deadline = time.monotonic() + 30
        while not list(tmp.glob("werkbaum-index-*")):
            assert time.monotonic() < deadline, "the commit never started"
            time.sleep(0.05)
        server.signal(signal.SIGTERM)
        assert server.exit_status(within=STOP_WAIT + CLOSE_WAIT + SLACK) == -signal.SIGTERM
        assert list(tmp.glob("werkbaum-index-*")) == []
        assert server.lines()[-1]["outcome"] == "stopped"
    finally:
        server.close()


def test_a_stop_during_a_hung_commit_hook_stops_the_commit_too(
    repo: Path, backend: Backend, human: Human
) -> None:
    """The mirror holds the repository's ``index.lock`` while it commits; a stop signal
    removes it, and first interrupts the commit. Before, that ``git commit`` ran on after
    the server had died and, once its hook ended, committed the scratch index the stop had
    removed: an empty tree, a commit deleting every file. Now git is stopped (SIGINT, as a
    Ctrl-C), nothing is committed, and the index is free for the person's next ``git add``."""
    doc = human.create(PLAN, title="Roadmap")
    server = Session(repo, backend, doc)
    hook_seconds = STOP_WAIT + CLOSE_WAIT + 5
    try:
        written = first_write(server)
        before = commits(repo)
        start_a_write_held_in_its_commit(repo, server, written, hook_seconds)
        hook_ends = time.monotonic() + hook_seconds
        assert (repo / ".git" / "index.lock").exists(), "the mirror holds the index"
        server.signal(signal.SIGTERM)
        assert server.exit_status(within=STOP_WAIT + CLOSE_WAIT + SLACK) == -signal.SIGTERM
        assert not (repo / ".git" / "index.lock").exists()
        time.sleep(max(0.0, hook_ends - time.monotonic()) + 2.0)  # the hook's end, had it run on
        assert commits(repo) == before, "a commit landed after the server had stopped"
        assert "README.md" in git(repo, "ls-tree", "--name-only", "HEAD")
        git(repo, "add", "README.md")  # the index is free
    finally:
        server.close()


def test_the_text_a_stopped_mirror_commit_left_is_committed_by_the_next_run_not_stashed(
    repo: Path, backend: Backend, human: Human
) -> None:
    """The stop interrupts the commit and removes the lock, but the process dies before its
    mirror step can put the file back: the file keeps the text the mirror wrote. The next
    run took that text for a person's hand edit — a stash "werkbaum-mcp: hand edit of
    plan.werkbaum" and a ``Werkbaum-Hand-Edit`` trailer for what no person wrote (round 26
    attack-mirror F5). Now the mirror's journal tells its own unfinished write apart."""
    doc = human.create(PLAN, title="Roadmap")
    server = Session(repo, backend, doc)
    try:
        written = first_write(server)
        start_a_write_held_in_its_commit(repo, server, written, 60)
        server.signal(signal.SIGTERM)
        assert server.exit_status(within=STOP_WAIT + CLOSE_WAIT + SLACK) == -signal.SIGTERM
    finally:
        server.close()
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    left = server.file.read_bytes()
    assert left == str(human.get(doc)["content"]).encode("utf-8"), "the stop put the file back"
    human.patch(doc, [{"op": "replace", "index": 3, "count": 1, "lines": ["  - [ ] #c: C (S)"]}])
    url = f"{backend.base_url}/api/v1/documents/{doc}"
    again = run(url, server.file, "--git-commit")
    assert again.returncode == 0, again.stderr
    assert git(repo, "stash", "list") == ""
    assert "Werkbaum-Hand-Edit" not in git(repo, "log", "-1", "--format=%B")
    assert git(repo, "status", "--porcelain") == ""
