"""One JSON document: every diagnostic, with the counts that decide the exit status.

Strings are exact but for file names that are not UTF-8, which JSON cannot carry: those
are in their display form (:func:`display.text`, ``caf\\xe9.werkbaum``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from werkbaum_core import display
from werkbaum_stdio.diagnostics import ERROR, Diagnostic


def _item(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"file": d.file}
    if d.line is not None:
        out["line"] = d.line
    if d.column is not None:
        out["column"] = d.column
    out.update(severity=d.severity, type=d.type, message=d.message)
    return out


def render(diagnostics: Sequence[Diagnostic], colour: bool) -> str:
    errors = sum(d.severity == ERROR for d in diagnostics)
    document = {
        "errors": errors,
        "warnings": len(diagnostics) - errors,
        "diagnostics": [_item(d) for d in diagnostics],
    }
    return json.dumps(display.json_values(document), ensure_ascii=False, indent=2) + "\n"
