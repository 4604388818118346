"""dukpy in a child process, as the servers run it (round 22 F5, done for the servers).

In the process, dukpy holds the GIL for a whole call and only the main thread can
stop it; the servers call from worker threads. In a child, a call over its limit
is killed from any thread, the caller's other threads run meanwhile, and the
results are the in-process executor's byte for byte (the conformance suite runs
on it too: ``conformance_engine``). Real processes throughout.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import fixture_plans
from tests.core.test_engine import ticks_during_a_spin
from tests.core.test_engine_exit import BUNDLED_PARSER, checkout_with_parser, children, gone
from werkbaum_core import Engine, EngineError, ModuleSetError, NotFound, TooLarge
from werkbaum_core.engine import ENTRIES
from werkbaum_core.engine.dukpy_executor import LARGE_TEXT, MAX_LINES
from werkbaum_core.engine.dukpy_process import DukpyProcessExecutor
from werkbaum_core.engine.modules import ModuleSet, Program
from werkbaum_core.engine.protocol import Limits
from werkbaum_core.errors import EngineTimeout

SPIN = "globalThis.werkbaum.spin = () => { for (;;) {} };\n"


def _program(tmp_path: Path, code: str = SPIN) -> Program:
    extra = tmp_path / "extra.js"
    extra.write_text(code, encoding="utf-8")
    return Program(ModuleSet(), (*ENTRIES, "extra.js"), (extra,))


def _in_thread(work: Callable[[], object]) -> BaseException | None:
    """Run ``work`` on a thread that is not the main one; what it raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # handed to the test
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return raised[0] if raised else None


def test_a_call_over_its_limit_is_stopped_on_any_thread(tmp_path: Path) -> None:
    executor = DukpyProcessExecutor(_program(tmp_path), limits=Limits(call=1.0))
    try:
        started = time.monotonic()
        raised = _in_thread(lambda: executor.call_text("spin", {}))
        assert isinstance(raised, EngineTimeout), raised
        assert raised.message == "dukpy executor gave no answer within 1 s"
        assert time.monotonic() - started < 10
        # The next call, from another worker thread, gets a fresh child and works.
        answers: list[str] = []

        def analyse() -> None:
            answers.append(executor.call_text("analyze", {"text": "- A"}))

        assert _in_thread(analyse) is None
        assert json.loads(answers[0])["tree"][0]["label"] == "A"
    finally:
        executor.close()


def test_other_threads_run_while_a_call_is_in_flight(tmp_path: Path) -> None:
    executor = DukpyProcessExecutor(_program(tmp_path), limits=Limits(call=1.0))
    assert ticks_during_a_spin(executor) > 50  # dukpy in the process gives a handful


def test_results_are_the_in_process_executors_byte_for_byte() -> None:
    with (
        Engine.create("dukpy", frontend="") as here,
        Engine.create("dukpy", frontend="", separate_process=True) as apart,
    ):
        assert isinstance(apart.executor, DukpyProcessExecutor)
        for plan in fixture_plans():
            text = plan.read_text(encoding="utf-8")
            assert apart.analysis_text(text) == here.analysis_text(text), plan.name
        odd = '- [ ] Ümlaut \ud800 \U0001f333 \\ " \t\n  - ☃ (XXL)\r\n'
        assert apart.analysis_text(odd) == here.analysis_text(odd)
        assert apart.transform("live", "lines", "a\nb") == here.transform("live", "lines", "a\nb")


def test_a_coded_error_keeps_its_type() -> None:
    with Engine.create("dukpy", frontend="", separate_process=True) as apart:
        with pytest.raises(NotFound) as info:
            apart.analyze_json("- A", id="missing")
        assert "#missing" in info.value.message


def test_a_dead_child_is_replaced_by_the_next_call(tmp_path: Path) -> None:
    executor = DukpyProcessExecutor(_program(tmp_path), limits=Limits(call=5.0))
    try:
        first = executor._process
        assert first is not None
        first.popen.kill()  # the OOM killer, a user
        first.popen.wait()
        assert json.loads(executor.call_text("analyze", {"text": "- B"}))["tree"][0]["label"] == "B"
        assert executor._process is not None and executor._process is not first
    finally:
        executor.close()


def test_the_module_copy_lives_as_long_as_the_child(tmp_path: Path) -> None:
    executor = DukpyProcessExecutor(_program(tmp_path))
    process = executor._process
    assert process is not None
    spec = json.loads(process.popen.args[-1])  # type: ignore[index]
    copy = Path(spec["directory"])
    try:
        # A large call makes the child start a fresh interpreter from the copy.
        line = "- " + "x" * 98 + "\n"
        large = line * (LARGE_TEXT // len(line) + 1)
        assert len(json.loads(executor.call_text("analyze", {"text": large}))["tree"]) > 1
        assert copy.is_dir()
        answer = json.loads(executor.call_text("analyze", {"text": "- C"}))
        assert answer["tree"][0]["label"] == "C"
        assert executor._process is process  # the same child, a fresh interpreter in it
    finally:
        executor.close()
    assert not copy.exists()
    assert process.popen.returncode is not None


def test_a_plan_over_the_line_limit_never_reaches_the_child(tmp_path: Path) -> None:
    executor = DukpyProcessExecutor(_program(tmp_path))
    try:
        with pytest.raises(TooLarge, match="lines"):
            executor.call_text("analyze", {"text": "- a\n" * (MAX_LINES + 1)})
        assert next(executor._ids) == 1  # no request was sent
    finally:
        executor.close()


@pytest.mark.parametrize(
    "parser",
    [
        BUNDLED_PARSER.replace("export function sizeMin", "function sizeMin"),
        BUNDLED_PARSER + "\nconst broken = ;\n",
        "throw new Error('checkout says no');\n" + BUNDLED_PARSER,
    ],
    ids=["missing export", "syntax error", "throws while loading"],
)
def test_a_module_set_fails_in_the_same_words_as_in_the_process(
    tmp_path: Path, parser: str
) -> None:
    checkout = checkout_with_parser(tmp_path, parser)
    messages = []
    for separate in (False, True):
        with pytest.raises((ModuleSetError, EngineError)) as info:
            Engine.create("dukpy", frontend=checkout, separate_process=separate)
        messages.append((type(info.value), info.value.message))
    assert messages[0] == messages[1]
    assert "\n" not in messages[1][1]


def test_a_module_in_the_working_directory_is_not_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "imported"
    (tmp_path / "dukpy.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise SystemExit(3)\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    with Engine.create("dukpy", frontend="", separate_process=True) as apart:
        assert apart.analyze_json("- D")["tree"][0]["label"] == "D"
    assert not marker.exists()


def test_the_child_does_not_outlive_a_killed_parent(tmp_path: Path) -> None:
    # The parent dies without closing anything (SIGKILL): the child sees its stdin end.
    script = textwrap.dedent(
        """
        import os, sys, time
        from werkbaum_core import Engine
        engine = Engine.create("dukpy", frontend="", separate_process=True)
        engine.analyze_json("- E")
        print(engine.executor._process.popen.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert children(parent.pid) == [child]
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        assert gone(child), "the dukpy child outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
