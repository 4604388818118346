"""Where the time goes, for BENCHMARKS.md: ``python -m bench.profiles {engine,stdio,http}``.

- ``engine``: JS-side milliseconds per pipeline phase (``bench/phases.js``) on
  each executor, next to the whole ``analyze_json`` call, for the workloads of
  goal 1's ratios.
- ``stdio``: cProfile of the stdio server in every thread (``bench.profiled``)
  over warm ``werkbaum_inspect`` calls from a raw pipe client, then cProfile of
  the official ``mcp`` client making the same calls.
- ``http``: cProfile of a one-worker ``werkbaum-mcp-http`` in every thread under
  the text-mode load of goal 4.

Profiles start after warm-up (``SIGUSR1``) and count thread CPU time, so the
tables show work, not waiting; each loop is bounded in count. Output is
Markdown on stdout.
"""

from __future__ import annotations

import argparse
import os
import pstats
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from tests.plangen import coupled_closure_plan, plan
from tests.rawrpc import PipeClient

from bench import machine, services
from bench.machine import executors
from bench.paths import REFERENCE_PLAN, REPO, STDIO_SERVER, clean_env, reference_text, with_comment
from bench.report import table
from bench.timing import fmt_ms, median, sample
from werkbaum_core import Engine

PHASES = Path(__file__).with_name("phases.js")
SITE = str(Path(sys.prefix) / "lib")


def short(where: tuple[str, int, str]) -> str:
    path, line, name = where
    if path == "~":
        return name
    for prefix in (str(REPO) + "/", SITE):
        path = path.replace(prefix, "")
    path = path.split("site-packages/")[-1].split("lib/python3.11/")[-1]
    return f"{path}:{line}({name})"


IDLE = ("acquire' of '_thread.lock", "poll' of 'select.epoll", "select.select", "time.sleep")
"""Threads waiting, not working: left out of the tables (their time is idle wall time)."""


def top(stats: pstats.Stats, key: str, count: int, calls: int) -> list[str]:
    """The ``count`` heaviest functions by ``key`` (tottime/cumtime), ms per measured call."""
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    index = 2 if key == "tottime" else 3
    working = [item for item in raw.items() if not any(i in item[0][2] for i in IDLE)]
    heaviest = sorted(working, key=lambda item: item[1][index], reverse=True)[:count]
    rows = [
        [f"{v[2] * 1000 / calls:.2f}", f"{v[3] * 1000 / calls:.2f}", str(v[1]), short(k)]
        for k, v in heaviest
    ]
    total = stats.total_tt * 1000 / calls  # type: ignore[attr-defined]
    rows.append(["", "", "", f"all profiled threads together: {total:.2f} ms CPU per call"])
    return table(["own CPU ms/call", "incl. callees ms/call", "ncalls", "function"], rows)


def fresh_analysis(engine: Engine, text: str) -> Callable[[int], object]:
    return lambda i: engine.analyze_json(with_comment(text, f"whole {i}"))


def engine_phases() -> None:
    loads = {
        "werkbaum.werkbaum": reference_text(),
        "generated 1k nodes": plan(1000, seed=1),
        "generated 20k nodes": plan(20000, seed=1),
        "closure 14 coupled groups": coupled_closure_plan(14, 2000),
    }
    names = ["parse", "cheapestPath", "warnings", "shaping", "toJSON"]
    rows = []
    for kind in executors():
        with Engine.create(kind, frontend="", extra_entries=[PHASES]) as engine:
            for name, text in loads.items():
                count = 1 if len(text) > 500_000 else 3
                runs = [
                    engine.call("phases", {"text": with_comment(text, f"phases {i}")})
                    for i in range(count)
                ]
                whole = sample(fresh_analysis(engine, text), count, 120)
                cells = [fmt_ms(median([float(r[p]) for r in runs])) for p in names]
                if runs[0]["estimated"]:
                    cells[names.index("shaping")] += " (est.)"
                rows.append([kind, name, *cells, fmt_ms(median(whole))])
    print("### JS-side phases (ms, median)\n")
    print("\n".join(table(["executor", "workload", *names, "analyze_json total"], rows)))
    print(
        "\nparse = parser.parse; cheapestPath = model.computeCheapPlan; warnings = overload + "
        "mixedGate; shaping = facade analyze on a cached run (tree, effective status, warning "
        "texts, path); est. = the facade caches no runs of texts over 1,000,000 characters, so "
        "there shaping is the whole analyze minus the phases before; toJSON = the executor's "
        "result serialisation. analyze_json total adds the transfer to Python and json.loads."
    )


