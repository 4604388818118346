"""``nox -s bench`` / ``python -m bench [--quick] [--only NAME]``: the benchmark suite.

Prints one Markdown report on stdout: the machine, every goal's measured
value or ratio next to its target, then each section's tables. Progress goes
to stderr. Timings are medians (and p50/p99 where asked) over repeated runs in
this one invocation; every ratio compares numbers taken in the same run.
Nothing here asserts: a missed goal is a row in the report, not a failure.
The exit code is 1 only when a section could not run at all.

Sections (goal numbers as in BENCHMARKS.md): engine (1), stdio (2),
coldstart (3), http (4), memory (5), pictures (``werkbaum render``). ``--quick``
takes fewer samples (a smoke run of about a minute); the full run takes several
minutes.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable

from bench import coldstart, engine, http_throughput, machine, memory, pictures, stdio
from bench.report import render
from bench.results import Section

SECTIONS: dict[str, Callable[[bool], Section]] = {
    "engine": engine.run,
    "stdio": stdio.run,
    "coldstart": coldstart.run,
    "http": http_throughput.run,
    "memory": memory.run,
    "pictures": pictures.run,
}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples: a ~1 minute smoke run")
    parser.add_argument(
        "--only",
        action="append",
        choices=list(SECTIONS),
        metavar="NAME",
        help=f"run only this section (repeatable): {', '.join(SECTIONS)}",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    chosen = [name for name in SECTIONS if not args.only or name in args.only]
    command = "python -m bench" + (" --quick" if args.quick else "")
    command += "".join(f" --only {name}" for name in args.only or ())
    described = machine.describe()
    started = time.monotonic()
    sections: list[Section] = []
    failures: list[str] = []
    for name in chosen:
        print(f"bench: {name} …", file=sys.stderr, flush=True)
        section_start = time.monotonic()
        try:
            sections.append(SECTIONS[name](args.quick))
        except Exception as exc:
            traceback.print_exc()
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
        took = time.monotonic() - section_start
        print(f"bench: {name} took {took:.0f} s", file=sys.stderr, flush=True)
    finished = [
        ("load average 1/5/15 min at end", machine.load_average()),
        ("wall time of the run", f"{time.monotonic() - started:.0f} s"),
    ]
    print(render(command, described, sections, failures, finished))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
