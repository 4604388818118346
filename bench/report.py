"""Markdown for a run: machine, the goals (measured vs target), then each section's tables."""

from __future__ import annotations

from collections.abc import Sequence

from bench.results import Section, Table

VERDICT = {True: "met", False: "**missed**", None: "info"}


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [line(headers), "|" + "---|" * len(headers), *(line(r) for r in rows)]


def goals(sections: Sequence[Section]) -> list[str]:
    rows = [
        [goal.goal, goal.measured, goal.target, VERDICT[goal.met]]
        for section in sections
        for goal in section.goals
    ]
    return table(["goal", "measured", "target", "verdict"], rows)


def detail(section: Section) -> list[str]:
    out = [f"### {section.title}", ""]
    for t in section.tables:
        out += [*_table_block(t), ""]
    out += [f"- {note}" for note in section.notes]
    return [*out, ""] if section.notes else out


def _table_block(t: Table) -> list[str]:
    return [f"*{t.title}*", "", *table(t.headers, t.rows)]


def render(
    command: str,
    machine: Sequence[tuple[str, str]],
    sections: Sequence[Section],
    failures: Sequence[str],
    finished: Sequence[tuple[str, str]],
) -> str:
    out = [
        f"## Benchmark run: `{command}`",
        "",
        *table(["machine", "value"], [*machine, *finished]),
    ]
    out += ["", "### Goals", "", *goals(sections), ""]
    if failures:
        out += ["### Sections that failed", "", *(f"- {f}" for f in failures), ""]
    for section in sections:
        out += detail(section)
    return "\n".join(out).rstrip() + "\n"
