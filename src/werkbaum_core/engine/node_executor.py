"""An executor that runs the modules natively in a persistent ``node`` process.

Real isolation and V8 speed, at the price of needing ``node`` on the PATH. The
process is started lazily, restarted after it dies, and killed when a call
exceeds its time limit, so one pathological call cannot wedge the server.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from werkbaum_core.engine.modules import Program
from werkbaum_core.engine.protocol import JSON, LIMITS, Limits
from werkbaum_core.errors import EngineError, EngineTimeout

HOST = Path(__file__).with_name("node_host.mjs")


def node_binary() -> str | None:
    """The ``node`` executable, or None when it is not installed."""
    return shutil.which(os.environ.get("WERKBAUM_NODE", "node"))


QUOTED = 200
"""Characters of a reply that breaks the protocol quoted in the error."""


class _Process:
    """One running host: a reader thread turns answer lines into a queue.

    The answers come on a pipe of their own (its number is the host's first argument),
    not on stdout: module code writes there (``console.log``), and what it writes,
    like stderr, is only kept for error messages.

    The child leads a process group of its own, so that a ``WERKBAUM_NODE`` wrapper
    script and whatever it started go with it when it is killed.
    """

    def __init__(self, binary: str, directory: Path, entries: tuple[str, ...]) -> None:
        # A minimal environment: the plan modules must not see the server's secrets.
        env = {"PATH": os.environ.get("PATH", "")}
        answers, child_end = os.pipe()
        try:
            self.popen = subprocess.Popen(
                [binary, str(HOST), str(child_end), str(directory), *entries],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
                pass_fds=(child_end,),
                process_group=0,
            )
        except OSError as exc:
            os.close(answers)
            raise EngineError(f"the node executor could not start {binary}: {exc}") from exc
        finally:
            os.close(child_end)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.output: collections.deque[str] = collections.deque(maxlen=50)
        assert self.popen.stdout is not None
        reader = open(answers, encoding="utf-8", errors="replace")  # noqa: SIM115 (the pump closes it)
        threading.Thread(target=self._pump, args=(reader,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.popen.stdout,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        with stream:
            for line in stream:
                self.lines.put(line)
        self.lines.put(None)

    def _drain(self, stream: IO[str]) -> None:
        for line in stream:
            self.output.append(line.rstrip()[:QUOTED])

    def next_line(self, timeout: float) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise EngineTimeout(f"node executor gave no answer within {timeout:g} s") from None
        if line is None:
            self.popen.wait()
            detail = " | ".join(list(self.output)[-5:])
            raise EngineError(f"node executor exited ({self.popen.returncode}): {detail}")
        return line.rstrip("\n")

    def kill(self) -> None:
        """Kill the child and its process group, and reap it. Only while the child is
        not reaped: until then its pid, the group's id, cannot name another group."""
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()


class NodeExecutor:
    name = "node"

    def __init__(self, program: Program, *, limits: Limits = LIMITS) -> None:
        binary = node_binary()
        if binary is None:
            raise EngineError("the node executor needs `node` on the PATH")
        self._binary = binary
        self._program = program
        self._timeout = limits.call
        self._start_timeout = limits.start
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
                ready = _start_answer(process.next_line(self._start_timeout))
            except BaseException as exc:  # no child outlives a failed start
                process.kill()
                if isinstance(exc, EngineTimeout):
                    raise EngineTimeout(
                        f"loading the modules failed: no answer within "
                        f"{self._start_timeout:g} s, the node executor's limit for loading them"
                    ) from None
                raise
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
                # The host writes a success as '{"id":<n>,"result":<json>}' (see
                # node_host.mjs): slicing the result out spares parsing it here.
                prefix = f'{{"id":{request_id},"result":'
                if reply.startswith(prefix) and reply.endswith("}"):
                    return reply[len(prefix) : -1]
                message = _error_answer(reply, request_id)
            except BaseException as exc:
                # A timeout, a dead child, a broken pipe or a reply that is not the
                # host's: kill the child; the next call starts a fresh one.
                self._discard(process)
                if isinstance(exc, OSError):
                    raise EngineError(f"node executor pipe failed: {exc}") from exc
                raise
        raise EngineError(message, entry=entry)

    def _discard(self, process: _Process) -> None:
        process.kill()
        self._process = None

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
            if process is None:
                return
            with contextlib.suppress(OSError):
                if process.popen.stdin is not None:
                    process.popen.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.popen.wait(timeout=2)
            process.kill()


def _start_answer(line: str) -> dict[str, Any]:
    """The host's first line, ``{"ready": true, "exports": {…}}``; anything else fails."""
    answer = _parsed(line)
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        raise EngineError(answer["error"])  # the host's own words for a failed load
    if not isinstance(answer, dict) or answer.get("ready") is not True:
        raise EngineError(f"node executor did not start: {_broken(line)}")
    return answer


def _error_answer(reply: str, request_id: int) -> str:
    """The message of a JS error answer to ``request_id``; any other reply fails."""
    answer = _parsed(reply)
    if (
        isinstance(answer, dict)
        and answer.get("id") == request_id
        and isinstance(answer.get("error"), str)
    ):
        message: str = answer["error"]
        return message
    raise EngineError(f"node executor broke its protocol: {_broken(reply)}")


def _parsed(line: str) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _broken(line: str) -> str:
    quoted = line if len(line) <= QUOTED else line[:QUOTED] + "…"
    return (
        f"its answer {json.dumps(quoted)} is not the host's (a module that changes JSON "
        "or Object.prototype, or WERKBAUM_NODE naming something other than node?)"
    )
