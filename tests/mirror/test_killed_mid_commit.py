"""`werkbaum mirror` ended by a signal while its commit hook runs (round 26 attack-mirror).

The cron command as cron, ``timeout`` or systemd end it — SIGTERM, SIGHUP when
the terminal goes, SIGKILL — while ``git commit`` waits for a ``pre-commit``
hook. The hook here tells git's pid and then blocks on a FIFO until the test
lets it go, so that what git does after the mirror's process died is seen,
not guessed at with a sleep.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.backend import Backend
from tests.backend.human import Human
from tests.mirror.conftest import PLAN, commits, git
from tests.mirror.test_cli import WERKBAUM, run
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_stdio.mirror import Mirror
from werkbaum_stdio.mirror.target import MirrorTarget

WAIT = 30.0
"""Seconds a step may take on a loaded machine before the test gives up waiting (a bound
on the wait, never an assertion about time)."""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie no one has reaped yet counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _wait_for(ready: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not ready():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.02)


class BlockedHook:
    """A ``pre-commit`` hook that writes git's pid and its own, then waits for
    :meth:`release`."""

    def __init__(self, repo: Path) -> None:
        self.pid_file = repo.parent / "pids"
        self.fifo = repo.parent / "hook.fifo"
        os.mkfifo(self.fifo)
        hook = repo / ".git" / "hooks" / "pre-commit"
        hook.write_text(
            f"#!/bin/sh\necho $PPID $$ > '{self.pid_file}.new'\nmv '{self.pid_file}.new' "
            f"'{self.pid_file}'\nread line < '{self.fifo}'\n",
            encoding="utf-8",
        )
        hook.chmod(0o755)

    def pids(self) -> tuple[int, int]:
        """git's pid and the hook's."""
        _wait_for(self.pid_file.exists, "the commit hook")
        git_pid, hook_pid = self.pid_file.read_text(encoding="utf-8").split()
        return int(git_pid), int(hook_pid)

    def release(self) -> None:
        """Let the hook end, if it still waits; return once it has ended.

        A hook that runs but has no reader on the FIFO yet (it wrote its pids and is on its
        way to ``read``) is waited for: releasing it then found no reader, and the hook
        blocked for good once it got there."""
        hook_pid = self.pids()[1]
        deadline = time.monotonic() + WAIT
        while _alive(hook_pid):
            try:
                fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: no reader yet, or the hook has gone
                assert time.monotonic() < deadline, "the hook never read its FIFO"
                time.sleep(0.02)
                continue
            os.write(fd, b"go\n")
            os.close(fd)
            break
        _wait_for(lambda: not _alive(hook_pid), "the hook's end")


@pytest.fixture
def second_version(repo: Path, backend: Backend, human: Human) -> Iterator[tuple[str, Path]]:
    """The document's version 1 committed by a first run, version 2 on the backend."""
    doc = human.create(PLAN, title="Cron")
    url = f"{backend.base_url}/api/v1/documents/{doc}"
    plan = repo / "plan.werkbaum"
    first = run(url, plan, "--git-commit")
    assert first.returncode == 0, first.stderr
    human.patch(doc, [{"op": "replace", "index": 1, "count": 1, "lines": ["  - [x] #a: A (S)"]}])
    yield url, plan


