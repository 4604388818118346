"""The document store against the stand-in backend over real HTTP: reads, writes, identity,
merges and conflicts, base texts from the cache and the history, and every error mapping."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.backend import AdjustableClock, Backend, BackendConfig, running_backend
from tests.backend.human import Human
from tests.documents.conftest import Recording
from werkbaum_core import Conflict, ForbiddenSource, InvalidArgument, SourceUnavailable, checksum
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_core.stores.protocol import Base, Snapshot

PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n  - [ ] #b: B (M)\n  - [ ] #c: C (S)\n  - [x] #d: D (S)"


def ins(index: int, *lines: str) -> dict[str, Any]:
    return {"op": "insert", "index": index, "lines": list(lines)}


def rep(index: int, count: int, *lines: str) -> dict[str, Any]:
    return {"op": "replace", "index": index, "count": count, "lines": list(lines)}


def doc_url(backend: Backend, doc_id: str) -> str:
    return f"{backend.base_url}/api/v1/documents/{doc_id}"


def conflict_current(info: pytest.ExceptionInfo[Conflict]) -> dict[str, Any]:
    current: dict[str, Any] = info.value.to_json()["error"]["current"]
    return current


def assert_is_server_state(snapshot: Snapshot, human: Human, doc_id: str) -> None:
    doc = human.get(doc_id)
    assert snapshot.text == doc["content"]
    assert snapshot.base == Base(checksum(doc["content"]), doc["version"])


class Bodies(httpx.BaseTransport):
    """A real transport that keeps the JSON bodies of PATCH requests (to check seq and names)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.patches: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH":
            self.patches.append(json.loads(request.content))
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


# -- reading -------------------------------------------------------------------------------


def test_url_share_links_and_bare_uuid_give_the_same_snapshot(
    backend: Backend, human: Human, store: DocumentStore
) -> None:
    doc_id = human.create(PLAN)
    url = doc_url(backend, doc_id)
    sources = [
        url,
        f"http://localhost:8137/?live={url}",
        f"http://localhost:8137/?live={quote(url, safe='')}",
        doc_id,
    ]
    snapshots = {store.read(source) for source in sources}
    assert snapshots == {Snapshot(PLAN, Base(checksum(PLAN), 1))}
    assert store.read_titled(doc_id)[1] == "Plan"


def test_crlf_content_is_read_as_lf_and_can_be_written(human: Human, store: DocumentStore) -> None:
    doc_id = human.create("a\r\nb\r\nc")  # POST stores it verbatim (documents-api §4.4)
    snapshot = store.read(doc_id)
    assert snapshot.text == "a\nb\nc"
    stored = store.write(doc_id, snapshot.base, [rep(1, 1, "B")], "a\nB\nc")
    assert stored.text == "a\nB\nc"
    assert_is_server_state(stored, human, doc_id)


def test_backend_under_a_sub_path() -> None:
    with running_backend(BackendConfig(prefix="/werkbaum")) as sub:
        person = Human(sub)
        doc_id = person.create(PLAN)
        with DocumentStore([sub.base_url]) as store:
            assert store.read(doc_id) == store.read(doc_url(sub, doc_id))
            assert store.read(doc_id).text == PLAN
        person.http.close()


def test_remote_policy_refuses_other_hosts_and_accepts_configured_ones(
    backend: Backend, human: Human
) -> None:
    doc_id = human.create(PLAN)
    url = doc_url(backend, doc_id)
    other = url.replace("127.0.0.1", "localhost")  # the same socket, but not a configured name
    with running_backend() as second:
        foreign_id = Human(second).create("foreign")
        foreign = doc_url(second, foreign_id)
        with DocumentStore([backend.base_url], allow_any_host=False) as remote:
            assert remote.read(url).text == PLAN
            assert remote.read(doc_id).text == PLAN
            for refused in (foreign, other, f"http://127.0.0.1:1/?live={foreign}"):
                with pytest.raises(ForbiddenSource):
                    remote.read(refused)
        with DocumentStore([backend.base_url, second.base_url], allow_any_host=False) as both:
            assert both.read(foreign).text == "foreign"
        with DocumentStore([backend.base_url]) as local:  # the stdio server: any host
            assert local.read(foreign).text == "foreign"
            assert local.read(other).text == PLAN


def test_probe(backend: Backend) -> None:
    with DocumentStore([backend.base_url, backend.base_url + "/"]) as store:
        store.probe()
    with DocumentStore([backend.base_url, backend.base_url + "/nothing"]) as store:
        with pytest.raises(SourceUnavailable) as info:
            store.probe()
        assert info.value.details["server"] == backend.base_url + "/nothing"
        assert info.value.details["status"] == 404


# -- writing, identity ------------------------------------------------------------------------


