"""The checked-in tool reference is generated from the catalogue and current."""

from __future__ import annotations

from tests.conftest import REPO
from werkbaum_core.rules import reference
from werkbaum_core.rules.catalogue import CATALOGUE


def test_docs_tools_md_is_current() -> None:
    checked_in = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    assert checked_in == reference.markdown(), (
        "docs/tools.md is stale: run python -m werkbaum_core.rules.reference > docs/tools.md"
    )


def test_reference_names_every_tool_and_parameter() -> None:
    text = reference.markdown()
    for spec in CATALOGUE:
        assert f"`{spec.name}`" in text
        for name in spec.input_schema["properties"]:
            assert name in text
