"""Goal 5: resident memory of werkbaum-mcp, idle and after one inspect, vs the echo MCPServer.

RSS is VmRSS from /proc, summed over the server and its descendants (the node
executor's child). "Idle" = after the first ``tools/list`` answer and 1 s of
nothing. Since the engine starts on the first call that needs it, an idle
server holds no engine; "after 1 inspect" is the footprint with its engine
loaded, reported per executor next to the goal (which is about idle). The goal
row is the default engine (``auto``: v8 when installed, else node, else dukpy).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from tests.rawrpc import PipeClient

from bench.machine import executors
from bench.paths import ECHO_ARGV, REFERENCE_PLAN, STDIO_SERVER, clean_env
from bench.procs import names, rss_mb, tree, tree_rss_mb
from bench.results import Goal, Section, Table
from bench.timing import median
from werkbaum_core.engine import choose_executor

HEADROOM_MB = 40.0
IDLE_S = 1.0


class Sample(NamedTuple):
    idle: float
    """RSS MiB of the whole tree, idle."""
    main: float
    """RSS MiB of the server process alone, idle."""
    after: float
    """RSS MiB of the whole tree right after one inspect (NaN when not asked)."""
    processes: str
    """Process names idle / after the inspect, e.g. ``werkbaum-mcp / werkbaum-mcp+node``."""


def measure(argv: list[str], project: Path, inspect: bool) -> Sample:
    with PipeClient(argv, project, clean_env()) as client:
        client.handshake()
        time.sleep(IDLE_S)
        idle, main = tree_rss_mb(client.pid), rss_mb(client.pid)
        processes = "+".join(names(tree(client.pid)))
        after = float("nan")
        if inspect:
            client.call_tool("werkbaum_inspect", {"source": "werkbaum.werkbaum"})
            after = tree_rss_mb(client.pid)
            processes += " / " + "+".join(names(tree(client.pid)))
    return Sample(idle, main, after, processes)


def bare_node_mb() -> float:
    """RSS of a node process that does nothing: the floor of any node child."""
    process = subprocess.Popen(["node", "-e", "setTimeout(() => {}, 5000)"])
    try:
        time.sleep(IDLE_S)
        return rss_mb(process.pid)
    finally:
        process.kill()
        process.wait(timeout=10)


def run(quick: bool) -> Section:
    runs = 1 if quick else 3
    default = f"werkbaum-mcp (default: auto = {choose_executor(None, {})})"
    servers = {
        "echo MCPServer": ECHO_ARGV,
        default: [],
        **{f"werkbaum-mcp --engine {kind}": ["--engine", kind] for kind in executors()},
    }
    results: dict[str, list[Sample]] = {name: [] for name in servers}
    with tempfile.TemporaryDirectory(prefix="werkbaum-bench-") as tmp:
        project = Path(tmp)
        shutil.copy(REFERENCE_PLAN, project / "werkbaum.werkbaum")
        argvs = {
            name: args if name.startswith("echo") else [str(STDIO_SERVER), "--root", tmp, *args]
            for name, args in servers.items()
        }
        # Untimed: a first start after an install compiles .pyc files, which costs memory.
        # werkbaum-mcp imports everything the echo server does (mcp, pydantic, anyio …).
        with PipeClient(argvs["werkbaum-mcp --engine dukpy"], project, clean_env()) as client:
            client.handshake()
        for _ in range(runs):
            for name, argv in argvs.items():
                results[name].append(measure(argv, project, inspect=not name.startswith("echo")))
    node_floor = bare_node_mb() if "node" in executors() else float("nan")
    baseline = median([s.idle for s in results["echo MCPServer"]])
    section = Section("memory", "5. Memory: RSS of the stdio server (server + children)")
    rows = []
    for name, samples in results.items():
        idle = median([s.idle for s in samples])
        main = median([s.main for s in samples])
        after = median([s.after for s in samples])
        rows.append(
            [
                name,
                f"{idle:.1f}",
                f"{idle - baseline:+.1f}",
                f"{main:.1f}",
                f"{idle - main:.1f}",
                "-" if name.startswith("echo") else f"{after:.1f}",
                samples[0].processes,
                str(len(samples)),
            ]
        )
        if name == default:
            section.goals.append(
                Goal(
                    f"idle RSS {name} - echo",
                    f"{idle - baseline:+.1f} MiB ({idle:.1f} vs {baseline:.1f})",
                    f"≤ +{HEADROOM_MB:.0f} MiB",
                    idle - baseline <= HEADROOM_MB,
                )
            )
        elif not name.startswith("echo"):
            section.goals.append(
                Goal(
                    f"RSS {name} after 1 inspect (engine loaded) - echo",
                    f"{after - baseline:+.1f} MiB ({after:.1f} vs {baseline:.1f})",
                    "- (info)",
                    None,
                )
            )
    headers = ["server", "idle RSS MiB", "vs echo", "server process", "children"]
    headers += ["after 1 inspect MiB", "processes idle / after", "n"]
    section.tables.append(Table("RSS medians", headers, rows))
    section.notes.append(
        f"Idle = after the first tools/list answer plus {IDLE_S:.0f} s; 'after 1 inspect' = "
        "right after one werkbaum_inspect of werkbaum.werkbaum (not a goal, for the record). "
        "One untimed werkbaum-mcp start comes first (bytecode caches). "
        f"A bare `node -e` process that does nothing: {node_floor:.1f} MiB."
    )
    return section
