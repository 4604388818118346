"""``werkbaum check`` columns on lines with thousands of warnings (round 22, F4).

``columns.js`` indexes each physical line once instead of searching it from its
start for every warning; these tests pin that the columns did not change: against
an independent reading of the rule (the first whole ``:#id``, else ``,#id``, on the
warning's line, else on its first continuation line holding one; columns count
characters), on every executor, and against the output the old search gave
(sha256 of ``werkbaum check``'s stdout, recorded before the change; ``check`` lists a
file's 1,000 findings now, so the whole list is rendered here as it rendered
it: every warning, with columns, through the check's diagnostics and text format).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from tests.cli.scripts import run
from werkbaum_core import Engine
from werkbaum_core.model import View
from werkbaum_stdio import diagnostics as diag
from werkbaum_stdio.formats import text as text_format

ID = re.compile(r"[\w.-]")


def one_line_plan(n: int) -> str:
    """One node line with ``n`` distinct unknown dependencies (the attack's shape)."""
    return "- [ ] A :#" + ",#".join(f"d{i}" for i in range(n)) + "\n"


def chain_plan(n: int) -> str:
    """One logical line over ``n`` continuation lines, one unknown dependency each."""
    return "- [ ] A \\\n" + "".join(f"  :#d{i} \\\n" for i in range(n)) + "  end\n"


def tricky_line_plan(n: int) -> str:
    """Unknown ids that start longer ones written before them (``#d10`` before
    ``#d1``), astral characters before and inside ids, and a second list on a
    continuation line that repeats some ids (the first line's places count)."""
    ids = [f"d{i}" if i % 3 else f"d{i}\U0001d49c" for i in reversed(range(n))]
    first = "- [ ] \U0001f680 A :#" + ",#".join(ids)
    second = "  :#" + ",#".join([*ids[: n // 2], *(f"e{i}" for i in range(n // 2))])
    return first + " \\\n" + second + " \\\n  end\n"


def expected_columns(text: str) -> dict[str, tuple[int, int]]:
    """Per unknown dependency id: (line, column) by the rule, read in Python
    (characters, not UTF-16 units); the logical line starts at line 1."""
    lines = text.split("\n")

    def whole(line: str, token: str) -> int:
        at = line.find(token)
        while at >= 0:
            end = at + len(token)
            if end >= len(line) or not ID.fullmatch(line[end]):
                return at
            at = line.find(token, at + 1)
        return -1

    chain = [i for i, line in enumerate(lines) if i == 0 or lines[i - 1].endswith("\\")]
    out: dict[str, tuple[int, int]] = {}
    for dep in re.findall(r"[:,]#([\w.-]+)", text):
        for index in chain:
            for token, offset in ((":#" + dep, 0), (",#" + dep, 1)):
                at = whole(lines[index], token)
                if at >= 0:
                    out.setdefault(dep, (index + 1, at + offset + 1))
                    break
            if dep in out:
                break
    return out


def columns(engine: Engine, text: str) -> dict[str, tuple[int, int]]:
    analysis = engine.analyze(
        text, include=["warnings"], view=View(columns=True, every_warning=True)
    )
    out: dict[str, tuple[int, int]] = {}
    for w in analysis.warnings or ():
        assert w.type == "unknownDep", w
        out[w.fields["id"]] = (w.fields.get("columnLine", w.line), w.fields["column"])
    return out


@pytest.mark.parametrize(
    "text",
    [one_line_plan(3000), chain_plan(3000), tricky_line_plan(1500)],
    ids=["one line", "continuation chain", "tricky line"],
)
def test_many_warnings_on_one_logical_line_keep_their_columns(engine: Engine, text: str) -> None:
    expected = expected_columns(text)
    assert len(expected) >= 2000
    assert columns(engine, text) == expected


@pytest.mark.parametrize(
    ("text", "old_stdout_sha256"),
    [
        (one_line_plan(2000), "5e42b52b0ea255edca1f74acab577306c07b29fec1143c2cb5ae85a7edf6b040"),
        (chain_plan(2000), "d1725cbdef44d8b9d7fbec0d7bfca5778421621134a0748a89b645668be803a5"),
        (
            tricky_line_plan(1500),
            "e8aceb66ced05de40c5b385761b78bf1a73c8754b88e656b8d3f584783c2859d",
        ),
    ],
    ids=["one line", "continuation chain", "tricky line"],
)
def test_check_output_equals_the_old_search(
    engine: Engine, text: str, old_stdout_sha256: str
) -> None:
    every = View(columns=True, every_warning=True)
    analysis = engine.analyze(text, include=["tree", "warnings"], view=every)
    found = diag.from_analysis("p.werkbaum", analysis)
    assert len(found) > 1000 and analysis.warnings_cut is None
    assert diag.summary(found, 1).startswith("0 errors, ")
    stdout = text_format.render(found, colour=False)
    assert hashlib.sha256(stdout.encode("utf-8")).hexdigest() == old_stdout_sha256


def test_check_lists_the_first_of_them_as_the_whole_list_has_them(
    tmp_path: Path, engine: Engine
) -> None:
    """The command on 1,500 warnings over 1,500 continuation lines: the first 1,000
    exactly as the whole list has them, then the rest counted."""
    text = chain_plan(1500)
    (tmp_path / "p.werkbaum").write_text(text, encoding="utf-8")
    result = run("check", "p.werkbaum", cwd=tmp_path)
    every = View(columns=True, every_warning=True)
    whole = diag.from_analysis("p.werkbaum", engine.analyze(text, view=every))
    lines = result.stdout.splitlines()
    assert lines[:1000] == [text_format.line(d) for d in whole[:1000]]
    assert lines[1000:] == [
        "p.werkbaum: warning unknownDep: 500 more not listed"
        " (at most 1,000 findings of a file are listed)"
    ]
    assert result.stderr == "0 errors, 1,500 warnings in 1 file (1 checked)\n"
