"""A raw JSON-RPC client over a subprocess's pipes (newline-delimited, as MCP stdio).

No SDK on the client side, so the client's own cost is the same for every
server it talks to (the benchmarks), and nothing between a test and the bytes
the server wrote (the random call sessions). Every wait has a deadline.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

LEGACY = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "werkbaum-bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


class PipeClient:
    """A server subprocess; ``started`` is the ``perf_counter`` just before the spawn.

    The server's stderr goes to an unnamed temporary file, quoted when it exits early.
    """

    def __init__(
        self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], stderr: int | None = None
    ) -> None:
        """``stderr``: a descriptor the server's stderr goes to instead (then not quoted)."""
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err if stderr is None else stderr,
        )
        self._buffer = b""
        self._next_id = 100

    @property
    def pid(self) -> int:
        return self.process.pid

    def send(self, message: Mapping[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(
        self, request_id: int | str, timeout: float = 30.0, *, strict: bool = False
    ) -> dict[str, Any]:
        """The response with ``request_id``; other messages (notifications) are skipped,
        and with ``strict`` an answer to any other request is an ``AssertionError``."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                if line.strip():
                    message: dict[str, Any] = json.loads(line)
                    if message.get("id") == request_id:
                        return message
                    assert not strict or "id" not in message, (request_id, message)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no response to request {request_id} in {timeout} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"server exited: {self.stderr_tail()}")
                self._buffer += chunk

    def handshake(self) -> tuple[float, float]:
        """Legacy handshake, then ``tools/list``; ms from spawn to each answer."""
        self.send(INITIALIZE)
        self.receive(1)
        initialized = (time.perf_counter() - self.started) * 1000
        self.send(INITIALIZED)
        self.send(TOOLS_LIST)
        self.receive(2)
        return initialized, (time.perf_counter() - self.started) * 1000

    def stderr_tail(self) -> str:
        self._err.seek(0)
        return self._err.read().decode(errors="replace")[-1500:]

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        request = {
            "jsonrpc": "2.0",
            "id": self._next_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": dict(arguments)},
        }
        self.send(request)
        response = self.receive(self._next_id, timeout=120)
        if "error" in response or response["result"].get("isError"):
            raise RuntimeError(f"{name} failed: {json.dumps(response)[:300]}")
        result: dict[str, Any] = response["result"]
        return result

    def close(self, timeout: float = 15.0) -> int:
        """Close stdin (the server's signal to end), wait, kill if it does not."""
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(timeout=timeout)
        if self.process.stdout:
            self.process.stdout.close()
        self._err.close()
        return code

    def __enter__(self) -> PipeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
