"""What documents-api.md requires of a stand-in beyond the 48 shared cases.

Compaction and promotion (§5.4), idempotency details (§5.5), restore rules
(§2.9), error shapes (§1, §2.6), the feed's clamp and wake-ups (§2.11, §6),
the security filter (§9), CORS, limits, and the ``python -m tests.backend``
entry point.  Each test drives a real server over HTTP.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.backend import AdjustableClock, Backend, BackendConfig, running_backend
from tests.backend.ops import checksum
from tests.backend.store import Store

REPO = Path(__file__).resolve().parents[2]
API = "/api/v1"
BASIC_OK = {"Authorization": "Basic d2Vya2JhdW06dGVzdC1nZWhlaW0="}  # werkbaum:test-geheim
BASIC_WRONG = {"Authorization": "Basic d2Vya2JhdW06ZmFsc2No"}  # werkbaum:falsch


@dataclasses.dataclass
class Server:
    backend: Backend
    http: httpx.Client

    @property
    def clock(self) -> AdjustableClock:
        assert isinstance(self.backend.clock, AdjustableClock)
        return self.backend.clock

    def create(self, content: str, title: str = "Plan") -> str:
        r = self.http.post(f"{API}/documents", json={"title": title, "content": content})
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    def doc(self, doc_id: str) -> dict[str, Any]:
        r = self.http.get(f"{API}/documents/{doc_id}")
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body

    def patch(
        self, doc_id: str, base: int, base_text: str, ops: list[dict[str, Any]], **extra: Any
    ) -> httpx.Response:
        body = {
            "baseVersion": base,
            "checksum": checksum(base_text),
            "clientId": "tester",
            "seq": extra.pop("seq", time.monotonic_ns()),
            "ops": ops,
            **extra,
        }
        return self.http.patch(f"{API}/documents/{doc_id}/content", json=body)


def _serve(config: BackendConfig) -> Iterator[Server]:
    with (
        running_backend(config) as backend,
        httpx.Client(base_url=backend.base_url, timeout=10) as http,
    ):
        yield Server(backend, http)


@pytest.fixture
def server() -> Iterator[Server]:
    yield from _serve(BackendConfig.test_profile())


def replace(index: int, *lines: str) -> dict[str, Any]:
    return {"op": "replace", "index": index, "count": 1, "lines": list(lines)}


# -- §5.4 two-level history ------------------------------------------------------------


def test_compaction_keeps_milestones_and_the_last_version_before_a_pause(server: Server) -> None:
    doc = server.create("a")
    texts = {1: "a"}
    for version, line in [(2, "b"), (3, "c"), (4, "d")]:
        r = server.patch(doc, version - 1, texts[version - 1], [replace(0, line)])
        assert r.status_code == 200 and r.json()["version"] == version, r.text
        texts[version] = line
        server.clock.advance(timedelta(seconds=10))  # below the 30 s pause: stay sync versions
    server.clock.advance(timedelta(minutes=6))
    r = server.patch(doc, 4, "d", [replace(0, "e")])  # promotes v4, then compacts v2 and v3
    assert r.status_code == 200, r.text

    history = server.http.get(f"{API}/documents/{doc}/history").json()
    assert [(h["version"], h["changeType"]) for h in history] == [
        (1, "CREATED"),
        (4, "UPDATED"),
        (5, "UPDATED"),
    ]
    stale = server.patch(doc, 2, "b", [replace(0, "x")])
    assert stale.status_code == 422, "a compacted base cannot be used"
    assert stale.json()["title"] == "Diff nicht anwendbar"
    full = server.http.get(f"{API}/documents/{doc}/changes", params={"since": 3, "wait": 0})
    assert full.json()["fromVersion"] is None and full.json()["content"] == "e"
    assert [e["version"] for e in full.json()["events"]] == [4, 5]
    diff = server.http.get(f"{API}/documents/{doc}/changes", params={"since": 4, "wait": 0})
    assert diff.json()["fromVersion"] == 4 and diff.json()["ops"] == [
        {"op": "replace", "index": 0, "count": 1, "lines": ["e"]}
    ]
    gone = server.http.post(f"{API}/documents/{doc}/restore", json={"version": 2})
    assert gone.status_code == 404


def test_milestone_patch_survives_compaction(server: Server) -> None:
    doc = server.create("a")
    assert server.patch(doc, 1, "a", [replace(0, "b")], milestone=True).status_code == 200
    assert server.patch(doc, 2, "b", [replace(0, "c")]).status_code == 200
    server.clock.advance(timedelta(minutes=6))
    assert server.patch(doc, 3, "c", [replace(0, "d")]).status_code == 200
    versions = [h["version"] for h in server.http.get(f"{API}/documents/{doc}/history").json()]
    assert versions == [1, 2, 3, 4]


# -- §5.5 idempotency ------------------------------------------------------------------


def test_replay_does_not_compare_the_body(server: Server) -> None:
    doc = server.create("a\nb")
    first = server.patch(doc, 1, "a\nb", [replace(0, "A")], seq=7)
    again = server.patch(doc, 1, "a\nb", [replace(1, "B")], seq=7)
    assert again.status_code == 200 and again.json() == first.json()
    assert server.doc(doc)["content"] == "A\nb"


def test_failures_are_not_remembered_and_seq_may_jump(server: Server) -> None:
    doc = server.create("a")
    bad = server.http.patch(
        f"{API}/documents/{doc}/content",
        json={"baseVersion": 1, "checksum": "sha256:00", "clientId": "c", "seq": 5, "ops": []},
    )
    assert bad.status_code == 422
    good = server.patch(doc, 1, "a", [replace(0, "b")], seq=5, clientId="c")
    assert good.status_code == 200 and good.json()["version"] == 2
    jump = server.patch(doc, 2, "b", [replace(0, "c")], seq=500, clientId="c")
    assert jump.status_code == 200 and jump.json()["version"] == 3


def test_replay_answers_even_after_delete(server: Server) -> None:
    doc = server.create("a")
    first = server.patch(doc, 1, "a", [replace(0, "b")], seq=1)
    assert server.http.delete(f"{API}/documents/{doc}").status_code == 204
    assert server.patch(doc, 1, "a", [replace(0, "b")], seq=1).json() == first.json()
    assert server.patch(doc, 1, "a", [replace(0, "b")], seq=0).status_code == 422
    assert server.patch(doc, 1, "a", [replace(0, "b")], seq=2).status_code == 404


# -- error shapes (§1, §2.6) -----------------------------------------------------------


def test_errors_are_german_problem_details(server: Server) -> None:
    missing = server.http.get(f"{API}/documents/00000000-0000-0000-0000-000000000001")
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.json()["title"] == "Dokument nicht gefunden"
    assert missing.json()["status"] == 404
    assert set(missing.json()) == {"type", "title", "status", "detail", "instance"}

    doc = server.create("a")
    server.http.delete(f"{API}/documents/{doc}")
    gone = server.patch(doc, 1, "a", [replace(0, "b")])
    assert gone.json()["title"] == "Dokument gelöscht"
    assert f"POST /api/v1/documents/{doc}/restore" in gone.json()["detail"]

    bad = server.http.post(f"{API}/documents", json={"title": "", "content": "x"})
    assert bad.status_code == 400 and bad.json()["title"] == "Ungültige Anfrage"
    assert server.http.get(f"{API}/documents/not-a-uuid").status_code == 400
    assert server.http.get(f"{API}/nowhere").status_code == 404
    wrong_method = server.http.post(f"{API}/info")
    assert wrong_method.status_code == 405 and "GET" in wrong_method.headers["allow"]


def test_content_conflict_is_plain_json(server: Server) -> None:
    doc = server.create("a\nb")
    server.patch(doc, 1, "a\nb", [replace(0, "x")])
    conflict = server.patch(doc, 1, "a\nb", [replace(0, "y")])
    assert conflict.status_code == 409
    assert conflict.headers["content-type"] == "application/json"
    assert conflict.json() == {
        "currentVersion": 2,
        "opsSinceBase": [{"op": "replace", "index": 0, "count": 1, "lines": ["x"]}],
    }


def test_patch_validation_order_and_limits() -> None:
    config = dataclasses.replace(BackendConfig.test_profile(), max_content_length=10)
    for server in _serve(config):
        doc = server.create("a")
        # 400 (schema) wins over 404 and 422: it is checked first.
        unknown = "00000000-0000-0000-0000-000000000002"
        r = server.http.patch(f"{API}/documents/{unknown}/content", json={"ops": []})
        assert r.status_code == 400
        too_long = server.patch(doc, 1, "a", [replace(0, "x" * 11)])
        assert too_long.status_code == 400
        negative = server.patch(doc, 1, "a", [{"op": "delete", "index": 0, "count": -1}])
        assert negative.status_code == 422
        assert server.doc(doc)["version"] == 1


def test_concurrent_writers_lose_nothing(server: Server) -> None:
    """Inserts from stale bases never conflict, so every one must land exactly once."""
    doc = server.create("ende")
    base = server.doc(doc)
    failures: list[str] = []

    def writer(name: str) -> None:
        with httpx.Client(base_url=server.backend.base_url, timeout=10) as own:
            for seq in range(10):
                body = {
                    "baseVersion": base["version"],
                    "checksum": checksum(base["content"]),
                    "clientId": name,
                    "seq": seq,
                    "ops": [{"op": "insert", "index": 0, "lines": [f"{name}-{seq}"]}],
                }
                r = own.patch(f"{API}/documents/{doc}/content", json=body)
                if r.status_code != 200:
                    failures.append(r.text)

    threads = [threading.Thread(target=writer, args=(f"w{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not failures
    final = server.doc(doc)
    assert final["version"] == 41
    assert sorted(final["content"].split("\n")) == sorted(
        ["ende"] + [f"w{k}-{seq}" for k in range(4) for seq in range(10)]
    )


# -- documents (§2.3-§2.9) -------------------------------------------------------------


def test_post_and_put_store_text_verbatim_and_put_ignores_expected_version(server: Server) -> None:
    doc = server.create("a\r\nb\r\n")
    assert server.doc(doc)["content"] == "a\r\nb\r\n"
    r = server.http.put(
        f"{API}/documents/{doc}", json={"title": "T", "content": "x\r\n", "expectedVersion": 99}
    )
    assert r.status_code == 200 and r.json()["version"] == 2 and r.json()["content"] == "x\r\n"


def test_restore_rules(server: Server) -> None:
    doc = server.create("eins", title="Alt")
    created = server.doc(doc)["createdAt"]
    server.http.put(f"{API}/documents/{doc}", json={"title": "Neu", "content": "zwei"})
    server.http.delete(f"{API}/documents/{doc}")  # v3 tombstone
    tomb = server.http.post(f"{API}/documents/{doc}/restore", json={"version": 3})
    assert tomb.status_code == 404, "the tombstone itself is no restore target"
    r = server.http.post(f"{API}/documents/{doc}/restore", json={"version": 1})
    assert r.status_code == 200
    assert (r.json()["version"], r.json()["title"], r.json()["content"]) == (4, "Alt", "eins")
    assert r.json()["createdAt"] == created
    no_body = server.http.post(f"{API}/documents/{doc}/restore")
    assert no_body.status_code == 409, "live document without a target version"
    events = server.http.get(f"{API}/documents/{doc}/history").json()
    assert [e["changeType"] for e in events] == ["CREATED", "UPDATED", "DELETED", "RESTORED"]


def test_rename_trims_and_has_no_author(server: Server) -> None:
    doc = server.create("a")
    r = server.http.patch(
        f"{API}/documents/{doc}/title", json={"title": "  Neu  ", "expectedVersion": 1}
    )
    assert r.status_code == 200 and r.json()["title"] == "Neu"
    last = server.http.get(f"{API}/documents/{doc}/history").json()[-1]
    assert last["changeType"] == "RENAMED" and last["clientId"] is None
    too_long = server.http.patch(
        f"{API}/documents/{doc}/title", json={"title": "x" * 256, "expectedVersion": 2}
    )
    assert too_long.status_code == 400


# -- the feed (§2.11, §6) --------------------------------------------------------------


@dataclasses.dataclass
class Poll:
    """A long poll running in its own thread and client."""

    thread: threading.Thread
    responses: list[httpx.Response]

    def result(self, timeout: float = 5) -> httpx.Response:
        self.thread.join(timeout)
        assert self.responses, "the long poll did not answer"
        return self.responses[0]


def poll_in_background(base_url: str, doc: str, since: int, wait: int, store: Store) -> Poll:
    responses: list[httpx.Response] = []

    def run() -> None:
        with httpx.Client(base_url=base_url, timeout=10) as own:
            params = {"since": since, "wait": wait}
            responses.append(own.get(f"{API}/documents/{doc}/changes", params=params))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    # Under load a fixed sleep is not enough: wait until the server holds the poll.
    deadline = time.monotonic() + 10
    while store.waiting == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    return Poll(thread, responses)


def test_feed_events_carry_a_title_only_for_renames(server: Server) -> None:
    doc = server.create("a")
    server.patch(doc, 1, "a", [replace(0, "b")], displayName="Anna")
    server.http.patch(f"{API}/documents/{doc}/title", json={"title": "Neu", "expectedVersion": 2})
    feed = server.http.get(f"{API}/documents/{doc}/changes", params={"since": 0, "wait": 0})
    assert [(e["changeType"], e["title"], e["displayName"]) for e in feed.json()["events"]] == [
        ("CREATED", None, None),
        ("UPDATED", None, "Anna"),
        ("RENAMED", "Neu", None),
    ]


def test_feed_wakes_on_delete(server: Server) -> None:
    doc = server.create("a")
    poll = poll_in_background(
        server.backend.base_url, doc, since=1, wait=5, store=server.backend.store
    )
    started = time.monotonic()
    server.http.delete(f"{API}/documents/{doc}")
    answer = poll.result()
    assert time.monotonic() - started < 5
    assert answer.status_code == 200
    assert [e["changeType"] for e in answer.json()["events"]] == ["DELETED"]


def test_feed_wait_is_clamped_to_max_wait() -> None:
    config = dataclasses.replace(BackendConfig.test_profile(), max_wait=timedelta(seconds=1))
    for server in _serve(config):
        doc = server.create("a")
        started = time.monotonic()
        r = server.http.get(f"{API}/documents/{doc}/changes", params={"since": 1, "wait": 25})
        assert r.status_code == 204 and r.headers["cache-control"] == "no-store"
        assert 0.9 < time.monotonic() - started < 6
        assert server.http.get(f"{API}/documents/{doc}/changes").status_code == 400  # no since


def test_feed_ahead_of_history_waits_then_204(server: Server) -> None:
    doc = server.create("a")
    r = server.http.get(f"{API}/documents/{doc}/changes", params={"since": 9, "wait": 0})
    assert r.status_code == 204


def test_stop_releases_waiting_polls() -> None:
    with running_backend(BackendConfig.test_profile()) as backend:
        with httpx.Client(base_url=backend.base_url) as http:
            doc = http.post(f"{API}/documents", json={"title": "T", "content": "a"}).json()["id"]
        poll = poll_in_background(backend.base_url, doc, since=1, wait=5, store=backend.store)
        started = time.monotonic()
    assert poll.result().status_code == 204
    assert time.monotonic() - started < 5


# -- security filter (§9) and CORS -----------------------------------------------------


def test_lockout_covers_every_path_with_an_authorization_header(server: Server) -> None:
    doc = server.create("a")
    assert server.http.get(f"{API}/info", headers=BASIC_WRONG).status_code == 401
    assert server.http.get(f"{API}/documents", headers=BASIC_WRONG).status_code == 401
    assert server.http.get(f"{API}/documents/{doc}", headers=BASIC_WRONG).status_code == 401
    locked = server.http.get(f"{API}/info", headers=BASIC_OK)
    assert locked.status_code == 429 and int(locked.headers["retry-after"]) in (1, 2)
    assert server.http.get(f"{API}/documents/{doc}").status_code == 200, "no header, no lockout"
    server.clock.advance(timedelta(seconds=3))
    listing = server.http.get(f"{API}/documents", headers=BASIC_OK)
    assert listing.status_code == 200 and [d["id"] for d in listing.json()] == [doc]


def test_a_success_resets_the_failure_counter(server: Server) -> None:
    for _ in range(2):
        assert server.http.get(f"{API}/documents", headers=BASIC_WRONG).status_code == 401
    assert server.http.get(f"{API}/documents", headers=BASIC_OK).status_code == 200
    for _ in range(2):
        assert server.http.get(f"{API}/documents", headers=BASIC_WRONG).status_code == 401
    assert server.http.get(f"{API}/documents", headers=BASIC_OK).status_code == 200


def test_cors(server: Server) -> None:
    pre = server.http.options(
        f"{API}/documents",
        headers={
            "Origin": "https://editor.example",
            "Access-Control-Request-Method": "PATCH",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    assert pre.status_code == 200
    assert pre.headers["access-control-allow-origin"] == "*"
    assert "PATCH" in pre.headers["access-control-allow-methods"]
    plain = server.http.get(f"{API}/info", headers={"Origin": "https://editor.example"})
    assert plain.headers["access-control-allow-origin"] == "*"


def test_taiga_proxy_is_unconfigured(server: Server) -> None:
    assert server.http.get(f"{API}/taiga/projects").status_code == 503


def test_prefix() -> None:
    for server in _serve(dataclasses.replace(BackendConfig.test_profile(), prefix="/werkbaum")):
        assert server.backend.base_url.endswith("/werkbaum")
        assert server.http.get(f"{API}/info").status_code == 200
        root = server.backend.base_url.removesuffix("/werkbaum")
        assert httpx.get(f"{root}{API}/info").status_code == 404


# -- python -m tests.backend -----------------------------------------------------------


def test_module_entry_point_serves_and_stops() -> None:
    command = ["-m", "tests.backend", "--port", "0", "--clock-control", "--ops", "python"]
    proc = subprocess.Popen(
        [sys.executable, *command],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        with httpx.Client(base_url=url, timeout=10) as http:
            assert http.get(f"{API}/info").json()["name"] == "werkbaum-backend"
            assert http.get(f"{API}/documents").status_code == 401, "no password: list locked"
            advanced = http.post("/__test__/clock/advance", json={"seconds": 31})
            assert advanced.status_code == 200 and "now" in advanced.json()
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
        assert proc.stderr is not None
        assert "line ops: python" in proc.stderr.read()
