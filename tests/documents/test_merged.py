"""A merged document write says so (issue 14, item 4): its ``diff`` is the agent's own
change and ``merged`` shows the co-editor's change it was merged with; a conflict on a
document carries the diff from the agent's base — against the real backend stand-in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.backend.human import Human
from werkbaum_core import Conflict, Engine
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.stores.documents import DocumentStore

PLAN = """[ ] #plan: Plan
  - [ ] #a: A (S)
  - [ ] #b: B (M)
  - [x] #c: C (S)"""
HUMANS_LINE = "  - [x] #a: A (S) done by Anna"


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with Engine.create("dukpy") as eng:
        yield eng


def changes(diff: str) -> list[str]:
    return [line for line in diff.split("\n")[2:] if line[:1] in "+-"]


def stale_status_write(
    engine: Engine, human: Human, store: DocumentStore, **flags: Any
) -> tuple[str, dict[str, Any]]:
    doc_id = human.create(PLAN)
    base = store.read(doc_id).base
    human.patch(doc_id, [{"op": "replace", "index": 1, "count": 1, "lines": [HUMANS_LINE]}])
    request = WriteRequest(doc_id, base, "setStatus", {"id": "c", "status": "~"}, **flags)
    return doc_id, write(engine, store, request).to_json()


def test_a_merged_write_shows_its_own_diff_and_what_it_was_merged_with(
    engine: Engine, human: Human, store: DocumentStore
) -> None:
    doc_id, result = stale_status_write(engine, human, store)
    assert changes(result["diff"]) == ["-  - [x] #c: C (S)", "+  - [~] #c: C (S)"]
    assert changes(result["merged"]["diff"]) == ["-  - [ ] #a: A (S)", f"+{HUMANS_LINE}"]
    assert result["base"]["version"] == 3
    assert HUMANS_LINE in human.get(doc_id)["content"]


def test_a_merged_dry_run_says_the_same_and_writes_nothing(
    engine: Engine, human: Human, store: DocumentStore
) -> None:
    doc_id, preview = stale_status_write(engine, human, store, dry_run=True)
    assert preview["dryRun"] is True and human.get(doc_id)["version"] == 2
    assert changes(preview["diff"]) == ["-  - [x] #c: C (S)", "+  - [~] #c: C (S)"]
    assert changes(preview["merged"]["diff"]) == ["-  - [ ] #a: A (S)", f"+{HUMANS_LINE}"]


def test_a_write_on_the_current_base_says_nothing_about_merging(
    engine: Engine, human: Human, store: DocumentStore
) -> None:
    doc_id = human.create(PLAN)
    request = WriteRequest(doc_id, store.read(doc_id).base, "setSize", {"id": "a", "size": "M"})
    assert "merged" not in write(engine, store, request).to_json()


def test_a_document_conflict_carries_the_diff_from_the_base(
    engine: Engine, human: Human, store: DocumentStore
) -> None:
    doc_id = human.create(PLAN)
    base = store.read(doc_id).base
    human.patch(doc_id, [{"op": "replace", "index": 2, "count": 1, "lines": ["  - [x] #b: B"]}])
    request = WriteRequest(doc_id, base, "setStatus", {"id": "b", "status": "~"})
    with pytest.raises(Conflict) as info:
        write(engine, store, request)
    current = info.value.to_json()["error"]["current"]
    assert current["base"]["version"] == 2
    assert changes(current["diff"]) == ["-  - [ ] #b: B (M)", "+  - [x] #b: B"]
    assert current["text"] == human.get(doc_id)["content"]  # short: it comes whole too
