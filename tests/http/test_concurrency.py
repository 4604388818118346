"""A long analysis does not stall the worker: node, and dukpy in a child process.

dukpy in the process holds the GIL for a whole JS evaluation, so in one uvicorn
worker every other request would wait for it; the servers run it in a child
process instead, and node is one (see ``werkbaum_http.engine``). These tests hold
a large analysis in flight and check that the same worker keeps answering
meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio
import httpx
import pytest

from tests.backend import Backend
from tests.http.conftest import FULL_TOKEN, connect, make_app, serving
from werkbaum_core.engine import LazyEngine

pytestmark = pytest.mark.anyio


def big_plan(nodes: int) -> str:
    lines = ["[ ] #root: Root"]
    for i in range(nodes):
        lines.append(f"  - [ ] #n{i}: Node {i} @anna (S)")
        lines.append(f"    - [ ] #n{i}.a: Child {i} @bert (XS)")
        lines.append(f"    - [x] #n{i}.b: Child b {i} -> #n{max(i - 1, 0)} (M)")
    return "\n".join(lines) + "\n"


async def health_checks_while(url: str, work: Callable[[], Awaitable[None]]) -> None:
    """Run ``work`` and poll ``/healthz`` until it ends: several health checks answered
    while it ran, each in well under half its time, show the loop stayed free (a
    blocked loop answers at most one, after the work)."""
    latencies: list[float] = []
    finished: list[float] = []

    async def timed() -> None:
        await work()
        finished.append(time.monotonic())

    async with httpx.AsyncClient() as raw, anyio.create_task_group() as tasks:
        started = time.monotonic()
        tasks.start_soon(timed)
        while not finished:
            sent = time.monotonic()
            assert (await raw.get(f"{url}/healthz")).status_code == 200
            if not finished:
                latencies.append(time.monotonic() - sent)
            await anyio.sleep(0.02)
    took = finished[0] - started
    assert took > 0.3, f"the work must be long enough to matter ({took:.2f}s)"
    assert len(latencies) >= 3, latencies
    assert max(latencies) < took / 2, (max(latencies), took)


@pytest.mark.parametrize("kind", ["node", "dukpy"])
async def test_worker_answers_while_a_long_analysis_runs(
    kind: str, backend: Backend, request: pytest.FixtureRequest
) -> None:
    if kind == "node":
        request.getfixturevalue("node_installed")
    engine = LazyEngine(kind, "", separate_process=True)
    plan = big_plan(4000)
    try:
        with serving(make_app(backend, engine)) as url:
            async with connect(url, FULL_TOKEN, "auto") as client:
                await client.call_tool("werkbaum_inspect", {"text": "- [ ] warm-up"})

                async def analyse() -> None:
                    result = await client.call_tool("werkbaum_inspect", {"text": plan})
                    assert not result.is_error

                await health_checks_while(url, analyse)
    finally:
        engine.close()


async def test_worker_answers_while_a_large_argument_is_checked(backend: Backend) -> None:
    """The input-schema check costs time in proportion to the arguments: it runs in the
    worker thread with the tool, so the loop keeps answering meanwhile."""
    engine = LazyEngine("dukpy", "")
    # 1,000 ops (the limit) of 500 empty lines each: every line is checked, ~2 MB.
    ops = [{"op": "insert", "index": 0, "count": 0, "lines": [""] * 500}] * 1_000
    base = {"version": 1, "checksum": "sha256:" + "0" * 64}
    try:
        with serving(make_app(backend, engine)) as url:
            async with connect(url, FULL_TOKEN, "auto") as client:

                async def write() -> None:
                    arguments = {"source": "doc", "base": base, "ops": ops}
                    await client.call_tool("werkbaum_apply_ops", arguments)

                await health_checks_while(url, write)
    finally:
        engine.close()
