"""``werkbaum inspect`` for reading: gates, dependencies, notes, the terminal's width,
subtrees with their own loads, units on every number. A snapshot per fixture plan at
widths 60 and 100 (``WERKBAUM_UPDATE_SNAPSHOT=1`` rewrites them; review the diff)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.scripts import matches_snapshot, run
from tests.conftest import FIXTURES, REFERENCE_PLAN, REPO, fixture_plans
from werkbaum_stdio.terminal import cells

EXAMPLE = REPO / "examples" / "launch.werkbaum"


@pytest.mark.parametrize("width", [60, 100])
@pytest.mark.parametrize("plan", fixture_plans(), ids=lambda p: p.name)
def test_snapshot(plan: Path, width: int) -> None:
    result = run("inspect", "--width", str(width), plan.name, cwd=FIXTURES)
    assert result.returncode == 0, result.stderr
    too_wide = [line for line in result.stdout.splitlines() if cells(line) > width]
    assert not too_wide, too_wide
    matches_snapshot(f"inspect-{plan.stem}-{width}.txt", result.stdout)


def test_gates_dependencies_and_notes_are_shown() -> None:
    lines = run("inspect", "--width", "200", EXAMPLE).stdout.splitlines()

    def node(label: str) -> str:
        return next(line for line in lines if f"] {label} (" in line or f"] {label} #" in line)

    assert "| [ ] Card provider (S)" in node("Card provider")
    assert "| [ ] Pay by invoice (M)" in node("Pay by invoice")
    assert "+ [?] Customer reviews (M)" in node("Customer reviews")
    assert "- [/] Shopping cart (M)" in node("Shopping cart")
    assert "→ #shop.data" in node("Product search")
    assert "→ #shop.build #shop.pay" in node("Go live")
    assert "¶" in node("Import the product data")  # a " description line
    assert "¶" in node("Go live")  # a block after ---
    assert "¶" not in node("Take payments")
    assert lines[-1].endswith("XXL=6.")  # the key explains every mark


def test_an_exactly_one_group_reads_differently_from_an_all_of_group(tmp_path: Path) -> None:
    (tmp_path / "p.werkbaum").write_text("[ ] P\n  = [ ] A (S)\n  = [ ] B (M)\n", encoding="utf-8")
    out = run("inspect", "p.werkbaum", cwd=tmp_path).stdout
    assert "L2    = [ ] A (S) ◀ station" in out
    assert "L3    = [ ] B (M)\n" in out


def test_names_in_wide_characters_keep_the_columns_aligned(tmp_path: Path) -> None:
    """Round 26 newcomer L5: the load table padded by characters, so ``@山田太郎`` (8 cells)
    pushed its numbers two cells right of ``@ana``'s; station refs the same."""
    plan = "[ ] Root\n  - [ ] #山田: A (M) @山田太郎\n  - [ ] #b: B (S) @ana\n"
    (tmp_path / "p.werkbaum").write_text(plan, encoding="utf-8")
    lines = run("inspect", "p.werkbaum", cwd=tmp_path).stdout.splitlines()
    loads = [line.split(" size point")[0] for line in lines if line.startswith("  @")]
    stations = [line[:-1] for line in lines if line.startswith("  ◀")]  # up to the label
    assert [cells(row) for row in loads] == [cells("  @山田太郎  3")] * 2, loads
    assert [cells(row) for row in stations] == [cells("  ◀ #山田  ")] * 2, stations


def test_an_empty_plan_says_so_and_nothing_more(tmp_path: Path) -> None:
    """Round 26 newcomer L6: blank lines, a path of 0 nodes and the whole key."""
    (tmp_path / "empty.werkbaum").write_text("%% nothing yet\n", encoding="utf-8")
    done = run("inspect", "empty.werkbaum", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (
        0,
        "empty.werkbaum: 0 nodes, 0 warnings\n\n(no nodes: the plan is empty)\n",
    )


def test_labels_wrap_on_word_boundaries_under_their_own_start(tmp_path: Path) -> None:
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda"
    (tmp_path / "p.werkbaum").write_text(f"[ ] Root\n  - [ ] {words} (S)\n", encoding="utf-8")
    lines = run("inspect", "--width", "40", "p.werkbaum", cwd=tmp_path).stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("L2"))
    start = lines[first].index("alpha")
    block = [lines[first][start:]]
    for line in lines[first + 1 :]:
        if not line.startswith(" " * start) or not line.strip():
            break
        block.append(line[start:])
    assert len(block) > 1 and all(cells(line) <= 40 for line in lines[first : first + len(block)])
    assert " ".join(block).split() == [*words.split(), "(S)", "◀", "station"]


