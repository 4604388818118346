"""Goal 3: spawn → answer of the first ``tools/list``, werkbaum-mcp vs a minimal MCPServer.

Both servers are driven by the same raw JSON-RPC client over pipes (legacy
handshake: ``initialize``, ``notifications/initialized``, ``tools/list``), so
the client's cost is equal. Runs alternate between the two servers, so a
change in machine load hits both alike.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from tests.rawrpc import PipeClient

from bench.paths import ECHO_ARGV, STDIO_SERVER, clean_env
from bench.results import Goal, Section, Table
from bench.timing import fmt_ms, fmt_ratio, median

TARGET = 1.5


def commands(project: Path) -> dict[str, list[str]]:
    return {
        "werkbaum-mcp": [str(STDIO_SERVER), "--root", str(project)],
        "echo MCPServer": ECHO_ARGV,
    }


def one_start(argv: Sequence[str], project: Path) -> tuple[float, float]:
    with PipeClient(argv, project, clean_env()) as client:
        return client.handshake()


def run(quick: bool) -> Section:
    runs = 2 if quick else 7
    with tempfile.TemporaryDirectory(prefix="werkbaum-bench-") as tmp:
        project = Path(tmp)
        argvs = commands(project)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in argvs}
        for argv in argvs.values():  # untimed: fill the OS page cache, compile .pyc
            one_start(argv, project)
        for i in range(runs):
            order = list(argvs) if i % 2 == 0 else list(reversed(argvs))
            for name in order:
                samples[name].append(one_start(argvs[name], project))
    rows = []
    medians = {}
    for name, values in samples.items():
        init = median([v[0] for v in values])
        listed = median([v[1] for v in values])
        medians[name] = listed
        spread = f"{fmt_ms(min(v[1] for v in values))}-{fmt_ms(max(v[1] for v in values))}"
        rows.append([name, fmt_ms(init), fmt_ms(listed), spread, str(len(values))])
    ratio = medians["werkbaum-mcp"] / medians["echo MCPServer"]
    section = Section("coldstart", "3. Cold start: spawn → first tools/list answer")
    headers = ["server", "initialize ms", "tools/list ms", "min-max", "n"]
    section.tables.append(Table("Cold start medians", headers, rows))
    section.goals.append(
        Goal(
            "cold start werkbaum-mcp / echo MCPServer",
            f"{fmt_ratio(ratio)} ({fmt_ms(medians['werkbaum-mcp'])} ms vs "
            f"{fmt_ms(medians['echo MCPServer'])} ms)",
            f"≤ {TARGET}x",
            ratio <= TARGET,
        )
    )
    return section
