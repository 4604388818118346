"""The servers' log: stderr, one line per record, at the level given with ``--log-level``.

Written through :mod:`werkbaum_stdio.stderr_lines`, so that a host that does not read
stderr can never make a request wait on a log line.

At the default level, ``warning``, a request that went well writes nothing
(MCP hosts show a server's stderr to people; a line per call hides the lines
that matter): what is logged is what went wrong — a line that could not be
answered, an answer that could not be encoded, an unexpected failure.
``info`` adds the HTTP access log and the SDK's per-request notes, ``debug``
everything. Audit lines are not log records: they go where ``--audit-log``
says (stdio) or to stderr, whatever the level.
"""

from __future__ import annotations

import enum
import logging
from typing import Any

from werkbaum_core import display
from werkbaum_stdio.stderr_lines import QueuedStderrHandler

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
ACCESS_LOGGER = "werkbaum_http.access"


class LogLevel(enum.StrEnum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"
    critical = "critical"


DEFAULT_LEVEL = LogLevel.warning


class _DisplayFormatter(logging.Formatter):
    """Records in their display form (:func:`display.text`): a path that is not UTF-8 reads
    ``caf\\xe9`` as in the answers, not ``caf\\udce9`` (stderr's ``backslashreplace``)."""

    def format(self, record: logging.LogRecord) -> str:
        return display.text(super().format(record))


def configure(level: LogLevel = DEFAULT_LEVEL) -> None:
    """Route every logger to one stderr handler at ``level`` (idempotent)."""
    root = logging.getLogger()
    if not any(getattr(h, "werkbaum", False) for h in root.handlers):
        handler = QueuedStderrHandler()
        handler.setFormatter(_DisplayFormatter(FORMAT))
        handler.werkbaum = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level.upper())


def uvicorn_config(level: LogLevel = DEFAULT_LEVEL) -> dict[str, Any]:
    """The same set-up as :func:`configure` as uvicorn's ``log_config``, which uvicorn
    applies in every worker process before it loads the app: uvicorn's own loggers and
    the access log (``werkbaum_http.access``, INFO records) follow ``level`` too."""
    name = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": FORMAT}},
        "handlers": {
            "stderr": {
                "class": f"{QueuedStderrHandler.__module__}.{QueuedStderrHandler.__name__}",
                "formatter": "plain",
            }
        },
        "root": {"handlers": ["stderr"], "level": name},
        "loggers": {
            "uvicorn": {"level": name},
            "uvicorn.error": {"level": name},
            "uvicorn.access": {"level": name},
            ACCESS_LOGGER: {"level": name},
        },
    }
