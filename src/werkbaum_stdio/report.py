"""``werkbaum inspect``: an analysis laid out for reading in a terminal of a given width.

Every fact shown is the engine's (tree, effective status, assumed sizes,
warnings, the cheapest path and its loads); this module only draws it. Each
child shows its gate as written — ``-`` all of, ``|`` any of, ``=`` exactly
one, ``+`` optional — so an any-of group never reads like an all-of one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from werkbaum_core.model import LINE_REF, Analysis, AssigneeLoads, Node, Number, Summary
from werkbaum_stdio.diagnostics import ERROR, Diagnostic
from werkbaum_stdio.terminal import cells, wrap

GATE_CHARS = {"or": "|", "xor": "="}
STATION = "◀ station"
ON_PATH = "·"
NOTES = "¶"
KEY = (
    "Key:",
    "- all of,",
    "| any of,",
    "= exactly one,",
    "+ optional;",
    "→ depends on;",
    "¶ has notes;",
    "!!! focus;",
    "(+N below) not drawn;",
    "· on the cheapest path;",
    "◀ station (its open front);",
    "[a]→[b] effective status;",
    "(~M) assumed size;",
    "size points:",
    "XS=1",
    "S=2",
    "M=3",
    "L=4",
    "XL=5",
    "XXL=6.",
)
"""The legend, in units that wrap as a whole."""


def _gate(node: Node) -> str:
    if node.optional:
        return "+"
    return GATE_CHARS.get(node.gate, "-")


def _box(node: Node) -> str:
    box = f"[{node.status}]" if node.status is not None else "   "
    if node.effective_status is not None:
        box += f"→[{node.effective_status}]"
    return box


def _units(node: Node, needed: set[str], stations: set[str]) -> list[str]:
    """The node's words and tokens, each an unbreakable unit for wrapping."""
    units = node.label.split()
    if node.size:
        units.append(f"({node.size})")
    elif node.assumed_size:
        units.append(f"(~{node.assumed_size})")
    if node.id:
        units.append(f"#{node.id}")
    units += [f"@{tag}" for tag in node.tags]
    units += [f"&{mark}" for mark in node.marks]
    if node.focus:
        units.append("!!!")
    if node.deps:
        deps = [f"#{dep}" for dep in node.deps]
        units += [f"→ {deps[0]}", *deps[1:]]
    if node.desc:
        units.append(NOTES)
    if node.descendants:
        units.append(f"(+{_count(node.descendants, 'node')} below)")
    if node.ref in stations:
        units.append(STATION)
    elif node.ref in needed:
        units[-1] += f" {ON_PATH}"  # a lone dot on a continuation line would read as noise
    return units


def tree_lines(
    roots: Iterable[Node], needed: set[str], stations: set[str], width: int
) -> list[str]:
    """One node per line (more when its label wraps), indented by depth, the line number
    first; a child shows its gate before its status box."""
    flat: list[tuple[Node, int]] = []
    stack: list[tuple[Node, int]] = [(root, 0) for root in reversed(list(roots))]
    while stack:
        node, depth = stack.pop()
        flat.append((node, depth))
        stack.extend((child, depth + 1) for child in reversed(node.children))
    number_width = max((len(str(node.line)) for node, _ in flat), default=1) + 1
    out: list[str] = []
    for node, depth in flat:
        gate = f"{_gate(node)} " if depth else ""
        head = f"{'L' + str(node.line):>{number_width}}  {'  ' * depth}{gate}{_box(node)} "
        out += wrap(_units(node, needed, stations), head, " " * len(head), width)
    return out


def _loads_lines(loads: AssigneeLoads, width: int) -> list[str]:
    """The load heading, then one row per person: size points, share, stations."""
    total = loads.total
    heading = f"Load: {_points(total)} of open work on the cheapest path"
    rows: list[tuple[str, Number, str]] = [
        (f"@{tag}", load, _count(loads.stations.get(tag, 0), "station"))
        for tag, load in sorted(loads.loads.items(), key=lambda kv: -kv[1])
    ]
    unassigned = total - sum(loads.loads.values())
    if unassigned > 0:
        rows.append(("unassigned", unassigned, ""))
    name_width = max(cells(name) for name, _, _ in rows)
    number_width = max(len(f"{load:g}") for _, load, _ in rows)
    out = wrap(heading.split(), "", "  ", width)
    for name, load, stations in rows:
        unit = "size point" if load == 1 else "size points"
        columns = [
            f"{_padded(name, name_width)} ",
            f"{load:>{number_width}g} {unit:<11} ",
            f"{_share(load, total):>4} ",
            stations,
        ]
        out += [row.rstrip() for row in wrap([c for c in columns if c], "  ", "    ", width)]
    return out


def _padded(text: str, width: int) -> str:
    """``text`` filled to ``width`` terminal cells: a name in wide characters (``@山田``)
    takes two cells a character, and ``str.ljust`` counting characters misaligned the
    columns after it."""
    return text + " " * (width - cells(text))


def _share(load: Number, total: Number) -> str:
    return f"{round(load / total * 100)}%"


