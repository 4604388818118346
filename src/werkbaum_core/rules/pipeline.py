"""The write pipeline (spec §6): every agent change goes through here.

resolve → base text → new text (engine) → analyse base and new (engine, same
call) → guard → diff → store → result. Nothing is written without a base, a
refused or stale change writes nothing, and ``dry_run`` computes everything
but the store step.

A create (:func:`create`, ``werkbaum_write`` with ``base: null``) is the same
pipeline from an empty base text: the guard sees every structural warning and
every ``[^]`` of the new plan as new, and the store step creates the file
without ever replacing one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import attrs

from werkbaum_core.errors import Blocked, Conflict, InvalidArgument, from_json
from werkbaum_core.model import LINE_REF
from werkbaum_core.rules import guard
from werkbaum_core.rules.conflicts import RecentTexts, exists, explained
from werkbaum_core.rules.diff import unified
from werkbaum_core.rules.schemas import MAX_OPS, STATUS_ALIASES, STATUS_CODES
from werkbaum_core.stores.protocol import Base, Creates, Op, Snapshot, Store, conflict
from werkbaum_core.text import MAX_TEXT_CHARS, check_size, checksum

NEW_PLAN = Base(checksum=checksum(""))
"""The base of a create: the empty text the new plan is computed against."""

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
    base: Base | None
    """The new base; None (left out) for a dry-run create: the real create passes
    ``base: null`` again."""
    lines: int
    ops: tuple[Op, ...]
    diff: str
    warnings: guard.Delta
    dry_run: bool = False
    redirected_to: str | None = None
    mirror: dict[str, Any] | None = None
    findings: tuple[str, ...] = ()
    merged: str | None = None
    """A diff from the agent's own result to what the store holds: the other
    changes (a co-editor's) that the backend merged this change with."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.base is None else {"base": self.base.to_json()}
        out["lines"] = self.lines
        out["ops"] = list(self.ops)
        out["diff"] = self.diff
        out["warnings"] = self.warnings.to_json()
        if self.redirected_to:
            out["redirectedTo"] = self.redirected_to
        if self.merged is not None:
            out["merged"] = {"diff": self.merged}
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
    delta: guard.Delta


class BaseTexts(Protocol):
    """The part of a store that :func:`plan` uses."""

    def base_text(self, source: str, base: Base) -> tuple[str, Snapshot]: ...


def plan(
    engine: EngineCalls, store: BaseTexts, request: WriteRequest, recent: RecentTexts | None = None
) -> Planned:
    """Everything up to (not including) the store step; raises ``Blocked``/``Conflict``.

    ``recent`` (texts this server handed out) lets a conflict show a diff when
    the store itself no longer knows the agent's base text.
    """
    check_size(_argument_chars(request.args), "the text in this change")
    try:
        base_text, current = store.base_text(request.source, request.base)
    except Conflict as exc:
        known = recent.text(request.source, request.base.checksum) if recent else None
        raise _conflict(exc, known, request, recent) from None
    for text in (base_text, current.text):  # stores bound their texts; the engine relies on it
        check_size(len(text), "the plan")
    args = _with_status_code(request)
    sets_prod = request.verb == "setStatus" and args.get("status") == "^"
    if sets_prod and not request.allow_prod:
        raise Blocked(
            "an agent does not set [^] (in production) on its own; pass allowProd: true "
            "only if a human asked for it",
            nodes=[str(args.get("id"))],  # as the agent named it: an id or L<line>
            flag="allowProd",
        )
    payload: dict[str, Any] = {
        "text": base_text,
        "verb": request.verb,
        "args": args,
        "limit": MAX_TEXT_CHARS,
    }
    if current.text != base_text:
        payload["current"] = current.text
    out = engine.call("edit", payload)
    if "error" in out:  # an unknown id (with didYouMean), a result over the limit
        raise from_json(out["error"])
    change = guard.check(
        guard.Delta.from_json(out["change"]),
        allow_warnings=request.allow_warnings,
        allow_prod=request.allow_prod,
    )
    expected = out["text"]
    merged = out.get("merged")
    if merged is not None:
        if merged.get("conflict"):
            raise _conflict(conflict(request.source, current), base_text, request, recent)
        guard.check(
            guard.Delta.from_json(merged["change"]),
            allow_warnings=request.allow_warnings,
            allow_prod=request.allow_prod,
            what="merging your change into the current version",
        )
        expected = merged["text"]
        change = guard.Delta.from_json(merged["fromBase"])
    return Planned(
        request=request,
        base_text=base_text,
        current=current,
        new_text=out["text"],
        expected_text=expected,
        ops=tuple(out["ops"]),
        delta=change,
    )


def store_planned(
    engine: EngineCalls, store: Store, planned: Planned, recent: RecentTexts | None = None
) -> WriteResult:
    """The store step, and the result that describes what the store now holds."""
    request = planned.request
    if not planned.ops:
        # Nothing changes: no write, no new version, same base.
        return _result(planned, planned.current, planned.delta)
    try:
        stored = store.write(
            request.source,
            request.base,
            list(planned.ops),
            planned.new_text,
            author=request.author,
        )
    except Conflict as exc:
        raise _conflict(exc, planned.base_text, request, recent) from None
    if recent is not None:
        recent.remember(request.source, stored)
    change = planned.delta
    findings: tuple[str, ...] = ()
    if stored.text != planned.expected_text:
        change = guard.Delta.from_json(
            engine.call("delta", {"base": planned.base_text, "text": stored.text})
        )
        findings = (_unguarded_merge(planned, change),)
    return attrs.evolve(_result(planned, stored, change), findings=findings)


def _unguarded_merge(planned: Planned, stored: guard.Delta) -> str:
    """What to tell the agent when the store merged in a change this server never saw
    (a co-editor's edit that reached the backend between the server's read and its
    write): the guard rails ran on the merge the server expected, so say plainly
    whether the text now stored breaks one of them."""
    request = planned.request
    said = (
        "the backend merged in a change made after this server's check (see merged), so "
        "the guard rails did not see the text it stored"
    )
    try:
        guard.check(
            stored,
            allow_warnings=request.allow_warnings,
            allow_prod=request.allow_prod,
        )
    except Blocked as exc:
        broken = exc.details.get("warnings") or exc.details.get("nodes") or []
        what = ", ".join(
            item if isinstance(item, str) else f"{item.get('type')} (line {item.get('line')})"
            for item in broken
        )
        return f"{said}: it now has {what}, which this write would have been refused for; fix it"
    return f"{said}; it breaks none of them"


def _result(planned: Planned, snapshot: Snapshot, change: guard.Delta) -> WriteResult:
    """The result for ``snapshot``: the diff is the agent's own change; anything
    else the snapshot holds was merged in, and ``merged`` shows it."""
    name = _name(planned.request.source)
    return WriteResult(
        base=snapshot.base,
        lines=snapshot.lines,
        ops=planned.ops,
        diff=unified(planned.base_text, planned.new_text, name),
        warnings=change,
        merged=(
            unified(planned.new_text, snapshot.text, name)
            if snapshot.text != planned.new_text
            else None
        ),
    )


def _conflict(
    error: Conflict, base_text: str | None, request: WriteRequest, recent: RecentTexts | None
) -> Conflict:
    """A store's conflict as the agent gets it; its current text is remembered, since the
    agent's retry will name that base."""
    current = error.details.get("current")
    if recent is not None and isinstance(current, dict) and isinstance(current.get("text"), str):
        checksum = current["base"]["checksum"]
        snapshot = Snapshot(current["text"], Base(checksum, current["base"].get("version")))
        recent.remember(request.source, snapshot)
    return explained(error, base_text, _name(request.source), _line_refs(request))


def status_code(value: Any) -> str | None:
    """A status as the notation writes it: a box code, an English alias (``done``,
    ``in-progress`` …, any case) or ``X``, else ``invalid_argument``; ``None`` stays (no box)."""
    if value is None or value in STATUS_CODES:
        return value  # type: ignore[no-any-return]
    if value == "X":
        return "x"
    code = STATUS_ALIASES.get(str(value).strip().lower())
    if code is None:
        raise InvalidArgument(
            f"unknown status {value!r}; use one of {' '.join(STATUS_CODES)} "
            f"(or {', '.join(STATUS_ALIASES)}), a space for planned, or null",
        )
    return code


def _with_status_code(request: WriteRequest) -> dict[str, Any]:
    """The verb's arguments, a ``setStatus`` status as its box code: the Python API takes
    the tools' aliases too, and the ``[^]`` guard must see ``prod`` as what it is."""
    if request.verb != "setStatus" or "status" not in request.args:
        return request.args
    return {**request.args, "status": status_code(request.args["status"])}


def _line_refs(request: WriteRequest) -> list[str]:
    """The ``L<line>`` refs among the node arguments of a verb: lines of the agent's base."""
    named = (request.args.get(key) for key in ("id", "parent", "after"))
    return [value for value in named if isinstance(value, str) and LINE_REF.fullmatch(value)]


def _argument_chars(value: Any) -> int:
    """Characters of every string in a verb's arguments: all of them end up in the new
    text, so a sum over the limit is a new text over the limit."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_argument_chars(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_argument_chars(v) for v in value)
    return 0


def write(
    engine: EngineCalls,
    store: Store,
    request: WriteRequest,
    checkpoint: Callable[[], None] = lambda: None,
    recent: RecentTexts | None = None,
) -> WriteResult:
    """Run one write request through the whole pipeline.

    ``checkpoint`` runs right before the store step and may raise (a cancelled
    call): up to there nothing has been written; from there on the write completes.
    ``recent`` remembers the texts handed out, so that a conflict can say what changed.
    """
    planned = plan(engine, store, request, recent)
    if request.dry_run:
        # The base the real write is to name: the store's own for the text the agent
        # named (a forged version on a file is not handed back as if it were real);
        # an older base a document store merges from stays the agent's.
        current = planned.current.base
        same = current.checksum == request.base.checksum
        expected = Snapshot(planned.expected_text, current if same else request.base)
        return attrs.evolve(
            _result(planned, expected, planned.delta),
            lines=expected.lines,
            dry_run=True,
        )
    checkpoint()
    return store_planned(engine, store, planned, recent)


def create(
    engine: EngineCalls,
    store: Creates,
    request: WriteRequest,
    checkpoint: Callable[[], None] = lambda: None,
    recent: RecentTexts | None = None,
) -> WriteResult:
    """Create a new plan (``request.verb == "write"``, base :data:`NEW_PLAN`): the name is
    checked first (a taken name is ``conflict`` with the existing plan's base), then the
    text goes through the guard as a change from the empty text, then the store creates
    it; a racing creator makes that step ``conflict`` too."""
    if request.verb != "write" or request.base != NEW_PLAN:
        raise InvalidArgument("a new plan is created from a whole text (werkbaum_write)")
    try:
        store.check_new(request.source)
    except Conflict as exc:
        raise exists(exc) from None
    planned = plan(engine, _NewPlan(), request, recent)
    if request.dry_run:
        empty = Snapshot(planned.new_text, NEW_PLAN)
        return attrs.evolve(_result(planned, empty, planned.delta), base=None, dry_run=True)
    checkpoint()
    try:
        stored = store.create(request.source, planned.new_text)
    except Conflict as exc:
        raise exists(exc) from None
    if recent is not None:
        recent.remember(request.source, stored)
    return _result(planned, stored, planned.delta)


@attrs.frozen
class _NewPlan:
    """A plan still to be created, as :func:`plan` sees it: its base text is empty
    (:func:`create` does the store step)."""

    def base_text(self, source: str, base: Base) -> tuple[str, Snapshot]:
        return "", Snapshot("", NEW_PLAN)


def _name(source: str) -> str:
    return source.rsplit("/", 1)[-1] or "plan"
