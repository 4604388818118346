"""Terminal renderings of an analysis for the human CLI (``check`` and ``inspect``)."""

from __future__ import annotations

from collections.abc import Iterable

from werkbaum_core.model import Analysis, Node, Warning


def diagnostic(path: str, warning: Warning) -> str:
    """Compiler-style ``file:line: type: text`` (``file: type: text`` without a line)."""
    where = f"{path}:{warning.line}" if warning.line is not None else path
    return f"{where}: {warning.type}: {warning.text}"


def _node_line(node: Node, needed: set[str], stations: set[str]) -> str:
    box = f"[{node.status}]" if node.status is not None else "   "
    if node.effective_status is not None:
        box += f"→[{node.effective_status}]"
    parts = [box, node.label]
    if node.size:
        parts.append(f"({node.size})")
    elif node.assumed_size:
        parts.append(f"(~{node.assumed_size})")
    if node.id:
        parts.append(f"#{node.id}")
    parts.extend(f"@{tag}" for tag in node.tags)
    if node.ref in stations:
        parts.append("◀ station")
    elif node.ref in needed:
        parts.append("·")
    return " ".join(parts)


def tree_lines(roots: Iterable[Node], needed: set[str], stations: set[str]) -> list[str]:
    """One line per node, indented by depth; ``·`` marks the cheapest path, ``◀`` its stations."""
    out: list[str] = []
    stack: list[tuple[Node, int]] = [(root, 0) for root in reversed(list(roots))]
    while stack:
        node, depth = stack.pop()
        out.append(f"{'  ' * depth}L{node.line:<4} {_node_line(node, needed, stations)}")
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return out


def inspect_report(path: str, analysis: Analysis) -> list[str]:
    """The readable ``werkbaum inspect`` output: tree, path summary, load, warnings."""
    nodes = analysis.nodes()
    warnings = analysis.warnings or ()
    plan = analysis.path
    needed = set(plan.needed) if plan else set()
    stations = list(plan.stations) if plan else []
    out = [f"{path}: {len(nodes)} nodes, {len(warnings)} warnings", ""]
    out += tree_lines(analysis.tree or (), needed, set(stations))
    if plan is not None:
        label_of = {n.ref: n.label for n in nodes}
        exactness = "exact" if plan.exact else "approximate (too many coupled choices)"
        out += [
            "",
            f"Cheapest path: {len(plan.needed)} nodes needed, "
            f"{len(stations)} stations, {exactness}",
        ]
        out += [f"  {ref}  {label_of.get(ref, '')}" for ref in stations]
        loads = plan.assignee_loads
        if loads.loads and loads.total:
            shares = ", ".join(
                f"@{tag} {round(load / loads.total * 100)}%"
                for tag, load in sorted(loads.loads.items(), key=lambda kv: -kv[1])
            )
            out.append(f"Load: {shares} of {loads.total:g}")
    if warnings:
        out += ["", "Warnings:"] + [f"  {diagnostic(path, w)}" for w in warnings]
    return out
