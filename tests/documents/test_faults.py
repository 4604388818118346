"""Network faults on a PATCH (spec §7): retried with the same seq, so nothing applies twice.

The transports below forward to the real stand-in through a real
``httpx.HTTPTransport`` and only then misbehave, so the backend really did
apply (or really did not receive) the first attempt.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import httpx
import pytest

from tests.backend import Backend
from tests.backend.faults import Twice
from tests.backend.human import Human
from werkbaum_core import SourceUnavailable, TooLarge, checksum
from werkbaum_core.stores.documents import DocumentStore

PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n  - [ ] #b: B (M)"
SECRET_LINE = "  - [ ] #c: Confidential line (S)"


class Faulty(httpx.BaseTransport):
    """Forwards requests; the first ``drops`` PATCHes lose their response (or never leave)."""

    def __init__(
        self,
        *,
        drops: int = 1,
        before_sending: bool = False,
        error: type[httpx.TransportError] = httpx.ReadError,
    ) -> None:
        self.inner = httpx.HTTPTransport()
        self.drops = drops
        self.before_sending = before_sending
        self.error = error
        self.patches: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "PATCH":
            return self.inner.handle_request(request)
        self.patches.append(json.loads(request.content))
        if self.drops and self.before_sending:
            self.drops -= 1
            raise httpx.ConnectError("connection refused", request=request)
        response = self.inner.handle_request(request)
        if self.drops:
            self.drops -= 1
            response.read()  # the backend has answered (and applied) ...
            response.close()
            raise self.error("connection lost", request=request)  # ... unseen by us
        return response

    def close(self) -> None:
        self.inner.close()


def write_line(store: DocumentStore, doc_id: str) -> Any:
    snapshot = store.read(doc_id)
    op = {"op": "insert", "index": 3, "lines": [SECRET_LINE]}
    return store.write(doc_id, snapshot.base, [op], PLAN + "\n" + SECRET_LINE, author="Agent")


@pytest.mark.parametrize(
    "error",
    [httpx.ReadError, httpx.ReadTimeout, httpx.RemoteProtocolError],
    ids=lambda e: e.__name__,
)
def test_dropped_response_is_retried_with_the_same_seq_and_applied_once(
    backend: Backend,
    human: Human,
    caplog: pytest.LogCaptureFixture,
    error: type[httpx.TransportError],
) -> None:
    doc_id = human.create(PLAN)
    faulty = Faulty(drops=1, error=error)
    caplog.set_level(logging.DEBUG)
    with DocumentStore([backend.base_url], transport=faulty) as store:
        stored = write_line(store, doc_id)
        assert [p["seq"] for p in faulty.patches] == [1, 1]
        assert faulty.patches[0] == faulty.patches[1]
        doc = human.get(doc_id)
        assert doc["content"].count(SECRET_LINE) == 1
        assert doc["version"] == 2
        assert stored.text == doc["content"] and stored.base.version == 2
        agent_entries = [e for e in human.history(doc_id) if e["clientId"] == store.client_id]
        assert len(agent_entries) == 1
        # the next write is a new attempt after a definite answer: a new seq
        snapshot = store.read(doc_id)
        store.write(doc_id, snapshot.base, [{"op": "delete", "index": 3, "count": 1}], PLAN)
        assert faulty.patches[-1]["seq"] == 2
        assert human.get(doc_id)["content"] == PLAN
    assert error.__name__ in caplog.text  # the retry is logged ...
    assert "Confidential" not in caplog.text  # ... but never the request body


def test_connection_refused_before_sending_is_retried(backend: Backend, human: Human) -> None:
    doc_id = human.create(PLAN)
    faulty = Faulty(drops=2, before_sending=True)
    with DocumentStore([backend.base_url], transport=faulty) as store:
        write_line(store, doc_id)
    assert [p["seq"] for p in faulty.patches] == [1, 1, 1]
    assert human.get(doc_id)["content"].count(SECRET_LINE) == 1


def test_retries_are_bounded(backend: Backend, human: Human) -> None:
    doc_id = human.create(PLAN)
    faulty = Faulty(drops=10)
    with (
        DocumentStore([backend.base_url], transport=faulty) as store,
        pytest.raises(SourceUnavailable, match="cannot be reached"),
    ):
        write_line(store, doc_id)
    assert len(faulty.patches) == 3
    assert {p["seq"] for p in faulty.patches} == {1}
    assert human.get(doc_id)["content"].count(SECRET_LINE) == 1  # applied once, replayed twice


def test_the_same_write_after_an_unknown_outcome_is_applied_once(
    backend: Backend, human: Human
) -> None:
    """The backend applied the PATCH but every answer was lost: the agent is told the
    outcome is unknown, and its natural retry (the same call) reuses the seq."""
    doc_id = human.create(PLAN)
    faulty = Faulty(drops=3)
    with DocumentStore([backend.base_url], transport=faulty) as store:
        snapshot = store.read(doc_id)
        op = {"op": "insert", "index": 3, "lines": [SECRET_LINE]}
        with pytest.raises(SourceUnavailable) as info:
            store.write(doc_id, snapshot.base, [op], PLAN + "\n" + SECRET_LINE)
        error = info.value.to_json()["error"]
        assert error["applied"] == "unknown"
        assert "read the document before you write it again" in error["message"]
        assert "at most once only when this server process gets it" in error["message"]
        # The pipeline reads the document before it writes: the version the lost write
        # made is the newest seen now, and the replay of it must still be taken (round 24
        # F3: it was refused as an answer that cannot belong, on every retry).
        assert store.read(doc_id).base.version == 2
        after = store.write(doc_id, snapshot.base, [op], PLAN + "\n" + SECRET_LINE)
        assert after.text.count(SECRET_LINE) == 1
        # A different change afterwards is a new write under a new seq.
        other = {"op": "insert", "index": 0, "lines": ["%% note"]}
        store.write(doc_id, after.base, [other], "%% note\n" + after.text)
    assert [p["seq"] for p in faulty.patches] == [1, 1, 1, 1, 2]
    assert human.get(doc_id)["content"].count(SECRET_LINE) == 1


def test_a_gateway_error_on_a_write_is_an_unknown_outcome(backend: Backend, human: Human) -> None:
    doc_id = human.create(PLAN)
    with (
        DocumentStore([backend.base_url], transport=ProxyAnswers(504)) as store,
        pytest.raises(SourceUnavailable) as info,
    ):
        write_line(store, doc_id)
    assert info.value.to_json()["error"]["applied"] == "unknown"


def test_a_new_seq_would_have_applied_twice(backend: Backend, human: Human) -> None:
    """Counter-check: under a new seq a retried insert lands twice (documents-api §5.5)."""
    doc_id = human.create(PLAN)
    for seq in (1, 2):
        response = httpx.patch(
            f"{backend.base_url}/api/v1/documents/{doc_id}/content",
            json={
                "baseVersion": 1,
                "checksum": checksum(PLAN),
                "clientId": "mcp-counter-check",
                "seq": seq,
                "ops": [{"op": "insert", "index": 3, "lines": [SECRET_LINE]}],
            },
        )
        assert response.status_code == 200
    assert human.get(doc_id)["content"].count(SECRET_LINE) == 2


def test_hung_backend_times_out_and_is_unavailable() -> None:
    """A backend that accepts connections but never answers: bounded read timeouts."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # the kernel completes the handshakes; nobody ever answers
        server = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with DocumentStore([server], timeout=0.2) as store:
            started = time.monotonic()
            with pytest.raises(SourceUnavailable, match="ReadTimeout"):
                store.read(str(uuid.uuid4()))
            assert time.monotonic() - started < 6


