"""Pipes a host made non-blocking (round 26, process lifecycle).

``O_NONBLOCK`` belongs to the pipe, not to the descriptor: a node host whose own stdio is
a pipe makes it non-blocking (libuv), and a server that inherits it — stderr, say —
writes to a non-blocking pipe. A full pipe then fails the write with ``EAGAIN`` instead
of waiting, and both writers took that for a host that had gone: stdout sent the first
megabyte of an answer and nothing after it (a broken line, then silence), stderr dropped
its lines. Real processes and pipes; every wait has a deadline.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import threading
import time
from pathlib import Path

from tests.stdio.conftest import SERVER, raw_handshake

DEADLINE = 60.0
NODES = 20_000
"""A plan whose werkbaum_read answer (~1.3 MB) exceeds the answer pipe (1 MiB)."""
REFUSED = 2_000
"""Lines refused with a warning each on stderr (~300 KB: far more than its pipe holds)."""


def non_blocking_pipe() -> tuple[int, int]:
    read_end, write_end = os.pipe()
    flags = fcntl.fcntl(write_end, fcntl.F_GETFL)
    fcntl.fcntl(write_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    return read_end, write_end


def read_until(fd: int, enough: bytes, count: int) -> bytes:
    """What ``fd`` gives until ``enough`` occurs ``count`` times, or its end, or the deadline."""
    data = b""
    deadline = time.monotonic() + DEADLINE
    while data.count(enough) < count and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk
    return data


def test_answers_and_stderr_lines_are_whole_on_pipes_the_host_made_non_blocking(
    tmp_path: Path,
) -> None:
    nodes = (f"  - [ ] #n{i}: Node number {i} with some words (S) @anna" for i in range(NODES))
    (tmp_path / "big.werkbaum").write_text("\n".join(["[ ] #plan: Plan", *nodes]) + "\n")
    out_read, out_write = non_blocking_pipe()
    err_read, err_write = non_blocking_pipe()
    process = subprocess.Popen(
        [str(SERVER), "--root", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=out_write,
        stderr=err_write,
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )
    os.close(out_write)
    os.close(err_write)
    try:
        assert process.stdin is not None
        reads = [
            {
                "jsonrpc": "2.0",
                "id": 10 + number,
                "method": "tools/call",
                "params": {"name": "werkbaum_read", "arguments": {"source": "big.werkbaum"}},
            }
            for number in range(5)
        ]
        refused = [{"jsonrpc": "2.0", "id": 100 + n, "method": 5} for n in range(REFUSED)]
        messages = [*raw_handshake(1, "non-blocking"), *reads, *refused]
        stdin = process.stdin
        data = b"".join(json.dumps(m).encode() + b"\n" for m in messages)
        # From a thread: the server stops reading while its answers cannot go out.
        threading.Thread(target=lambda: (stdin.write(data), stdin.flush()), daemon=True).start()
        time.sleep(2.0)  # neither pipe is read for a while: both fill up
        out = read_until(out_read, b"\n", 1 + len(reads) + REFUSED)
        err = read_until(err_read, b"method must be a string", REFUSED)
        answered = {json.loads(line)["id"] for line in out.splitlines()}  # every line whole
        assert answered == {1} | {m["id"] for m in reads} | {m["id"] for m in refused}
        warnings = [line for line in err.splitlines() if b"method must be a string" in line]
        assert len(warnings) == REFUSED, err[-500:]
        stdin.close()
        assert process.wait(timeout=DEADLINE) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=DEADLINE)
        os.close(out_read)
        os.close(err_read)


def test_the_command_line_waits_on_a_non_blocking_stdout_it_inherited(tmp_path: Path) -> None:
    # `werkbaum inspect` run by a node script with stdio 'inherit': it wrote the first
    # 64 KiB, then "cannot write to standard output: resource temporarily unavailable", 2.
    nodes = (f"  - [ ] #n{i}: Node number {i} (S)" for i in range(5_000))
    plan = tmp_path / "big.werkbaum"
    plan.write_text("\n".join(["[ ] #plan: Plan", *nodes]) + "\n", encoding="utf-8")
    out_read, out_write = non_blocking_pipe()
    cli = SERVER.with_name("werkbaum")
    process = subprocess.Popen(
        [str(cli), "inspect", str(plan)], stdout=out_write, stderr=subprocess.PIPE
    )
    os.close(out_write)
    try:
        time.sleep(1.0)  # not read yet: the pipe fills
        out = read_until(out_read, b"\0", 1)  # to its end
        assert process.wait(timeout=DEADLINE) == 0
        assert process.stderr is not None
        assert process.stderr.read() == b""
        assert b"#n4999" in out
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=DEADLINE)
        os.close(out_read)
