"""Goal 1: the engine's analysis per executor and workload (uncached), and its scaling.

``Engine.analyze_json`` caches whole analyses by text digest, and ``facade.js``
keeps the last pipeline runs by text, so repeating one text would time a cache
hit. Every timed call therefore gets its own text: the workload plus a unique
``%%`` comment line (ignored by the notation, so the plan is the same). The
``cached`` column is the digest hit for comparison.

The v8 rows (issue 16): the Python API on the v8 executor against V8's own time
for the same analysis in a plain node process (``v8_floor.mjs``), both JIT-warm
after the same number of analyses of other texts — ``analysis_text`` (the answer
as JSON text in Python: the whole crossing) for the goal, ``analyze_json`` (plus
``json.loads``) beside it; and the crossing alone — the 67 KB text in and the
75 KB answer out, with no analysis (``crossing.js`` answers a result computed
once) — per executor, next to what V8 needs to stringify it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from tests.plangen import coupled_closure_plan, plan

from bench.machine import executors
from bench.paths import FIXTURES, reference_text, with_comment
from bench.results import Goal, Section, Table
from bench.stdio import JIT_WARMUP, v8_floor
from bench.timing import fmt_ms, fmt_ratio, median, ms_since, sample
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


CROSSING_JS = Path(__file__).with_name("crossing.js")
V8_FLOOR_RATIO = 2.5
V8_LARGE_MS = 150.0


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
    if "v8" in kinds:
        section.goals.append(
            Goal.time_limit("engine v8: 20k nodes", fresh[("v8", LARGE)], V8_LARGE_MS, True)
        )
        if node_binary():
            _against_the_floor(section, quick)
    _crossing(section, kinds, quick)
    section.notes.append(
        "Uncached = a unique `%%` comment line per call (digest cache and facade run cache "
        "miss); cached = the same text again (digest hit: sha256 + json.loads). n = samples "
        "per executor, after one untimed warm-up call (--quick: one sample and no warm-up "
        "for plans over 200,000 characters)."
    )
    return section


def _against_the_floor(section: Section, quick: bool) -> None:
    """Python API on v8 vs V8 in node, uncached werkbaum.werkbaum, both JIT-warm alike.

    The goal row times ``Engine.analysis_text``: the plan text in, the analysis out as
    the JSON text the facade wrote, a Python str (the whole crossing). The info row
    times ``analyze_json`` on the same footing, which adds Python's ``json.loads`` of
    that text. Calls alternate between the two, each on a new text, so that both see
    the same JIT and heap.
    """
    count, budget = (20, 15.0) if quick else (60, 60.0)
    text = reference_text()
    floor = median(v8_floor(FIXTURES / "werkbaum.werkbaum", count, budget)["uncached"])
    with Engine.create("v8", frontend="") as engine:
        for i in range(JIT_WARMUP):  # the floor's warm-up: analyses of other texts
            engine.analysis_text(with_comment(text, f"warm {i}"))
        calls: dict[str, Callable[[str], object]] = {
            "text": engine.analysis_text,
            "json": engine.analyze_json,
        }
        times: dict[str, list[float]] = {kind: [] for kind in calls}
        deadline = time.monotonic() + budget
        for i in range(count):
            for kind, call in calls.items():
                fresh = with_comment(text, f"engine {kind} {i}")
                start = time.perf_counter()
                call(fresh)
                times[kind].append(ms_since(start))
            if time.monotonic() > deadline:
                break
    rows = [
        ("engine v8: uncached werkbaum.werkbaum (analysis_text) / V8 in node", "text", True),
        ("engine v8: the same with json.loads (analyze_json) / V8 in node", "json", False),
    ]
    for name, kind, judged in rows:
        ours = median(times[kind])
        ratio = ours / floor
        section.goals.append(
            Goal(
                name,
                f"{fmt_ratio(ratio)} ({fmt_ms(ours)} vs {fmt_ms(floor)} ms)",
                f"≤ {V8_FLOOR_RATIO:g}x" if judged else "- (info)",
                ratio <= V8_FLOOR_RATIO if judged else None,
            )
        )


def _cross(engine: Engine, text: str, i: int) -> str:
    return engine.executor.call_text("crossing", {"text": with_comment(text, f"x{i}")})


def _crossing(section: Section, kinds: list[str], quick: bool) -> None:
    """The text in and the answer out, without the analysis: what each executor adds."""
    text = reference_text()
    count, budget = (20, 10.0) if quick else (200, 30.0)
    rows = []
    for kind in kinds:
        with Engine.create(kind, frontend="", extra_entries=[CROSSING_JS]) as engine:
            answer = engine.executor.call_text("crossing", {"text": text})
            for i in range(JIT_WARMUP):
                engine.executor.call_text("crossing", {"text": with_comment(text, str(i))})
            calls = sample(partial(_cross, engine, text), count, budget)
            stringify = float(engine.call("crossingStringify", {}))
        rows.append(
            [kind, f"{len(text):,}", f"{len(answer):,}", fmt_ms(median(calls)), fmt_ms(stringify)]
        )
        section.goals.append(
            Goal(
                f"engine {kind}: crossing (text in, answer out)",
                f"{fmt_ms(median(calls))} ms",
                "- (info)",
                None,
            )
        )
    headers = ["executor", "chars in", "chars out", "median ms", "of it: stringify in JS, ms"]
    section.tables.append(Table("Crossing without analysis", headers, rows))
