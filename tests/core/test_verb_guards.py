"""What the guard and the verbs do with the cases attack round 22 found (write semantics).

* A status or size edit leaves the node the same node (label, id, gate, still a node),
  with the box on the physical line where the notation reads it, or is refused.
* Warnings are keyed by the node they are about (its id, else its label path), so a mixed
  group under another parent with the same label is new; line shifts invent nothing.
* A node that already carried ``[^]`` keeps it when it moves, also without an id.
* A leading U+FEFF of a written text is the byte-order mark, not content.

Byte-exact cases from the report's repros, over an in-memory store, on every executor.
"""

from __future__ import annotations

from typing import Any

import pytest

from werkbaum_core import Blocked, Engine, InvalidArgument, checksum
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.stores import Base, MemoryStore


def run(
    engine: Engine, text: str, verb: str, args: dict[str, Any], **flags: bool
) -> tuple[MemoryStore, dict[str, Any]]:
    store = MemoryStore({"p": text})
    request = WriteRequest("p", Base(checksum(text)), verb, args, **flags)
    return store, write(engine, store, request).to_json()


def refused(engine: Engine, text: str, verb: str, args: dict[str, Any]) -> str:
    """The invalid_argument message; the store stays as it was."""
    store = MemoryStore({"p": text})
    with pytest.raises(InvalidArgument) as info:
        write(engine, store, WriteRequest("p", Base(checksum(text)), verb, args))
    assert store.text("p") == text and store.writes == 0
    return str(info.value)


def blocked(engine: Engine, text: str, verb: str, args: dict[str, Any]) -> dict[str, Any]:
    store = MemoryStore({"p": text})
    with pytest.raises(Blocked) as info:
        write(engine, store, WriteRequest("p", Base(checksum(text)), verb, args))
    assert store.text("p") == text and store.writes == 0
    body: dict[str, Any] = info.value.to_json()["error"]
    return body


# ---------------------------------------------------------------- F4: status and size


@pytest.mark.parametrize(
    ("text", "status", "expected"),
    [
        # The first line is only indentation and the marker: the gate is on the next line.
        ("- P #p\n  \\\n  - Kind #k\n", "x", "- P #p\n  \\\n  - [x] Kind #k\n"),
        # The box is on the continuation line: it is changed there.
        ("- P #p\n  - \\\n    [ ] Label #k\n", "x", "- P #p\n  - \\\n    [x] Label #k\n"),
        ("- P #p\n  - \\\n    [x] Label #k\n", None, "- P #p\n  - \\\n    Label #k\n"),
        # A box that belongs on the first line goes there.
        ("- P #p\n  - Kind \\\n    more #k\n", "~", "- P #p\n  - [~] Kind \\\n    more #k\n"),
    ],
)
def test_the_box_of_a_continued_node_goes_where_the_notation_reads_it(
    engine: Engine, text: str, status: str | None, expected: str
) -> None:
    store, result = run(engine, text, "setStatus", {"id": "k", "status": status})
    assert store.text("p") == expected
    assert result["ops"] != []
    tree = engine.analyze_json(expected)["tree"]
    kid = tree[0]["children"][0]
    assert kid["id"] == "k" and kid.get("status") == status


@pytest.mark.parametrize(
    ("text", "verb", "args"),
    [
        # The root's text would read as a description line: the node would disappear.
        ('- A #a\n[x] " quoted #q\n', "setStatus", {"id": "q", "status": None}),
        ('- A #a\n(M) " quoted #q\n', "setSize", {"id": "q", "size": None}),
        # The label's first character would become the gate.
        ("- A #a\n[x] - Label #l\n", "setStatus", {"id": "l", "status": None}),
        ("- A #a\n(S) + extra #e\n", "setSize", {"id": "e", "size": None}),
        # `---` would become the separator: "- B" would turn into description text.
        ("- A #a\n[x] ---\n- B\n", "setStatus", {"id": "L2", "status": None}),
    ],
)
def test_a_status_or_size_edit_that_would_change_the_node_is_refused(
    engine: Engine, text: str, verb: str, args: dict[str, Any]
) -> None:
    message = refused(engine, text, verb, args)
    name = args["id"] if args["id"].startswith("L") else f"#{args['id']}"
    assert "line 2" in message and name in message


# ---------------------------------------------------------------- F6: warning identity

TWO_TESTS = "- A\n  - Tests #t1\n    - x\n    | y #y\n- B\n  - Tests #t2\n    - u\n    - v\n"


@pytest.mark.parametrize("plan", [TWO_TESTS, TWO_TESTS.replace(" #t1", "").replace(" #t2", "")])
def test_a_mixed_group_under_another_parent_with_the_same_label_is_new(
    engine: Engine, plan: str
) -> None:
    args = {"id": "y", "parent": "L6", "after": "L7"}
    body = blocked(engine, plan, "moveNode", args)
    assert [(w["type"], w["line"]) for w in body["warnings"]] == [("mixedGate", 6)]
    store, result = run(engine, plan, "moveNode", args, allow_warnings=True)
    assert store.text("p") == (
        plan.replace("    | y #y\n", "").replace("    - u\n", "    - u\n    | y #y\n")
    )
    delta = result["warnings"]
    assert [(w["type"], w["line"]) for w in delta["added"]] == [("mixedGate", 6)]
    assert [(w["type"], w["line"]) for w in delta["removed"]] == [("mixedGate", 3)]
    assert delta["remaining"] == 0


