"""One mirror run at a time per repository, across processes.

Two servers started with the same ``--mirror``, or a server and the README's
cron job (``werkbaum mirror … --git-commit``), write one file and one index.
A lock inside one process cannot order them, and without an order the
slower run commits the text it fetched earlier on top of a newer one. So a
run holds ``flock(LOCK_EX)`` on ``werkbaum-mirror.lock`` in the repository's
common git directory (shared by its linked work trees, as ``refs/stash`` is)
from its first look at the file to its commit: the kernel drops it when a
process dies, even by SIGKILL, and the file is out of the work tree, where
``git status`` would show it. Inside one process a thread lock per work tree
comes first (``flock`` would order the threads too, but a thread lock needs
no open file for it).

Waiting has a deadline (:data:`LOCK_TIMEOUT`): a run that holds the lock
longer (a commit hook that hangs) makes the others report that, not hang.
The lock orders the runs; which text may be committed is decided under it
(:mod:`.sync`: never one older than the archived version).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import time
from collections.abc import Iterator
from pathlib import Path

from werkbaum_stdio.mirror.git import GitError, WorkTree, work_tree_lock

LOCK_NAME = "werkbaum-mirror.lock"
LOCK_TIMEOUT = 60.0
"""Seconds a run waits for another run of the same repository before it gives up."""
LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


class MirrorBusy(GitError):
    """Another mirror run held the repository for longer than the deadline."""


@contextlib.contextmanager
def mirror_lock(repo: WorkTree | None, file: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the mirror lock of ``repo`` (None, no git: of ``file``, in this process only)."""
    deadline = time.monotonic() + timeout
    local = work_tree_lock(repo.top if repo is not None else file)
    if not local.acquire(timeout=timeout):
        raise _busy(repo, file, timeout)
    try:
        if repo is None:
            yield
        else:
            with _flocked(repo, deadline, timeout):
                yield
    finally:
        local.release()


@contextlib.contextmanager
def _flocked(repo: WorkTree, deadline: float, timeout: float) -> Iterator[None]:
    path = lock_file(repo)
    try:
        fd = os.open(path, LOCK_FLAGS, 0o600)
    except OSError as exc:
        raise GitError(f"cannot open the mirror lock {path}: {exc.strerror or exc}") from None
    try:
        pause = 0.005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise _busy(repo, path, timeout) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.1)
            except OSError as exc:
                raise GitError(f"cannot lock {path}: {exc.strerror or exc}") from None
        yield
    finally:
        os.close(fd)  # releases the lock


def lock_file(repo: WorkTree) -> Path:
    """``werkbaum-mirror.lock`` in the common git directory of the repository found at
    start-up (:meth:`WorkTree.verify` first: a repository moved away is an error, not a
    reason to lock the next one up the tree)."""
    repo.verify()
    return _common_dir(repo) / LOCK_NAME


@functools.cache
def _common_dir(repo: WorkTree) -> Path:
    """Asked once per work tree: where a work tree's repository keeps its data does not
    change while its top stays where it was (which :meth:`WorkTree.verify` checks)."""
    found = repo.git("rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
    return Path(found)


def _busy(repo: WorkTree | None, where: Path, timeout: float) -> MirrorBusy:
    what = f"the repository {repo.top}" if repo is not None else str(where)
    return MirrorBusy(
        f"another mirror run (another server, or `werkbaum mirror`) has held {what} for over "
        f"{timeout:g} s; this run wrote and committed nothing — the next write or run catches up"
    )
