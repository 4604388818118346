"""The ``v8`` executor: V8 inside the process, through mini-racer (``werkbaum-mcp[v8]``).

V8 speed without a subprocess: V8 runs on a thread of its own and the GIL is
released while JS runs, so a long analysis does not stall the caller's event
loop; every call has a time limit and the isolate a heap limit. mini-racer
evaluates scripts only, so the module set is linked into scripts at start-up
(:mod:`werkbaum_core.engine.linker`); V8's flags and the context's private
asyncio loop, run by the calling thread, are in :mod:`werkbaum_core.engine.v8_isolate`.

Crossing the boundary is kept to one function call per entry call: the plan
text goes in as a string argument of its own (no JSON encoding and parsing of
67 KB), the other options, if any, as a small JSON text, and the answer comes
back as the JSON text the facade wrote (one UTF-8 copy). A call that times out
or exhausts the heap gets a fresh context (the modules are linked once;
evaluating them again takes a few milliseconds), so no call can leave the
executor broken for the next one.

Every context is closed explicitly — by :meth:`V8Executor.close` or, for the
ones still open when the interpreter exits, by an ``atexit`` hook: mini-racer
0.14 was seen to hang at interpreter exit when a context was left to the
garbage collector.
"""

from __future__ import annotations

import atexit
import json
import re
import threading
import time
import weakref
from typing import TYPE_CHECKING

from werkbaum_core.calls import InFlight, Owner
from werkbaum_core.engine.linker import Script, link
from werkbaum_core.engine.modules import Program
from werkbaum_core.engine.protocol import JSON, LIMITS, START_TIMEOUT, Limits
from werkbaum_core.errors import EngineCancelled, EngineError, EngineTimeout
from werkbaum_core.in_flight import Stopping

if TYPE_CHECKING:
    from py_mini_racer import PythonJSConvertedTypes

    from werkbaum_core.engine.v8_isolate import Isolate

HEAP_LIMIT = 1024**3
"""Cap on the isolate's heap (bytes). The largest legal plans (2,000,000 characters:
500,000 one-word nodes, or 68,000 lines with five warnings each) analyse within
512 MiB; a runaway call ends with a clear error instead of exhausting the machine.
The cap stays below V8's own heap limit, whose breach would abort the process."""

_FAILED = "\x00"
"""First character of a failure answer (a JSON text never starts with it)."""

_HOST = """\
globalThis.__wbFailure = (err) =>
  '\\u0000' + String(err && err.message !== undefined ? err.name + ': ' + err.message : err);
globalThis.__wbEntry = (entry) => (text, options) => {
  try {
    const payload = options === undefined ? {} : JSON.parse(options);
    if (text !== null) payload.text = text;
    const result = globalThis.werkbaum[entry](payload);
    return globalThis.werkbaumToJSON(result === undefined ? null : result);
  } catch (err) {
    return __wbFailure(err);
  }
};
globalThis.__wbLoad = (name) => {
  try {
    __wbLinker.require(name);
    return '';
  } catch (err) {
    return __wbFailure(err);
  }
};
"""
"""Entry calls and module loads answer failures as text, so that a JS exception
never becomes a mini-racer exception (whose message is a stack dump). An entry is
called through a function of its own with one or two arguments: each argument is a
round trip into the isolate, cheaper than JSON-encoding a large text into code."""

_open: weakref.WeakSet[V8Executor] = weakref.WeakSet()


EXIT_WAIT = 2.0
"""Seconds the interpreter's exit waits for an interrupted call to let go of its context."""


@atexit.register
def _close_all() -> None:
    for executor in list(_open):
        executor.close_at_exit()


