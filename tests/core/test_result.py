"""ToolResult: the JSON object and its text describe the same value, byte for byte
what encoding the object would give, also when the text is spliced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import fixture_plans
from werkbaum_core import Engine
from werkbaum_core.rules.result import ToolResult, to_text

BASE = {"version": None, "checksum": "sha256:" + "0" * 64}


def test_with_first_puts_the_key_first_and_keeps_the_rest() -> None:
    result = ToolResult.with_first("base", BASE, '{"tree":[],"path":{"exact":true}}')
    assert result.text == to_text({"base": BASE, "tree": [], "path": {"exact": True}})
    assert list(result.data) == ["base", "tree", "path"]
    assert json.loads(result.text) == result.data


def test_with_first_on_an_empty_object() -> None:
    result = ToolResult.with_first("base", BASE, "{}")
    assert result.text == to_text({"base": BASE})
    assert result.data == {"base": BASE}


def test_with_first_refuses_a_key_the_object_already_has() -> None:
    with pytest.raises(ValueError, match="already"):
        ToolResult.with_first("tree", [], '{"tree":[]}')


@pytest.mark.parametrize("plan", fixture_plans(), ids=lambda p: p.name)
def test_the_engines_analysis_text_is_what_encoding_its_object_gives(
    engine: Engine, plan: Path
) -> None:
    # The inspect tool sends the executor's JSON text instead of re-encoding the
    # parsed object: for real plans (non-ASCII labels, long descriptions) both are
    # the same bytes on every executor.
    text = plan.read_text(encoding="utf-8")
    spliced = ToolResult.with_first("base", BASE, engine.analysis_text(text))
    assert spliced.text == to_text(spliced.data)
    assert spliced.data == {"base": BASE, **engine.analyze_json(text)}


def test_results_of_one_text_share_its_parse_but_not_their_top_level() -> None:
    text = '{"tree":[{"label":"A","line":1}],"warnings":[]}'
    first = ToolResult.with_first("base", BASE, text)
    second = ToolResult.with_first("base", {**BASE, "version": 2}, text)
    assert first.data is not second.data
    assert first.data["tree"] is second.data["tree"]  # parsed once
    assert second.data["base"]["version"] == 2 and first.data["base"]["version"] is None
    plain = ToolResult.from_text(text)
    assert plain.data == {"tree": [{"label": "A", "line": 1}], "warnings": []}
    assert "base" not in plain.data and plain.text == text
