"""The audit trail: one JSON line per write attempt (spec §14), never plan text or tokens."""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path
from typing import Any

from werkbaum_core import display
from werkbaum_stdio.stderr_lines import STDERR


class AuditLog:
    """Appends audit lines to a file, or to stderr (stdout is the JSON-RPC wire).

    A line is the write event of the catalogue (request ids, tool, source,
    bases, ``clientId`` of a document write, outcome, …) with the time first.
    ``client_id`` is the default ``clientId`` for events without one: the HTTP
    server writes documents only, so it puts its client on every line, also on
    one refused before a store was chosen.
    """

    def __init__(self, path: Path | None = None, *, client_id: str | None = None) -> None:
        self._path = path
        self._client_id = client_id
        self._lock = threading.Lock()

    def __call__(self, event: dict[str, Any]) -> None:
        line = {"time": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")}
        line.update({k: v for k, v in event.items() if v is not None})
        if self._client_id and "clientId" not in line:
            line["clientId"] = self._client_id
        # A value may name a path in bytes that are not UTF-8 (a mirror file, a message).
        text = json.dumps(display.json_values(line), ensure_ascii=False, separators=(",", ":"))
        text += "\n"
        if self._path is None:  # never waits: the host may not read stderr at all
            STDERR.write(text)
            return
        with self._lock, self._path.open("a", encoding="utf-8") as handle:
            handle.write(text)
