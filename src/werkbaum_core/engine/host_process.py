"""Executors whose JS runs in a child process that speaks JSON lines.

The ``node`` executor runs node there; the servers run ``dukpy`` there too
(:mod:`werkbaum_core.engine.dukpy_process`). A child can be stopped from any
thread: a call that exceeds its time limit is killed with the process, and the
thread that waits for an answer does so with the GIL released. The process is
started lazily, restarted after it dies, and killed when it breaks the protocol,
so one pathological call cannot wedge the caller.

The protocol, one line each way (the host scripts write it):

- the host's first line: ``{"ready": true, "exports": {…}}``, or
  ``{"error": "loading <entry> failed: …"}`` before it exits (with
  ``"timeout": true`` when the host stopped the load at its time limit);
- a request ``{"id": n, "entry": "analyze", "payload": {…}}`` is answered by
  ``{"id":n,"result":<json>}`` (written exactly so: the result is sliced out,
  not parsed) or ``{"id": n, "error": "<message>"}``.
"""

from __future__ import annotations

import abc
import collections
import contextlib
import itertools
import json
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

from werkbaum_core.calls import InFlight, Owner
from werkbaum_core.display import shortened
from werkbaum_core.engine.protocol import JSON, LIMITS, Limits
from werkbaum_core.errors import EngineCancelled, EngineError, EngineTimeout
from werkbaum_core.in_flight import Stopping
from werkbaum_core.processes import signalled_on_parent_death

QUOTED = 200
"""Characters of a reply that breaks the protocol quoted in the error."""
OUT_OF_MEMORY = "heap out of memory"
"""What V8 (node) prints when a call breaches the heap limit, before it aborts."""
CLOSE_WAIT = 2.0
"""Seconds :meth:`HostedExecutor.close` waits for an idle child to exit, and for a call
whose child it killed to let go."""


