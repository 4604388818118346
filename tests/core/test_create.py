"""Creating a plan (issue 14, item 7): ``werkbaum_write`` with ``base: null``, through the
pipeline from an empty base text, on a store that can create (here: memory)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.core.one_store import OneStore
from werkbaum_core import Engine, checksum
from werkbaum_core.errors import Blocked, Conflict, InvalidArgument
from werkbaum_core.rules.catalogue import CATALOGUE, Caller, Resolved, Services
from werkbaum_core.rules.conflicts import MAX_CONFLICT_TEXT
from werkbaum_core.stores import MemoryStore
from werkbaum_core.stores.protocol import Base, Op, Snapshot

NEW = "[ ] #new: New plan\n  - [ ] #new.a: First (S)\n  - [ ] #new.b: Second (M)\n"
MIXED = "[ ] #p: P\n  - [ ] A\n  | [ ] B\n"
"""A structural warning (``mixedGate``): blocked unless allowWarnings."""


def tools() -> dict[str, Any]:
    return {t.name: t for t in CATALOGUE}


def setup(
    engine: Engine, plans: dict[str, str] | None = None
) -> tuple[MemoryStore, list[Any], Services]:
    store = MemoryStore(plans)
    events: list[Any] = []
    return store, events, Services(engine=engine, sources=OneStore(store), audit=events.append)


def create(services: Services, text: str = NEW, **flags: Any) -> dict[str, Any]:
    args = {"source": "new", "base": None, "text": text, **flags}
    return tools()["werkbaum_write"].call(services, args, Caller("Anna")).data  # type: ignore[no-any-return]


def test_a_create_stores_the_text_and_answers_its_base(engine: Engine) -> None:
    store, events, services = setup(engine)
    out = create(services)
    assert store.text("new") == NEW
    assert out["base"] == {"version": None, "checksum": checksum(NEW)}
    assert out["lines"] == 4
    assert out["warnings"] == {"added": [], "removed": [], "remaining": 0}
    assert "+  - [ ] #new.b: Second (M)" in out["diff"]
    assert "dryRun" not in out
    assert events[-1]["create"] is True and "old" not in events[-1]
    assert events[-1]["new"] == out["base"]
    assert events[-1]["outcome"] == "ok" and events[-1]["tool"] == "werkbaum_write"


def test_a_dry_run_creates_nothing_and_answers_base_null(engine: Engine) -> None:
    store, events, services = setup(engine)
    out = create(services, dryRun=True)
    assert out["dryRun"] is True and "base" not in out and out["lines"] == 4
    with pytest.raises(KeyError):
        store.text("new")
    assert store.writes == 0 and events[-1]["outcome"] == "dryRun"
    # the real create passes base: null again
    assert create(services)["base"]["checksum"] == checksum(NEW)


def test_an_existing_plan_is_a_conflict_with_its_base(engine: Engine) -> None:
    store, events, services = setup(engine, {"new": "- [ ] Old\n"})
    with pytest.raises(Conflict) as info:
        create(services)
    current = info.value.details["current"]
    assert current == {
        "base": {"version": None, "checksum": checksum("- [ ] Old\n")},
        "text": "- [ ] Old\n",
    }
    assert store.text("new") == "- [ ] Old\n" and events[-1]["outcome"] == "conflict"


def test_a_long_existing_plan_is_not_sent_along(engine: Engine) -> None:
    long = "".join(f"- [ ] Task {i}\n" for i in range(MAX_CONFLICT_TEXT // 10))
    _, _, services = setup(engine, {"new": long})
    with pytest.raises(Conflict) as info:
        create(services, dryRun=True)
    assert info.value.details["current"] == {"base": {"version": None, "checksum": checksum(long)}}


def test_a_creator_that_loses_the_race_gets_a_conflict(engine: Engine) -> None:
    class Racing(MemoryStore):
        """Someone else creates the plan between the name check and the create."""

        def check_new(self, source: str) -> None:
            super().check_new(source)
            super().create(source, "- [ ] Theirs\n")

    store = Racing()
    services = Services(engine=engine, sources=OneStore(store))
    with pytest.raises(Conflict) as info:
        create(services)
    assert info.value.details["current"]["text"] == "- [ ] Theirs\n"
    assert store.text("new") == "- [ ] Theirs\n"


def test_the_guard_rails_apply_to_a_new_plan(engine: Engine) -> None:
    store, _, services = setup(engine)
    with pytest.raises(Blocked) as broken:
        create(services, MIXED)
    assert [w["type"] for w in broken.value.details["warnings"]] == ["mixedGate"]
    with pytest.raises(Blocked) as prod:
        create(services, "[^] #p: Live\n")
    assert prod.value.details["flag"] == "allowProd"
    assert store.writes == 0
    out = create(services, MIXED, allowWarnings=True)
    assert [w["type"] for w in out["warnings"]["added"]] == ["mixedGate"]
    store2, _, services2 = setup(engine)
    create(services2, "[^] #p: Live\n", allowProd=True)
    assert store2.text("new") == "[^] #p: Live\n"


class NoCreate:
    """A store without create, as the documents store is (documents are made in the editor)."""

    def __init__(self) -> None:
        self.inner = MemoryStore({"doc": NEW})

    def read(self, source: str) -> Snapshot:
        return self.inner.read(source)

    def base_text(self, source: str, base: Base) -> tuple[str, Snapshot]:
        return self.inner.base_text(source, base)

    def write(
        self, source: str, base: Base, ops: list[Op], new_text: str, *, author: str = "Agent"
    ) -> Snapshot:
        return self.inner.write(source, base, ops, new_text, author=author)


def test_a_store_that_cannot_create_refuses_base_null(engine: Engine) -> None:
    class Documents:
        def resolve(self, source: str) -> Resolved:
            return Resolved(store=NoCreate(), key=source)

    services = Services(engine=engine, sources=Documents())
    with pytest.raises(InvalidArgument, match="created in the Werkbaum editor"):
        tools()["werkbaum_write"].call(
            services, {"source": "doc", "base": None, "text": NEW}, Caller()
        )


def test_only_werkbaum_write_creates(engine: Engine) -> None:
    store, _, services = setup(engine)
    args = {"source": "new", "base": None, "id": "a", "size": "S"}
    with pytest.raises(InvalidArgument, match="only werkbaum_write"):
        tools()["werkbaum_set_size"].call(services, args, Caller())
    assert store.writes == 0
