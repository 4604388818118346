"""Fixtures for the HTTP server: a stand-in backend, the app on a real loopback socket, clients.

Every test talks to the server over TCP (uvicorn in a thread, or the
``werkbaum-mcp-http`` console script in a subprocess), with the official
``mcp`` client in both protocol eras or with raw HTTP. The backend stand-in is
the shared ``backend`` fixture of ``tests/conftest.py``; every test creates its
own document on it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation
from starlette.types import ASGIApp

from tests.backend import Backend
from werkbaum_core.engine import LazyEngine, choose_executor
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_http.app import create_app
from werkbaum_http.config import ENV_READ_TOKEN, ENV_TOKEN, HttpConfig, Tokens
from werkbaum_http.connections import uvicorn_settings

# Test-only values, generated per run: never a real secret in the repository.
FULL_TOKEN = "full-" + secrets.token_hex(20)
READ_TOKEN = "read-" + secrets.token_hex(20)
TOKENS = Tokens(full=FULL_TOKEN, read=READ_TOKEN)
MODES = ["auto", "legacy"]
CLIENT_NAME = "werkbaum-http-test"
PLAN = """[ ] #plan: Plan
  - [ ] #a: A (S)
  - [ ] #b: B (M)
    - [ ] #b1: B1 (XS)
  - [x] #c: C (S)
"""
SERVER_SCRIPT = Path(sys.executable).with_name("werkbaum-mcp-http")
START_TIMEOUT = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def http_engine() -> Iterator[LazyEngine]:
    """The engine the HTTP server picks by default (node when installed), shared by the apps."""
    engine = LazyEngine(choose_executor(None, {}), "")
    yield engine
    engine.close()


def create_document(backend: Backend, text: str = PLAN, title: str = "Plan") -> str:
    """A new document on the stand-in; returns its canonical URL."""
    response = httpx.post(
        f"{backend.base_url}/api/v1/documents", json={"title": title, "content": text}
    )
    response.raise_for_status()
    return f"{backend.base_url}/api/v1/documents/{response.json()['id']}"


def history_names(document: str) -> list[str | None]:
    entries = httpx.get(f"{document}/history").json()
    return [entry.get("displayName") for entry in entries]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(app: ASGIApp, started: list[uvicorn.Server] | None = None) -> Iterator[str]:
    """``app`` under uvicorn on a free loopback port (in a thread), with the protocol and
    limits of ``werkbaum-mcp-http``; yields the base URL (the server goes to ``started``)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, **uvicorn_settings(1))
    server = uvicorn.Server(config)
    if started is not None:
        started.append(server)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def make_app(
    backend: Backend,
    engine: LazyEngine,
    *,
    tokens: Tokens = TOKENS,
    store: DocumentStore | None = None,
    **options: Any,
) -> ASGIApp:
    config = HttpConfig(servers=(backend.base_url,), **options)
    return create_app(config, tokens, engine=engine, store=store)


@pytest.fixture
def base_url(backend: Backend, http_engine: LazyEngine) -> Iterator[str]:
    """The full app (both tokens configured) on a real socket."""
    with serving(make_app(backend, http_engine)) as url:
        yield url


@contextlib.asynccontextmanager
async def connect(
    base_url: str, token: str, mode: str, name: str = CLIENT_NAME
) -> AsyncIterator[Client]:
    """The official client over Streamable HTTP with a bearer token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        transport = streamable_http_client(f"{base_url}/mcp", http_client=http)
        info = Implementation(name=name, version="1.0")
        async with Client(transport, mode=mode, client_info=info) as client:
            yield client


def auth(token: str = FULL_TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def server_env(**extra: str) -> dict[str, str]:
    """A subprocess environment with the test tokens and nothing inherited but PATH/HOME."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    env.update({ENV_TOKEN: FULL_TOKEN, ENV_READ_TOKEN: READ_TOKEN})
    env.update(extra)
    return env


class ServerProcess:
    """``werkbaum-mcp-http`` as a subprocess on a chosen port; stderr goes to a file."""

    def __init__(
        self,
        args: list[str],
        log: Path,
        env: dict[str, str] | None = None,
        port: int | None = None,
    ) -> None:
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self._handle = log.open("a", encoding="utf-8")
        self.process = subprocess.Popen(
            [str(SERVER_SCRIPT), "--port", str(self.port), *args],
            stdin=subprocess.DEVNULL,
            stdout=self._handle,
            stderr=self._handle,
            env=env or server_env(),
        )

    def wait_ready(self) -> ServerProcess:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text(encoding='utf-8')}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"server did not start: {self.log.read_text(encoding='utf-8')}")

    def stop(self) -> None:
        stop_process(self.process)
        self._handle.close()


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL if the process has not ended 15 s later."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def server_process(args: list[str], log: Path, port: int | None = None) -> Iterator[ServerProcess]:
    started = ServerProcess(args, log, port=port)
    try:
        yield started.wait_ready()
    finally:
        started.stop()
