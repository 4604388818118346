"""Compiler-style lines, as ruff and gcc print them: ``file:line:col: severity type: message``.

The file name and the message (which quotes labels) are foreign data: they are printed in
their terminal form (:func:`display.terminal`), so a newline in a file name cannot split
the line and an escape sequence in a label cannot act on the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from werkbaum_core import display
from werkbaum_stdio.diagnostics import ERROR, Diagnostic

_SEVERITY_COLOUR = {ERROR: "red"}


def location(d: Diagnostic) -> str:
    """``file:line:col``, ``file:line`` or ``file``: as much as the finding has."""
    parts = [display.terminal(d.file)]
    if d.line is not None:
        parts.append(str(d.line))
        if d.column is not None:
            parts.append(str(d.column))
    return ":".join(parts)


def line(d: Diagnostic, colour: bool = False) -> str:
    """One diagnostic as one line (the message is never wrapped: editors jump to it)."""
    where, severity, kind = location(d), d.severity, d.type
    if colour:
        where = click.style(where, bold=True)
        severity = click.style(severity, fg=_SEVERITY_COLOUR.get(severity, "yellow"), bold=True)
        kind = click.style(kind, fg="cyan")
    return f"{where}: {severity} {kind}: {display.terminal(d.message)}"


def render(diagnostics: Sequence[Diagnostic], colour: bool) -> str:
    return "".join(line(d, colour) + "\n" for d in diagnostics)