def _points(value: Number) -> str:
    return f"{value:g} size point" + ("" if value == 1 else "s")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _narrowed(analysis: Analysis) -> list[str]:
    """What ``--depth`` and ``--hide-done`` left out of the tree, said under it."""
    notes = []
    if analysis.cut:
        below = sum(n.descendants for n in analysis.nodes())
        notes.append(
            f"(--depth {analysis.cut.depth}: {_count(below, 'node')} below "
            f"{_count(analysis.cut.nodes, 'cut node')} not drawn)"
        )
    if analysis.hidden:
        hidden = analysis.hidden
        notes.append(
            f"(--hide-done: {_count(hidden.subtrees, 'subtree')} of {_count(hidden.nodes, 'node')} "
            "done, in production or discarded, not drawn)"
        )
    return ["", *notes] if notes else []


def _match_lines(where: str, total: int, matches: Sequence[Summary], width: int) -> list[str]:
    """``--find``: how many nodes match, then each as it would be picked and acted on."""
    counted = f"{total:,} " + ("match" if total == 1 else "matches")
    listed = "" if total == len(matches) else f", the first {len(matches):,} listed"
    out = [*wrap(f"{where}: {counted}{listed}".split(" "), "", "  ", width), ""]
    line_width = max((len(str(s.line)) for s in matches), default=1) + 1
    for s in matches:
        box = f"[{s.status}]" if s.status is not None else "   "
        if s.effective_status is not None:
            box += f"→[{s.effective_status}]"
        size = f"({s.size})" if s.size else f"(~{s.assumed_size})" if s.assumed_size else ""
        units = [*s.label.split(), *([size] if size else []), s.ref]
        units += [f"@{a}" for a in s.assignees]
        head = f"{'L' + str(s.line):>{line_width}}  {box} "
        out += wrap(units, head, " " * len(head), width)
    return out


def _ref(node: str) -> str:
    """How the report names the ``--id`` it was given: ``#id`` (one ``#``), or ``L<line>``."""
    return node if node.startswith("#") or LINE_REF.fullmatch(node) else f"#{node}"


def _place(d: Diagnostic) -> str:
    if d.line is None:
        return ""
    return f"L{d.line}:{d.column}: " if d.column is not None else f"L{d.line}: "


def inspect_report(
    name: str,
    analysis: Analysis,
    diagnostics: Sequence[Diagnostic],
    width: int,
    subtree: str | None = None,
) -> list[str]:
    """The readable ``werkbaum inspect`` output: tree, path summary, load, warnings, key.

    The warnings are those the engine listed (at most 1,000, ``warningsCut`` says how many
    there are), as ``--json`` and the tools have them."""
    nodes = analysis.nodes()
    plan = analysis.path
    needed = set(plan.needed) if plan else set()
    stations = list(plan.stations) if plan else []
    ref = _ref(subtree) if subtree else ""
    scope = f" {ref}" if subtree else ""
    cut = analysis.warnings_cut
    total = cut.total if cut else len(diagnostics)
    errors = sum(d.severity == ERROR for d in diagnostics)
    errors += sum(u.count for u in cut.unlisted if u.structural) if cut else 0
    if analysis.matches is not None:
        return _match_lines(f"{name}{scope}", analysis.matches.total, analysis.matches.nodes, width)
    left_out = sum(n.descendants for n in nodes) + (analysis.hidden.nodes if analysis.hidden else 0)
    drawn = f" ({len(nodes):,} drawn)" if left_out else ""
    counted = [_count(len(nodes) + left_out, "node") + drawn, _count(total - errors, "warning")]
    if errors:  # as check says it: an error is a structural warning
        counted.insert(1, _count(errors, "error"))
    heading = f"{name}{scope}: {', '.join(counted)}"
    out = [*wrap(heading.split(" "), "", "  ", width), ""]
    if not nodes and not total and not left_out:  # nothing to draw, nothing to explain
        return [*out, "(no nodes: the plan is empty)"]
    out += tree_lines(analysis.tree or (), needed, set(stations), width)
    out += _narrowed(analysis)
    if plan is not None:
        exactness = "exact" if plan.exact else "approximate (too many coupled choices)"
        where = f" within {ref}" if subtree else ""
        summary = (
            f"Cheapest path{where}: {_count(len(plan.needed), 'node')} needed, "
            f"{_count(len(stations), 'station')}, {exactness}"
        )
        out += ["", *wrap(summary.split(), "", "  ", width)]
        label_of = {n.ref: n.label for n in nodes}
        if analysis.stations:  # a station below a cut or in a hidden subtree: its summary's
            label_of.update((s.ref, s.label) for s in analysis.stations.nodes)
        ref_width = max((cells(ref) for ref in stations), default=0)
        for ref in stations:
            head = f"  {STATION[0]} {_padded(ref, ref_width)}  "
            out += wrap(label_of.get(ref, "").split(), head, " " * cells(head), width)
        if plan.assignee_loads.loads and plan.assignee_loads.total:
            out += _loads_lines(plan.assignee_loads, width)
    if diagnostics:
        out += ["", "Warnings:"]
        for d in diagnostics:
            head = f"  {_place(d)}{d.severity} {d.type}: "
            out += wrap(d.message.split(), head, "      ", width)
        listed = len(diagnostics)
        if total > listed:  # the engine lists the first 1,000, as to the tools
            note = f"… and {total - listed:,} more (the first {listed:,} are listed)"
            out += wrap(note.split(), "  ", "    ", width)
    out += ["", *wrap(KEY, "", "     ", width)]
    return out
