"""The mirror while a person commits in the same repository (round 25 writers F3, F4, F5).

Real repositories, the real pipeline and the real ``git``, reached through a wrapper on the
PATH that pauses the mirror once at one step of its commit — right after it read HEAD's
tree into its scratch index, right before its ``git commit``, or right after it — until
the test has done what a person (or a script) does in that moment: ``git add`` and
``git commit``, or plumbing that moves HEAD. The window is the one a slow machine, a big
index or a commit hook gives anyway; the pause makes it certain.

Before: the person's commit landed in the window. The mirror's commit was then built from
the old HEAD's tree on top of it and silently undid it (F3); or the person's commit took
the plan the mirror had staged already, and the mirror's own commit, then empty, failed
and put the old plan back into the index: a staged revert their next commit made (F4);
and the commit the mirror reported was ``git rev-parse HEAD`` after its commit — often
someone else's (F5). Now the mirror holds git's ``index.lock`` for the whole step: the
person's ``git add``/``git commit`` fails with git's usual message, and the mirror reports
the commit git made for it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.backend.human import Human
from tests.mirror.conftest import AGENT, PLAN, Agent, commits, git, trailers
from tests.mirror.test_hand_edits import HAND, stashes
from tests.mirror.test_sync import REL, body, mirror_in, server_bytes
from werkbaum_core import Engine
from werkbaum_core.stores.documents import DocumentStore

WAIT = 30.0
"""Seconds a test waits for the mirror to reach its pause (generous: the machine is shared)."""

WRAPPER = """#!/bin/sh
# git as the mirror runs it, paused once at the step $PAUSE_AT of its commit: a marker
# file, then wait (at most 20 s) until the test says go
step=""
case "$GIT_INDEX_FILE" in
  *werkbaum-index-*)
    case " $* " in
      *" read-tree "*) step=read-tree ;;
      *" commit "*) step=commit ;;
    esac ;;
esac
pause() {
  if [ "$1" = "$PAUSE_AT" ] && mkdir "$PAUSE_DIR/once" 2>/dev/null; then
    : > "$PAUSE_DIR/paused"
    n=0
    while [ ! -e "$PAUSE_DIR/go" ] && [ $n -lt 2000 ]; do sleep 0.01; n=$((n + 1)); done
  fi
}
[ "$step" = commit ] && pause before-commit
"$REAL_GIT" "$@"
rc=$?
[ "$step" = read-tree ] && pause after-read-tree
[ "$step" = commit ] && pause after-commit
exit $rc
"""
NOTE = "the person's line\n"
REFUSED = "index.lock': File exists"


class Pause:
    """The mirror's git, paused once at a step while the test acts (see :data:`WRAPPER`)."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder, self.monkeypatch = folder, monkeypatch

    def at(self, step: str) -> None:
        self.monkeypatch.setenv("PAUSE_AT", step)

    def reached(self) -> None:
        deadline = time.monotonic() + WAIT
        while not (self.folder / "paused").exists():
            assert time.monotonic() < deadline, "the mirror never reached its pause"
            time.sleep(0.01)

    def go(self) -> None:
        (self.folder / "go").touch()


@pytest.fixture
def pause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Pause:
    real = shutil.which("git")
    assert real is not None
    folder, wrapper = tmp_path / "pause", tmp_path / "bin" / "git"
    folder.mkdir()
    wrapper.parent.mkdir()
    wrapper.write_text(WRAPPER, encoding="utf-8")
    wrapper.chmod(0o755)
    monkeypatch.setenv("REAL_GIT", real)
    monkeypatch.setenv("PAUSE_DIR", str(folder))
    monkeypatch.setenv("PAUSE_AT", "nowhere")
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{os.environ['PATH']}")
    return Pause(folder, monkeypatch)


@pytest.fixture
def setup(repo: Path, human: Human, store: DocumentStore, engine: Engine) -> tuple[str, Agent]:
    """A mirror committed at version 2, and a file of the person's, notes.txt, committed."""
    (repo / "notes.txt").write_text("notes\n", encoding="utf-8")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "notes")
    doc_id = human.create(PLAN)
    agent = Agent(engine, store, mirror_in(repo, store, doc_id))
    agent.write("setStatus", {"id": "a", "status": "x"})
    return doc_id, agent


