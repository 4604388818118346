"""The whole write pipeline (spec §6) over the document store and the stand-in backend."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.backend import Backend
from tests.backend.human import Human
from werkbaum_core import Blocked, Conflict, Engine, checksum
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_core.stores.protocol import Base

PLAN = """[ ] #plan: Plan
  - [ ] #a: A (S)
  - [ ] #b: B (M)
  - [x] #c: C (S)"""


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with Engine.create("dukpy") as eng:
        yield eng


def request(store: DocumentStore, doc_id: str, verb: str, args: dict[str, Any], **kw: Any) -> Any:
    return WriteRequest(doc_id, store.read(doc_id).base, verb, args, **kw)


def test_a_verb_writes_through_the_backend(
    engine: Engine, human: Human, store: DocumentStore
) -> None:
    doc_id = human.create(PLAN)
    req = request(store, doc_id, "setStatus", {"id": "a", "status": "x"}, author="Claude Code")
    result = write(engine, store, req).to_json()
    doc = human.get(doc_id)
    assert "  - [x] #a: A (S)" in doc["content"]
    assert result["base"] == {"version": 2, "checksum": checksum(doc["content"])}
    assert "findings" not in result
    assert human.history(doc_id)[-1]["displayName"] == "Claude Code"


def test_guard_blocks_prod_and_writes_nothing(
    engine: Engine, human: Human, store: DocumentStore
) -> None:
    doc_id = human.create(PLAN)
    with pytest.raises(Blocked):
        write(engine, store, request(store, doc_id, "setStatus", {"id": "a", "status": "^"}))
    text = PLAN.replace("[x] #c", "[^] #c")
    with pytest.raises(Blocked) as info:
        write(engine, store, request(store, doc_id, "write", {"text": text}))
    assert info.value.details["flag"] == "allowProd"
    assert human.get(doc_id)["version"] == 1 and len(human.history(doc_id)) == 1


def test_structural_warning_is_blocked_and_content_warning_written(
    engine: Engine, human: Human, store: DocumentStore
) -> None:
    doc_id = human.create(PLAN.replace("(M)", "(M)\n    - [ ] #b1: B1 (XS)"))
    mixed = {"parent": "b", "line": "| [ ] #b2: B2 (XS)"}
    with pytest.raises(Blocked):
        write(engine, store, request(store, doc_id, "addNode", mixed))
    assert human.get(doc_id)["version"] == 1
    oversized = {"parent": "b", "line": "- [ ] #b2: B2 (L)"}
    result = write(engine, store, request(store, doc_id, "addNode", oversized)).to_json()
    assert "sizeConflict" in [w["type"] for w in result["warnings"]["added"]]
    assert human.get(doc_id)["version"] == 2


def test_stale_base_is_merged_by_the_backend_and_reported_as_stored(
    engine: Engine, human: Human, store: DocumentStore
) -> None:
    doc_id = human.create(PLAN)
    req = request(store, doc_id, "setStatus", {"id": "c", "status": "~"})
    human.patch(doc_id, [{"op": "replace", "index": 1, "count": 1, "lines": ["  - [x] #a: A (S)"]}])
    result = write(engine, store, req).to_json()
    doc = human.get(doc_id)
    assert "  - [x] #a: A (S)" in doc["content"] and "  - [~] #c: C (S)" in doc["content"]
    assert result["base"] == {"version": 3, "checksum": checksum(doc["content"])}
    assert result["lines"] == doc["content"].count("\n") + 1
    assert "findings" not in result  # the backend stored exactly the guarded merge


def test_stale_base_overlapping_is_a_conflict(
    engine: Engine, human: Human, store: DocumentStore
) -> None:
    doc_id = human.create(PLAN)
    req = request(store, doc_id, "setStatus", {"id": "b", "status": "~"})
    human.patch(doc_id, [{"op": "replace", "index": 2, "count": 1, "lines": ["  - [x] #b: B (M)"]}])
    before = human.get(doc_id)
    with pytest.raises(Conflict) as info:
        write(engine, store, req)
    assert info.value.to_json()["error"]["current"]["text"] == before["content"]
    assert human.get(doc_id) == before


def test_guard_sees_the_merge(engine: Engine, human: Human, store: DocumentStore) -> None:
    """Each change alone is fine; merged they mix gates under #b, so nothing is written."""
    doc_id = human.create(PLAN)
    req = request(store, doc_id, "addNode", {"parent": "b", "line": "| [ ] #y: Y (XS)"})
    human.patch(doc_id, [{"op": "insert", "index": 3, "lines": ["    - [ ] #x: X (XS)"]}])
    before = human.get(doc_id)
    with pytest.raises(Blocked) as info:
        write(engine, store, req)
    assert "merg" in info.value.message
    assert human.get(doc_id) == before


def test_base_from_history_in_a_fresh_store(engine: Engine, human: Human, backend: Backend) -> None:
    """A second server process that never read version 1 still merges against it."""
    doc_id = human.create(PLAN)
    human.patch(doc_id, [{"op": "replace", "index": 1, "count": 1, "lines": ["  - [x] #a: A (S)"]}])
    with DocumentStore([backend.base_url]) as fresh:
        req = WriteRequest(doc_id, Base(checksum(PLAN), 1), "setStatus", {"id": "c", "status": "~"})
        result = write(engine, fresh, req).to_json()
    doc = human.get(doc_id)
    assert "  - [x] #a: A (S)" in doc["content"] and "  - [~] #c: C (S)" in doc["content"]
    assert result["base"]["version"] == 3


class HumanFirst(httpx.BaseTransport):
    """A co-editor whose edit reaches the backend just before the server's PATCH does:
    after the server's last read, so its guard rails never saw that edit."""

    def __init__(self, human: Human, doc_id: str, ops: list[dict[str, Any]]) -> None:
        self.inner = httpx.HTTPTransport()
        self.human, self.doc_id, self.ops = human, doc_id, ops

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH" and self.ops:
            self.human.patch(self.doc_id, self.ops)
            self.ops = []
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize(
    ("human_line", "breaks"),
    [("[ ] #dup: Anna's node", "duplicateId (line 5)"), ("%% Anna's note", None)],
    ids=["breaks-a-guard-rail", "harmless"],
)
def test_a_merge_the_guard_never_saw_is_reported_plainly(
    engine: Engine, human: Human, backend: Backend, human_line: str, breaks: str | None
) -> None:
    doc_id = human.create(PLAN)
    racing = HumanFirst(human, doc_id, [{"op": "insert", "index": 0, "lines": [human_line]}])
    with DocumentStore([backend.base_url], transport=racing) as store:
        add = {"parent": "b", "line": "- [ ] #dup: The agent's node (XS)"}
        result = write(engine, store, request(store, doc_id, "addNode", add)).to_json()
    [finding] = result["findings"]
    assert finding.startswith("the backend merged in a change made after this server's check")
    if breaks:
        assert f"it now has {breaks}, which this write would have been refused for" in finding
        assert "duplicateId" in [w["type"] for w in result["warnings"]["added"]]
    else:
        assert finding.endswith("it breaks none of them")
    assert human_line in human.get(doc_id)["content"]