def available() -> bool:
    """Whether the ``v8`` extra (mini-racer and the linker's parser) is installed."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("py_mini_racer", "tree_sitter_javascript"))


class V8Executor:
    name = "v8"

    def __init__(
        self,
        program: Program,
        *,
        limits: Limits = LIMITS,
        heap_limit: int = HEAP_LIMIT,
    ) -> None:
        if not available():
            raise EngineError(
                "the v8 executor needs the v8 extra (mini-racer): uv tool install "
                "'/path/to/werkbaum-mcp[v8]', or uv sync --extra v8 in a clone"
            )
        # V8 starts on a thread of its own while the modules are linked here.
        starting = _ContextStart()
        try:
            self._linked = link(program.locate, program.entries)
        except BaseException:
            starting.result().close()
            raise
        self._timeout = limits.call
        self._start_timeout = limits.start
        self._heap_limit = heap_limit
        self._lock = threading.Lock()
        self._isolate: Isolate | None = None
        self._entries: dict[str, PythonJSConvertedTypes] = {}
        self._closed = False
        self._in_flight = InFlight()
        with self._lock:
            self._start(starting.result())
            _open.add(self)

    def _start(self, isolate: Isolate | None = None) -> None:
        from py_mini_racer import JSParseException

        isolate = isolate or _ContextStart().result()
        loading = self._linked.entries[0]  # what an error names, as loaders do
        try:
            v8_limit = int(isolate.racer.heap_stats()["heap_size_limit"])
            self._heap_limit = min(self._heap_limit, v8_limit * 3 // 4)
            isolate.racer.set_hard_memory_limit(self._heap_limit)
            isolate.racer.set_soft_memory_limit(self._heap_limit // 2)
            isolate.eval(_HOST, self._start_timeout)
            for script in self._linked.scripts:
                loading = script.entry
                source = f"{script.source}\n//# sourceURL={script.name}\n"
                try:
                    isolate.eval(source, self._start_timeout)
                except JSParseException as exc:  # what V8 rejects and the linker's parser took
                    message = _parse_error(exc, script)
                    raise EngineError(f"loading {script.entry} failed: {message}") from exc
            for entry in self._linked.entries:
                loading = entry
                failure = isolate.eval(f"__wbLoad({json.dumps(entry)})", self._start_timeout)
                if failure:
                    raise EngineError(f"loading {entry} failed: {str(failure)[1:]}")
            self._entries = {}
        except BaseException as exc:
            oom = _out_of_memory(isolate, exc)
            isolate.close()
            if isinstance(exc, EngineError):
                raise
            if isinstance(exc, TimeoutError):
                raise EngineTimeout(
                    f"loading {loading} failed: no answer within {self._start_timeout:g} s, the "
                    "v8 executor's limit for loading the modules"
                ) from None
            if oom:
                raise EngineError(
                    f"loading {loading} failed: {self._oom_text('loading the modules')}"
                ) from None
            raise EngineError(
                f"the v8 executor could not load the modules: {_first_line(exc)}"
            ) from exc
        self._isolate = isolate

    def exports(self) -> dict[str, list[str]]:
        with self._lock:
            found = self._context().eval(
                "JSON.stringify(globalThis.werkbaumExports || {})", START_TIMEOUT
            )
        exports: dict[str, list[str]] = json.loads(str(found))
        return exports

    def _context(self) -> Isolate:
        if self._closed:
            raise Stopping()
        if self._isolate is None:
            self._start()
        assert self._isolate is not None
        return self._isolate

    def call_text(self, entry: str, payload: JSON) -> str:
        if isinstance(payload, dict) and isinstance(payload.get("text"), str):
            rest = {k: v for k, v in payload.items() if k != "text"}
            try:
                return self._call(entry, payload["text"], rest)
            except UnicodeEncodeError:
                # mini-racer sends a str argument as UTF-8, which a lone surrogate (a JSON
                # client may send one) is not: that text travels inside the JSON options.
                pass
        return self._call(entry, None, payload)

    def _call(self, entry: str, text: str | None, options: JSON) -> str:
        args = (text, json.dumps(options)) if options else (text,)
        with self._lock:
            isolate = self._context()
            self._in_flight.begin()
            try:
                answer = isolate.call(self._entry(isolate, entry), args, self._timeout)
            except UnicodeEncodeError:
                raise  # refused before anything reached the isolate
            except TimeoutError:
                self._discard()
                raise EngineTimeout(
                    f"v8 executor gave no answer within {self._timeout:g} s", entry=entry
                ) from None
            except Exception as exc:  # the isolate stopped the call: start afresh
                oom = _out_of_memory(isolate, exc)
                self._discard()
                if self._closed:
                    raise Stopping() from exc  # close() interrupted it
                if self._in_flight.cancelled:
                    raise EngineCancelled(entry) from exc  # interrupt() stopped it
                if oom:
                    raise EngineError(self._oom_text(), entry=entry) from None
                raise EngineError(f"v8 executor failed: {_first_line(exc)}", entry=entry) from exc
            except BaseException as exc:  # interrupted mid-call: no half state
                self._discard()
                if self._closed:
                    raise Stopping() from exc  # close() interrupted it (CancelledError)
                if self._in_flight.cancelled:
                    raise EngineCancelled(entry) from exc  # interrupt() stopped it
                raise
            finally:
                self._in_flight.end()
        if not isinstance(answer, str):
            raise EngineError(f"v8 executor answered {type(answer).__name__}", entry=entry)
        if answer.startswith(_FAILED):
            raise EngineError(answer[1:], entry=entry)
        return answer

    def interrupt(self, owner: Owner) -> bool:
        """Stop ``owner``'s call in flight (it fails with
        :class:`~werkbaum_core.errors.EngineCancelled`; the next call gets a fresh
        context); whether it was in flight. V8 stops the running script; a call whose JS
        has not begun yet runs (an interrupt before it is lost, as for :meth:`close`)."""
        return self._in_flight.stop_if(owner, self._interrupt_isolate)

    def _interrupt_isolate(self) -> None:
        isolate = self._isolate
        if isolate is not None:
            isolate.interrupt()

    def _oom_text(self, what: str = "the call") -> str:
        return (
            f"out of memory: {what} needed more than the v8 executor's heap "
            f"limit of {self._heap_limit // 1024**2:,} MiB"
        )

    def _entry(self, isolate: Isolate, entry: str) -> PythonJSConvertedTypes:
        function = self._entries.get(entry)
        if function is None:
            function = isolate.eval(f"__wbEntry({json.dumps(entry)})", START_TIMEOUT)
            self._entries[entry] = function
        return function

    def _discard(self) -> None:
        """Drop the context (after an aborted call: the next call starts a fresh one)."""
        isolate, self._isolate, self._entries = self._isolate, None, {}
        if isolate is not None:
            isolate.close()

    def close(self) -> None:
        """Close, stopping a call in flight first (it fails with
        :class:`~werkbaum_core.in_flight.Stopping`): neither the interpreter's exit nor a
        stop signal waits for a call's whole time limit. No context is made after this."""
        self._closed = True
        if not self._lock.acquire(blocking=False):
            # Again and again: a call may hold the lock and not have started its JS yet
            # (a loaded machine), and an interrupt before the JS runs is lost.
            deadline = time.monotonic() + EXIT_WAIT
            while True:
                isolate = self._isolate
                if isolate is not None:
                    isolate.interrupt()
                if self._lock.acquire(timeout=0.05):
                    break
                if time.monotonic() >= deadline:
                    return  # the call did not let go: leave its context to the process's end
        try:
            self._discard()
            _open.discard(self)
        finally:
            self._lock.release()

    close_at_exit = close


