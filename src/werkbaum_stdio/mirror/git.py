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

git and its hooks run in a process group of their own, and the whole group
is stopped at the deadline: a hung hook must neither hold the agent's answer
nor outlive the mirror run. A stop signal that ends the server interrupts the
git commands still running, then removes the scratch indexes
(:func:`~werkbaum_core.engine.lifetime.on_stop`): a commit left running would
land after the process died. Before the mirror touches the file, the stash or
the index it asks git whether a commit may happen now at all
(:meth:`WorkTree.check_committable`): never during a merge, rebase, bisect or
conflict, never on a detached HEAD, never over unmerged index entries.
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
from collections.abc import Iterator
from pathlib import Path

import attrs

from werkbaum_core.engine.lifetime import on_stop
from werkbaum_core.errors import InvalidArgument
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
    """On a stop signal: interrupt git, then remove the scratch indexes.

    git first, with SIGINT to its group as a Ctrl-C would (git removes its
    own lock files, a hook runner puts back what it set aside): a ``git
    commit`` left waiting for a hook would commit once the hook ends — after
    this process died, of a scratch index removed meanwhile (an empty tree: a
    commit deleting every file). git ends at once on SIGINT, whatever its
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


def _ended(pid: int) -> bool:
    """Whether the child ``pid`` has ended (it is not reaped here: its thread does that)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped already
        return True


on_stop(_stop_everything)


