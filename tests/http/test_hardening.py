"""Slow, idle and too many HTTP clients; Host headers (issue 13, item 5).

Real sockets throughout; the deadlines at their shipped values and the
descriptor limit against ``werkbaum-mcp-http`` processes, the body deadline
(30 s shipped) in-process with a shorter value.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.backend import Backend
from tests.http.conftest import auth, make_app, server_process, serving
from tests.http.test_transport import initialize, legacy_post
from werkbaum_core.engine import LazyEngine
from werkbaum_http import connections
from werkbaum_http.connections import (
    ACCEPT_FAILED,
    FD_RESERVE,
    HEADER_SECONDS,
    KEEP_ALIVE_SECONDS,
)

SLACK = 4.0
"""Seconds a deadline may fire late on a loaded machine."""


def port_of(base_url: str) -> int:
    return int(base_url.rsplit(":", 1)[1])


def open_socket(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def post_head(port: int, length: int) -> bytes:
    """The headers of an authenticated ``POST /mcp`` whose body is to follow."""
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"Authorization: {auth()['Authorization']}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {length}",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def wait_closed(sock: socket.socket, within: float) -> tuple[float, bytes]:
    """Seconds until the server closes ``sock`` (and what it sent before)."""
    started = time.monotonic()
    sock.settimeout(within)
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    return time.monotonic() - started, received


class Trickler(threading.Thread):
    """Sends ``data`` one byte every ``every`` seconds until told to stop or cut off."""

    def __init__(self, sock: socket.socket, data: bytes, every: float) -> None:
        super().__init__(daemon=True)
        self.sock, self.data, self.every = sock, data, every
        self.stop = threading.Event()
        self.cut_off_after: float | None = None

    def run(self) -> None:
        started = time.monotonic()
        for index in range(len(self.data)):
            if self.stop.wait(self.every):
                return
            try:
                self.sock.sendall(self.data[index : index + 1])
            except OSError:
                self.cut_off_after = time.monotonic() - started
                return


def test_idle_half_open_and_trickling_connections_are_closed(
    backend: Backend, tmp_path: Path
) -> None:
    """A silent connection and one trickling its headers are closed at the header deadline,
    an idle kept-alive one at the keep-alive deadline; others are served meanwhile."""
    with server_process(["--server", backend.base_url], tmp_path / "server.log") as served:
        port = port_of(served.base_url)
        silent = open_socket(port)
        trickling = open_socket(port)
        head = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode() + b"X: y\r\n" * 99
        trickler = Trickler(trickling, head, every=0.25)
        trickler.start()
        kept = open_socket(port)
        kept.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert kept.recv(65536).startswith(b"HTTP/1.1 200")
        idle_for, _ = wait_closed(kept, KEEP_ALIVE_SECONDS + SLACK)
        assert KEEP_ALIVE_SECONDS - 1 < idle_for < KEEP_ALIVE_SECONDS + SLACK
        assert httpx.get(f"{served.base_url}/healthz", timeout=5).status_code == 200
        silent_for, said = wait_closed(silent, HEADER_SECONDS + SLACK)
        assert said == b""  # closed without an answer: there was no request
        assert silent_for > HEADER_SECONDS - KEEP_ALIVE_SECONDS - 2
        trickler.join(timeout=SLACK)
        assert trickler.cut_off_after is not None
        assert HEADER_SECONDS - 1 < trickler.cut_off_after < HEADER_SECONDS + SLACK
        assert served.process.poll() is None
        for sock in (silent, trickling, kept):
            sock.close()


def test_clients_trickling_bodies_take_no_call_slots(backend: Backend, tmp_path: Path) -> None:
    """Sixteen authenticated clients trickle request bodies into a server with two call
    slots; every other client is served all the while, not answered 503."""
    args = ["--server", backend.base_url, "--max-concurrent", "2"]
    with server_process(args, tmp_path / "server.log") as served:
        port = port_of(served.base_url)
        body = json.dumps(initialize()).encode()
        tricklers = []
        for _ in range(16):
            sock = open_socket(port)
            sock.sendall(post_head(port, len(body)))
            tricklers.append(Trickler(sock, body, every=0.5))
        for trickler in tricklers:
            trickler.start()
        time.sleep(1.5)  # every trickler is inside, mid-body
        served_now = [legacy_post(served.base_url, initialize(), auth()) for _ in range(6)]
        assert [response.status_code for response in served_now] == [200] * 6
        for trickler in tricklers:
            trickler.stop.set()
            trickler.join(timeout=5)
            trickler.sock.close()


def test_a_body_is_cut_off_at_the_body_deadline(
    backend: Backend, http_engine: LazyEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connections, "BODY_SECONDS", 2.0)
    with serving(make_app(backend, http_engine)) as url:
        port = port_of(url)
        sock = open_socket(port)
        body = json.dumps(initialize()).encode()
        sock.sendall(post_head(port, len(body)))
        trickler = Trickler(sock, body, every=0.2)
        trickler.start()
        took, said = wait_closed(sock, 2.0 + SLACK)
        assert 1.5 < took < 2.0 + SLACK and said == b""  # nothing was executed
        trickler.stop.set()
        trickler.join(timeout=5)
        sock.close()
        assert legacy_post(url, initialize(), auth()).status_code == 200


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@contextlib.contextmanager
def descriptor_limit(pid: int, soft: int) -> Iterator[None]:
    old = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, old[1]))
    try:
        yield
    finally:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, old)


def answered(sock: socket.socket) -> bytes:
    """What the server sent on ``sock`` so far, without waiting (and without taking it)."""
    sock.setblocking(False)
    try:
        return sock.recv(65536, socket.MSG_PEEK)
    except BlockingIOError:
        return b""
    finally:
        sock.settimeout(60)


def healthz_on(sock: socket.socket, port: int) -> bytes:
    sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    return sock.recv(65536)


def test_at_the_descriptor_limit_new_connections_are_refused_and_service_recovers(
    backend: Backend, tmp_path: Path
) -> None:
    with server_process(["--server", backend.base_url], tmp_path / "server.log") as served:
        pid, port = served.process.pid, port_of(served.base_url)
        allowed = 30
        with descriptor_limit(pid, FD_RESERVE + allowed):
            held = [open_socket(port) for _ in range(allowed + 30)]
            time.sleep(1)
            refused = [s for s in held if answered(s).startswith(b"HTTP/1.1 503")]
            assert len(refused) == 30
            for sock in refused:
                sock.close()
            held = [s for s in held if s not in refused]
            busy = httpx.get(f"{served.base_url}/healthz", timeout=10)
            assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
            for sock in held:
                sock.close()
            time.sleep(0.5)
            assert httpx.get(f"{served.base_url}/healthz", timeout=10).status_code == 200
        # Below the descriptors already open: accept() itself fails (EMFILE); the server lives.
        with descriptor_limit(pid, 3):
            waiting = [open_socket(port) for _ in range(3)]  # queued by the kernel
            time.sleep(3.5)
            assert served.process.poll() is None
        for sock in waiting:  # the limit is back: they are accepted and served
            assert healthz_on(sock, port).startswith(b"HTTP/1.1 200")
            sock.close()
        assert legacy_post(served.base_url, initialize(), auth()).status_code == 200
    log = served.log.read_text(encoding="utf-8")  # complete: the server has stopped
    assert 1 <= log.count(ACCEPT_FAILED) <= 8  # once a second, not once per connection
    assert len(log) < 20_000


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:{port}", 200),
        ("LOCALHOST:{port}", 200),
        ("localhost:{port}", 200),
        ("127.0.0.1:x.evil.example", 421),
        ("127.0.0.1:{port}.evil.example", 421),
        ("127.0.0.1", 421),
        ("127.0.0.1:0", 421),
        ("localhost.:{port}", 421),
        ("evil.example:{port}", 421),
        ("[::1]:{port}", 421),
    ],
)
def test_allowed_hosts_match_host_and_port_exactly(base_url: str, host: str, status: int) -> None:
    headers = {**auth(), "Host": host.format(port=port_of(base_url))}
    assert legacy_post(base_url, initialize(), headers).status_code == status


def test_post_to_mcp_slash_is_served_without_a_redirect(base_url: str) -> None:
    good = httpx.post(
        f"{base_url}/mcp/",
        json=initialize(),
        headers={**auth(), "Accept": "application/json, text/event-stream"},
        timeout=60,
    )
    assert good.status_code == 200 and good.json()["result"]["protocolVersion"]
    evil = httpx.post(
        f"{base_url}/mcp/",
        json=initialize(),
        headers={**auth(), "Host": "evil.example", "Accept": "application/json"},
        timeout=60,
    )
    assert evil.status_code == 421 and "location" not in evil.headers
    for path in ("/mcp//", "/mcp/x", "/mcpx"):
        response = httpx.post(f"{base_url}{path}", json=initialize(), headers=auth(), timeout=60)
        assert response.status_code == 404 and "location" not in response.headers


def test_a_malformed_allowed_host_is_a_start_up_error(backend: Backend) -> None:
    from tests.http.test_cli import one_line_error, run_cli

    line = one_line_error(run_cli("--server", backend.base_url, "--allowed-host", "x:y:*"))
    assert "--allowed-host 'x:y:*' is not NAME" in line


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://127.0.0.1:{port}", 200),
        ("https://LOCALHOST:{port}", 200),
        ("http://127.0.0.1:x.evil.example", 403),
        ("http://127.0.0.1", 403),
        ("null", 403),
        ("file://", 403),
        ("http://127.0.0.1:{port}/path", 403),
    ],
)
def test_a_browser_origin_must_be_an_allowed_host(base_url: str, origin: str, status: int) -> None:
    headers = {**auth(), "Origin": origin.format(port=port_of(base_url))}
    assert legacy_post(base_url, initialize(), headers).status_code == status
