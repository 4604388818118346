"""Writer processes for the file store's cross-process tests (run as a script).

``race ROOT FILE FIRST COUNT GO``: sets nodes ``#nFIRST`` … to ``[x]`` through
the real write pipeline, one write per node, re-reading on a conflict; waits
for the file ``GO`` so that two such processes start together; prints a JSON
summary (conflicts seen, start and end time).

``creator ROOT``: for every line ``NAME GO`` on stdin, waits for the file ``GO``
and then creates the plan ``NAME`` with a large text naming this process;
prints ``ok`` or the error code. Two creators given the same lines race to
create the same files.

``forker ROOT FILE [stoppable]``: a single-threaded process that forks a churning
writer on every ``fork`` line on stdin (printing its pid), then reaps it after the
test has killed it (printing ``reaped STATUS``). Forking from a warm process makes
twenty kills take a second instead of twenty interpreter start-ups. A
``stoppable`` writer is built as the server is: the writes in a worker thread, the
server's stop-signal handling (``close_on_exit``) in the main thread.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from werkbaum_core import Conflict, Engine, WerkbaumError
from werkbaum_core.engine.lifetime import close_on_exit
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_stdio import files
from werkbaum_stdio.files import FileStore
from werkbaum_stdio.roots import Roots

CHURN_VERSIONS = 4
CHURN_LINES = 15_000
RACE_NODES = 24
SWAP_DELAY = 0.003
"""Seconds each racing write sleeps between its compare and its swap.

It widens the window in which a store without a working cross-process lock
would let both processes pass the checksum test and lose an update, so the
race test fails on such a store instead of passing by luck.
"""


def race_plan() -> str:
    """The shared plan of the race test: one root, ``RACE_NODES`` open children."""
    children = "".join(f"  - [ ] #n{i}: Node {i} (S)\n" for i in range(RACE_NODES))
    return "[ ] #plan: Plan\n" + children


def churn_version(index: int) -> str:
    """One of the large valid texts the churning writer cycles through (~0.6 MB)."""
    lines = "".join(f"  - [ ] #n{k}: Step {k} of version {index} (S)\n" for k in range(CHURN_LINES))
    return f"[ ] #plan: Plan v{index}\n" + lines


def _slow_swap() -> None:
    original = files._replace_atomically

    def delayed(*args: Any) -> None:
        time.sleep(SWAP_DELAY)
        original(*args)

    files._replace_atomically = delayed  # type: ignore[assignment]


def race(root: str, source: str, first: int, count: int, go: str) -> None:
    _slow_swap()
    store = FileStore(Roots.from_args([root], cwd=root))
    conflicts = 0
    with Engine.create("dukpy") as engine:
        print("ready", flush=True)
        while not Path(go).exists():
            time.sleep(0.001)
        start = time.time()
        for node in range(first, first + count):
            for _attempt in range(500):
                snapshot = store.read(source)
                args = {"id": f"n{node}", "status": "x"}
                try:
                    write(engine, store, WriteRequest(source, snapshot.base, "setStatus", args))
                    break
                except Conflict:
                    conflicts += 1
            else:
                raise SystemExit(f"node {node}: still conflicting after 500 attempts")
        end = time.time()
    print(json.dumps({"conflicts": conflicts, "start": start, "end": end}), flush=True)


def churn(store: FileStore, source: str, versions: list[str]) -> None:
    """Write the next version over the current one, forever (until SIGKILL)."""
    while True:
        snapshot = store.read(source)
        current = int(snapshot.text.split("\n", 1)[0].rsplit("v", 1)[1])
        store.write(source, snapshot.base, [], versions[(current + 1) % len(versions)])


class _NoEngine:
    """What ``close_on_exit`` closes in a writer that has no engine."""

    def close(self) -> None:
        return None


def churn_until_stopped(store: FileStore, source: str, versions: list[str]) -> None:
    """Churn in a worker thread while the main thread waits for a stop signal, as the server."""
    close_on_exit(_NoEngine())
    threading.Thread(target=churn, args=(store, source, versions), daemon=True).start()
    while True:
        time.sleep(60)


def created_text(pid: int) -> str:
    """What creator ``pid`` writes (~0.6 MB, so a half-written file would show)."""
    return churn_version(pid)


def creator(root: str) -> None:
    store = FileStore(Roots.from_args([root], cwd="/"))
    text = created_text(os.getpid())
    print("ready", flush=True)
    for line in sys.stdin:
        name, go = line.split()
        while not Path(go).exists():
            time.sleep(0.0002)
        try:
            store.create(name, text)
            print("ok", flush=True)
        except WerkbaumError as exc:
            print(exc.code, flush=True)


def forker(root: str, source: str, stoppable: bool) -> None:
    store = FileStore(Roots.from_args([root], cwd=root))
    versions = [churn_version(i) for i in range(CHURN_VERSIONS)]
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "fork":
            continue
        pid = os.fork()
        if pid == 0:
            try:
                (churn_until_stopped if stoppable else churn)(store, source, versions)
            finally:
                os._exit(1)
        print(pid, flush=True)
        _, status = os.waitpid(pid, 0)
        print(f"reaped {status}", flush=True)


if __name__ == "__main__":
    mode, *rest = sys.argv[1:]
    if mode == "race":
        race(rest[0], rest[1], int(rest[2]), int(rest[3]), rest[4])
    elif mode == "creator":
        creator(rest[0])
    elif mode == "forker":
        forker(rest[0], rest[1], rest[2:] == ["stoppable"])
    else:
        raise SystemExit(f"unknown mode {mode}")