def test_write_appears_in_history_with_the_agents_name(human: Human, backend: Backend) -> None:
    doc_id = human.create(PLAN)
    with DocumentStore([backend.base_url]) as store:
        snapshot = store.read(doc_id)
        new_text = PLAN.replace("[ ] #a", "[x] #a")
        stored = store.write(
            doc_id, snapshot.base, [rep(1, 1, "  - [x] #a: A (S)")], new_text, author="Claude Code"
        )
        assert stored == Snapshot(new_text, Base(checksum(new_text), 2))
        assert_is_server_state(stored, human, doc_id)
        latest = human.history(doc_id)[-1]
        assert latest["version"] == 2
        assert latest["displayName"] == "Claude Code"
        assert latest["clientId"] == store.client_id and store.client_id.startswith("mcp-")
        # the store keeps the short fields of each entry, never the texts
        fields = ("version", "changeType", "displayName", "clientId", "timestamp")
        assert store.history(doc_id) == [
            {key: entry[key] for key in fields} for entry in human.history(doc_id)
        ]


def test_seq_increases_per_store_and_names_are_clipped(backend: Backend, human: Human) -> None:
    one, two = human.create("x"), human.create("y")
    bodies = Bodies()
    with DocumentStore([backend.base_url], transport=bodies) as store:
        for doc_id, line in ((one, "x1"), (two, "y1"), (one, "x2")):
            snapshot = store.read(doc_id)
            store.write(
                doc_id,
                snapshot.base,
                [ins(snapshot.lines, line)],
                snapshot.text + "\n" + line,
                author="N" * 70 + "😀",
            )
    assert [b["seq"] for b in bodies.patches] == [1, 2, 3]
    assert {b["clientId"] for b in bodies.patches} == {store.client_id}
    assert bodies.patches[0]["displayName"] == "N" * 64
    assert set(bodies.patches[0]) == {
        "baseVersion",
        "checksum",
        "clientId",
        "seq",
        "displayName",
        "ops",
    }
    assert human.get(one)["content"] == "x\nx1\nx2"
    # an emoji is two UTF-16 units: it is dropped rather than cut in half
    with DocumentStore([backend.base_url], transport=(bodies := Bodies())) as store:
        snapshot = store.read(one)
        store.write(
            one, snapshot.base, [ins(0, "z")], "z\n" + snapshot.text, author="A" * 63 + "😀"
        )
    assert bodies.patches[0]["displayName"] == "A" * 63


def test_concurrent_writes_through_one_store(human: Human, store: DocumentStore) -> None:
    """Eight threads write on the same base: seqs reach the backend in order, all merge."""
    doc_id = human.create("top\nbottom")
    base = store.read(doc_id).base
    errors: list[BaseException] = []

    def agent(n: int) -> None:
        try:
            store.write(doc_id, base, [ins(1, f"line {n}")], f"top\nline {n}\nbottom")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    lines = human.get(doc_id)["content"].split("\n")
    assert lines[0] == "top" and lines[-1] == "bottom"
    assert sorted(lines[1:-1]) == [f"line {n}" for n in range(8)]


def test_no_per_document_lock_outlives_its_writes(human: Human, store: DocumentStore) -> None:
    """A server writes thousands of documents in its life: it kept a lock for each, for good
    (round 25 soak F4: +9.8 MB and 40,000 collector-tracked objects at 40,000 documents)."""
    for n in range(20):
        doc_id = human.create(f"plan {n}")
        store.write(doc_id, store.read(doc_id).base, [ins(1, "more")], f"plan {n}\nmore")
    assert store._doc_locks == {}  # what the store holds between writes


# -- stale bases: merge or conflict --------------------------------------------------------


def test_non_overlapping_concurrent_edit_is_merged(human: Human, store: DocumentStore) -> None:
    doc_id = human.create(PLAN)
    base = store.read(doc_id).base
    human.patch(doc_id, [rep(1, 1, "  - [~] #a: A (S) @anna")])
    agent_text = PLAN.replace("  - [x] #d: D (S)", "  - [x] #d: D (S)\n  - [ ] #e: E (XS)")
    stored = store.write(doc_id, base, [ins(5, "  - [ ] #e: E (XS)")], agent_text)
    assert "  - [~] #a: A (S) @anna" in stored.text and "#e: E (XS)" in stored.text
    assert stored.base.version == 3
    assert_is_server_state(stored, human, doc_id)


