"""Goal 4: throughput of ``werkbaum-mcp-http`` with 1 and 2 workers under concurrent inspects.

Three kinds of processes share the machine: the server (uvicorn worker(s) and,
with ``--engine node`` or ``dukpy``, their engine children), the local backend stand-in
(``python -m tests.backend``) serving the document, and the load client
(``python -m bench.load``, see there); ``bench.services`` starts them. Their CPU
seconds during each run are read from /proc, so a run limited by the cores, not
by the server's design, shows as such. Every mode and connection kind runs on
the same server start.

The goals run ``--engine v8`` (issue 16; the default when installed): the JS runs
in the worker process with the GIL released, so the worker's event loop must keep
answering ``/healthz`` (p99 ≤ 50 ms under the text load) and two workers must
scale. Information rows: the text load with ``--engine node`` (JS in a child per
worker) and ``--engine dukpy`` (JS in a child Python process per worker, as the
servers run dukpy).
"""

from __future__ import annotations

import itertools
import secrets
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from bench.machine import executors
from bench.paths import reference_text
from bench.procs import (
    children,
    cpu_seconds,
    machine_busy_seconds,
    tree,
    tree_cpu_seconds,
)
from bench.results import Goal, Section, Table
from bench.services import backend, load, server
from bench.timing import fmt_ms, fmt_ratio, percentile
from werkbaum_core.engine import choose_executor

TARGET = 1.6
HEALTHZ_P99_MS = 50.0
GOAL_ENGINE = "v8"
MODES = ("source", "text")
CONNECTIONS = ("keep-alive", "close")


@dataclass(frozen=True)
class Run:
    engine: str
    workers: int
    mode: str
    connection: str
    result: dict[str, Any]
    server_cpu_s: float
    backend_cpu_s: float
    per_worker: list[tuple[float, float]]
    """CPU seconds (Python worker, its engine child) of each worker."""
    other_cpu_s: float
    """CPU seconds the machine spent on processes outside this benchmark."""

    @property
    def calls(self) -> int:
        return len(self.result["latencies_ms"])

    @property
    def throughput(self) -> float:
        return self.calls / float(self.result["elapsed_s"])


def workers_of(pid: int, count: int) -> list[int]:
    """The uvicorn worker processes: the server itself, or (``--workers`` > 1) the
    supervisor's children that multiprocessing spawned (not its resource tracker)."""
    if count == 1:
        return [pid]
    return [c for c in children(pid) if b"spawn_main" in command_line(c)]


def command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def cpu_snapshot(pid: int) -> dict[int, float]:
    return {p: cpu_seconds(p) for p in tree(pid)}


def per_worker(
    pid: int, count: int, before: dict[int, float], after: dict[int, float]
) -> list[tuple[float, float]]:
    split = []
    for worker in workers_of(pid, count):
        engines = children(worker)
        python = after.get(worker, 0.0) - before.get(worker, 0.0)
        node = sum(after.get(c, 0.0) - before.get(c, 0.0) for c in engines)
        split.append((python, node))
    return split


