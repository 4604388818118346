"""What a conflict tells the agent: the new base and what changed since its own.

A stale base used to answer with the whole current text (70 KB on the
reference plan) and no word about what changed. Now a conflict carries
``current: {base, diff?, diffCut?, text?}``:

- ``base`` — the current version's base, to pass back on the retry;
- ``diff`` — a unified diff from the agent's base text to the current text,
  bounded (``diffCut: true`` and a closing "… N more diff lines" when cut);
- ``text`` — the whole current text, only when it is short
  (≤ ``MAX_CONFLICT_TEXT`` characters) or when no diff can be computed.

The diff needs the agent's base text. A document store finds it in its cache
or the backend's history; a file store keeps no history, so the server
remembers the texts it handed out (:class:`RecentTexts`: reads, inspects,
write results, conflicts). A base this server never served (another process
read it, or it fell out of the bounded memory) has no diff: the conflict then
carries the whole current text, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from werkbaum_core.errors import Conflict
from werkbaum_core.lru import BoundedCache, memory_of
from werkbaum_core.rules.diff import bounded
from werkbaum_core.stores.protocol import Snapshot

MAX_CONFLICT_TEXT = 8_000
"""The current text rides along only up to this many characters (or without a diff)."""
MAX_CONFLICT_DIFF_LINES = 80
MAX_CONFLICT_DIFF_CHARS = 8_000
"""Bounds of a conflict's diff: beyond them the agent re-reads."""

RECENT_ENTRIES = 32
RECENT_BYTES = 16_000_000
"""Bounds of the remembered texts: entries, and the memory they take in all (the largest
plan, 2,000,000 characters at 4 bytes each and its header, fits)."""


class RecentTexts:
    """The last texts this server handed out or stored, by store key and checksum.

    Thread-safe and bounded. A checksum names exactly one text, so a hit is the
    agent's base text itself.
    """

    def __init__(self, entries: int = RECENT_ENTRIES, max_bytes: int = RECENT_BYTES) -> None:
        self._texts: BoundedCache[tuple[str, str], str] = BoundedCache(
            entries, max_bytes, memory_of
        )

    def remember(self, key: str, snapshot: Snapshot) -> None:
        self._texts.put((key, snapshot.base.checksum), snapshot.text)

    def text(self, key: str, checksum: str) -> str | None:
        return self._texts.get((key, checksum))


def explained(
    error: Conflict, base_text: str | None, name: str, line_refs: Sequence[str] = ()
) -> Conflict:
    """The conflict as the agent gets it: new base, diff from ``base_text``, text if short.

    ``error`` is a store's conflict (``current: {text, base}``); ``base_text``
    is the agent's base text, or None where it is not known. ``line_refs``: the
    ``L<line>`` refs the call named nodes by. They are lines of the agent's base,
    and the same call again with ``current.base`` would take whatever node now
    starts on those lines (a line added above shifts every ref below it), so the
    message says to take them anew.
    """
    current = error.details.get("current")
    if not isinstance(current, dict) or not isinstance(current.get("text"), str):
        return error
    text: str = current["text"]
    shown: dict[str, object] = {"base": current["base"]}
    if base_text is not None:
        diff, cut = bounded(
            base_text,
            text,
            name,
            limit=MAX_CONFLICT_DIFF_LINES,
            max_chars=MAX_CONFLICT_DIFF_CHARS,
        )
        shown["diff"] = diff
        if cut:
            shown["diffCut"] = True
    whole = base_text is None or len(text) <= MAX_CONFLICT_TEXT
    if whole:
        shown["text"] = text
    source = error.details.get("source", name)
    if base_text is None:
        how = "current.text is the whole current text"
    else:
        how = "current.diff shows what changed from your base"
        if not whole:
            how += "; read the plan again if you need more of it"
    message = f"{source} changed since your base: {how}. Apply your change again with current.base"
    if line_refs:
        refs = ", ".join(dict.fromkeys(line_refs))
        message += (
            f", but not with {refs}: a line ref names a line of your base, and lines may have "
            "moved; take the node's ref from the current text (an inspect) again"
        )
    return Conflict(message + ".", **{**error.details, "current": shown})


def exists(error: Conflict) -> Conflict:
    """A create's conflict (the name is taken) as the agent gets it: the existing plan's
    base to write against, and its text only when it is short, as for any conflict."""
    current = error.details.get("current")
    if not isinstance(current, dict) or not isinstance(current.get("text"), str):
        return error
    shown: dict[str, object] = {"base": current["base"]}
    if len(current["text"]) <= MAX_CONFLICT_TEXT:
        shown["text"] = current["text"]
    return Conflict(error.message, **{**error.details, "current": shown})
