"""One JSON document: the diagnostics, with the counts that decide the exit status.

Beyond a file's first 1,000 findings, one diagnostic per type counts the rest
(``unlisted``: how many; no line); ``errors`` and ``warnings`` count them all.

Strings are exact but for file names that are not UTF-8, which JSON cannot carry: those
are in their display form (:func:`display.text`, ``caf\\xe9.werkbaum``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from werkbaum_core import display
from werkbaum_stdio.diagnostics import Diagnostic, counts


def _item(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"file": d.file}
    if d.line is not None:
        out["line"] = d.line
    if d.column is not None:
        out["column"] = d.column
    out.update(severity=d.severity, type=d.type, message=d.message)
    if d.unlisted is not None:
        out["unlisted"] = d.unlisted
    return out


def render(diagnostics: Sequence[Diagnostic], colour: bool) -> str:
    errors, warnings = counts(diagnostics)
    document = {
        "errors": errors,
        "warnings": warnings,
        "diagnostics": [_item(d) for d in diagnostics],
    }
    return json.dumps(display.json_values(document), ensure_ascii=False, indent=2) + "\n"
