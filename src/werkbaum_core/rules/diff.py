"""A short unified diff for write results and conflicts: enough for an agent to see
what changed, bounded so that a large change cannot flood its context."""

from __future__ import annotations

import difflib

MAX_DIFF_LINES = 80


def unified(old: str, new: str, name: str, *, limit: int = MAX_DIFF_LINES) -> str:
    return bounded(old, new, name, limit=limit)[0]


def bounded(
    old: str, new: str, name: str, *, limit: int = MAX_DIFF_LINES, max_chars: int | None = None
) -> tuple[str, bool]:
    """The diff cut after ``limit`` lines (and ``max_chars`` characters), and whether it was.

    A cut diff ends in a line that says how many diff lines are left out.
    """
    lines = list(
        difflib.unified_diff(
            old.split("\n"), new.split("\n"), f"a/{name}", f"b/{name}", n=1, lineterm=""
        )
    )
    kept = lines[:limit]
    if max_chars is not None:
        used = 0
        for count, line in enumerate(kept):
            used += len(line) + 1
            if used > max_chars:
                kept = kept[:count]
                break
    if len(kept) == len(lines):
        return "\n".join(lines), False
    return "\n".join([*kept, f"… {len(lines) - len(kept)} more diff lines"]), True
