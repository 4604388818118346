"""Conflicts say what changed (issue 14, item 4): the new base, a bounded diff from the
agent's base text, and the whole current text only when it is short or no diff can be
computed — on every executor, over an in-memory store that keeps no history (like files)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import REFERENCE_PLAN
from werkbaum_core import Conflict, Engine, checksum
from werkbaum_core.lru import memory_of
from werkbaum_core.rules.conflicts import MAX_CONFLICT_TEXT, RecentTexts, explained
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.stores import Base, MemoryStore, Snapshot
from werkbaum_core.stores.protocol import Op

REFERENCE = REFERENCE_PLAN.read_text(encoding="utf-8")
SHORT = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n  - [ ] #b: B (M)\n"


def snapshot(text: str) -> Snapshot:
    return Snapshot(text, Base(checksum(text)))


def conflict_of(
    engine: Engine,
    base_text: str,
    current_text: str,
    recent: RecentTexts | None,
    args: dict[str, Any] | None = None,
) -> dict[str, Any]:
    store = MemoryStore({"p": current_text})
    request = WriteRequest(
        "p", Base(checksum(base_text)), "setStatus", args or {"id": "a", "status": "x"}
    )
    with pytest.raises(Conflict) as info:
        write(engine, store, request, recent=recent)
    assert store.writes == 0
    return info.value.to_json()["error"]


def change_lines(diff: str) -> list[str]:
    return [line for line in diff.split("\n")[2:] if line[:1] in "+-"]


def test_a_short_plan_comes_with_base_diff_and_text(engine: Engine) -> None:
    recent = RecentTexts()
    recent.remember("p", snapshot(SHORT))
    changed = SHORT.replace("(M)", "(L)")
    error = conflict_of(engine, SHORT, changed, recent)
    assert error["code"] == "conflict"
    assert error["current"] == {
        "base": {"version": None, "checksum": checksum(changed)},
        "diff": error["current"]["diff"],
        "text": changed,
    }
    assert change_lines(error["current"]["diff"]) == ["-  - [ ] #b: B (M)", "+  - [ ] #b: B (L)"]
    assert "current.diff" in error["message"]


def test_a_long_plan_comes_with_base_and_diff_only(engine: Engine) -> None:
    recent = RecentTexts()
    recent.remember("p", snapshot(REFERENCE))
    changed = REFERENCE.replace("#not.ticket: Ticket", "#not.ticket: Tickets")
    error = conflict_of(engine, REFERENCE, changed, recent, {"id": "ed.path.worth", "status": "~"})
    current = error["current"]
    assert set(current) == {"base", "diff"} and len(changed) > MAX_CONFLICT_TEXT
    assert [line[:1] for line in change_lines(current["diff"])] == ["-", "+"]
    # What the agent pays: the whole error body, ~0.15 % of the 67 KB plan.
    assert len(json.dumps(error, ensure_ascii=False)) < 1_000


def test_an_unknown_base_text_gives_the_whole_current_text(engine: Engine) -> None:
    changed = REFERENCE.replace("(M)", "(L)", 1)
    error = conflict_of(engine, REFERENCE, changed, recent=None)
    assert error["current"] == {
        "base": {"version": None, "checksum": checksum(changed)},
        "text": changed,
    }
    assert "whole current text" in error["message"]


def test_a_long_diff_is_cut_and_says_so(engine: Engine) -> None:
    recent = RecentTexts()
    recent.remember("p", snapshot(REFERENCE))
    changed = REFERENCE.replace("(S)", "(XS)")
    current = conflict_of(engine, REFERENCE, changed, recent)["current"]
    assert current["diffCut"] is True and "text" not in current
    assert current["diff"].split("\n")[-1].endswith("more diff lines")
    assert len(current["diff"]) <= 8_100


def test_the_retry_after_a_conflict_knows_its_base(engine: Engine) -> None:
    """The agent retries on the conflict's base; a second change meanwhile still gets a diff."""
    recent = RecentTexts()
    recent.remember("p", snapshot(REFERENCE))
    first = REFERENCE.replace("(M)", "(L)", 1)
    error = conflict_of(engine, REFERENCE, first, recent)
    assert error["current"]["base"]["checksum"] == checksum(first)
    second = first.replace("(S)", "(M)", 1)
    again = conflict_of(engine, first, second, recent)
    assert set(again["current"]) == {"base", "diff"}


