"""``nox -s bench``: medians of the engine's analysis, per executor, as a Markdown table.

Timings are wall-clock medians over repeated warm calls in one run; ratios
compare sizes within the same run, so they hold across machines better than
the absolute numbers do.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from tests.plangen import coupled_closure_plan, plan

from werkbaum_core import Engine
from werkbaum_core.engine.node_executor import node_binary

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "plans"


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up: JIT, caches, first-call allocation
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def workloads() -> list[tuple[str, str]]:
    items = [
        (f"fixture {p.name}", p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.iterdir())
    ]
    items += [(f"generated {n // 1000}k nodes", plan(n, seed=1)) for n in (1000, 5000, 20000)]
    items.append(("closure 14 coupled groups (~2k nodes)", coupled_closure_plan(14, 2000)))
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    kinds = ["dukpy"] + (["node"] if node_binary() else [])
    loads = workloads()
    results: dict[tuple[str, str], float] = {}
    for kind in kinds:
        with Engine.create(kind, frontend="") as eng:
            for name, text in loads:
                repeat = args.repeat if len(text) < 500_000 else max(3, args.repeat // 2)
                results[(kind, name)] = median_ms(partial(eng.analyze_json, text), repeat)
    print(
        f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, "
        f"Python {platform.python_version()}, {platform.system()}\n"
    )
    header = "| workload | " + " | ".join(f"{k} median ms" for k in kinds) + " |"
    print(header)
    print("|" + "---|" * (len(kinds) + 1))
    for name, _ in loads:
        cells = " | ".join(f"{results[(k, name)]:.1f}" for k in kinds)
        print(f"| {name} | {cells} |")
    print()
    for kind in kinds:
        ratio = results[(kind, "generated 20k nodes")] / results[(kind, "generated 1k nodes")]
        print(f"- {kind}: 20k/1k time ratio {ratio:.1f} (goal ≤ 30)")
        closure = results[(kind, "closure 14 coupled groups (~2k nodes)")]
        print(f"- {kind}: closure worst case {closure:.0f} ms (goal ≤ 2000 ms)")


if __name__ == "__main__":
    main()
