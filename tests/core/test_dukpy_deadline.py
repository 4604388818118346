"""dukpy's time limit (attack round 22, F5): what holds, where.

dukpy 0.6 has no time limit of its own; QuickJS only asks whether a Python signal
is pending, and Python runs signal handlers on the main thread. So a call or load
on the main thread (the command line, scripts) is stopped after the executor's
limit by a SIGALRM timer; on other threads nothing can stop it, which the README
says. The servers therefore run dukpy in a child process (tests/core/test_dukpy_process.py).
"""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path
from types import FrameType

import pytest

import werkbaum_core.engine as engine_module
from werkbaum_core.engine import ENTRIES, LazyEngine
from werkbaum_core.engine.dukpy_executor import DukpyExecutor
from werkbaum_core.engine.modules import ModuleSet, Program
from werkbaum_core.engine.protocol import Executor, Limits
from werkbaum_core.errors import EngineTimeout


def _spinner(tmp_path: Path) -> Program:
    slow = tmp_path / "slow.js"
    slow.write_text("globalThis.werkbaum.spin = () => { for (;;) {} };\n", encoding="utf-8")
    return Program(ModuleSet(), (*ENTRIES, "slow.js"), (slow,))


def test_dukpy_stops_a_call_on_the_main_thread_at_its_time_limit(tmp_path: Path) -> None:
    executor = DukpyExecutor(_spinner(tmp_path), limits=Limits(call=1.0))
    started = time.monotonic()
    with pytest.raises(EngineTimeout, match=r"^dukpy executor gave no answer within 1 s$"):
        executor.call_text("spin", {})
    assert time.monotonic() - started < 10
    # The timer and the handler are the program's again; the next call gets a fresh
    # interpreter and works.
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    answer = json.loads(executor.call_text("analyze", {"text": "- A"}))
    assert answer["tree"][0]["label"] == "A"


def test_dukpy_leaves_a_programs_own_alarm_alone(tmp_path: Path) -> None:
    rang: list[int] = []

    def own(signum: int, _frame: FrameType | None) -> None:
        rang.append(signum)

    previous = signal.signal(signal.SIGALRM, own)
    try:
        executor = DukpyExecutor(Program(ModuleSet(), ENTRIES), limits=Limits(call=0.2))
        json.loads(executor.call_text("analyze", {"text": "- A"}))
        assert signal.getsignal(signal.SIGALRM) is own
        time.sleep(0.4)  # no timer of ours went off meanwhile
        assert rang == []
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_a_lazy_engine_asked_on_the_main_thread_loads_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where the dukpy executor's load limit can apply (the command line asks so).
    threads: list[threading.Thread] = []
    real_start = engine_module._start

    def start(kind: str, program: Program, *, separate_process: bool = False) -> Executor:
        threads.append(threading.current_thread())
        return real_start(kind, program, separate_process=separate_process)

    monkeypatch.setattr(engine_module, "_start", start)
    lazy = LazyEngine("dukpy", "")
    try:
        assert lazy.analyze_json("- [ ] A")["tree"][0]["label"] == "A"
    finally:
        lazy.close()
    assert threads == [threading.main_thread()]