def person(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A person's git command (it may fail: that is what the tests look at)."""
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, encoding="utf-8", check=False
    )


def add_note(repo: Path) -> None:
    with (repo / "notes.txt").open("a", encoding="utf-8") as notes:
        notes.write(NOTE)


@pytest.fixture
def meanwhile(pause: Pause) -> Iterator[Any]:
    """``meanwhile(agent)``: a context in which the agent's write runs until the mirror's
    pause; the block is the person's moment; the write's mirror outcome is in the dict
    it yields once the block ends."""
    threads: list[threading.Thread] = []

    class During:
        def __init__(self, agent: Agent) -> None:
            self.agent, self.outcome = agent, {}

        def __enter__(self) -> dict[str, Any]:
            def run() -> None:
                _, outcome = self.agent.write("setStatus", {"id": "b", "status": "~"})
                self.outcome.update(outcome or {})

            thread = threading.Thread(target=run)
            threads.append(thread)
            thread.start()
            pause.reached()
            return self.outcome

        def __exit__(self, *exc: object) -> None:
            pause.go()
            threads[-1].join(timeout=2 * WAIT)
            assert not threads[-1].is_alive(), "the agent's write never ended"

    yield During
    pause.go()
    for thread in threads:
        thread.join(timeout=2 * WAIT)


def changed(repo: Path, commit: str) -> list[str]:
    return git(repo, "show", "--format=", "--name-only", commit).split()


def subject(repo: Path, commit: str) -> str:
    return git(repo, "log", "-1", "--format=%s", commit).strip()


def is_mirror_commit(repo: Path, commit: str) -> bool:
    return subject(repo, commit).startswith("Werkbaum-Stand vom")


# ------------------------------------------------------------------ F3


def test_a_persons_commit_between_the_mirrors_look_at_head_and_its_commit_is_not_undone(
    repo: Path, human: Human, setup: tuple[str, Agent], pause: Pause, meanwhile: Any
) -> None:
    """The person commits notes.txt while the mirror's scratch index holds HEAD's tree:
    their commit is refused by the held lock (or, were it to land, the mirror's commit
    would have to contain it) — never undone."""
    doc_id, agent = setup
    pause.at("after-read-tree")
    with meanwhile(agent) as outcome:
        add_note(repo)
        added = person(repo, "add", "notes.txt")
        committed = person(repo, "commit", "-q", "-m", "person: notes")
    assert "commit" in outcome, outcome
    mine = outcome["commit"]
    assert is_mirror_commit(repo, mine) and changed(repo, mine) == [REL]
    if committed.returncode == 0:
        assert NOTE in git(repo, "show", f"{mine}:notes.txt")
    else:
        assert added.returncode != 0 and REFUSED in added.stderr, added.stderr
        assert REFUSED in committed.stderr, committed.stderr
    # the person's next try goes through, with their file alone
    person(repo, "add", "notes.txt")
    again = person(repo, "commit", "-q", "-m", "person: notes again")
    assert again.returncode == 0, again.stderr
    assert changed(repo, "HEAD") == ["notes.txt"]
    assert git(repo, "show", "HEAD:notes.txt") == "notes\n" + NOTE
    assert git(repo, "show", f"HEAD:{REL}").encode() == server_bytes(human, doc_id)
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "index.lock").exists()


# ------------------------------------------------------------------ F4


