"""The end of a stdio session when the host does not read the answers (round 26).

A host that closes stdin and never reads stdout (nor closes it) — one that stopped
its reader first, or crashed while a grandchild holds the pipe — left the server
waiting for good: the answers it could not write held the task that writes them,
and the transport waited for that task without a bound. The server now gives the
answers :data:`~werkbaum_stdio.pipes.DRAIN_SECONDS` from the end of input (shortened
here in a real server process), says on stderr that they were not written, and
exits 0 as at any end of input. Real processes and pipes; every wait has a deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from tests.stdio.conftest import raw_handshake
from werkbaum_core import checksum

DRAIN = 2.0
"""The server's DRAIN_SECONDS in these tests."""
DEADLINE = 60.0
"""Seconds within which the server must have exited (it hung for good before)."""

SERVER = f"""
import sys
from werkbaum_stdio import pipes
pipes.DRAIN_SECONDS = {DRAIN}
from werkbaum_stdio.server_cli import main
sys.argv[0] = "werkbaum-mcp"
main()
"""

NODES = 20_000
"""A plan whose werkbaum_read answer (~1.3 MB) far exceeds the answer pipe (1 MiB)."""


def start_server(root: Path, stdout: int | IO[bytes], stderr: IO[bytes]) -> subprocess.Popen[bytes]:
    """The stdio server on ``root`` (dukpy), its stdin a pipe of ours."""
    return subprocess.Popen(
        [sys.executable, "-c", SERVER, "--root", str(root), "--engine", "dukpy"],
        stdin=subprocess.PIPE,
        stdout=stdout,
        stderr=stderr,
        cwd=root,
        env={"PATH": os.environ["PATH"], "HOME": str(root)},
    )


def big_plan() -> str:
    nodes = (f"  - [ ] #n{i}: Node number {i} with some words (S) @anna" for i in range(NODES))
    return "\n".join(["[ ] #plan: Plan", *nodes]) + "\n"


def read_request(request_id: int) -> dict[str, object]:
    arguments = {"source": "big.werkbaum"}
    params = {"name": "werkbaum_read", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_a_host_that_closes_stdin_and_never_reads_stdout_does_not_keep_it_alive(
    tmp_path: Path,
) -> None:
    (tmp_path / "big.werkbaum").write_text(big_plan(), encoding="utf-8")
    stdout_read, stdout_write = os.pipe()  # held open here and never read
    err = tmp_path / "stderr.txt"
    with err.open("wb") as stderr:
        process = start_server(tmp_path, stdout_write, stderr)
    os.close(stdout_write)
    try:
        assert process.stdin is not None
        messages = [*raw_handshake(1, "pipes-ending"), *map(read_request, range(10, 50))]
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        process.stdin.close()
        try:
            status = process.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            status = None
        assert status == 0, f"the server did not exit within {DEADLINE:g} s ({status})"
        said = err.read_text(encoding="utf-8", errors="replace")
        assert "answers not written: the host did not read standard output" in said, said
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=DEADLINE)
        os.close(stdout_read)


PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n"
FAILED_EXIT = DRAIN + 20.0
"""Seconds within which a server whose answers fail has ended its session."""


def test_once_answers_cannot_be_written_no_further_request_is_run(tmp_path: Path) -> None:
    # stdout on /dev/full: the first answer (to initialize) fails with ENOSPC. The write
    # behind it in the pipe would change the plan and tell nobody; it is not run, stderr
    # says why, and the session ends without waiting for stdin to close.
    plan = tmp_path / "plan.werkbaum"
    plan.write_text(PLAN, encoding="utf-8")
    base = {"version": None, "checksum": checksum(PLAN)}
    arguments = {"source": "plan.werkbaum", "base": base, "id": "a", "status": "x"}
    params = {"name": "werkbaum_set_status", "arguments": arguments}
    write = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    err = tmp_path / "stderr.txt"
    with err.open("wb") as stderr, open(os.devnull, "wb") as full_or_null:
        target = open("/dev/full", "wb") if os.path.exists("/dev/full") else full_or_null  # noqa: SIM115
        with target:
            process = start_server(tmp_path, target, stderr)
    assert process.stdin is not None
    try:
        process.stdin.write(json.dumps(raw_handshake(1, "full")[0]).encode() + b"\n")
        process.stdin.flush()
        deadline = time.monotonic() + 30.0  # until the answer to initialize has failed
        while "cannot write answers" not in err.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(BrokenPipeError):  # it may have ended its session already
            process.stdin.write(json.dumps(write).encode() + b"\n")
            process.stdin.flush()
        try:
            status = process.wait(timeout=FAILED_EXIT)  # stdin still open
        except subprocess.TimeoutExpired:
            status = None
        assert plan.read_text(encoding="utf-8") == PLAN, "a request was run after the failure"
        assert status == 0, "the session went on after answers could not be written"
        said = err.read_text(encoding="utf-8", errors="replace")
        assert "cannot write answers to standard output (No space left on device)" in said
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=DEADLINE)
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
