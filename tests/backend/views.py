"""Response bodies (documents-api §2.12), with explicit nulls like upstream's Jackson (§1)."""

from __future__ import annotations

from typing import Any

from tests.backend.clock import iso
from tests.backend.ops import LineOps, lines, ops_to_json
from tests.backend.store import Document, FeedSnapshot, HistoryEntry


def document(doc: Document) -> dict[str, Any]:
    return {
        "id": doc.id,
        "title": doc.title,
        "content": doc.content,
        "version": doc.version,
        "createdAt": iso(doc.created_at),
        "updatedAt": iso(doc.updated_at),
    }


def history_entry(doc_id: str, entry: HistoryEntry) -> dict[str, Any]:
    """The author appears only on content patches; the milestone flag is not exposed."""
    return {
        "documentId": doc_id,
        "version": entry.version,
        "title": entry.title,
        "content": entry.content,
        "changeType": entry.change_type,
        "timestamp": iso(entry.time),
        "clientId": entry.client_id,
        "displayName": entry.display_name,
    }


def change_event(entry: HistoryEntry) -> dict[str, Any]:
    """``title`` only for ``RENAMED`` (§2.11)."""
    return {
        "version": entry.version,
        "changeType": entry.change_type,
        "clientId": entry.client_id,
        "displayName": entry.display_name,
        "title": entry.title if entry.change_type == "RENAMED" else None,
    }


def change_feed(since: int, snap: FeedSnapshot, ops: LineOps) -> dict[str, Any]:
    """Diff form when version ``since`` is still stored, full-text form otherwise."""
    events = [change_event(e) for e in snap.events]
    if snap.since_content is None:
        return {
            "fromVersion": None,
            "currentVersion": snap.current_version,
            "ops": None,
            "content": snap.current_content,
            "events": events,
        }
    diff = ops.compute_ops(lines(snap.since_content), lines(snap.current_content))
    return {
        "fromVersion": since,
        "currentVersion": snap.current_version,
        "ops": ops_to_json(diff),
        "content": None,
        "events": events,
    }
