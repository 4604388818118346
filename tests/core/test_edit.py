"""edit.js: the node verbs (mcp-server.md §5.2) on every executor.

The expectations are computed here, independently of edit.js: node blocks
with a Python transcription of notation.md §17.6, indentation from the
sibling before the new place (else the parent's plus the document's step),
structure from a re-analysis. Every fixture plan is swept in four variants:
as is (ids added where missing), "rich" (continuation lines with several
indentations, `"` lines, comment lines inside blocks), tab-indented, and with
a 4-column step. These checks fail for an edit.js whose block end is off by
one, that loses continuation or `"` lines, or that uses the wrong step.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import fixture_plans
from tests.plangen import plan
from werkbaum_core import Engine
from werkbaum_core.errors import InvalidArgument, NotFound

Node = dict[str, Any]

COMMENT = re.compile(r"%%.*$")
SEP = re.compile(r"^[ \t]*-{3,}[ \t]*$")
DESC = re.compile(r'^[ \t]*"[ \t]')  # §3: a bare `"` is a node (§23.7)
BLANKISH = re.compile(r"^[ \t]*$")


def strip_comment(line: str) -> str:
    return COMMENT.sub("", line)


def indent_of(line: str) -> str:
    return re.match(r"[ \t]*", line).group()  # type: ignore[union-attr]


def width(indent: str) -> int:
    return sum(2 if c == "\t" else 1 for c in indent)


def edit(engine: Engine, fn: str, *args: Any) -> str:
    result: str = engine.transform("edit", fn, *args)
    return result


# ---------------------------------------------------------------------------
# A document as the checks see it


class Doc:
    """Physical lines, §17.6 classification and the analysed tree of one text."""

    def __init__(self, engine: Engine, text: str) -> None:
        self.engine = engine
        self.text = text
        self.lines = text.split("\n")
        self.roots: list[Node] = engine.analyze_json(text, include=["tree"])["tree"]
        self.order: list[Node] = []
        self.parent: dict[int, Node | None] = {}
        stack: list[tuple[Node, Node | None]] = [(r, None) for r in reversed(self.roots)]
        while stack:
            node, parent = stack.pop()
            self.order.append(node)
            self.parent[id(node)] = parent
            stack.extend((c, node) for c in reversed(node.get("children", [])))

    @functools.cached_property
    def cont(self) -> set[int]:
        """Line indices joined onto a previous line (§2.2), from the parser's logicalLines."""
        recs = self.engine.transform("parser", "logicalLines", self.text)
        return {c - 1 for r in recs for c in r["cont"]}

    @functools.cached_property
    def sep(self) -> int:
        """Index of the first separator line (a line that is not a continuation)."""
        return next(
            (
                i
                for i, line in enumerate(self.lines)
                if i not in self.cont and SEP.match(strip_comment(line))
            ),
            len(self.lines),
        )

    def kind(self, i: int) -> str:
        raw = strip_comment(self.lines[i])
        if i in self.cont:
            return "cont"
        if raw.strip() == "":
            return "blank"
        return "desc" if DESC.match(raw) else "node"

    def width_at(self, i: int) -> int:
        return width(indent_of(self.lines[i]))

    def block(self, node: Node) -> tuple[int, int]:
        """§17.6 rule 2: first and last line index of the node's block."""
        s = node["line"] - 1
        e = s
        i = s + 1
        while i < self.sep:
            k = self.kind(i)
            if k in ("cont", "blank", "desc") or (
                k == "node" and self.width_at(i) > self.width_at(s)
            ):
                e = i
                i += 1
            else:
                break
        while e > s and self.kind(e) == "blank":
            e -= 1
        return s, e

    def first(self, node_id: str) -> Node | None:
        return next((n for n in self.order if n.get("id") == node_id), None)

    def siblings(self, parent: Node | None) -> list[Node]:
        return parent.get("children", []) if parent else self.roots

    def previous_sibling(self, node: Node) -> Node | None:
        siblings = self.siblings(self.parent[id(node)])
        pos = next(i for i, n in enumerate(siblings) if n is node)
        return siblings[pos - 1] if pos else None

    def step(self) -> int:
        """The most common child-parent width difference (ties: smaller); 2 by default."""
        counts = Counter(
            self.width_at(n["line"] - 1) - self.width_at(p["line"] - 1)
            for n in self.order
            if (p := self.parent[id(n)]) is not None
        )
        if not counts:
            return 2
        return min(counts.items(), key=lambda dc: (-dc[1], dc[0]))[0]

    def subtree(self, node: Node) -> list[Node]:
        out, stack = [], [node]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(reversed(n.get("children", [])))
        return out

    def unique(self) -> list[Node]:
        """Nodes that own their id (its first assignment)."""
        return [n for n in self.order if n.get("id") and self.first(n["id"]) is n]


