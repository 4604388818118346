"""A host that never reads the server's stderr (round 25 soak, finding 1).

MCP lets a client capture, forward or ignore a server's stderr. With stderr on a pipe
nobody reads, blocking writes of audit lines and warnings filled the 64 KiB pipe within a
session and then hung the server: a write call at the 231st audit line, every later one
behind its lock, then the reader of stdin after 416 refused lines. Real processes and
real pipes here; each answer has a deadline.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

from tests.rawrpc import PipeClient
from tests.stdio.conftest import SERVER
from werkbaum_stdio.stderr_lines import StderrLines

PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n"
STALE = {"version": None, "checksum": "sha256:" + "0" * 64}
ANSWER_SECONDS = 30


def served_with_a_stderr_pipe(root: Path) -> tuple[PipeClient, int]:
    """The server on ``root`` (holding PLAN), its stderr a 64 KiB pipe: its read end."""
    (root / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
    read_end, write_end = os.pipe()
    env = {"PATH": os.environ["PATH"], "HOME": str(root)}
    client = PipeClient([str(SERVER), "--root", str(root)], root, env, stderr=write_end)
    os.close(write_end)
    return client, read_end


def stale_writes(client: PipeClient, count: int = 400) -> list[dict[str, Any]]:
    """``count`` write attempts against a stale base, one after the other: an audit line
    each (~280 bytes); their answers."""
    arguments = {"source": "plan.werkbaum", "base": STALE, "id": "a", "status": "x"}
    call = {"name": "werkbaum_set_status", "arguments": arguments}
    answers = []
    for number in range(count):
        client.send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": call})
        answers.append(client.receive(number, timeout=ANSWER_SECONDS))
    return answers


def test_writes_and_refused_lines_are_answered_while_stderr_is_never_read(
    tmp_path: Path,
) -> None:
    client, read_end = served_with_a_stderr_pipe(tmp_path)  # the host never reads it
    try:
        client.handshake()
        for number, answer in enumerate(stale_writes(client)):
            assert '"conflict"' in answer["result"]["content"][0]["text"], number
        # 3,000 lines that are no request: a warning each, logged by the reader of stdin.
        for number in range(10_000, 13_000):
            client.send({"jsonrpc": "2.0", "id": number, "method": 5})
            assert client.receive(number, timeout=ANSWER_SECONDS)["error"]["code"] == -32600
        assert client.close(timeout=ANSWER_SECONDS) == 0
    finally:
        if client.process.poll() is None:  # hung (the failure this test is about)
            client.process.kill()
            client.close(timeout=ANSWER_SECONDS)
        os.close(read_end)


def test_lines_beyond_the_queue_are_dropped_counted_and_the_writer_never_waits() -> None:
    read_end, write_end = os.pipe()
    lines = StderrLines(write_end, capacity=100)
    written = threading.Event()

    def write_many() -> None:
        for number in range(5_000):  # 500 KB: far more than the pipe and the queue hold
            lines.write(f"line {number} {'.' * 90}\n")
        written.set()

    threading.Thread(target=write_many, daemon=True).start()
    assert written.wait(ANSWER_SECONDS), "a write waited for the reader"
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(_read_all(read_end)))
    reader.start()  # the host reads at last
    assert lines.flush(ANSWER_SECONDS)
    os.close(write_end)
    reader.join(ANSWER_SECONDS)
    text = received[0].decode()
    numbers = [int(line.split()[1]) for line in text.splitlines() if line.startswith("line ")]
    assert numbers == sorted(set(numbers)) and 0 < len(numbers) < 5_000  # kept, in order
    notes = [line for line in text.splitlines() if "lines for stderr were dropped here" in line]
    counted = sum(int(note.split()[1].replace(",", "")) for note in notes)
    assert counted == 5_000 - len(numbers)  # every dropped line is counted, once


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def test_a_stop_signal_writes_the_queued_audit_lines_out_first(tmp_path: Path) -> None:
    """A stop signal ends the process without atexit: the audit lines still queued (here
    ~48 KB behind a full 64 KiB pipe that the host reads only from the moment it stops
    the server) must not die with it — the audit trail says who changed what."""
    client, read_end = served_with_a_stderr_pipe(tmp_path)
    received: list[bytes] = []
    try:
        client.handshake()
        stale_writes(client)
        client.process.send_signal(signal.SIGTERM)
        reader = threading.Thread(target=lambda: received.append(_read_all(read_end)))
        reader.start()  # the host reads from now on
        assert client.process.wait(timeout=ANSWER_SECONDS) == -signal.SIGTERM
        reader.join(ANSWER_SECONDS)
    finally:
        if client.process.poll() is None:
            client.process.kill()
        client.close(timeout=ANSWER_SECONDS)
    audited = [line for line in received[0].decode().splitlines() if '"tool"' in line]
    assert len(audited) == 400
