"""A short unified diff for write results: enough for an agent to see what changed."""

from __future__ import annotations

import difflib

MAX_DIFF_LINES = 80


def unified(old: str, new: str, name: str, *, limit: int = MAX_DIFF_LINES) -> str:
    lines = list(
        difflib.unified_diff(
            old.split("\n"), new.split("\n"), f"a/{name}", f"b/{name}", n=1, lineterm=""
        )
    )
    if len(lines) > limit:
        hidden = len(lines) - limit
        lines = [*lines[:limit], f"… {hidden} more diff lines"]
    return "\n".join(lines)