def key(node: Node | None) -> str | None:
    """Node identity across texts: label and id (fixture ids may repeat)."""
    return None if node is None else f"{node['label']}\x00{node.get('id')}"


def parent_pairs(doc: Doc, moved: Node | None = None, new_parent: Node | None = None) -> list[str]:
    pairs = []
    for n in doc.order:
        parent = new_parent if n is moved else doc.parent[id(n)]
        pairs.append(f"{key(n)}|{key(parent)}")
    return sorted(pairs)


# ---------------------------------------------------------------------------
# Fixture variants


def visible_end_insert(line: str, token: str) -> str:
    cut = line.find("%%")
    body = line if cut < 0 else line[:cut]
    core = body.rstrip(" \t")
    return f"{core} {token}{line[len(core) :]}"


def with_ids(engine: Engine, text: str) -> str:
    lines = text.split("\n")
    for n in Doc(engine, text).order:
        if not n.get("id"):
            lines[n["line"] - 1] = visible_end_insert(lines[n["line"] - 1], f"#t{n['line']}")
    return "\n".join(lines)


def rich(engine: Engine, text: str) -> str:
    """Continuation lines (indented 0, like the node, deeper), `"` lines, comment lines."""
    doc = Doc(engine, text)
    index = {n["line"] - 1: k for k, n in enumerate(doc.order)}
    out: list[str] = []
    for i, line in enumerate(doc.lines):
        k = index.get(i)
        if k is None:
            out.append(line)
            continue
        ind = indent_of(line)
        cut = line.find("%%")
        body = line if cut < 0 else line[:cut]
        split = body.rstrip(" \t").rfind(" ")
        if k % 3 == 0 and split > len(ind) + 1:
            out.append(line[: split + 1] + "\\")
            out.append(["", ind, ind + "    "][(k // 3) % 3] + line[split + 1 :])
        else:
            out.append(line)
        if k % 4 == 1:
            out.append((ind + "  " if k % 8 < 4 else "") + f'" note {k}')
        if k % 5 == 2:
            out.append(f"%% comment {k}")
    return "\n".join(out)


def retab(engine: Engine, text: str) -> str:
    doc = Doc(engine, text)
    lines = doc.lines
    for i in range(doc.sep):
        lines[i] = re.sub(r"^((?:  )+)", lambda m: "\t" * (len(m.group(1)) // 2), lines[i])
    return "\n".join(lines)


def widen(engine: Engine, text: str) -> str:
    doc = Doc(engine, text)
    lines = doc.lines
    for i in range(doc.sep):
        lines[i] = re.sub(r"^( +)", lambda m: m.group(1) * 2, lines[i])
    return "\n".join(lines)


VARIANTS: dict[str, Callable[[Engine, str], str]] = {
    "plain": lambda engine, text: text,
    "rich": rich,
    "tabs": lambda engine, text: retab(engine, rich(engine, text)),
    "wide": widen,
}
BIG = 20_000  # characters; the big fixture is sampled more thinly
CASES = [
    pytest.param(path, variant, id=f"{path.name}-{variant}")
    for path in fixture_plans()
    for variant in VARIANTS
    if variant in ("plain", "rich") or path.stat().st_size < BIG
]


def variant_text(engine: Engine, path: Path, variant: str) -> str:
    return VARIANTS[variant](engine, with_ids(engine, path.read_text(encoding="utf-8")))


def spread(items: list[Any], count: int, offset: int = 0) -> list[Any]:
    """``count`` items spread evenly over the list (deterministic), rotated by ``offset``."""
    if len(items) <= count:
        return items
    return [items[(offset + k * len(items) // count) % len(items)] for k in range(count)]


# ---------------------------------------------------------------------------
# The checks


def check_move(
    engine: Engine, doc: Doc, node: Node, parent: Node | None, after: Node | None
) -> None:
    label = f"move #{node['id']} -> {parent and parent['id']} after {after and after['id']}"
    out = edit(
        engine, "moveSubtree", doc.text, node["id"], parent and parent["id"], after and after["id"]
    )
    others = [c for c in doc.siblings(parent) if c is not node]
    prev = after or (others[-1] if others else None)
    if doc.parent[id(node)] is parent and doc.previous_sibling(node) is prev:
        # The node already sits there: a move to its own position is a no-op, even when
        # its indentation differs from its siblings' (nothing is re-based).
        assert out == doc.text, f"{label}: a move in place changed the text"
        return
    new = Doc(engine, out)
    s, e = doc.block(node)
    block = doc.lines[s : e + 1]
    moved = new.first(node["id"])
    assert moved is not None, label
    k = moved["line"] - 1
    # Every line outside the block byte-identical, in order.
    assert new.lines[:k] + new.lines[k + len(block) :] == doc.lines[:s] + doc.lines[e + 1 :], label
    # The block in order, re-based by one width difference.
    if prev is not None:  # roots too: a top level may be indented
        want = doc.width_at(prev["line"] - 1)
    elif parent is None:
        want = 0
    else:
        want = doc.width_at(parent["line"] - 1) + doc.step()
    delta = want - width(indent_of(block[0]))
    for j, old in enumerate(block):
        got = new.lines[k + j]
        if BLANKISH.match(old):
            assert got == old, f"{label}: blank line {j}"
            continue
        assert got[len(indent_of(got)) :] == old[len(indent_of(old)) :], f"{label}: line {j}"
        assert width(indent_of(got)) == max(0, width(indent_of(old)) + delta), f"{label}: line {j}"
    # The node under its new parent, right after `prev`; all else unchanged.
    assert parent_pairs(new) == parent_pairs(doc, node, parent), label
    new_siblings = new.siblings(new.parent[id(moved)])
    pos = new_siblings.index(moved)
    assert key(new_siblings[pos - 1] if pos else None) == key(prev), label
    assert sorted(f"{key(n)}={n.get('desc')}" for n in new.order) == sorted(
        f"{key(n)}={n.get('desc')}" for n in doc.order
    ), f"{label}: descriptions"


def check_add(engine: Engine, doc: Doc, parent: Node | None) -> None:
    line = "- [ ] #zz.new: Brand new (S)"
    out = edit(engine, "addNodeLine", doc.text, parent and parent["id"], line, None)
    new = Doc(engine, out)
    added = new.first("zz.new")
    assert added is not None
    k = added["line"] - 1
    assert new.lines[:k] + new.lines[k + 1 :] == doc.lines
    assert new.lines[k].lstrip(" \t") == line
    assert key(new.parent[id(added)]) == key(parent)
    assert new.siblings(new.parent[id(added)])[-1] is added
    siblings = doc.siblings(parent)
    if siblings:  # roots too: a top level may be indented
        want = doc.width_at(siblings[-1]["line"] - 1)
    elif parent is None:
        want = 0
    else:
        want = doc.width_at(parent["line"] - 1) + doc.step()
    assert width(indent_of(new.lines[k])) == want


def check_remove(engine: Engine, doc: Doc, node: Node) -> None:
    out = edit(engine, "removeSubtree", doc.text, node["id"])
    new = Doc(engine, out)
    s, e = doc.block(node)
    tree = doc.lines[:s] + doc.lines[e + 1 : doc.sep]
    assert new.lines[: len(tree)] == tree
    inside = {id(n) for n in doc.subtree(node)}
    kept = [n for n in doc.order if id(n) not in inside]
    assert [key(n) for n in new.order] == [key(n) for n in kept]
    for old, now in zip(kept, new.order, strict=True):
        if old.get("id") and doc.first(old["id"]) is old:
            assert now.get("desc") == old.get("desc"), f"desc of #{old.get('id')}"
    # Only whole description-part lines are dropped.
    rest = iter(doc.lines[doc.sep :])
    assert all(line in rest for line in new.lines[len(tree) :])
    gone = {n["id"] for n in doc.subtree(node) if n.get("id")} - {n.get("id") for n in kept}
    warnings = engine.analyze_json(out, include=["warnings"])["warnings"]
    assert not [w for w in warnings if w["type"] == "unknownDesc" and w.get("id") in gone]


def check_sizes(engine: Engine, doc: Doc, node: Node) -> None:
    for size in ("XS", "XXL", None):
        out = edit(engine, "setSizeToken", doc.text, node["id"], size)
        new = Doc(engine, out)
        changed = [i for i, (a, b) in enumerate(zip(doc.lines, new.lines, strict=True)) if a != b]
        assert len(changed) <= 1
        now = new.first(node["id"])
        assert now is not None
        if size:
            assert now.get("size") == size
        for field in ("label", "tags", "deps", "marks", "url", "status"):
            assert now.get(field) == node.get(field), field


def sweep_targets(
    doc: Doc, node: Node, k: int, count: int
) -> Iterator[tuple[Node | None, Node | None]]:
    inside = {id(n) for n in doc.subtree(node)}
    legal = [n for n in doc.unique() if id(n) not in inside]
    for parent in [None, *spread(legal, count, offset=k * 7)]:
        yield parent, None
        first = next(
            (
                c
                for c in doc.siblings(parent)
                if c is not node and doc.first(c.get("id") or "") is c
            ),
            None,
        )
        if first is not None and doc.parent[id(node)] is not parent:
            yield parent, first


def sample_sizes(doc: Doc, variant: str) -> tuple[int, int]:
    """(nodes, parents per node): 40 nodes of a plain fixture, fewer for variants and big plans."""
    if len(doc.text) > BIG:
        return 12, 2
    return (40, 3) if variant == "plain" else (16, 2)


@pytest.mark.parametrize(("path", "variant"), CASES)
def test_fixture_moves(engine: Engine, path: Path, variant: str) -> None:
    doc = Doc(engine, variant_text(engine, path, variant))
    nodes, parents = sample_sizes(doc, variant)
    for k, node in enumerate(spread(doc.unique(), nodes)):
        for parent, after in sweep_targets(doc, node, k, parents):
            check_move(engine, doc, node, parent, after)


@pytest.mark.parametrize(("path", "variant"), CASES)
def test_fixture_add_remove_size(engine: Engine, path: Path, variant: str) -> None:
    doc = Doc(engine, variant_text(engine, path, variant))
    check_add(engine, doc, None)
    for node in spread(doc.unique(), 6 if len(doc.text) > BIG else 10):
        check_add(engine, doc, node)
        check_remove(engine, doc, node)
        check_sizes(engine, doc, node)


@pytest.mark.parametrize(("path", "variant"), CASES)
def test_fixture_move_into_own_subtree_is_refused(engine: Engine, path: Path, variant: str) -> None:
    doc = Doc(engine, variant_text(engine, path, variant))
    nested = [n for n in doc.unique() if len(doc.subtree(n)) > 1]
    for node in spread(nested, 5):
        inner = next(n for n in doc.subtree(node)[1:] if doc.first(n.get("id") or "") is n)
        for target in (node, inner):
            with pytest.raises(InvalidArgument):
                edit(engine, "moveSubtree", doc.text, node["id"], target["id"])


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10_000), size=st.integers(3, 40), pick=st.integers(0, 10_000))
@example(seed=1338, size=16, pick=9999)  # found 2026-11: a move to the node's own place (no-op)
@example(seed=338, size=9, pick=9469)  # found 2026-12: the step of the text with the block cut out
def test_generated_plans(engine: Engine, seed: int, size: int, pick: int) -> None:
    doc = Doc(engine, rich(engine, plan(size, seed)))
    nodes = doc.unique()
    node = nodes[pick % len(nodes)]
    for parent, after in sweep_targets(doc, node, pick, 2):
        check_move(engine, doc, node, parent, after)
    check_remove(engine, doc, node)
    check_add(engine, doc, node)


# ---------------------------------------------------------------------------
# Focused examples

PLAN = "\n".join(
    [
        "%% head",
        "- [ ] #a: A (M)",
        "  - [ ] #b: Bee \\",
        "continued (S)",
        '    " desc b',
        "    - [ ] #c: C",
        "%% inner comment",
        "      - [ ] #c2: C2",
        "",
        "  - [ ] #d: D  %% note",
        "",
        "---",
        "#b",
        "  Long b.",
        "",
        "#c",
        "  Long c.",
        "#d",
        "  Long d.",
        "",
    ]
)
B_BLOCK = "\n".join(
    [
        "  - [ ] #b: Bee \\",
        "continued (S)",
        '    " desc b',
        "    - [ ] #c: C",
        "%% inner comment",
        "      - [ ] #c2: C2",
    ]
)


def test_move_takes_continuation_desc_and_comment_lines_along(engine: Engine) -> None:
    moved = "\n".join(
        [
            "    - [ ] #b: Bee \\",
            "  continued (S)",
            '      " desc b',
            "      - [ ] #c: C",
            "  %% inner comment",
            "        - [ ] #c2: C2",
        ]
    )
    out = edit(engine, "moveSubtree", PLAN, "b", "d", None)
    assert out == PLAN.replace(
        B_BLOCK + "\n\n  - [ ] #d: D  %% note\n", "\n  - [ ] #d: D  %% note\n" + moved + "\n"
    )


def test_move_to_root_level_and_back(engine: Engine) -> None:
    out = edit(engine, "moveSubtree", PLAN, "b", None, None)
    assert (
        '  - [ ] #d: D  %% note\n- [ ] #b: Bee \\\ncontinued (S)\n  " desc b\n  - [ ] #c: C\n'
        in out
    )
    assert out.split("---")[1] == PLAN.split("---")[1]  # the description part is untouched
    # Back again: the unindented continuation line now gets the shift it could not give up.
    back = edit(engine, "moveSubtree", out, "b", "a", None)
    assert '  - [ ] #d: D  %% note\n  - [ ] #b: Bee \\\n  continued (S)\n    " desc b\n' in back


def test_move_after_a_sibling(engine: Engine) -> None:
    text = "- #r: R\n  - #x: X\n  - #y: Y\n  - #z: Z\n"
    assert (
        edit(engine, "moveSubtree", text, "z", "r", "x")
        == "- #r: R\n  - #x: X\n  - #z: Z\n  - #y: Y\n"
    )
    assert (
        edit(engine, "moveSubtree", text, "x", "r", None)
        == "- #r: R\n  - #y: Y\n  - #z: Z\n  - #x: X\n"
    )


def test_move_in_place_changes_nothing(engine: Engine) -> None:
    text = "- #r: R\n  - #x: X\n\n  - #y: Y\n\n- #s: S\n"
    assert edit(engine, "moveSubtree", text, "y", "r", None) == text
    assert edit(engine, "moveSubtree", text, "y", "r", "x") == text
    assert edit(engine, "moveSubtree", text, "s", None, None) == text


def test_move_shifting_left_never_removes_text(engine: Engine) -> None:
    text = "- #r: R\n    - #x: X \\\n  tail\n        - #y: Y\n"
    out = edit(engine, "moveSubtree", text, "x", None, None)
    assert out == "- #r: R\n- #x: X \\\ntail\n    - #y: Y\n"


def test_move_uses_the_document_step_and_tabs(engine: Engine) -> None:
    text = "- #r: R\n    - #x: X\n        - #y: Y\n- #s: S\n"
    assert (
        edit(engine, "moveSubtree", text, "y", "s", None)
        == "- #r: R\n    - #x: X\n- #s: S\n    - #y: Y\n"
    )
    tabs = "- #r: R\n\t- #x: X\n\t\t- #y: Y\n- #s: S\n"
    assert (
        edit(engine, "moveSubtree", tabs, "y", "s", None)
        == "- #r: R\n\t- #x: X\n- #s: S\n\t- #y: Y\n"
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("nope", None, None), NotFound),
        (("b", "nope", None), NotFound),
        (("b", "a", "nope"), NotFound),
        (("a", "c", None), InvalidArgument),  # into its own subtree
        (("b", "b", None), InvalidArgument),
        (("b", "a", "c"), InvalidArgument),  # c is not a child of a
        (("b", "a", "b"), InvalidArgument),  # after itself
    ],
)
def test_move_errors(engine: Engine, args: tuple[Any, ...], error: type[Exception]) -> None:
    with pytest.raises(error):
        edit(engine, "moveSubtree", PLAN, *args)


def test_add_child_root_and_after(engine: Engine) -> None:
    text = '- #r: R\n  - #x: X\n    " about x\n  - #y: Y\n\n%% tail comment\n---\n#r\n  R.\n'
    assert edit(engine, "addNodeLine", text, "r", "- [ ] N", None) == text.replace(
        "  - #y: Y\n", "  - #y: Y\n  - [ ] N\n"
    )
    assert edit(engine, "addNodeLine", text, "r", "- [ ] N", "x") == text.replace(
        '    " about x\n', '    " about x\n  - [ ] N\n'
    )
    assert edit(engine, "addNodeLine", text, "x", "- [ ] N", None) == text.replace(
        '    " about x\n', '    " about x\n    - [ ] N\n'
    )
    assert edit(engine, "addNodeLine", text, None, "[ ] Root 2", None) == text.replace(
        "  - #y: Y\n", "  - #y: Y\n[ ] Root 2\n"
    )
    assert edit(engine, "addNodeLine", "", None, "- A", None) == "- A\n"  # the empty line stays
    assert (
        edit(engine, "addNodeLine", "%% only a comment\n", None, "- A", None)
        == "%% only a comment\n- A\n"
    )


@pytest.mark.parametrize(
    "line",
    ["", "   ", "%% comment", '" a description', "---", "- [x]", "- A \\", "- A\n- B"],
)
def test_add_refuses_what_is_not_one_node_line(engine: Engine, line: str) -> None:
    with pytest.raises(InvalidArgument):
        edit(engine, "addNodeLine", PLAN, "a", line, None)


def test_add_errors(engine: Engine) -> None:
    with pytest.raises(NotFound):
        edit(engine, "addNodeLine", PLAN, "nope", "- N", None)
    with pytest.raises(InvalidArgument):
        edit(engine, "addNodeLine", PLAN, "a", "- N", "c")


def test_remove_deletes_the_block_and_the_description_blocks(engine: Engine) -> None:
    out = edit(engine, "removeSubtree", PLAN, "b")
    assert out == PLAN.replace(B_BLOCK + "\n", "").replace("#b\n  Long b.\n\n#c\n  Long c.\n", "")
    out = edit(engine, "removeSubtree", PLAN, "d")
    assert out == PLAN.replace("  - [ ] #d: D  %% note\n", "").replace("#d\n  Long d.\n", "")
    assert out.endswith("#c\n  Long c.\n")


def test_remove_keeps_the_description_block_of_a_kept_first_carrier(engine: Engine) -> None:
    """The ``#x`` block describes the first ``#x`` (notation §9): removing a later carrier
    keeps it; removing the first takes it along (tests/core/test_edit_placement.py)."""
    text = "- #x: first\n- #a: A\n  - #x: inner\n---\n#x\n  Text.\n"
    out = edit(engine, "removeSubtree", text, "a")
    assert out == "- #x: first\n---\n#x\n  Text.\n"


def test_remove_last_block_takes_the_gap_before_it(engine: Engine) -> None:
    text = "- #a: A\n- #b: B\n---\n#a\n  A.\n\n#b\n  B.\n  More.\n"
    assert edit(engine, "removeSubtree", text, "b") == "- #a: A\n---\n#a\n  A.\n"
    assert edit(engine, "removeSubtree", text, "a") == "- #b: B\n---\n#b\n  B.\n  More.\n"


@pytest.mark.parametrize(
    ("line", "size", "result"),
    [
        ("- [ ] #x: Task (M)", "L", "- [ ] #x: Task (L)"),
        ("- [ ] #x: Task", "s", "- [ ] #x: Task (S)"),
        ("- [ ] #x: Task (m) @ana", "XL", "- [ ] #x: Task (XL) @ana"),
        ("- [ ] #x: Variante (L) bauen (M)", "XS", "- [ ] #x: Variante (L) bauen (XS)"),
        ("- [ ] #x: Task  %% (M) in a comment", "S", "- [ ] #x: Task (S)  %% (M) in a comment"),
        ("- [ ] #x: Task (M)  %% note", None, "- [ ] #x: Task  %% note"),
        ("- [ ] #x: Task https://e.org/(M) (S)", "XL", "- [ ] #x: Task https://e.org/(M) (XL)"),
        ("- [ ] #x: Task https://e.org/(M)", "XL", "- [ ] #x: Task https://e.org/(M) (XL)"),
        ("- [ ] #x: Backend(L)", "M", "- [ ] #x: Backend(L) (M)"),
        ("-(M) #x: Task", "S", "-(S) #x: Task"),
        ("- [ ] #x: Task", None, "- [ ] #x: Task"),
        ("- [ ] #x: Task \\", "S", "- [ ] #x: Task (S) \\"),
        ("- [ ] #x: Task \\\n  continued", "S", "- [ ] #x: Task \\\n  continued (S)"),
        ("- [ ] #x: Task (M) \\\n  continued", "S", "- [ ] #x: Task (S) \\\n  continued"),
        ("- [ ] #x: Task \\\n  continued (M)  %% c", None, "- [ ] #x: Task \\\n  continued  %% c"),
        ("- [ ] #x: Task \\ %% c\n  (M) more", None, "- [ ] #x: Task \\ %% c\n  more"),
    ],
)
def test_set_size_token(engine: Engine, line: str, size: str | None, result: str) -> None:
    # The node comes last: a trailing ` \\` would join a following line onto it.
    text = f"%% plan\n- [ ] #y: Other (M)\n{line}"
    assert (
        edit(engine, "setSizeToken", text, "x", size) == f"%% plan\n- [ ] #y: Other (M)\n{result}"
    )


def test_set_size_errors(engine: Engine) -> None:
    with pytest.raises(InvalidArgument):
        edit(engine, "setSizeToken", PLAN, "a", "XXXL")
    with pytest.raises(NotFound):
        edit(engine, "setSizeToken", PLAN, "nope", "S")


def test_first_node_with_an_id_is_the_one(engine: Engine) -> None:
    text = "- #x: First (M)\n- #x: Second (M)\n"
    assert edit(engine, "setSizeToken", text, "x", "L") == "- #x: First (L)\n- #x: Second (M)\n"
    assert edit(engine, "removeSubtree", text, "x") == "- #x: Second (M)\n"
