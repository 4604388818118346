"""The executor that needs nothing installed: QuickJS-NG embedded through dukpy 0.6.

One interpreter per executor behind a lock: an interpreter is not safe for
re-entrant use, and dukpy holds the GIL for a whole evaluation anyway.

An interpreter's heap is capped (128 MiB, not configurable through dukpy), and
what exceeds it fails in ways that leave no usable message ("null",
"out of memory") and may leave the interpreter unable to run the next call. So:

- a plan with more lines than :data:`MAX_LINES` is refused before any JS runs,
  with an error that names the limit and the executors that have none;
- a call that fails inside the runtime (anything but an ordinary ``Error``
  thrown by module code, such as the facade's coded errors) discards the
  interpreter, and is tried once more on a fresh one when the failed
  interpreter had served calls before (its heap held their leftovers);
- after a call on a large text the interpreter is discarded too, so that the
  facade's cache of recent runs does not keep megabytes of trees alive.

A fresh interpreter loads the modules again (~50 ms); a large call takes seconds.

dukpy offers no time limit of its own: QuickJS asks only whether a Python signal
is pending (``PyErr_CheckSignals``), and Python runs signal handlers on the main
thread only. So a load or call made on the main thread (the command line, a
script) gets the executor's time limit through a ``SIGALRM`` timer
(:func:`_deadline`), unless the program uses that signal itself; one made on any
other thread has none, and holds the GIL until it ends. The servers call the
engine from worker threads, so they run this executor in a child process's main
thread instead (:mod:`~werkbaum_core.engine.dukpy_process`).
"""

from __future__ import annotations

import json
import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import dukpy

from werkbaum_core.calls import Owner
from werkbaum_core.engine.modules import Loadable
from werkbaum_core.engine.protocol import JSON, LIMITS, Limits
from werkbaum_core.errors import EngineError, EngineTimeout, TooLarge

_SCRUB_ENV = "globalThis.process = { env: {} };"
"""dukpy exposes ``os.environ`` as ``process.env``; tokens must never reach JS."""

MAX_LINES = 40_000
"""Lines of plan text the dukpy executor admits. A fresh interpreter analysed plans of
typical lines (a status, an id, a size, an owner, a reference) up to ~47,000 lines,
bare one-word nodes up to ~82,000; plans whose every line raises warnings run out of
memory earlier (~23,000 lines with five warnings each) and get the out-of-memory error
below. Measurements in docs/engine-contract.md."""

_AT = re.compile(r"^\s+at (?:.*\()?(?:.*/)?([^/()]+):(\d+):\d+\)?$", re.M)

LARGE_TEXT = 250_000
"""Characters from which an interpreter is discarded after the call."""


_SETS = {"exports.js": "werkbaumExports", "facade.js": "werkbaum", "transport.js": "werkbaumToJSON"}
"""The global each entry defines: one still undefined after its module ran means the
module did not finish evaluating (top-level await, which ``run`` does not wait for)."""


