"""The v8 executor under load, with the V8 flags and the loop it runs on (issue 16).

V8 runs with its helper threads (concurrent compiler and collector, not
mini-racer's ``--single-threaded``): calls from several threads, with runaway
calls stopped by the time limit and heap exhaustions among them, give the same
answers as alone, and the process then exits on its own, in a real subprocess
(a crash shows as a signal, a hang as the deadline). The context's asyncio loop
runs on the calling thread, also when that thread runs an event loop itself.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import REFERENCE_PLAN
from werkbaum_core.engine.modules import ENTRIES, ModuleSet, Program
from werkbaum_core.engine.protocol import Limits
from werkbaum_core.engine.v8_executor import V8Executor
from werkbaum_core.errors import EngineTimeout

DEADLINE = 120.0
"""Seconds for the whole script (~10 s on an idle 2-core machine)."""

SCRIPT = textwrap.dedent(
    """
    import json, sys, threading
    from pathlib import Path
    from werkbaum_core.engine.modules import ENTRIES, ModuleSet, Program
    from werkbaum_core.engine.protocol import Limits
    from werkbaum_core.engine.v8_executor import V8Executor
    from werkbaum_core.engine.v8_isolate import V8_FLAGS
    from werkbaum_core.errors import EngineError, EngineTimeout

    plan, extra = Path(sys.argv[1]).read_text(encoding="utf-8"), Path(sys.argv[2])
    extra.write_text(
        "globalThis.werkbaum.spin = () => { for (;;) {} };\\n"
        "globalThis.werkbaum.exhaust = () => {\\n"
        "  const kept = []; for (;;) kept.push(new Array(65536).fill(1));\\n"
        "};\\n",
        encoding="utf-8",
    )
    program = Program(ModuleSet(), (*ENTRIES, extra.name), (extra,))
    executor = V8Executor(program, limits=Limits(call=2.0), heap_limit=128 * 1024**2)
    texts = [plan, "- [ ] A (S)\\n  - [x] B\\n"]
    expected = [json.loads(executor.call_text("analyze", {"text": t}))["tree"] for t in texts]
    counts = {"same": 0, "different": 0, "timeouts": 0, "oom": 0, "other": []}
    lock = threading.Lock()

    def count(key):
        with lock:
            counts[key] += 1

    def work(seed):
        for n in range(40):
            try:
                if n == 7 and seed < 2:
                    executor.call_text("spin", {})
                elif n == 23 and seed >= 2:
                    executor.call_text("exhaust", {})
                else:
                    i = (seed + n) % len(texts)
                    text = texts[i] + f"%% thread {seed} call {n}\\n"
                    tree = json.loads(executor.call_text("analyze", {"text": text}))["tree"]
                    count("same" if tree == expected[i] else "different")
            except EngineTimeout:
                count("timeouts")
            except EngineError as exc:
                if "out of memory" in exc.message:
                    count("oom")
                else:
                    counts["other"].append(exc.message)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for _ in range(5):  # contexts made and closed one after another
        V8Executor(program).close()
    print(json.dumps({**counts, "flags": list(V8_FLAGS)}), flush=True)
    # The executor stays open: the interpreter's exit closes it.
    """
)


def test_threads_timeouts_and_heap_exhaustion_then_a_prompt_exit(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(REFERENCE_PLAN), str(tmp_path / "stress.js")],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["different"] == 0
    assert counts["other"] == []
    assert counts["same"] == 4 * 40 - 4
    assert counts["timeouts"] == 2
    assert counts["oom"] == 2
    assert "--single-threaded" not in counts["flags"]


def test_a_coroutine_may_call_the_engine_directly_and_the_time_limit_holds(
    tmp_path: Path,
) -> None:
    # The executor runs its private loop on the calling thread; a thread that runs an
    # event loop already gets its calls run on a short-lived thread instead.
    spin = tmp_path / "spin.js"
    spin.write_text("globalThis.werkbaum.spin = () => { for (;;) {} };\n", encoding="utf-8")
    program = Program(ModuleSet(), (*ENTRIES, spin.name), (spin,))

    async def inside_a_loop() -> tuple[str, float, str]:
        executor = V8Executor(program, limits=Limits(call=1.0))
        try:
            first = json.loads(executor.call_text("analyze", {"text": "- A"}))["tree"][0]
            started = time.monotonic()
            with pytest.raises(EngineTimeout, match="no answer within 1 s"):
                executor.call_text("spin", {})
            took = time.monotonic() - started
            after = json.loads(executor.call_text("analyze", {"text": "- B"}))["tree"][0]
        finally:
            executor.close()
        return first["label"], took, after["label"]

    first, took, after = asyncio.run(inside_a_loop())
    assert (first, after) == ("A", "B")
    assert took < 10