def fresh_probe(url: str) -> float:
    """ms for ``GET /healthz`` on a new connection (raw socket: no client set-up cost)."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    request = f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
    start = time.perf_counter()
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(request.encode())
        while sock.recv(65536):
            pass
    return (time.perf_counter() - start) * 1000


def idle_probes(url: str, count: int = 50) -> dict[str, list[float]]:
    """``GET /healthz`` latencies (ms) with no other load: each on a new connection (as the
    load's prober), and back to back on one keep-alive connection."""
    fresh = []
    for _ in range(count):
        fresh.append(fresh_probe(url))
        time.sleep(0.01)
    kept = []
    with httpx.Client(timeout=10) as client:
        client.get(f"{url}/healthz")
        for _ in range(count):
            start = time.perf_counter()
            client.get(f"{url}/healthz")
            kept.append((time.perf_counter() - start) * 1000)
    return {"new connection": fresh, "keep-alive, back to back": kept}


def measure_server(
    engine: str,
    url: str,
    pid: int,
    backend_pid: int,
    job: dict[str, Any],
    workers: int,
    quick: bool,
    combos: list[tuple[str, str]] | None = None,
) -> tuple[list[Run], dict[str, list[float]]]:
    idle = idle_probes(url, 20 if quick else 50)
    runs = []
    for mode, connection in combos or list(itertools.product(MODES, CONNECTIONS)):
        if connection == CONNECTIONS[0]:  # new connections reach every worker: all warm
            warm = {**job, "mode": mode, "connection": "close", "calls": 2, "deadline_s": 60}
            load({**warm, "nonce": f"warm{workers}"}, 120)
        before, backend_cpu = cpu_snapshot(pid), tree_cpu_seconds(backend_pid)
        machine = machine_busy_seconds()
        measured = {**job, "mode": mode, "connection": connection, "nonce": f"w{workers}"}
        result = load(measured, float(job["deadline_s"]) + 60)
        after, backend_cpu = cpu_snapshot(pid), tree_cpu_seconds(backend_pid) - backend_cpu
        machine = machine_busy_seconds() - machine
        server_cpu = sum(after.values()) - sum(before.get(p, 0.0) for p in after)
        ours = server_cpu + backend_cpu + result["client_cpu_s"]
        runs.append(
            Run(
                engine,
                workers,
                mode,
                connection,
                result,
                server_cpu,
                backend_cpu,
                per_worker(pid, workers, before, after),
                max(0.0, machine - ours),
            )
        )
    return runs, idle


def run(quick: bool) -> Section:
    clients, calls = 16, (4 if quick else 50)
    token = secrets.token_hex(24)
    text = reference_text()
    text = text if text.endswith("\n") else text + "\n"
    installed = executors()
    engine = GOAL_ENGINE if GOAL_ENGINE in installed else choose_executor(None, {})
    runs: list[Run] = []
    idle: dict[int, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="werkbaum-bench-") as tmp, backend() as (base, bk):
        created = httpx.post(
            f"{base}/api/v1/documents", json={"title": "werkbaum", "content": text}, timeout=30
        )
        created.raise_for_status()
        document = f"{base}/api/v1/documents/{created.json()['id']}"
        job = {
            "token": token,
            "clients": clients,
            "calls": calls,
            "document": document,
            "text": text,
            "probe_interval_s": 0.02,
            "deadline_s": 30 if quick else 240,
        }
        log = Path(tmp) / "server.log"
        for workers in (1, 2):
            with server(base, workers, token, log, "--engine", engine) as (url, process):
                job["url"] = url
                measured, idle[workers] = measure_server(
                    engine, url, process.pid, bk.pid, job, workers, quick
                )
                runs.extend(measured)
        # Info: the text load on the other executors (JS in a child process).
        others: list[Run] = []
        for kind in [k for k in ("node", "dukpy") if k in installed and k != engine]:
            for workers in (1, 2):
                with server(base, workers, token, log, "--engine", kind) as (url, process):
                    job["url"] = url
                    measured, _ = measure_server(
                        kind, url, process.pid, bk.pid, job, workers, quick, [("text", "close")]
                    )
                    others.extend(measured)
    return report(engine, runs, idle, clients, calls, others)


def report(
    engine: str,
    runs: list[Run],
    idle: dict[int, dict[str, list[float]]],
    clients: int,
    calls: int,
    others: list[Run],
) -> Section:
    section = Section("http", f"4. HTTP throughput (werkbaum-mcp-http --engine {engine})")
    rows = []
    for r in [*runs, *others]:
        lat, probes = r.result["latencies_ms"], r.result["probes_ms"]
        statuses = ", ".join(f"{k}x{v}" for k, v in r.result["statuses"].items())
        elapsed = r.result["elapsed_s"]
        split = " · ".join(f"{py / elapsed:.2f}+{node / elapsed:.2f}" for py, node in r.per_worker)
        rows.append(
            [
                f"{r.workers} ({r.engine})",
                r.mode,
                r.connection,
                f"{r.calls}/{r.result['planned']}",
                f"{r.throughput:.1f}",
                fmt_ms(percentile(lat, 50)),
                fmt_ms(percentile(lat, 99)),
                str(r.result["failures"]) + (f" ({statuses})" if statuses else ""),
                f"{fmt_ms(percentile(probes, 50))} / {fmt_ms(percentile(probes, 99))}",
                f"{r.server_cpu_s * 1000 / max(r.calls, 1):.1f}",
                split,
                f"{r.backend_cpu_s / elapsed:.2f}",
                f"{r.result['client_cpu_s'] / elapsed:.2f}",
                f"{r.other_cpu_s / elapsed:.2f}",
            ]
        )
    headers = ["workers (engine)", "mode", "connection", "calls", "calls/s", "p50 ms", "p99 ms"]
    headers += ["failures"]
    headers += ["healthz p50 / p99 ms", "server CPU ms/call", "cores per worker (py+child)"]
    headers += ["cores backend", "cores client", "cores other"]
    section.tables.append(Table("HTTP load", headers, rows))
    section.tables.append(
        Table(
            f"GET /healthz without load (baseline of the probe column; {engine})",
            ["workers", "connection", "p50 ms", "p99 ms", "n"],
            [
                [str(w), c, fmt_ms(percentile(v, 50)), fmt_ms(percentile(v, 99)), str(len(v))]
                for w, kinds in idle.items()
                for c, v in kinds.items()
            ],
        )
    )
    by = {(r.workers, r.mode, r.connection): r for r in runs}
    for mode, connection in itertools.product(MODES, CONNECTIONS):
        one, two = by[(1, mode, connection)], by[(2, mode, connection)]
        ratio = two.throughput / one.throughput
        section.goals.append(
            Goal(
                f"HTTP {engine}, {mode}, {connection}: throughput 2 workers / 1 worker",
                f"{fmt_ratio(ratio)} ({two.throughput:.1f} vs {one.throughput:.1f} calls/s)",
                f"≥ {TARGET}x",
                ratio >= TARGET,
            )
        )
    text_runs = [r for r in runs if r.mode == "text"]
    worst = max(text_runs, key=lambda r: percentile(r.result["probes_ms"], 99))
    worst_p99 = percentile(worst.result["probes_ms"], 99)
    section.goals.append(
        Goal(
            f"HTTP {engine}, text: /healthz p99 under the load (worst of its 4 runs)",
            f"{fmt_ms(worst_p99)} ms ({worst.workers} worker(s), {worst.connection})",
            f"≤ {HEALTHZ_P99_MS:.0f} ms",
            worst_p99 <= HEALTHZ_P99_MS,
        )
    )
    for kind in dict.fromkeys(r.engine for r in others):
        one, two = (r for r in others if r.engine == kind)
        ratio = two.throughput / one.throughput
        p99 = max(percentile(r.result["probes_ms"], 99) for r in (one, two))
        section.goals.append(
            Goal(
                f"HTTP {kind}, text, close: 2 workers / 1 worker; healthz p99 (worst)",
                f"{fmt_ratio(ratio)} ({two.throughput:.1f} vs {one.throughput:.1f} calls/s); "
                f"{fmt_ms(p99)} ms",
                "- (info)",
                None,
            )
        )
    failures = sum(r.result["failures"] for r in [*runs, *others])
    section.goals.append(Goal("HTTP failures (all runs)", str(failures), "0", failures == 0))
    sequential = {w: percentile(kinds["keep-alive, back to back"], 50) for w, kinds in idle.items()}
    section.goals.append(
        Goal(
            "HTTP sequential keep-alive request, p50 (GET /healthz back to back, 1 / 2 workers)",
            " / ".join(f"{fmt_ms(v)} ms" for v in sequential.values()),
            "-",
            None,
        )
    )
    section.notes.append(
        f"{clients} concurrent clients x {calls} werkbaum_inspect calls per run; keep-alive = "
        "each client keeps one connection, close = a new connection per call; source = the "
        "document URL (the backend serves it each call, the analysis cache answers); text = "
        "werkbaum.werkbaum plus a unique comment line (full JS work each call). A prober "
        "sends GET /healthz on a new connection every 20 ms during each run. The load "
        "client, the backend stand-in and the server share the machine's cores; 'cores' = "
        "CPU seconds / wall seconds of the run (py = the worker process, with v8 "
        "including the JS; child = its node or dukpy process); 'other' = the machine's busy time "
        "outside this benchmark (/proc/stat), i.e. other work on the shared machine."
    )
    return section
