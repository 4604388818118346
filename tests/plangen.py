"""Generated plans for property tests and benchmarks (deterministic per seed)."""

from __future__ import annotations

import random

STATUSES = [" ", " ", " ", "~", "/", "x", "?", "!", "-"]
SIZES = ["XS", "S", "M", "L", "XL", None, None]
PEOPLE = ["anna", "ben", "carla", "dev"]


def plan(nodes: int, seed: int = 0, *, deps: bool = True) -> str:
    """A well-formed plan of ``nodes`` nodes: ids, gates, sizes, owners, deps, descriptions.

    Sibling groups use one gate each (never mixed), so the plan has no
    structural warnings; content warnings may occur, as in real plans.
    """
    rng = random.Random(seed)
    lines = ["[ ] #root: Generated plan"]
    open_parents = [(0, "root", "-")]  # (depth, id, gate of its children)
    ids = ["root"]
    for i in range(1, nodes):
        depth, parent, gate = rng.choice(open_parents[-8:])
        node_id = f"{parent.split('.')[0]}.n{i}" if depth < 3 else f"n{i}"
        status = rng.choice(STATUSES)
        size = rng.choice(SIZES)
        parts = [f"{'  ' * (depth + 1)}{gate} [{status}] #{node_id}: Task {i}"]
        if size:
            parts.append(f"({size})")
        if rng.random() < 0.3:
            parts.append(f"@{rng.choice(PEOPLE)}")
        if deps and rng.random() < 0.05 and len(ids) > 2:
            parts.append(f":#{rng.choice(ids)}")
        lines.append(" ".join(parts))
        if rng.random() < 0.1:
            lines.append(f'{"  " * (depth + 2)}" Why task {i} matters.')
        ids.append(node_id)
        if depth < 12 and rng.random() < 0.35:
            open_parents.append((depth + 1, node_id, rng.choice("--|")))
    return "\n".join(lines) + "\n"


def coupled_closure_plan(groups: int = 14, filler: int = 2000) -> str:
    """The worst case of the cheapest path: ``groups`` coupled two-member choices.

    Every alternative depends on a shared module, so every group is coupled and
    the exact search enumerates 2**groups assignments (16,384 for 14).
    """
    lines = ["[ ] #root: Closure worst case"]
    per_group = max(1, (filler - 3 * groups) // groups)
    for g in range(groups):
        lines.append(f"  - [ ] #g{g}: Choice {g}")
        lines.append(f"    | [ ] #g{g}.a: Option A (M) :#shared{g % 3}")
        for k in range(per_group // 2):
            lines.append(f"      - [ ] #g{g}.a.{k}: Step {k} (S)")
        lines.append(f"    | [ ] #g{g}.b: Option B (S) :#shared{(g + 1) % 3}")
        for k in range(per_group - per_group // 2):
            lines.append(f"      - [ ] #g{g}.b.{k}: Step {k} (XS)")
    lines.append("  + [ ] #lib: Shared modules")
    for s in range(3):
        lines.append(f"    - [ ] #shared{s}: Shared {s} (L)")
    return "\n".join(lines) + "\n"


def nested_plan(levels: int) -> str:
    """One chain of ``levels`` nodes, each a level deeper (``#n<i>``), in as few
    characters as the notation allows: width i is i // 2 tabs (two columns each) plus
    a space, so 2,000 levels take ~1 M characters and fit the text limit."""
    return "\n".join(
        "\t" * (i // 2) + " " * (i % 2) + f"- [ ] #n{i}: Level {i}" for i in range(levels)
    )
