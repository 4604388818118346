"""The mirror in the git states a person leaves a repository in (round 23 attack-sync F2, F6, F7).

Real repositories, real conflicts made by git itself, real hooks: while git
is in the middle of something (a conflict, a merge, rebase or bisect, a
detached HEAD, a locked index) the mirror refuses before it touches the
file, a stash or the index, and its error says so; a hung hook is stopped
with git at the deadline, its whole process group with it.
"""

from __future__ import annotations

import signal
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.backend import Backend
from tests.backend.human import Human
from tests.cli.test_precommit_hook import PRE_COMMIT
from tests.mirror.conftest import PLAN, Agent, commits, git
from tests.mirror.test_cli import WERKBAUM
from tests.mirror.test_sync import REL, mirror_in
from werkbaum_core import Engine
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_stdio.mirror import git as mirror_git

HAND = "[ ] #plan: Plan\n  - [ ] #h: written by hand (XS)\n"
UNTOUCHED = "the file and the index were not touched"


@pytest.fixture
def agent(repo: Path, human: Human, store: DocumentStore, engine: Engine) -> Agent:
    """A mirror whose file is committed at version 2, on branch main."""
    writer = Agent(engine, store, mirror_in(repo, store, human.create(PLAN)))
    writer.write("setStatus", {"id": "a", "status": "x"})
    return writer


