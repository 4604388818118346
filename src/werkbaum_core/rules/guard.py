"""Guard rails and the warning delta of a write (spec §6.1, §6.2, §5.3).

The engine (writes.js) compares the warnings of two texts by identity — type
plus its identifying fields, never the line number alone, since lines shift —
as multisets, and the nodes that carry ``[^]``. It lists at most 1,000 items
per list (:data:`~werkbaum_core.rules.schemas.MAX_WARNINGS`) and says where it
cut (``{listed, total}``), so a text of a million stray lines costs a bounded
answer; the guard decides on the totals, so a cut never lets a structural
warning through.
"""

from __future__ import annotations

from typing import Any

import attrs

from werkbaum_core.errors import Blocked

Warning = dict[str, Any]

STRUCTURAL = frozenset({"mixedGate", "unknownStatus", "descStray", "duplicateId"})
"""The types whose introduction blocks a write (facade.js decides; the prompts name them)."""


def _total(data: dict[str, Any], name: str) -> int:
    cut = data.get(name + "Cut")
    return int(cut["total"]) if cut else len(data.get(name, ()))


def _cut(name: str, items: tuple[Any, ...], total: int) -> dict[str, Any]:
    """``{NAMECut: {listed, total}}`` where the list was cut, else nothing."""
    return {name + "Cut": {"listed": len(items), "total": total}} if total > len(items) else {}


@attrs.frozen(kw_only=True)
class Delta:
    """What a write changes, as the engine lists it: warnings added and removed, the
    structural ones among the added, and the nodes newly ``[^]``."""

    added: tuple[Warning, ...]
    removed: tuple[Warning, ...]
    remaining: int
    added_total: int
    removed_total: int
    structural: tuple[Warning, ...]
    structural_total: int
    prod: tuple[str, ...]
    prod_total: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Delta:
        return cls(
            added=tuple(data.get("added", ())),
            removed=tuple(data.get("removed", ())),
            remaining=int(data.get("remaining", 0)),
            added_total=_total(data, "added"),
            removed_total=_total(data, "removed"),
            structural=tuple(data.get("structural", ())),
            structural_total=_total(data, "structural"),
            prod=tuple(data.get("prod", ())),
            prod_total=_total(data, "prod"),
        )

    def to_json(self) -> dict[str, Any]:
        """The write result's ``warnings``: ``addedCut``/``removedCut`` only where cut."""
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "remaining": self.remaining,
            **_cut("added", self.added, self.added_total),
            **_cut("removed", self.removed, self.removed_total),
        }


def check(
    change: Delta,
    *,
    allow_warnings: bool,
    allow_prod: bool,
    what: str = "this change",
) -> Delta:
    """Refuse a change that breaks the notation or claims production; return the delta."""
    if not allow_warnings and change.structural_total:
        raise Blocked(
            f"{what} would introduce {change.structural_total} structural warning(s), listed "
            "in warnings with their lines in the changed text: change it so that they go "
            "(e.g. give a new child the gate its siblings use); pass allowWarnings: true "
            "only if a human asked for it",
            warnings=list(change.structural),
            **_cut("warnings", change.structural, change.structural_total),
            flag="allowWarnings",
        )
    if not allow_prod and change.prod_total:
        more = change.prod_total - len(change.prod)
        named = ", ".join(change.prod) + (f" and {more} more" if more else "")
        raise Blocked(
            f"{what} would mark {named} as in production [^]; that is a "
            "deploy's statement — pass allowProd: true only if a human asked for it",
            nodes=list(change.prod),
            **_cut("nodes", change.prod, change.prod_total),
            flag="allowProd",
        )
    return change