class _Redirector(BaseHTTPRequestHandler):
    target = ""

    def do_GET(self) -> None:
        self.send_response(302)
        self.send_header("Location", self.target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_redirects_are_never_followed(backend: Backend, human: Human) -> None:
    doc_id = human.create(PLAN)
    _Redirector.target = f"{backend.base_url}/api/v1/documents/{doc_id}"
    server = HTTPServer(("127.0.0.1", 0), _Redirector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        redirecting = f"http://127.0.0.1:{server.server_port}"
        with DocumentStore([redirecting]) as store, pytest.raises(SourceUnavailable) as info:
            store.read(doc_id)
        assert info.value.details["status"] == 302
        assert info.value.details["location"] == _Redirector.target
        assert "not followed" in info.value.message
    finally:
        server.shutdown()
        server.server_close()


class ProxyAnswers(httpx.BaseTransport):
    """A reverse proxy in front of the backend that answers PATCHes itself (e.g. 503, 410)."""

    def __init__(self, status: int) -> None:
        self.inner = httpx.HTTPTransport()
        self.status = status

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "PATCH":
            return self.inner.handle_request(request)
        problem = {"title": "Service Unavailable", "detail": "backend restarting"}
        return httpx.Response(self.status, json=problem, request=request)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("status", [410, 500, 502, 503])
def test_error_statuses_are_unavailable_with_title_and_detail(
    backend: Backend, human: Human, status: int
) -> None:
    doc_id = human.create(PLAN)
    with (
        DocumentStore([backend.base_url], transport=ProxyAnswers(status)) as store,
        pytest.raises(SourceUnavailable) as info,
    ):
        write_line(store, doc_id)
    error = info.value.to_json()["error"]
    assert error["code"] == "source_unavailable"
    assert (error["status"], error["title"], error["detail"]) == (
        status,
        "Service Unavailable",
        "backend restarting",
    )
    assert human.get(doc_id)["version"] == 1


DEEP = b"[" * 100_000 + b"]" * 100_000
"""Valid JSON nested far past Python's recursion limit."""
SURROGATE = b'{"uuid": "u", "title": "t", "version": 1, "content": "[ ] \\ud800 text"}'
"""A document whose text holds a lone surrogate: no text any program can encode."""


class Answers(httpx.BaseTransport):
    """A backend whose answers to one kind of request are ``body`` (status 200)."""

    def __init__(self, method: str, path_end: str, body: bytes) -> None:
        self.inner = httpx.HTTPTransport()
        self.method, self.path_end, self.body = method, path_end, body

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == self.method and request.url.path.endswith(self.path_end):
            headers = {"content-type": "application/json"}
            return httpx.Response(200, content=self.body, headers=headers, request=request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize(
    ("path_end", "body"),
    [
        ("", DEEP),
        ("", SURROGATE),
        ("/history", b"[" + DEEP + b"]"),
        ("/history", b"[" + SURROGATE + b"]"),
    ],
    ids=["deep-document", "surrogate-document", "deep-history", "surrogate-history"],
)
def test_json_python_cannot_hold_is_an_answer_unlike_a_backend(
    backend: Backend, human: Human, path_end: str, body: bytes
) -> None:
    doc_id = human.create(PLAN)
    with DocumentStore([backend.base_url], transport=Answers("GET", doc_id + path_end, body)) as s:
        with pytest.raises(SourceUnavailable, match="did not answer like a Werkbaum backend"):
            s.history(doc_id) if path_end else s.read(doc_id)
        assert s.read(human.create(PLAN)).text == PLAN  # the store goes on


def test_a_patch_answered_with_deep_json_has_an_unknown_outcome(
    backend: Backend, human: Human
) -> None:
    # A 200 whose body says nothing usable, asked twice: whether the change landed is not
    # known (here the PATCH never reached the backend), and the error says so.
    doc_id = human.create(PLAN)
    answers = Answers("PATCH", "/content", DEEP)
    with (
        DocumentStore([backend.base_url], transport=answers) as store,
        pytest.raises(SourceUnavailable, match="cannot be its answer") as caught,
    ):
        write_line(store, doc_id)
    assert caught.value.details["applied"] == "unknown"
    assert human.get(doc_id)["version"] == 1


def test_a_probe_answered_with_deep_json_is_one_clear_error(backend: Backend) -> None:
    answers = Answers("GET", "/api/v1/info", DEEP)
    with (
        DocumentStore([backend.base_url], transport=answers) as store,
        pytest.raises(SourceUnavailable, match="is not a Werkbaum backend"),
    ):
        store.probe()


def test_an_answer_that_names_another_document_is_not_taken(backend: Backend, human: Human) -> None:
    # What a kept-alive connection yields after a backend sent two answers to one request.
    doc_id, other = human.create(PLAN), str(uuid.uuid4())
    body = json.dumps(
        {"id": other, "title": "t", "version": 99, "content": "[ ] #evil: Injected"}
    ).encode()
    with DocumentStore([backend.base_url], transport=Answers("GET", doc_id, body)) as store:
        with pytest.raises(SourceUnavailable, match=f"was answered with document {other}"):
            store.read(doc_id)
        upper = human.create(PLAN)
        assert store.read(upper.upper()).text == PLAN  # the same id in capitals is the same


class Restated(httpx.BaseTransport):
    """Forwards every request; a PATCH the backend applied is answered with ``body``."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.inner = httpx.HTTPTransport()
        self.body = body

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method != "PATCH":
            return response
        response.read()
        assert response.status_code == 200, "the backend applied it"
        return httpx.Response(200, json=self.body, request=request)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("claimed", [1, 0, -5], ids=["the-base", "older", "negative"])
def test_a_patch_answer_whose_version_cannot_follow_the_base_is_not_taken(
    backend: Backend, human: Human, claimed: int
) -> None:
    """Every write makes a new version: an answer naming the base's own or an older one is
    not believed. The PATCH is sent once more (same seq: the backend replays, nothing is
    applied twice); answered so again, the outcome is unknown and the error says so. The
    store's text of the base stays the base's."""
    doc_id = human.create(PLAN)
    restated = Restated({"version": claimed, "opsSinceBase": []})
    with DocumentStore([backend.base_url], transport=restated) as store:
        base = store.read(doc_id).base
        assert base.version == 1
        with pytest.raises(SourceUnavailable, match="cannot be its answer") as caught:
            write_line(store, doc_id)
        assert caught.value.details["applied"] == "unknown"
        assert human.get(doc_id)["version"] == 2, "applied once"
        assert store.base_text(doc_id, base)[0] == PLAN, "version 1 is still the base's text"


def test_a_get_answered_twice_does_not_make_the_next_write_fail(
    backend: Backend, human: Human
) -> None:
    """The stand-in answers one ``GET`` twice on a kept-alive socket: the next request
    sent there (the write's PATCH, after its own read) is answered with a document. The
    store does not take that for the PATCH's answer: it closes the connection and sends
    the PATCH again on another (same seq, so the backend replays what it applied)."""
    doc_id = human.create(PLAN)
    with DocumentStore([backend.base_url]) as store:
        with backend.faults.injected(Twice(method="GET", path=doc_id)) as twice:
            snapshot = store.read(doc_id)
            op = {"op": "insert", "index": 3, "lines": [SECRET_LINE]}
            stored = store.write(doc_id, snapshot.base, [op], PLAN + "\n" + SECRET_LINE)
        assert twice.answered, "the fault was on the wire"
        assert stored.base.version == 2 and stored.text == PLAN + "\n" + SECRET_LINE
        assert human.get(doc_id)["content"] == stored.text
        assert [entry["version"] for entry in human.history(doc_id)][-1] == 2, "applied once"
        assert store.read(doc_id) == stored, "later answers are not one request late"


def test_a_patch_answered_twice_does_not_make_the_next_read_fail(
    backend: Backend, human: Human
) -> None:
    """The second copy of a PATCH's answer waits on the connection; the next ``GET`` of
    the document would read it: not a document, so it is asked again elsewhere."""
    doc_id = human.create(PLAN)
    with DocumentStore([backend.base_url]) as store:
        with backend.faults.injected(Twice(method="PATCH", path="/content")) as twice:
            first = write_line(store, doc_id)
        assert twice.answered and first.base.version == 2
        assert store.read(doc_id) == first
        op = {"op": "replace", "index": 1, "count": 1, "lines": ["  - [x] #a: A (S)"]}
        text = first.text.replace("[ ] #a", "[x] #a")
        again = store.write(doc_id, first.base, [op], text)
        assert again.base.version == 3 and human.get(doc_id)["content"] == text


class HugeWriteAnswers(httpx.BaseTransport):
    """Forwards every request; the PATCH's answer (the backend has applied it) comes back
    padded past the 12 MB answer bound."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.patches: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method != "PATCH":
            return response
        self.patches.append(json.loads(request.content))
        body = response.read()
        response.close()
        padded = body[:-1] + b',"pad":"' + b"x" * 13_000_000 + b'"}'
        headers = {"content-type": "application/json"}
        return httpx.Response(response.status_code, headers=headers, content=padded)

    def close(self) -> None:
        self.inner.close()


def test_a_too_large_answer_to_a_write_is_an_unknown_outcome_and_replayed(
    backend: Backend, human: Human
) -> None:
    """Round 24 F1: the write was applied, its answer was over the bound: it was
    ``too_large`` with nothing about the write, and the agent's retry applied it again."""
    doc_id = human.create(PLAN)
    huge = HugeWriteAnswers()
    with DocumentStore([backend.base_url], transport=huge) as store:
        base = store.read(doc_id).base
        op = {"op": "insert", "index": 3, "lines": [SECRET_LINE]}
        with pytest.raises(TooLarge) as info:
            store.write(doc_id, base, [op], PLAN + "\n" + SECRET_LINE)
        assert info.value.to_json()["error"]["applied"] == "unknown"
        assert human.get(doc_id)["content"].count(SECRET_LINE) == 1
        with pytest.raises(TooLarge):  # the same call: the backend replays, nothing new
            store.write(doc_id, base, [op], PLAN + "\n" + SECRET_LINE)
    assert [p["seq"] for p in huge.patches] == [1, 1]
    assert human.get(doc_id)["content"].count(SECRET_LINE) == 1


class FailingReads(httpx.BaseTransport):
    """Forwards PATCHes; after the first PATCH every GET of the document is a 503. With
    ``unreadable_merge`` the PATCH's answer names ``opsSinceBase`` the store cannot
    replay, so it cannot rebuild the merged text either."""

    def __init__(self, *, unreadable_merge: bool = False) -> None:
        self.inner = httpx.HTTPTransport()
        self.unreadable_merge = unreadable_merge
        self.patched = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and self.patched:
            return httpx.Response(503, text="down for a moment")
        response = self.inner.handle_request(request)
        if request.method != "PATCH":
            return response
        self.patched = True
        if not self.unreadable_merge:
            return response
        body = json.loads(response.read())
        response.close()
        body["opsSinceBase"] = [{"op": "unreadable"}]
        return httpx.Response(response.status_code, json=body)

    def close(self) -> None:
        self.inner.close()


def test_a_merged_write_whose_reread_fails_is_reported_as_applied(
    backend: Backend, human: Human
) -> None:
    """Round 24 F2: the backend merged the write with a person's edit and said 200; the
    re-read for the merged text failed, and the write was reported as a plain
    ``source_unavailable``: the agent's retry applied it again. The store now gives the
    snapshot it can compute (its base text, the person's ops, its own), and says the
    change was applied where it cannot."""
    for knows_base in (True, False):
        doc_id = human.create(PLAN)
        with (
            DocumentStore([backend.base_url]) as reader,
            DocumentStore([backend.base_url], transport=FailingReads()) as store,
        ):
            # The writer read the base itself, or got it from elsewhere (it cannot rebuild).
            snapshot = (store if knows_base else reader).read(doc_id)
            edit = {"op": "replace", "index": 0, "count": 1, "lines": ["[ ] #plan: P"]}
            human.patch(doc_id, [edit])
            op = {"op": "insert", "index": 3, "lines": [SECRET_LINE]}
            if knows_base:
                after = store.write(doc_id, snapshot.base, [op], PLAN + "\n" + SECRET_LINE)
                assert after.base.version == 3
                assert after.text == human.get(doc_id)["content"]
            else:
                with pytest.raises(SourceUnavailable) as info:
                    store.write(doc_id, snapshot.base, [op], PLAN + "\n" + SECRET_LINE)
                error = info.value.to_json()["error"]
                assert (error["applied"], error["version"]) == (True, 3)
                assert "do not write it again" in error["message"]
        assert human.get(doc_id)["content"].count(SECRET_LINE) == 1
