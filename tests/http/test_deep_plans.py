"""A legal plan of ~2,000 levels inspects over HTTP with the official client, in both
protocol eras (issue 13, item 4): the tree is cut at the nesting cap."""

from __future__ import annotations

import pytest

from tests.backend import Backend
from tests.http.conftest import FULL_TOKEN, MODES, connect, create_document
from tests.plangen import nested_plan
from tests.stdio.conftest import structured
from tests.stdio.test_deep_plans import LEVELS, chain
from werkbaum_core.rules.catalogue import MAX_TREE_DEPTH

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
async def test_a_2000_level_document_inspects_cut_at_the_cap(
    mode: str, base_url: str, backend: Backend
) -> None:
    document = create_document(backend, nested_plan(LEVELS))
    async with connect(base_url, FULL_TOKEN, mode) as client:
        result = await client.call_tool(
            "werkbaum_inspect", {"source": document, "include": ["tree", "stations"]}
        )
        assert not result.is_error, result.content
        answer = structured(result)
        assert len(chain(answer["tree"])) == MAX_TREE_DEPTH + 1
        assert answer["cut"] == {"depth": MAX_TREE_DEPTH, "nodes": 1}
        assert [s["ref"] for s in answer["stations"]["nodes"]] == [f"#n{LEVELS - 1}"]