def test_columns_from_the_environment_and_the_option() -> None:
    # By its name in its folder: a path longer than the width (the clone's place) has
    # no place to break, so the width would depend on where the repository lies.
    folder, name = EXAMPLE.parent, EXAMPLE.name
    narrow = run("inspect", name, cwd=folder, env={"COLUMNS": "44"}).stdout.splitlines()
    assert max(map(cells, narrow)) <= 44
    wide = run("inspect", "--width", "120", name, cwd=folder, env={"COLUMNS": "44"})
    assert max(map(cells, wide.stdout.splitlines())) > 44  # --width wins over $COLUMNS


def test_a_subtree_shows_its_own_loads_and_units() -> None:
    whole = run("inspect", EXAMPLE).stdout
    sub = run("inspect", "--id", "shop.build", EXAMPLE).stdout
    assert "Load: 12 size points of open work on the cheapest path" in whole
    assert "examples/launch.werkbaum #shop.build: 4 nodes, 0 warnings" in sub.replace(
        str(REPO) + "/", ""
    )
    assert "Cheapest path within #shop.build: 3 nodes needed, 2 stations, exact" in sub
    assert "Load: 5 size points of open work on the cheapest path" in sub
    assert "  @ben  5 size points  100%  2 stations\n" in sub
    data = json.loads(run("inspect", "--json", "--id", "shop.build", EXAMPLE).stdout)
    assert data["path"]["assigneeLoads"] == {
        "loads": {"ben": 5},
        "total": 5,
        "stations": {"ben": 2},
        "totalStations": 2,
    }


@pytest.mark.parametrize(
    ("given", "shown"),
    [("shop.build", "#shop.build"), ("#shop.build", "#shop.build"), ("L6", "L6")],
)
def test_a_subtree_is_named_as_refs_name_it(given: str, shown: str) -> None:
    """One ``#`` before an id, none before a line ref (round 25 newcomer L1: ``##shop.build``,
    ``#L7``)."""
    sub = run("inspect", "--id", given, EXAMPLE).stdout.replace(str(REPO) + "/", "")
    assert f"examples/launch.werkbaum {shown}: 4 nodes, 0 warnings" in sub
    assert f"Cheapest path within {shown}: 3 nodes needed" in sub


def test_an_unknown_id_says_which_ones_it_may_have_meant() -> None:
    done = run("inspect", "--id", "shop.bild", EXAMPLE)
    assert done.returncode == 2
    assert "no node with id #shop.bild (did you mean shop.build" in done.stderr


def test_a_width_below_the_least_is_a_usage_error() -> None:
    done = run("inspect", "--width", "10", EXAMPLE)
    assert done.returncode == 2 and done.stdout == ""
    assert "'--width': 10 is less than 20" in done.stderr


def test_warnings_are_listed_with_their_place(tmp_path: Path) -> None:
    (tmp_path / "p.werkbaum").write_text("[ ] P\n  - [ ] A\n  | [ ] B\n", encoding="utf-8")
    out = run("inspect", "p.werkbaum", cwd=tmp_path).stdout
    assert out.startswith("p.werkbaum: 3 nodes, 1 error, 0 warnings\n")
    assert '  L3:3: error mixedGate: the children of "P" mix gate kinds;' in out


def test_a_node_whose_id_is_taken_is_marked_by_the_ref_the_path_gives_it(tmp_path: Path) -> None:
    # The path names the second carrier of #d "L3": its station mark and label follow it.
    plan = "- [ ] Plan\n  - [ ] #d: First (S)\n  - [ ] #d: Second (S)\n"
    (tmp_path / "p.werkbaum").write_text(plan, encoding="utf-8")
    out = run("inspect", "p.werkbaum", cwd=tmp_path).stdout
    assert "L2    - [ ] First (S) #d ◀ station\n" in out
    assert "L3    - [ ] Second (S) #d ◀ station\n" in out
    assert "  ◀ #d  First\n  ◀ L3  Second\n" in out