class _ContextStart:
    """A context being made on a thread of its own, while the caller links the modules.

    Importing mini-racer and starting V8 take a while; and the context's private
    loop must first run on a thread without an event loop (see ``v8_isolate``).
    """

    def __init__(self) -> None:
        self._made: list[Isolate] = []
        self._failed: list[BaseException] = []
        self._thread = threading.Thread(target=self._create, name="werkbaum-v8-start")
        self._thread.start()

    def _create(self) -> None:
        try:
            from werkbaum_core.engine.v8_isolate import Isolate

            self._made.append(Isolate())
        except BaseException as exc:
            self._failed.append(exc)

    def result(self) -> Isolate:
        self._thread.join()
        if self._failed:
            raise EngineError(f"the v8 executor could not start: {_first_line(self._failed[0])}")
        return self._made[0]


def _out_of_memory(isolate: Isolate, exc: BaseException) -> bool:
    """Whether the isolate stopped for its heap limit (inside a function call a heap
    overflow surfaces as a bare "null")."""
    from py_mini_racer import JSOOMException

    if isinstance(exc, JSOOMException):
        return True
    try:
        return bool(isolate.racer.was_hard_memory_limit_reached())
    except Exception:
        return False


def _parse_error(exc: BaseException, script: Script) -> str:
    """``<anonymous>:2: SyntaxError: …`` → ``SyntaxError: … (i18n.js:2)``."""
    match = re.match(r"^[^:]*:(\d+): (.*)$", _first_line(exc))
    if match is None:
        return _first_line(exc)
    return f"{match.group(2)} ({script.name}:{match.group(1)})"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
