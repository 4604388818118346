"""Running git for the mirror: no shell, no inherited repository, stdin closed, output captured.

git never reads or writes the mirror file by its path here: a local process
may swap the file's directory for a symlink at any moment, and git follows
it. The mirror hands git the file's bytes (read through the held directory,
:mod:`.target`) and git works on objects and index entries only —
``hash-object --stdin``, ``update-index --cacheinfo``, ``read-tree`` and
``write-tree`` into a scratch index, ``commit-tree``, ``stash store``. Even
the commit is one of a scratch index (HEAD plus the new entry), so that the
repository's hooks still run without git going back to the file. Every
command runs at the top of the work tree, never in the file's directory.

The repository's index is shared with the people working in it, so the
mirror takes it as git does (:class:`HeldIndex`): it creates ``index.lock``
before it reads the file's index and HEAD entries and holds it through the
stash, the file write and the commit, until it renames the new index over
the old one. A person's ``git add`` or ``git commit`` in that moment fails
with git's own "index.lock exists" and changes nothing, instead of landing
between the mirror's look at HEAD and its commit (the commit then undid
theirs) or taking the mirror's staged plan into their own commit (round 25
F3, F4). The mirror's own commands meanwhile never take that lock: the
commit's index is a scratch file, and the new index is built in a copy and
written into the held lock file. Plumbing that moves HEAD without the index
(another work tree's script, ``update-ref``) is not stopped by it: the commit
is checked against the HEAD it was built on, and a moved HEAD is said.

git and its hooks run in a process group of their own, and the whole group
is stopped at the deadline: a hung hook must neither hold the agent's answer
nor outlive the mirror run. A stop signal that ends the server interrupts the
git commands still running, then removes the scratch indexes and the held
``index.lock`` (:func:`~werkbaum_core.engine.lifetime.on_stop`): a commit left
running would land after the process died, of an index no one updates. Before
the mirror touches the file, the stash or the index it asks git whether a
commit may happen now at all (:meth:`WorkTree.check_committable`): never
during a merge, rebase, bisect or conflict, never on a detached HEAD, never
over unmerged index entries, never while someone else holds the index.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import attrs

from werkbaum_core.engine.lifetime import on_stop
from werkbaum_core.errors import InvalidArgument
from werkbaum_core.processes import signalled_on_parent_death
from werkbaum_stdio.mirror.message import SUBJECT_PREFIX, VERSION_TRAILER

SEARCH_DEPTH = 100
"""How many commits of the mirror file are searched for the previous mirror commit."""

GIT_TIMEOUT = 30.0
"""Seconds per git command, a commit's hooks included; then git's process group is stopped.

The agent waits for its write's answer, and the answer carries the mirror's
outcome. MCP clients give up on a request after a while — the TypeScript
SDK's default is 60 s — and an agent whose client gave up sees a failure for
a write that landed. So the bound is well inside that: the document write
and the fetch keep the rest, and a hook that needs longer belongs in CI, not
in a commit an agent waits for. The next write (or the cron run) commits
what a stopped run could not."""

INTERRUPT_GRACE = 5.0
"""Seconds a stopped git process group gets after SIGINT, as after a Ctrl-C: hook runners
put back what they set aside on it (the pre-commit framework re-applies the unstaged
changes of every other file; on SIGTERM it ends without, and they were lost)."""

STOP_GRACE = 2.0
"""Seconds a stopped git process group then gets after SIGTERM (git removes its lock files),
then after SIGKILL, to close its output pipes."""

ERROR_TAIL = 2000
"""Characters of git's own output kept in an error: the end names the cause."""

REPOSITORY_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_SHALLOW_FILE",
        "GIT_GRAFT_FILE",
        "GIT_INTERNAL_SUPER_PREFIX",
    }
)
"""Variables that redirect git to another repository. A server started from
inside a git hook inherits them; git must find the mirror's repository from
the file's directory, never commit into the one the hook belongs to."""

_OLD_SUBJECT_VERSION = re.compile(r"\(Version ([0-9]+)")
_NUMBER = re.compile(r"[0-9]+")
_TRAILER_LINE = re.compile(r"^(?P<key>[^:]+):\s*(?P<value>.*)$")
_LOCKED = re.compile(r"Unable to create '(?P<path>[^']+\.lock)': File exists")
_SUMMARY = re.compile(r"^\[[^\n]*? (?P<sha>[0-9a-f]{40,})\] ", re.MULTILINE)
"""The first line of ``git commit``'s summary, ``[main 1f0c…] subject`` (with
``core.abbrev=40`` the whole sha; ``(root-commit)`` may come before it)."""
LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
"""How git creates a lock file: it exists already, or it is this process's."""


# ------------------------------------------------------------------ running git


class GitError(Exception):
    """A git command failed or could not run; the message says which and git's own words."""


def _git_env(literal: bool, index: Path | None) -> dict[str, str]:
    """The environment for git: no repository redirection, no prompts, literal pathspecs.

    Literal pathspecs, because a file named ``*.md`` or ``:(glob)x`` must
    mean exactly that file and nothing else (``check-ignore`` takes paths,
    not pathspecs, and refuses the setting). ``index``: a scratch index of
    the mirror's own (:meth:`WorkTree._scratch_index`) instead of the
    repository's.
    """
    env = {key: value for key, value in os.environ.items() if key not in REPOSITORY_ENV}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_LITERAL_PATHSPECS"] = "1" if literal else "0"
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    return env


