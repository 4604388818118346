"""The picture (``werkbaum render``): the engine's ``picture`` call per executor and plan,
and the whole command, cold, on the 20k-node plan (issue 17: under 2 s with v8 or node).

Every timed engine call gets its own text (a unique ``%%`` comment line), so the facade's
run cache never answers: each sample parses, analyses and draws.
"""

from __future__ import annotations

import itertools
import subprocess
import tempfile
import time
from pathlib import Path

from tests.plangen import plan

from bench.machine import executors
from bench.paths import BIN, REFERENCE_PLAN, with_comment
from bench.results import Goal, Section, Table
from bench.timing import fmt_ms, median, ms_since, sample
from werkbaum_core import Engine
from werkbaum_stdio.render_cli import PICTURES_ENTRY, draw

LARGE = "generated 20k nodes"
_nonce = itertools.count()


def _command_ms(kind: str, plan_file: Path, out: Path, runs: int) -> float:
    """Median wall time of ``werkbaum render PLAN -o OUT.html`` (a fresh process each run)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [str(BIN / "werkbaum"), "render", "--engine", kind, str(plan_file), "-o", str(out)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        times.append(ms_since(start))
    return median(times)


def run(quick: bool) -> Section:
    kinds = executors()
    loads = [("fixture werkbaum.werkbaum", REFERENCE_PLAN.read_text(encoding="utf-8"))]
    loads.append((LARGE, plan(20000, seed=1)))
    calls: dict[tuple[str, str], float] = {}
    sizes: dict[str, int] = {}
    for kind in kinds:
        with Engine.create(kind, frontend="", extra_entries=(PICTURES_ENTRY,)) as engine:
            for name, text in loads:

                def once(_: int, text: str = text, name: str = name) -> object:
                    drawn = draw(engine, with_comment(text, f"render {next(_nonce)}"), title="x")
                    sizes[name] = len(drawn.encode("utf-8"))
                    return drawn

                large = len(text) > 200_000
                count = 1 if quick else (3 if large else 9)
                calls[(kind, name)] = median(sample(once, count, 20.0 if quick else 90.0))
    headers = ["plan", "picture bytes", *(f"{k} engine call ms" for k in kinds)]
    rows = [
        [name, f"{sizes[name]:,}", *(fmt_ms(calls[(k, name)]) for k in kinds)] for name, _ in loads
    ]
    section = Section("pictures", "Pictures: `werkbaum render`")
    section.tables.append(Table("Picture medians (parse + analysis + drawing)", headers, rows))
    with tempfile.TemporaryDirectory() as tmp:
        plan_file = Path(tmp) / "large.werkbaum"
        plan_file.write_text(dict(loads)[LARGE], encoding="utf-8")
        for kind in kinds:
            ms = _command_ms(kind, plan_file, Path(tmp) / "out.html", 1 if quick else 3)
            name = f"render {kind}: `werkbaum render` 20k nodes, cold command"
            section.goals.append(Goal.time_limit(name, ms, 2000, kind != "dukpy"))
    section.notes.append(
        "Engine call = `picture` on a warm engine (a unique comment line per call); cold "
        "command = a fresh `werkbaum render` process: Python start-up, engine start, the one "
        "call and the write of the HTML file."
    )
    return section
