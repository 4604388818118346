"""A legal plan of ~2,000 levels inspects over a real stdio pipe, in both protocol eras
(issue 13, item 4): the tree is cut at the nesting cap, so neither the SDK's serialiser
nor the official client's parser ever meets a result nested deeper than they allow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.plangen import nested_plan
from tests.stdio.conftest import MODES, claude_code_style, structured
from werkbaum_core.rules.catalogue import MAX_TREE_DEPTH

pytestmark = pytest.mark.anyio

LEVELS = 2_000


def chain(tree: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The nodes of a one-child-per-level tree, top down."""
    out = []
    while tree:
        out.append(tree[0])
        tree = tree[0].get("children", [])
    return out


@pytest.mark.parametrize("mode", MODES)
async def test_a_2000_level_plan_inspects_cut_at_the_cap(mode: str, project: Path) -> None:
    (project / "deep.werkbaum").write_text(nested_plan(LEVELS), encoding="utf-8")
    async with Client(claude_code_style(project), mode=mode) as client:
        result = await client.call_tool("werkbaum_inspect", {"source": "deep.werkbaum"})
        assert not result.is_error, result.content
        answer = structured(result)
        nodes = chain(answer["tree"])
        assert len(nodes) == MAX_TREE_DEPTH + 1
        cut = nodes[-1]
        assert (cut["id"], cut["line"]) == (f"n{MAX_TREE_DEPTH}", MAX_TREE_DEPTH + 1)
        assert cut["descendants"] == LEVELS - MAX_TREE_DEPTH - 1 and "children" not in cut
        assert answer["cut"] == {"depth": MAX_TREE_DEPTH, "nodes": 1}
        assert len(answer["path"]["needed"]) == LEVELS
        # The cut node's id gives the next levels, down to the last one.
        last = f"n{LEVELS - 10}"
        tail = structured(
            await client.call_tool("werkbaum_inspect", {"source": "deep.werkbaum", "id": last})
        )
        assert [n["id"] for n in chain(tail["tree"])] == [
            f"n{i}" for i in range(LEVELS - 10, LEVELS)
        ]
        assert "cut" not in tail
