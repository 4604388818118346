"""Goal 1: the engine's analysis per executor and workload (uncached), and its scaling.

``Engine.analyze_json`` caches whole analyses by text digest, and ``facade.js``
keeps the last pipeline runs by text, so repeating one text would time a cache
hit. Every timed call therefore gets its own text: the workload plus a unique
``%%`` comment line (ignored by the notation, so the plan is the same). The
``cached`` column is the digest hit for comparison.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from tests.plangen import coupled_closure_plan, plan

from bench.paths import FIXTURES, with_comment
from bench.results import Goal, Section, Table
from bench.timing import fmt_ms, median, sample
from werkbaum_core import Engine
from werkbaum_core.engine.node_executor import node_binary

CLOSURE = "closure 14 coupled groups (~2k nodes)"
SMALL, LARGE = "generated 1k nodes", "generated 20k nodes"
_nonce = itertools.count()


def workloads() -> list[tuple[str, str]]:
    items = [
        (f"fixture {p.name}", p.read_text(encoding="utf-8"))
        for p in sorted(FIXTURES.iterdir())
        if p.is_file()
    ]
    items += [(f"generated {n // 1000}k nodes", plan(n, seed=1)) for n in (1000, 5000, 20000)]
    items.append((CLOSURE, coupled_closure_plan(14, 2000)))
    return items


def executors() -> list[str]:
    return ["dukpy"] + (["node"] if node_binary() else [])


def uncached(engine: Engine, text: str) -> Callable[[int], object]:
    def call(_: int) -> object:
        return engine.analyze_json(with_comment(text, f"engine {next(_nonce)}"))

    return call


def measure(engine: Engine, text: str, quick: bool) -> tuple[float, float, int]:
    """(uncached median ms, cached median ms, samples) for one workload."""
    large = len(text) > (200_000 if quick else 500_000)
    count = (1 if large else 3) if quick else (3 if large else 9)
    budget = 20.0 if quick else 90.0
    if not (quick and large):
        uncached(engine, text)(0)  # warm-up: JIT, first-call allocation
    times = sample(uncached(engine, text), count, budget)
    engine.analyze_json(text)  # fill the digest cache
    hits = sample(lambda _: engine.analyze_json(text), 3 if quick else 9, budget)
    return median(times), median(hits), len(times)


def run(quick: bool) -> Section:
    kinds = executors()
    loads = workloads()
    fresh: dict[tuple[str, str], float] = {}
    cached: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    for kind in kinds:
        with Engine.create(kind, frontend="") as engine:
            for name, text in loads:
                key = (kind, name)
                fresh[key], cached[key], counts[key] = measure(engine, text, quick)
    headers = ["workload", "chars"]
    headers += [f"{k} median ms" for k in kinds] + [f"{k} cached ms" for k in kinds] + ["n"]
    rows = []
    for name, text in loads:
        row = [name, f"{len(text):,}"]
        row += [fmt_ms(fresh[(k, name)]) for k in kinds]
        row += [fmt_ms(cached[(k, name)]) for k in kinds]
        row.append("/".join(str(counts[(k, name)]) for k in kinds))
        rows.append(row)
    section = Section("engine", "1. Engine: analysis per executor (uncached, warm)")
    section.tables.append(Table("Engine medians", headers, rows))
    for kind in kinds:
        ratio = fresh[(kind, LARGE)] / fresh[(kind, SMALL)]
        section.goals.append(
            Goal(f"engine {kind}: 20k/1k time ratio", f"{ratio:.1f}x", "≤ 30x", ratio <= 30)
        )
    for kind in kinds:
        closure = fresh[(kind, CLOSURE)]
        default = kind == "dukpy"
        name = f"engine {kind}: closure worst case" + (" (default engine)" if default else "")
        section.goals.append(Goal.time_limit(name, closure, 2000, default))
    section.notes.append(
        "Uncached = a unique `%%` comment line per call (digest cache and facade run cache "
        "miss); cached = the same text again (digest hit: sha256 + json.loads). n = samples "
        "per executor, after one untimed warm-up call (--quick: one sample and no warm-up "
        "for plans over 200,000 characters)."
    )
    return section