NO_IDS = "[ ] Move house\n  - [ ] Find a flat\n  - [ ] Pack\n    - [ ] Books (S)\n"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"id": "L4", "status": "x"}, "L4"),
        ({"parent": "L3", "line": "- [ ] Kitchen (S)", "after": "L4"}, "L3, L4"),
    ],
)
def test_a_conflict_of_a_call_by_line_refs_says_to_take_them_anew(
    engine: Engine, args: dict[str, str], named: str
) -> None:
    """The retry the message asks for must not reuse a ref: a line added above (here by a
    person) moves the node, and L4 of the current text is another one (round 25 H1)."""
    recent = RecentTexts()
    recent.remember("p", snapshot(NO_IDS))
    changed = NO_IDS.replace("  - [ ] Pack\n", "  - [ ] Budget (S)\n  - [ ] Pack\n")
    verb = "setStatus" if "status" in args else "addNode"
    store = MemoryStore({"p": changed})
    with pytest.raises(Conflict) as info:
        write(engine, store, WriteRequest("p", Base(checksum(NO_IDS)), verb, args), recent=recent)
    message = info.value.message
    assert f"Apply your change again with current.base, but not with {named}: " in message
    assert "take the node's ref from the current text" in message


def test_a_conflict_of_a_call_by_ids_has_no_word_on_line_refs(engine: Engine) -> None:
    recent = RecentTexts()
    recent.remember("p", snapshot(SHORT))
    error = conflict_of(engine, SHORT, SHORT.replace("(M)", "(L)"), recent)
    assert error["message"].endswith("Apply your change again with current.base.")


class _Racing(MemoryStore):
    """A store whose file changes between the read of the base and the write."""

    def write(
        self, source: str, base: Base, ops: list[Op], new_text: str, *, author: str = "Agent"
    ) -> Snapshot:
        self._plans[source] = self._plans[source].replace("(M)", "(L)")
        return super().write(source, base, ops, new_text, author=author)


def test_a_conflict_in_the_store_step_diffs_against_the_planned_base(engine: Engine) -> None:
    store = _Racing({"p": SHORT})
    request = WriteRequest("p", Base(checksum(SHORT)), "setStatus", {"id": "a", "status": "x"})
    with pytest.raises(Conflict) as info:
        write(engine, store, request)  # no remembered texts: the pipeline knows its base
    current = info.value.to_json()["error"]["current"]
    assert change_lines(current["diff"]) == ["-  - [ ] #b: B (M)", "+  - [ ] #b: B (L)"]


def test_recent_texts_are_bounded_by_entries_and_by_memory() -> None:
    recent = RecentTexts(entries=2, max_bytes=2 * memory_of("a" * 10))
    texts = ["a" * 10, "b" * 10, "c" * 10]
    for text in texts:
        recent.remember("p", snapshot(text))
    assert recent.text("p", checksum(texts[0])) is None
    assert recent.text("p", checksum(texts[2])) == texts[2]
    assert recent.text("q", checksum(texts[2])) is None  # by source, not only by checksum
    # Twice as long, but a character beyond U+FFFF makes CPython keep it at 4 bytes each:
    # over the bound alone (round 25 soak F3: counted in characters it was "small").
    wide = "\U0001f600" * 20
    recent.remember("p", snapshot(wide))
    assert recent.text("p", checksum(wide)) is None
    assert recent.text("p", checksum(texts[2])) == texts[2]


def test_explained_leaves_other_details_alone() -> None:
    error = Conflict(
        "x changed",
        source="x",
        reason="the checksum does not match that version",
        current={"text": SHORT, "base": {"version": 3, "checksum": checksum(SHORT)}},
    )
    body = explained(error, None, "x").to_json()["error"]
    assert body["reason"] == error.details["reason"] and body["source"] == "x"
    assert body["current"] == {"base": {"version": 3, "checksum": checksum(SHORT)}, "text": SHORT}
