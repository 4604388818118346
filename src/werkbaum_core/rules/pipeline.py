"""The write pipeline (spec §6): every agent change goes through here.

resolve → base text → new text (engine) → analyse base and new (engine, same
call) → guard → diff → store → result. Nothing is written without a base, a
refused or stale change writes nothing, and ``dry_run`` computes everything
but the store step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import attrs

from werkbaum_core.errors import Blocked, InvalidArgument
from werkbaum_core.rules import guard
from werkbaum_core.rules.diff import unified
from werkbaum_core.rules.schemas import MAX_OPS
from werkbaum_core.stores.protocol import Base, Op, Snapshot, Store, conflict

VERBS = ("setStatus", "setSize", "addNode", "moveNode", "removeNode", "applyOps", "write")


class EngineCalls(Protocol):
    """The part of :class:`~werkbaum_core.engine.Engine` the pipeline uses."""

    def call(self, entry: str, payload: Any) -> Any: ...


@attrs.frozen
class WriteRequest:
    source: str
    base: Base
    verb: str
    args: dict[str, Any] = attrs.field(factory=dict)
    allow_warnings: bool = False
    allow_prod: bool = False
    dry_run: bool = False
    author: str = "Agent"

    def __attrs_post_init__(self) -> None:
        if self.verb not in VERBS:
            raise InvalidArgument(f"unknown write verb {self.verb!r}")
        if self.verb == "applyOps" and len(self.args.get("ops", ())) > MAX_OPS:
            raise InvalidArgument(f"at most {MAX_OPS} ops per call", limit=MAX_OPS)


@attrs.frozen
class WriteResult:
    base: Base
    lines: int
    ops: tuple[Op, ...]
    diff: str
    warnings: guard.Delta
    dry_run: bool = False
    redirected_to: str | None = None
    mirror: dict[str, Any] | None = None
    findings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "base": self.base.to_json(),
            "lines": self.lines,
            "ops": list(self.ops),
            "diff": self.diff,
            "warnings": self.warnings.to_json(),
        }
        if self.redirected_to:
            out["redirectedTo"] = self.redirected_to
        if self.mirror is not None:
            out["mirror"] = self.mirror
        if self.findings:
            out["findings"] = list(self.findings)
        if self.dry_run:
            out["dryRun"] = True
        return out


@attrs.frozen
class Planned:
    """A computed but not yet stored change (what the store step needs)."""

    request: WriteRequest
    base_text: str
    current: Snapshot
    new_text: str
    expected_text: str
    ops: tuple[Op, ...]
    before: guard.State
    delta: guard.Delta


def plan(engine: EngineCalls, store: Store, request: WriteRequest) -> Planned:
    """Everything up to (not including) the store step; raises ``Blocked``/``Conflict``."""
    base_text, current = store.base_text(request.source, request.base)
    sets_prod = request.verb == "setStatus" and request.args.get("status") == "^"
    if sets_prod and not request.allow_prod:
        raise Blocked(
            "an agent does not set [^] (in production) on its own; pass allowProd: true "
            "only if a human asked for it",
            nodes=[f"#{request.args.get('id')}"],
            flag="allowProd",
        )
    payload: dict[str, Any] = {"text": base_text, "verb": request.verb, "args": request.args}
    if current.text != base_text:
        payload["current"] = current.text
    out = engine.call("edit", payload)
    before = guard.State.from_json(out["before"])
    after = guard.State.from_json(out["after"])
    change = guard.check(
        before, after, allow_warnings=request.allow_warnings, allow_prod=request.allow_prod
    )
    expected = out["text"]
    merged = out.get("merged")
    if merged is not None:
        if merged.get("conflict"):
            raise conflict(request.source, current)
        guard.check(
            guard.State.from_json(out["current"]),
            guard.State.from_json(merged),
            allow_warnings=request.allow_warnings,
            allow_prod=request.allow_prod,
            what="merging your change into the current version",
        )
        expected = merged["text"]
        change = guard.delta(before, guard.State.from_json(merged))
    return Planned(
        request=request,
        base_text=base_text,
        current=current,
        new_text=out["text"],
        expected_text=expected,
        ops=tuple(out["ops"]),
        before=before,
        delta=change,
    )


def store_planned(engine: EngineCalls, store: Store, planned: Planned) -> WriteResult:
    """The store step, and the result that describes what the store now holds."""
    request = planned.request
    if not planned.ops:
        # Nothing changes: no write, no new version, same base.
        return _result(planned, planned.current, planned.delta)
    stored = store.write(
        request.source, request.base, list(planned.ops), planned.new_text, author=request.author
    )
    change = planned.delta
    findings: tuple[str, ...] = ()
    if stored.text != planned.expected_text:
        state = guard.State.from_json(engine.call("state", {"text": stored.text}))
        change = guard.delta(planned.before, state)
        findings = ("the store holds a text that differs from the expected merge result",)
    return attrs.evolve(_result(planned, stored, change), findings=findings)


def _result(planned: Planned, snapshot: Snapshot, change: guard.Delta) -> WriteResult:
    return WriteResult(
        base=snapshot.base,
        lines=snapshot.lines,
        ops=planned.ops,
        diff=unified(planned.base_text, snapshot.text, _name(planned.request.source)),
        warnings=change,
    )


def write(
    engine: EngineCalls,
    store: Store,
    request: WriteRequest,
    checkpoint: Callable[[], None] = lambda: None,
) -> WriteResult:
    """Run one write request through the whole pipeline.

    ``checkpoint`` runs right before the store step and may raise (a cancelled
    call): up to there nothing has been written; from there on the write completes.
    """
    planned = plan(engine, store, request)
    if request.dry_run:
        result = _result(planned, planned.current, planned.delta)
        return attrs.evolve(
            result,
            base=request.base,
            lines=planned.expected_text.count("\n") + 1,
            diff=unified(planned.base_text, planned.expected_text, _name(request.source)),
            dry_run=True,
        )
    checkpoint()
    return store_planned(engine, store, planned)


def _name(source: str) -> str:
    return source.rsplit("/", 1)[-1] or "plan"
