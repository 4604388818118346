"""The subprocesses of the HTTP benchmark: the backend stand-in, werkbaum-mcp-http, the load.

Each runs on a free loopback port and is stopped by its own pid (and the pids
of its descendants) when the block ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from bench.paths import HTTP_SERVER, REPO, clean_env
from bench.procs import tree

START_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop(process: subprocess.Popen[Any]) -> None:
    """SIGTERM the process (uvicorn stops its workers and engines), then kill what is left."""
    family = tree(process.pid)
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    for pid in family[1:]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def backend() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The stand-in backend on a free loopback port; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.backend", "--port", "0"],
        cwd=REPO,
        env=clean_env(PYTHONPATH=str(REPO)),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_S)
        if not ready:
            raise RuntimeError("the backend stand-in did not start")
        yield process.stdout.readline().strip(), process
    finally:
        stop(process)


def wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"werkbaum-mcp-http did not start: {log.read_text()[-2000:]}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        time.sleep(0.1)


@contextlib.contextmanager
def server(
    backend_url: str, workers: int, token: str, log: Path, *extra: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    argv = [str(HTTP_SERVER), "--port", str(port), "--server", backend_url, *extra]
    with log.open("ab") as out:
        process = subprocess.Popen(
            [*argv, "--workers", str(workers)],
            env=clean_env(WERKBAUM_MCP_TOKEN=token),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log)
        yield url, process
    finally:
        stop(process)


def load(job: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "bench.load"],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=timeout_s,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result
