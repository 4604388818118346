"""Every node of every fixture moved under every legal new parent and back (issue 3).

Nodes without an id get one first (``with_ids``, as in ``test_edit.py``): the
verbs address nodes by id. The reference plan's 233 x 233 moves re-parse a 67 KB
text each; there every node goes under 4 parents spread over the plan (and root).

One engine call per plan runs the whole sweep inside the executor
(``tests/js/edit_sweep.js``): the node lands under the new parent after a
re-parse, the line count stays, and moving it back restores the text byte for
byte wherever its old position can be named (after its previous sibling, or
last). The line-by-line checks of every move live in ``test_edit.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, fixture_plans
from tests.core.test_edit import with_ids
from tests.tools import require_tool
from werkbaum_core import EXECUTORS, Engine

SWEEP_JS = REPO / "tests" / "js" / "edit_sweep.js"
LARGE = 2_000
"""Characters above which a plan is swept on the V8 executors only and with sampled parents
(minutes on QuickJS otherwise; every executor runs the same modules, and every other
edit test runs on each)."""
SAMPLED_PARENTS = 4


@pytest.fixture(scope="module", params=EXECUTORS)
def sweeper(request: pytest.FixtureRequest) -> Iterator[Engine]:
    if request.param == "node":
        require_tool("node")
    with Engine.create(request.param, frontend="", extra_entries=[SWEEP_JS]) as engine:
        yield engine


@pytest.mark.parametrize("plan", fixture_plans(), ids=lambda p: p.name)
def test_every_node_to_every_legal_parent_and_back(sweeper: Engine, plan: Path) -> None:
    text = with_ids(sweeper, plan.read_text(encoding="utf-8"))
    large = len(text) > LARGE
    if large and sweeper.kind == "dukpy":
        pytest.skip("swept on the V8 executors (see LARGE)")
    result = sweeper.call(
        "editSweep", {"text": text, "maxParents": SAMPLED_PARENTS if large else 0}
    )
    assert result["failures"] == []
    assert result["moves"] > 0
