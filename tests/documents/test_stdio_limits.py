"""Slow and huge backends through a real ``werkbaum-mcp`` process (issue 13, item 6).

The server is spoken to with raw JSON-RPC lines on its pipes, so that the test
holds the process id (for its memory) and can put fifty requests in flight at
once, as an agent with parallel tool calls does.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.backend import Backend
from tests.backend.faults import Huge, Trickle
from tests.backend.human import Human
from tests.http.conftest import stop_process
from tests.stdio.conftest import raw_handshake
from werkbaum_core.stores.backend_http import DEADLINE_SECONDS, MAX_BACKEND_CALLS

SERVER = Path(sys.executable).with_name("werkbaum-mcp")
PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n"
ANSWER_TIMEOUT = 60.0


class StdioProcess:
    """``werkbaum-mcp`` with its answers collected by id, each with the time it came."""

    def __init__(self, root: Path, backend: Backend) -> None:
        self.process = subprocess.Popen(
            [str(SERVER), "--root", str(root), "--server", backend.base_url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(root / "server.log").open("wb"),
            cwd=root,
        )
        self._answers: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        for message in raw_handshake(0, "limits-test"):
            self.send(message)
        assert self.answers(1)[0]["id"] == 0

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._answers.put((time.monotonic(), json.loads(line)))

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def call(self, request_id: int, tool: str, **arguments: Any) -> None:
        params = {"name": tool, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    def answers(self, count: int, timeout: float = ANSWER_TIMEOUT) -> list[dict[str, Any]]:
        return [message for _, message in self.timed_answers(count, timeout)]

    def timed_answers(self, count: int, timeout: float) -> list[tuple[float, dict[str, Any]]]:
        return [self._answers.get(timeout=timeout) for _ in range(count)]

    def peak_rss_kib(self) -> int:
        """``VmHWM``: the most resident memory the process ever had."""
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="ascii")
        line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
        return int(line.split()[1])

    def stop(self) -> None:
        stop_process(self.process)


@pytest.fixture
def server(tmp_path: Path, backend: Backend) -> Iterator[StdioProcess]:
    (tmp_path / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
    started = StdioProcess(tmp_path, backend)
    yield started
    started.stop()


def error_of(message: dict[str, Any]) -> dict[str, Any]:
    result = message["result"]
    assert result["isError"] is True
    error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return error


def test_file_calls_answer_at_once_while_backend_calls_wait(
    server: StdioProcess, backend: Backend, human: Human
) -> None:
    """Fifty document reads against a trickling backend — more than anyio's 40 worker
    threads — then one file read: it answers at once; the waiting reads end by the deadline."""
    doc_id = human.create(PLAN)
    with backend.faults.injected(Trickle(every=1.0)):
        started = time.monotonic()
        for request_id in range(1, 51):
            server.call(request_id, "werkbaum_read", source=doc_id)
        server.call(99, "werkbaum_read", source="plan.werkbaum")
        quick = dict((m["id"], (t - started, m)) for t, m in server.timed_answers(43, 20))
        assert 99 in quick, "the file read waited behind the document reads"
        took, file_answer = quick.pop(99)
        assert took < 5 and file_answer["result"]["structuredContent"]["text"] == PLAN
        busy = [error_of(message) for _, message in quick.values()]
        assert len(busy) == 50 - MAX_BACKEND_CALLS
        assert all(error["code"] == "source_unavailable" and error["busy"] for error in busy)
        waited = server.timed_answers(MAX_BACKEND_CALLS, DEADLINE_SECONDS + 30)
    for at, message in waited:
        error = error_of(message)
        assert error["code"] == "source_unavailable" and error["deadline"] == DEADLINE_SECONDS
        assert DEADLINE_SECONDS - 1 < at - started < DEADLINE_SECONDS + 10


def test_a_huge_document_leaves_the_server_small(
    server: StdioProcess, backend: Backend, human: Human
) -> None:
    """A 300 MB "document" without a declared length: every path reads at most 12 MB and
    answers ``too_large``; the server's peak memory grows by far less than the answer."""
    doc_id = human.create(PLAN)
    server.call(1, "werkbaum_read", source=doc_id)
    base = server.answers(1)[0]["result"]["structuredContent"]["base"]
    before = server.peak_rss_kib()
    with backend.faults.injected(Huge(size=300 * 2**20, declare_length=False)):
        server.call(2, "werkbaum_read", source=doc_id)
        server.call(3, "werkbaum_inspect", source=doc_id)
        server.call(4, "werkbaum_set_status", source=doc_id, base=base, id="a", status="x")
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "resources/read",
                "params": {"uri": f"werkbaum://doc/{doc_id}"},
            }
        )
        answers = {message["id"]: message for message in server.answers(4)}
    for request_id in (2, 3, 4):
        assert error_of(answers[request_id])["code"] == "too_large"
    assert "too_large" in answers[5]["error"]["message"]
    grown_mib = (server.peak_rss_kib() - before) / 1024
    assert grown_mib < 80, f"the server grew by {grown_mib:.0f} MiB"
    assert human.get(doc_id)["version"] == 1  # nothing was written
