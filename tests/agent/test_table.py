"""The README's "Working with agents" table is rendered from the numbers the task suite
measured (``measured.json``), so the two cannot drift apart: a changed result size fails
the suite until the numbers are refreshed, and then this test until the README is."""

from __future__ import annotations

import os

from tests.agent.tasks import BY_KEY, UPDATE, recorded, tokens
from tests.conftest import REPO

README = REPO / "README.md"
BEGIN = "<!-- agent-tasks: rendered from tests/agent/measured.json by tests/agent/test_table.py -->"
END = "<!-- /agent-tasks -->"


def cell(numbers: dict[str, dict[str, int]], key: str) -> str:
    if key not in numbers:
        return "stdio only"
    task = BY_KEY[key]
    chars = numbers[key]["chars"] + (numbers[task.after]["chars"] if task.after else 0)
    in_all = " in all" if task.after else ""
    return f"{chars:,}{in_all} ≈ {tokens(chars):,}"


def table() -> str:
    data = recorded()
    head = "| task | calls | budget (tokens) | stdio: chars ≈ tokens | HTTP: chars ≈ tokens |"
    rows = [head, "|---|---|---|---|---|"]
    for key, task in BY_KEY.items():
        calls = f"{task.calls} more" if task.after else str(task.calls)
        if task.tokens is None:
            budget = "(the guide)"
        else:
            budget = f"≤ {task.tokens:,}" + (" in all" if task.after else "")
        stdio, http = cell(data["stdio"], key), cell(data["http"], key)
        rows.append(f"| {task.name} | {calls} | {budget} | {stdio} | {http} |")
    return "\n".join([BEGIN, *rows, END])


def test_the_readme_table_shows_the_measured_numbers() -> None:
    text = README.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    if os.environ.get(UPDATE):
        text = text[:start] + table() + text[end:]
        README.write_text(text, encoding="utf-8")
    assert text[start : start + len(table())] == table()