def profiled_server(out: Path, entry: str, args: list[str]) -> list[str]:
    return [sys.executable, "-m", "bench.profiled", str(out), entry, *args]


def stdio_profile(calls: int, rows: int) -> None:
    with tempfile.TemporaryDirectory(prefix="werkbaum-bench-") as tmp:
        project = Path(tmp)
        shutil.copy(REFERENCE_PLAN, project / "werkbaum.werkbaum")
        out = project / "server.pstats"
        argv = profiled_server(out, "werkbaum_stdio.server_cli:main", ["--root", str(project)])
        with PipeClient(argv, project, clean_env(PYTHONPATH=str(REPO))) as client:
            client.handshake()
            for _ in range(3):
                client.call_tool("werkbaum_inspect", {"source": "werkbaum.werkbaum"})
            os.kill(client.pid, signal.SIGUSR1)
            time.sleep(0.2)
            start = time.perf_counter()
            for _ in range(calls):
                client.call_tool("werkbaum_inspect", {"source": "werkbaum.werkbaum"})
            took = (time.perf_counter() - start) * 1000 / calls
        print(f"### stdio server, warm werkbaum_inspect x{calls} (raw pipe client)\n")
        print(f"{took:.1f} ms per call while profiled.\n")
        print("\n".join(top(pstats.Stats(str(out)), "tottime", rows, calls)))
        client_stats, took = anyio.run(official_client_profile, project, calls)
        print(f"\n### official mcp client, the same calls x{calls}\n")
        print(f"{took:.1f} ms per call while profiled (client side only).\n")
        print("\n".join(top(client_stats, "tottime", rows, calls)))


async def official_client_profile(project: Path, calls: int) -> tuple[pstats.Stats, float]:
    import cProfile

    params = StdioServerParameters(
        command=str(STDIO_SERVER), args=["--root", str(project)], cwd=str(project), env=clean_env()
    )
    async with Client(params) as client:
        for _ in range(3):
            await client.call_tool("werkbaum_inspect", {"source": "werkbaum.werkbaum"})
        profile = cProfile.Profile(time.thread_time)
        start = time.perf_counter()
        profile.enable()
        for _ in range(calls):
            await client.call_tool("werkbaum_inspect", {"source": "werkbaum.werkbaum"})
        profile.disable()
        took = (time.perf_counter() - start) * 1000 / calls
    return pstats.Stats(profile), took


def http_profile(calls: int, rows: int) -> None:
    token = secrets.token_hex(24)
    text = reference_text()
    with (
        tempfile.TemporaryDirectory(prefix="werkbaum-bench-") as tmp,
        services.backend() as (base, _),
    ):
        out = Path(tmp) / "http.pstats"
        port = services.free_port()
        argv = profiled_server(
            out, "werkbaum_http.cli:main", ["--port", str(port), "--server", base, "--workers", "1"]
        )
        log = (Path(tmp) / "server.log").open("ab")
        env = clean_env(WERKBAUM_MCP_TOKEN=token, PYTHONPATH=str(REPO))
        process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=log, stderr=log)
        try:
            url = f"http://127.0.0.1:{port}"
            services.wait_healthy(url, process, Path(tmp) / "server.log")
            job = {"url": url, "token": token, "clients": 16, "calls": 2, "mode": "text"}
            job["connection"] = "keep-alive"
            job |= {"document": "", "text": text, "probe_interval_s": 0.02, "deadline_s": 120}
            services.load({**job, "nonce": "warm"}, 180)
            os.kill(process.pid, signal.SIGUSR1)
            time.sleep(0.2)
            per_client = max(1, calls // 16)
            result = services.load({**job, "calls": per_client, "nonce": "profile"}, 300)
        finally:
            services.stop(process)
            log.close()
        done = len(result["latencies_ms"])
        print(f"### werkbaum-mcp-http, 1 worker, text mode, 16 clients x {per_client}\n")
        print(f"{done / result['elapsed_s']:.1f} calls/s while profiled.\n")
        print("\n".join(top(pstats.Stats(str(out)), "tottime", rows, done)))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profiles", description=__doc__)
    parser.add_argument("what", choices=["engine", "stdio", "http"])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    if args.what == "engine":
        engine_phases()
    elif args.what == "stdio":
        stdio_profile(args.calls, args.top)
    else:
        http_profile(args.calls, args.top)
    print(f"\nload average at the end: {machine.load_average()}")


if __name__ == "__main__":
    main()
