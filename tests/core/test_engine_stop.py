"""A stop that never waits on what it stops (round 26, process lifecycle).

- Closing an executor stops the call in flight (the node or dukpy child killed, V8
  interrupted) and that call fails with ``Stopping``. Before, close waited for the call:
  a stop signal's close gave up after 2 s, the server died, and its engine child ran the
  call on to its end (39 s seen; for good with a runaway call, whose 30 s limit the dead
  parent no longer kept); a host that sends SIGKILL 2 s after SIGTERM (the Python SDK)
  also lost the stderr lines still queued, the stopped write's audit line among them.

Real processes and signals; a checkout whose ``parse`` spins plays the runaway call.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.rawrpc import PipeClient
from tests.tools import require_tool
from werkbaum_core import EXECUTORS, Engine, calls
from werkbaum_core.engine.modules import bundled_dir
from werkbaum_core.errors import EngineCancelled
from werkbaum_core.in_flight import Stopping

SERVER = Path(sys.executable).with_name("werkbaum-mcp")
SPIN = 60
"""Seconds the runaway call would run (past the 30 s call limit)."""
DEADLINE = 20.0
"""Seconds within which what is stopped must be gone (well under SPIN)."""


def spinning_checkout(where: Path) -> Path:
    """A checkout whose ``parse`` runs ``SPIN<n>`` seconds for a text containing that mark."""
    where.mkdir()
    bundled = (bundled_dir() / "parser.js").read_text(encoding="utf-8")
    spin = (
        "export function parse(text) {\n"
        "  const m = /SPIN(\\d+)/.exec(text);\n"
        "  const until = m ? Date.now() + Number(m[1]) * 1000 : 0;\n"
        "  while (Date.now() < until) {}\n"
        "  return parse_(text);\n"
        "}\n"
    )
    renamed = bundled.replace("export function parse(text) {", "function parse_(text) {")
    (where / "parser.js").write_text(renamed + spin, encoding="utf-8")
    return where


def spinning_call(
    engine: Engine, owner: calls.Owner | None = None
) -> tuple[threading.Thread, list[BaseException]]:
    """A runaway analysis on a thread of its own (``owner``'s, if given), spinning once this
    returns; the list gets what the call raised."""
    failures: list[BaseException] = []

    def call() -> None:
        with contextlib.ExitStack() as stack:
            if owner is not None:
                stack.enter_context(calls.on_behalf_of(owner))
            try:
                engine.analyze_json(f"[ ] #plan: P SPIN{SPIN}\n  - [ ] #a: A (S)\n")
            except BaseException as exc:
                failures.append(exc)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    time.sleep(1.0)  # the call spins now
    return caller, failures


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(line) for line in found.stdout.split()]


def gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("kind", EXECUTORS)
def test_closing_an_executor_stops_the_call_in_flight(kind: str, tmp_path: Path) -> None:
    if kind == "node":
        require_tool("node")
    engine = Engine.create(kind, spinning_checkout(tmp_path / "front"), separate_process=True)
    caller, failures = spinning_call(engine)
    closer = threading.Thread(target=engine.close, daemon=True)
    closer.start()
    closer.join(DEADLINE)
    caller.join(DEADLINE)
    assert not closer.is_alive(), "close waited for the call in flight"
    assert not caller.is_alive(), "the call in flight went on after close"
    assert len(failures) == 1 and isinstance(failures[0], Stopping), failures
    with pytest.raises(Stopping):  # a closed executor starts no child and no context
        engine.analyze_json("[ ] #plan: P\n")


def write_call(request_id: int, base: dict[str, object]) -> dict[str, object]:
    arguments = {"source": "spin.werkbaum", "base": base, "id": "a", "status": "x"}
    params = {"name": "werkbaum_set_status", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.mark.parametrize("kind", EXECUTORS)
def test_sigterm_during_a_writes_engine_call_stops_it_and_audits_it(
    kind: str, tmp_path: Path
) -> None:
    if kind == "node":
        require_tool("node")
    front = spinning_checkout(tmp_path / "front")
    plan = tmp_path / "spin.werkbaum"
    text = f"[ ] #plan: P SPIN{SPIN}\n  - [ ] #a: A (S)\n"
    plan.write_text(text, encoding="utf-8")
    err = tmp_path / "stderr.txt"
    argv = [str(SERVER), "--root", str(tmp_path), "--engine", kind, "--frontend", str(front)]
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    with err.open("wb") as stderr:
        client = PipeClient(argv, tmp_path, env, stderr=stderr.fileno())
    try:
        client.handshake()
        read = client.call_tool("werkbaum_read", {"source": "spin.werkbaum"})
        base = json.loads(read["content"][0]["text"])["base"]
        client.send(write_call(7, base))
        time.sleep(1.5)  # the write's engine call spins now
        kids = children(client.pid)
        if kind != "v8":
            assert kids, "the engine runs in a child process"
        client.process.send_signal(signal.SIGTERM)
        status = client.process.wait(timeout=DEADLINE)
        assert status == -signal.SIGTERM
        assert gone(kids, within=5.0), "the engine child ran on after the server died"
        audit = [json.loads(line) for line in err.read_text().splitlines() if line[:1] == "{"]
        assert [line["outcome"] for line in audit] == ["cancelled"], audit
        assert plan.read_text(encoding="utf-8") == text
    finally:
        if client.process.poll() is None:
            client.process.kill()
        client.close(timeout=DEADLINE)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("kind", ["node", "dukpy"])
def test_the_engine_child_dies_with_a_server_killed_by_sigkill(kind: str, tmp_path: Path) -> None:
    # No clean-up of the server's own runs on SIGKILL, and a child busy with a call does
    # not see its stdin close: it ran the call on to its end (SPIN s; for good, a runaway).
    if kind == "node":
        require_tool("node")
    front = spinning_checkout(tmp_path / "front")
    (tmp_path / "spin.werkbaum").write_text(f"[ ] #plan: P SPIN{SPIN}\n", encoding="utf-8")
    argv = [str(SERVER), "--root", str(tmp_path), "--engine", kind, "--frontend", str(front)]
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    client = PipeClient(argv, tmp_path, env)
    kids: list[int] = []
    try:
        client.handshake()
        params = {"name": "werkbaum_inspect", "arguments": {"source": "spin.werkbaum"}}
        client.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
        deadline = time.monotonic() + DEADLINE
        while not kids and time.monotonic() < deadline:
            kids = children(client.pid)
            time.sleep(0.05)
        assert kids, "the engine runs in a child process"
        time.sleep(1.0)  # the call spins now
        client.process.kill()
        assert client.process.wait(timeout=DEADLINE) == -signal.SIGKILL
        assert gone(kids, within=5.0), "the engine child outlived a server killed by SIGKILL"
    finally:
        for kid in kids:
            if alive(kid):
                os.kill(kid, signal.SIGKILL)
        client.close(timeout=DEADLINE)


@pytest.mark.parametrize("kind", EXECUTORS)
def test_interrupting_a_call_stops_only_its_owners_call(kind: str, tmp_path: Path) -> None:
    """Round 26 process F9: a cancelled request's runaway call kept the engine for the rest
    of its time limit. ``Engine.interrupt(owner)`` stops it, not another owner's, and the
    engine answers the next call at once (a fresh child or context)."""
    if kind == "node":
        require_tool("node")
    owner, stranger = calls.Owner(), calls.Owner()
    with Engine.create(
        kind, spinning_checkout(tmp_path / "front"), separate_process=True
    ) as engine:
        caller, failures = spinning_call(engine, owner)
        assert not engine.interrupt(stranger)  # not its call
        assert engine.interrupt(owner)
        caller.join(DEADLINE)
        assert not caller.is_alive(), "the interrupted call went on"
        assert len(failures) == 1 and isinstance(failures[0], EngineCancelled), failures
        assert not engine.interrupt(owner)  # nothing of its in flight any more
        assert engine.analyze_json("[ ] #plan: P\n  - [ ] #a: A (S)\n")["tree"]


@pytest.mark.parametrize("kind", EXECUTORS)
def test_a_cancelled_inspect_frees_the_engine_for_the_next_request(
    kind: str, tmp_path: Path
) -> None:
    """``notifications/cancelled`` for an inspect whose analysis runs away: the next
    request's analysis is answered at once, not when the runaway call reaches its 30 s
    limit (20 s seen, round 26 process F9); the cancelled request gets no answer."""
    if kind == "node":
        require_tool("node")
    front = spinning_checkout(tmp_path / "front")
    (tmp_path / "spin.werkbaum").write_text(f"[ ] #plan: P SPIN{SPIN}\n", encoding="utf-8")
    (tmp_path / "other.werkbaum").write_text("[ ] #plan: Q\n  - [ ] #b: B (M)\n", encoding="utf-8")
    argv = [str(SERVER), "--root", str(tmp_path), "--engine", kind, "--frontend", str(front)]
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    with PipeClient(argv, tmp_path, env) as client:
        client.handshake()
        client.call_tool("werkbaum_read", {"source": "other.werkbaum"})
        params = {"name": "werkbaum_inspect", "arguments": {"source": "spin.werkbaum"}}
        client.send({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": params})
        time.sleep(1.5)  # the engine starts and the call spins now
        cancel = {"requestId": 6, "reason": "the user stopped it"}
        client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        started = time.monotonic()
        other = {"name": "werkbaum_inspect", "arguments": {"source": "other.werkbaum"}}
        client.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": other})
        answer = client.receive(7, timeout=DEADLINE, strict=True)  # none for 6 before it
        assert time.monotonic() - started < DEADLINE
        result = json.loads(answer["result"]["content"][0]["text"])
        assert [node["label"] for node in result["tree"]] == ["Q"]