def test_an_unreadable_plan_exits_2_with_the_reason(tmp_path: Path) -> None:
    result = run("inspect", tmp_path / "missing.werkbaum")
    assert result.returncode == 2
    assert result.stderr == f"werkbaum: {tmp_path / 'missing.werkbaum'}: no such file\n"


def test_json_is_the_engine_analysis() -> None:
    result = run("inspect", "--json", REFERENCE_PLAN)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["warnings"] == []
    assert len(data["path"]["stations"]) == 30


def test_the_readme_shows_real_output() -> None:
    """Every line of the README's inspect excerpt is a line of the real output (width 80)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("```text\nexamples/launch.werkbaum", 1)[1].split("```", 1)[0]
    shown = ["examples/launch.werkbaum" + block.splitlines()[0], *block.splitlines()[1:]]
    real = run("inspect", "--width", "80", "examples/launch.werkbaum", cwd=REPO).stdout.splitlines()
    missing = [line for line in shown if line.strip() != "…" and line not in real]
    assert not missing, missing


def test_warnings_are_cut_as_the_tools_and_json_cut_them(tmp_path: Path) -> None:
    """1,500 stray lines: the first 1,000 listed, the rest counted (``warningsCut``), as in
    ``--json``; the heading counts them all with a thousands separator. ``check`` lists
    the same 1,000 and counts the rest too (its exit status and summary count all)."""
    (tmp_path / "p.werkbaum").write_text("---\n" + "x\n" * 1500, encoding="utf-8")
    text = run("inspect", "p.werkbaum", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "p.werkbaum: 0 nodes, 1,500 errors, 0 warnings"
    listed = [x for x in lines if x.startswith("  L") and "descStray" in x]
    assert (listed[0].split(":")[0], listed[-1].split(":")[0], len(listed)) == (
        "  L2",
        "  L1001",
        1000,
    )
    assert "  … and 500 more (the first 1,000 are listed)" in lines
    data = json.loads(run("inspect", "--json", "p.werkbaum", cwd=tmp_path).stdout)
    rest = [{"type": "descStray", "count": 500, "structural": True}]
    cut = {"listed": 1000, "total": 1500, "unlisted": rest}
    assert (len(data["warnings"]), data["warningsCut"]) == (1000, cut)
    check = run("check", "p.werkbaum", cwd=tmp_path)
    assert (check.returncode, len(check.stdout.splitlines())) == (1, 1001)
    assert check.stderr == "1,500 errors, 0 warnings in 1 file (1 checked)\n"


def test_depth_and_hide_done_narrow_the_tree_not_the_path() -> None:
    """Round 25 newcomer M8: the terminal had none of the tools' narrowing options."""
    out = run("inspect", "--depth", "1", "--hide-done", "--width", "100", EXAMPLE).stdout
    lines = out.replace(str(REPO) + "/", "").splitlines()
    assert lines[0] == "examples/launch.werkbaum: 13 nodes (5 drawn), 0 warnings"
    assert " L6    - [~] Build the shop (L) #shop.build @ben (+3 nodes below) ·" in lines
    assert not any("Design the catalogue" in line for line in lines)  # done: left out
    assert "(--depth 1: 5 nodes below 2 cut nodes not drawn)" in lines
    hidden = "(--hide-done: 1 subtree of 3 nodes done, in production or discarded, not drawn)"
    assert hidden in lines
    # The path is the whole plan's, its stations named even where the tree is cut.
    assert "Cheapest path: 11 nodes needed, 5 stations, exact" in lines
    assert "  ◀ #shop.build.cart    Shopping cart" in lines


def test_find_lists_the_matching_nodes_with_their_owners() -> None:
    out = run("inspect", "--find", "@ben cart", EXAMPLE).stdout.replace(str(REPO) + "/", "")
    assert out.splitlines() == [
        "examples/launch.werkbaum: 1 match",
        "",
        "L7  [/] Shopping cart (M) #shop.build.cart @ben",
    ]


def test_json_with_the_options_is_the_tools_answer() -> None:
    data = json.loads(run("inspect", "--json", "--depth", "0", EXAMPLE).stdout)
    assert set(data) == {"tree", "cut"} and data["cut"] == {"depth": 0, "nodes": 1}
    assert data["tree"][0]["descendants"] == 12
