"""``werkbaum check --format``: one module per output format, all from the same diagnostics.

Each renderer takes the run's diagnostics (in file order) and returns the text
to print on stdout; the summary line and notes go to stderr separately, so any
format's stdout stays machine-readable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from werkbaum_stdio.diagnostics import Diagnostic
from werkbaum_stdio.formats import github, json_report, sarif, text

Renderer = Callable[[Sequence[Diagnostic], bool], str]
"""``(diagnostics, colour) -> stdout text``; only the text format uses colour."""

RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_report.render,
    "github": github.render,
    "sarif": sarif.render,
}
