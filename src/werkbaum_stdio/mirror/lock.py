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
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from werkbaum_core.processes import alive
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


# ------------------------------------------------------------------ what a killed run left

JOURNAL_NAME = "werkbaum-mirror.journal"
KEPT_WRITES = 16
"""How many of the mirror's own writes of a file the journal remembers."""


@attrs.frozen
class Journal:
    """What the run holding the mirror lock has under way, for the next run if it dies.

    A run killed outright (SIGKILL; a server stopped before its mirror step could put the
    file back) leaves two things no clean-up removed: the repository's ``index.lock`` it
    held — every person's ``git add`` then fails, and every later run refused with "the
    index is locked" until someone removed it by hand — and the file with the text it wrote
    but never committed, which the next run stashed as a person's hand edit (round 26). So
    a run notes the lock file it created (path, device, inode, change time, its pid) and
    the entry it is about to write, in ``werkbaum-mirror.journal`` next to the mirror lock;
    only the holder of the mirror lock reads or writes it. The next run takes the lock back
    only if it is still exactly that file and that process has gone, and does not call the
    text it wrote a hand edit. A lost journal (a crash of the machine) only loses that help.
    """

    path: Path
    top: str
    """The work tree this run is in: linked work trees share the journal (and the lock), each
    with its own entry."""

    @classmethod
    def of(cls, repo: WorkTree) -> Journal:
        return cls(lock_file(repo).with_name(JOURNAL_NAME), str(repo.top))

    def _read_all(self) -> dict[str, Any]:
        try:
            with open(self.path, encoding="utf-8") as journal:
                found = json.load(journal)
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def _read(self) -> dict[str, Any]:
        own = self._read_all().get(self.top)
        return own if isinstance(own, dict) else {}

    def _write(self, own: dict[str, Any]) -> None:
        """Best effort: a journal that cannot be written only loses the help above."""
        entries = {top: found for top, found in self._read_all().items() if top != self.top}
        if own:
            entries[self.top] = own
        with contextlib.suppress(OSError):
            if not entries:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
                return
            temp = self.path.with_name(f"{JOURNAL_NAME}.{os.getpid()}.tmp")
            with open(temp, "w", encoding="utf-8") as out:
                json.dump(entries, out)
            os.replace(temp, self.path)

    def holding(self, lock: Path) -> None:
        """The run holds ``lock`` (``index.lock``), which it created just now."""
        with contextlib.suppress(OSError):
            info = os.lstat(lock)
            held = [str(lock), info.st_dev, info.st_ino, info.st_ctime_ns, os.getpid()]
            self._write({**self._read(), "held": held})

    def writing(self, path: str, entry: str) -> None:
        """The run is about to write the file ``path`` (from the top of the work tree) as
        ``entry``. The entries of earlier runs stay noted (the last :data:`KEPT_WRITES`): a
        run interrupted after a killed one puts back the killed run's text, its own too."""
        earlier = self.wrote(path)
        kept = [found for found in earlier if found != entry][-(KEPT_WRITES - 1) :]
        self._write({**self._read(), "wrote": [path, [*kept, entry]]})

    def done(self) -> None:
        """The run has released the lock. The notes of the writes stay: whether a put-back
        finished is not known everywhere (a stop signal may end the process in it, or take
        the put-back's temp file away), and a note only counts while the file holds exactly
        that text — the mirror's own, in git or about to be."""
        wrote = self._read().get("wrote")
        self._write({"wrote": wrote} if wrote is not None else {})

    def wrote(self, path: str) -> list[str]:
        """The entries the mirror's last runs wrote into the file ``path``, oldest first."""
        found = self._read().get("wrote")
        if isinstance(found, list) and len(found) == 2 and found[0] == path:
            entries = found[1]
            if isinstance(entries, list):
                return [entry for entry in entries if isinstance(entry, str)]
        return []

    def take_back(self, lock: Path) -> bool:
        """Remove ``lock`` if it is the very ``index.lock`` a run that has died held; whether
        it did. A lock of anyone else — a person's git, a live process — stays."""
        held = self._read().get("held")
        if not isinstance(held, list) or len(held) != 5 or held[0] != str(lock):
            return False
        try:
            info = os.lstat(lock)
        except OSError:
            return False
        if [info.st_dev, info.st_ino, info.st_ctime_ns] != held[1:4]:
            return False
        if not isinstance(held[4], int) or alive(held[4]):
            return False
        try:
            os.unlink(lock)
        except OSError:
            return False
        return True
