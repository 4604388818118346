"""SARIF 2.1.0 (the OASIS standard), shaped for GitHub code scanning's upload.

GitHub needs, beyond the schema: a rule per ``ruleId`` in ``tool.driver.rules``,
a ``physicalLocation`` with a URI relative to the checkout (:func:`places.workspace_path`;
a file outside it has a ``file://`` URI) and a ``region.startLine`` on every result. A
finding without a line (a whole-plan warning, an unreadable file) is therefore placed on
line 1 of its file. Columns count Unicode code points
(``columnKind``), as the text format does. A URI percent-encodes the file name's bytes, so
a name that is not UTF-8 is exact there too (``caf%E9.werkbaum``, RFC 3986); in texts it
is in its display form (:func:`display.text`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from werkbaum_core import __version__, display
from werkbaum_stdio.diagnostics import SUMMARIES, Diagnostic
from werkbaum_stdio.formats.places import workspace_path

SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)


def _uri(file: str) -> str:
    path = workspace_path(file)
    quoted = quote(os.fsencode(path))
    return "file://" + quoted if PurePath(path).is_absolute() else quoted


def _rule(type_: str, severity: str) -> dict[str, Any]:
    return {
        "id": type_,
        "shortDescription": {"text": SUMMARIES.get(type_, type_)},
        "defaultConfiguration": {"level": severity},  # SARIF's names too
    }


def _result(d: Diagnostic, rule_index: int) -> dict[str, Any]:
    region: dict[str, int] = {"startLine": d.line if d.line is not None else 1}
    if d.column is not None:
        region["startColumn"] = d.column
    return {
        "ruleId": d.type,
        "ruleIndex": rule_index,
        "level": d.severity,
        "message": {"text": d.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(d.file)},
                    "region": region,
                }
            }
        ],
    }


def log(diagnostics: Sequence[Diagnostic]) -> dict[str, Any]:
    """The SARIF log of one run of ``werkbaum check``."""
    index: dict[str, int] = {}
    rules: list[dict[str, Any]] = []
    for d in diagnostics:
        if d.type not in index:
            index[d.type] = len(rules)
            rules.append(_rule(d.type, d.severity))
    driver = {"name": "werkbaum", "version": __version__, "rules": rules}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index[d.type]) for d in diagnostics],
            }
        ],
    }


def render(diagnostics: Sequence[Diagnostic], colour: bool) -> str:
    return json.dumps(display.json_values(log(diagnostics)), ensure_ascii=False, indent=2) + "\n"
