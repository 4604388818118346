"""Clients that do not read their answers (round 21, finding 2), on real sockets.

A client sends one complete request for a big answer and then never reads: the
answer waits in the server's buffer and the kernel's. The send deadline resets
such a connection (in-process here, with a shorter deadline than shipped, as
the body deadline's test does); a client that reads slowly but steadily gets
the whole answer.
"""

from __future__ import annotations

import contextlib
import gc
import json
import socket
import time
import tracemalloc
from collections.abc import Callable, Iterator

import httpx
import pytest
import uvicorn

from tests.backend import Backend
from tests.http.conftest import FULL_TOKEN, create_document, make_app, serving
from tests.http.test_hardening import SLACK, port_of
from tests.http.test_transport import MODERN, modern_call
from werkbaum_core.engine import LazyEngine
from werkbaum_http import connections
from werkbaum_http.connections import GuardedH11Protocol

GRACE = 2.0
RATE = 1024 * 1024
LINE = '  - [ ] Task with "quotes" and \\backslashes\\ (S)\n'
BIG_PLAN = "[ ] #plan: Plan\n" + LINE * (1_500_000 // len(LINE))
"""1.5 M characters: a ``werkbaum_read`` answer of about 3.6 MB, more than the kernel takes."""
STALLED = 12


def read_request(port: int, document: str) -> bytes:
    """A complete 2026-07-28 ``werkbaum_read`` of ``document`` as raw HTTP/1.1."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    }
    params = {"name": "werkbaum_read", "arguments": {"source": document}, "_meta": meta}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    head = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"Authorization: Bearer {FULL_TOKEN}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"MCP-Protocol-Version: {MODERN}",
        "Mcp-Method: tools/call",
        "Mcp-Name: werkbaum_read",
        f"Content-Length: {len(body)}",
    ]
    return ("\r\n".join(head) + "\r\n\r\n" + body).encode()


def reader(port: int, document: str, buffer: int = 2048) -> socket.socket:
    """A client with a small receive buffer that has sent its request (and read nothing yet)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buffer)
    sock.connect(("127.0.0.1", port))
    sock.sendall(read_request(port, document))
    return sock


def buffered(server: uvicorn.Server) -> list[int]:
    """The answer bytes each of the server's connections holds in its write buffer."""
    protocols = [c for c in server.server_state.connections if isinstance(c, GuardedH11Protocol)]
    return [p.transport.get_write_buffer_size() for p in protocols]


def stuck(sizes: list[int]) -> bool:
    return len(sizes) == STALLED and min(sizes) > 100_000


def held(server: uvicorn.Server) -> tuple[int, int]:
    """The server's connections, and the answer bytes they hold in its write buffers."""
    sizes = buffered(server)
    return len(sizes), sum(sizes)


def read_all(sock: socket.socket) -> tuple[bytes, bool]:
    """Everything the server sent, and whether the connection was reset."""
    sock.settimeout(10)
    received = b""
    try:
        while chunk := sock.recv(1 << 16):
            received += chunk
    except ConnectionResetError:
        return received, True
    return received, False


@pytest.fixture
def short_send_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connections, "SEND_GRACE_SECONDS", GRACE)
    monkeypatch.setattr(connections, "SEND_BYTES_PER_SECOND", RATE)


@pytest.fixture
def traced() -> Iterator[None]:
    """Python's allocations traced: the process's RSS keeps what glibc's arenas keep."""
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


@contextlib.contextmanager
def big_document_server(
    backend: Backend, engine: LazyEngine
) -> Iterator[tuple[str, str, uvicorn.Server]]:
    started: list[uvicorn.Server] = []
    with serving(make_app(backend, engine), started) as url:
        yield url, create_document(backend, BIG_PLAN), started[0]


def wait_for(condition: Callable[[], bool], within: float = 60) -> None:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < within
        time.sleep(0.05)


def wait_until_released(server: uvicorn.Server, within: float) -> float:
    started = time.monotonic()
    while held(server) != (0, 0):
        assert time.monotonic() - started < within, f"still held: {held(server)}"
        time.sleep(0.1)
    return time.monotonic() - started


@pytest.mark.usefixtures("short_send_deadline", "traced")
def test_clients_that_never_read_are_reset_at_the_send_deadline(
    backend: Backend, http_engine: LazyEngine
) -> None:
    with big_document_server(backend, http_engine) as (url, document, server):
        port = port_of(url)
        answer = modern_call(url, "werkbaum_read", {"source": document}, FULL_TOKEN)
        assert answer.status_code == 200 and len(answer.content) > 3_500_000
        deadline = GRACE + len(answer.content) / RATE  # every byte undelivered at the start
        kept: list[int] = []
        for _ in range(2):  # a second wave: nothing of the first is kept
            readers = [reader(port, document) for _ in range(STALLED)]
            # Every reader's answer is stuck: all of them accepted, each holding over 100 KB
            # (one stuck 3.5 MB answer alone is more than 12 x 100 KB in all).
            wait_for(lambda: stuck(buffered(server)))
            # Everybody else is served meanwhile.
            assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
            small = create_document(backend)
            call = modern_call(url, "werkbaum_read", {"source": small}, FULL_TOKEN)
            assert call.status_code == 200 and "#plan" in call.text
            took = wait_until_released(server, deadline + SLACK)
            assert took > GRACE  # reset by the deadline, not by a failure
            for stalled in readers:
                received, reset = read_all(stalled)
                assert reset and len(received) < len(answer.content)
                stalled.close()
            gc.collect()
            kept.append(tracemalloc.get_traced_memory()[0])
        # Python's memory after each wave: the answers are gone, not one is kept.
        assert max(kept) - min(kept) < len(answer.content) / 4, kept


@pytest.mark.usefixtures("short_send_deadline")
def test_a_slow_steady_reader_gets_the_whole_answer(
    backend: Backend, http_engine: LazyEngine
) -> None:
    with big_document_server(backend, http_engine) as (url, document, server):
        sock = reader(port_of(url), document, buffer=1 << 16)
        sock.settimeout(GRACE)
        received = b""
        started = time.monotonic()
        while b"\r\n\r\n" not in received or len(received) < complete(received):
            received += sock.recv(1 << 15)  # 32 KiB every 16 ms at most: 2 MiB/s, twice RATE
            time.sleep(1 / 64)
        took = time.monotonic() - started
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head[:100]
        result = json.loads(body)["result"]
        assert len(body) > 3_500_000 and not result["isError"]
        assert result["structuredContent"]["text"] == BIG_PLAN
        assert took > 1.5  # slower than the grace alone would allow for
        sock.close()
        wait_until_released(server, SLACK)


def complete(received: bytes) -> int:
    """The length of a response whose headers are in ``received``."""
    head, _, _ = received.partition(b"\r\n\r\n")
    lengths = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    return len(head) + 4 + int(lengths[0].split(b":")[1])
