"""Executors and module sets: isolation, limits, recovery, drop-in checkouts."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import engine_on
from werkbaum_core import (
    EXECUTORS,
    MAX_TEXT_CHARS,
    Engine,
    EngineError,
    InvalidArgument,
    ModuleSetError,
    TooLarge,
)
from werkbaum_core.engine import ENTRIES
from werkbaum_core.engine.modules import REQUIRED_EXPORTS, ModuleSet, Program, bundled_dir
from werkbaum_core.engine.node_executor import NodeExecutor, node_binary
from werkbaum_core.engine.protocol import Executor, Limits
from werkbaum_core.engine.v8_executor import V8Executor
from werkbaum_core.errors import EngineTimeout

needs_node = pytest.mark.usefixtures("node_installed")


def test_text_over_the_limit_is_refused_before_js_runs(engine: Engine) -> None:
    with pytest.raises(TooLarge) as info:
        engine.analyze_json("x" * (MAX_TEXT_CHARS + 1))
    assert info.value.to_json()["error"]["code"] == "too_large"
    assert engine.analyze_json("x" * 1000)["tree"]  # the engine still works afterwards


def test_unknown_include_part_is_an_invalid_argument(engine: Engine) -> None:
    with pytest.raises(InvalidArgument) as info:
        engine.analyze_json("- A", include=["tree", "colours"])
    assert info.value.message == (  # the parts it takes (round 26 newcomer L9)
        "include: unknown part(s) ['colours']; the parts are tree, warnings, path, stations"
    )


@pytest.mark.parametrize("text", [b"- A\n", Path("plan.werkbaum"), None])
def test_a_text_that_is_no_str_is_a_type_error_that_says_so(engine: Engine, text: Any) -> None:
    """Round 26 newcomer L9: a file's bytes gave ``AttributeError: 'bytes' object has no
    attribute 'encode'`` from deep inside the cache."""
    with pytest.raises(TypeError) as info:
        engine.analyze(text)
    expected = f"text must be a str, not {type(text).__name__}"
    if isinstance(text, bytes):
        expected += ": decode it first (data.decode('utf-8'))"
    assert str(info.value) == expected


def test_an_engine_says_which_executor_runs_which_modules(engine: Engine) -> None:
    """``Engine.create()`` chooses the executor itself; its repr names it (newcomer L9)."""
    assert repr(engine) == f"<Engine {engine.kind} on bundled modules>"


def test_unknown_subtree_id_is_not_found(engine: Engine) -> None:
    with pytest.raises(Exception, match="nope") as info:
        engine.analyze_json("- [ ] #a: A\n  - #b: B", id="nope")
    assert getattr(info.value, "code", None) == "not_found"


def test_subtree_by_id(engine: Engine) -> None:
    result = engine.analyze_json(
        "[ ] #r: R\n  - [ ] #a: A (S)\n    - [ ] #b: B\n  - [ ] #c: C", id="a"
    )
    assert [n["label"] for n in result["tree"]] == ["A"]
    assert [c["label"] for c in result["tree"][0]["children"]] == ["B"]


@pytest.mark.parametrize("kind", EXECUTORS)
def test_secrets_in_the_environment_never_reach_js(
    kind: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WERKBAUM_MCP_TOKEN", "s3cret-token-value")
    spy = tmp_path / "spy.js"
    spy.write_text(
        "globalThis.werkbaum.env = () => JSON.stringify("
        "(globalThis.process && globalThis.process.env) || {});\n",
        encoding="utf-8",
    )
    for eng in engine_on(kind, spy):
        seen = eng.call("env", {})
        assert "s3cret-token-value" not in seen
        assert "WERKBAUM_MCP_TOKEN" not in seen


def test_frontend_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModuleSetError, match="not a directory"):
        Engine.create("dukpy", frontend=tmp_path / "missing")


def test_unknown_engine_is_refused() -> None:
    with pytest.raises(ModuleSetError, match="unknown engine"):
        Engine.create("rhino", frontend="")


@needs_node
def test_node_executor_restarts_after_its_process_dies(tmp_path: Path) -> None:
    crash = tmp_path / "crash.js"
    crash.write_text("globalThis.werkbaum.crash = () => process.exit(3);\n", encoding="utf-8")
    with Engine.create("node", frontend="", extra_entries=[crash]) as eng:
        executor = eng.executor
        assert isinstance(executor, NodeExecutor)
        with pytest.raises(EngineError, match="exited"):
            eng.call("crash", {})  # the call during which it dies reports it
        assert eng.analyze_json("- B")["tree"][0]["label"] == "B"  # the next one gets a new process
        process = executor._process
        assert process is not None
        process.popen.kill()  # killed between calls (OOM killer, a user):
        process.popen.wait()
        assert eng.analyze_json("- C")["tree"][0]["label"] == "C"  # restarted transparently


def _spinner(tmp_path: Path) -> Program:
    slow = tmp_path / "slow.js"
    slow.write_text("globalThis.werkbaum.spin = () => { for (;;) {} };\n", encoding="utf-8")
    return Program(ModuleSet(), (*ENTRIES, "slow.js"), (slow,))


@needs_node
def test_node_executor_kills_a_call_that_exceeds_its_time_limit(tmp_path: Path) -> None:
    executor = NodeExecutor(_spinner(tmp_path), limits=Limits(call=1.0))
    try:
        with pytest.raises(EngineTimeout, match="no answer within 1 s"):
            executor.call_text("spin", {})
        answer = json.loads(executor.call_text("analyze", {"text": "- A"}))
        assert answer["tree"][0]["label"] == "A"
    finally:
        executor.close()


def test_v8_executor_stops_a_call_that_exceeds_its_time_limit(tmp_path: Path) -> None:
    executor = V8Executor(_spinner(tmp_path), limits=Limits(call=1.0))
    try:
        started = time.monotonic()
        with pytest.raises(EngineTimeout, match="no answer within 1 s"):
            executor.call_text("spin", {})
        assert time.monotonic() - started < 10
        answer = json.loads(executor.call_text("analyze", {"text": "- A"}))
        assert answer["tree"][0]["label"] == "A"
    finally:
        executor.close()


def ticks_during_a_spin(executor: Executor) -> int:
    """How often another Python thread ticks (every 5 ms) while ``executor`` spends its
    1 s time limit in JS: ~200 when the call leaves the GIL free, a handful otherwise."""
    ticks = 0
    done = threading.Event()

    def tick() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.005)

    ticker = threading.Thread(target=tick)
    try:
        ticker.start()
        with pytest.raises(EngineTimeout):
            executor.call_text("spin", {})
    finally:
        done.set()
        ticker.join()
        executor.close()
    return ticks


def test_v8_executor_releases_the_gil_during_a_call(tmp_path: Path) -> None:
    assert ticks_during_a_spin(V8Executor(_spinner(tmp_path), limits=Limits(call=1.0))) > 50


def test_js_directory_ships_every_contract_module() -> None:
    shipped = {p.name for p in bundled_dir().iterdir()}
    assert set(REQUIRED_EXPORTS) | {"facade.js", "exports.js", "package.json"} <= shipped
    assert shutil.which("node") is None or node_binary() is not None


def test_cached_analyses_are_fresh_copies_per_call(engine: Engine) -> None:
    text = "[ ] #p: P\n  - [ ] #a: A (S)\n  - [ ] #b: B (M)\n"
    first = engine.analyze_json(text)
    first["tree"][0]["label"] = "changed by a caller"
    second = engine.analyze_json(text)
    assert second["tree"][0]["label"] == "P"
    assert engine.analyze_json(text, include=["path"]).keys() == {"path"}
    assert engine.analyze_json(text, id="a")["tree"][0]["label"] == "A"
    assert engine.analyze_json(text.replace("(M)", "(L)"))["tree"][0]["children"][1]["size"] == "L"


def test_a_lone_surrogate_in_the_text_crosses_every_executor(engine: Engine) -> None:
    # Valid JSON from a client (JSON.stringify emits it), not valid UTF-8.
    assert engine.analyze_json("- [ ] A \ud800 B")["tree"][0]["label"] == "A \ud800 B"