_SCRATCH: set[str] = set()
"""Scratch index directories in use, removed by a stop signal that ends the process before
their ``with`` does (:func:`~werkbaum_core.engine.lifetime.on_stop`)."""

_RUNNING: set[int] = set()
"""Process (group) ids of the git commands running now, interrupted by a stop signal."""

_HELD: dict[str, tuple[int, int]] = {}
"""The ``index.lock`` files this process holds (path: device and inode of the file it
created), removed by a stop signal; a lock that is not that file any more is not ours."""


@contextlib.contextmanager
def _scratch_dir() -> Iterator[Path]:
    """A temporary directory of the mirror's own, removed when the block ends or, if a stop
    signal ends the process first, by the stop's clean-up: it stays registered until it
    is gone (once git is interrupted, the process may die while the block is ending)."""
    scratch = tempfile.mkdtemp(prefix="werkbaum-index-")
    _SCRATCH.add(scratch)
    try:
        yield Path(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        _SCRATCH.discard(scratch)


def _remove_scratch() -> None:
    for scratch in list(_SCRATCH):
        shutil.rmtree(scratch, ignore_errors=True)


def _stop_everything() -> None:
    """On a stop signal: interrupt git, then remove the scratch indexes and the held locks.

    git first, with SIGINT to its group as a Ctrl-C would (git removes its
    own lock files, a hook runner puts back what it set aside): a ``git
    commit`` left waiting for a hook would commit once the hook ends — after
    this process died, so no one would set the index entry (a staged revert
    of the commit), and of a scratch index removed meanwhile (an empty tree:
    a commit deleting every file). git ends at once on SIGINT, whatever its
    hooks do; one that does not within :data:`STOP_GRACE` gets SIGKILL. Bounded,
    as a clean-up in the signal handler must be.
    """
    running = list(_RUNNING)
    for pid in running:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGINT)
    deadline = time.monotonic() + STOP_GRACE
    for pid in running:
        while not _ended(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        if not _ended(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
    _remove_scratch()
    for lock, identity in list(_HELD.items()):
        _remove_if_ours(lock, identity)


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def release_held() -> None:
    """Remove every ``index.lock`` this process holds and its scratch indexes: for a
    single-threaded command (``werkbaum mirror``) unwinding after Ctrl-C or a stop signal,
    where the signal may have landed between a lock's creation and the ``with`` that
    releases it, or inside the release."""
    _remove_scratch()
    for lock, identity in list(_HELD.items()):
        _remove_if_ours(lock, identity)


def _ended(pid: int) -> bool:
    """Whether the child ``pid`` has ended (it is not reaped here: its thread does that)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped already
        return True


on_stop(_stop_everything)


_WITH_HOOKS = frozenset({"commit"})
"""The git commands the mirror runs that run hooks and can change the branch: only these get
SIGINT when the process that runs git dies (:func:`_child_setup`). A ``preexec_fn`` makes
Python fork the whole server
instead of spawning git: about 1.5 ms more per command, 22 of which run while the mirror holds
the index (its median hold went from 74 to 119 ms); the plumbing commands end on their own
and change nothing a person sees."""


def run_git(
    cwd: Path,
    *args: str,
    stdin: str | bytes | None = None,
    check: bool = True,
    literal: bool = True,
    index: Path | None = None,
    settings: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """``git -c core.quotepath=false <args>`` in ``cwd``; ``GitError`` unless it could run.

    With ``check`` a non-zero exit is a ``GitError`` as well. stdin is the
    given text or bytes (a file's, as they are) or closed (never inherited:
    it is the stdio server's channel). The output is decoded as UTF-8.
    ``settings``: more ``-c name=value`` for this command.
    """
    if not cwd.is_dir():
        raise GitError(f"the directory {cwd} does not exist (any more)")
    configured = [arg for setting in settings for arg in ("-c", setting)]
    command = ["git", "-c", "core.quotepath=false", *configured, *args]
    given = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=_git_env(literal, index),
            stdin=subprocess.DEVNULL if given is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            shell=False,
            process_group=0,  # its own group: the deadline stops the hooks with it
            preexec_fn=_child_setup(args[0]),
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed (no `git` on the PATH)") from exc
    except OSError as exc:
        raise GitError(f"git {args[0]} could not run: {exc.strerror or exc}") from exc
    with process, _running(process.pid):
        try:
            out, err = process.communicate(given, timeout=GIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            _stop_group(process)
            # Whatever git's exit status after the stop (a hook runner that put its work
            # back on SIGINT makes git exit 1), the deadline ended it, not git.
            raise GitError(
                f"git {args[0]} did not finish within {GIT_TIMEOUT:.0f} s "
                "(a hook still running?); git and its hooks were stopped"
            ) from None
        except BaseException:  # Ctrl-C of `werkbaum mirror`: its own group no longer gets it
            _stop_group(process)
            raise
    done = subprocess.CompletedProcess(command, process.returncode, _decoded(out), _decoded(err))
    if check and done.returncode != 0:
        raise GitError(f"git {args[0]} failed (exit {done.returncode}): {_said(done)}")
    return done


_GIT_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What stops git: the deadline's first two signals, and the parent-death signal (SIGINT)."""


def _child_setup(command: str) -> Callable[[], None] | None:
    """What git's child does before ``exec``, if anything (a ``preexec_fn`` costs a fork of
    the whole process, so only where it is needed).

    Signals this process ignores stay ignored across ``exec``: a server started in the
    background of a script (``werkbaum-mcp &`` without job control ignores SIGINT) handed
    that to git and its hooks, and neither the deadline's SIGINT nor the parent-death
    SIGINT reached them — the pre-commit framework was then ended by SIGTERM without
    putting back the work it set aside. So git gets them at their defaults first.

    A ``git commit`` also gets SIGINT when the process that runs it dies. A stop signal is
    answered by :func:`_stop_everything`, but a process killed outright (SIGKILL: the
    Python MCP SDK's client sends it 2 s after SIGTERM, while the server still waits up to
    5 s for the write in flight) runs no clean-up: its ``git commit``, in a process group
    of its own, waited for its hook and then committed after the server had died, of an
    index no one would update (the ``index.lock`` the server held stayed too; round 26).
    SIGINT, as a Ctrl-C: git removes its own lock files and ends without committing; a
    hook left running finishes on its own.
    """
    defaults = any(signal.getsignal(sig) == signal.SIG_IGN for sig in _GIT_STOP_SIGNALS)
    with_parent = signalled_on_parent_death(signal.SIGINT) if command in _WITH_HOOKS else None
    if not (defaults or with_parent):
        return None

    def setup() -> None:
        if defaults:
            for sig in _GIT_STOP_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
        if with_parent is not None:
            with_parent()

    return setup


@contextlib.contextmanager
def _running(pid: int) -> Iterator[None]:
    _RUNNING.add(pid)
    try:
        yield
    finally:
        _RUNNING.discard(pid)


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop git's process group (SIGINT, then SIGTERM, then SIGKILL) and reap git.

    The group, not git alone: killing git would leave its hook running,
    reparented to init, one for every write. SIGINT first, as a person's Ctrl-C:
    git and hook runners clean up on it. A process that left the group
    (``setsid``) and still holds the pipes is not waited for.
    """
    for sig, grace in (
        (signal.SIGINT, INTERRUPT_GRACE),
        (signal.SIGTERM, STOP_GRACE),
        (signal.SIGKILL, STOP_GRACE),
    ):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=grace)
            return
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()
    process.wait()


def _decoded(output: bytes) -> str:
    return output.decode("utf-8", errors="replace")


def _said(done: subprocess.CompletedProcess[str]) -> str:
    """git's (or a hook's) own explanation: the end of stderr, else of stdout.

    A lock file in the way is said in one line: git's own text for it is a
    paragraph of advice that would fill the agent's result.
    """
    locked = _LOCKED.search(done.stderr)
    if locked:
        return _locked(locked["path"])
    text = (done.stderr.strip() or done.stdout.strip() or "no output")[-ERROR_TAIL:]
    return " ".join(text.split())


def _locked(path: str) -> str:
    return (
        f"{path} exists: another git command is running, or one that crashed left it "
        "(remove it if no git runs)"
    )


@attrs.frozen
class Committed:
    """A commit the mirror made (the sha git printed for it, not whatever HEAD names a moment
    later); ``warning`` when git failed after making it, or HEAD had moved under it."""

    sha: str
    warning: str | None = None


@attrs.frozen
class Present:
    """No commit: HEAD holds the file as the entry already. ``by``: the commit that put it
    there when that is not a mirror commit (someone committed this text), else None;
    ``warning`` when the index could not be given the entry."""

    by: str | None
    warning: str | None = None


class IndexLocked(GitError):
    """The repository's ``index.lock`` exists: a git command holds the index (or a crashed one
    left the file). Raised before anything is touched."""

    def __init__(self, message: str, lock: Path) -> None:
        super().__init__(message)
        self.lock = lock


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _remove_if_ours(lock: str, identity: tuple[int, int]) -> None:
    """Remove ``lock`` if it is still the file this process created (not one that git made
    after the mirror renamed its own over the index)."""
    with contextlib.suppress(OSError):
        if _identity(os.lstat(lock)) == identity:
            os.unlink(lock)
    _HELD.pop(lock, None)


@attrs.define
class HeldIndex:
    """git's own lock on the repository's index, held by the mirror: ``index.lock``, created
    as git creates it (``O_CREAT|O_EXCL``), so that every other git command that would
    write the index — ``git add``, ``git commit``, ``git stash`` — fails while it exists.

    Released exactly once: :meth:`replace` writes the new index into the lock file and
    renames it over the index (git's lock-file protocol; the lock is gone with the
    rename), :meth:`release` removes the lock file and leaves the index as it was.
    Leaving the ``with`` block releases a lock that is still held, on any exception.
    """

    index: Path
    """The repository's index (``git rev-parse --git-path index``)."""
    lock: Path
    _fd: int | None
    _identity: tuple[int, int]

    @classmethod
    def take(cls, index: Path, lock: Path) -> HeldIndex:
        """Create ``lock``; ``IndexLocked`` if it exists (nothing else is done then).

        The stop signals are blocked from the creation to the registration in ``_HELD``,
        which the clean-up after a stop removes: a Ctrl-C or SIGTERM of ``werkbaum mirror``
        landing in between left a lock no one knew of, for good (round 26 soak: every later
        run refused with "the index is locked", every ``git add`` failed).
        """
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            try:
                fd = os.open(lock, LOCK_FLAGS, 0o666)
            except FileExistsError:
                raise IndexLocked(f"the index is locked: {_locked(str(lock))}", lock) from None
            except OSError as exc:
                raise GitError(f"cannot lock the index ({lock}): {exc.strerror or exc}") from None
            identity = _identity(os.fstat(fd))
            _HELD[str(lock)] = identity
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return cls(index=index, lock=lock, fd=fd, identity=identity)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def replace(self, data: bytes) -> None:
        """Make ``data`` the index, as git commits a lock file: written into the lock file,
        with the old index's mode, synced, then renamed over the index. The lock is
        released, whatever happens; ``GitError`` (the index as it was) if not all of it
        worked, or if the lock file is not the mirror's any more (a hook removed it)."""
        fd = self._fd
        assert fd is not None, "the index lock is not held"
        try:
            os.ftruncate(fd, 0)
            view = memoryview(data)
            while view:
                view = view[os.pwrite(fd, view, len(data) - len(view)) :]
            with contextlib.suppress(FileNotFoundError):
                os.fchmod(fd, stat.S_IMODE(os.stat(self.index).st_mode))
            os.fsync(fd)
            if not self._ours():
                raise GitError(f"{self.lock} was replaced while the mirror held it (by a hook?)")
            os.rename(self.lock, self.index)
        except OSError as exc:
            self.release()
            raise GitError(f"writing the index {self.index} failed: {exc.strerror or exc}") from exc
        except BaseException:
            self.release()
            raise
        self._fd = None
        _HELD.pop(str(self.lock), None)
        os.close(fd)

    def release(self) -> None:
        """Remove the lock file, if still held: the index stays as it was."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            _remove_if_ours(str(self.lock), self._identity)

    def _ours(self) -> bool:
        try:
            return _identity(os.lstat(self.lock)) == self._identity
        except OSError:
            return False

    def __enter__(self) -> HeldIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@attrs.frozen
class FileState:
    """The mirror file as git sees it: its entry (``<mode>,<sha>``) in HEAD, the index and the
    work tree; None where it is absent. The work tree's entry is of the bytes the mirror
    read, hashed as ``git add`` would (same filters, same mode rule)."""

    head: str | None
    index: str | None
    tree: str | None

    @property
    def clean(self) -> bool:
        """Committed exactly as it is (what ``git status`` shows as nothing)."""
        return self.head == self.index == self.tree


@attrs.frozen
class WorkTree:
    """The git work tree a mirror file lies in; commands run at its top, never in the file's
    directory (which may be a symlink by now)."""

    top: Path
    directory: Path

    @classmethod
    def containing(cls, file: Path) -> WorkTree:
        """The work tree of ``file`` (which may not exist yet), or ``InvalidArgument``.

        Checked at start-up so that a mirror that can never commit is a
        start-up error, not a surprise after the first agent write: the
        directory must be inside a work tree (not inside ``.git``), and the
        file must not be ignored (a commit of it would be refused).
        """
        directory = file.parent
        try:
            done = run_git(
                directory, "rev-parse", "--is-inside-work-tree", "--show-toplevel", check=False
            )
            lines = done.stdout.splitlines()
            if done.returncode != 0 or len(lines) < 2 or lines[0] != "true":
                raise InvalidArgument(
                    f"mirror file {file}: {directory} is not inside a git work tree "
                    f"({_said(done)})",
                    file=str(file),
                )
            tree = cls(top=Path(lines[1]), directory=directory)
            if tree.ignored(file.name):
                raise InvalidArgument(
                    f"mirror file {file} is ignored by git (.gitignore), so it cannot be committed",
                    file=str(file),
                )
        except GitError as exc:
            raise InvalidArgument(f"mirror file {file}: {exc}", file=str(file)) from exc
        return tree

    def git(
        self,
        *args: str,
        stdin: str | bytes | None = None,
        check: bool = True,
        literal: bool = True,
        index: Path | None = None,
        settings: Sequence[str] = (),
    ) -> subprocess.CompletedProcess[str]:
        """git at the top of the work tree (paths are given from there: :meth:`path_of`)."""
        return run_git(
            self.top,
            *args,
            stdin=stdin,
            check=check,
            literal=literal,
            index=index,
            settings=settings,
        )

    def path_of(self, name: str) -> str:
        """The file's path from the top of the work tree, as git's paths are given here."""
        return str((self.directory / name).relative_to(self.top))

    def verify(self) -> None:
        """The directory is still in the work tree found at start-up.

        Otherwise (the repository was deleted or moved) git would find the
        next repository up the tree and commit the plan into a stranger's.
        """
        done = run_git(self.directory, "rev-parse", "--show-toplevel", check=False)
        found = done.stdout.strip()
        if done.returncode != 0 or Path(found) != self.top:
            now = _said(done) if done.returncode != 0 else f"it is in {found} now"
            raise GitError(
                f"{self.directory} is not in the git work tree {self.top} any more ({now})"
            )

    def ignored(self, name: str) -> bool:
        done = self.git("check-ignore", "-q", "--", self.path_of(name), check=False, literal=False)
        if done.returncode not in (0, 1):
            raise GitError(f"git check-ignore failed (exit {done.returncode}): {_said(done)}")
        return done.returncode == 0

    def has_head(self) -> bool:
        return self.head() is not None

    def head(self) -> str | None:
        """The sha HEAD names; None before the first commit."""
        found = self.git("rev-parse", "-q", "--verify", "HEAD", check=False)
        return found.stdout.strip() if found.returncode == 0 else None

    def landed(self, before: str | None, name: str, entry: str, subject: str) -> str | None:
        """The commit of ``name`` as ``entry`` on top of ``before`` with the mirror's
        ``subject`` that HEAD names now, if a failed ``git commit`` made it after all (a
        post-commit hook that was stopped at the deadline fails the command after the
        branch moved); else None. Someone else's commit of the same text is not it."""
        after = self.head()
        if after is None or after == before:
            return None
        found = self.git("log", "-1", "--format=%P%n%s", after).stdout.split("\n", 1)
        parents, made_subject = found[0].split(), found[1].rstrip("\n") if len(found) > 1 else ""
        if parents != ([before] if before else []) or made_subject != subject:
            return None
        return after if self._tree_entry(after, name) == entry else None

    def state(self, name: str, file: tuple[bytes, int] | None) -> FileState:
        """The file's entries; ``file`` is its bytes and mode as the mirror read them.

        Stands in for ``git status``, which would read the file by its path.
        """
        index = self.index_entry(name)
        tree = None if file is None else self.entry_of(name, *file, index)
        return FileState(head=self.head_entry(name), index=index, tree=tree)

    def head_entry(self, name: str) -> str | None:
        """The file's entry in HEAD's tree as ``<mode>,<sha>`` (None: not there, or no HEAD)."""
        return self._tree_entry("HEAD", name) if self.has_head() else None

    def _tree_entry(self, commit: str, name: str) -> str | None:
        out = self.git("ls-tree", "-z", "--full-tree", commit, "--", self.path_of(name)).stdout
        fields = out.split("\t", 1)[0].split()
        return f"{fields[0]},{fields[2]}" if len(fields) == 3 else None

    def index_entry(self, name: str) -> str | None:
        """The file's index entry as ``<mode>,<sha>`` (None: not in the index).

        ``GitError`` if the file is in conflict: no one entry stands for its
        unmerged stages (base, ours, theirs), and writing one back would
        resolve the conflict to it — a later ``git commit`` would then drop
        both sides without a word.
        """
        out = self.git("ls-files", "-z", "--stage", "--", self.path_of(name)).stdout
        entries = [line.split("\t", 1)[0].split() for line in out.split("\0") if line]
        if any(len(fields) != 3 or fields[2] != "0" for fields in entries):
            raise GitError(_in_conflict(self.path_of(name)))
        return f"{entries[0][0]},{entries[0][1]}" if entries else None

    def entry_of(self, name: str, data: bytes, mode: int, index: str | None) -> str:
        """The entry ``git add`` would make of ``data`` with file mode ``mode``; the blob is
        written to the object store.

        ``--path`` applies the file's attributes (clean filters, line endings)
        to the bytes given, without reading the file. The mode rule is git's:
        executable if the owner may execute it — unless ``core.fileMode`` is
        off, then the index entry's mode stays (100644 for a new entry).
        """
        path = self.path_of(name)
        sha = self.git("hash-object", "-w", "--stdin", f"--path={path}", stdin=data).stdout
        return f"{self._mode(mode, index)},{sha.strip()}"

    def _mode(self, mode: int, index: str | None) -> str:
        done = self.git("config", "--type=bool", "core.fileMode", check=False)
        if done.stdout.strip() == "false":
            kept = index.split(",", 1)[0] if index is not None else ""
            return kept if kept.startswith("100") else "100644"
        return "100755" if mode & stat.S_IXUSR else "100644"

    def set_index_entry(self, name: str, entry: str | None, index: Path) -> None:
        """Put an entry of :meth:`index_entry` into the index file ``index`` (None: take the
        file out of it): a scratch index or a copy of the repository's, never the
        repository's own — while the mirror holds its lock, git could not write it
        (:meth:`write_index_entry` does, through the lock). Index only: git does not look
        at the file."""
        path = self.path_of(name)
        if entry is None:
            self.git("update-index", "--force-remove", "--", path, index=index)
        else:
            self.git("update-index", "--add", "--cacheinfo", f"{entry},{path}", index=index)

    def hold_index(self) -> HeldIndex:
        """Take the repository's ``index.lock`` (:class:`HeldIndex`); ``IndexLocked`` if
        someone holds it. Release it with the ``with`` block or :meth:`write_index_entry`."""
        asked = ("--git-path", "index", "--git-path", "index.lock")
        found = self.git("rev-parse", "--path-format=absolute", *asked).stdout.splitlines()
        return HeldIndex.take(Path(found[0]), Path(found[1]))

    def write_index_entry(self, held: HeldIndex, name: str, entry: str) -> None:
        """Give the file ``entry`` in the repository's index, as ``git add`` would, and
        release the lock.

        The new index is the held one with that entry, built in a copy (its other
        entries, their stat data and extensions as they are) and written through the
        lock (:meth:`HeldIndex.replace`). Written only if the entry differs: what needs
        no change is not touched.
        """
        if self.index_entry(name) == entry:
            held.release()
            return
        with _scratch_dir() as scratch:
            copy = scratch / "index"
            if held.index.is_file():
                shutil.copyfile(held.index, copy)
            self.set_index_entry(name, entry, copy)
            held.replace(copy.read_bytes())

    @contextlib.contextmanager
    def _scratch_index(self, tree: str | None, *, stat_of: Path | None = None) -> Iterator[Path]:
        """An index file of the mirror's own holding the tree of the commit ``tree`` (None:
        empty); ``read-tree`` without ``-u`` leaves the work tree alone.

        ``stat_of``: the repository's index, to start from a copy of it, so that a
        commit's refresh hashes only the files that changed, not every file.
        """
        with _scratch_dir() as scratch:
            index = scratch / "index"
            if stat_of is not None and stat_of.is_file():
                shutil.copyfile(stat_of, index)
            if tree is not None:
                merged = ["-m", "-i"] if stat_of is not None else []
                self.git("read-tree", *merged, tree, index=index)
            else:
                self.git("read-tree", "--empty", index=index)
            yield index

    def _tree_with(self, name: str, entry: str | None, base: str | None) -> str:
        """The sha of the tree of the commit ``base`` (None: the empty tree) with the file as
        ``entry``."""
        with self._scratch_index(base) as index:
            self.set_index_entry(name, entry, index)
            return self.git("write-tree", index=index).stdout.strip()

    def _commit_tree(self, tree: str, message: str, *parents: str) -> str:
        """A commit object as ``git stash`` makes them: no hooks, never signed."""
        given = [arg for parent in parents for arg in ("-p", parent)]
        done = self.git("commit-tree", "--no-gpg-sign", *given, "-m", message, tree)
        return done.stdout.strip()

    def stash(self, name: str, state: FileState, message: str) -> str:
        """Keep the file's uncommitted state in a new stash, as ``git stash push
        --include-untracked -- <file>`` lays it out; the stash commit's sha.

        Made of objects alone, so that git does not touch the file: the stash
        commit's tree is HEAD's with the work tree's file (``^1`` HEAD, ``^2``
        the index's file, ``^3`` a file that was not in the index, alone).
        The index and the file stay as they are; the caller overwrites both.
        """
        head = self.git("rev-parse", "HEAD").stdout.strip()
        branch = self.git("symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip()
        on = branch or "(no branch)"
        title = self.git("log", "-1", "--format=%h %s", head).stdout.strip()
        staged = self._commit_tree(
            self._tree_with(name, state.index, head), f"index on {on}: {title}", head
        )
        parents = [head, staged]
        if state.index is None and state.tree is not None:  # untracked: the third parent
            alone = self._tree_with(name, state.tree, None)
            parents.append(self._commit_tree(alone, f"untracked files on {on}: {title}"))
        worked = self._tree_with(name, state.tree if state.index is not None else None, head)
        subject = f"On {on}: {message}"
        sha = self._commit_tree(worked, subject, *parents)
        self.git("stash", "store", "-q", "-m", subject, sha)
        return sha

    def drop_stash(self, sha: str) -> None:
        """Drop the newest stash if it is ``sha`` (a stash pushed since stays untouched)."""
        top = self.git("rev-parse", "-q", "--verify", "refs/stash", check=False).stdout.strip()
        if top == sha:
            self.git("stash", "drop", "-q")

    def previous_version(self, name: str) -> int | None:
        """The version of the file's most recent mirror commit: the body's lower bound.

        Commits of the file that are not mirror commits (a user's own) are
        skipped; the search stops after ``SEARCH_DEPTH`` commits.
        """
        if not self.has_head():
            return None  # no commit yet in this repository
        path = self.path_of(name)
        out = self.git("log", f"-n{SEARCH_DEPTH}", "-z", "--format=%B", "--", path).stdout
        for message in out.split("\0"):
            found = self._version_of(message)
            if found is not None:
                return found
        return None

    def _version_of(self, message: str) -> int | None:
        """The version a mirror commit's message archives (None: not a mirror commit): the
        trailer ``Werkbaum-Version``, else an old ``pull-doc`` subject's ``(Version n``.

        Only a message with the mirror's subject (``Werkbaum-Stand vom …``, a prefix a
        ``prepare-commit-msg`` hook put before it allowed) is a mirror commit: a person's
        commit of the plan whose message carries a ``Werkbaum-Version`` trailer — copied
        from a mirror commit or another plan's — counted as one, and a higher number there
        made every later run "skip" as if git archived a newer version already (round 26:
        a copied ``Werkbaum-Version: 40`` held the file at version 1 while the document
        went on to 4, 5, …, with exit 0 and "Skipped" each time).
        """
        subject = message.strip().split("\n", 1)[0]
        if SUBJECT_PREFIX not in subject:
            return None
        if VERSION_TRAILER in message:
            versions = [v for k, v in self.trailers(message) if k == VERSION_TRAILER]
            if versions and _NUMBER.fullmatch(versions[-1]):
                return int(versions[-1])
        match = _OLD_SUBJECT_VERSION.search(subject)
        if subject.startswith(SUBJECT_PREFIX) and match:
            return int(match[1])
        return None

    def trailers(self, message: str) -> list[tuple[str, str]]:
        """``(key, value)`` pairs as ``git interpret-trailers --parse`` reads the message."""
        out = self.git("interpret-trailers", "--parse", stdin=message).stdout
        pairs = (_TRAILER_LINE.match(line) for line in out.splitlines())
        return [(m["key"].strip(), m["value"].strip()) for m in pairs if m]

    def check_committable(self, name: str) -> None:
        """``GitError`` if git's state forbids a mirror commit of the file now; nothing else.

        The mirror asks before it touches the file, a stash or the index, so
        that a refusal leaves everything as it was — and says so.
        """
        refusal = self._refusal(name)
        if refusal is not None:
            raise GitError(f"{refusal}; the file and the index were not touched")

    def _refusal(self, name: str) -> str | None:
        """Why no commit of the file may happen now (None: it may).

        git itself refuses ``git commit -- <file>`` during a merge,
        cherry-pick or revert. The mirror, an unattended writer, refuses
        more: while a rebase, ``git am`` or bisect is under way (a commit
        would land on the detached HEAD of someone's operation, and
        ``rebase --continue`` would drop a picked commit), while any path is
        unmerged (a conflicted ``stash pop`` leaves no other trace), and on a
        detached HEAD (the commit would drop out of sight at the next
        checkout). A locked index is refused by taking its lock
        (:meth:`hold_index`), which the mirror holds while it asks this.
        """
        path = self.path_of(name)
        unmerged = self.git("ls-files", "-z", "--unmerged").stdout.split("\0")
        paths = list(dict.fromkeys(line.split("\t", 1)[1] for line in unmerged if "\t" in line))
        asked = [arg for marker, _ in _IN_PROGRESS for arg in ("--git-path", marker)]
        markers = self.git("rev-parse", "--path-format=absolute", *asked).stdout.splitlines()
        for (_, doing), marker in zip(_IN_PROGRESS, markers, strict=True):
            if os.path.lexists(marker):
                return f"cannot commit {path} during a {doing}"
        if path in paths:
            return _in_conflict(path)
        if paths:
            more = " …" if len(paths) > 1 else ""
            return f"cannot commit {path} while other files are in conflict ({paths[0]}{more})"
        attached = self.git("symbolic-ref", "-q", "HEAD", check=False)
        if attached.returncode not in (0, 1):
            failed = attached.returncode
            raise GitError(f"git symbolic-ref failed (exit {failed}): {_said(attached)}")
        if attached.returncode == 1:
            return (
                f"cannot commit {path} on a detached HEAD (no branch checked out): the "
                "commit would drop out of sight at the next checkout; switch to a branch"
            )
        return None

    def commit(self, name: str, entry: str, message: str, held: HeldIndex) -> Committed | Present:
        """Commit the file as ``entry`` and nothing else (other staged changes stay staged),
        then give it that entry in the index, as ``git add`` would, which releases ``held``.

        The caller holds the index (``held``) from before it looked at the file's entries:
        no one else's ``git commit`` or ``git add`` can land in between. HEAD is read
        once; the commit is ``git commit`` of a scratch index holding that commit's tree
        with the entry — what ``git commit -- <file>`` commits — so the hooks run (and
        see that index), but git never reads the file and never needs the held lock. The
        sha reported is the one git printed for its commit. Its parent is checked: if
        HEAD moved between the read and the commit (plumbing, a script in another work
        tree), the commit is on top of a commit whose changes its tree lacks, and its
        warning says so.

        :class:`Present` if HEAD holds the entry already, before the commit or because
        someone committed it meanwhile (git refuses an empty commit): nothing to record,
        and the file keeps the text HEAD holds. A commit that git made before it failed
        (a post-commit hook stopped at the deadline) is a commit, with the failure as
        its warning: putting the file back would stage a revert of it. Raises only when
        no commit holds the entry; the index is then as it was (``held`` is still held).
        """
        before = self.head()
        if before is not None and self._tree_entry(before, name) == entry:
            return self._present(held, before, name, entry)
        with self._scratch_index(before, stat_of=held.index) as index:
            self.set_index_entry(name, entry, index)
            try:
                done = self.git(
                    "commit",
                    "--cleanup=whitespace",
                    "-m",
                    message,
                    index=index,
                    settings=["core.abbrev=40"],
                )
            except GitError as failure:
                return self._after_failure(held, before, name, entry, message, failure)
        made = self._printed(done.stdout) or self.landed(before, name, entry, _subject(message))
        return self._committed(held, made, before, name, entry)

    def _printed(self, summary: str) -> str | None:
        """The commit ``git commit`` says it made (``[main <sha>] …``), None if it said
        none: then the caller takes HEAD, if that is the mirror's commit."""
        printed = _SUMMARY.search(summary)
        if printed is None:
            return None
        found = self.git("rev-parse", "-q", "--verify", f"{printed['sha']}^{{commit}}")
        return found.stdout.strip()

    def _committed(
        self,
        held: HeldIndex,
        made: str | None,
        before: str | None,
        name: str,
        entry: str,
        warning: str | None = None,
    ) -> Committed:
        """The commit ``made``, with the file's index entry set; what went wrong after git
        made it is its warning (never a failure: the commit stands).

        The index gets the file as the commit holds it. A commit hook that rewrites the file
        and stages it (a formatter with ``git add -u``) made the commit hold the hook's text,
        not the document's: that is said, and the index gets the commit's entry. Before, the
        result named the commit as the document's version without a word, the index got the
        document's text (``git status``: ``MM``, a staged revert of the hook's change), and
        the next run stashed the hook's output as a person's hand edit (round 26).
        """
        warnings = [warning] if warning else []
        if made is None:
            made = self.head() or ""
            warnings.append(f"git did not say which commit it made; HEAD is {made[:12]}")
        else:
            parents = self.git("rev-list", "--parents", "-n", "1", made).stdout.split()[1:]
            if parents != ([before] if before else []):
                warnings.append(_moved(before, parents, made))
        committed = self._tree_entry(made, name) if made else entry
        if committed != entry:
            warnings.append(_rewritten(self.path_of(name), made))
            if committed is None:
                held.release()
                return Committed(made, "; ".join(warnings))
            entry = committed
        try:
            self.write_index_entry(held, name, entry)
        except GitError as exc:
            warnings.append(f"committed, but then {_index_not_written(self.path_of(name), exc)}")
        return Committed(made, "; ".join(warnings) or None)

    def _after_failure(
        self,
        held: HeldIndex,
        before: str | None,
        name: str,
        entry: str,
        message: str,
        failure: GitError,
    ) -> Committed | Present:
        """After a failed ``git commit``: the commit if git made it all the same, or
        :class:`Present` if HEAD holds the entry now (someone committed it while the
        commit ran: nothing to commit); otherwise the failure is raised."""
        made = self.landed(before, name, entry, _subject(message))
        if made is not None:
            warning = f"committed, but then {failure} (a post-commit hook?)"
            return self._committed(held, made, before, name, entry, warning)
        after = self.head()
        if after is not None and after != before and self._tree_entry(after, name) == entry:
            return self._present(held, after, name, entry)
        raise failure

    def _present(self, held: HeldIndex, head: str, name: str, entry: str) -> Present:
        """HEAD (``head``) holds the entry: the index gets it too (the file holds it), and
        who committed it is told when it was not the mirror. Never raises for the index:
        the caller would put back a text older than HEAD's."""
        path = self.path_of(name)
        out = self.git("log", "-1", "-z", "--format=%H%n%B", head, "--", path)
        sha, _, message = out.stdout.rstrip("\0").partition("\n")
        by = sha if sha and self._version_of(message) is None else None
        try:
            self.write_index_entry(held, name, entry)
        except GitError as exc:
            return Present(by, _index_not_written(path, exc))
        return Present(by)


def _index_not_written(path: str, failure: GitError) -> str:
    return (
        f"{failure}; the index still has the old {path} (`git status` shows a staged change "
        f"back to it: `git restore --staged {path}` drops it)"
    )


def _rewritten(path: str, made: str) -> str:
    """The warning for a commit that does not hold the document's text (a hook changed it)."""
    return (
        f"{made[:12]} does not hold the document's text of {path}: a commit hook changed the "
        "file and staged it (a formatter, end-of-file-fixer …), so git has the hook's text, and "
        "every later mirror commit of this text fails or is rewritten again; exclude the plan "
        "from that hook"
    )


def _subject(message: str) -> str:
    """A commit message's subject as git keeps it (``--cleanup=whitespace``)."""
    return message.strip().split("\n", 1)[0].strip()


def _moved(before: str | None, parents: list[str], made: str) -> str:
    """The warning for a commit whose parent is not the HEAD its tree was built from."""
    now = parents[0][:12] if parents else "nothing"
    return (
        f"HEAD moved from {(before or 'no commit')[:12]} to {now} while the mirror built its "
        f"commit (not through the index: another work tree, a script), so {made[:12]} has "
        f"the tree of {(before or 'no commit')[:12]} with the file: it may undo what {now} "
        f"changed — check `git show --stat {made[:12]}`"
    )


def _in_conflict(path: str) -> str:
    return (
        f"{path} is in conflict (unmerged index entries): the mirror writes neither it nor "
        "its index entry until the conflict is resolved"
    )


_IN_PROGRESS = (
    ("MERGE_HEAD", "merge"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
    ("sequencer", "cherry-pick or revert sequence"),
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase or `git am`"),
    ("BISECT_START", "bisect"),
)
"""Operations under way (a file or directory in the git directory) during which the mirror
does not commit: git refuses a commit of one file in the first ones, the others would put
the commit where the operation moves on without it."""


_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


def work_tree_lock(key: Path) -> threading.Lock:
    """One lock per work tree: two mirrors in one repository must not race for its index."""
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(str(key), threading.Lock())
