"""The stand-in's line ops: the reference results of documents-api §3-§4 on every implementation,
and the Python transcription checked against ``live.js`` on random inputs.

The backend must give exactly what ``live.js`` gives (§3.4: "a stand-in server
must use the same algorithm, tie-break included"), so the cross-check compares
whole results, not just round trips.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.backend.ops import (
    MAX_LCS_CELLS,
    InvalidOps,
    LineOp,
    LineOps,
    PythonLineOps,
    checksum,
    line_ops,
    lines,
    ops_conflict,
    text,
)


def ins(index: int, *ls: str) -> LineOp:
    return LineOp("insert", index, None, ls)


def dele(index: int, count: int) -> LineOp:
    return LineOp("delete", index, count, None)


def rep(index: int, count: int, *ls: str) -> LineOp:
    return LineOp("replace", index, count, ls)


@pytest.fixture(scope="module")
def impl(ops_impl: str) -> LineOps:
    return line_ops(ops_impl)


# -- §3.1 and §4 -----------------------------------------------------------------------


def test_lines_have_no_trailing_newline_special_case() -> None:
    assert lines("a\n") == ["a", ""]
    assert lines("") == [""]
    assert lines("a\r\nb\rc") == ["a", "b", "c"]
    assert text(lines("x\r\ny\n")) == "x\ny\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("- [ ] Eins", "89fe5185a4df8c956b66344ca272ad1ef4711c3103fccaaefa3ba3c6f83007d2"),
        (
            "- [ ] Eins\n- [ ] Zwei\n- [ ] Drei",
            "cd864738c57416ff402bfd84c3a0c230286ca416832dac6ee75267c2091913de",
        ),
        ("a\nb", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78"),
        ("a\r\nb", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78"),
        ("a\n", "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"),
        ("Grüße", "f83e039796c6453a10f5519e39fd113901572316a1a8ea07cb525d2801dfd074"),
    ],
)
def test_checksum_vectors(content: str, expected: str) -> None:
    assert checksum(content) == "sha256:" + expected


# -- §3.4 reference results ------------------------------------------------------------

ABCD = ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (ABCD, ["a", "B", "c", "d"], [rep(1, 1, "B")]),
        (ABCD, ["a", "b", "neu", "c", "d"], [ins(2, "neu")]),
        (ABCD, ["a", "c", "d"], [dele(1, 1)]),
        (ABCD, [*ABCD, "e"], [ins(4, "e")]),
        (list("abcdef"), ["a", "B", "c", "d", "neu", "e", "f"], [rep(1, 1, "B"), ins(4, "neu")]),
        (ABCD, ABCD, []),
        (["a", "b"], ["b", "a"], [ins(0, "b"), dele(1, 1)]),
    ],
)
def test_compute_ops_reference(
    impl: LineOps, old: list[str], new: list[str], expected: list[LineOp]
) -> None:
    assert impl.compute_ops(old, new) == expected
    assert impl.apply_ops(old, expected) == new


def test_compute_ops_on_a_900_line_plan_is_one_replace(impl: LineOps) -> None:
    plan = [f"- [ ] Aufgabe {k}" for k in range(900)]
    changed = list(plan)
    changed[500] = "- [x] Aufgabe 500"
    assert impl.compute_ops(plan, changed) == [rep(500, 1, "- [x] Aufgabe 500")]


def test_compute_ops_over_the_lcs_limit_is_one_replace(impl: LineOps) -> None:
    old = [f"o{k}" for k in range(1001)]
    new = [f"n{k}" for k in range(1000)]
    assert len(old) * len(new) > MAX_LCS_CELLS
    assert impl.compute_ops(["h", *old, "t"], ["h", *new, "t"]) == [rep(1, 1001, *new)]


# -- §3.3 validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "ops",
    [
        [dele(7, 1)],
        [dele(2, 3)],
        [dele(2, 1), dele(0, 1)],
        [rep(1, 2, "x"), ins(2, "y")],
        [rep(0, 1, "x"), ins(0, "y")],
        [LineOp("delete", 0, -1, None)],
        [ins(-1, "x")],
    ],
)
def test_apply_rejects_invalid_ops(impl: LineOps, ops: list[LineOp]) -> None:
    with pytest.raises(InvalidOps):
        impl.apply_ops(ABCD, ops)


def test_apply_accepts_the_edge_cases_of_3_3(impl: LineOps) -> None:
    assert impl.apply_ops(ABCD, [ins(1, "x"), ins(1, "y")]) == ["a", "x", "y", "b", "c", "d"]
    assert impl.apply_ops(ABCD, [ins(1, "x"), rep(1, 1, "B")]) == ["a", "x", "B", "c", "d"]
    assert impl.apply_ops(ABCD, [rep(1, 0, "x")]) == ["a", "x", "b", "c", "d"]
    assert impl.apply_ops(ABCD, [ins(4, "e")]) == [*ABCD, "e"]
    assert impl.apply_ops(ABCD, []) == ABCD


# -- §3.5 and §3.6 ---------------------------------------------------------------------


def test_conflict_rule() -> None:
    assert not ops_conflict(ins(3, "a"), ins(3, "b"))
    assert not ops_conflict(ins(2, "a"), rep(2, 1, "x"))  # at the start edge
    assert not ops_conflict(ins(3, "a"), rep(2, 1, "x"))  # at the end edge
    assert ops_conflict(ins(2, "a"), dele(1, 3))  # strictly inside
    assert ops_conflict(rep(0, 1, "x"), rep(0, 1, "x"))  # same line, even identical
    assert not ops_conflict(dele(0, 2), dele(2, 1))  # touching ranges
    assert ops_conflict(dele(1, 3), ins(2, "a"))  # symmetric


@pytest.mark.parametrize(
    ("mine", "theirs", "expected"),
    [
        ([rep(5, 1, "x")], [ins(2, "p", "q")], [rep(7, 1, "x")]),
        ([rep(5, 1, "x")], [dele(1, 2)], [rep(3, 1, "x")]),
        ([ins(3, "meins")], [ins(3, "fremd")], [ins(4, "meins")]),
        ([ins(5, "x"), dele(10, 2)], [dele(6, 3)], [ins(5, "x"), dele(7, 2)]),
        ([ins(2, "neu")], [rep(2, 1, "C")], [ins(2, "neu")]),
        ([ins(2, "neu")], [dele(1, 3)], None),
        ([], [dele(1, 3)], []),
        ([rep(0, 1, "x")], [], [rep(0, 1, "x")]),
    ],
)
def test_rebase_reference(
    impl: LineOps, mine: list[LineOp], theirs: list[LineOp], expected: list[LineOp] | None
) -> None:
    assert impl.rebase_ops(mine, theirs) == expected


# -- the transcription against live.js -------------------------------------------------

FIXTURE_OK = [HealthCheck.function_scoped_fixture]  # the engine fixture is module-scoped anyway
line_lists = st.lists(st.sampled_from(["a", "b", "c", "", "- [ ] x"]), max_size=9)


@pytest.fixture(scope="module")
def engine_impl(ops_impl: str) -> LineOps:
    if ops_impl == "python":
        pytest.skip("the transcription is the reference side of this comparison")
    return line_ops(ops_impl)


@settings(max_examples=300, deadline=None, suppress_health_check=FIXTURE_OK)
@given(base=line_lists, left=line_lists, right=line_lists)
def test_python_transcription_equals_live_js(
    engine_impl: LineOps, base: list[str], left: list[str], right: list[str]
) -> None:
    py = PythonLineOps()
    mine = py.compute_ops(base, left)
    theirs = py.compute_ops(base, right)
    assert engine_impl.compute_ops(base, left) == mine
    assert engine_impl.rebase_ops(mine, theirs) == py.rebase_ops(mine, theirs)
    rebased = py.rebase_ops(mine, theirs)
    current = py.apply_ops(base, theirs)
    if rebased is not None:
        try:
            expected: list[str] | None = py.apply_ops(current, rebased)
        except InvalidOps:
            expected = None
        try:
            got: list[str] | None = engine_impl.apply_ops(current, rebased)
        except InvalidOps:
            got = None
        assert got == expected


@settings(max_examples=200, deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    base=line_lists,
    ops=st.lists(
        st.builds(
            LineOp,
            op=st.sampled_from(["insert", "delete", "replace"]),
            index=st.integers(-1, 10),
            count=st.integers(-1, 4),
            lines=st.none() | st.tuples(st.sampled_from(["x", "y"])),
        ),
        max_size=4,
    ),
)
def test_apply_validation_equals_live_js(
    engine_impl: LineOps, base: list[str], ops: list[LineOp]
) -> None:
    def outcome(impl: LineOps) -> list[str] | None:
        try:
            return impl.apply_ops(base, ops)
        except InvalidOps:
            return None

    assert outcome(engine_impl) == outcome(PythonLineOps())
