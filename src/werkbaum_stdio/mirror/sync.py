"""The mirror itself: fetch the document, write the file, commit it; and its server wiring."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

import attrs

from werkbaum_core.errors import InvalidArgument, SourceUnavailable, WerkbaumError
from werkbaum_core.rules.catalogue import Caller, Resolved
from werkbaum_core.rules.result import JSONObject
from werkbaum_core.stores.documents import DocumentStore, looks_like_document
from werkbaum_stdio.mirror.git import FileState, GitError, WorkTree, work_tree_lock
from werkbaum_stdio.mirror.message import Fetched, commit_message, one_line
from werkbaum_stdio.mirror.target import FileProblem, MirrorTarget
from werkbaum_stdio.roots import Roots

log = logging.getLogger(__name__)

DEFAULT_MODE = 0o644
"""The mode bits a new mirror file is committed with: not executable (the file store
creates it 0666 minus the umask)."""

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


# ------------------------------------------------------------------ the outcome


@attrs.frozen
class MirrorOutcome:
    """What one mirror run did: committed, wrote (no git), found nothing to do, or failed.

    ``to_json`` is the write result's ``mirror`` field; it is always an object
    (the write output schema types ``mirror`` as one), told apart by its key:
    ``{"commit", "version"}``, ``{"unchanged": true, "version"}``,
    ``{"written", "version"}`` or ``{"error"}``; plus ``"handEditStash"`` (the
    stash commit that keeps an overwritten hand edit) when there was one.
    """

    kind: Literal["commit", "written", "unchanged", "error"]
    version: int | None = None
    title: str | None = None
    commit: str | None = None
    subject: str | None = None
    file: str | None = None
    error: str | None = None
    stage: Stage | None = None
    kept: str | None = None
    """The sha of the stash that keeps the hand edit this run overwrote."""

    @classmethod
    def failed(cls, stage: Stage, message: str) -> MirrorOutcome:
        return cls(kind="error", error=message, stage=stage)

    @property
    def ok(self) -> bool:
        return self.kind != "error"

    def to_json(self) -> JSONObject:
        out: JSONObject
        if self.kind == "commit":
            out = {"commit": self.commit, "version": self.version}
        elif self.kind == "unchanged":
            out = {"unchanged": True, "version": self.version}
        elif self.kind == "written":
            out = {"written": self.file, "version": self.version}
        else:
            out = {"error": self.error}
        if self.kept is not None:
            out["handEditStash"] = self.kept
        return out

    def describe(self) -> str:
        """One line for a terminal or cron log."""
        shown = f"“{one_line(self.title or '')}” (version {self.version})"
        kept = f" Hand edit kept: git stash {self.kept[:7]}." if self.kept else ""
        if self.kind == "commit":
            return f"Committed {(self.commit or '')[:7]}: {self.subject}{kept}"
        if self.kind == "written":
            return f"Written: {self.file} — {shown}"
        if self.kind == "unchanged":
            return f"Unchanged: {shown} — nothing to do.{kept}"
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
    target: MirrorTarget
    """How the file is reached: every read and write walks there anew (:mod:`.target`)."""
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
        target = MirrorTarget.at(path, roots)
        repo = WorkTree.containing(path) if git else None
        return cls(document=url, file=path, target=target, store=store, repo=repo, now=now)

    def sync(self, via: str | None = None) -> MirrorOutcome:
        """Fetch the document, write the file if it differs, commit it if it is not committed.

        ``via`` is the agent's display name after an agent write, None for a
        run without one. Never raises for a failure of the backend, the file
        or git: it reports it (the caller's document write stands). A file
        that cannot be reached safely (:mod:`.target`) is left as it was.
        """
        lock_key = self.repo.top if self.repo is not None else self.file
        with work_tree_lock(lock_key):
            try:
                return self._sync(via)
            except WerkbaumError as exc:
                return MirrorOutcome.failed("fetch", exc.message)
            except GitError as exc:
                return MirrorOutcome.failed("git", str(exc))
            except FileProblem as exc:
                return MirrorOutcome.failed("file", str(exc))
            except OSError as exc:
                return MirrorOutcome.failed("file", f"{self.file}: {exc.strerror or exc}")

    def _sync(self, via: str | None) -> MirrorOutcome:
        fetched = self._fetch()
        data = _encode(fetched.text, self.document)
        found = self.target.read()
        present = None if found is None else found[0]
        same = present == data
        if self.repo is None:
            if not same:
                self.target.write(data)
            return self._outcome("unchanged" if same else "written", fetched)
        repo, name = self.repo, self.file.name
        repo.verify()
        state = repo.state(name, found)
        if same and state.clean:
            return self._outcome("unchanged", fetched)
        repo.check_committable(name)  # a refusal before anything is touched
        # Everything that can fail on the backend is asked before the file is touched.
        history = self.store.history(self.document)
        bound = repo.previous_version(name)
        before = _Before(found, state.index)
        kept = self._keep_hand_edit(fetched, state) if _hand_edit(state, same) else None
        message = commit_message(fetched, via, history, bound, kept)
        try:
            now = self.target.read()
            if now is None or now[0] != data:
                self.target.write(data)  # keeps the mode of the file it replaces
            mode = DEFAULT_MODE if now is None else now[1]
            sha = repo.commit(name, repo.entry_of(name, data, mode, state.index), message)
        except (GitError, FileProblem) as exc:
            raise type(exc)(self._put_back(before, kept, exc)) from exc
        if sha is None:  # the file only went back to its committed text (a hand edit undone)
            return self._outcome("unchanged", fetched, kept=kept)
        subject = message.split("\n", 1)[0]
        return self._outcome("commit", fetched, commit=sha, subject=subject, kept=kept)

    def _keep_hand_edit(self, fetched: Fetched, state: FileState) -> str:
        """Stash the uncommitted hand edit the commit would overwrite; the stash's sha.

        A stash, not a commit of the edit: it runs no hooks, does not put a
        half-finished edit into the shared history, and ``git stash list``
        is where a person looks for set-aside work. The server stays the
        source (spec §8): the file then gets the server's text as before.
        """
        assert self.repo is not None
        if not self.repo.has_head():
            raise GitError(
                f"{self.file} has uncommitted changes, and the repository has no commit yet "
                "to stash them against; commit or move the file, then write again"
            )
        message = (
            f"werkbaum-mcp: hand edit of {self.file.name}, overwritten by "
            f"{self.document} version {fetched.version}"
        )
        return self.repo.stash(self.file.name, state, message)

    def _put_back(self, before: _Before, kept: str | None, failure: Exception) -> str:
        """After a failed write or commit: the file and its index entry as they were; what to
        report. If that fails too, a stashed hand edit stays in its stash, and the report
        names it."""
        assert self.repo is not None
        said = str(failure)
        try:
            before.restore(self.target, self.repo)
            if kept is not None:
                self.repo.drop_stash(kept)  # the hand edit is back in the file
        except (GitError, FileProblem) as exc:
            where = f"; the hand edit is in git stash {kept}" if kept else ""
            return f"{said}; putting the file back failed too ({exc}){where}"
        return f"{said}; the file and the index are as they were"

    def _outcome(
        self,
        kind: Literal["commit", "written", "unchanged"],
        fetched: Fetched,
        *,
        commit: str | None = None,
        subject: str | None = None,
        kept: str | None = None,
    ) -> MirrorOutcome:
        return MirrorOutcome(
            kind=kind,
            version=fetched.version,
            title=fetched.title,
            commit=commit,
            subject=subject,
            file=str(self.file),
            kept=kept,
        )

    def _fetch(self) -> Fetched:
        snapshot, title = self.store.read_titled(self.document)
        version = snapshot.base.version
        if version is None:
            raise SourceUnavailable(f"{self.document} answered without a version")
        return Fetched(text=snapshot.text, version=version, title=title, at=self.now())


def _hand_edit(state: FileState, same: bool) -> bool:
    """Whether the file holds an uncommitted text other than the one about to be committed.

    ``same``: the work tree holds the new text already; then only a staged
    text other than it and the committed one is a hand edit. Otherwise any
    uncommitted text in the work tree or the index is. A deleted file, or a
    staged deletion, is none (its text is in the last commit).
    """
    if state.clean:
        return False
    staged = state.index is not None and state.index != state.head
    if same:
        return staged and state.index != state.tree
    return state.tree is not None or staged


@attrs.frozen
class _Before:
    """The mirror file before a run: its bytes and mode (None: absent) and its index entry."""

    file: tuple[bytes, int] | None
    index: str | None

    def restore(self, target: MirrorTarget, repo: WorkTree) -> None:
        if self.file is None:
            target.remove()
        else:
            target.write(*self.file)
        repo.set_index_entry(target.path.name, self.index)


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
