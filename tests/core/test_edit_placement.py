"""Where the node verbs put lines and which lines they take (round 22, attack-writes).

Byte-exact cases from the review's repros (before text, verb, after text), run through
the write pipeline on every executor:

- F1: a new or moved root takes the indentation of the root before it, so that a plan
  whose top level is indented keeps every other node's parent (a root at column 0 would
  adopt the indented roots after it).
- F3: ``remove_node`` (delete) keeps the comment lines around the ``#id`` block it
  removes (mcp-server.md §5.2: comments stay).
- F5: the verbs read lines as the parser does, so a bare ``"`` is a node (notation §3,
  §23.7) and a line without a label is skipped; ``add_node`` does not write a bare ``"``.
- F8: the ``#x`` block describes the first ``#x`` (notation §9) and goes with it.

A sweep over random plans of that kind (``tests/js/edit_placement_sweep.js``) checks the
rule behind F1 and F5 on every node: after an edit, every other node has its old parent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import REPO, engine_on
from werkbaum_core import EXECUTORS, Engine, InvalidArgument, checksum
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.stores import Base, MemoryStore


def edited(engine: Engine, text: str, verb: str, args: dict[str, Any]) -> str:
    store = MemoryStore({"p": text})
    write(engine, store, WriteRequest("p", Base(checksum(text)), verb, args))
    return store.text("p")


def parents(engine: Engine, text: str) -> dict[str, tuple[int, str | None]]:
    """Every node's id (else label; both unique here) mapped to its line and its parent's name."""
    out: dict[str, tuple[int, str | None]] = {}
    stack: list[tuple[dict[str, Any], str | None]] = [
        (n, None) for n in engine.analyze_json(text, include=["tree"])["tree"]
    ]
    while stack:
        node, parent = stack.pop()
        name = node.get("id", node["label"])
        out[name] = (node["line"], parent)
        stack.extend((c, name) for c in node.get("children", []))
    return out


INDENTED = "  - A #a\n    - A1\n  - B #b\n    - B1 #b1\n"

PLACEMENT = [
    pytest.param(  # t1.py 1: New at column 0 adopted B
        INDENTED,
        "addNode",
        {"line": "- New #n", "after": "a"},
        "  - A #a\n    - A1\n  - New #n\n  - B #b\n    - B1 #b1\n",
        id="add-root-after-an-indented-root",
    ),
    pytest.param(  # t1.py 2: B became B1's child
        INDENTED,
        "moveNode",
        {"id": "b1", "after": "a"},
        "  - A #a\n    - A1\n  - B1 #b1\n  - B #b\n",
        id="move-to-root-after-an-indented-root",
    ),
    pytest.param(
        INDENTED,
        "addNode",
        {"line": "- New #n"},
        INDENTED + "  - New #n\n",
        id="add-last-root-keeps-the-top-level-indentation",
    ),
    pytest.param(  # a root moved among roots is not re-based
        INDENTED,
        "moveNode",
        {"id": "a"},
        "  - B #b\n    - B1 #b1\n  - A #a\n    - A1\n",
        id="move-a-root-to-the-end",
    ),
    pytest.param(  # roots at 4, 2 and 0 columns: the new one between takes the previous one's
        "    - A #a\n  - B #b\n    - B1 #b1\n- C #c\n",
        "moveNode",
        {"id": "b1", "after": "a"},
        "    - A #a\n    - B1 #b1\n  - B #b\n- C #c\n",
        id="move-between-roots-of-different-widths",
    ),
    pytest.param(
        "\t- A #a\n\t\t- A1\n\t- B #b\n",
        "addNode",
        {"line": "- New #n", "after": "a"},
        "\t- A #a\n\t\t- A1\n\t- New #n\n\t- B #b\n",
        id="tab-indented-roots",
    ),
    pytest.param(  # §2.2: the first physical line sets the level, not the joined-on one
        "  \\\n- A #a\n    - A1\n  - B #b\n",
        "addNode",
        {"line": "- New #n", "after": "a"},
        "  \\\n- A #a\n    - A1\n  - New #n\n  - B #b\n",
        id="previous-root-starts-with-a-continuation",
    ),
]


COMMENTS = [
    pytest.param(  # t1.py 3, t7.py M2
        "- A #a\n- B #b\n---\n#a\n  Text A\n\n%% Notes about b: keep!\n#b\n  Text B\n",
        "a",
        "- B #b\n---\n%% Notes about b: keep!\n#b\n  Text B\n",
        id="comment-heading-the-next-block",
    ),
    pytest.param(  # t6.py B2
        "- A #a\n- B #b\n---\n#a\n  A text\n%% note on a: keep\n\n#b\n  B text\n",
        "b",
        "- A #a\n---\n#a\n  A text\n%% note on a: keep\n",
        id="comment-closing-the-previous-block",
    ),
    pytest.param(  # t6.py B3
        "- A #a\n- B #b\n---\n#a\n  A text\n%% keep me\n#b\n  B text\n",
        "a",
        "- B #b\n---\n%% keep me\n#b\n  B text\n",
        id="comment-in-the-gap",
    ),
    pytest.param(
        "- A #a\n- B #b\n---\n#a\n  A1\n  %% about A2\n  A2\n\n#b\n  B\n",
        "a",
        "- B #b\n---\n  %% about A2\n#b\n  B\n",
        id="comment-inside-the-block",
    ),
]


@pytest.mark.parametrize(("before", "node", "after"), COMMENTS)
def test_delete_keeps_the_comments_around_its_description_block(
    engine: Engine, before: str, node: str, after: str
) -> None:
    assert edited(engine, before, "removeNode", {"id": node, "discard": False}) == after


PARSER_LINES = [
    pytest.param(  # t1.py 4: the `"` root went with A
        '- A #a\n  - A1\n"\n- B\n',
        "removeNode",
        {"id": "a", "discard": False},
        '"\n- B\n',
        id="remove-leaves-the-quote-node",
    ),
    pytest.param(  # t2.py C2: A1 landed under `"`
        '- A #a\n"\n- B\n',
        "addNode",
        {"parent": "a", "line": "- A1"},
        '- A #a\n  - A1\n"\n- B\n',
        id="add-child-before-the-quote-node",
    ),
    pytest.param(  # t2.py C3: the `"` root moved along with A
        '- A #a\n"\n- B #b\n',
        "moveNode",
        {"id": "a", "after": "b"},
        '"\n- B #b\n- A #a\n',
        id="move-leaves-the-quote-node",
    ),
    pytest.param(  # with its child Q, which stayed behind under A
        '- A #a\n"\n  - Q\n- B #b\n',
        "moveNode",
        {"id": "L2", "parent": "b"},
        '- A #a\n- B #b\n  "\n    - Q\n',
        id="the-quote-node-moves-as-a-node",
    ),
    pytest.param(  # the parser skips `- ` (notation §5): A2 is A's child, and moves with it
        "- A #a\n  - A1\n- \n  - A2 #a2\n- B #b\n",
        "moveNode",
        {"id": "a", "after": "b"},
        "- B #b\n- A #a\n  - A1\n- \n  - A2 #a2\n",
        id="a-line-without-a-label-does-not-end-a-block",
    ),
]


@pytest.mark.parametrize(("before", "verb", "args", "after"), PLACEMENT + PARSER_LINES)
def test_the_verb_writes_these_bytes_and_keeps_every_other_parent(
    engine: Engine, before: str, verb: str, args: dict[str, Any], after: str
) -> None:
    out = edited(engine, before, verb, args)
    assert out == after
    old, new = parents(engine, before), parents(engine, out)
    ref = args.get("id")
    for name, (line, parent) in old.items():
        if ref not in (name, f"L{line}") and (verb != "removeNode" or name in new):
            assert new[name][1] == parent, name


@pytest.mark.parametrize(
    "args",
    [
        pytest.param({"parent": "a", "line": '"'}, id="line"),  # t13.py
        pytest.param({"parent": "a", "line": '"%% quote'}, id="line-with-comment"),
        pytest.param({"parent": "a", "lines": ["- A2", '  "']}, id="lines"),
    ],
)
def test_add_node_refuses_a_bare_quote(engine: Engine, args: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgument, match='bare "'):
        edited(engine, "- A #a\n  - A1\n", "addNode", args)


def test_delete_takes_the_description_block_of_the_first_carrier(engine: Engine) -> None:
    """t6.py 18: left behind, the block would describe B."""
    before = "- A #x\n- B #x\n---\n#x\n  Describes A only.\n"
    out = edited(engine, before, "removeNode", {"id": "x", "discard": False})
    assert out == "- B #x\n---\n"
    assert "desc" not in engine.analyze_json(out, include=["tree"])["tree"][0]


SWEEP_JS = REPO / "tests" / "js" / "edit_placement_sweep.js"
SWEEP_PLANS = 40
"""Random plans per executor: about 2,000 edits, a few seconds on QuickJS."""


@pytest.fixture(scope="module", params=EXECUTORS)
def sweeper(request: pytest.FixtureRequest) -> Iterator[Engine]:
    yield from engine_on(request.param, SWEEP_JS)


def test_random_plans_keep_every_other_parent(sweeper: Engine) -> None:
    result = sweeper.call("editPlacementSweep", {"seed": 22, "plans": SWEEP_PLANS})
    assert result["failures"] == []
    assert result["edits"] > 1000
