"""The default executor: QuickJS-NG embedded through dukpy 0.6.

One interpreter per executor behind a lock: an interpreter is not safe for
re-entrant use, and dukpy holds the GIL for a whole evaluation anyway.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import dukpy

from werkbaum_core.engine.protocol import JSON
from werkbaum_core.errors import EngineError

_SCRUB_ENV = "globalThis.process = { env: {} };"
"""dukpy exposes ``os.environ`` as ``process.env``; tokens must never reach JS."""


class DukpyExecutor:
    name = "dukpy"

    def __init__(self, directory: Path, entries: tuple[str, ...], *, owns_directory: bool) -> None:
        self._directory = directory
        self._owns_directory = owns_directory
        self._lock = threading.Lock()
        self._js = dukpy.JSInterpreter()
        self._js.evaljs(_SCRUB_ENV)
        for entry in entries:
            try:
                self._js.run(str(directory / entry))
            except dukpy.JSRuntimeError as exc:
                raise EngineError(f"loading {entry} failed: {_first_line(exc)}") from exc

    def exports(self) -> dict[str, list[str]]:
        with self._lock:
            found: dict[str, list[str]] = self._js.evaljs("globalThis.werkbaumExports || {}")
        return found

    def call_text(self, entry: str, payload: JSON) -> str:
        # The payload travels as a JSON string and the result comes back as one:
        # a single parse on each side is cheaper than dukpy's value conversion.
        code = "werkbaumToJSON(globalThis.werkbaum[dukpy.entry](JSON.parse(dukpy.payload)))"
        with self._lock:
            try:
                raw: Any = self._js.evaljs(code, entry=entry, payload=json.dumps(payload))
            except dukpy.JSRuntimeError as exc:
                raise EngineError(_first_line(exc), entry=entry) from exc
        return "null" if raw is None else str(raw)

    def close(self) -> None:
        if self._owns_directory:
            shutil.rmtree(self._directory, ignore_errors=True)


def _first_line(exc: Exception) -> str:
    """The JS error message without QuickJS's stack trace."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
