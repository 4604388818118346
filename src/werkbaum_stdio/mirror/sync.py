"""The mirror itself: fetch the document, write the file, commit it; and its server wiring.

Runs take turns under the mirror lock (:mod:`.lock`: other mirror runs), and
each attempt at the file holds the repository's index (``index.lock``,
:class:`~werkbaum_stdio.mirror.git.HeldIndex`: everyone else's git) from its
look at the file's entries to the new index entry after the commit, so that a
person's ``git commit`` can neither land between the two nor take the plan.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Any, Literal

import attrs

from werkbaum_core.errors import InvalidArgument, SourceUnavailable, WerkbaumError
from werkbaum_core.rules.catalogue import Caller, Resolved
from werkbaum_core.rules.result import JSONObject
from werkbaum_core.stores.documents import DocumentStore, looks_like_document
from werkbaum_stdio.mirror.git import (
    FileState,
    GitError,
    HeldIndex,
    IndexLocked,
    Present,
    WorkTree,
    release_held,
)
from werkbaum_stdio.mirror.lock import Journal, mirror_lock
from werkbaum_stdio.mirror.message import Fetched, commit_message, one_line
from werkbaum_stdio.mirror.target import Contents, FileChanged, FileProblem, MirrorTarget
from werkbaum_stdio.roots import Roots

log = logging.getLogger(__name__)

DEFAULT_MODE = 0o644
"""The mode bits a new mirror file is committed with: not executable (the file store
creates it 0666 minus the umask)."""

ATTEMPTS = 3
"""Tries of the file-and-commit step when the file is saved under it each time."""

Stage = Literal["fetch", "file", "git"]
History = list[dict[str, Any]]


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
    """What one mirror run did: committed, wrote (no git), found nothing to do, skipped, or
    failed.

    ``to_json`` is the write result's ``mirror`` field; it is always an object
    (the write output schema types ``mirror`` as one), told apart by its key:
    ``{"commit", "version"}``, ``{"unchanged": true, "version"}`` (with
    ``"committedBy"`` when HEAD holds the text already in a commit that is not a
    mirror commit: someone committed it), ``{"written", "version"}``,
    ``{"skipped": true, "version", "archived"}`` (git archives a newer version
    already: another mirror run was later; nothing touched) or ``{"error"}``;
    plus ``"handEditStash"`` (the stash commit that keeps an overwritten hand
    edit) when there was one, and a ``"warning"`` when git failed after making
    the commit, HEAD moved under it, or the index could not be given the entry.
    """

    kind: Literal["commit", "written", "unchanged", "skipped", "error"]
    version: int | None = None
    title: str | None = None
    commit: str | None = None
    subject: str | None = None
    file: str | None = None
    error: str | None = None
    stage: Stage | None = None
    kept: str | None = None
    """The sha of the stash that keeps the hand edit this run overwrote."""
    archived: int | None = None
    """Skipped: the newer version the file's last mirror commit holds."""
    warning: str | None = None
    """Committed (or unchanged), but git failed after the commit (a post-commit hook
    stopped at the deadline), HEAD had moved under it, or the index could not be given
    the entry: the commit stands, and the file keeps it."""
    committed_by: str | None = None
    """Unchanged: the commit (not a mirror commit) in which HEAD holds this text already."""

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
            if self.warning is not None:
                out["warning"] = self.warning
        elif self.kind == "unchanged":
            out = {"unchanged": True, "version": self.version}
            if self.committed_by is not None:
                out["committedBy"] = self.committed_by
        elif self.kind == "written":
            out = {"written": self.file, "version": self.version}
        elif self.kind == "skipped":
            out = {"skipped": True, "version": self.version, "archived": self.archived}
        else:
            out = {"error": self.error}
        if self.kind == "unchanged" and self.warning is not None:
            out["warning"] = self.warning
        if self.kept is not None:
            out["handEditStash"] = self.kept
        return out

    def describe(self) -> str:
        """One line for a terminal or cron log."""
        shown = f"“{one_line(self.title or '')}” (version {self.version})"
        stash = (self.kept or "")[:7]
        kept = f" Hand edit kept: git stash {stash} (git stash show -p {stash})." if stash else ""
        if self.kind == "commit":
            warned = f" Warning: {self.warning}." if self.warning else ""
            return f"Committed {(self.commit or '')[:7]}: {self.subject}{kept}{warned}"
        if self.kind == "written":
            return f"Written: {self.file} — {shown}"
        if self.kind == "unchanged":
            by = f" (committed by {self.committed_by[:7]})" if self.committed_by else ""
            warned = f" Warning: {self.warning}." if self.warning else ""
            if stash:  # the commit had nothing to do, but the file was put back
                restored = f"Restored: {shown}, committed already{by}"
                return f"{restored}; the file had a hand edit.{kept}{warned}"
            return f"Unchanged: {shown} — nothing to do{by}.{warned}"
        if self.kind == "skipped":
            return f"Skipped: {shown} — git has version {self.archived} already, nothing to do."
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
        try:
            with _stop_signals_unwind():
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
        """The network first, then the file and git under the mirror lock (:mod:`.lock`).

        Nothing the backend says waits inside the lock, and everything about
        the file is decided inside it, from a fresh read: a save by hand or
        another mirror's commit during a slow fetch is seen, not overwritten.
        The repository's index is held only for each attempt's look, write and
        commit (:meth:`_commit_once`), never while the backend answers.
        """
        fetched = self._fetch()
        data = _encode(fetched.text, self.document)
        with mirror_lock(self.repo, self.file):
            if self.repo is None:
                same = _bytes_of(self.target.read()) == data
                if not same:
                    self.target.write(data)
                return self._outcome("unchanged" if same else "written", fetched)
            found = self.target.read()
            if _bytes_of(found) == data and self.repo.state(self.file.name, found).clean:
                return self._outcome("unchanged", fetched)
            archived = self.repo.previous_version(self.file.name)
        # Who changed what since the last mirror commit: the change feed's events (the
        # history carries every milestone's whole text: its cost grew with the document's
        # age, round 25 soak F2). A commit another run makes meanwhile only narrows what
        # the body names (commit_message takes the entries after the archived version).
        history = self.store.changes(self.document, archived or 0)
        with mirror_lock(self.repo, self.file):
            for _ in range(ATTEMPTS):
                done = self._commit_once(fetched, data, history, via)
                if done is not None:
                    return done
        raise FileProblem(
            f"{self.file} changed {ATTEMPTS} times while the mirror was writing it (saved by "
            "hand?), so the mirror left it as it is and committed nothing; the next write or "
            "run catches up"
        )

    def _look(self, fetched: Fetched, data: bytes, found: Contents) -> _Look:
        """What git says about the file as ``found``; the outcome if there is nothing to do.

        Skipped if the file's last mirror commit holds a newer version than
        the one fetched: another run (a second server, the cron job) fetched
        later and committed first, and this older text must not go on top.
        The same version goes ahead: it can only bring back that version's
        text (the commit is empty unless someone committed over it by hand).
        """
        assert self.repo is not None  # verified by the lock
        state = self.repo.state(self.file.name, found)
        archived = None
        outcome = None
        if _bytes_of(found) == data and state.clean:
            outcome = self._outcome("unchanged", fetched)
        else:
            archived = self.repo.previous_version(self.file.name)
            if archived is not None and archived > fetched.version:
                outcome = self._outcome("skipped", fetched, archived=archived)
        return _Look(state=state, archived=archived, outcome=outcome)

    def _commit_once(
        self, fetched: Fetched, data: bytes, history: History, via: str | None
    ) -> MirrorOutcome | None:
        """Stash a hand edit, write the file, commit it; None if the file changed meanwhile.

        Then this run has written nothing and dropped its stash again, and the
        caller starts over from a fresh read, so that the new save is the one
        stashed. All of it holds the repository's index (:class:`HeldIndex`): a
        person's ``git commit`` meanwhile fails instead of landing between the
        mirror's look at HEAD and its commit. An index someone else holds is a
        refusal — unless there is nothing to do anyway.
        """
        assert self.repo is not None
        found = self.target.read()
        journal = Journal.of(self.repo)
        try:
            held = self._hold_index(journal)
        except IndexLocked as locked:
            look = self._look(fetched, data, found)
            if look.outcome is not None:
                return look.outcome
            raise GitError(f"{locked}; the file and the index were not touched") from None
        try:
            journal.holding(held.lock)
            with held:
                return self._commit_held(fetched, data, history, via, found, held, journal)
        finally:
            journal.done()

    def _hold_index(self, journal: Journal) -> HeldIndex:
        """The repository's index, held; an ``index.lock`` that a mirror run killed outright
        left behind (:class:`~.lock.Journal`) is taken back first."""
        assert self.repo is not None
        try:
            return self.repo.hold_index()
        except IndexLocked as locked:
            if not journal.take_back(locked.lock):
                raise
            log.warning("removed %s, left by a mirror run that was killed", locked.lock)
            return self.repo.hold_index()

    def _commit_held(
        self,
        fetched: Fetched,
        data: bytes,
        history: History,
        via: str | None,
        found: Contents,
        held: HeldIndex,
        journal: Journal,
    ) -> MirrorOutcome | None:
        """:meth:`_commit_once` with the index held: the look at git, then the change.

        A text in the file that a mirror run wrote and could not commit before it was
        killed (the ``journal`` says so) is no hand edit: it is committed, not stashed.
        """
        assert self.repo is not None
        repo, name = self.repo, self.file.name
        look = self._look(fetched, data, found)
        if look.outcome is not None:
            return look.outcome
        repo.check_committable(name)  # a refusal before anything is touched
        state, same = look.state, _bytes_of(found) == data
        left = journal.wrote(repo.path_of(name))
        # its text, uncommitted (the index as before the run, which was HEAD's), or committed
        # with the index not yet given the entry (killed right after git made the commit)
        own = state.tree is not None and state.tree in left
        own = own and (state.index == state.head or state.head == state.tree)
        kept = self._keep_hand_edit(fetched, state) if _hand_edit(state, same) and not own else None
        message = commit_message(fetched, via, history, look.archived, kept)
        mode = DEFAULT_MODE if found is None else found[1]
        run = _Run(found=found, wrote=None, kept=kept)
        entry = None
        try:
            entry = repo.entry_of(name, data, mode, state.index)
            if not same:
                journal.writing(repo.path_of(name), entry)
                self.target.write_over(found, data)  # keeps the mode of the file it replaces
                run = attrs.evolve(run, wrote=data)
            made = repo.commit(name, entry, message, held)
        except FileChanged:  # only the write raises it: nothing written
            if kept is not None:
                repo.drop_stash(kept)
            return None
        except (GitError, FileProblem) as exc:
            raise type(exc)(self._put_back(run, exc)) from exc
        except BaseException:  # Ctrl-C or a stop signal of `werkbaum mirror`: git is stopped
            # the signal may have landed after the rename, before ``run`` knew of the write
            self._after_interruption(run if same else attrs.evolve(run, wrote=data), entry, held)
            raise
        if isinstance(made, Present):  # HEAD holds the text: a hand edit undone, or committed
            return self._outcome(
                "unchanged", fetched, kept=kept, committed_by=made.by, warning=made.warning
            )
        subject = message.split("\n", 1)[0]
        return self._outcome(
            "commit", fetched, commit=made.sha, subject=subject, kept=kept, warning=made.warning
        )

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

    def _put_back(self, run: _Run, failure: Exception) -> str:
        """After a failed write or commit: the file as it was; what to report, true in every
        case.

        The file is put back only if it still holds what the mirror wrote — a
        save by hand since then stays as it is. The index needs nothing: the
        mirror writes it only once its commit is made (:meth:`WorkTree.commit`),
        and no one else can while the mirror holds it. The stash is dropped only
        when the file holds the hand edit again; otherwise the report names it.
        """
        assert self.repo is not None
        try:
            file_back = run.restore_file(self.target)
            file_said = "the file is as it was" if file_back else _LEFT
        except FileProblem as exc:
            file_back, file_said = False, f"putting the file back failed ({exc})"
        if file_back:
            if run.kept is not None:
                self.repo.drop_stash(run.kept)  # the hand edit is back where it was
            return f"{failure}; the file and the index are as they were"
        kept = (
            f"; the hand edit the mirror overwrote is in git stash {run.kept}" if run.kept else ""
        )
        return f"{failure}; {file_said}; the index is as it was{kept}"

    def _after_interruption(self, run: _Run, entry: str | None, held: HeldIndex) -> None:
        """Interrupted while it wrote or committed (Ctrl-C of ``werkbaum mirror``, a stop
        signal, :func:`_stop_signals_unwind`), git stopped already: the file as it was —
        unless git made the commit before it stopped, then the index gets its entry.

        Before, the file was left with the new text and the index with the old entry: the
        next run stashed the mirror's own text as a person's hand edit (round 26). Best
        effort, as a clean-up on the way out must be: whatever fails here is left.
        """
        assert self.repo is not None
        with contextlib.suppress(Exception):
            if entry is not None and self.repo.head_entry(self.file.name) == entry:
                if held.held:
                    self.repo.write_index_entry(held, self.file.name, entry)
                return
            if self.target.read() == run.found:  # not written (yet): nothing to put back
                if run.kept is not None:
                    self.repo.drop_stash(run.kept)
                return
            self._put_back(run, GitError("interrupted"))

    def _outcome(
        self,
        kind: Literal["commit", "written", "unchanged", "skipped"],
        fetched: Fetched,
        *,
        commit: str | None = None,
        subject: str | None = None,
        kept: str | None = None,
        archived: int | None = None,
        warning: str | None = None,
        committed_by: str | None = None,
    ) -> MirrorOutcome:
        return MirrorOutcome(
            kind=kind,
            version=fetched.version,
            title=fetched.title,
            commit=commit,
            subject=subject,
            file=str(self.file),
            kept=kept,
            archived=archived,
            warning=warning,
            committed_by=committed_by,
        )

    def _fetch(self) -> Fetched:
        snapshot, title = self.store.read_titled(self.document)
        version = snapshot.base.version
        if version is None:
            raise SourceUnavailable(f"{self.document} answered without a version")
        return Fetched(text=snapshot.text, version=version, title=title, at=self.now())


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Stop signals a process may leave at their default: cron's ``timeout`` and systemd stop the
``werkbaum mirror`` command with SIGTERM, a closed terminal sends SIGHUP."""


class _Stopped(BaseException):
    """A stop signal during a run of a process that has no handler of its own for it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _stop_signals_unwind() -> Iterator[None]:
    """In a process that leaves SIGTERM and SIGHUP at their default (``werkbaum mirror``; the
    servers have their own handlers and clean up in :func:`~werkbaum_core.engine.lifetime.on_stop`):
    during the run, the signal unwinds it as Ctrl-C does — git and its hooks interrupted, the
    file put back, ``index.lock`` and the scratch indexes removed — and then the process
    dies of it as before.

    Before, the process died on the spot: the repository's ``index.lock`` stayed (every
    person's ``git add`` failed until someone removed it), and the ``git commit`` waiting
    for its hook committed after the process had gone (round 26). Main thread only: a
    handler can be set nowhere else.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken = [sig for sig in STOP_SIGNALS if signal.getsignal(sig) == signal.SIG_DFL]

    def stopped(signum: int, _frame: FrameType | None) -> None:
        for sig in taken:
            signal.signal(sig, signal.SIG_IGN)  # the clean-up is not cut short by another
        raise _Stopped(signum)

    for sig in taken:
        signal.signal(sig, stopped)
    try:
        yield
    except _Stopped as stop:
        release_held()
        for sig in taken:
            signal.signal(sig, signal.SIG_DFL)
        signal.raise_signal(stop.signum)
        raise  # the default action ended the process; never reached
    except BaseException as exc:
        if not isinstance(exc, Exception):  # Ctrl-C: the command ends
            release_held()
        raise
    finally:
        for sig in taken:
            signal.signal(sig, signal.SIG_DFL)


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


_LEFT = (
    "the file was changed again after the mirror wrote it (by a save, or by a commit hook "
    "that rewrites files, such as end-of-file-fixer: it fails every mirror commit of this "
    "text, so exclude the plan from it), so it was left as it is"
)
"""Said when the put-back after a failed commit finds the file changed (round 24 F7: a
fixing hook's output was left, stashed as a hand edit on the next run, on every run)."""


@attrs.frozen
class _Look:
    """The file as git sees it, the lower bound of the commit body, and the outcome if
    there is nothing to do."""

    state: FileState
    archived: int | None
    outcome: MirrorOutcome | None


@attrs.frozen
class _Run:
    """One attempt at the file: what was there, what the mirror wrote, which stash it made."""

    found: Contents
    """The file's bytes and mode before the run (None: there was none)."""
    wrote: bytes | None
    """What the mirror wrote (with the mode the file had, or a new file's); None: nothing."""
    kept: str | None

    def restore_file(self, target: MirrorTarget) -> bool:
        """Put the file back if it still holds what the mirror wrote; whether it is as it was."""
        if self.wrote is None:
            return True
        try:
            if self.found is None:
                target.remove_if(self.wrote)
            else:
                target.write_over((self.wrote, self.found[1]), *self.found)
        except FileChanged:
            return False
        return True


def _bytes_of(found: Contents) -> bytes | None:
    return None if found is None else found[0]


def _mirror_path(file: str | os.PathLike[str], roots: Roots | None) -> Path:
    """The file's realpath: under ``roots`` (as file sources are resolved), an ordinary file."""
    given = os.fspath(file)
    if not given or "\0" in given:
        raise InvalidArgument(f"invalid mirror file {given!r}", file=given)
    if roots is None and os.path.islink(given):
        # `werkbaum mirror` resolves the path anew on every run: a symlink someone put there
        # (or a pulled commit brought) made the cron job write, stash and commit the file it
        # points to under that file's name (round 26). A link in place of the mirror file is
        # refused, as by a server (the file store's walk); links to directories still work.
        raise InvalidArgument(
            f"mirror file {given} is a symbolic link (to {os.readlink(given)}); the mirror "
            "writes and commits a regular file: name the file itself",
            file=given,
        )
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