@pytest.mark.parametrize(
    "how",
    [["add"], ["staged"], ["all"]],
    ids=["add-then-commit", "commit-what-is-staged", "commit-all"],
)
def test_a_persons_commit_during_the_mirrors_step_never_carries_the_plan(
    repo: Path, human: Human, setup: tuple[str, Agent], pause: Pause, meanwhile: Any, how: list[str]
) -> None:
    """Right before the mirror's ``git commit``: the person's ``git add notes.txt && git
    commit``, a ``git commit`` of what is staged (nothing of theirs), or ``git commit -a``.
    Before, the plan was staged already: the person's commit took it (no trailers, their
    name), and the mirror's then undid their notes or, empty, failed and staged the old
    plan back (a revert their next commit made)."""
    doc_id, agent = setup
    before = commits(repo)
    pause.at("before-commit")
    with meanwhile(agent) as outcome:
        add_note(repo)
        if how == ["add"]:
            person(repo, "add", "notes.txt")
        extra = ["-a"] if how == ["all"] else []
        person(repo, "commit", "-q", *extra, "-m", "person: during")
    assert "commit" in outcome and "warning" not in outcome, outcome
    new = [sha for sha in commits(repo) if sha not in before]
    for sha in new:
        if not is_mirror_commit(repo, sha):
            assert REL not in changed(repo, sha), "a person's commit carried the plan"
    assert [sha for sha in new if is_mirror_commit(repo, sha)] == [outcome["commit"]]
    assert changed(repo, outcome["commit"]) == [REL]
    plan = server_bytes(human, doc_id)
    assert (repo / REL).read_bytes() == plan
    assert git(repo, "show", f"HEAD:{REL}").encode() == plan
    assert REL not in git(repo, "status", "--porcelain"), "a staged revert was left"
    # the person's next ordinary commit commits their file, not a revert of the plan
    person(repo, "add", "notes.txt")
    person(repo, "commit", "-q", "-m", "person: after")
    assert git(repo, "show", f"HEAD:{REL}").encode() == plan
    assert NOTE in git(repo, "show", "HEAD:notes.txt")
    assert git(repo, "status", "--porcelain") == ""
    assert stashes(repo) == []


def test_a_plan_someone_committed_while_the_mirror_ran_is_not_put_back(
    repo: Path, human: Human, setup: tuple[str, Agent], pause: Pause, meanwhile: Any
) -> None:
    """A script (plumbing, no index) commits exactly the new plan while the mirror builds
    its commit, which then has nothing to commit. Before: the mirror reported that
    commit as its own ("committed, but then git commit failed … (a post-commit hook?)").
    Now it says that HEAD holds the text already and who committed it; the file and the
    index keep that text (nothing older is put back)."""
    doc_id, agent = setup
    pause.at("after-read-tree")
    with meanwhile(agent) as outcome:
        plan = server_bytes(human, doc_id)
        theirs = plumbing_commit(repo, REL, plan, "script: plan")
    assert outcome == {"unchanged": True, "version": 3, "committedBy": theirs}
    assert git(repo, "rev-parse", "HEAD").strip() == theirs
    assert (repo / REL).read_bytes() == plan
    assert git(repo, "status", "--porcelain") == ""


def test_a_text_committed_by_hand_is_reported_as_theirs(
    repo: Path, human: Human, setup: tuple[str, Agent]
) -> None:
    """HEAD holds the server's text in a person's commit (pasted and committed), and the
    file has an uncommitted edit on top: the mirror stashes the edit, puts the text back
    and makes no commit — and now says in whose commit the text is."""
    doc_id, agent = setup
    human.patch(doc_id, [{"op": "replace", "index": 2, "count": 1, "lines": ["  - [x] #b: B (M)"]}])
    (repo / REL).write_bytes(server_bytes(human, doc_id))
    git(repo, "commit", "-q", "-a", "-m", "pasted from the editor")
    theirs = git(repo, "rev-parse", "HEAD").strip()
    (repo / REL).write_text(HAND, encoding="utf-8")
    outcome = agent.mirror.sync(None).to_json()
    assert outcome == {
        "unchanged": True,
        "version": 3,
        "committedBy": theirs,
        "handEditStash": outcome["handEditStash"],
    }
    assert commits(repo)[0] == theirs
    assert (repo / REL).read_bytes() == server_bytes(human, doc_id)
    assert git(repo, "status", "--porcelain") == ""


# ------------------------------------------------------------------ F5 and a moved HEAD


def test_the_reported_commit_is_the_one_git_made_for_the_mirror(
    repo: Path, setup: tuple[str, Agent], pause: Pause, meanwhile: Any
) -> None:
    """HEAD moves on right after the mirror's ``git commit`` (a script commits on top):
    before, the mirror reported ``git rev-parse HEAD`` — the script's commit."""
    _, agent = setup
    pause.at("after-commit")
    with meanwhile(agent) as outcome:
        add_note(repo)
        theirs = plumbing_commit(repo, "notes.txt", (repo / "notes.txt").read_bytes(), "script")
    assert set(outcome) == {"commit", "version"}, outcome
    assert outcome["commit"] != theirs
    assert git(repo, "rev-parse", f"{theirs}^").strip() == outcome["commit"]
    assert is_mirror_commit(repo, outcome["commit"])
    assert changed(repo, outcome["commit"]) == [REL]


