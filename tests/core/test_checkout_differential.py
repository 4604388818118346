"""With a Werkbaum checkout configured (``WERKBAUM_FRONTEND=.../frontend/src``), compare the
bundled modules' results with the checkout's on every fixture and report every difference
(spec §2.1). Without a checkout there is nothing to compare, and the test says so."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import fixture_plans
from werkbaum_core import Engine

CHECKOUT = os.environ.get("WERKBAUM_FRONTEND", "")


def differences(a: Any, b: Any, where: str = "") -> Iterator[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            yield from differences(a.get(key), b.get(key), f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from differences(x, y, f"{where}[{i}]")
    elif a != b:
        yield f"{where}: bundled {json.dumps(a)[:80]} != checkout {json.dumps(b)[:80]}"


@pytest.mark.skipif(not CHECKOUT, reason="no Werkbaum checkout configured (WERKBAUM_FRONTEND)")
def test_bundled_modules_agree_with_the_checkout() -> None:
    found: list[str] = []
    with Engine.create("node", frontend="") as bundled, Engine.create("node", CHECKOUT) as theirs:
        for plan in fixture_plans():
            text = plan.read_text(encoding="utf-8")
            for diff in differences(bundled.analyze_json(text), theirs.analyze_json(text)):
                found.append(f"{plan.name}{diff}")
    assert not found, "\n".join(found)


def test_difference_report_names_each_path() -> None:
    report = list(differences({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}))
    assert report == [".a[1].b: bundled 2 != checkout 3"]
