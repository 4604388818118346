"""The catalogue's handlers without any MCP: audit events, cancellation, status aliases."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.core.one_store import OneStore
from werkbaum_core import Engine, InvalidArgument, checksum
from werkbaum_core.rules.catalogue import CATALOGUE, Caller, Services, catalogue
from werkbaum_core.stores import MemoryStore

PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n"


def setup(engine: Engine, **extra: Any) -> tuple[MemoryStore, list[dict[str, Any]], Services]:
    store = MemoryStore({"p": PLAN})
    events: list[dict[str, Any]] = []
    return (
        store,
        events,
        Services(engine=engine, sources=OneStore(store), audit=events.append, **extra),
    )


def handler(name: str) -> Any:
    return next(t for t in CATALOGUE if t.name == name).handler


def status_args(status: Any) -> dict[str, Any]:
    return {"source": "p", "base": {"checksum": checksum(PLAN)}, "id": "a", "status": status}


def test_a_call_cancelled_before_the_store_step_writes_nothing(engine: Engine) -> None:
    def cancelled() -> None:
        raise asyncio.CancelledError

    store, events, services = setup(engine, checkpoint=cancelled)
    with pytest.raises(asyncio.CancelledError):
        handler("werkbaum_set_status")(services, status_args("x"), Caller("Anna"))
    assert store.writes == 0
    assert events[-1]["outcome"] == "cancelled"
    assert events[-1]["displayName"] == "Anna"


@pytest.mark.parametrize(
    ("alias", "box"),
    [("done", "[x]"), ("in-progress", "[~]"), ("X", "[x]"), (" ", "[ ]"), ("high-risk", "[!]")],
)
def test_status_aliases(engine: Engine, alias: str, box: str) -> None:
    store, events, services = setup(engine)
    handler("werkbaum_set_status")(services, status_args(alias), Caller())
    assert f"  - {box} #a: A (S)" in store.text("p").split("\n")
    assert events[-1]["outcome"] in ("ok",)


def test_null_status_removes_the_box(engine: Engine) -> None:
    store, _, services = setup(engine)
    handler("werkbaum_set_status")(services, status_args(None), Caller())
    assert "  - #a: A (S)" in store.text("p").split("\n")


def test_unknown_status_is_an_invalid_argument(engine: Engine) -> None:
    store, events, services = setup(engine)
    with pytest.raises(InvalidArgument, match="unknown status"):
        handler("werkbaum_set_status")(services, status_args("finished"), Caller())
    assert store.writes == 0 and events[-1]["outcome"] == "invalid_argument"


def test_audit_event_never_contains_plan_text(engine: Engine) -> None:
    _, events, services = setup(engine)
    handler("werkbaum_set_status")(services, status_args("x"), Caller("Bot", "7"))
    event = events[-1]
    assert event["tool"] == "werkbaum_set_status" and event["outcome"] == "ok"
    assert event["old"]["checksum"] == checksum(PLAN) and event["new"]["checksum"] != checksum(PLAN)
    assert "Plan" not in repr(event) and "#a" not in repr(event)


def test_read_only_catalogue_has_only_read_tools() -> None:
    assert {t.name for t in catalogue(read_only=True)} == {"werkbaum_read", "werkbaum_inspect"}
    assert all(t.read_only for t in catalogue(read_only=True))
    assert len(catalogue()) == 9
