"""Guard rails and the warning delta of a write (spec §6.1, §6.2, §5.3).

The engine labels every warning with an identity ``key`` (type plus its
identifying fields — never the line number alone, since lines shift) and
lists the identities of the nodes that carry ``[^]``. Here those are compared
as multisets: a second occurrence of an identical key is new.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs

from werkbaum_core.errors import Blocked

Warning = dict[str, Any]

STRUCTURAL = frozenset({"mixedGate", "unknownStatus", "descStray", "duplicateId"})


@attrs.frozen
class State:
    """The guard-relevant facts of one text, as the engine's ``edit`` entry reports them."""

    warnings: tuple[Warning, ...]
    prod: tuple[str, ...]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> State:
        return cls(tuple(data.get("warnings", ())), tuple(data.get("prod", ())))


@attrs.frozen
class Delta:
    added: tuple[Warning, ...]
    removed: tuple[Warning, ...]
    remaining: int

    def to_json(self) -> dict[str, Any]:
        return {
            "added": [public(w) for w in self.added],
            "removed": [public(w) for w in self.removed],
            "remaining": self.remaining,
        }


def public(warning: Warning) -> Warning:
    """The warning as agents see it: without the internal identity key."""
    return {k: v for k, v in warning.items() if k != "key"}


def _surplus(items: Sequence[Warning], other: Sequence[Warning]) -> list[Warning]:
    """Items whose key occurs more often here than in ``other`` (the later occurrences)."""
    budget = Counter(w["key"] for w in other)
    out = []
    for w in items:
        if budget[w["key"]] > 0:
            budget[w["key"]] -= 1
        else:
            out.append(w)
    return out


def delta(before: State, after: State) -> Delta:
    added = _surplus(after.warnings, before.warnings)
    removed = _surplus(before.warnings, after.warnings)
    return Delta(tuple(added), tuple(removed), len(after.warnings) - len(added))


def new_prod(before: State, after: State) -> list[str]:
    """Nodes that carry ``[^]`` after but did not before (by id, else label path)."""
    return sorted((Counter(after.prod) - Counter(before.prod)).elements())


def check(
    before: State,
    after: State,
    *,
    allow_warnings: bool,
    allow_prod: bool,
    what: str = "this change",
) -> Delta:
    """Refuse a change that breaks the notation or claims production; return the delta."""
    change = delta(before, after)
    if not allow_warnings:
        broken = [public(w) for w in change.added if w["type"] in STRUCTURAL]
        if broken:
            raise Blocked(
                f"{what} would introduce {len(broken)} structural warning(s), listed in "
                "warnings with their lines in the changed text: change it so that they go "
                "(e.g. give a new child the gate its siblings use); pass allowWarnings: true "
                "only if a human asked for it",
                warnings=broken,
                flag="allowWarnings",
            )
    if not allow_prod:
        prod = new_prod(before, after)
        if prod:
            raise Blocked(
                f"{what} would mark {', '.join(prod)} as in production [^]; that is a "
                "deploy's statement — pass allowProd: true only if a human asked for it",
                nodes=prod,
                flag="allowProd",
            )
    return change