def test_overlapping_concurrent_edit_is_a_conflict_and_overwrites_nothing(
    human: Human, store: DocumentStore
) -> None:
    doc_id = human.create(PLAN)
    base = store.read(doc_id).base
    human.patch(doc_id, [rep(2, 1, "  - [x] #b: B (M) done by Anna")])
    before = human.get(doc_id)
    with pytest.raises(Conflict) as info:
        store.write(
            doc_id, base, [rep(2, 1, "  - [~] #b: B (M)")], PLAN.replace("[ ] #b", "[~] #b")
        )
    current = conflict_current(info)
    assert "  - [x] #b: B (M) done by Anna" in current["text"]
    assert current["text"] == before["content"]
    assert current["base"] == {
        "version": before["version"],
        "checksum": checksum(before["content"]),
    }
    assert human.get(doc_id) == before
    assert info.value.to_json()["error"]["code"] == "conflict"


def test_conflict_without_a_known_base_re_reads(human: Human, backend: Backend) -> None:
    """A store that never saw the base cannot rebuild the current text; it asks the backend."""
    doc_id = human.create(PLAN)
    base = Base(checksum(PLAN), 1)
    human.patch(doc_id, [rep(2, 1, "  - [x] #b: B (M)")])
    with DocumentStore([backend.base_url]) as fresh, pytest.raises(Conflict) as info:
        fresh.write(doc_id, base, [rep(2, 1, "  - [~] #b: B (M)")], PLAN)
    assert conflict_current(info)["text"] == human.get(doc_id)["content"]


# -- base texts -------------------------------------------------------------------------------


def test_base_text_current(human: Human, store: DocumentStore) -> None:
    doc_id = human.create(PLAN)
    snapshot = store.read(doc_id)
    assert store.base_text(doc_id, snapshot.base) == (PLAN, snapshot)


def test_base_text_of_an_older_version_comes_from_the_cache(human: Human, backend: Backend) -> None:
    doc_id = human.create(PLAN)
    recording = Recording()
    with DocumentStore([backend.base_url], transport=recording) as store:
        base = store.read(doc_id).base
        human.patch(doc_id, [rep(1, 1, "  - [x] #a: A (S)")])
        text, current = store.base_text(doc_id, base)
    assert text == PLAN
    assert current.base.version == 2 and current.text == human.get(doc_id)["content"]
    assert not any(path.endswith("/history") for _, path in recording.calls)


def test_base_text_from_history_for_a_store_that_never_read_it(
    human: Human, backend: Backend
) -> None:
    doc_id = human.create(PLAN)  # version 1 is CREATED: a milestone, kept in GET /history
    human.patch(doc_id, [rep(1, 1, "  - [x] #a: A (S)")])
    human.patch(doc_id, [rep(2, 1, "  - [x] #b: B (M)")])
    recording = Recording()
    with DocumentStore([backend.base_url], transport=recording) as fresh:
        text, current = fresh.base_text(doc_id, Base(checksum(PLAN), 1))
        assert text == PLAN and current.base.version == 3
        assert ("GET", f"/api/v1/documents/{doc_id}/history") in recording.calls
        calls = len(recording.calls)
        fresh.base_text(doc_id, Base(checksum(PLAN), 1))  # now it is cached
        assert len(recording.calls) == calls + 1  # only the GET of the current version


def test_sync_version_missing_from_history_is_a_conflict_until_promoted(
    human: Human, backend: Backend
) -> None:
    """GET /history holds milestones plus the latest entry only (documents-api §2.10)."""
    doc_id = human.create(PLAN)
    v2 = human.patch(doc_id, [rep(1, 1, "  - [x] #a: A (S)")])  # a sync version
    v2_text = human.get(doc_id)["content"]
    human.patch(doc_id, [rep(2, 1, "  - [x] #b: B (M)")])
    base = Base(checksum(v2_text), v2)
    with DocumentStore([backend.base_url]) as fresh:
        with pytest.raises(Conflict) as info:
            fresh.base_text(doc_id, base)
        assert conflict_current(info)["base"]["version"] == 3
        assert "not available" in info.value.details["reason"]
    # after a pause of 30 s the next write promotes version 3, not version 2
    assert isinstance(backend.clock, AdjustableClock)
    backend.clock.advance(timedelta(seconds=31))
    human.patch(doc_id, [rep(3, 1, "  - [x] #c: C (S)")])
    with DocumentStore([backend.base_url]) as fresh, pytest.raises(Conflict):
        fresh.base_text(doc_id, base)
    v3_text = human.history(doc_id)[-2]["content"]
    with DocumentStore([backend.base_url]) as fresh:
        assert fresh.base_text(doc_id, Base(checksum(v3_text), 3))[0] == v3_text


@pytest.mark.parametrize(
    ("base", "reason"),
    [
        (Base(checksum(PLAN), 7), "newer"),
        (Base(checksum("something else"), 1), "checksum"),
        (Base(checksum(PLAN), None), "version"),
    ],
)
def test_impossible_bases_are_conflicts(
    human: Human, store: DocumentStore, base: Base, reason: str
) -> None:
    doc_id = human.create(PLAN)
    with pytest.raises(Conflict) as info:
        store.base_text(doc_id, base)
    assert reason in info.value.details["reason"]
    assert conflict_current(info) == {
        "text": PLAN,
        "base": {"version": 1, "checksum": checksum(PLAN)},
    }