def run_git(
    cwd: Path,
    *args: str,
    stdin: str | bytes | None = None,
    check: bool = True,
    literal: bool = True,
    index: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """``git -c core.quotepath=false <args>`` in ``cwd``; ``GitError`` unless it could run.

    With ``check`` a non-zero exit is a ``GitError`` as well. stdin is the
    given text or bytes (a file's, as they are) or closed (never inherited:
    it is the stdio server's channel). The output is decoded as UTF-8.
    """
    if not cwd.is_dir():
        raise GitError(f"the directory {cwd} does not exist (any more)")
    command = ["git", "-c", "core.quotepath=false", *args]
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
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed (no `git` on the PATH)") from exc
    except OSError as exc:
        raise GitError(f"git {args[0]} could not run: {exc.strerror or exc}") from exc
    with process, _running(process.pid):
        try:
            out, err = process.communicate(given, timeout=GIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            out, err = _stop_group(process)
            if process.returncode < 0:  # stopped by the deadline, not finished
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


@contextlib.contextmanager
def _running(pid: int) -> Iterator[None]:
    _RUNNING.add(pid)
    try:
        yield
    finally:
        _RUNNING.discard(pid)


def _stop_group(process: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Stop git's process group (SIGINT, then SIGTERM, then SIGKILL); what it printed.

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
            return process.communicate(timeout=grace)
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()
    process.wait()
    return b"", b""


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
    """A commit the mirror made; ``warning`` when git failed after making it."""

    sha: str
    warning: str | None = None


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
    ) -> subprocess.CompletedProcess[str]:
        """git at the top of the work tree (paths are given from there: :meth:`path_of`)."""
        return run_git(self.top, *args, stdin=stdin, check=check, literal=literal, index=index)

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

    def landed(self, before: str | None, name: str, entry: str) -> str | None:
        """The commit of ``name`` as ``entry`` on top of ``before`` that HEAD names now, if
        a failed ``git commit`` made it after all (a post-commit hook that was stopped at
        the deadline fails the command after the branch moved); else None."""
        after = self.head()
        if after is None or after == before:
            return None
        parents = self.git("rev-list", "--parents", "-n", "1", after).stdout.split()[1:]
        if parents != ([before] if before else []):
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

    def set_index_entry(self, name: str, entry: str | None, index: Path | None = None) -> None:
        """Put an entry of :meth:`index_entry` into the index (None: take the file out of it).

        Index only: git does not look at the file. ``index``: a scratch index.
        The repository's index is written only if its entry differs (and never
        over a conflict, :meth:`index_entry`): what needs no change is not
        touched, so a locked index that needs none is no failure.
        """
        path = self.path_of(name)
        if index is None and self.index_entry(name) == entry:
            return
        if entry is None:
            self.git("update-index", "--force-remove", "--", path, index=index)
        else:
            self.git("update-index", "--add", "--cacheinfo", f"{entry},{path}", index=index)

    @contextlib.contextmanager
    def _scratch_index(self, *, head: bool = True, keep_stat: bool = False) -> Iterator[Path]:
        """An index file of the mirror's own holding HEAD's tree (``head`` False, or no HEAD
        yet: empty); ``read-tree`` without ``-u`` leaves the work tree alone.

        ``keep_stat``: start from a copy of the repository's index, so that a
        commit's refresh hashes only the files that changed, not every file.
        """
        with _scratch_dir() as scratch:
            index = scratch / "index"
            if keep_stat:
                found = self.git("rev-parse", "--path-format=absolute", "--git-path", "index")
                real = Path(found.stdout.strip())
                if real.is_file():
                    shutil.copyfile(real, index)
            if head and self.has_head():
                self.git("read-tree", *(["-m", "-i"] if keep_stat else []), "HEAD", index=index)
            else:
                self.git("read-tree", "--empty", index=index)
            yield index

    def _tree_with(self, name: str, entry: str | None, *, head: bool = True) -> str:
        """The sha of HEAD's tree (``head`` False: the empty tree) with the file as ``entry``."""
        with self._scratch_index(head=head) as index:
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
        title = self.git("log", "-1", "--format=%h %s", "HEAD").stdout.strip()
        staged = self._commit_tree(
            self._tree_with(name, state.index), f"index on {on}: {title}", head
        )
        parents = [head, staged]
        if state.index is None and state.tree is not None:  # untracked: the third parent
            alone = self._tree_with(name, state.tree, head=False)
            parents.append(self._commit_tree(alone, f"untracked files on {on}: {title}"))
        worked = self._tree_with(name, state.tree if state.index is not None else None)
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
        """The trailer ``Werkbaum-Version``, else an old ``pull-doc`` subject's ``(Version n``."""
        if VERSION_TRAILER in message:
            versions = [v for k, v in self.trailers(message) if k == VERSION_TRAILER]
            if versions and _NUMBER.fullmatch(versions[-1]):
                return int(versions[-1])
        subject = message.strip().split("\n", 1)[0]
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
        unmerged (a conflicted ``stash pop`` leaves no other trace), on a
        detached HEAD (the commit would drop out of sight at the next
        checkout), and while the index is locked.
        """
        path = self.path_of(name)
        unmerged = self.git("ls-files", "-z", "--unmerged").stdout.split("\0")
        paths = list(dict.fromkeys(line.split("\t", 1)[1] for line in unmerged if "\t" in line))
        asked = [arg for marker, _ in _IN_PROGRESS for arg in ("--git-path", marker)]
        found = self.git("rev-parse", "--path-format=absolute", *asked, "--git-path", "index.lock")
        *markers, lock = found.stdout.splitlines()
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
        if os.path.lexists(lock):
            return f"the index is locked: {_locked(lock)}"
        return None

    def commit(self, name: str, entry: str, message: str) -> Committed | None:
        """Commit the file as ``entry`` and nothing else (other staged changes stay staged).

        The index gets the entry, as ``git add`` would give it. None if that
        equals the committed one: git would refuse an empty commit, and there
        is nothing to record. The commit is ``git commit`` of a scratch index
        — HEAD's tree with the entry, what ``git commit -- <file>`` commits —
        so the hooks run (and see that index), but git never reads the file.
        Refused before the index is touched (:meth:`_refusal`; asked again
        here, as a merge may have begun since the caller asked). A commit that
        git made before it failed (a post-commit hook stopped at the deadline)
        is a commit, with the failure as its warning: putting the file back
        would stage a revert of it.
        """
        refusal = self._refusal(name)
        if refusal is not None:
            raise GitError(refusal)
        self.set_index_entry(name, entry)
        if entry == self.head_entry(name):
            return None
        before = self.head()
        with self._scratch_index(keep_stat=True) as index:
            self.set_index_entry(name, entry, index)
            try:
                self.git("commit", "-q", "--cleanup=whitespace", "-m", message, index=index)
            except GitError as failure:
                made = self.landed(before, name, entry)
                if made is None:
                    raise
                return Committed(made, f"committed, but then {failure} (a post-commit hook?)")
        return Committed(self.git("rev-parse", "HEAD").stdout.strip())


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
