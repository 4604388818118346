"""An executor that runs the modules natively in a persistent ``node`` process.

Real isolation and V8 speed, at the price of needing ``node`` on the PATH. The
process is started lazily, restarted after it dies, and killed when a call
exceeds its time limit, so one pathological call cannot wedge the server.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from werkbaum_core.engine.modules import Program
from werkbaum_core.engine.protocol import CALL_TIMEOUT, JSON, START_TIMEOUT
from werkbaum_core.errors import EngineError, EngineTimeout

HOST = Path(__file__).with_name("node_host.mjs")


def node_binary() -> str | None:
    """The ``node`` executable, or None when it is not installed."""
    return shutil.which(os.environ.get("WERKBAUM_NODE", "node"))


class _Process:
    """One running host: a reader thread turns stdout lines into a queue."""

    def __init__(self, binary: str, directory: Path, entries: tuple[str, ...]) -> None:
        # A minimal environment: the plan modules must not see the server's secrets.
        env = {"PATH": os.environ.get("PATH", "")}
        self.popen = subprocess.Popen(
            [binary, str(HOST), str(directory), *entries],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=50)
        assert self.popen.stdout is not None and self.popen.stderr is not None
        threading.Thread(target=self._pump, args=(self.popen.stdout,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.popen.stderr,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def _drain(self, stream: IO[str]) -> None:
        for line in stream:
            self.stderr.append(line.rstrip())

    def next_line(self, timeout: float) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise EngineTimeout(f"node executor gave no answer within {timeout:g} s") from None
        if line is None:
            self.popen.wait()
            detail = " | ".join(list(self.stderr)[-5:])
            raise EngineError(f"node executor exited ({self.popen.returncode}): {detail}")
        return line.rstrip("\n")

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait()


class NodeExecutor:
    name = "node"

    def __init__(self, program: Program, *, timeout: float = CALL_TIMEOUT) -> None:
        binary = node_binary()
        if binary is None:
            raise EngineError("the node executor needs `node` on the PATH")
        self._binary = binary
        self._program = program
        self._timeout = timeout
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._exports: dict[str, list[str]] = {}
        self._process: _Process | None = None
        with self._lock:
            self._ensure_started()

    def _ensure_started(self) -> _Process:
        if self._process is not None and self._process.popen.poll() is None:
            return self._process
        # The modules are copied for the start only: once loaded, node needs no files.
        with self._program.materialized() as directory:
            process = _Process(self._binary, directory, self._program.entries)
            try:
                ready = json.loads(process.next_line(START_TIMEOUT))
            except EngineError:
                process.kill()
                raise
        if "error" in ready:  # the host's own words for a module that failed to load
            process.kill()
            raise EngineError(str(ready["error"]))
        self._exports = ready.get("exports", {})
        self._process = process
        return process

    def exports(self) -> dict[str, list[str]]:
        return self._exports

    def call_text(self, entry: str, payload: JSON) -> str:
        with self._lock:
            process = self._ensure_started()
            request_id = next(self._ids)
            line = json.dumps({"id": request_id, "entry": entry, "payload": payload})
            try:
                assert process.popen.stdin is not None
                process.popen.stdin.write(line + "\n")
                process.popen.stdin.flush()
                reply = process.next_line(self._timeout)
            except (EngineError, OSError) as exc:
                # Kill on timeout or death; the next call starts a fresh process.
                process.kill()
                self._process = None
                if isinstance(exc, EngineError):
                    raise
                raise EngineError(f"node executor pipe failed: {exc}") from exc
        # The host writes a success as '{"id":<n>,"result":<json>}' (see node_host.mjs):
        # slicing the result out spares parsing and re-serialising it here.
        prefix = f'{{"id":{request_id},"result":'
        if reply.startswith(prefix) and reply.endswith("}"):
            return reply[len(prefix) : -1]
        message: dict[str, Any] = json.loads(reply)
        if message.get("id") != request_id:
            raise EngineError("node executor answered out of order")
        raise EngineError(str(message.get("error", "malformed reply")), entry=entry)

    def close(self) -> None:
        with self._lock:
            if self._process is not None:
                if self._process.popen.stdin is not None:
                    self._process.popen.stdin.close()
                try:
                    self._process.popen.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                self._process = None