def test_older_base_with_a_wrong_checksum_is_a_conflict(human: Human, store: DocumentStore) -> None:
    doc_id = human.create(PLAN)
    store.read(doc_id)
    human.patch(doc_id, [rep(0, 1, "[ ] #plan: Renamed")])
    with pytest.raises(Conflict):
        store.base_text(doc_id, Base(checksum("not version 1"), 1))


# -- refusals and failures ----------------------------------------------------------------------


def test_unknown_document_is_unavailable(store: DocumentStore) -> None:
    with pytest.raises(SourceUnavailable) as info:
        store.read(str(uuid.uuid4()))
    error = info.value.to_json()["error"]
    assert error["code"] == "source_unavailable"
    assert error["status"] == 404 and error["title"] == "Dokument nicht gefunden"


def test_writing_to_a_deleted_document_is_unavailable(human: Human, store: DocumentStore) -> None:
    doc_id = human.create(PLAN)
    base = store.read(doc_id).base
    human.delete(doc_id)
    with pytest.raises(SourceUnavailable) as info:
        store.write(doc_id, base, [ins(0, "x")], "x\n" + PLAN)
    assert info.value.details["status"] == 404
    assert info.value.details["title"] == "Dokument gelöscht"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_dead_backend_is_unavailable_quickly() -> None:
    server = f"http://127.0.0.1:{closed_port()}"
    doc_id = str(uuid.uuid4())
    with DocumentStore([server], timeout=2) as store:
        for call in (
            lambda: store.read(doc_id),
            lambda: store.write(doc_id, Base(checksum("a"), 1), [ins(0, "x")], "x\na"),
            store.probe,
        ):
            started = time.monotonic()
            with pytest.raises(SourceUnavailable) as info:
                call()
            assert time.monotonic() - started < 5
            assert "cannot be reached" in info.value.message


def test_unapplicable_ops_on_an_unchanged_document_are_reported(
    human: Human, store: DocumentStore
) -> None:
    doc_id = human.create("one\ntwo")
    base = store.read(doc_id).base
    with pytest.raises(SourceUnavailable) as info:
        store.write(doc_id, base, [{"op": "delete", "index": 5, "count": 1}], "one\ntwo")
    assert info.value.details["status"] == 422
    assert info.value.details["title"] == "Diff nicht anwendbar"
    assert human.get(doc_id)["version"] == 1


def test_compacted_base_is_a_conflict_after_one_re_read(human: Human, backend: Backend) -> None:
    """422 for a base the backend no longer stores: re-read once, report the current text."""
    doc_id = human.create(PLAN)
    human.patch(doc_id, [rep(1, 1, "  - [x] #a: A (S)")])  # v2, a sync version
    with DocumentStore([backend.base_url]) as store:
        base = store.read(doc_id).base  # the agent reads v2
        human.patch(doc_id, [rep(2, 1, "  - [x] #b: B (M)")])  # v3
        assert isinstance(backend.clock, AdjustableClock)
        backend.clock.advance(timedelta(minutes=6))
        human.patch(doc_id, [rep(3, 1, "  - [x] #c: C (S)")])  # v4: v3 promoted, v2 compacted
        with pytest.raises(Conflict) as info:
            store.write(doc_id, base, [ins(5, "  - [ ] #e: E (S)")], "irrelevant")
    current = conflict_current(info)
    assert current["base"]["version"] == 4 and current["text"] == human.get(doc_id)["content"]
    assert "nicht mehr gespeichert" in info.value.details["reason"]


def test_malformed_request_is_an_invalid_argument(human: Human, store: DocumentStore) -> None:
    doc_id = human.create("one\ntwo")
    base = store.read(doc_id).base
    with pytest.raises(InvalidArgument) as info:
        store.write(doc_id, base, [{"op": "delete", "index": 0}], "two")  # delete without count
    assert info.value.details["status"] == 400
    assert human.get(doc_id)["version"] == 1


def test_the_cache_is_bounded(human: Human, backend: Backend) -> None:
    first, second = human.create(PLAN), human.create("other")
    recording = Recording()
    with DocumentStore([backend.base_url], transport=recording, cache_size=1) as store:
        base = store.read(first).base
        store.read(second)  # pushes version 1 of the first document out
        human.patch(first, [rep(1, 1, "  - [x] #a: A (S)")])
        assert store.base_text(first, base)[0] == PLAN
    assert ("GET", f"/api/v1/documents/{first}/history") in recording.calls
