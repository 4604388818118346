"""What the two MCP servers' command lines share beyond :mod:`.command_line`.

Both run unattended, started by an MCP host or a service manager, and log to
stderr from the level given with ``--log-level``; ``werkbaum check`` and the
other human commands have no log.
"""

from __future__ import annotations

import click

from werkbaum_stdio.command_line import F
from werkbaum_stdio.logs import DEFAULT_LEVEL, LogLevel


def log_level_option(func: F) -> F:
    """``--log-level``, handed to the command as a :class:`LogLevel` (any letter case)."""
    return click.option(
        "--log-level",
        type=click.Choice([level.value for level in LogLevel], case_sensitive=False),
        default=DEFAULT_LEVEL.value,
        show_default=True,
        callback=lambda _ctx, _param, value: LogLevel(value.lower()),
        help="Log records to stderr from this level on (info adds a line per request).",
    )(func)