def commit_file(repo: Path, rel: str, text: str, subject: str) -> None:
    (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", subject)


def diverge(repo: Path, rel: str) -> None:
    """Branch ``side`` and ``main`` each change ``rel``; main is checked out."""
    git(repo, "checkout", "-q", "-b", "side")
    commit_file(repo, rel, "side version\n", "side edit")
    git(repo, "checkout", "-q", "main")
    commit_file(repo, rel, "main version\n", "main edit")


def conflict(repo: Path, how: str) -> None:
    """Leave the mirror file in conflict the way ``how`` does."""
    if how == "stash pop":
        (repo / REL).write_text("my stashed work\n", encoding="utf-8")
        git(repo, "stash", "-q")
        commit_file(repo, REL, "main version\n", "main edit")
        git(repo, "stash", "pop", check=False)
        return
    diverge(repo, REL)
    if how == "merge":
        git(repo, "merge", "side", check=False)
    elif how == "cherry-pick":
        git(repo, "cherry-pick", "side", check=False)
    else:
        git(repo, "checkout", "-q", "side")
        git(repo, "rebase", "main", check=False)


def snapshot(repo: Path) -> tuple[str, bytes, str, str, list[str]]:
    """Everything a refusal must leave as it was: index entries (all stages), the file's
    bytes, the status, the stash list and the commits."""
    return (
        git(repo, "ls-files", "--stage"),
        (repo / REL).read_bytes(),
        git(repo, "status", "--porcelain"),
        git(repo, "stash", "list", "--format=%H"),
        commits(repo),
    )


def write(agent: Agent) -> str:
    """An agent write whose mirror run fails; its error. The document write stands."""
    result, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert result.base.version == 3
    assert outcome is not None and set(outcome) == {"error"}, outcome
    error: str = outcome["error"]
    assert "\n" not in error and len(error) < 300, error  # one short line
    return error


@pytest.mark.parametrize("how", ["merge", "cherry-pick", "rebase", "stash pop"])
def test_a_conflicted_mirror_file_keeps_all_its_stages(repo: Path, agent: Agent, how: str) -> None:
    """Before: a merge's or cherry-pick's three stages collapsed to the merge base (a plain
    ``git commit`` then recorded the base, both sides lost), and during a rebase or after a
    conflicted ``stash pop`` the mirror committed through the conflict."""
    conflict(repo, how)
    before = snapshot(repo)
    stages = {line.split()[2] for line in git(repo, "ls-files", "--stage", "--", REL).splitlines()}
    assert stages == {"1", "2", "3"}
    error = write(agent)
    assert error.startswith(f"{REL} is in conflict (unmerged index entries)")
    assert "writes neither it nor its index entry" in error
    assert snapshot(repo) == before
    assert "UU " + REL in git(repo, "status", "--porcelain")
    if how == "merge":  # git still stops a commit of the unresolved merge
        done = git(repo, "commit", "--no-edit", check=False)
        assert commits(repo) == before[4], done


def test_a_conflict_in_another_file_stops_the_mirror_untouched(repo: Path, agent: Agent) -> None:
    """A ``stash pop`` that conflicted elsewhere leaves no marker, only unmerged entries."""
    commit_file(repo, "other.txt", "one\n", "other")
    (repo / "other.txt").write_text("stashed\n", encoding="utf-8")
    git(repo, "stash", "-q")
    commit_file(repo, "other.txt", "two\n", "other again")
    git(repo, "stash", "pop", check=False)
    (repo / REL).write_text(HAND, encoding="utf-8")
    before = snapshot(repo)
    error = write(agent)
    assert error == (
        f"cannot commit {REL} while other files are in conflict (other.txt); {UNTOUCHED}"
    )
    assert snapshot(repo) == before


def test_a_rebase_stopped_for_an_edit_gets_no_mirror_commit(repo: Path, agent: Agent) -> None:
    """Before: the commit landed on the rebase's detached HEAD, and ``rebase --continue``
    went on as if nothing had happened."""
    commit_file(repo, "other.txt", "one\n", "other")
    git(repo, "-c", "sequence.editor=sed -i s/^pick/edit/", "rebase", "-q", "-i", "HEAD~1")
    (repo / REL).write_text(HAND, encoding="utf-8")
    before = snapshot(repo)
    assert write(agent) == f"cannot commit {REL} during a rebase; {UNTOUCHED}"
    assert snapshot(repo) == before


def test_no_mirror_commit_during_a_bisect(repo: Path, agent: Agent) -> None:
    first = commits(repo)[-1]
    for n in range(3):
        commit_file(repo, "other.txt", f"{n}\n", f"other {n}")
    git(repo, "bisect", "start", "HEAD", first)
    before = snapshot(repo)
    assert write(agent) == f"cannot commit {REL} during a bisect; {UNTOUCHED}"
    assert snapshot(repo) == before


def test_a_merge_in_progress_is_refused_before_anything_is_touched(
    repo: Path, agent: Agent
) -> None:
    """No conflict in the mirror file, but a merge under way: the hand edit stays in the
    file, no stash is made and dropped."""
    diverge(repo, "other.txt")
    git(repo, "merge", "--no-commit", "side", check=False)
    (repo / REL).write_text(HAND, encoding="utf-8")
    before = snapshot(repo)
    assert write(agent) == f"cannot commit {REL} during a merge; {UNTOUCHED}"
    assert snapshot(repo) == before


def test_on_a_detached_head_the_mirror_refuses(repo: Path, agent: Agent) -> None:
    """Chosen: refuse (README). A commit there drops out of sight at the next checkout."""
    git(repo, "checkout", "-q", "--detach")
    before = snapshot(repo)
    error = write(agent)
    assert error.startswith(f"cannot commit {REL} on a detached HEAD (no branch checked out)")
    assert error.endswith(UNTOUCHED)
    assert snapshot(repo) == before
    git(repo, "checkout", "-q", "main")
    assert "commit" in agent.mirror.sync(None).to_json()  # back on a branch, it catches up


def test_a_stale_index_lock_is_one_short_true_line(repo: Path, agent: Agent) -> None:
    """Before: ~900 characters saying that putting the file back had failed — it had not."""
    (repo / REL).write_text(HAND, encoding="utf-8")
    lock = repo / ".git" / "index.lock"
    lock.write_text("", encoding="utf-8")
    before = snapshot(repo)
    assert write(agent) == (
        f"the index is locked: {lock} exists: another git command is running, or one that "
        f"crashed left it (remove it if no git runs); {UNTOUCHED}"
    )
    assert snapshot(repo) == before
    lock.unlink()
    outcome = agent.mirror.sync(None).to_json()
    assert "commit" in outcome and "handEditStash" in outcome


def test_a_stale_branch_lock_is_one_line_and_the_file_is_put_back(repo: Path, agent: Agent) -> None:
    """git's own paragraph of advice for a lock file becomes one line; the commit fails at
    the branch update, after the file was written, so it is put back — and the error says
    that, truly."""
    (repo / REL).write_text(HAND, encoding="utf-8")
    lock = repo / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("", encoding="utf-8")
    before = snapshot(repo)
    assert write(agent) == (
        f"git commit failed (exit 128): {lock} exists: another git command is running, or "
        "one that crashed left it (remove it if no git runs); the file and the index are as "
        "they were"
    )
    assert snapshot(repo) == before


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


@pytest.fixture
def ignoring(request: pytest.FixtureRequest) -> Iterator[bool]:
    """With param True, this process (the mirror's) ignores SIGINT and SIGTERM while the test
    runs, as one started by a script without job control (``werkbaum-mcp &``) ignores
    SIGINT; git and its hooks inherit what is ignored."""
    ignored: bool = getattr(request, "param", False)
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    if ignored:
        for sig in before:
            signal.signal(sig, signal.SIG_IGN)
    try:
        yield ignored
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


SERVER_SIGNALS = pytest.mark.parametrize(
    "ignoring", [False, True], ids=["server-default", "server-ignores-stops"], indirect=True
)


def hanging_hook(repo: Path, pids: Path, trap: str = "", name: str = "pre-commit") -> None:
    """A hook (pre-commit) that starts a child and waits for it (1000 s); both pids in ``pids``."""
    hook = repo / ".git" / "hooks" / name
    hook.write_text(f"#!/bin/sh\n{trap}sleep 1000 &\necho $$ $! > {pids}\nwait\n", encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)


def assert_gone(pids: Path) -> None:
    """The hook's shell and its child end within seconds."""
    shell, child = (int(pid) for pid in pids.read_text(encoding="utf-8").split())
    deadline = time.monotonic() + 5
    while (alive(shell) or alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(shell) and not alive(child)


def test_ctrl_c_of_the_cron_command_stops_the_hook_too(
    repo: Path, backend: Backend, human: Human, tmp_path: Path
) -> None:
    """git's own process group no longer gets a terminal's SIGINT, so the command stops the
    group itself. Before: git was killed, its hook ran on."""
    pids = tmp_path / "pids"
    hanging_hook(repo, pids)
    command = [WERKBAUM, "mirror", human.create(PLAN), repo / "cron.werkbaum", "--git-commit"]
    run = subprocess.Popen(
        [*map(str, command), "--server", backend.base_url],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not (pids.exists() and pids.read_text(encoding="utf-8").strip()):
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.05)
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=20) != 0
    finally:
        run.kill()
        run.wait()
    assert_gone(pids)
    assert not (repo / ".git" / "index.lock").exists()  # the lock it held went with it


@pytest.mark.parametrize(
    ("trap", "ignoring"),
    [("", False), ("trap '' TERM\n", False), ("trap '' INT TERM\n", False), ("", True)],
    ids=["plain", "ignores-sigterm", "ignores-sigint-and-sigterm", "server-ignores-stops"],
    indirect=["ignoring"],
)
def test_a_hung_hook_is_stopped_with_its_process_group_at_the_deadline(
    repo: Path,
    agent: Agent,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    trap: str,
    ignoring: bool,
) -> None:
    """Before: git alone was killed; the hook and its child ran on, one pair per write.
    With the server ignoring SIGINT and SIGTERM, git and the hook inherited that: git
    outlived the stop and the error was "git commit failed (exit 1): no output"."""
    monkeypatch.setattr(mirror_git, "GIT_TIMEOUT", 2.0)
    pids = tmp_path / "pids"
    hanging_hook(repo, pids, trap)
    committed = (repo / REL).read_bytes()
    started = time.monotonic()
    error = write(agent)
    took = time.monotonic() - started
    assert_gone(pids)
    graces = mirror_git.INTERRUPT_GRACE + 2 * mirror_git.STOP_GRACE
    assert took < 2.0 + graces + 5  # the deadline and the stop's graces, not the hook's 1000 s
    assert error == (
        "git commit did not finish within 2 s (a hook still running?); git and its hooks "
        "were stopped; the file and the index are as they were"
    )
    assert (repo / REL).read_bytes() == committed
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "index.lock").exists()  # held during the hook, then released