class DukpyExecutor:
    name = "dukpy"

    def __init__(self, program: Loadable, *, limits: Limits = LIMITS) -> None:
        self._program = program
        self._timeout = limits.call
        self._start_timeout = limits.start
        self._lock = threading.Lock()
        self._calls = 0
        self._js: dukpy.JSInterpreter | None = self._start()

    def _start(self) -> dukpy.JSInterpreter:
        js = dukpy.JSInterpreter()
        js.evaljs(_SCRUB_ENV)
        with self._program.materialized() as directory:
            for entry in self._program.entries:
                try:
                    with _deadline(self._start_timeout):
                        js.run(str(directory / entry))
                except _Expired:
                    raise EngineTimeout(
                        f"loading {entry} failed: no answer within {self._start_timeout:g} s, "
                        "the dukpy executor's limit for loading the modules"
                    ) from None
                except dukpy.JSRuntimeError as exc:
                    # Paths in QuickJS's words point into the temporary copy: say ./NAME.
                    first = _first_line(exc)
                    message = (
                        _runtime_failure(first)
                        if _out_of_memory(first)
                        else _located(exc).replace(f"{directory}/", "./")
                    )
                    raise EngineError(f"loading {entry} failed: {message}") from exc
                defined = _SETS.get(entry)
                if defined and js.evaljs(f"typeof globalThis.{defined}") == "undefined":
                    raise EngineError(
                        f"loading {entry} failed: it did not finish evaluating; a module "
                        "that awaits at top level? The dukpy executor cannot wait for one "
                        "(--engine node can)"
                    )
        self._calls = 0
        return js

    def exports(self) -> dict[str, list[str]]:
        with self._lock:
            found: dict[str, list[str]] = self._interpreter().evaljs(
                "globalThis.werkbaumExports || {}"
            )
        return found

    def _interpreter(self) -> dukpy.JSInterpreter:
        if self._js is None:
            self._js = self._start()
        return self._js

    def call_text(self, entry: str, payload: JSON) -> str:
        texts = list(plan_texts(payload))
        for text in texts:
            check_lines(text)
        # The payload travels as a JSON string and the result comes back as one:
        # a single parse on each side is cheaper than dukpy's value conversion.
        code = "werkbaumToJSON(globalThis.werkbaum[dukpy.entry](JSON.parse(dukpy.payload)))"
        encoded = json.dumps(payload)
        with self._lock:
            for attempt in (1, 2):
                js = self._interpreter()
                used = self._calls > 0
                self._calls += 1
                try:
                    with _deadline(self._timeout):
                        raw: Any = js.evaljs(code, entry=entry, payload=encoded)
                    break
                except _Expired:
                    self._js = None  # stopped midway: its state is not to be trusted
                    raise EngineTimeout(
                        f"dukpy executor gave no answer within {self._timeout:g} s", entry=entry
                    ) from None
                except dukpy.JSRuntimeError as exc:
                    message = _first_line(exc)
                    if message.startswith("Error: "):  # thrown by module code: a normal answer
                        raise EngineError(message, entry=entry) from exc
                    self._js = None  # the runtime itself failed: never reuse it
                    if attempt == 2 or not used:
                        raise EngineError(_runtime_failure(message), entry=entry) from exc
            if any(len(text) >= LARGE_TEXT for text in texts):
                self._js = None
        return "null" if raw is None else str(raw)

    def interrupt(self, owner: Owner) -> bool:
        """In-process dukpy cannot be stopped from another thread (its only limit is
        SIGALRM, on the main thread): a cancelled call runs to its end. The servers run
        dukpy in a child process (:mod:`~werkbaum_core.engine.dukpy_process`), which can."""
        return False

    def close(self) -> None:
        with self._lock:
            self._js = None


def check_lines(text: str) -> None:
    """Refuse a plan whose analysis would exceed the interpreter's heap."""
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if lines > MAX_LINES:
        raise TooLarge.over(
            "the plan",
            MAX_LINES,
            size=lines,
            unit="lines",
            note="the dukpy executor's, whose interpreter's heap is capped; the v8 executor "
            "(werkbaum-mcp[v8]) and the node executor analyse every plan within the size limit",
            executor="dukpy",
        )


def plan_texts(payload: JSON) -> Iterator[str]:
    """The strings of a payload and of its members (plan texts sit at most that deep)."""
    members = payload.values() if isinstance(payload, dict) else [payload]
    for member in members:
        inner = member.values() if isinstance(member, dict) else member
        if isinstance(member, str):
            yield member
        elif isinstance(member, (dict, list)):
            yield from (item for item in inner if isinstance(item, str))


class _Expired(Exception):
    """Raised by the ``SIGALRM`` handler of :func:`_deadline` inside a JS evaluation."""


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """A ``SIGALRM`` timer whose handler raises :class:`_Expired`, while the block runs.

    Only on the main thread (where Python runs signal handlers, and QuickJS asks for
    them), and only while the program has no handler or timer of its own for SIGALRM.
    The handler raises only while armed: a signal that arrives as the block ends
    cannot escape the clean-up, which restores the program's handler in any case.
    """
    usable = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )
    if not usable:
        yield
        return
    armed = [True]

    def expire(_signum: int, _frame: FrameType | None) -> None:
        if armed[0]:
            raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        try:
            armed[0] = False
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _out_of_memory(message: str) -> bool:
    return message in ("null", "[uninitialized]", "") or "out of memory" in message


def _runtime_failure(message: str) -> str:
    if _out_of_memory(message):
        return (
            f"the dukpy executor ran out of memory ({message or 'no message'}); the v8 "
            "executor (werkbaum-mcp[v8]) and the node executor have far larger heaps"
        )
    return message


def _located(exc: Exception) -> str:
    """The message, plus the module and line QuickJS names (its path is a temporary one)."""
    at = _AT.search(str(exc))
    return _first_line(exc) + (f" ({at.group(1)}:{at.group(2)})" if at else "")


def _first_line(exc: Exception) -> str:
    """The JS error message without QuickJS's stack trace."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
