"""Every case of tests/data/notation-cases.json, on every executor.

The comparison per ``expect`` key lives in the test-only harness
``tests/js/conformance.js`` (it runs inside the executor next to the modules);
an ``expect`` key it does not know is reported as a mismatch, never skipped.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import DATA
from werkbaum_core import Engine

CASES: list[dict[str, Any]] = json.loads((DATA / "notation-cases.json").read_text(encoding="utf-8"))


def test_case_file_is_the_expected_one() -> None:
    kinds = [case["kind"] for case in CASES]
    assert len(CASES) >= 100
    assert set(kinds) == {"analyze", "transform"}
    assert len({case["name"] for case in CASES}) == len(CASES), "case names are unique"


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_notation_case(conformance_engine: Engine, case: dict[str, Any]) -> None:
    verdict = conformance_engine.call("conformanceCheck", case)
    assert verdict["mismatches"] == [], case["name"]
    assert verdict["ok"] is True
