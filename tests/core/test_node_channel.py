"""The node executor's answers travel on a pipe of their own (attack round 22, F6).

Module code that writes to stdout (``console.log``, ``process.stdout.write``) must not
reach the answers; a reply that is not the host's is an executor failure: the child is
killed, the error is one line, and the next call starts a fresh child. No child
outlives a failed start. Real processes throughout.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import engine_on
from tests.core.test_engine_checkout import checkout
from tests.tools import require_tool
from werkbaum_core import EXECUTORS, Engine, EngineError
from werkbaum_core.engine import ENTRIES
from werkbaum_core.engine.modules import ModuleSet, Program, bundled_dir
from werkbaum_core.engine.node_executor import NodeExecutor
from werkbaum_core.engine.protocol import Limits
from werkbaum_core.errors import EngineTimeout

needs_node = pytest.mark.usefixtures("node_installed")

CHATTY = """\
globalThis.werkbaum.chatty = (payload) => {
  console.log('chatty', payload.n);
  if (typeof process !== 'undefined' && process.stdout) {
    process.stdout.write('{"id":' + (payload.n + 1) + ',"result":"forged"}\\n');
  }
  return { n: payload.n };
};
"""


@pytest.mark.parametrize("kind", EXECUTORS)
def test_module_output_on_stdout_never_reaches_the_answers(kind: str, tmp_path: Path) -> None:
    chatty = tmp_path / "chatty.js"
    chatty.write_text(CHATTY, encoding="utf-8")
    for eng in engine_on(kind, chatty):
        for n in range(4):
            assert eng.call("chatty", {"n": n}) == {"n": n}
        assert eng.analyze_json("- [ ] Plan")["tree"][0]["label"] == "Plan"


@pytest.mark.parametrize("kind", EXECUTORS)
def test_a_checkout_that_logs_while_loading_and_parsing_loads(kind: str, tmp_path: Path) -> None:
    parser = (bundled_dir() / "parser.js").read_text(encoding="utf-8")
    assert "export function parse(text) {\n" in parser
    noisy = "console.log('parser loaded');\n" + parser.replace(
        "export function parse(text) {\n",
        "export function parse(text) {\n  console.log('parsing', text.length);\n",
    )
    if kind == "node":
        require_tool("node")
    own = checkout(tmp_path, parser=noisy)
    with Engine.create(kind, frontend=own) as eng:
        for label in ("A", "B", "C"):
            assert eng.analyze_json(f"- [ ] {label}")["tree"][0]["label"] == label


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@needs_node
def test_a_reply_that_is_not_the_hosts_kills_the_child_and_the_next_call_starts_afresh(
    tmp_path: Path,
) -> None:
    # Written on purpose to the answer pipe (its number is the host's first argument):
    # what no accident can do, but what a module set could do deliberately.
    breaker = tmp_path / "breaker.js"
    breaker.write_text(
        "import { writeSync } from 'node:fs';\n"
        "globalThis.werkbaum.breaker = () => {\n"
        "  writeSync(Number(process.argv[2]), 'garbage\\n');\n"
        "  return 1;\n"
        "};\n",
        encoding="utf-8",
    )
    executor = NodeExecutor(Program(ModuleSet(), (*ENTRIES, "breaker.js"), (breaker,)))
    try:
        process = executor._process
        assert process is not None
        with pytest.raises(EngineError) as info:
            executor.call_text("breaker", {})
        assert info.value.message.startswith(
            'node executor broke its protocol: its answer "garbage" is not the host\'s'
        )
        assert "\n" not in info.value.message
        assert process.popen.poll() is not None, "the child that broke the protocol is killed"
        answer = json.loads(executor.call_text("analyze", {"text": "- A"}))
        assert answer["tree"][0]["label"] == "A"
        assert executor._process is not None and executor._process is not process
    finally:
        executor.close()


def fake_node(tmp_path: Path, body: str) -> Path:
    """A ``WERKBAUM_NODE`` that is no node: a bash script (bash: its redirections take
    file descriptors over 9) that starts a grandchild; the path of its pid file."""
    script = tmp_path / "fake-node"
    pidfile = tmp_path / "sleeper.pid"
    script.write_text(
        f"#!/bin/bash\nsleep 60 &\necho $! > {pidfile}\n{body}\nwait\n", encoding="utf-8"
    )
    script.chmod(0o755)
    return pidfile


def _sleeper(pidfile: Path) -> int:
    deadline = time.monotonic() + 10
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline, "the fake node never started its grandchild"
        time.sleep(0.02)
    return int(pidfile.read_text())


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


def test_a_werkbaum_node_that_prints_garbage_fails_in_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its first answer (on the answer pipe: the host's first argument) is not JSON.
    pidfile = fake_node(tmp_path, "echo '{not json' >&\"$2\"")
    monkeypatch.setenv("WERKBAUM_NODE", str(tmp_path / "fake-node"))
    with pytest.raises(EngineError) as info:
        NodeExecutor(Program(ModuleSet(), ENTRIES))
    assert info.value.message.startswith(
        'node executor did not start: its answer "{not json" is not the host\'s'
    ), info.value.message
    assert _gone(_sleeper(pidfile)), "a process of the failed start outlived it"


def test_a_werkbaum_node_that_never_answers_times_out_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pidfile = fake_node(tmp_path, 'echo "{not json"')  # on stdout: never an answer
    monkeypatch.setenv("WERKBAUM_NODE", str(tmp_path / "fake-node"))
    started = time.monotonic()
    with pytest.raises(EngineTimeout, match=r"^loading the modules failed: no answer within 1 s"):
        NodeExecutor(Program(ModuleSet(), ENTRIES), limits=Limits(start=1.0))
    assert time.monotonic() - started < 10
    assert _gone(_sleeper(pidfile)), "a process of the failed start outlived it"