class _Spawner:
    """Where the hosts are started: on Linux, one thread that lives as long as the process,
    whose children get SIGKILL when it ends (``PR_SET_PDEATHSIG``) — when the process
    dies, even of SIGKILL, which no clean-up of its own survives. A host busy with a call
    cannot notice that its stdin closed, and ran that call on to its end (for good, a
    runaway call: its time limit was the parent's). The signal is tied to the thread that
    forked the child, not to the process, hence a thread of its own: a worker thread
    that ends would take its children with it.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[Callable[[], None]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @staticmethod
    def preexec() -> Callable[[], None] | None:
        """What the child runs before its program: ask for SIGKILL when its parent
        thread ends (and die now if that happened already)."""
        return signalled_on_parent_death(signal.SIGKILL)

    def spawn(self, start: Callable[[], subprocess.Popen[str]]) -> subprocess.Popen[str]:
        """``start()`` run on the spawner thread (where that matters), its result or error."""
        if self.preexec() is None:
            return start()
        done = threading.Event()
        outcome: list[subprocess.Popen[str] | BaseException] = []

        def job() -> None:
            try:
                outcome.append(start())
            except BaseException as exc:
                outcome.append(exc)
            finally:
                done.set()

        self._started().put(job)
        done.wait()
        result = outcome[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def _started(self) -> queue.Queue[Callable[[], None]]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="werkbaum-spawner", daemon=True
                )
                self._thread.start()
        return self._jobs

    def _run(self) -> None:
        while True:
            self._jobs.get()()


SPAWNER = _Spawner()


class HostProcess:
    """One running host: a reader thread turns answer lines into a queue.

    The answers come on a pipe of their own (its number is the first argument after
    ``command``), not on stdout: module code writes there (``console.log``), and what
    it writes, like stderr, is only kept for error messages.

    The child leads a process group of its own, so that a wrapper script and
    whatever it started go with it when it is killed, and a terminal's Ctrl-C
    reaches the parent only (which then closes the child).
    """

    def __init__(
        self,
        name: str,
        command: Sequence[str],
        args: Sequence[str],
        env: Mapping[str, str],
        *,
        heap: str = "the call needed more memory than the host may take",
    ) -> None:
        self.name = name
        self.heap = heap
        """What to say when the host dies of its heap limit."""
        answers, child_end = os.pipe()
        try:
            self.popen = SPAWNER.spawn(
                lambda: subprocess.Popen(
                    [*command, str(child_end), *args],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    env=dict(env),
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    bufsize=1,
                    pass_fds=(child_end,),
                    process_group=0,
                    preexec_fn=SPAWNER.preexec(),
                )
            )
        except OSError as exc:
            os.close(answers)
            raise EngineError(f"the {name} executor could not start {command[0]}: {exc}") from exc
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
        with stream:
            for line in stream:
                self.output.append(line.rstrip()[:QUOTED])

    def next_line(self, timeout: float) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise EngineTimeout(
                f"{self.name} executor gave no answer within {timeout:g} s"
            ) from None
        if line is None:
            self.popen.wait()
            if any(OUT_OF_MEMORY in output for output in self.output):
                raise EngineError(f"out of memory: {self.heap}")
            detail = " | ".join(list(self.output)[-5:])
            raise EngineError(f"{self.name} executor exited ({self.popen.returncode}): {detail}")
        return line.rstrip("\n")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """Kill the child and its process group, and reap it. Only while the child is
        not reaped: until then its pid, the group's id, cannot name another group.

        Its stdin is closed here (its answer pipe and output close as the threads reading
        them see their end): a failed call's traceback may keep this object in a reference
        cycle until the collector runs, and its descriptors must not wait for that."""
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()
        if self.popen.stdin is not None:
            with contextlib.suppress(OSError):
                self.popen.stdin.close()


class HostedExecutor(abc.ABC):
    """The parent's side of the protocol: one child at a time, calls serialised.

    A subclass says how to start its host (:meth:`_launch`) and what to name when
    the host's answers are not the host's (:attr:`suspects`).
    """

    name: str
    suspects = "a module that changes JSON or Object.prototype"
    """What may have made the host's answers unreadable, for the error message."""
    start_margin = 0.0
    """Seconds the child may take beyond the load limit (its own interpreter start)."""
    keeps_files = False
    """Whether the child reads the module files after its start (then they live as
    long as it does), or only while it loads them."""

    def __init__(self, *, limits: Limits = LIMITS) -> None:
        self._limits = limits
        self._timeout = limits.call
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._exports: dict[str, list[str]] = {}
        self._process: HostProcess | None = None
        self._files = contextlib.ExitStack()
        self._closed = False
        self._in_flight = InFlight()
        with self._lock:
            self._ensure_started()

    @abc.abstractmethod
    def _launch(self) -> contextlib.AbstractContextManager[HostProcess]:
        """A started host; the files it loads exist while this is open (see
        :attr:`keeps_files`)."""

    def _ensure_started(self) -> HostProcess:
        if self._closed:
            raise Stopping()
        if self._process is not None and self._process.alive():
            return self._process
        self._end()  # a child that died since: its files go too
        limit = self._limits.start
        files = contextlib.ExitStack()
        with contextlib.ExitStack() as on_failure:
            on_failure.callback(files.close)
            process = files.enter_context(self._launch())
            on_failure.callback(process.kill)  # no child outlives a failed start
            try:
                ready = self._start_answer(process.next_line(limit + self.start_margin))
            except EngineTimeout:
                raise EngineTimeout(
                    f"loading the modules failed: no answer within {limit:g} s, "
                    f"the {self.name} executor's limit for loading them"
                ) from None
            on_failure.pop_all()
        if not self.keeps_files:
            files.close()
        self._exports = ready.get("exports", {})
        self._process, self._files = process, files
        return process

    def exports(self) -> dict[str, list[str]]:
        return self._exports

    def call_text(self, entry: str, payload: JSON) -> str:
        with self._lock:
            process = self._ensure_started()
            if self._closed:  # closed while this call started the child
                self._discard(process)
                raise Stopping()
            request_id = next(self._ids)
            line = json.dumps({"id": request_id, "entry": entry, "payload": payload})
            self._in_flight.begin()
            try:
                assert process.popen.stdin is not None
                process.popen.stdin.write(line + "\n")
                process.popen.stdin.flush()
                reply = process.next_line(self._timeout)
                # The host writes a success as '{"id":<n>,"result":<json>}': slicing
                # the result out spares parsing it here.
                prefix = f'{{"id":{request_id},"result":'
                if reply.startswith(prefix) and reply.endswith("}"):
                    return reply[len(prefix) : -1]
                message = self._error_answer(reply, request_id)
            except BaseException as exc:
                # A timeout, a dead child, a broken pipe or a reply that is not the
                # host's: kill the child; the next call starts a fresh one.
                self._discard(process)
                if self._closed and isinstance(exc, EngineError | OSError):
                    raise Stopping() from exc  # close() killed it
                if self._in_flight.cancelled and isinstance(exc, EngineError | OSError):
                    raise EngineCancelled(entry) from exc  # interrupt() killed it
                if isinstance(exc, OSError):
                    raise EngineError(f"{self.name} executor pipe failed: {exc}") from exc
                raise
            finally:
                self._in_flight.end()
        raise EngineError(message, entry=entry)

    def interrupt(self, owner: Owner) -> bool:
        """Stop ``owner``'s call in flight by killing its child (the call fails with
        :class:`~werkbaum_core.errors.EngineCancelled`; the next call starts a fresh
        child); whether it was in flight."""
        return self._in_flight.stop_if(owner, self._kill_busy)

    def _kill_busy(self) -> None:
        process = self._process
        if process is not None:
            process.kill()  # the call sees the end of its answers and lets go

    def _discard(self, process: HostProcess) -> None:
        process.kill()
        self._end()

    def _end(self) -> None:
        """Forget the child (killed or dead by now) and remove the files it used."""
        self._process = None
        files, self._files = self._files, contextlib.ExitStack()
        files.close()

    def close(self) -> None:
        """End the child: an idle one by closing its stdin, one running a call at once.

        A call in flight is not waited for (it could run for its whole time limit, and a
        stop signal's close would leave the child running it after the server died: 39 s
        seen, for good with a runaway call): its child is killed, and the call fails with
        :class:`~werkbaum_core.in_flight.Stopping`. No child is started after this."""
        self._closed = True
        if not self._lock.acquire(blocking=False):
            self._kill_busy()
            if not self._lock.acquire(timeout=CLOSE_WAIT):
                return  # still starting a child (its own limit ends that): left to the exit
        try:
            process = self._process
            if process is not None:
                with contextlib.suppress(OSError):
                    if process.popen.stdin is not None:
                        process.popen.stdin.close()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.popen.wait(timeout=CLOSE_WAIT)
                process.kill()
            self._end()
        finally:
            self._lock.release()

    def _start_answer(self, line: str) -> dict[str, Any]:
        """The host's first line, ``{"ready": true, …}``; anything else fails."""
        answer = _parsed(line)
        if isinstance(answer, dict) and isinstance(answer.get("error"), str):
            # The host's own words for a failed load; a host that stopped a load
            # over its time limit says so.
            failure = EngineTimeout if answer.get("timeout") is True else EngineError
            raise failure(answer["error"])
        if not isinstance(answer, dict) or answer.get("ready") is not True:
            raise EngineError(f"{self.name} executor did not start: {self._broken(line)}")
        return answer

    def _error_answer(self, reply: str, request_id: int) -> str:
        """The message of a JS error answer to ``request_id``; any other reply fails."""
        answer = _parsed(reply)
        if (
            isinstance(answer, dict)
            and answer.get("id") == request_id
            and isinstance(answer.get("error"), str)
        ):
            message: str = answer["error"]
            return message
        raise EngineError(f"{self.name} executor broke its protocol: {self._broken(reply)}")

    def _broken(self, line: str) -> str:
        return (
            f"its answer {json.dumps(shortened(line, QUOTED))} is not the host's ({self.suspects}?)"
        )


def _parsed(line: str) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return None