def _start(url: str, plan: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(WERKBAUM), "mirror", url, str(plan), "--git-commit"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_mirror_killed_outright_commits_nothing_after_it_died(
    repo: Path, second_version: tuple[str, Path]
) -> None:
    """SIGKILL runs no clean-up in the mirror's process; its ``git commit`` (in a process
    group of its own, so that the deadline stops the hooks with it) ran on and committed
    once the hook ended — after the mirror had died, so the index kept the old entry (a
    staged revert of the commit, ``MM``). git now ends with the process that runs it."""
    url, plan = second_version
    before = commits(repo)
    hook = BlockedHook(repo)
    running = _start(url, plan)
    git_pid, _ = hook.pids()
    running.kill()
    running.communicate(timeout=WAIT)
    deadline = time.monotonic() + 10.0
    while _alive(git_pid) and time.monotonic() < deadline:  # the fix ends it at once
        time.sleep(0.02)
    hook.release()
    _wait_for(lambda: not _alive(git_pid), "git's end")
    assert commits(repo) == before, "a commit landed after the mirror had died"


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=str)
def test_a_stop_signal_to_the_cron_command_interrupts_its_commit_and_cleans_up(
    repo: Path, second_version: tuple[str, Path], number: signal.Signals
) -> None:
    """``timeout`` and systemd stop the cron job with SIGTERM, a closed terminal with SIGHUP;
    only Ctrl-C was handled. The process died at once, leaving the repository's
    ``index.lock`` (every ``git add`` then failed until someone removed it), a scratch
    index, the file with the new text, and its ``git commit`` running on to commit after
    it. Now it ends as on Ctrl-C: git interrupted, the lock removed, the file put back,
    and the process still dies of the signal. Ctrl-C (SIGINT, exit 130) removed the lock
    but left the file with the new text, which the next run stashed as a hand edit."""
    url, plan = second_version
    before, text = commits(repo), plan.read_bytes()
    hook = BlockedHook(repo)
    running = _start(url, plan)
    git_pid, _ = hook.pids()
    assert (repo / ".git" / "index.lock").exists(), "the mirror holds the index"
    running.send_signal(number)
    running.communicate(timeout=WAIT)
    assert running.returncode == (130 if number == signal.SIGINT else -number)
    assert not (repo / ".git" / "index.lock").exists()
    deadline = time.monotonic() + 10.0
    while _alive(git_pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    hook.release()
    _wait_for(lambda: not _alive(git_pid), "git's end")
    assert commits(repo) == before
    assert plan.read_bytes() == text
    assert git(repo, "status", "--porcelain") == ""
    git(repo, "add", "README.md")  # the index is free


def _killed_in_its_commit(repo: Path, url: str, plan: Path) -> None:
    """`werkbaum mirror` SIGKILLed while its hook runs; the hook then let go."""
    hook = BlockedHook(repo)
    running = _start(url, plan)
    git_pid, _ = hook.pids()
    running.kill()
    running.communicate(timeout=WAIT)
    hook.release()
    _wait_for(lambda: not _alive(git_pid), "git's end")
    (repo / ".git" / "hooks" / "pre-commit").unlink()


def ctrl_c_after_writing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C right after the mirror has renamed its new file into place."""
    write_over = MirrorTarget.write_over

    def then_ctrl_c(self: MirrorTarget, *args: Any) -> None:
        write_over(self, *args)
        raise KeyboardInterrupt

    monkeypatch.setattr(MirrorTarget, "write_over", then_ctrl_c)


def _run(url: str, plan: Path) -> subprocess.CompletedProcess[str]:
    return run(url, plan, "--git-commit")


def test_the_run_after_a_killed_one_takes_its_lock_back_and_commits_its_text(
    repo: Path, second_version: tuple[str, Path], human: Human
) -> None:
    """A run killed outright leaves the ``index.lock`` it held and the file with the text
    it wrote. The next run refused ("the index is locked", exit 3, every run after it too,
    and every person's ``git add``) until someone removed the lock by hand, and then stashed
    the mirror's own text as a person's hand edit. Now it takes back the lock — that very
    file, of a process that has gone — and commits the text, with no stash."""
    url, plan = second_version
    before = commits(repo)
    _killed_in_its_commit(repo, url, plan)
    assert (repo / ".git" / "index.lock").exists()  # SIGKILL: nothing could remove it
    again = _run(url, plan)
    assert again.returncode == 0, again.stderr
    assert "index.lock, left by a mirror run that was killed" in again.stderr
    assert commits(repo)[1:] == before
    assert git(repo, "stash", "list") == ""
    assert "Werkbaum-Hand-Edit" not in git(repo, "log", "-1", "--format=%B")
    assert git(repo, "show", "HEAD:plan.werkbaum") == human.get(url.rsplit("/", 1)[1])["content"]
    assert git(repo, "status", "--porcelain") == ""


def test_a_lock_or_an_edit_of_someone_else_after_a_killed_run_is_never_taken_for_its_own(
    repo: Path, second_version: tuple[str, Path]
) -> None:
    """After the killed run, a person removes its lock, edits the plan, and their own git
    holds the index (a new ``index.lock``): the next run leaves that lock alone and refuses;
    once it is gone, the person's edit is stashed as a hand edit, as ever."""
    url, plan = second_version
    _killed_in_its_commit(repo, url, plan)
    lock = repo / ".git" / "index.lock"
    lock.unlink()
    plan.write_text(PLAN + "  - [ ] #h: by hand (S)\n", encoding="utf-8")
    lock.write_bytes(b"")  # a person's git command holding the index
    refused = _run(url, plan)
    assert refused.returncode == 3
    assert "the index is locked" in refused.stderr
    assert lock.exists()
    lock.unlink()
    again = _run(url, plan)
    assert again.returncode == 0, again.stderr
    assert "Hand edit kept: git stash" in again.stdout
    assert "#h: by hand" in git(repo, "stash", "show", "-p")


def test_a_run_in_another_work_tree_between_keeps_what_the_killed_run_left_noted(
    repo: Path, second_version: tuple[str, Path], backend: Backend, human: Human
) -> None:
    """Linked work trees share the mirror's lock and journal. A run in the other work tree
    between the killed run and the next one here cleared the killed run's notes: its
    ``index.lock`` then stayed for good (exit 3 here on every run) and its text was stashed
    as a hand edit. Each work tree has its own entry now."""
    url, plan = second_version
    other = repo.parent / "other"
    git(repo, "worktree", "add", "-q", "-b", "side", str(other))
    other_url = f"{backend.base_url}/api/v1/documents/{human.create(PLAN, title='Other')}"
    _killed_in_its_commit(repo, url, plan)
    elsewhere = _run(other_url, other / "other.werkbaum")
    assert elsewhere.returncode == 0, elsewhere.stderr
    again = _run(url, plan)
    assert again.returncode == 0, again.stderr
    assert git(repo, "stash", "list") == ""
    assert git(repo, "status", "--porcelain") == ""


def test_a_ctrl_c_right_after_the_file_was_replaced_puts_it_back(
    repo: Path,
    second_version: tuple[str, Path],
    store: DocumentStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C landing just after the rename of the new file, before the run had noted that it
    wrote it: the put-back thought there was nothing to put back, and the file kept the
    mirror's text with nothing committed — the next run stashed it as a hand edit (round 26
    soak: 2 such stashes in 67 interrupted runs, no person editing the plan)."""
    url, plan = second_version
    text = plan.read_bytes()
    ctrl_c_after_writing(monkeypatch)
    mirror = Mirror.create(url, plan, store, None)
    with pytest.raises(KeyboardInterrupt):
        mirror.sync(None)
    assert plan.read_bytes() == text
    assert not (repo / ".git" / "index.lock").exists()
    assert git(repo, "status", "--porcelain") == ""
    monkeypatch.undo()
    assert "Hand edit" not in mirror.sync(None).describe()
    assert git(repo, "stash", "list") == ""


def test_a_run_interrupted_after_a_killed_one_puts_back_a_text_still_known_as_its_own(
    repo: Path,
    second_version: tuple[str, Path],
    store: DocumentStore,
    human: Human,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A killed run leaves its text T1; the next run, interrupted after writing T2, puts T1
    back. Only T2 was noted as the mirror's, so the run after that stashed T1 as a person's
    hand edit (round 26 soak, seed 5: 2 such stashes). Every recent write is noted now."""
    url, plan = second_version
    _killed_in_its_commit(repo, url, plan)
    left = plan.read_bytes()
    human.patch(url.rsplit("/", 1)[1], [{"op": "delete", "index": 3, "count": 1}])
    ctrl_c_after_writing(monkeypatch)
    mirror = Mirror.create(url, plan, store, None)
    with pytest.raises(KeyboardInterrupt):
        mirror.sync(None)
    assert plan.read_bytes() == left
    monkeypatch.undo()
    assert "Hand edit" not in mirror.sync(None).describe()
    assert git(repo, "stash", "list") == ""
    assert git(repo, "status", "--porcelain") == ""
