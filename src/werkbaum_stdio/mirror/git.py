"""Running git for the mirror: no shell, no inherited repository, stdin closed, output captured."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from pathlib import Path

import attrs

from werkbaum_core.errors import InvalidArgument
from werkbaum_stdio.mirror.message import SUBJECT_PREFIX, VERSION_TRAILER

SEARCH_DEPTH = 100
"""How many commits of the mirror file are searched for the previous mirror commit."""

GIT_TIMEOUT = 120.0
"""Seconds per git command: a commit runs the repository's hooks, which may take a while."""

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


# ------------------------------------------------------------------ running git


class GitError(Exception):
    """A git command failed or could not run; the message says which and git's own words."""


def _git_env(literal: bool) -> dict[str, str]:
    """The environment for git: no repository redirection, no prompts, literal pathspecs.

    Literal pathspecs, because a file named ``*.md`` or ``:(glob)x`` must
    mean exactly that file and nothing else (``check-ignore`` takes paths,
    not pathspecs, and refuses the setting).
    """
    env = {key: value for key, value in os.environ.items() if key not in REPOSITORY_ENV}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_LITERAL_PATHSPECS"] = "1" if literal else "0"
    return env


def run_git(
    cwd: Path, *args: str, stdin: str | None = None, check: bool = True, literal: bool = True
) -> subprocess.CompletedProcess[str]:
    """``git -c core.quotepath=false <args>`` in ``cwd``; ``GitError`` unless it could run.

    With ``check`` a non-zero exit is a ``GitError`` as well. stdin is the
    given text or closed (never inherited: it is the stdio server's channel).
    """
    if not cwd.is_dir():
        raise GitError(f"the directory {cwd} does not exist (any more)")
    command = ["git", "-c", "core.quotepath=false", *args]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=_git_env(literal),
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=GIT_TIMEOUT,
            shell=False,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed (no `git` on the PATH)") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} did not finish within {GIT_TIMEOUT:.0f} s") from exc
    except OSError as exc:
        raise GitError(f"git {args[0]} could not run: {exc.strerror or exc}") from exc
    if check and done.returncode != 0:
        raise GitError(f"git {args[0]} failed (exit {done.returncode}): {_said(done)}")
    return done


def _said(done: subprocess.CompletedProcess[str]) -> str:
    """git's (or a hook's) own explanation: the end of stderr, else of stdout."""
    text = (done.stderr.strip() or done.stdout.strip() or "no output")[-ERROR_TAIL:]
    return " ".join(text.split())


@attrs.frozen
class WorkTree:
    """The git work tree a mirror file lies in; every command runs in the file's directory."""

    top: Path
    directory: Path

    @classmethod
    def containing(cls, file: Path) -> WorkTree:
        """The work tree of ``file`` (which may not exist yet), or ``InvalidArgument``.

        Checked at start-up so that a mirror that can never commit is a
        start-up error, not a surprise after the first agent write: the
        directory must be inside a work tree (not inside ``.git``), and the
        file must not be ignored (``git add`` would refuse it).
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
        self, *args: str, stdin: str | None = None, check: bool = True, literal: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return run_git(self.directory, *args, stdin=stdin, check=check, literal=literal)

    def verify(self) -> None:
        """The directory is still in the work tree found at start-up.

        Otherwise (the repository was deleted or moved) git would find the
        next repository up the tree and commit the plan into a stranger's.
        """
        done = self.git("rev-parse", "--show-toplevel", check=False)
        found = done.stdout.strip()
        if done.returncode != 0 or Path(found) != self.top:
            now = _said(done) if done.returncode != 0 else f"it is in {found} now"
            raise GitError(
                f"{self.directory} is not in the git work tree {self.top} any more ({now})"
            )

    def ignored(self, name: str) -> bool:
        done = self.git("check-ignore", "-q", "--", name, check=False, literal=False)
        if done.returncode not in (0, 1):
            raise GitError(f"git check-ignore failed (exit {done.returncode}): {_said(done)}")
        return done.returncode == 0

    def committed(self, name: str) -> bool:
        """Whether the file is committed exactly as it is (not modified, staged or untracked)."""
        return not self.status(name)

    def status(self, name: str) -> str:
        """The file's two-letter ``git status --porcelain`` code (index, work tree); "" if clean."""
        out = self.git("status", "--porcelain", "--untracked-files=all", "--", name).stdout
        return out[:2] if out.strip() else ""

    def has_head(self) -> bool:
        done = run_git(self.top, "rev-parse", "-q", "--verify", "HEAD", check=False)
        return done.returncode == 0

    def index_entry(self, name: str) -> str | None:
        """The file's index entry as ``<mode>,<sha>`` (None: not in the index)."""
        out = self.git("ls-files", "--stage", "--", name).stdout.split()
        return f"{out[0]},{out[1]}" if len(out) >= 2 else None

    def set_index_entry(self, name: str, entry: str | None) -> None:
        """Put back an entry of :meth:`index_entry` (None: take the file out of the index).

        ``--cacheinfo`` takes its path from the top of the work tree.
        """
        path = self._from_top(name)
        if entry is None:
            run_git(self.top, "update-index", "--force-remove", "--", path)
        else:
            run_git(self.top, "update-index", "--add", "--cacheinfo", f"{entry},{path}")

    def _from_top(self, name: str) -> str:
        return str((self.directory / name).relative_to(self.top))

    def stash(self, name: str, message: str) -> str:
        """``git stash push`` of the file alone (index and work tree); the stash commit's sha.

        The file is then as committed (or gone, if it was never committed;
        git then also removes the directories left empty — the caller makes
        them again, without following a symlink). ``git stash`` reads its
        pathspec from the top of the work tree.
        """
        path = self._from_top(name)
        run_git(self.top, "stash", "push", "--include-untracked", "-q", "-m", message, "--", path)
        return run_git(self.top, "rev-parse", "refs/stash").stdout.strip()

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
        out = self.git("log", f"-n{SEARCH_DEPTH}", "-z", "--format=%B", "--", name).stdout
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

    def commit(self, name: str, message: str) -> str | None:
        """Commit only ``name`` (pathspec: other staged changes stay staged); the new sha.

        None if, once added, the file equals its committed version: git would
        refuse an empty commit, and there is nothing to record.
        """
        self.git("add", "--", name)
        if self.committed(name):
            return None
        self.git("commit", "-q", "--cleanup=whitespace", "-m", message, "--", name)
        return self.git("rev-parse", "HEAD").stdout.strip()


_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


def work_tree_lock(key: Path) -> threading.Lock:
    """One lock per work tree: two mirrors in one repository must not race for its index."""
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(str(key), threading.Lock())
