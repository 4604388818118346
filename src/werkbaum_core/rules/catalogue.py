"""The tool catalogue: names, titles, descriptions, schemas, annotations and
handlers of the ten tools (spec §5), free of any MCP or transport code.

An adapter registers these specs on its MCP server and supplies
:class:`Services` — the engine, a source resolver over its own stores, the
guide, the plan-file listing where it has files, and an audit sink. A handler
takes the validated arguments and the caller's :class:`Caller` and returns the
JSON result, or raises a typed :class:`~werkbaum_core.errors.WerkbaumError`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import attrs

from werkbaum_core.calls import Owner
from werkbaum_core.errors import InvalidArgument, NotFound, TooLarge, WerkbaumError
from werkbaum_core.guide import GUIDE_URI, bundled_guide
from werkbaum_core.in_flight import MIRROR, Commitment, Stopping, WritesInFlight
from werkbaum_core.model import View
from werkbaum_core.rules import schemas as s
from werkbaum_core.rules.conflicts import RecentTexts
from werkbaum_core.rules.pipeline import NEW_PLAN, WriteRequest, create, status_code, write
from werkbaum_core.rules.plan_hints import with_plan_hints
from werkbaum_core.rules.result import JSONObject, ToolResult
from werkbaum_core.stores.protocol import Base, Creates, Store
from werkbaum_core.text import MAX_TEXT_CHARS, check_source_length

MAX_TREE_DEPTH = 63
"""The deepest tree level an inspect answers (64 levels of nodes). A legal plan nests up
to ~2,000 levels, but the SDK's pydantic serialisation gives up past ~126 tree levels
(each is two JSON levels, node and children list; ``model_dump_json`` raises "Maximum
serialization depth exceeded"), and so do the official clients' parsers. Cutting at 63
leaves room for the envelope; a cut node says how many descendants it has."""


class Analyzer(Protocol):
    """The part of the engine the tools use."""

    def analysis_text(
        self,
        text: str,
        *,
        id: str | None = None,
        include: Sequence[str] | None = None,
        view: View | None = None,
    ) -> str: ...

    def call(self, entry: str, payload: Any) -> Any: ...

    def interrupt(self, owner: Owner) -> bool: ...


@attrs.frozen
class Resolved:
    """A source resolved by an adapter: its store, the key that store knows it by,
    and (for a mirror file) the document a write is redirected to."""

    store: Store
    key: str
    redirected_to: str | None = None


class Sources(Protocol):
    def resolve(self, source: str) -> Resolved:
        """Map a source string to a store, or raise ``ForbiddenSource``/``InvalidArgument``."""
        ...


class ListedPlan(Protocol):
    """One plan file of a listing page: the source to pass back, its line count (None:
    over the size limit)."""

    @property
    def source(self) -> str: ...

    @property
    def lines(self) -> int | None: ...


class PlanPage(Protocol):
    @property
    def plans(self) -> Sequence[ListedPlan]: ...

    @property
    def next_cursor(self) -> str | None: ...


class PlanFiles(Protocol):
    """The plan files under an adapter's roots, page by page (``werkbaum_list``)."""

    def list_plans(self, cursor: str | None = None, *, limit: int = ..., lines: bool = ...) -> Any:
        """A :class:`PlanPage`; ``InvalidArgument`` for a cursor it did not hand out."""
        ...


@attrs.frozen
class Caller:
    """Who is calling, for documents' ``displayName`` and the audit line (a claim, not proof)."""

    display_name: str = "Agent"
    request_id: str | None = None
    """The JSON-RPC request id of the tool call."""
    http_request_id: str | None = None
    """The ``X-Request-Id`` header of the HTTP request that carried the call, if any."""


@attrs.frozen
class Services:
    engine: Analyzer
    sources: Sources
    audit: Callable[[JSONObject], None] = lambda event: None
    after_write: Callable[[Resolved, JSONObject, Caller], JSONObject | None] | None = None
    """Adapter hook run after a successful write (the git mirror); its answer
    becomes the result's ``mirror`` field."""
    checkpoint: Callable[[], None] = lambda: None
    """Raises if the call was cancelled; consulted right before the store step."""
    recent: RecentTexts = attrs.field(factory=RecentTexts)
    """The texts this server handed out, so that a conflict can show what changed."""
    guide: Callable[[], str] = bundled_guide
    """The notation guide, which ``werkbaum_read`` serves as ``werkbaum://guide``."""
    plan_files: PlanFiles | None = None
    """The plan files ``werkbaum_list`` lists; None where there are none (HTTP)."""
    writes: WritesInFlight = attrs.field(factory=WritesInFlight)
    """Where writes past their store step are registered, so that a stop signal waits
    for them (the stdio server passes the process's :data:`~werkbaum_core.in_flight.WRITES`)."""


Handler = Callable[[Services, JSONObject, Caller], JSONObject | ToolResult]


@attrs.frozen
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: s.Schema
    output_schema: s.Schema
    handler: Handler
    read_only: bool
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = True
    files_only: bool = False
    """Offered only where there are plan files (stdio): a listing of them."""

    def annotations(self) -> JSONObject:
        """The MCP tool annotations, camelCase as on the wire."""
        out: JSONObject = {"title": self.title, "readOnlyHint": self.read_only}
        if not self.read_only:
            out["destructiveHint"] = self.destructive
            out["idempotentHint"] = self.idempotent
        out["openWorldHint"] = self.open_world
        return out

    def call(self, services: Services, arguments: JSONObject, caller: Caller) -> ToolResult:
        """Run the handler on validated arguments; the result in both of its forms."""
        if self.read_only:  # a write is refused inside its handler, which audits it
            services.writes.refuse_if_stopping()
        try:
            result = self.handler(services, arguments, caller)
        except NotFound as exc:
            raise with_plan_hints(exc, services.plan_files) from None
        return result if isinstance(result, ToolResult) else ToolResult.of(result)


# ------------------------------------------------------------------ read tools


def _resolve(services: Services, source: str) -> Resolved:
    """The store of a plan source; the guide is no plan (only ``werkbaum_read`` takes it).

    A source over the length of any real one is refused before a resolver may quote
    it whole in its error."""
    check_source_length(source)
    if source == GUIDE_URI:
        raise InvalidArgument(
            f"{GUIDE_URI} is the notation guide, not a plan: read it with werkbaum_read",
            source=source,
        )
    return services.sources.resolve(source)


def _read(services: Services, args: JSONObject, caller: Caller) -> JSONObject:
    if args["source"] == GUIDE_URI:
        # For hosts without resources. No base: the guide is not written to.
        guide = services.guide()
        return {"text": guide, "lines": guide.count("\n") + 1}
    resolved = _resolve(services, args["source"])
    snapshot = resolved.store.read(resolved.key)
    services.recent.remember(resolved.key, snapshot)
    out = snapshot.to_json()
    if resolved.redirected_to:
        # A mirror file: the agent holds the document's base from now on.
        out["mirrorOf"] = resolved.redirected_to
    return out


def _inspect(services: Services, args: JSONObject, caller: Caller) -> ToolResult:
    has_source, has_text = "source" in args, "text" in args
    if has_source == has_text:
        raise InvalidArgument("give exactly one of source or text")
    if has_source:
        resolved = _resolve(services, args["source"])
        snapshot = resolved.store.read(resolved.key)
        services.recent.remember(resolved.key, snapshot)
        text = snapshot.text
    else:
        text = args["text"]
    view = View(
        find=args.get("find"),
        depth=args.get("depth"),
        hide_done=bool(args.get("hideDone")),
        hide_desc=bool(args.get("hideDesc")),
        max_depth=MAX_TREE_DEPTH,
    )
    analysis = services.engine.analysis_text(
        text, id=args.get("id"), include=args.get("include"), view=view
    )
    _check_answer_size(analysis)
    if has_source:
        return ToolResult.with_first("base", snapshot.base.to_json(), analysis)
    return ToolResult.from_text(analysis)


def _check_answer_size(analysis: str) -> None:
    """The backstop behind the engine's per-list cuts: an answer over the bound is
    refused before it is parsed, validated and sent (each costs several times its size).

    The bound is on what is sent: the JSON goes out twice, as ``structuredContent``
    and as its text content, a JSON string in which every quote and backslash is
    escaped (2.2 times the JSON for a large tree); never more than 3 times it.
    """
    if 3 * len(analysis) <= s.MAX_ANSWER_CHARS:
        return
    sent = 2 * len(analysis) + 2 + analysis.count('"') + analysis.count("\\")
    if sent > s.MAX_ANSWER_CHARS:
        raise TooLarge(
            f"the answer would have {sent:,} characters as sent (its JSON as structured "
            f"content and again as text); the limit is {s.MAX_ANSWER_CHARS:,}: narrow it "
            "with include, id, depth, hideDone or hideDesc",
            limit=s.MAX_ANSWER_CHARS,
            size=sent,
        )


def _list(services: Services, args: JSONObject, caller: Caller) -> JSONObject:
    if services.plan_files is None:  # not offered there; a direct call still gets an answer
        raise InvalidArgument("this server has no plan files, only shared documents")
    page = services.plan_files.list_plans(args.get("cursor"), limit=s.LIST_PAGE, lines=True)
    plans = [
        {"source": plan.source}
        if plan.lines is None
        else {"source": plan.source, "lines": plan.lines}
        for plan in page.plans
    ]
    out: JSONObject = {"plans": plans}
    if page.next_cursor is not None:
        out["nextCursor"] = page.next_cursor
    return out


# ------------------------------------------------------------------ write tools


def _verb_args(verb: str, args: JSONObject) -> JSONObject:
    keys = {
        "setStatus": ("id", "status"),
        "setSize": ("id", "size"),
        "addNode": ("parent", "line", "lines", "after"),
        "moveNode": ("id", "parent", "after"),
        "removeNode": ("id", "discard"),
        "applyOps": ("ops",),
        "write": ("text",),
    }[verb]
    out = {k: args[k] for k in keys if k in args}
    if verb == "addNode" and ("line" in out) == ("lines" in out):
        raise InvalidArgument("give exactly one of line or lines")
    if verb == "setStatus":
        out["status"] = status_code(args.get("status"))
    return out


def _writer(verb: str, tool: str) -> Handler:
    def handle(services: Services, args: JSONObject, caller: Caller) -> JSONObject:
        return _write(services, verb, tool, args, caller)

    return handle


def _write(
    services: Services, verb: str, tool: str, args: JSONObject, caller: Caller
) -> JSONObject:
    started = time.time()
    event: JSONObject = {
        "requestId": caller.request_id,
        # The client chooses its X-Request-Id: 128 characters of it at most.
        "httpRequestId": (caller.http_request_id or "")[:128] or None,
        "tool": tool,
        "source": args.get("source"),
        "displayName": caller.display_name,
    }
    commitment: Commitment | None = None

    def checkpoint() -> None:
        # Right before the store step: from here on the write completes, also when
        # the process is told to stop (it then waits for this write's audit line).
        nonlocal commitment
        services.checkpoint()
        commitment = services.writes.begin(event, services.audit, started)

    try:
        services.writes.refuse_if_stopping()
        resolved = _resolve(services, args["source"])
        creating = args["base"] is None
        if creating:
            base = NEW_PLAN
            event.update(source=resolved.key, create=True)
        else:
            base = Base(checksum=args["base"]["checksum"], version=args["base"].get("version"))
            event.update(source=resolved.redirected_to or resolved.key, old=base.to_json())
        # A document store writes under its own clientId (spec §7); files have none.
        event["clientId"] = getattr(resolved.store, "client_id", None)
        request = WriteRequest(
            source=resolved.key,
            base=base,
            verb=verb,
            args=_verb_args(verb, args),
            allow_warnings=bool(args.get("allowWarnings")),
            allow_prod=bool(args.get("allowProd")),
            dry_run=bool(args.get("dryRun")),
            author=caller.display_name,
        )
        if creating:
            result = create(
                services.engine, _creator(resolved, verb), request, checkpoint, services.recent
            )
        else:
            result = write(services.engine, resolved.store, request, checkpoint, services.recent)
        if resolved.redirected_to:
            result = attrs.evolve(result, redirected_to=resolved.redirected_to)
        out = result.to_json()
        if not request.dry_run and result.ops and services.after_write is not None:
            event["new"] = out.get("base")
            if commitment is not None:
                commitment.stage = MIRROR
            mirror = services.after_write(resolved, out, caller)
            if mirror is not None:
                out["mirror"] = mirror
        event.update(
            outcome="dryRun" if request.dry_run else "ok",
            new=out.get("base"),
            added=result.warnings.added_total,
            removed=result.warnings.removed_total,
            mirror=out.get("mirror"),
        )
        return out
    except Stopping:  # before the store step: nothing was written (spec §6.5)
        event["outcome"] = "cancelled"
        raise
    except WerkbaumError as exc:
        event["outcome"] = exc.code
        applied = exc.details.get("applied")
        if applied == "unknown" or applied is True:  # the store step may have written
            event["applied"] = applied
        raise
    except BaseException as exc:
        cancelled = type(exc).__name__ in ("CancelledError", "Cancelled", "get_cancelled_exc_class")
        event["outcome"] = "cancelled" if cancelled else "error"
        raise
    finally:
        event["ms"] = round((time.time() - started) * 1000, 1)
        if commitment is None:
            services.audit(event)
        else:
            commitment.audit(event)  # unless a stop signal has written it already
            services.writes.end(commitment)


def _creator(resolved: Resolved, verb: str) -> Creates:
    """The store that creates the plan ``base: null`` asks for: plan files only."""
    if verb != "write":
        raise InvalidArgument("base: null creates a plan: only werkbaum_write takes it")
    if resolved.redirected_to is not None or not isinstance(resolved.store, Creates):
        raise InvalidArgument(
            "base: null creates a plan file; shared documents are created in the Werkbaum "
            "editor — pass the base of your last read",
            source=resolved.redirected_to or resolved.key,
        )
    return resolved.store


# ------------------------------------------------------------------ the catalogue

WRITE_NOTE = " On conflict, redo it on the error's current.base."

_PARENT = {**s.NODE_ID, "description": "Parent id or L<line>; omit for a root."}
_AFTER = {**s.NODE_ID, "description": "Sibling id or L<line> to follow (default: last)."}

CATALOGUE: tuple[ToolSpec, ...] = (
    # In the order an agent works: read, inspect, list, the node verbs, the raw writes.
    ToolSpec(
        name="werkbaum_read",
        title="Read plan",
        description=(
            "Read a Werkbaum plan: its text, base (version, checksum) and line count. "
            "werkbaum://guide: the notation guide."
        ),
        input_schema=s.tool_input({}, [], write=False),
        output_schema=s.READ_OUTPUT,
        handler=_read,
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="werkbaum_inspect",
        title="Inspect plan",
        description=(
            "What the Werkbaum editor computes for a plan (source or text): tree with "
            "status, effective status, sizes; warnings; cheapest path with stations and "
            "per-person load. Narrow it: include stations (what is next), find (a node by "
            "words), depth, hideDone, hideDesc, id (one subtree)."
        ),
        input_schema=s.INSPECT_INPUT,
        output_schema=s.INSPECT_OUTPUT,
        handler=_inspect,
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="werkbaum_list",
        title="List plans",
        description="The plan files under the roots: sources and line counts, by pages.",
        input_schema=s.LIST_INPUT,
        output_schema=s.LIST_OUTPUT,
        handler=_list,
        read_only=True,
        idempotent=True,
        open_world=False,
        files_only=True,
    ),
    ToolSpec(
        name="werkbaum_set_status",
        title="Set node status",
        description=(
            "Set the status box of node #id (a code or alias; null removes the box). "
            "[^] (prod) needs allowProd." + WRITE_NOTE
        ),
        input_schema=s.tool_input(
            {
                "id": s.NODE_ID,
                "status": {
                    "enum": [*s.STATUS_CODES, "X", *s.STATUS_ALIASES, None],
                    "description": "' ' is planned; aliases name the codes; null: no box.",
                },
            },
            ["id", "status"],
            write=True,
        ),
        output_schema=s.WRITE_OUTPUT,
        handler=_writer("setStatus", "werkbaum_set_status"),
        read_only=False,
        idempotent=True,
    ),
    ToolSpec(
        name="werkbaum_set_size",
        title="Set node size",
        description="Set the T-shirt size of node #id (XS…XXL), or null to remove it." + WRITE_NOTE,
        input_schema=s.tool_input(
            {
                "id": s.NODE_ID,
                "size": {"enum": [*s.SIZES, None], "description": "Size, or null to remove it."},
            },
            ["id", "size"],
            write=True,
        ),
        output_schema=s.WRITE_OUTPUT,
        handler=_writer("setSize", "werkbaum_set_size"),
        read_only=False,
        idempotent=True,
    ),
    ToolSpec(
        name="werkbaum_add_node",
        title="Add node",
        description=(
            "Add a node line, or a block of them (lines), as the last children of parent "
            "(omit for roots) or after sibling 'after'." + WRITE_NOTE
        ),
        input_schema=s.tool_input(
            {
                "parent": _PARENT,
                "line": {
                    "type": "string",
                    "minLength": 1,
                    "description": "A node line, no indentation: '- [ ] #auth.token: Check (S)'.",
                },
                "lines": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": s.MAX_BLOCK_LINES,
                    "items": {"type": "string"},
                    "description": (
                        "Instead of line: unindented node lines, each followed by its "
                        "children and '\" ' description lines, indented relative to it."
                    ),
                },
                "after": _AFTER,
            },
            [],
            write=True,
        ),
        output_schema=s.WRITE_OUTPUT,
        handler=_writer("addNode", "werkbaum_add_node"),
        read_only=False,
    ),
    ToolSpec(
        name="werkbaum_move_node",
        title="Move node",
        description=(
            "Move node #id with its subtree and description lines under parent, after "
            "sibling 'after' or last; other lines stay byte-identical." + WRITE_NOTE
        ),
        input_schema=s.tool_input(
            {
                "id": s.NODE_ID,
                "parent": {
                    **s.NODE_ID,
                    "description": "New parent id or L<line>; omit for root level.",
                },
                "after": _AFTER,
            },
            ["id"],
            write=True,
        ),
        output_schema=s.WRITE_OUTPUT,
        handler=_writer("moveNode", "werkbaum_move_node"),
        read_only=False,
        idempotent=True,
    ),
    ToolSpec(
        name="werkbaum_remove_node",
        title="Remove node",
        description="Remove node #id (discard, or delete it with its subtree)." + WRITE_NOTE,
        input_schema=s.tool_input(
            {
                "id": s.NODE_ID,
                "discard": {
                    "type": "boolean",
                    "description": (
                        "true: mark it [-] (deliberately not done); false: delete its "
                        "subtree and its description block."
                    ),
                },
            },
            ["id", "discard"],
            write=True,
        ),
        output_schema=s.WRITE_OUTPUT,
        handler=_writer("removeNode", "werkbaum_remove_node"),
        read_only=False,
        destructive=True,
    ),
    ToolSpec(
        name="werkbaum_apply_ops",
        title="Apply line ops",
        description=(
            "Change plan lines with line ops against the base (insert/replace/delete, "
            "0-based, ascending)." + WRITE_NOTE
        ),
        input_schema=s.tool_input({"ops": s.OPS}, ["ops"], write=True),
        output_schema=s.WRITE_OUTPUT,
        handler=_writer("applyOps", "werkbaum_apply_ops"),
        read_only=False,
        destructive=True,
    ),
    ToolSpec(
        name="werkbaum_write",
        title="Write plan text",
        description=(
            "Replace the plan with a full new text; only the changed lines are sent as a "
            "diff." + WRITE_NOTE
        ),
        input_schema=s.tool_input(
            {
                "base": s.BASE_OR_NEW,
                "text": {
                    "type": "string",
                    "description": f"The whole new plan text (at most {MAX_TEXT_CHARS:,} chars).",
                },
            },
            ["text"],
            write=True,
        ),
        output_schema=s.WRITE_OUTPUT,
        handler=_writer("write", "werkbaum_write"),
        read_only=False,
        destructive=True,
    ),
)


def catalogue(*, read_only: bool = False, files: bool = True) -> tuple[ToolSpec, ...]:
    """The tools an adapter registers; ``read_only`` leaves out every write tool, and
    ``files=False`` (no plan files: HTTP) the plan-file listing."""
    return tuple(
        t for t in CATALOGUE if (t.read_only or not read_only) and (files or not t.files_only)
    )
