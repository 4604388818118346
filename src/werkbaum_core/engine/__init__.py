"""The notation engine: JS modules on an executor, behind a typed Python API.

>>> from werkbaum_core import Engine
>>> analysis = Engine.default().analyze("- [ ] Plan (M)")

Every method is one call across the Python↔JS boundary. Which executor runs
the modules is chosen by argument or ``WERKBAUM_ENGINE`` (``v8``, ``node``,
``dukpy``, or ``auto``; see :mod:`werkbaum_core.engine.choice`); which modules
it runs by ``frontend`` or ``WERKBAUM_FRONTEND``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from werkbaum_core.calls import Owner
from werkbaum_core.convert import converter
from werkbaum_core.engine.choice import AUTO, EXECUTORS, choose_executor, in_process_executor
from werkbaum_core.engine.modules import (
    ENTRIES,
    ModuleSet,
    Program,
    export_names,
    missing_exports,
)
from werkbaum_core.engine.protocol import JSON, Executor
from werkbaum_core.errors import (
    EngineError,
    EngineTimeout,
    InvalidArgument,
    ModuleSetError,
    NotFound,
    from_json,
)
from werkbaum_core.lru import BoundedCache, memory_of
from werkbaum_core.model import Analysis, View
from werkbaum_core.text import check_text_size

NESTING_HEADROOM = 20_000
"""A 2,000,000-character plan can nest ~2,000 levels, which is ~4,000 levels of
JSON (node, children, node…). Python's JSON decoder and cattrs recurse once
per level, so the default limit of 1,000 would turn a legal plan into a crash."""
INCLUDE_ALL = ("tree", "warnings", "path")
INCLUDE_PARTS = (*INCLUDE_ALL, "stations")
"""Every part ``include`` may name; without ``include`` (and without a ``view``) the
answer holds ``INCLUDE_ALL``."""
CACHE_ENTRIES = 32
CACHE_BYTES = 64_000_000
"""Bounds of the analysis cache: entries, and the memory of the JSON texts held in all."""
CACHE_LARGEST = 16_000_000
"""An analysis taking more memory is not kept: no tool could send it (the answer bound is
24,000,000 characters for the text twice), and two would take half the cache."""
_CacheKey = tuple[bytes, str | None, tuple[str, ...] | None, "View"]

_CODED_ERROR = re.compile(r"^(?:\w*Error: )?(not_found|invalid_argument): (.*)$", re.S)
_ERRORS_BY_CODE = {"not_found": NotFound, "invalid_argument": InvalidArgument}


def _start(kind: str, program: Program, *, separate_process: bool = False) -> Executor:
    # Executors are imported lazily: a server that never analyses starts faster.
    if kind == "dukpy" and separate_process:
        from werkbaum_core.engine.dukpy_process import DukpyProcessExecutor

        return DukpyProcessExecutor(program)
    if kind == "dukpy":
        from werkbaum_core.engine.dukpy_executor import DukpyExecutor

        return DukpyExecutor(program)
    if kind == "node":
        from werkbaum_core.engine.node_executor import NodeExecutor

        return NodeExecutor(program)
    if kind == "v8":
        from werkbaum_core.engine.v8_executor import V8Executor

        return V8Executor(program)
    raise ModuleSetError(f"unknown engine {kind!r}; choose one of {', '.join((AUTO, *EXECUTORS))}")


class Engine:
    """A loaded module set on one executor. Thread-safe; close it when done."""

    _default: Engine | None = None
    _default_lock = threading.Lock()

    def __init__(self, executor: Executor, modules: ModuleSet) -> None:
        self.executor = executor
        self.modules = modules
        self._cache: BoundedCache[_CacheKey, str] = BoundedCache(
            CACHE_ENTRIES, CACHE_BYTES, memory_of, largest=CACHE_LARGEST
        )

    @classmethod
    def create(
        cls,
        kind: str | None = None,
        frontend: str | Path | None = None,
        *,
        extra_entries: Iterable[Path] = (),
        separate_process: bool = False,
    ) -> Engine:
        """Start an executor of ``kind`` on the bundled modules or a checkout's.

        Without ``kind`` (and ``WERKBAUM_ENGINE``), a library call stays in the
        process: ``v8`` when the v8 extra is installed, else ``dukpy``, whose calls
        have a time limit only when made from the main thread; ``auto`` may also
        pick ``node``. Raises :class:`ModuleSetError` naming every
        missing contract export. ``extra_entries`` are additional entry modules
        (tests use this for the conformance harness), loaded after the facade.

        ``separate_process=True`` runs ``dukpy`` in a child process of its own
        (:mod:`~werkbaum_core.engine.dukpy_process`): its calls then have their
        time limit on every thread and do not hold the caller's GIL, for the price
        of a Python interpreter started once. The servers ask for it; ``v8`` and
        ``node`` need it not (V8 releases the GIL and keeps its own limits, node is
        a child process already).
        """
        if sys.getrecursionlimit() < NESTING_HEADROOM:
            sys.setrecursionlimit(NESTING_HEADROOM)
        if frontend is None:
            frontend = os.environ.get("WERKBAUM_FRONTEND") or None
        kind = kind or os.environ.get("WERKBAUM_ENGINE") or in_process_executor(frontend)
        if kind == AUTO:
            kind = choose_executor(kind, frontend=frontend)
        modules = ModuleSet.from_frontend(frontend)
        extras = tuple(Path(p) for p in extra_entries)
        program = Program(modules, ENTRIES + tuple(p.name for p in extras), extras)
        try:
            executor = _start(kind, program, separate_process=separate_process)
        except EngineError as exc:
            # A module without a named export makes the facade fail to link (a
            # SyntaxError on every executor); the probe alone still loads and says
            # which export is missing. Any other failure (a time-out, memory) would
            # only repeat in the probe, doubling the wait.
            if "SyntaxError" in exc.message and not isinstance(exc, EngineTimeout):
                _raise_for_missing_exports(kind, modules, separate_process=separate_process)
            raise
        _raise_for_missing_exports(kind, modules, executor)
        return cls(executor, modules)

    @classmethod
    def default(cls) -> Engine:
        """A process-wide engine, created on first use."""
        with cls._default_lock:
            if cls._default is None:
                cls._default = cls.create()
            return cls._default

    @property
    def kind(self) -> str:
        return self.executor.name

    def __repr__(self) -> str:
        """Which executor runs which modules: :meth:`create` chooses both on its own."""
        modules = "bundled" if self.modules.frontend is None else str(self.modules.frontend)
        return f"<Engine {self.kind} on {modules} modules>"

    def call(self, entry: str, payload: JSON) -> JSON:
        """Call one facade entry; coded JS errors (``not_found: …``) become typed errors."""
        return json.loads(self._call_text(entry, payload))

    def _call_text(self, entry: str, payload: JSON) -> str:
        try:
            return self.executor.call_text(entry, payload)
        except EngineError as exc:
            match = _CODED_ERROR.match(exc.message)
            if match:
                raise _ERRORS_BY_CODE[match.group(1)](match.group(2)) from exc
            raise

    def analyze_json(
        self,
        text: str,
        *,
        id: str | None = None,
        include: Sequence[str] | None = None,
        view: View | None = None,
    ) -> dict[str, Any]:
        """The facade's analysis as plain JSON (spec §5.1), a fresh object per call."""
        answer = self.analysis_text(text, id=id, include=include, view=view)
        result: dict[str, Any] = json.loads(answer)
        return result

    def analysis_text(
        self,
        text: str,
        *,
        id: str | None = None,
        include: Sequence[str] | None = None,
        view: View | None = None,
    ) -> str:
        """The analysis as compact JSON text, as the facade wrote it.

        Callers that send the analysis on (a tool's text content) take the text
        instead of encoding the parsed object again: for a large plan that
        encoding costs more than the cached analysis itself.
        """
        check_text_size(text)
        payload: dict[str, Any] = {"text": text}
        if id is not None:
            payload["id"] = id
        if include is not None:
            unknown = sorted(set(include) - set(INCLUDE_PARTS))
            if unknown:
                raise InvalidArgument(
                    f"include: unknown part(s) {unknown}; the parts are {', '.join(INCLUDE_PARTS)}",
                    allowed=list(INCLUDE_PARTS),
                )
            payload["include"] = list(include)
        view = view or View()
        payload.update(view.payload())
        answer = self._analysis_text(text, payload, view)
        if answer.startswith('{"error"'):  # the facade's answer for an unknown id
            raise from_json(json.loads(answer)["error"])
        return answer

    def _analysis_text(self, text: str, payload: dict[str, Any], view: View) -> str:
        """The analysis as JSON text, from the cache when this text was analysed before.

        Keyed by the text's digest and the options: an agent inspects the same
        unchanged plan again and again; the engine's work (the cheapest path is
        exponential in coupled choices, up to its limit) is not repeated, and a
        fresh parse of the cached text keeps callers from sharing mutable results.
        """
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        include = payload.get("include")
        key = (digest, payload.get("id"), None if include is None else tuple(include), view)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        answer = self._call_text("analyze", payload)
        self._cache.put(key, answer)
        return answer

    def analyze(
        self,
        text: str,
        *,
        id: str | None = None,
        include: Sequence[str] | None = None,
        view: View | None = None,
    ) -> Analysis:
        """The analysis as typed objects: tree, warnings, cheapest path, stations, matches."""
        raw = self.analyze_json(text, id=id, include=include, view=view)
        return converter.structure(raw, Analysis)

    def transform(self, module: str, fn: str, *args: JSON) -> JSON:
        """Call a pure text→text or list function of a module (contract ``transform``)."""
        for arg in args:
            if isinstance(arg, str):
                check_text_size(arg)
        return self.call("transform", {"module": module, "fn": fn, "args": list(args)})

    def close(self) -> None:
        self.executor.close()

    def interrupt(self, owner: Owner) -> bool:
        """Stop the engine call ``owner`` has in flight, if any (a cancelled request's;
        :mod:`werkbaum_core.calls`): it fails with ``EngineCancelled`` and the
        engine serves the next call at once. Whether there was one to stop."""
        return self.executor.interrupt(owner)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LazyEngine:
    """An engine loaded on first use, or in the background from :meth:`start` on.

    A server answers the handshake and ``tools/list`` without any JS work. The
    HTTP server starts loading at start-up (it serves many clients); the stdio
    server waits for the first call that needs the engine, so that a server a
    host starts and never uses holds no engine (a node process is ~40 MiB).
    Servers pass ``separate_process=True`` (see :meth:`Engine.create`).
    """

    def __init__(
        self,
        kind: str | None = None,
        frontend: str | Path | None = None,
        *,
        separate_process: bool = False,
    ) -> None:
        self._kind, self._frontend = kind, frontend
        self._separate_process = separate_process
        self._engine: Engine | None = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._started = False
        self._lock = threading.Lock()

    def start(self) -> None:
        """Begin loading now (idempotent)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._load, name="werkbaum-engine", daemon=True).start()

    def _load(self) -> None:
        try:
            self._engine = Engine.create(
                self._kind, self._frontend, separate_process=self._separate_process
            )
        except BaseException as exc:  # reported to every caller, not lost in the thread
            self._error = exc
        finally:
            self._ready.set()

    def get(self) -> Engine:
        """The engine, loaded now if nobody started it; on the main thread it loads
        there, where the dukpy executor's time limit can stop a load that never ends."""
        with self._lock:
            here = not self._started and threading.current_thread() is threading.main_thread()
            self._started = self._started or here
        if here:
            self._load()
        else:
            self.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        assert self._engine is not None
        return self._engine

    def analyze_json(
        self,
        text: str,
        *,
        id: str | None = None,
        include: Sequence[str] | None = None,
        view: View | None = None,
    ) -> dict[str, Any]:
        return self.get().analyze_json(text, id=id, include=include, view=view)

    def analysis_text(
        self,
        text: str,
        *,
        id: str | None = None,
        include: Sequence[str] | None = None,
        view: View | None = None,
    ) -> str:
        return self.get().analysis_text(text, id=id, include=include, view=view)

    def call(self, entry: str, payload: JSON) -> JSON:
        return self.get().call(entry, payload)

    def interrupt(self, owner: Owner) -> bool:
        """As :meth:`Engine.interrupt`; an engine not loaded yet has no call to stop."""
        engine = self._engine
        return engine is not None and engine.interrupt(owner)

    def close(self) -> None:
        if self._started:
            self._ready.wait()
        if self._engine is not None:
            self._engine.close()


def _raise_for_missing_exports(
    kind: str,
    modules: ModuleSet,
    executor: Executor | None = None,
    *,
    separate_process: bool = False,
) -> None:
    probe = executor or _start(
        kind, Program(modules, ENTRIES[:1]), separate_process=separate_process
    )
    try:
        missing = missing_exports(export_names(probe.exports()))
    except ModuleSetError:
        if executor is not None:
            executor.close()
        raise
    finally:
        if executor is None:
            probe.close()
    if missing:
        if executor is not None:
            executor.close()
        listed = "; ".join(f"{module}: {', '.join(names)}" for module, names in missing.items())
        raise ModuleSetError(f"module set lacks required exports: {listed}", missing=missing)


__all__ = [
    "AUTO",
    "ENTRIES",
    "EXECUTORS",
    "Engine",
    "LazyEngine",
    "check_text_size",
    "choose_executor",
]
