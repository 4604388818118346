"""The audit trail: one JSON line per write attempt (spec §14), never plan text or tokens."""

from __future__ import annotations

import datetime as dt
import json
import os
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

    A line that cannot be appended to the file (a full disk, a FIFO nobody reads) goes to
    stderr with a note instead; the call it records keeps its answer.
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
        try:
            with self._lock:
                _append(self._path, text.encode("utf-8", "backslashreplace"))
        except OSError as exc:
            # The write it records has happened: its answer must not turn into a failure
            # (the agent would redo a write that landed), nor the line be lost.
            reason = (exc.strerror or str(exc)).lower()
            STDERR.write(
                f"werkbaum: cannot append to the audit log {display.text(str(self._path))} "
                f"({reason}); the audit line:\n{text}"
            )


def _append(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` without waiting for anyone: a FIFO nobody reads (or
    reads too slowly) is an error, not a wait that would hold every write call."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
