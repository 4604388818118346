"""Answers that list per-line items are bounded (round 22, F1): a 2 MB text of stray
lines gave a 513 MB inspect answer. Every warning list — inspect's, a write's
``added``/``removed``, a blocked write's — lists at most 1,000 items and says
``{listed, total}`` where it cut (inspect also counts the rest by type, ``unlisted``);
the guard decides on the totals — on every executor."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import REFERENCE_PLAN
from tests.core.one_store import OneStore
from werkbaum_core import Blocked, Engine, TooLarge, checksum
from werkbaum_core.convert import converter
from werkbaum_core.model import Unlisted, View, WarningsCut
from werkbaum_core.rules import schemas
from werkbaum_core.rules.catalogue import CATALOGUE, Caller, Services
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.rules.schemas import MAX_WARNINGS
from werkbaum_core.stores import Base, MemoryStore

PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n"
MANY = 1500


def strays(count: int) -> str:
    """A plan whose description part has ``count`` stray lines: one descStray each."""
    return PLAN + "---\n" + "x\n" * count


def unknown_deps(count: int) -> str:
    """One node that depends on ``count`` ids no node carries: one unknownDep each."""
    deps = ",".join(f"#m{i}" for i in range(count))
    return PLAN + f"  - [ ] #d: D (S) :{deps}\n"


def run(
    engine: Engine, args: dict[str, Any], text: str = PLAN, **flags: bool
) -> tuple[MemoryStore, dict[str, Any]]:
    store = MemoryStore({"p": text})
    request = WriteRequest("p", Base(checksum(text)), "write", args, **flags)
    return store, write(engine, store, request).to_json()


def test_inspect_lists_the_first_warnings_and_counts_the_rest(engine: Engine) -> None:
    text = strays(MANY)
    answer = engine.analysis_text(text, include=["warnings"])
    got = engine.analyze_json(text, include=["warnings"])
    rest = [{"type": "descStray", "count": MANY - MAX_WARNINGS, "structural": True}]
    assert got["warningsCut"] == {"listed": MAX_WARNINGS, "total": MANY, "unlisted": rest}
    assert [w["line"] for w in got["warnings"]] == list(range(4, 4 + MAX_WARNINGS))
    assert {w["type"] for w in got["warnings"]} == {"descStray"}
    assert len(answer) < 300 * MAX_WARNINGS  # was ~250 characters per stray line


def test_the_typed_analysis_says_where_it_cut(engine: Engine) -> None:
    """``Engine.analyze`` (and so ``werkbaum inspect --json``) keeps the count: a cut list
    must not read as the whole one."""
    analysis = engine.analyze(strays(MANY), include=["warnings"])
    assert analysis.warnings is not None and len(analysis.warnings) == MAX_WARNINGS
    rest = (Unlisted(type="descStray", count=MANY - MAX_WARNINGS, structural=True),)
    assert analysis.warnings_cut == WarningsCut(listed=MAX_WARNINGS, total=MANY, unlisted=rest)
    assert converter.unstructure(analysis)["warningsCut"] == {
        "listed": MAX_WARNINGS,
        "total": MANY,
        "unlisted": [{"type": "descStray", "count": MANY - MAX_WARNINGS, "structural": True}],
    }
    assert engine.analyze(PLAN).warnings_cut is None


def test_structural_warnings_are_listed_first_and_the_rest_counted_by_type(
    engine: Engine,
) -> None:
    """1,500 content warnings, then two stray lines (structural) and an unknown
    description block: the cut lists the structural ones first (round 24 F5: behind a
    thousand content warnings, the error that fails ``werkbaum check`` had no line in
    any output), fills up with content ones in the editor's order, and counts the rest
    by type in the order of first appearance, with each type's ``structural`` from the
    engine."""
    text = unknown_deps(MANY) + "---\nstray\n#nobody\n  text\nstray again\n"
    analysis = engine.analyze(text, include=["warnings"])
    listed = analysis.warnings or ()
    assert [w.type for w in listed].count("descStray") == 2
    assert [w.type for w in listed].count("unknownDep") == MAX_WARNINGS - 2
    every = engine.analyze(text, include=["warnings"], view=View(every_warning=True))
    kept = [w for w in every.warnings or () if w in listed]
    assert kept == list(listed)  # the editor's order
    assert analysis.warnings_cut == WarningsCut(
        listed=MAX_WARNINGS,
        total=MANY + 3,
        unlisted=(
            Unlisted(type="unknownDep", count=MANY - MAX_WARNINGS + 2, structural=False),
            Unlisted(type="unknownDesc", count=1, structural=False),
        ),
    )


def test_a_list_within_the_bound_is_whole_and_says_nothing(engine: Engine) -> None:
    got = engine.analyze_json(strays(MAX_WARNINGS), include=["warnings"])
    assert len(got["warnings"]) == MAX_WARNINGS
    assert "warningsCut" not in got


def test_a_write_delta_lists_at_most_the_bound_each_way(engine: Engine) -> None:
    text = unknown_deps(MANY)  # content warnings: written and reported
    _, added = run(engine, {"text": text})
    delta = added["warnings"]
    assert len(delta["added"]) == MAX_WARNINGS
    assert delta["addedCut"] == {"listed": MAX_WARNINGS, "total": MANY}
    assert delta["added"][0]["id"] == "m0" and delta["added"][-1]["id"] == f"m{MAX_WARNINGS - 1}"
    assert delta["remaining"] == 0 and delta["removed"] == [] and "removedCut" not in delta
    _, back = run(engine, {"text": PLAN}, text=text)
    assert back["warnings"]["removedCut"] == {"listed": MAX_WARNINGS, "total": MANY}
    assert len(back["warnings"]["removed"]) == MAX_WARNINGS and "addedCut" not in back["warnings"]


def test_a_blocked_write_lists_at_most_the_bound_and_counts_all(engine: Engine) -> None:
    store = MemoryStore({"p": PLAN})
    request = WriteRequest("p", Base(checksum(PLAN)), "write", {"text": strays(MANY)})
    with pytest.raises(Blocked) as info:
        write(engine, store, request)
    body = info.value.to_json()["error"]
    assert len(body["warnings"]) == MAX_WARNINGS
    assert body["warningsCut"] == {"listed": MAX_WARNINGS, "total": MANY}
    assert f"introduce {MANY} structural warning(s)" in body["message"]
    assert store.writes == 0


def test_the_guard_sees_a_structural_warning_behind_the_cut(engine: Engine) -> None:
    """More content warnings than are listed come first; the stray line after them still
    blocks: the guard decides on every warning, the cut is only for what is listed."""
    text = unknown_deps(MANY) + "---\nstray\n"
    store = MemoryStore({"p": PLAN})
    with pytest.raises(Blocked) as info:
        write(engine, store, WriteRequest("p", Base(checksum(PLAN)), "write", {"text": text}))
    body = info.value.to_json()["error"]
    assert [w["type"] for w in body["warnings"]] == ["descStray"]
    assert "warningsCut" not in body
    _, written = run(engine, {"text": text}, allow_warnings=True)
    assert written["warnings"]["addedCut"] == {"listed": MAX_WARNINGS, "total": MANY + 1}


def test_newly_prod_nodes_are_listed_to_the_bound(engine: Engine) -> None:
    text = PLAN + "".join(f"  - [^] #p{i}: P (S)\n" for i in range(MAX_WARNINGS + 1))
    store = MemoryStore({"p": PLAN})
    with pytest.raises(Blocked) as info:
        write(engine, store, WriteRequest("p", Base(checksum(PLAN)), "write", {"text": text}))
    body = info.value.to_json()["error"]
    assert body["flag"] == "allowProd"
    assert len(body["nodes"]) == MAX_WARNINGS
    assert body["nodesCut"] == {"listed": MAX_WARNINGS, "total": MAX_WARNINGS + 1}
    assert body["message"].count("#p") == MAX_WARNINGS and "and 1 more" in body["message"]


def test_an_answer_over_the_backstop_is_too_large_and_says_how_to_narrow(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind the per-list cuts, the whole inspect answer has a bound too (here lowered
    below the reference plan's ~75 KB answer, which is far under the real one)."""
    inspect = next(t for t in CATALOGUE if t.name == "werkbaum_inspect")
    services = Services(engine=engine, sources=OneStore(MemoryStore()))
    args = {"text": REFERENCE_PLAN.read_text(encoding="utf-8")}
    assert "tree" in inspect.call(services, args, Caller()).data
    monkeypatch.setattr(schemas, "MAX_ANSWER_CHARS", 10_000)
    with pytest.raises(TooLarge) as info:
        inspect.call(services, args, Caller())
    body = info.value.to_json()["error"]
    assert body["limit"] == 10_000 and body["size"] > 10_000
    assert "narrow it with include, id, depth, hideDone or hideDesc" in body["message"]
    assert inspect.call(services, {**args, "include": ["warnings"]}, Caller()).data == {
        "warnings": []
    }


