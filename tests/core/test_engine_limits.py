"""Engine limits are errors, not mysteries (issue 13 item 9).

Every plan within the size limit analyses on v8 and node; dukpy refuses plans over its
line limit before any JS runs, naming the limit and the executors without one; a call
that exhausts an executor's memory fails with an error that says so, and never breaks
the calls after it.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import engine_on
from tests.plangen import plan
from tests.tools import require_tool
from werkbaum_core import EXECUTORS, Engine, EngineError, TooLarge
from werkbaum_core.engine.dukpy_executor import MAX_LINES, DukpyExecutor
from werkbaum_core.engine.modules import ENTRIES, ModuleSet, Program
from werkbaum_core.engine.node_executor import NodeExecutor
from werkbaum_core.engine.protocol import Limits
from werkbaum_core.engine.v8_executor import V8Executor
from werkbaum_core.errors import EngineTimeout
from werkbaum_core.text import MAX_TEXT_CHARS

ROOT_LINES = "".join(f"- [ ] Root {i}\n" for i in range(100_000))
"""The attack round's plan: 100,000 root lines, 1.69 M characters."""
ONE_WORD_NODES = "- A\n" * (MAX_TEXT_CHARS // 4)
"""The most nodes a legal plan can have: 500,000 in 2,000,000 characters."""


@pytest.fixture(scope="module", params=EXECUTORS)
def any_engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    yield from engine_on(request.param)


def test_the_largest_plans_fit_the_size_limit() -> None:
    assert len(ROOT_LINES) == 1_688_890
    assert len(ONE_WORD_NODES) == MAX_TEXT_CHARS


@pytest.mark.parametrize("text", [ROOT_LINES, ONE_WORD_NODES], ids=["100k-roots", "500k-nodes"])
def test_every_legal_plan_analyses_or_is_refused_up_front(any_engine: Engine, text: str) -> None:
    lines = text.count("\n")
    if any_engine.kind == "dukpy":
        with pytest.raises(TooLarge) as info:
            any_engine.analysis_text(text)
        error = info.value.to_json()["error"]
        assert error["code"] == "too_large"
        assert error["limit"] == MAX_LINES and error["size"] == lines
        assert error["executor"] == "dukpy"
        message = error["message"]
        assert f"{MAX_LINES:,}" in message and "v8" in message and "node" in message
    else:
        assert len(any_engine.analyze_json(text, include=["tree"])["tree"]) == lines
    assert any_engine.analyze_json("- [ ] After")["tree"][0]["label"] == "After"


@pytest.mark.parametrize("kind", EXECUTORS)
def test_every_entry_point_refuses_what_its_executor_cannot_do(kind: str) -> None:
    """Writes parse the plan too: the same limit on their texts."""
    for engine in engine_on(kind):
        payload = {"verb": "setStatus", "text": ROOT_LINES, "args": {"id": "x", "status": "x"}}
        if kind == "dukpy":
            with pytest.raises(TooLarge):
                engine.call("edit", payload)
        else:  # the whole plan was read: the id is just not in it
            assert engine.call("edit", payload)["error"]["code"] == "not_found"


def typical(lines: int) -> str:
    """Lines as plans have them: nested, a status, an id, a size, an owner, a reference."""
    out = ["[ ] #r: Root"]
    for i in range(lines - 1):
        status, size = " ~x!?"[i % 5], ("S", "M", "L")[i % 3]
        out.append("  " * (i % 6 + 1) + f"- [{status}] #m{i}: Task ({size}) @p :#m{i // 2}")
    return "\n".join(out) + "\n"


def test_dukpy_analyses_a_plan_at_its_line_limit_and_more_after_it() -> None:
    # At the limit, then smaller plans: once, smaller plans failed after a large one.
    text = typical(MAX_LINES)
    assert len(text) <= MAX_TEXT_CHARS
    for engine in engine_on("dukpy"):
        assert len(engine.analyze_json(text, include=["path"])["path"]["needed"]) > 0
        assert engine.analyze_json(plan(20_000, seed=14), include=["path"])["path"]
        assert engine.analyze_json("- [ ] Small")["tree"]


def _hog(tmp_path: Path) -> Program:
    """An extra entry that keeps memory (as leftovers of earlier calls would) or runs out."""
    hog = tmp_path / "hog.js"
    hog.write_text(
        "globalThis.werkbaum.keep = ({ mb }) => {\n"
        "  globalThis.kept = [];\n"
        "  for (let i = 0; i < mb; i++) globalThis.kept.push(new Array(65536).fill(i));\n"
        "  return globalThis.kept.length;\n"
        "};\n"
        "globalThis.werkbaum.kept = () => (globalThis.kept || []).length;\n"
        "globalThis.werkbaum.exhaust = () => {\n"
        "  const all = [];\n"
        "  for (;;) all.push(new Array(65536).fill(all.length));\n"
        "};\n"
        "globalThis.werkbaum.spin = () => { for (;;) {} };\n",
        encoding="utf-8",
    )
    return Program(ModuleSet(), (*ENTRIES, "hog.js"), (hog,))


def test_dukpy_out_of_memory_says_so_and_the_next_call_works(tmp_path: Path) -> None:
    executor = DukpyExecutor(_hog(tmp_path))
    try:
        with pytest.raises(EngineError, match=r"dukpy executor ran out of memory.*v8") as info:
            executor.call_text("exhaust", {})
        assert "\n" not in info.value.message
        assert '"label":"B"' in executor.call_text("analyze", {"text": "- B"})
    finally:
        executor.close()


def test_dukpy_retries_on_a_fresh_interpreter_what_leftovers_made_fail(tmp_path: Path) -> None:
    # 88 MiB kept of the 128 MiB heap: a 4,000-node plan, which a fresh interpreter
    # analyses, fails on this one; the executor discards it and tries a fresh one.
    executor = DukpyExecutor(_hog(tmp_path))
    try:
        assert executor.call_text("keep", {"mb": 88}) == "88"
        assert '"tree"' in executor.call_text("analyze", {"text": plan(4_000, seed=3)})
        assert executor.call_text("kept", {}) == "0"  # it ran on a fresh interpreter
    finally:
        executor.close()


def test_node_out_of_memory_says_so_and_the_next_call_works(tmp_path: Path) -> None:
    """Round 25 soak F6: the node child had no heap limit and grew to V8's default (4 GB
    seen) before a runaway call died, with the last lines of a native stack as its error."""
    require_tool("node")
    executor = NodeExecutor(_hog(tmp_path), heap_mib=128)
    try:
        with pytest.raises(EngineError) as info:
            executor.call_text("exhaust", {})
        assert info.value.message == (
            "out of memory: the call needed more than the node executor's heap limit of 128 MiB"
        )
        assert '"label":"B"' in executor.call_text("analyze", {"text": "- B"})
    finally:
        executor.close()


def test_a_killed_node_child_leaves_no_descriptor_to_the_collector(tmp_path: Path) -> None:
    """A failed call's traceback keeps the dead child's object alive (in the server, in a
    reference cycle until the collector runs: round 25 soak F5); its pipes close anyway."""
    require_tool("node")
    executor = NodeExecutor(_hog(tmp_path), limits=Limits(call=0.3))
    kept: list[BaseException] = []  # as a cycle would keep them
    gc.disable()
    try:
        executor.call_text("kept", {})
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(3):
            try:
                executor.call_text("spin", {})
            except EngineTimeout as exc:
                kept.append(exc)
        assert len(kept) == 3
        deadline = time.monotonic() + 10
        while len(os.listdir("/proc/self/fd")) > before + 2:  # the next child's pipes only
            assert time.monotonic() < deadline, os.listdir("/proc/self/fd")
            time.sleep(0.05)
    finally:
        gc.enable()
        executor.close()


def test_v8_out_of_memory_says_so_and_the_next_call_works(tmp_path: Path) -> None:
    executor = V8Executor(_hog(tmp_path), heap_limit=128 * 1024**2)
    try:
        with pytest.raises(EngineError, match=r"out of memory.*heap limit of 128 MiB"):
            executor.call_text("exhaust", {})
        assert '"label":"B"' in executor.call_text("analyze", {"text": "- B"})
    finally:
        executor.close()
