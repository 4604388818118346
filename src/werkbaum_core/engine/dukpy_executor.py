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
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import dukpy

from werkbaum_core.engine.modules import Program
from werkbaum_core.engine.protocol import JSON
from werkbaum_core.errors import EngineError, TooLarge

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


class DukpyExecutor:
    name = "dukpy"

    def __init__(self, program: Program) -> None:
        self._program = program
        self._lock = threading.Lock()
        self._calls = 0
        self._js: dukpy.JSInterpreter | None = self._start()

    def _start(self) -> dukpy.JSInterpreter:
        js = dukpy.JSInterpreter()
        js.evaljs(_SCRUB_ENV)
        with self._program.materialized() as directory:
            for entry in self._program.entries:
                try:
                    js.run(str(directory / entry))
                except dukpy.JSRuntimeError as exc:
                    # Paths in QuickJS's words point into the temporary copy: say ./NAME.
                    message = _located(exc).replace(f"{directory}/", "./")
                    raise EngineError(f"loading {entry} failed: {message}") from exc
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
        texts = list(_texts(payload))
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
                    raw: Any = js.evaljs(code, entry=entry, payload=encoded)
                    break
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


def _texts(payload: JSON) -> Iterator[str]:
    """The strings of a payload and of its members (plan texts sit at most that deep)."""
    members = payload.values() if isinstance(payload, dict) else [payload]
    for member in members:
        inner = member.values() if isinstance(member, dict) else member
        if isinstance(member, str):
            yield member
        elif isinstance(member, (dict, list)):
            yield from (item for item in inner if isinstance(item, str))


def _runtime_failure(message: str) -> str:
    if message in ("null", "[uninitialized]", "") or "out of memory" in message:
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
