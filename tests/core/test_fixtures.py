"""The real plans of tests/data/plans: the reference plan's known facts, and
identical results on every executor."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REFERENCE_PLAN, fixture_plans
from tests.tools import require_tool
from werkbaum_core import EXECUTORS, Engine
from werkbaum_core.convert import converter


def test_reference_plan_matches_the_editor(engine: Engine) -> None:
    text = REFERENCE_PLAN.read_text(encoding="utf-8")
    analysis = engine.analyze(text)
    nodes = analysis.nodes()
    assert analysis.warnings == ()
    assert len(nodes) == 233
    assert len(analysis.tree or ()) == 1
    assert analysis.path is not None
    assert len(analysis.path.needed) == 188
    assert len(analysis.path.stations) == 30
    assert analysis.path.exact is True
    discrepancies = {n.ref: (n.status, n.effective_status) for n in nodes if n.effective_status}
    assert discrepancies == {
        "#be.docs": ("^", "/"),
        "#col.live.http": ("^", "/"),
        "#trk.write": ("^", "/"),
    }
    # Stations are in document order: their lines increase.
    line_of = {n.ref: n.line for n in nodes}
    station_lines = [line_of[ref] for ref in analysis.path.stations]
    assert station_lines == sorted(station_lines)


def test_old_example_has_its_known_warnings(engine: Engine) -> None:
    text = (FIXTURES / "example-werkbaum.werkbaum").read_text(encoding="utf-8")
    warnings = engine.analyze(text, include=["warnings"]).warnings or ()
    types = [w.type for w in warnings]
    assert types.count("duplicateId") == 1
    assert [w.fields["id"] for w in warnings if w.type == "duplicateId"] == ["123"]
    assert types.count("sizeConflict") == 2
    assert all(w.text for w in warnings), "every warning carries its English sentence"


@pytest.mark.parametrize("plan", fixture_plans(), ids=lambda p: p.name)
def test_typed_model_round_trips_the_facade_json(engine: Engine, plan: Path) -> None:
    text = plan.read_text(encoding="utf-8")
    raw = engine.analyze_json(text)
    analysis = engine.analyze(text)
    assert converter.unstructure(analysis.tree) == raw["tree"]
    assert converter.unstructure(analysis.warnings) == raw["warnings"]
    assert converter.unstructure(analysis.path) == raw["path"]
    # The whole analysis too, parts not asked for left out (they were None: round 26 L9).
    assert converter.unstructure(analysis) == raw
    stations = engine.analyze(text, include=["stations"])
    assert converter.unstructure(stations) == engine.analyze_json(text, include=["stations"])


@pytest.fixture(scope="module")
def every() -> Iterator[list[Engine]]:
    require_tool("node")
    started = [Engine.create(kind, frontend="") for kind in EXECUTORS]
    yield started
    for engine in started:
        engine.close()


@pytest.mark.parametrize("plan", fixture_plans(), ids=lambda p: p.name)
def test_executors_give_byte_identical_json(every: list[Engine], plan: Path) -> None:
    text = plan.read_text(encoding="utf-8")
    answers = {e.kind: json.dumps(e.analyze_json(text), ensure_ascii=False) for e in every}
    assert len(set(answers.values())) == 1, sorted(answers)
