"""The plan files an agent may have meant when a file source names none.

An agent often names a plan by its file name alone (``launch.werkbaum`` for
``examples/launch.werkbaum``) or with a slip of the pen. The listing the
server offers (``werkbaum_list``) already knows the right spelling, so a
``not_found`` for a file source carries the closest listed sources in
``didYouMean``, as a node's ``not_found`` carries the closest ids.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from werkbaum_core.errors import NotFound
from werkbaum_core.rules.schemas import LIST_PAGE

if TYPE_CHECKING:  # the catalogue imports this module
    from werkbaum_core.rules.catalogue import PlanFiles

MAX_SUGGESTIONS = 3
"""At most this many sources in ``didYouMean``."""
CLOSENESS = 0.75
"""How alike (difflib's ratio) a listed source's name must be to the one asked for."""


def similar_sources(wanted: str, listed: Iterable[str]) -> list[str]:
    """Listed sources with the wanted file name in another folder first, then those whose
    name is close to it; document order within each, at most :data:`MAX_SUGGESTIONS`."""
    sources = list(listed)
    name = _file_name(wanted)
    names = [_file_name(s) for s in sources]
    same = [s for s, n in zip(sources, names, strict=True) if n == name and s != wanted]
    # Compared without the extension, which every plan file shares.
    stems = [_stem(n) for n in names]
    close = set(difflib.get_close_matches(_stem(name), stems, n=len(stems), cutoff=CLOSENESS))
    alike = [s for s, t in zip(sources, stems, strict=True) if t in close and s not in same]
    return (same + alike)[:MAX_SUGGESTIONS]


def _file_name(source: str) -> str:
    """The last part of a source (sources are '/'-separated paths)."""
    return source.rstrip("/").rsplit("/", 1)[-1]


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name


HINT_PAGES = 3
"""Listing pages a missing file's suggestions are drawn from (a not_found only)."""


def with_plan_hints(error: NotFound, plan_files: PlanFiles | None) -> NotFound:
    """A missing plan file's error with the listed sources the agent may have meant
    and where to find the rest; a node's not_found (it names the id) as it is. (An
    unknown document is source_unavailable, never not_found.)"""
    source = error.details.get("source")
    if (
        plan_files is None
        or not isinstance(source, str)
        or "id" in error.details
        or "didYouMean" in error.details
    ):
        return error
    listed: list[str] = []
    cursor: str | None = None
    for _ in range(HINT_PAGES):
        page = plan_files.list_plans(cursor, limit=LIST_PAGE, lines=False)
        listed.extend(plan.source for plan in page.plans)
        cursor = page.next_cursor
        if cursor is None:
            break
    meant = similar_sources(source, listed)
    message = f"{error.message}; werkbaum_list lists the plan files"
    return NotFound(message, **error.details, didYouMean=meant or None)