@SERVER_SIGNALS
def test_a_commit_that_a_hung_post_commit_hook_held_up_stands(
    repo: Path, agent: Agent, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ignoring: bool
) -> None:
    """Round 24 F2: the commit was made, then the hook was stopped; the mirror called it a
    failure and put the old file and index entry back: a staged revert, which the
    person's next commit made. Now it is the commit, with the failure as a warning
    (with the server ignoring the stop signals too: the commit had no warning then)."""
    monkeypatch.setattr(mirror_git, "GIT_TIMEOUT", 2.0)
    pids = tmp_path / "pids"
    hanging_hook(repo, pids, name="post-commit")
    head = git(repo, "rev-parse", "HEAD").strip()
    result, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert_gone(pids)
    assert outcome is not None and set(outcome) == {"commit", "version", "warning"}, outcome
    assert outcome["version"] == result.base.version == 3
    assert outcome["warning"] == (
        "committed, but then git commit did not finish within 2 s (a hook still running?); "
        "git and its hooks were stopped (a post-commit hook?)"
    )
    assert git(repo, "rev-parse", "HEAD").strip() == outcome["commit"] != head
    assert git(repo, "rev-parse", "HEAD^").strip() == head
    assert git(repo, "status", "--porcelain") == ""  # no staged revert
    assert "[~] #b" in (repo / REL).read_text(encoding="utf-8")
    assert not (repo / ".git" / "index.lock").exists()


