"""The catalogue's handlers without any MCP: audit events, cancellation, status aliases."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
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
    reads = {"werkbaum_read", "werkbaum_inspect", "werkbaum_list"}
    assert {t.name for t in catalogue(read_only=True)} == reads
    assert all(t.read_only for t in catalogue(read_only=True))
    assert len(catalogue()) == 10


def test_without_plan_files_the_listing_is_left_out() -> None:
    names = [t.name for t in catalogue(files=False)]
    assert len(names) == 9 and "werkbaum_list" not in names
    assert [t.name for t in catalogue(read_only=True, files=False)] == [
        "werkbaum_read",
        "werkbaum_inspect",
    ]


def test_the_guide_is_read_without_a_base(engine: Engine) -> None:
    _, _, services = setup(engine, guide=lambda: "# Guide\n\nline\n")
    out = handler("werkbaum_read")(services, {"source": "werkbaum://guide"}, Caller())
    assert out == {"text": "# Guide\n\nline\n", "lines": 4}


@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("werkbaum_inspect", {}),
        ("werkbaum_write", {"base": {"checksum": checksum(PLAN)}, "text": PLAN}),
        ("werkbaum_write", {"base": None, "text": PLAN}),
    ],
)
def test_the_guide_is_no_plan_for_the_other_tools(engine: Engine, tool: str, extra: Any) -> None:
    store, _, services = setup(engine)
    with pytest.raises(InvalidArgument, match="notation guide, not a plan"):
        handler(tool)(services, {"source": "werkbaum://guide", **extra}, Caller())
    assert store.writes == 0


class Listing:
    """Plan files in pages of two, as the file store pages them."""

    @attrs.frozen
    class Entry:
        source: str
        lines: int | None

    @attrs.frozen
    class Page:
        plans: tuple[Listing.Entry, ...]
        next_cursor: str | None

    def __init__(self) -> None:
        self.calls: list[tuple[str | None, int, bool]] = []

    def list_plans(
        self, cursor: str | None = None, *, limit: int = 100, lines: bool = True
    ) -> Page:
        self.calls.append((cursor, limit, lines))
        if cursor is None:
            return self.Page((self.Entry("a.werkbaum", 3), self.Entry("big.werkbaum", None)), "c1")
        if cursor == "c1":
            return self.Page((self.Entry("sub/b.werkbaum", 9),), None)
        raise InvalidArgument("invalid cursor")


def test_the_listing_pages_sources_and_line_counts(engine: Engine) -> None:
    listing = Listing()
    _, _, services = setup(engine, plan_files=listing)
    first = handler("werkbaum_list")(services, {}, Caller())
    assert first == {
        "plans": [{"source": "a.werkbaum", "lines": 3}, {"source": "big.werkbaum"}],
        "nextCursor": "c1",
    }
    second = handler("werkbaum_list")(services, {"cursor": "c1"}, Caller())
    assert second == {"plans": [{"source": "sub/b.werkbaum", "lines": 9}]}
    assert listing.calls == [(None, 100, True), ("c1", 100, True)]
    with pytest.raises(InvalidArgument):
        handler("werkbaum_list")(services, {"cursor": "forged"}, Caller())


def test_without_plan_files_a_listing_call_is_an_invalid_argument(engine: Engine) -> None:
    _, _, services = setup(engine)
    with pytest.raises(InvalidArgument, match="no plan files"):
        handler("werkbaum_list")(services, {}, Caller())
