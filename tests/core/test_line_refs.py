"""A node without an id of its own is written by the ref results give it, ``L<line>``.

``find`` and ``stations`` name such nodes ``L<line>`` (plans without ids, the later
carriers of a duplicate id); every node verb takes that ref, against the base it came
from, on every executor. A bare ``L<n>`` that is one node's id and another node's line
is refused instead of guessed.
"""

from __future__ import annotations

from typing import Any

import pytest

from werkbaum_core import Engine, InvalidArgument, NotFound, checksum
from werkbaum_core.model import View
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.stores import Base, MemoryStore

PLAN = """[ ] Shop
  - [ ] Go live (M)
    - [ ] DNS (XS)
  - [ ] Cart (S)
"""


def edited(engine: Engine, verb: str, args: dict[str, Any], text: str = PLAN) -> str:
    store = MemoryStore({"p": text})
    write(engine, store, WriteRequest("p", Base(checksum(text)), verb, args))
    return store.text("p")


def lines(*replaced: tuple[int, str], text: str = PLAN) -> str:
    out = text.split("\n")
    for number, line in replaced:
        out[number - 1] = line
    return "\n".join(out)


def test_find_hands_out_line_refs_for_a_plan_without_ids(engine: Engine) -> None:
    cart = engine.analyze_json(PLAN, view=View(find="cart"))["matches"]["nodes"]
    assert [m["ref"] for m in cart] == ["L4"]
    assert edited(engine, "setStatus", {"id": cart[0]["ref"], "status": "x"}) == (
        lines((4, "  - [x] Cart (S)"))
    )


@pytest.mark.parametrize(
    ("verb", "args", "expected"),
    [
        ("setStatus", {"id": "L4", "status": "x"}, lines((4, "  - [x] Cart (S)"))),
        ("setSize", {"id": "L4", "size": "L"}, lines((4, "  - [ ] Cart (L)"))),
        ("removeNode", {"id": "L3", "discard": True}, lines((3, "    - [-] DNS (XS)"))),
        ("removeNode", {"id": "L2", "discard": False}, "[ ] Shop\n  - [ ] Cart (S)\n"),
        (
            "addNode",
            {"parent": "L2", "line": "- [ ] Certs (S)", "after": "L3"},
            PLAN.replace("(XS)\n", "(XS)\n    - [ ] Certs (S)\n"),
        ),
        (
            "moveNode",
            {"id": "L4", "parent": "L2"},
            "[ ] Shop\n  - [ ] Go live (M)\n    - [ ] DNS (XS)\n    - [ ] Cart (S)\n",
        ),
        (  # the block cut out comes before `after`: its line moves up
            "moveNode",
            {"id": "L2", "parent": "L1", "after": "L4"},
            "[ ] Shop\n  - [ ] Cart (S)\n  - [ ] Go live (M)\n    - [ ] DNS (XS)\n",
        ),
    ],
)
def test_every_node_verb_takes_a_line_ref(
    engine: Engine, verb: str, args: dict[str, Any], expected: str
) -> None:
    assert edited(engine, verb, args) == expected


def test_the_later_carrier_of_a_duplicate_id_is_written_by_its_line_ref(engine: Engine) -> None:
    text = "[ ] #a: First\n[ ] #a: Second\n"
    tree = engine.analyze_json(text, include=["tree"])["tree"]
    assert [node.get("id") for node in tree] == ["a", "a"]
    assert edited(engine, "setStatus", {"id": "L2", "status": "x"}, text) == (
        "[ ] #a: First\n[x] #a: Second\n"
    )
    assert edited(engine, "setStatus", {"id": "#a", "status": "x"}, text) == (
        "[x] #a: First\n[ ] #a: Second\n"
    )


AMBIGUOUS = """[ ] #root: Root
  - [ ] #L4: Named like a line (S)
  - [ ] Third
  - [ ] Fourth
"""


def test_a_bare_line_ref_that_is_also_another_nodes_id_is_refused(engine: Engine) -> None:
    with pytest.raises(InvalidArgument, match=r"L4 is the id of the node on line 2"):
        edited(engine, "setStatus", {"id": "L4", "status": "x"}, AMBIGUOUS)
    assert edited(engine, "setStatus", {"id": "#L4", "status": "x"}, AMBIGUOUS) == (
        AMBIGUOUS.replace("- [ ] #L4", "- [x] #L4")
    )
    with pytest.raises(InvalidArgument, match=r"pass '#L4' for the first"):
        engine.analyze_json(AMBIGUOUS, id="L4", include=["tree"])


@pytest.mark.parametrize("ref", ["L99", "L0", "L5"])
def test_a_line_ref_where_no_node_starts_is_not_found(engine: Engine, ref: str) -> None:
    text = PLAN + "%% a comment on line 5\n"
    with pytest.raises((NotFound, InvalidArgument)) as info:
        edited(engine, "setStatus", {"id": ref, "status": "x"}, text)
    if ref != "L0":  # not a line ref at all: an unknown id
        assert info.value.message == f"no node starts on line {ref[1:]}"
    with pytest.raises(NotFound):
        engine.analyze_json(text, id=ref, include=["tree"])
