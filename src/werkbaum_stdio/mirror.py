"""The git mirror (spec §8; documents-api §11): a shared document archived as a file in git.

Teams keep their shared plans in git so that the history of a plan sits next
to the code it plans. The documents backend keeps only milestones, so the
mirror is the durable record; it must therefore be exact and honest:

- the file holds the **whole** server text byte for byte (UTF-8, no newline
  translation, no newline added), and a hand edit of the file is simply
  overwritten by the next commit, whose diff then shows the deviation;
- only the mirror file is committed (``git commit -- <file>``): whatever else
  the user has staged stays staged and uncommitted;
- the git author stays whoever runs the server: display names are claims, so
  they go into ``Werkbaum-Changed-By`` trailers, never into ``--author`` or
  ``Co-Authored-By`` (which would make ``git blame`` credit an agent with
  humans' lines);
- a mirror failure after an agent write is *reported* in the write result,
  never raised: the document write already happened and must not be hidden.

git runs as a program with arguments (spec §10: no shell), with stdin closed
and its output captured — the stdio server's stdin and stdout carry JSON-RPC,
and neither git nor a commit hook may read from or print into that channel.

Commit message (documents-api §11.3 and the planned ``--with-history`` of
§11.5; choices where the spec is silent are marked *chosen*)::

    Werkbaum-Stand vom 2026-08-27 11:53 — „Titel“ (Version 8, via Claude Code)

    v6 (not in history) · v7 Anna · v8 Claude Code

    Werkbaum-Changed-By: Anna
    Werkbaum-Changed-By: Claude Code
    Werkbaum-Version: 8

- Subject: local time of the fetch; without ``, via …`` for a run without an
  agent write (``werkbaum mirror``, cron).
- Body: the versions after the previous mirror commit's version up to the
  committed one, oldest first, joined by `` · `` and wrapped at 72 columns
  (*chosen*). The lower bound is the ``Werkbaum-Version`` trailer of the most
  recent mirror commit of the file, else the ``(Version <n>`` of an older
  ``pull-doc`` subject (``Werkbaum-Stand vom …``); commits of the file by
  other people are skipped to find it (*chosen*: up to 100). Without any,
  every history entry up to the version is listed. An entry without a name
  is ``v<n> (unnamed)``. Versions the backend's history no longer shows
  (sync versions that were neither a milestone nor the latest, documents-api
  §5.4) are listed as ``v<a>-v<b> (not in history)`` (*chosen*: the body says
  that versions are missing rather than pretending there were none). With no
  new version at all (a hand edit undone, a file committed late) the body
  paragraph is left out (*chosen*).
- Trailers: one ``Werkbaum-Changed-By`` per distinct name in order of first
  appearance, then ``Werkbaum-Version``; always the last paragraph, so
  ``git interpret-trailers --parse`` reads them. Names and the title are
  reduced to one printable line (*chosen*: a newline in a display name could
  otherwise forge a trailer).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import stat
import subprocess
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import attrs

from werkbaum_core.errors import InvalidArgument, SourceUnavailable, WerkbaumError
from werkbaum_core.rules.catalogue import Caller, JSONObject, Resolved
from werkbaum_core.stores.documents import DocumentStore, looks_like_document
from werkbaum_stdio.roots import Roots

__all__ = [
    "Fetched",
    "GitError",
    "Mirror",
    "MirrorFiles",
    "MirrorOutcome",
    "WorkTree",
    "after_write_hook",
    "build_mirrors",
    "commit_message",
    "parse_mirror_spec",
]

log = logging.getLogger(__name__)

VERSION_TRAILER = "Werkbaum-Version"
CHANGED_BY_TRAILER = "Werkbaum-Changed-By"
SUBJECT_PREFIX = "Werkbaum-Stand vom "
UNNAMED = "(unnamed)"
NOT_IN_HISTORY = "(not in history)"
BODY_WIDTH = 72
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

Stage = Literal["fetch", "file", "git"]


# ------------------------------------------------------------------ --mirror DOC=FILE


def parse_mirror_spec(spec: str) -> tuple[str, str]:
    """``(document, file)`` of ``--mirror <document>=<file>``.

    Split at the **last** ``=``: a share link (``…?live=…``) contains ``=``
    itself, a file name rarely does (one that does cannot be mirrored).
    """
    document, sep, file = spec.rpartition("=")
    if not sep or not document.strip() or not file:
        raise InvalidArgument(
            f"--mirror expects <document>=<file> (a document URL, share link or uuid, then "
            f"the file), got {spec!r}",
            spec=spec,
        )
    return document.strip(), file


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
        out = self.git("status", "--porcelain", "--untracked-files=all", "--", name).stdout
        return not out.strip()

    def previous_version(self, name: str) -> int | None:
        """The version of the file's most recent mirror commit: the body's lower bound.

        Commits of the file that are not mirror commits (a user's own) are
        skipped; the search stops after ``SEARCH_DEPTH`` commits.
        """
        if self.git("rev-parse", "-q", "--verify", "HEAD", check=False).returncode != 0:
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


def _lock_for(key: Path) -> threading.Lock:
    """One lock per work tree: two mirrors in one repository must not race for its index."""
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(str(key), threading.Lock())


# ------------------------------------------------------------------ the commit message


def one_line(text: str) -> str:
    """``text`` as one printable line: whitespace runs become one space, control characters go."""
    printable = "".join(ch if ch.isprintable() else " " for ch in text)
    return " ".join(printable.split())


@attrs.frozen
class Fetched:
    """The document as fetched for one mirror run."""

    text: str
    version: int
    title: str
    at: datetime


def subject(fetched: Fetched, via: str | None) -> str:
    """``Werkbaum-Stand vom YYYY-MM-DD HH:MM — „<title>“ (Version <n>[, via <name>])``."""
    stamp = fetched.at.astimezone()  # local time, as pull-doc's `date`
    note = f"Version {fetched.version}"
    name = one_line(via or "")
    if name:
        note += f", via {name}"
    return f"{SUBJECT_PREFIX}{stamp:%Y-%m-%d %H:%M} — „{one_line(fetched.title)}“ ({note})"


@attrs.frozen
class Change:
    """One history entry in the body: its version and its display name (None: unnamed)."""

    version: int
    name: str | None

    def label(self) -> str:
        return f"v{self.version} {self.name or UNNAMED}"


def changes_since(history: Iterable[Any], bound: int | None, version: int) -> list[Change]:
    """The history entries after ``bound`` up to ``version``, oldest first, one per version."""
    picked: dict[int, Change] = {}
    for entry in history:
        if not isinstance(entry, dict):
            continue
        number = entry.get("version")
        if not isinstance(number, int) or isinstance(number, bool):
            continue
        if (bound is None or number > bound) and number <= version:
            raw = entry.get("displayName")
            picked[number] = Change(number, one_line(raw) if isinstance(raw, str) else None)
    return [picked[number] for number in sorted(picked)]


def _gap(first: int, last: int) -> str:
    span = f"v{first}" if first == last else f"v{first}-v{last}"
    return f"{span} {NOT_IN_HISTORY}"


def body_items(changes: Sequence[Change], bound: int | None, version: int) -> list[str]:
    """The labels of the changes, with the versions between them that the history lacks."""
    first = changes[0].version if changes else version
    expected = bound + 1 if bound is not None else first
    items: list[str] = []
    for change in changes:
        if change.version > expected:
            items.append(_gap(expected, change.version - 1))
        items.append(change.label())
        expected = change.version + 1
    if expected <= version:
        items.append(_gap(expected, version))
    return items


def wrap_items(items: Sequence[str], width: int = BODY_WIDTH) -> str:
    """``a · b · c``, broken after a `` ·`` where a line would exceed ``width``."""
    lines: list[str] = []
    line = ""
    for item in items:
        if line and len(line) + 3 + len(item) > width:
            lines.append(line + " ·")
            line = item
        else:
            line = f"{line} · {item}" if line else item
    if line:
        lines.append(line)
    return "\n".join(lines)


def commit_message(
    fetched: Fetched, via: str | None, history: Iterable[Any], bound: int | None
) -> str:
    """Subject, the ``v7 Anna · v8 Claude Code`` body, and the trailers (module docstring)."""
    changes = changes_since(history, bound, fetched.version)
    names = list(dict.fromkeys(change.name for change in changes if change.name))
    trailers = [f"{CHANGED_BY_TRAILER}: {name}" for name in names]
    trailers.append(f"{VERSION_TRAILER}: {fetched.version}")
    paragraphs = [subject(fetched, via)]
    body = wrap_items(body_items(changes, bound, fetched.version))
    if body:
        paragraphs.append(body)
    paragraphs.append("\n".join(trailers))
    return "\n\n".join(paragraphs) + "\n"


# ------------------------------------------------------------------ the outcome


@attrs.frozen
class MirrorOutcome:
    """What one mirror run did: committed, wrote (no git), found nothing to do, or failed.

    ``to_json`` is the write result's ``mirror`` field; it is always an object
    (the write output schema types ``mirror`` as one), told apart by its key:
    ``{"commit", "version"}``, ``{"unchanged": true, "version"}``,
    ``{"written", "version"}`` or ``{"error"}``.
    """

    kind: Literal["commit", "written", "unchanged", "error"]
    version: int | None = None
    title: str | None = None
    commit: str | None = None
    subject: str | None = None
    file: str | None = None
    error: str | None = None
    stage: Stage | None = None

    @classmethod
    def failed(cls, stage: Stage, message: str) -> MirrorOutcome:
        return cls(kind="error", error=message, stage=stage)

    @property
    def ok(self) -> bool:
        return self.kind != "error"

    def to_json(self) -> JSONObject:
        if self.kind == "commit":
            return {"commit": self.commit, "version": self.version}
        if self.kind == "unchanged":
            return {"unchanged": True, "version": self.version}
        if self.kind == "written":
            return {"written": self.file, "version": self.version}
        return {"error": self.error}

    def describe(self) -> str:
        """One line for a terminal or cron log, worded as ``pull-doc`` prints it."""
        shown = f"„{one_line(self.title or '')}“ (Version {self.version})"
        if self.kind == "commit":
            return f"Committet {(self.commit or '')[:7]}: {self.subject}"
        if self.kind == "written":
            return f"Geschrieben: {self.file} — {shown}"
        if self.kind == "unchanged":
            return f"Unverändert: {shown} — nichts zu tun."
        return f"mirror failed ({self.stage}): {self.error}"


# ------------------------------------------------------------------ the mirror


def _local_now() -> datetime:
    return datetime.now().astimezone()


@attrs.frozen
class Mirror:
    """One document mirrored into one file; ``repo`` None: write the file, commit nothing.

    Build it with :meth:`create`, which validates at start-up.
    """

    document: str
    """The canonical document URL (the key ``Resolved.key`` carries)."""
    file: Path
    """The mirror file's realpath (it may not exist yet)."""
    store: DocumentStore
    repo: WorkTree | None
    now: Callable[[], datetime] = _local_now

    @classmethod
    def create(
        cls,
        document: str,
        file: str | os.PathLike[str],
        store: DocumentStore,
        roots: Roots | None,
        *,
        git: bool = True,
        now: Callable[[], datetime] = _local_now,
    ) -> Mirror:
        """Validate a mirror: a document source, a file (under ``roots`` unless None), git.

        ``roots`` None is for the ``werkbaum mirror`` command, where the user
        names the file in their own shell. Raises ``InvalidArgument`` or
        ``ForbiddenSource`` with a message fit for a start-up error.
        """
        url = store.parse(document).url
        path = _mirror_path(file, roots)
        repo = WorkTree.containing(path) if git else None
        return cls(document=url, file=path, store=store, repo=repo, now=now)

    def sync(self, via: str | None = None) -> MirrorOutcome:
        """Fetch the document, write the file if it differs, commit it if it is not committed.

        ``via`` is the agent's display name after an agent write, None for a
        run without one. Never raises for a failure of the backend, the file
        or git: it reports it (the caller's document write stands).
        """
        lock_key = self.repo.top if self.repo is not None else self.file
        with _lock_for(lock_key):
            try:
                return self._sync(via)
            except WerkbaumError as exc:
                return MirrorOutcome.failed("fetch", exc.message)
            except GitError as exc:
                return MirrorOutcome.failed("git", str(exc))
            except OSError as exc:
                return MirrorOutcome.failed("file", f"{self.file}: {exc.strerror or exc}")

    def _sync(self, via: str | None) -> MirrorOutcome:
        fetched = self._fetch()
        data = _encode(fetched.text, self.document)
        same = _read_bytes(self.file) == data
        if self.repo is None:
            if not same:
                _write_atomic(self.file, data)
            return self._outcome("unchanged" if same else "written", fetched)
        self.repo.verify()
        if same and self.repo.committed(self.file.name):
            return self._outcome("unchanged", fetched)
        # Everything that can fail on the backend is asked before the file is touched.
        history = self.store.history(self.document)
        message = commit_message(fetched, via, history, self.repo.previous_version(self.file.name))
        if not same:
            _write_atomic(self.file, data)
        sha = self.repo.commit(self.file.name, message)
        if sha is None:  # the file only went back to its committed text (a hand edit undone)
            return self._outcome("unchanged", fetched)
        return self._outcome("commit", fetched, commit=sha, subject=message.split("\n", 1)[0])

    def _outcome(
        self,
        kind: Literal["commit", "written", "unchanged"],
        fetched: Fetched,
        *,
        commit: str | None = None,
        subject: str | None = None,
    ) -> MirrorOutcome:
        return MirrorOutcome(
            kind=kind,
            version=fetched.version,
            title=fetched.title,
            commit=commit,
            subject=subject,
            file=str(self.file),
        )

    def _fetch(self) -> Fetched:
        snapshot = self.store.read(self.document)
        title = self.store.title(self.document)
        version = snapshot.base.version
        if version is None:
            raise SourceUnavailable(f"{self.document} answered without a version")
        return Fetched(text=snapshot.text, version=version, title=title, at=self.now())


def _mirror_path(file: str | os.PathLike[str], roots: Roots | None) -> Path:
    """The file's realpath: under ``roots`` (as file sources are resolved), an ordinary file."""
    given = os.fspath(file)
    if not given or "\0" in given:
        raise InvalidArgument(f"invalid mirror file {given!r}", file=given)
    real = roots.resolve(given) if roots is not None else Path(os.path.realpath(given))
    if real.is_dir():
        raise InvalidArgument(f"mirror file {given} is a directory", file=given)
    if not real.parent.is_dir():
        raise InvalidArgument(
            f"mirror file {given}: the directory {real.parent} does not exist", file=given
        )
    return real


def _encode(text: str, document: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SourceUnavailable(f"{document} sent text that is not valid Unicode") from exc


def _read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None if it is missing or a symlink (both get replaced)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _keep_mode(path: Path, temp: Path) -> None:
    """Give ``temp`` the mode of ``path`` if that is a regular file (a chmod by hand stays)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode):
        os.chmod(temp, stat.S_IMODE(info.st_mode))


def _write_atomic(path: Path, data: bytes) -> None:
    """Replace the file with ``data`` via a temp file in its directory (no torn file).

    The temp file is created with mode 0666 minus the umask, like any new
    file; an existing file keeps its mode.
    """
    temp = path.with_name(f".{path.name}.werkbaum-mirror.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        _keep_mode(path, temp)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


# ------------------------------------------------------------------ wiring for the server


def build_mirrors(specs: Sequence[str], store: DocumentStore, roots: Roots) -> dict[str, Mirror]:
    """``--mirror`` values as mirrors by canonical document URL; start-up errors raise.

    One document has one mirror file and one file one document: two files for
    one document would commit the same change twice, two documents into one
    file would overwrite each other.
    """
    mirrors: dict[str, Mirror] = {}
    files: dict[Path, str] = {}
    for spec in specs:
        mirror = Mirror.create(*parse_mirror_spec(spec), store, roots)
        if mirror.document in mirrors:
            raise InvalidArgument(f"--mirror: {mirror.document} is mirrored twice", spec=spec)
        if mirror.file in files:
            raise InvalidArgument(
                f"--mirror: {mirror.file} is the mirror of {files[mirror.file]} already", spec=spec
            )
        mirrors[mirror.document] = mirror
        files[mirror.file] = mirror.document
    return mirrors


@attrs.frozen
class MirrorFiles:
    """Which file sources are mirror files: reads and writes of them go to their document."""

    base: Path
    documents: Mapping[Path, str]

    @classmethod
    def of(cls, mirrors: Mapping[str, Mirror], roots: Roots) -> MirrorFiles:
        return cls(base=roots.base, documents={m.file: m.document for m in mirrors.values()})

    def redirect(self, source: str) -> str | None:
        """The document URL if ``source`` is a file path whose realpath is a mirror file.

        Resolved as the file store resolves sources (relative to the roots'
        base, symlinks followed), so any spelling of the file is caught.
        """
        if not source or "\0" in source or looks_like_document(source):
            return None
        if source.lower().startswith(("http://", "https://")):
            return None
        return self.documents.get(Path(os.path.realpath(self.base / source)))


def after_write_hook(
    mirrors: Mapping[str, Mirror],
) -> Callable[[Resolved, JSONObject, Caller], JSONObject | None]:
    """The ``Services.after_write`` hook: sync the written document's mirror, report the outcome.

    None (no ``mirror`` field) when the document has no mirror. Whatever goes
    wrong becomes ``{"error": …}``: the write has happened and its result
    must reach the agent.
    """

    def hook(resolved: Resolved, result: JSONObject, caller: Caller) -> JSONObject | None:
        mirror = mirrors.get(resolved.key)
        if mirror is None and resolved.redirected_to:
            mirror = mirrors.get(resolved.redirected_to)
        if mirror is None:
            return None
        try:
            return mirror.sync(caller.display_name).to_json()
        except Exception as exc:  # the document write stands; never hide it behind this
            log.exception("mirror of %s failed", mirror.document)
            return {"error": f"the mirror failed unexpectedly ({type(exc).__name__}: {exc})"}

    return hook
