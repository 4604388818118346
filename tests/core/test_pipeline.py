"""The write pipeline over an in-memory store: guard matrix, warning delta,
line shifts, dry runs and stale bases — on every executor."""

from __future__ import annotations

from typing import Any

import pytest

from werkbaum_core import Blocked, Conflict, Engine, InvalidArgument, NotFound, checksum
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.stores import Base, MemoryStore

PLAN = """[ ] #plan: Plan
  - [ ] #a: A (S)
  - [ ] #b: B (M)
    - [ ] #b1: B1 (XS)
  - [x] #c: C (S)
"""


def run(
    engine: Engine,
    verb: str,
    args: dict[str, Any],
    text: str = PLAN,
    **flags: bool,
) -> tuple[MemoryStore, dict[str, Any]]:
    store = MemoryStore({"p": text})
    request = WriteRequest("p", Base(checksum(text)), verb, args, **flags)
    return store, write(engine, store, request).to_json()


def types(warnings: list[dict[str, Any]]) -> list[str]:
    return [w["type"] for w in warnings]


STRUCTURAL_CHANGES = {
    "mixedGate": ("addNode", {"parent": "b", "line": "| [ ] #b2: B2 (XS)"}),
    "unknownStatus": ("write", {"text": PLAN.replace("[ ] #a", "[z] #a")}),
    "descStray": ("write", {"text": PLAN + "---\nstray words\n"}),
    "duplicateId": ("addNode", {"parent": "plan", "line": "- [ ] #a: Again (S)"}),
}


@pytest.mark.parametrize("kind", sorted(STRUCTURAL_CHANGES))
def test_new_structural_warning_blocks_and_writes_nothing(engine: Engine, kind: str) -> None:
    verb, args = STRUCTURAL_CHANGES[kind]
    store = MemoryStore({"p": PLAN})
    with pytest.raises(Blocked) as info:
        write(engine, store, WriteRequest("p", Base(checksum(PLAN)), verb, args))
    body = info.value.to_json()["error"]
    assert body["code"] == "blocked"
    assert body["flag"] == "allowWarnings"
    assert kind in types(body["warnings"])
    assert store.text("p") == PLAN and store.writes == 0


@pytest.mark.parametrize("kind", sorted(STRUCTURAL_CHANGES))
def test_structural_warning_is_written_with_allow_warnings(engine: Engine, kind: str) -> None:
    verb, args = STRUCTURAL_CHANGES[kind]
    store, result = run(engine, verb, args, allow_warnings=True)
    assert store.writes == 1
    assert kind in types(result["warnings"]["added"])
    assert result["base"]["checksum"] == checksum(store.text("p"))


CONTENT_CHANGES = {
    "sizeConflict": ("addNode", {"parent": "b", "line": "- [ ] #b2: B2 (L)"}),
    "unknownDep": ("addNode", {"parent": "plan", "line": "- [ ] #d: D (S) :#later"}),
    "unknownDesc": ("write", {"text": PLAN + "---\n#nobody\n  Text.\n"}),
    "xorConflict": (
        "write",
        {"text": "[ ] #p: P\n  = [~] #x: X (S)\n  = [~] #y: Y (S)\n"},
    ),
    "assigneeOverload": (
        "write",
        {"text": "[ ] Plan\n  - [ ] A (L) @anna\n  - [ ] B (XS) @ben\n"},
    ),
}


@pytest.mark.parametrize("kind", sorted(CONTENT_CHANGES))
def test_content_warning_is_written_and_reported(engine: Engine, kind: str) -> None:
    verb, args = CONTENT_CHANGES[kind]
    store, result = run(engine, verb, args)
    assert store.writes == 1
    added = result["warnings"]["added"]
    assert kind in types(added)
    assert all(w["text"] for w in added), "every reported warning has its sentence"


def test_a_disappearing_warning_is_reported_as_removed(engine: Engine) -> None:
    text = PLAN + "  - [ ] #d: D :#missing\n"
    _, result = run(engine, "setSize", {"id": "d", "size": "S"}, text)
    assert result["warnings"]["removed"] == []  # unrelated edit: nothing removed
    _, result = run(engine, "removeNode", {"id": "d", "discard": False}, text)
    assert types(result["warnings"]["removed"]) == ["unknownDep"]
    assert result["warnings"]["remaining"] == 0


def test_inserting_lines_above_a_warning_neither_adds_nor_removes_it(engine: Engine) -> None:
    text = PLAN + "  - [ ] #d: D :#missing\n"
    _, result = run(
        engine, "addNode", {"parent": "plan", "line": "- [ ] #e: E (S)", "after": "a"}, text
    )
    assert result["warnings"]["added"] == []
    assert result["warnings"]["removed"] == []
    assert result["warnings"]["remaining"] == 1


PROD_CHANGES = {
    "setStatus": ("setStatus", {"id": "a", "status": "^"}),
    "applyOps": (
        "applyOps",
        {"ops": [{"op": "replace", "index": 1, "count": 1, "lines": ["  - [^] #a: A (S)"]}]},
    ),
    "write": ("write", {"text": PLAN.replace("[ ] #b1", "[^] #b1")}),
    "addNode": ("addNode", {"parent": "plan", "line": "- [^] #live: Live (S)"}),
}


