"""The mirror commit's message: subject, who changed which version, trailers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import attrs

VERSION_TRAILER = "Werkbaum-Version"
CHANGED_BY_TRAILER = "Werkbaum-Changed-By"
HAND_EDIT_TRAILER = "Werkbaum-Hand-Edit"
SUBJECT_PREFIX = "Werkbaum-Stand vom "
UNNAMED = "(unnamed)"
NOT_IN_HISTORY = "(not in history)"
BODY_WIDTH = 72


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
    fetched: Fetched,
    via: str | None,
    history: Iterable[Any],
    bound: int | None,
    kept: str | None = None,
) -> str:
    """Subject, the ``v7 Anna · v8 Claude Code`` body, and the trailers (module docstring);
    ``kept`` is the stash that holds the hand edit this commit overwrites.

    The agent the subject names (``via``) wrote one of the new versions, even
    when the history no longer shows it (compacted, documents-api §5.4): it
    then closes the ``Werkbaum-Changed-By`` trailers, so that they name
    everyone the subject claims. With no new version since ``bound`` the
    commit records no one's change, and the subject names no agent."""
    changes = changes_since(history, bound, fetched.version)
    names = list(dict.fromkeys(change.name for change in changes if change.name))
    agent = one_line(via or "") if bound is None or bound < fetched.version else ""
    if agent and agent not in names:
        names.append(agent)
    trailers = [f"{CHANGED_BY_TRAILER}: {name}" for name in names]
    if kept is not None:
        trailers.append(f"{HAND_EDIT_TRAILER}: kept in git stash {kept}")
    trailers.append(f"{VERSION_TRAILER}: {fetched.version}")
    paragraphs = [subject(fetched, agent)]
    body = wrap_items(body_items(changes, bound, fetched.version))
    if body:
        paragraphs.append(body)
    paragraphs.append("\n".join(trailers))
    return "\n\n".join(paragraphs) + "\n"