def test_the_backstop_counts_the_answer_as_sent_both_copies_escaped(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 23: the JSON goes out as structured content and again as an escaped JSON
    string; a bound on the JSON alone let 51.9 MB through a "24,000,000" limit."""
    inspect = next(t for t in CATALOGUE if t.name == "werkbaum_inspect")
    services = Services(engine=engine, sources=OneStore(MemoryStore()))
    args = {"text": REFERENCE_PLAN.read_text(encoding="utf-8")}
    analysis = engine.analysis_text(args["text"])
    sent = len(analysis) + len(json.dumps(analysis, ensure_ascii=False))
    monkeypatch.setattr(schemas, "MAX_ANSWER_CHARS", sent - 1)
    with pytest.raises(TooLarge) as info:
        inspect.call(services, args, Caller())
    assert info.value.to_json()["error"]["size"] == sent
    monkeypatch.setattr(schemas, "MAX_ANSWER_CHARS", sent)
    assert "tree" in inspect.call(services, args, Caller()).data


def test_columns_are_cut_too_unless_every_warning_is_asked(engine: Engine) -> None:
    """``werkbaum check`` and ``inspect``'s report (columns) list what the tools list; a
    program that asks for ``every_warning`` gets them all."""
    cut = engine.analyze(strays(MANY), include=["warnings"], view=View(columns=True))
    rest = (Unlisted(type="descStray", count=MANY - MAX_WARNINGS, structural=True),)
    assert cut.warnings_cut == WarningsCut(listed=MAX_WARNINGS, total=MANY, unlisted=rest)
    assert len(cut.warnings or ()) == MAX_WARNINGS
    assert all(w.fields.get("column") == 1 for w in cut.warnings or ())
    every = View(columns=True, every_warning=True)
    whole = engine.analyze(strays(MANY), include=["warnings"], view=every)
    assert (len(whole.warnings or ()), whole.warnings_cut) == (MANY, None)