@pytest.mark.parametrize("via", sorted(PROD_CHANGES))
def test_prod_is_blocked_unless_allowed(engine: Engine, via: str) -> None:
    verb, args = PROD_CHANGES[via]
    store = MemoryStore({"p": PLAN})
    with pytest.raises(Blocked) as info:
        write(engine, store, WriteRequest("p", Base(checksum(PLAN)), verb, args))
    assert info.value.to_json()["error"]["flag"] == "allowProd"
    assert store.writes == 0
    store, _ = run(engine, verb, args, allow_prod=True)
    assert store.writes == 1 and "[^]" in store.text("p")


@pytest.mark.parametrize(("status", "box"), [("done", "[x]"), ("In-Progress", "[~]"), ("X", "[x]")])
def test_the_python_api_takes_the_tools_status_aliases(
    engine: Engine, status: str, box: str
) -> None:
    """As the tools do (round 25 newcomer M5: ``done`` was written into the label's place)."""
    store, _ = run(engine, "setStatus", {"id": "a", "status": status})
    assert f"  - {box} #a: A (S)" in store.text("p")


def test_the_prod_alias_is_blocked_like_its_box(engine: Engine) -> None:
    store = MemoryStore({"p": PLAN})
    request = WriteRequest("p", Base(checksum(PLAN)), "setStatus", {"id": "a", "status": "prod"})
    with pytest.raises(Blocked) as info:
        write(engine, store, request)
    assert info.value.to_json()["error"]["flag"] == "allowProd" and store.writes == 0


def test_an_unknown_status_is_named_with_the_choices(engine: Engine) -> None:
    with pytest.raises(InvalidArgument, match=r"unknown status 'finished'; use one of .*done"):
        run(engine, "setStatus", {"id": "a", "status": "finished"})


def test_a_node_that_already_had_prod_may_keep_it_also_when_moved(engine: Engine) -> None:
    text = PLAN.replace("[x] #c", "[^] #c")
    store, _ = run(engine, "moveNode", {"id": "c", "parent": "b"}, text)
    assert store.writes == 1
    store, _ = run(engine, "setSize", {"id": "c", "size": "M"}, text)
    assert store.writes == 1


def test_dry_run_computes_everything_and_writes_nothing(engine: Engine) -> None:
    store, result = run(engine, "setStatus", {"id": "a", "status": "~"}, dry_run=True)
    assert store.writes == 0 and store.text("p") == PLAN
    assert result["dryRun"] is True
    assert result["ops"] == [
        {"op": "replace", "index": 1, "count": 1, "lines": ["  - [~] #a: A (S)"]}
    ]
    assert "+  - [~] #a: A (S)" in result["diff"]
    assert result["base"] == {"version": None, "checksum": checksum(PLAN)}


def test_stale_base_is_a_conflict_with_the_current_text(engine: Engine) -> None:
    store = MemoryStore({"p": PLAN})
    stale = Base(checksum(PLAN.replace("(S)", "(M)", 1)))
    with pytest.raises(Conflict) as info:
        write(engine, store, WriteRequest("p", stale, "setStatus", {"id": "a", "status": "x"}))
    current = info.value.to_json()["error"]["current"]
    assert current == {"text": PLAN, "base": {"version": None, "checksum": checksum(PLAN)}}
    assert store.writes == 0


def test_result_describes_the_write(engine: Engine) -> None:
    store, result = run(engine, "setStatus", {"id": "b1", "status": "x"})
    assert store.text("p") == PLAN.replace("[ ] #b1", "[x] #b1")
    assert result["base"]["checksum"] == checksum(store.text("p"))
    assert result["lines"] == PLAN.count("\n") + 1
    assert result["ops"] == [
        {"op": "replace", "index": 3, "count": 1, "lines": ["    - [x] #b1: B1 (XS)"]}
    ]
    assert "dryRun" not in result


def test_unchanged_text_writes_nothing(engine: Engine) -> None:
    store, result = run(engine, "setStatus", {"id": "a", "status": " "})
    assert store.writes == 0
    assert result["ops"] == []


def test_unknown_id_is_not_found(engine: Engine) -> None:
    with pytest.raises(NotFound, match="nope"):
        run(engine, "setStatus", {"id": "nope", "status": "x"})


def test_ops_that_do_not_fit_are_an_invalid_argument(engine: Engine) -> None:
    ops = [{"op": "delete", "index": 40, "count": 1}]
    with pytest.raises(InvalidArgument) as info:
        run(engine, "applyOps", {"ops": ops})
    assert info.value.message == (  # one code, leading: it read "… base: invalid_argument: op 0"
        'ops do not fit the base: op 0 ({"op":"delete","index":40,"count":1}) index is '
        "outside the 6 base lines"
    )


def test_an_insert_at_lines_minus_one_appends_a_line(engine: Engine) -> None:
    """What the guide tells agents: ``lines`` counts the parts split at each newline, so a
    text ending in one has an empty last part and ``lines - 1`` is the end of the plan
    (``lines`` itself would add an empty line, and the text would lose its final newline)."""
    lines = len(PLAN.split("\n"))
    line = "  - [ ] #d: D (S)"
    store, result = run(
        engine, "applyOps", {"ops": [{"op": "insert", "index": lines - 1, "lines": [line]}]}
    )
    assert store.read("p").text == PLAN + line + "\n"
    assert result["lines"] == lines + 1


def test_too_many_ops_are_refused_before_anything_runs() -> None:
    ops = [{"op": "insert", "index": 0, "lines": ["x"]}] * 1001
    with pytest.raises(InvalidArgument, match="1000"):
        WriteRequest("p", Base(checksum(PLAN)), "applyOps", {"ops": ops})
