"""Value types of an analysis, as the engine's facade returns it (spec §5.1).

The JSON field names are camelCase (what agents see); the Python names are
snake_case. :mod:`werkbaum_core.convert` maps between the two and omits
default-valued fields, so ``unstructure(structure(json)) == json``.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

LINE_REF = re.compile(r"L[1-9][0-9]*")
"""How results name a node without an id of its own (spec §5.1 refs): ``L<line>``, the
line its text starts on. It holds for the text it came from only."""

Number = int | float
"""Loads can be fractions (a station shared by two owners); totals are integers."""


@attrs.frozen(kw_only=True)
class Node:
    id: str | None = None
    label: str
    line: int
    gate: str = "and"
    optional: bool = False
    status: str | None = None
    effective_status: str | None = None
    """Only where it differs from ``status``, as in the JSON: the status that counts is
    ``effective_status or status``."""
    size: str | None = None
    assumed_size: str | None = None
    size_conflict: bool = False
    tags: tuple[str, ...] = ()
    marks: tuple[str, ...] = ()
    deps: tuple[str, ...] = ()
    desc: str | None = None
    fold: str | None = None
    focus: bool = False
    url: str | None = None
    taiga_slug: str | None = None
    ticket_ref: str | None = None
    path_ref: str | None = None
    """``ref`` in the JSON: only where the path does not name the node ``#id`` (an id
    an earlier node already carries)."""
    children: tuple[Node, ...] = ()
    descendants: int = 0
    """Set where a depth cut took the children away: how many nodes are below."""

    @property
    def ref(self) -> str:
        """How the path refers to this node (engine contract): the ref the engine gave
        it, else ``#id``, else ``L<line>``."""
        if self.path_ref is not None:
            return self.path_ref
        return f"#{self.id}" if self.id else f"L{self.line}"

    def walk(self) -> list[Node]:
        """This node and its descendants in document order."""
        out: list[Node] = []
        stack = [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out


@attrs.frozen
class Warning:
    """One warning: ``type``, optional ``line``, the English ``text``, and its fields.

    ``fields`` holds the type-specific data (``code``, ``label``, ``id``,
    ``firstLine``, ``size``, ``tag``, ``share``…) under their JSON names.
    """

    type: str
    text: str
    structural: bool
    line: int | None = None
    fields: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class AssigneeLoads:
    loads: dict[str, Number] = attrs.field(factory=dict)
    total: Number = 0
    stations: dict[str, int] = attrs.field(factory=dict)
    total_stations: int = 0


@attrs.frozen
class Overload:
    tag: str
    share: Number
    stations: int
    total_stations: int


@attrs.frozen
class Path:
    needed: tuple[str, ...] = ()
    stations: tuple[str, ...] = ()
    exact: bool = True
    assignee_loads: AssigneeLoads = attrs.field(factory=AssigneeLoads)
    overloaded_assignee: Overload | None = None


@attrs.frozen(kw_only=True)
class Summary:
    """A node in a list (stations, matches): enough to pick it and to act on it."""

    ref: str
    """``#id``, or ``L<line>`` for a node without an id; ``id`` accepts either."""
    line: int
    label: str
    status: str | None = None
    effective_status: str | None = None
    size: str | None = None
    assumed_size: str | None = None
    assignees: tuple[str, ...] = ()
    """The node's owners (notation §14): its own ``@person`` tags, else those of its
    nearest ancestor that has some; the people the load per person counts it for."""


@attrs.frozen
class Stations:
    """The cheapest path's open front (notation §13.3) in document order."""

    exact: bool = True
    nodes: tuple[Summary, ...] = ()


@attrs.frozen
class Matches:
    """The nodes a ``find`` matched: the first ``MAX_MATCHES`` of ``total``."""

    total: int = 0
    nodes: tuple[Summary, ...] = ()


@attrs.frozen
class Cut:
    """The tree stops at level ``depth``; ``nodes`` nodes there carry ``descendants``."""

    depth: int
    nodes: int


@attrs.frozen
class Unlisted:
    """The warnings of one type that a cut left out."""

    type: str
    count: int
    structural: bool
    """The type blocks a write that introduces it (spec §6), as ``Warning.structural``."""


@attrs.frozen
class WarningsCut:
    """More warnings than an answer lists (only pathological texts have them): the first
    ``listed`` of ``total`` are in ``warnings``, the others are counted in ``unlisted``."""

    listed: int
    total: int
    unlisted: tuple[Unlisted, ...] = ()
    """The left-out warnings by type, in the order of their types' first appearance."""


@attrs.frozen
class Hidden:
    """What ``hide_done`` left out: done, in-production or discarded subtrees."""

    subtrees: int
    nodes: int


@attrs.frozen(kw_only=True)
class View:
    """How an analysis is shaped beyond ``id`` and ``include`` (the inspect options).

    Part of the analysis cache key, so every field is hashable.
    """

    find: str | None = None
    """Nodes whose label, id and owners (own or inherited people) contain every word,
    case-insensitive."""
    depth: int | None = None
    """Tree levels below the roots (or the ``id`` node); deeper nodes are cut."""
    hide_done: bool = False
    """Leave out subtrees whose effective status is done, in production or discarded."""
    hide_desc: bool = False
    """Leave out the nodes' descriptions (``desc``): an overview at about 40% of the
    characters (inspect a node's ``id`` without it for its description)."""
    max_depth: int | None = None
    """A nesting limit of the caller's transport; it cuts like ``depth``."""
    columns: bool = False
    """Give each warning the ``column`` (1-based, in characters) where its token is
    written on its line (a mixed gate: on the sibling's line), for diagnostics."""
    every_warning: bool = False
    """List every warning, not the first 1,000 (``warningsCut``, which counts the rest
    by type): for a program that needs each one; never for an agent."""

    def payload(self) -> dict[str, Any]:
        """The facade's names for the options that are set."""
        out: dict[str, Any] = {}
        if self.find is not None:
            out["find"] = self.find
        if self.depth is not None:
            out["depth"] = self.depth
        if self.hide_done:
            out["hideDone"] = True
        if self.hide_desc:
            out["hideDesc"] = True
        if self.max_depth is not None:
            out["maxDepth"] = self.max_depth
        if self.columns:
            out["columns"] = True
        if self.every_warning:
            out["everyWarning"] = True
        return out


@attrs.frozen(kw_only=True)
class Analysis:
    """What ``werkbaum_inspect`` reports; parts not asked for are None."""

    tree: tuple[Node, ...] | None = None
    warnings: tuple[Warning, ...] | None = None
    path: Path | None = None
    stations: Stations | None = None
    matches: Matches | None = None
    cut: Cut | None = None
    hidden: Hidden | None = None
    warnings_cut: WarningsCut | None = None

    def nodes(self) -> list[Node]:
        """Every node of the tree in document order."""
        return [n for root in self.tree or () for n in root.walk()]
