"""Slow and huge backends (issue 13, item 6): a total deadline per call, a cap on calls in
flight, and answers bounded on every path — against the stand-in misbehaving on a real socket."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.backend import Backend
from tests.backend.faults import Huge, Trickle
from tests.backend.human import Human
from werkbaum_core import SourceUnavailable, checksum
from werkbaum_core.errors import TooLarge
from werkbaum_core.stores.documents import MAX_ANSWER_BYTES, DocumentStore
from werkbaum_core.stores.protocol import Base

PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n  - [ ] #b: B (M)"
DEADLINE = 2.0
SLACK = 1.5
"""Seconds a call may end after its deadline (scheduling under a loaded machine)."""


def timed(call: Callable[[], Any]) -> tuple[BaseException, float]:
    started = time.monotonic()
    with pytest.raises((SourceUnavailable, TooLarge)) as info:
        call()
    return info.value, time.monotonic() - started


@pytest.mark.parametrize("method", ["GET", "PATCH"])
def test_a_trickling_backend_cannot_hold_a_call_past_its_deadline(
    backend: Backend, human: Human, method: str
) -> None:
    """One byte every 0.3 s never trips a per-read timeout; the total deadline ends the call."""
    doc_id = human.create(PLAN)
    with DocumentStore([backend.base_url], deadline=DEADLINE) as store:
        base = store.read(doc_id).base
        op = {"op": "insert", "index": 3, "lines": ["  - [ ] #c: C (S)"]}
        calls = {
            "GET": lambda: store.read(doc_id),
            "PATCH": lambda: store.write(doc_id, base, [op], PLAN + "\n  - [ ] #c: C (S)"),
        }
        with backend.faults.injected(Trickle(method=method, every=0.3)):
            error, took = timed(calls[method])
    assert isinstance(error, SourceUnavailable)
    assert "within the 2 s deadline" in error.message
    assert error.details["deadline"] == DEADLINE
    assert DEADLINE - 0.1 < took < DEADLINE + SLACK


def test_calls_beyond_the_cap_are_refused_at_once_and_the_cap_frees_up(
    backend: Backend, human: Human
) -> None:
    doc_id = human.create(PLAN)
    errors: list[BaseException] = []

    def waiting_read(store: DocumentStore) -> None:
        try:
            store.read(doc_id)
        except SourceUnavailable as exc:
            errors.append(exc)

    with DocumentStore([backend.base_url], deadline=DEADLINE, max_calls=2) as store:
        with backend.faults.injected(Trickle(every=0.5)):
            waiting = [threading.Thread(target=waiting_read, args=(store,)) for _ in range(2)]
            for thread in waiting:
                thread.start()
            time.sleep(0.3)  # both are inside, waiting for the trickle
            error, took = timed(lambda: store.read(doc_id))
            assert took < 0.5
            assert isinstance(error, SourceUnavailable) and error.details["busy"] is True
            assert "2 calls to document backends are already waiting" in error.message
            for thread in waiting:
                thread.join(timeout=DEADLINE + SLACK)
        assert len(errors) == 2  # both ended by the deadline ...
        assert store.read(doc_id).text == PLAN  # ... and gave their slots back


@pytest.mark.parametrize("declare_length", [True, False], ids=["with-length", "close-delimited"])
def test_a_huge_document_is_too_large_on_read_and_write(
    backend: Backend, human: Human, declare_length: bool
) -> None:
    doc_id = human.create(PLAN)
    base = Base(checksum(PLAN), 1)
    with DocumentStore([backend.base_url]) as store:
        paths: dict[str, Callable[[], Any]] = {
            "read": lambda: store.read(doc_id),
            "read_titled": lambda: store.read_titled(doc_id),
            "base_text": lambda: store.base_text(doc_id, base),
            "write": lambda: store.write(doc_id, base, [], PLAN),
        }
        with backend.faults.injected(Huge(size=300 * 2**20, declare_length=declare_length)):
            for name, call in paths.items():
                error, took = timed(call)
                assert isinstance(error, TooLarge), name
                assert error.code == "too_large" and error.details["limit"] == 2_000_000
                assert took < 10, name  # 12 MB read at most, not 300 MB
        assert store.read(doc_id).text == PLAN  # the store is fine afterwards


def test_a_merge_answer_is_bounded_too(backend: Backend, human: Human) -> None:
    """The PATCH answer (which carries ``opsSinceBase`` after a merge) is bounded as well."""
    doc_id = human.create(PLAN)
    with DocumentStore([backend.base_url]) as store:
        base = store.read(doc_id).base
        op = {"op": "insert", "index": 3, "lines": ["  - [ ] #c: C (S)"]}
        with backend.faults.injected(Huge(method="PATCH", size=50 * 2**20)):
            error, _ = timed(lambda: store.write(doc_id, base, [op], PLAN))
    assert isinstance(error, TooLarge)


def test_a_history_entry_over_the_limit_is_too_large(backend: Backend, human: Human) -> None:
    """The base text of an older version comes from the history: bounded per entry."""
    doc_id = human.create(PLAN)
    human.patch(doc_id, [{"op": "insert", "index": 3, "lines": ["  - [ ] #c: C (S)"]}])
    with DocumentStore([backend.base_url]) as fresh:  # no cached copy of version 1
        with backend.faults.injected(Huge(path="/history", size=300 * 2**20)):
            for call in (
                lambda: fresh.base_text(doc_id, Base(checksum(PLAN), 1)),
                lambda: fresh.history(doc_id),
            ):
                error, took = timed(call)
                assert isinstance(error, TooLarge) and took < 10
        assert [entry["version"] for entry in fresh.history(doc_id)] == [1, 2]


def test_a_history_of_legal_entries_is_read_entry_by_entry(backend: Backend, human: Human) -> None:
    """A history far longer than one answer may be is fine: only its entries are bounded."""
    doc_id = human.create(PLAN)
    fill = "  - [ ] #x: filler (S)\n" * 80_000  # 1.84 M characters, 2 MB of JSON
    puts = MAX_ANSWER_BYTES // len(fill) + 1  # PUTs are milestones: all stay in the history
    for index in range(puts):
        response = human.http.put(
            f"{human.api}/{doc_id}", json={"title": "Plan", "content": f"{PLAN}\n{index}{fill}"}
        )
        assert response.status_code == 200, response.text
    with DocumentStore([backend.base_url]) as store:
        entries = store.history(doc_id)
        assert [entry["version"] for entry in entries] == list(range(1, puts + 2))
        assert all("content" not in entry for entry in entries)
        text, _ = store.base_text(doc_id, Base(checksum(PLAN), 1))
        assert text == PLAN


def test_an_http_proxy_from_the_environment_is_used_and_no_proxy_bypasses_it(
    backend: Backend, human: Human, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stand-in doubles as the proxy: it reads the absolute-form target a proxy gets."""
    doc_id = human.create(PLAN)
    behind = f"http://werkbaum.invalid/api/v1/documents/{doc_id}"  # resolvable only by the proxy
    monkeypatch.setenv("http_proxy", backend.base_url)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with DocumentStore(deadline=DEADLINE) as store:
        assert store.read(behind).text == PLAN
        monkeypatch.setenv("no_proxy", "werkbaum.invalid")
        with pytest.raises(SourceUnavailable, match="cannot be reached"):
            store.read(behind)
