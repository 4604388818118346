"""Documents, their two-level history and the change feed: the stand-in's state.

One lock guards everything (documents, history, the patch log), and one
condition on that lock wakes long-poll feed requests.  A write notifies while
still holding the lock, so a woken waiter can only look once the change is
visible (documents-api §6).  Line ops are computed under the lock where the
result must be atomic with the write (PATCH); the feed snapshots under the
lock and diffs outside it.

Rules implemented here, by section of documents-api.md:
§2.3-§2.11 endpoint semantics, §5.1 versions, §5.2 the PATCH pipeline in its
order, §5.3 rebase vs 409, §5.4 milestones/promotion/compaction, §5.5 seq
idempotency, §6 the feed.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from tests.backend.bodies import ContentPatchRequest, utf16_len
from tests.backend.clock import Clock
from tests.backend.config import BackendConfig
from tests.backend.ops import InvalidOps, LineOps, checksum, lines, ops_to_json, text, validate_ops
from tests.backend.patchlog import PatchLog
from tests.backend.problems import (
    TITLE_CONFLICT,
    ApiError,
    ContentConflict,
    bad_request,
    deleted,
    not_found,
    unapplicable,
)

ChangeType = Literal["CREATED", "UPDATED", "RENAMED", "DELETED", "RESTORED", "ROLLED_BACK"]


@dataclass
class Document:
    """The live row; absent from the store once deleted (the history stays)."""

    id: str
    title: str
    content: str
    version: int
    created_at: datetime
    updated_at: datetime


@dataclass
class HistoryEntry:
    """A full snapshot per version; ``milestone`` may flip to true later (promotion)."""

    version: int
    title: str
    content: str
    change_type: ChangeType
    time: datetime
    milestone: bool
    client_id: str | None = None
    display_name: str | None = None


@dataclass(frozen=True)
class FeedSnapshot:
    """What a feed answer needs, copied out under the lock; diffed afterwards."""

    since_content: str | None
    """Text of version ``since`` if still stored, else ``None`` (full-text answer)."""
    current_version: int
    current_content: str
    events: tuple[HistoryEntry, ...]


class Store:
    def __init__(self, config: BackendConfig, clock: Clock, ops: LineOps) -> None:
        self._config = config
        self._clock = clock
        self._ops = ops
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self.waiting = 0
        """Feed requests blocked in a long poll now (tests wait for it instead of sleeping)."""
        self._docs: dict[str, Document] = {}
        self._history: dict[str, list[HistoryEntry]] = {}
        self._patch_log = PatchLog(config.patch_log_capacity)
        self._closing = False

    @property
    def ops(self) -> LineOps:
        return self._ops

    # -- internal helpers (call with the lock held) ------------------------------------

    def _live(self, doc_id: str) -> Document:
        doc = self._docs.get(doc_id)
        if doc is None:
            raise not_found(doc_id)
        return doc

    def _record(self, doc_id: str, entry: HistoryEntry) -> None:
        """Append a history entry: promote, then compact, then append, then wake (§5.4, §6)."""
        history = self._history.setdefault(doc_id, [])
        if history:
            previous = history[-1]
            paused = entry.time - previous.time >= self._config.milestone_pause
            if not previous.milestone and paused:
                previous.milestone = True
        cutoff = entry.time - self._config.sync_retention
        history[:] = [h for h in history if h.milestone or h.time >= cutoff]
        history.append(entry)
        self._changed.notify_all()

    # -- documents ---------------------------------------------------------------------

    def create(self, title: str, content: str) -> Document:
        with self._lock:
            now = self._clock.now()
            doc_id = str(uuid.uuid4())
            doc = Document(doc_id, title, content, 1, now, now)
            self._docs[doc_id] = doc
            self._record(doc_id, HistoryEntry(1, title, content, "CREATED", now, milestone=True))
            return dataclasses.replace(doc)

    def get(self, doc_id: str) -> Document:
        with self._lock:
            return dataclasses.replace(self._live(doc_id))

    def all(self) -> list[Document]:
        with self._lock:
            return [dataclasses.replace(d) for d in self._docs.values()]

    def put(self, doc_id: str, title: str, content: str) -> Document:
        """Replace title and content verbatim; a milestone without author (§2.5)."""
        with self._lock:
            doc = self._live(doc_id)
            now = self._clock.now()
            doc.title, doc.content = title, content
            doc.version, doc.updated_at = doc.version + 1, now
            self._record(doc_id, HistoryEntry(doc.version, title, content, "UPDATED", now, True))
            return dataclasses.replace(doc)

    def rename(self, doc_id: str, title: str, expected_version: int) -> Document:
        """Trimmed title, optimistic check, ``RENAMED`` milestone without author (§2.7)."""
        trimmed = title.strip()
        if not trimmed:
            raise bad_request("Der Titel darf nicht leer sein.")
        if utf16_len(trimmed) > 255:
            raise bad_request("Der Titel ist länger als 255 Zeichen.")
        with self._lock:
            doc = self._live(doc_id)
            if expected_version != doc.version:
                raise ApiError(
                    409,
                    TITLE_CONFLICT,
                    f"Erwartete Version {expected_version}, aktuell ist Version {doc.version}.",
                )
            now = self._clock.now()
            doc.title, doc.version, doc.updated_at = trimmed, doc.version + 1, now
            self._record(
                doc_id, HistoryEntry(doc.version, trimmed, doc.content, "RENAMED", now, True)
            )
            return dataclasses.replace(doc)

    def delete(self, doc_id: str) -> None:
        """Remove the row, keep a ``DELETED`` tombstone with the last title and content (§2.8)."""
        with self._lock:
            doc = self._live(doc_id)
            del self._docs[doc_id]
            version = self._history[doc_id][-1].version + 1
            entry = HistoryEntry(
                version, doc.title, doc.content, "DELETED", self._clock.now(), True
            )
            self._record(doc_id, entry)

    def restore(self, doc_id: str, version: int | None) -> Document:
        """Undelete from the tombstone, or roll back/restore to a stored version (§2.9)."""
        with self._lock:
            history = self._history.get(doc_id)
            if not history:
                raise not_found(doc_id)
            doc = self._docs.get(doc_id)
            if version is None:
                if doc is not None:
                    raise ApiError(
                        409,
                        TITLE_CONFLICT,
                        f"Dokument {doc_id} existiert noch; zum Rollback bitte eine "
                        "Zielversion angeben",
                    )
                source = history[-1]
                change: ChangeType = "RESTORED"
            else:
                found = [h for h in history if h.version == version and h.change_type != "DELETED"]
                if not found:
                    raise ApiError(
                        404,
                        "Version nicht gefunden",
                        f"Version {version} von Dokument {doc_id} ist nicht (mehr) gespeichert "
                        "oder ist der Löschvermerk.",
                    )
                source = found[0]
                change = "ROLLED_BACK" if doc is not None else "RESTORED"
            now = self._clock.now()
            new_version = max(max(h.version for h in history), doc.version if doc else 0) + 1
            created_at = doc.created_at if doc is not None else history[0].time
            restored = Document(doc_id, source.title, source.content, new_version, created_at, now)
            self._docs[doc_id] = restored
            self._record(
                doc_id, HistoryEntry(new_version, source.title, source.content, change, now, True)
            )
            return dataclasses.replace(restored)

    def history(self, doc_id: str) -> list[HistoryEntry]:
        """All milestones plus the latest entry, oldest first; 404 only without history (§2.10)."""
        with self._lock:
            history = self._history.get(doc_id)
            if not history:
                raise not_found(doc_id)
            shown = [h for h in history[:-1] if h.milestone] + [history[-1]]
            return [dataclasses.replace(h) for h in shown]

    # -- live editing ------------------------------------------------------------------

    def patch_content(self, doc_id: str, req: ContentPatchRequest) -> dict[str, Any]:
        """§5.2 steps 2-13, in that order; returns the 200 body or raises."""
        if len(req.ops) > self._config.max_ops:
            raise bad_request(
                f"Zu viele Operationen: {len(req.ops)} (höchstens {self._config.max_ops})."
            )
        with self._lock:
            remembered = self._patch_log.get(doc_id, req.client_id)
            if remembered is not None:
                if req.seq == remembered.seq:
                    return remembered.outcome
                if req.seq < remembered.seq:
                    raise unapplicable(
                        f"Veraltete Sequenznummer {req.seq} (zuletzt verarbeitet: "
                        f"{remembered.seq}) für Client {req.client_id}."
                    )
            doc = self._docs.get(doc_id)
            if doc is None:
                raise deleted(doc_id) if self._history.get(doc_id) else not_found(doc_id)
            base_is_current = req.base_version == doc.version
            base_text = doc.content if base_is_current else self._stored_base(doc, req.base_version)
            if checksum(base_text) != req.checksum:
                raise unapplicable(
                    f"Prüfsumme passt nicht zum Text der Basisversion {req.base_version}."
                )
            current = lines(doc.content)
            since_base = [] if base_is_current else self._ops.compute_ops(lines(base_text), current)
            mine = self._ops.rebase_ops(list(req.ops), since_base)
            if mine is None:
                raise ContentConflict(doc.version, ops_to_json(since_base))
            try:
                validate_ops(len(current), mine)
                result = self._ops.apply_ops(current, mine)
            except InvalidOps as exc:
                raise unapplicable(str(exc)) from exc
            new_content = text(result)
            if utf16_len(new_content) > self._config.max_content_length:
                raise bad_request(
                    f"Das Dokument wäre {utf16_len(new_content)} Zeichen lang "
                    f"(höchstens {self._config.max_content_length})."
                )
            now = self._clock.now()
            doc.content, doc.version, doc.updated_at = new_content, doc.version + 1, now
            self._record(
                doc_id,
                HistoryEntry(
                    doc.version,
                    doc.title,
                    new_content,
                    "UPDATED",
                    now,
                    req.milestone,
                    req.client_id,
                    req.display_name,
                ),
            )
            outcome = {"version": doc.version, "opsSinceBase": ops_to_json(since_base)}
            self._patch_log.remember(doc_id, req.client_id, req.seq, outcome)
            return outcome

    def _stored_base(self, doc: Document, base_version: int) -> str:
        """§5.2 step 5 for a stale base: a future or compacted version is a 422."""
        if base_version > doc.version:
            raise unapplicable(
                f"Basisversion {base_version} liegt nach der aktuellen Version {doc.version}."
            )
        for entry in self._history[doc.id]:
            if entry.version == base_version:
                return entry.content
        raise unapplicable(
            f"Basisversion {base_version} ist nicht mehr gespeichert; bitte das Dokument neu laden."
        )

    def wait_for_changes(self, doc_id: str, since: int, wait_seconds: float) -> FeedSnapshot | None:
        """Block until the history holds a version after ``since`` or the wait ends (§6).

        ``None`` means "nothing newer" (204).  The check runs under the lock
        before each wait, so a write between check and wait is never missed.
        """
        deadline = time.monotonic() + wait_seconds
        with self._lock:
            while True:
                history = self._history.get(doc_id)
                if not history:
                    raise not_found(doc_id)
                if history[-1].version > since:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closing:
                    return None
                self.waiting += 1
                try:
                    self._changed.wait(remaining)
                finally:
                    self.waiting -= 1
            since_entry = next((h for h in history if h.version == since), None)
            return FeedSnapshot(
                since_content=None if since_entry is None else since_entry.content,
                current_version=history[-1].version,
                current_content=history[-1].content,
                events=tuple(dataclasses.replace(h) for h in history if h.version > since),
            )

    def close(self) -> None:
        """Release every waiting feed request (they answer 204) so shutdown is prompt."""
        with self._lock:
            self._closing = True
            self._changed.notify_all()
