"""A host that never reads the server's stderr (round 25 soak, finding 1).

MCP lets a client capture, forward or ignore a server's stderr. With stderr on a pipe
nobody reads, blocking writes of audit lines and warnings filled the 64 KiB pipe within a
session and then hung the server: a write call at the 231st audit line, every later one
behind its lock, then the reader of stdin after 416 malformed lines. Real processes and
real pipes here; each answer has a deadline.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

from tests.stdio.conftest import SERVER
from werkbaum_stdio.stderr_lines import StderrLines

PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n"
STALE = {"version": None, "checksum": "sha256:" + "0" * 64}
ANSWER_SECONDS = 30


def test_writes_and_refused_lines_are_answered_while_stderr_is_never_read(
    tmp_path: Path,
) -> None:
    (tmp_path / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
    read_end, write_end = os.pipe()  # the host's stderr pipe, 64 KiB, never read
    server = subprocess.Popen(
        [str(SERVER), "--root", str(tmp_path)],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=write_end,
    )
    os.close(write_end)
    try:
        client = _Wire(server)
        client.handshake()
        # 400 write attempts against a stale base: an audit line each (~280 bytes).
        for number in range(400):
            answer = client.call(
                "werkbaum_set_status",
                {"source": "plan.werkbaum", "base": STALE, "id": "a", "status": "x"},
            )
            assert '"conflict"' in answer["result"]["content"][0]["text"], number
        # 3,000 lines that are not JSON: a warning each, logged by the reader of stdin.
        for number in range(3000):
            refused = client.raw(f'{{"jsonrpc": "2.0", "id": {10_000 + number}, x}}')
            assert refused["error"]["code"] == -32700, number
        server.stdin.close()  # type: ignore[union-attr]
        assert server.wait(timeout=ANSWER_SECONDS) == 0
    finally:
        if server.poll() is None:  # hung (the failure this test is about): not left behind
            server.kill()
            server.wait(timeout=ANSWER_SECONDS)
        os.close(read_end)


class _Wire:
    """Just enough of a JSON-RPC client: one request at a time, each with a deadline."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.next_id = 0

    def raw(self, line: str) -> dict[str, object]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        answer: list[bytes] = []
        reader = threading.Thread(target=lambda: answer.append(self.process.stdout.readline()))  # type: ignore[union-attr]
        reader.start()
        reader.join(ANSWER_SECONDS)
        assert answer and answer[0], "no answer: the server hangs"
        found: dict[str, object] = json.loads(answer[0])
        return found

    def call(self, tool: str, arguments: dict[str, object]) -> dict[str, object]:
        self.next_id += 1
        request = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        return self.raw(json.dumps(request))

    def handshake(self) -> None:
        self.raw(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "undrained", "version": "1"},
                    },
                }
            )
        )
        assert self.process.stdin is not None
        self.process.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        self.process.stdin.flush()


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