def test_an_unknown_box_moving_to_a_node_with_the_same_label_is_new(engine: Engine) -> None:
    plan = "- A\n  - [z] T\n- B\n  - T #t\n"
    body = blocked(engine, plan, "write", {"text": "- A\n  - T\n- B\n  - [z] T #t\n"})
    assert [(w["type"], w["line"]) for w in body["warnings"]] == [("unknownStatus", 4)]


def test_an_xor_conflict_on_another_node_with_the_same_label_is_reported(
    engine: Engine,
) -> None:
    plan = "- P #p\n  = [x] X\n  = [x] Y\n- Q #q\n  = [ ] X\n  = [ ] Y\n"
    new = "- P #p\n  = [x] X\n  = [ ] Y\n- Q #q\n  = [x] X\n  = [x] Y\n"
    _, result = run(engine, plan, "write", {"text": new})
    delta = result["warnings"]
    assert [(w["type"], w["line"]) for w in delta["added"]] == [("xorConflict", 6)]
    assert [(w["type"], w["line"]) for w in delta["removed"]] == [("xorConflict", 3)]


PLAN_MIXED = "- Top\n  - Tests\n    - x\n    | y\n- Other\n"


@pytest.mark.parametrize(
    ("verb", "args"),
    [
        # Lines shift below an insertion.
        ("write", {"text": "- New\n" + PLAN_MIXED}),
        # A sibling with the same label appears before the group.
        ("write", {"text": PLAN_MIXED.replace("- Top\n", "- Top\n  - Tests\n")}),
        # The group moves, and the group's parent moves (no ids anywhere).
        ("moveNode", {"id": "L2", "parent": None}),
        ("moveNode", {"id": "L1", "parent": "L5"}),
    ],
)
def test_shifting_lines_and_moves_neither_add_nor_remove_a_warning(
    engine: Engine, verb: str, args: dict[str, Any]
) -> None:
    store, result = run(engine, PLAN_MIXED, verb, args)
    assert store.writes == 1
    assert result["warnings"] == {"added": [], "removed": [], "remaining": 1}


@pytest.mark.parametrize(
    ("plan", "new"),
    [
        ("- Top\n  - [z] T\n", "- Top renamed\n  - [z] T\n"),
        ("- A #a\n  - Tests\n    - x\n    | y\n", "- A #b\n  - Tests\n    - x\n    | y\n"),
        ("- P\n  - [^] Shipped\n", "- P renamed\n  - [^] Shipped\n"),
    ],
)
def test_a_node_whose_line_stays_keeps_its_warnings_when_an_ancestor_is_renamed(
    engine: Engine, plan: str, new: str
) -> None:
    store, result = run(engine, plan, "write", {"text": new})
    assert store.text("p") == new
    assert result["warnings"]["added"] == [] and result["warnings"]["removed"] == []


# ---------------------------------------------------------------- F7: [^] after a move


def test_an_id_less_node_in_production_may_move(engine: Engine) -> None:
    store, result = run(
        engine, "- P\n  - [^] Shipped\n- Q\n", "moveNode", {"id": "L2", "parent": "L3"}
    )
    assert store.text("p") == "- P\n- Q\n  - [^] Shipped\n"
    assert result["warnings"]["added"] == []


def test_a_subtree_with_a_node_in_production_may_move(engine: Engine) -> None:
    plan = "- P\n  - Release\n    - [^] Shipped\n- Q\n"
    store, _ = run(engine, plan, "moveNode", {"id": "L2", "parent": "L4"})
    assert store.text("p") == "- P\n- Q\n  - Release\n    - [^] Shipped\n"


def test_a_moved_node_in_production_keeps_it_in_a_merge_with_a_newer_text(
    engine: Engine,
) -> None:
    base = "- P\n  - [^] Shipped\n- Q\n"
    current = "- Human\n" + base  # a co-editor's line above, after the agent's read
    args = {"id": "L2", "parent": "L3"}
    out = engine.call("edit", {"text": base, "verb": "moveNode", "args": args, "current": current})
    assert out["merged"]["text"] == "- Human\n- P\n- Q\n  - [^] Shipped\n"
    assert out["merged"]["change"]["prod"] == [], "what the merge does to the current text"


def test_a_new_node_in_production_is_named_by_its_path(engine: Engine) -> None:
    body = blocked(engine, "- P\n- Q\n", "addNode", {"parent": "L2", "line": "- [^] Shipped"})
    assert body["nodes"] == ["Q > Shipped"]
    assert "would mark Q > Shipped as in production [^];" in body["message"]


def test_a_second_node_in_production_with_the_same_label_is_new(engine: Engine) -> None:
    plan = "- P\n  - [^] Shipped\n- Q\n"
    body = blocked(engine, plan, "addNode", {"parent": "L3", "line": "- [^] Shipped"})
    assert body["nodes"] == ["Q > Shipped"]


# ---------------------------------------------------------------- F9: byte-order mark


def test_a_leading_bom_of_a_written_text_is_not_content(engine: Engine) -> None:
    store, result = run(engine, "- A\n", "write", {"text": "\ufeff- A\n- B\n"})
    assert store.text("p") == "- A\n- B\n"
    assert result["ops"] == [{"op": "insert", "index": 1, "lines": ["- B"]}]
    diff = result["diff"].splitlines()
    assert [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        "+- B"
    ]
    assert "merged" not in result and "findings" not in result


def test_the_guard_reads_the_first_line_of_a_text_with_a_bom(engine: Engine) -> None:
    body = blocked(engine, "- A\n", "write", {"text": "\ufeff- [^] A\n"})
    assert body["flag"] == "allowProd" and body["nodes"] == ["A"]