@SERVER_SIGNALS
def test_a_hook_runner_stopped_at_the_deadline_puts_back_the_work_it_set_aside(
    repo: Path, agent: Agent, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ignoring: bool
) -> None:
    """Round 24 F1, with the real pre-commit framework: it moves the unstaged changes of
    every other tracked file into a patch and checks HEAD out over them while its hooks
    run (the commit's index is HEAD plus the mirror file). Stopped with SIGTERM it ended
    without putting them back: the work was only in a patch in pre-commit's cache. The
    deadline sends SIGINT first, on which it puts them back."""
    monkeypatch.setattr(mirror_git, "GIT_TIMEOUT", 4.0)
    config = (
        "repos:\n  - repo: local\n    hooks:\n      - {id: slow, name: slow, entry: sleep 600, "
        "language: system, pass_filenames: false, always_run: true}\n"
    )
    (repo / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    (repo / "other.txt").write_text("committed\n", encoding="utf-8")
    git(repo, "add", ".pre-commit-config.yaml", "other.txt")
    git(repo, "commit", "-q", "-m", "hooks")
    home = tmp_path / "pre-commit-home"
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home))
    subprocess.run(
        [str(PRE_COMMIT), "install"],
        cwd=repo,
        check=True,
        capture_output=True,
        timeout=60,
    )
    (repo / "other.txt").write_text("my uncommitted work\n", encoding="utf-8")
    committed = (repo / REL).read_bytes()
    error = write(agent)
    assert error.startswith("git commit did not finish within 4 s"), error
    assert (repo / "other.txt").read_text(encoding="utf-8") == "my uncommitted work\n"
    assert git(repo, "status", "--porcelain").splitlines() == [" M other.txt"]
    assert (repo / REL).read_bytes() == committed


def test_a_hook_that_rewrites_and_stages_the_plan_is_said_and_its_text_not_stashed(
    repo: Path, human: Human, agent: Agent
) -> None:
    """A pre-commit formatter appends to the plan and stages it: the commit holds the hook's
    text, not the document's. The result named the commit as the document's version without
    a word, the index got the document's text (``git status``: ``MM``, a staged revert of the
    hook's change), and the next write stashed the hook's output as a person's hand edit
    (round 26 attack-mirror F7). Now the result says so, the index holds what was committed,
    and nothing is stashed."""
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nprintf '# fixed\\n' >> {REL}\ngit add {REL}\n", encoding="utf-8")
    hook.chmod(0o755)
    _, outcome = agent.write("setStatus", {"id": "b", "status": "x"})
    assert outcome is not None and "commit" in outcome, outcome
    assert "does not hold the document's text" in outcome["warning"]
    assert "exclude the plan from that hook" in outcome["warning"]
    assert git(repo, "show", f"HEAD:{REL}").endswith("# fixed\n")
    assert git(repo, "status", "--porcelain") == ""
    doc_id = agent.mirror.document.rsplit("/", 1)[1]
    human.patch(doc_id, [{"op": "replace", "index": 3, "count": 1, "lines": ["  - [ ] #c: C (S)"]}])
    agent.write("setStatus", {"id": "a", "status": " "})
    assert git(repo, "stash", "list") == ""