def test_a_head_moved_under_the_mirrors_commit_is_said(
    repo: Path, setup: tuple[str, Agent], pause: Pause, meanwhile: Any
) -> None:
    """Plumbing moves HEAD (no index, so the held lock cannot stop it) between the
    mirror's look at HEAD and its ``git commit``. git then puts the commit on the new HEAD
    with the tree of the old one: the result says so instead of reporting a clean commit."""
    _, agent = setup
    head = git(repo, "rev-parse", "HEAD").strip()
    pause.at("after-read-tree")
    with meanwhile(agent) as outcome:
        add_note(repo)
        theirs = plumbing_commit(repo, "notes.txt", (repo / "notes.txt").read_bytes(), "script")
    assert set(outcome) == {"commit", "version", "warning"}, outcome
    assert git(repo, "rev-parse", f"{outcome['commit']}^").strip() == theirs
    assert outcome["warning"] == (
        f"HEAD moved from {head[:12]} to {theirs[:12]} while the mirror built its commit (not "
        f"through the index: another work tree, a script), so {outcome['commit'][:12]} has the "
        f"tree of {head[:12]} with the file: it may undo what {theirs[:12]} changed — check "
        f"`git show --stat {outcome['commit'][:12]}`"
    )


def plumbing_commit(repo: Path, rel: str, data: bytes, message: str) -> str:
    """A commit of ``rel`` as ``data`` on top of HEAD, made as a script in another work tree
    makes one: objects and ``update-ref``, no index. Its sha."""
    index = repo.parent / "plumbing-index"
    env = {"GIT_INDEX_FILE": str(index)}

    def run(*args: str, data: bytes | None = None) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=repo,
            input=data,
            capture_output=True,
            check=True,
            env={**os.environ, **env},
        )
        return done.stdout.decode().strip()

    run("read-tree", "HEAD")
    blob = run("hash-object", "-w", "--stdin", data=data)
    run("update-index", "--cacheinfo", f"100644,{blob},{rel}")
    tree = run("write-tree")
    commit = run("commit-tree", tree, "-p", "HEAD", "-m", message)
    run("update-ref", "HEAD", commit)
    index.unlink()
    return commit


# ------------------------------------------------------------------ round 26: a copied trailer


def test_a_persons_commit_with_a_copied_version_trailer_does_not_hold_the_mirror_back(
    repo: Path, human: Human, setup: tuple[str, Agent]
) -> None:
    """A person commits the plan with a ``Werkbaum-Version: 40`` trailer in their message
    (copied from a mirror commit, or from another plan's). It counted as the file's last
    mirror commit: every run after it was "skipped" (git archives version 40 already)
    while the document went on from version 3 — the archive stood still, exit 0. Only a
    message with the mirror's subject is a mirror commit now: the next write is committed,
    and its body counts from the last real mirror commit (version 2)."""
    doc_id, agent = setup
    with (repo / REL).open("a", encoding="utf-8") as plan:
        plan.write("  - [ ] #z: Z, by hand (S)\n")
    git(
        repo,
        "commit",
        "-q",
        "-a",
        "-m",
        "Add Z by hand\n\nas in the other plan\n\nWerkbaum-Version: 40",
    )
    human.patch(doc_id, [{"op": "replace", "index": 2, "count": 1, "lines": ["  - [x] #b: B (M)"]}])
    _, outcome = agent.write("setStatus", {"id": "c", "status": " "})
    assert outcome is not None and "commit" in outcome, outcome
    assert outcome["version"] == 4
    assert (repo / REL).read_bytes() == server_bytes(human, doc_id)
    assert git(repo, "show", f"HEAD:{REL}").encode("utf-8") == server_bytes(human, doc_id)
    assert trailers(repo)[-1] == "Werkbaum-Version: 4"
    assert body(repo) == f"v3 Anna · v4 {AGENT}"
