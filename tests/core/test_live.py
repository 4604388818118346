"""live.js: the line-operation model of documents-api.md §3, on every executor.

The reference results are the upstream tests quoted in §3.4 to §3.6. The backend
stand-in's Python transcription of §3.3/§3.4 (tests/backend/ops.py) serves as an
independent oracle for the exact ops (tie-break included) on random inputs.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.backend.ops import LineOp, PythonLineOps
from werkbaum_core import Engine
from werkbaum_core.errors import WerkbaumError

Op = dict[str, Any]


def ins(index: int, lines: list[str]) -> Op:
    return {"op": "insert", "index": index, "lines": lines}


def dele(index: int, count: int) -> Op:
    return {"op": "delete", "index": index, "count": count}


def rep(index: int, count: int, lines: list[str]) -> Op:
    return {"op": "replace", "index": index, "count": count, "lines": lines}


def live(engine: Engine, fn: str, *args: Any) -> Any:
    return engine.transform("live", fn, *args)


# ---------------------------------------------------------------------------
# Oracle: the backend stand-in's Python transcription of documents-api §3.3/§3.4
# (tie-break included), independent of live.js.

_ORACLE = PythonLineOps()


def oracle_apply(base: list[str], ops: list[Op]) -> list[str]:
    return _ORACLE.apply_ops(base, [LineOp.from_engine(op) for op in ops])


def oracle_compute(frm: list[str], to: list[str]) -> list[Op]:
    return [op.to_engine() for op in _ORACLE.compute_ops(frm, to)]


# ---------------------------------------------------------------------------
# §3.1 text <-> lines


@pytest.mark.parametrize(
    ("raw", "normalized", "lines"),
    [
        ("a\r\nb", "a\nb", ["a", "b"]),
        ("a\rb\r\n", "a\nb\n", ["a", "b", ""]),
        ("a\n", "a\n", ["a", ""]),
        ("", "", [""]),
        ("\r\r\n", "\n\n", ["", "", ""]),
    ],
)
def test_text_and_lines(engine: Engine, raw: str, normalized: str, lines: list[str]) -> None:
    assert live(engine, "normalize", raw) == normalized
    assert live(engine, "lines", raw) == lines
    assert live(engine, "text", lines) == normalized


# ---------------------------------------------------------------------------
# §3.4 computeOps

ABCD = ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    ("frm", "to", "ops"),
    [
        (ABCD, ["a", "B", "c", "d"], [rep(1, 1, ["B"])]),
        (ABCD, ["a", "b", "neu", "c", "d"], [ins(2, ["neu"])]),
        (ABCD, ["a", "c", "d"], [dele(1, 1)]),
        (ABCD, [*ABCD, "e"], [ins(4, ["e"])]),
        (
            list("abcdef"),
            ["a", "B", "c", "d", "neu", "e", "f"],
            [rep(1, 1, ["B"]), ins(4, ["neu"])],
        ),
        (ABCD, ABCD, []),
        ([""], ["x"], [rep(0, 1, ["x"])]),
        (["a", "a"], ["a"], [dele(1, 1)]),  # prefix and suffix may not overlap
    ],
)
def test_compute_ops_reference_results(
    engine: Engine, frm: list[str], to: list[str], ops: list[Op]
) -> None:
    assert live(engine, "computeOps", frm, to) == ops
    assert oracle_compute(frm, to) == ops


def test_900_line_plan_with_one_changed_line_gives_one_replace(engine: Engine) -> None:
    plan = [f"  - [ ] Task {i} (S)" for i in range(900)]
    changed = plan.copy()
    changed[500] = "  - [x] Task 500 (S)"
    assert live(engine, "computeOps", plan, changed) == [rep(500, 1, ["  - [x] Task 500 (S)"])]


def test_tie_prefers_taking_the_insertion(engine: Engine) -> None:
    # [x, y] -> [y, x]: LCS 1 either way; the tie takes the insertion first.
    assert live(engine, "computeOps", ["x", "y"], ["y", "x"]) == [ins(0, ["y"]), dele(1, 1)]


def _interleaved(n: int, m: int) -> tuple[list[str], list[str]]:
    # Different first and last lines (nothing to trim), common lines inside.
    a = ["A-first"] + [f"l{i}" for i in range(n - 2)] + ["A-last"]
    b = ["B-first"] + [f"l{i}" if i % 7 else f"new{i}" for i in range(m - 2)] + ["B-last"]
    return a, b


def test_a_million_cells_are_still_diffed(engine: Engine) -> None:
    a, b = _interleaved(1000, 1000)  # exactly 1,000,000 cells: not above the cap
    ops = live(engine, "computeOps", a, b)
    assert len(ops) > 1
    assert ops == oracle_compute(a, b)
    assert live(engine, "applyOps", a, ops) == b


def test_above_a_million_cells_one_replace(engine: Engine) -> None:
    a, b = _interleaved(1001, 1000)
    assert live(engine, "computeOps", a, b) == [rep(0, 1001, b)]
    a, b = _interleaved(2, 500_001)
    assert live(engine, "computeOps", a, b) == [rep(0, 2, b)]


LINES = st.lists(st.sampled_from(["a", "b", "c", "", "  - x", "d"]), max_size=14)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(a=LINES, b=LINES)
def test_apply_of_compute_gives_the_target(engine: Engine, a: list[str], b: list[str]) -> None:
    ops = live(engine, "computeOps", a, b)
    assert live(engine, "applyOps", a, ops) == b
    assert ops == oracle_compute(a, b)
    # Ascending, and hunks never touch (adjacent deletes and inserts merge).
    for prev, nxt in itertools.pairwise(ops):
        prev_end = prev["index"] + (0 if prev["op"] == "insert" else prev["count"])
        assert nxt["index"] > prev_end


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    a=st.lists(st.text(alphabet="ab \t-[]x", max_size=6), max_size=60),
    b=st.lists(st.text(alphabet="ab \t-[]x", max_size=6), max_size=60),
)
def test_apply_of_compute_on_longer_lists(engine: Engine, a: list[str], b: list[str]) -> None:
    assert live(engine, "applyOps", a, live(engine, "computeOps", a, b)) == b


# ---------------------------------------------------------------------------
# §3.3 applyOps


@pytest.mark.parametrize(
    ("ops", "result"),
    [
        ([], ["a", "b", "c"]),
        ([ins(1, ["x"]), ins(1, ["y"])], ["a", "x", "y", "b", "c"]),  # same index: list order
        ([ins(1, ["x"]), rep(1, 1, ["B"])], ["a", "x", "B", "c"]),  # insert before a range at i
        ([{"op": "replace", "index": 1, "count": 1}], ["a", "c"]),  # missing lines means []
        ([rep(1, 0, ["x"])], ["a", "x", "b", "c"]),  # count 0 behaves like an insert
        ([{"op": "insert", "index": 3, "count": 5, "lines": ["z"]}], ["a", "b", "c", "z"]),
        ([{"op": "delete", "index": 0, "count": 2, "lines": ["ignored"]}], ["c"]),
        ([dele(0, 1), rep(1, 1, ["B"]), ins(3, ["end"])], ["B", "c", "end"]),
    ],
)
def test_apply_ops(engine: Engine, ops: list[Op], result: list[str]) -> None:
    assert live(engine, "applyOps", ["a", "b", "c"], ops) == result
    assert oracle_apply(["a", "b", "c"], ops) == result


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "delete", "index": 0}],  # count is required
        [{"op": "replace", "index": 0, "lines": ["x"]}],
        [dele(0, -1)],
        [ins(-1, ["x"])],
        [ins(4, ["x"])],
        [dele(2, 2)],
        [rep(1, 1, ["x"]), ins(1, ["y"])],  # an insert may not follow a range starting there
        [dele(0, 2), dele(1, 1)],  # overlapping
        [ins(2, ["x"]), ins(1, ["y"])],  # not ascending
        [{"op": "move", "index": 0, "count": 1}],
        [{"op": "insert", "index": "1", "lines": ["x"]}],
    ],
)
def test_apply_ops_refuses_ops_that_do_not_fit(engine: Engine, ops: list[Op]) -> None:
    with pytest.raises(WerkbaumError) as info:
        live(engine, "applyOps", ["a", "b", "c"], ops)
    assert "op 0" in str(info.value) or "op 1" in str(info.value)


# ---------------------------------------------------------------------------
# §3.5 conflicts


@pytest.mark.parametrize(
    ("a", "b", "conflict"),
    [
        (ins(3, ["x"]), ins(3, ["y"]), False),
        (ins(3, ["x"]), dele(2, 2), True),  # strictly inside [2, 4)
        (ins(2, ["x"]), dele(2, 2), False),  # at the start edge
        (ins(4, ["x"]), dele(2, 2), False),  # at the end edge
        (rep(2, 1, ["a"]), rep(2, 1, ["a"]), True),  # same line, identical text
        (dele(0, 2), rep(2, 1, ["x"]), False),  # ranges touch only
        (dele(0, 3), rep(2, 1, ["x"]), True),
        (rep(1, 0, ["x"]), dele(0, 3), True),  # an empty range inside another one
        (rep(3, 0, ["x"]), dele(0, 3), False),
    ],
)
def test_conflict_rule(engine: Engine, a: Op, b: Op, conflict: bool) -> None:
    assert live(engine, "conflicts", [a], [b]) is conflict
    assert live(engine, "conflicts", [b], [a]) is conflict  # symmetric


def test_conflicts_of_lists_is_any_pair(engine: Engine) -> None:
    mine = [ins(0, ["x"]), rep(5, 1, ["y"])]
    assert live(engine, "conflicts", mine, [dele(1, 1), dele(5, 2)]) is True
    assert live(engine, "conflicts", mine, [dele(1, 1), dele(6, 2)]) is False
    assert live(engine, "conflicts", [], mine) is False


# ---------------------------------------------------------------------------
# §3.6 rebaseOps


@pytest.mark.parametrize(
    ("mine", "theirs", "result"),
    [
        ([rep(5, 1, ["m"])], [ins(2, ["f1", "f2"])], [rep(7, 1, ["m"])]),
        ([rep(5, 1, ["m"])], [dele(1, 2)], [rep(3, 1, ["m"])]),
        ([ins(3, ["meins"])], [ins(3, ["fremd"])], [ins(4, ["meins"])]),
        ([ins(5, ["x"]), dele(10, 2)], [dele(6, 3)], [ins(5, ["x"]), dele(7, 2)]),
        ([ins(3, ["m"])], [rep(3, 2, ["f"])], [ins(3, ["m"])]),  # a range starting there: no shift
        ([rep(2, 1, ["m"])], [], [rep(2, 1, ["m"])]),
        ([], [dele(0, 1)], []),
    ],
)
def test_rebase_reference_results(
    engine: Engine, mine: list[Op], theirs: list[Op], result: list[Op]
) -> None:
    assert live(engine, "rebaseOps", mine, theirs) == result


def test_rebase_conflict_is_null(engine: Engine) -> None:
    assert live(engine, "rebaseOps", [rep(2, 1, ["m"])], [dele(1, 3)]) is None


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(base=LINES, x=LINES, y=LINES)
def test_rebased_ops_fit_the_foreign_result(
    engine: Engine, base: list[str], x: list[str], y: list[str]
) -> None:
    mine = live(engine, "computeOps", base, x)
    theirs = live(engine, "computeOps", base, y)
    rebased = live(engine, "rebaseOps", mine, theirs)
    if rebased is None:
        assert live(engine, "conflicts", mine, theirs) is True
        return
    merged = live(engine, "applyOps", oracle_apply(base, theirs), rebased)
    delta = sum(
        len(op.get("lines") or []) - (0 if op["op"] == "insert" else op["count"])
        for op in mine + theirs
    )
    assert len(merged) == len(base) + delta


# ---------------------------------------------------------------------------
# mapLine


@pytest.mark.parametrize(
    ("line", "ops", "mapped"),
    [
        (5, [], 5),
        (5, [ins(2, ["a", "b"])], 7),
        (5, [ins(5, ["a"])], 6),  # inserted before the line
        (5, [ins(6, ["a"])], 5),
        (5, [dele(4, 3)], 4),  # deleted: the op's start
        (5, [dele(0, 2), rep(4, 3, ["x"])], 2),  # replaced: the op's start in the new text
        (9, [dele(0, 2), rep(4, 3, ["x"])], 5),
        (3, [dele(0, 3)], 0),
    ],
)
def test_map_line(engine: Engine, line: int, ops: list[Op], mapped: int) -> None:
    assert live(engine, "mapLine", line, ops) == mapped
