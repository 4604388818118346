"""diagram.js through the engine's ``picture`` entry, on every executor: what the picture
shows (boxes, refs, statuses, path, stations, warnings, folds), that plan text is only
ever text, and that every executor draws the same bytes."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REFERENCE_PLAN, REPO, engine_on, fixture_plans
from tests.render.pictures import (
    SNAPSHOTS,
    SVG,
    box_of,
    group,
    groups,
    label_of,
    node_boxes,
    picture,
    svg_root,
    text_of,
    tooltip_of,
)
from werkbaum_core import EXECUTORS, Engine
from werkbaum_core.errors import NotFound
from werkbaum_stdio.render_cli import PICTURES_ENTRY

LAUNCH = REPO / "examples" / "launch.werkbaum"
DISCREPANCIES = ("#be.docs", "#col.live.http", "#trk.write")
COLOURS = {
    "?": "#EBEDEF",
    " ": "#EBE4F6",
    "!": "#FFE5CC",
    "~": "#FADDE4",
    "/": "#FBF2CE",
    "x": "#DCF1DE",
    "^": "#DBEAF8",
    "-": "#F1F2F4",
}
"""Box fills of notation.md §7, by status code."""


@pytest.fixture(scope="module")
def engines() -> Iterator[dict[str, Engine]]:
    """One engine per executor, side by side, to compare their pictures."""
    generators = [engine_on(kind, PICTURES_ENTRY) for kind in EXECUTORS]
    try:
        yield {kind: next(gen) for kind, gen in zip(EXECUTORS, generators, strict=True)}
    finally:
        for gen in generators:
            gen.close()


@pytest.mark.parametrize("plan", fixture_plans(), ids=lambda p: p.name)
def test_snapshot_per_fixture_plan(drawing_engine: Engine, plan: Path) -> None:
    """The SVG text of every fixture plan is pinned; every executor must draw exactly it.
    After a deliberate change: WERKBAUM_UPDATE_SNAPSHOT=1, then review the diff."""
    svg = picture(drawing_engine, plan, fmt="svg")
    snapshot = SNAPSHOTS / f"{plan.name}.svg"
    if os.environ.get("WERKBAUM_UPDATE_SNAPSHOT"):
        snapshot.write_bytes(svg.encode("utf-8"))
    assert svg == snapshot.read_bytes().decode("utf-8"), (
        f"{snapshot} differs on {drawing_engine.kind}"
    )


@pytest.mark.parametrize("plan", fixture_plans(), ids=lambda p: p.name)
@pytest.mark.parametrize(("fmt", "expand"), [("html", False), ("html", True), ("svg", True)])
def test_every_executor_draws_the_same_bytes(
    engines: dict[str, Engine], plan: Path, fmt: str, expand: bool
) -> None:
    pictures = {kind: picture(eng, plan, fmt=fmt, expand=expand) for kind, eng in engines.items()}
    first = next(iter(pictures.values()))
    assert all(p == first for p in pictures.values()), sorted(pictures)


def test_html_page_wraps_the_same_svg(drawing_engine: Engine) -> None:
    html = picture(drawing_engine, LAUNCH)
    svg = picture(drawing_engine, LAUNCH, fmt="svg")
    assert html.startswith("<!DOCTYPE html>\n")
    assert svg.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    body = svg.split("\n", 1)[1]
    assert body in html
    assert "<title>launch.werkbaum — Werkbaum plan</title>" in html


@pytest.mark.parametrize("plan", fixture_plans(), ids=lambda p: p.name)
def test_every_node_is_a_box_with_its_ref_status_and_label(
    drawing_engine: Engine, plan: Path
) -> None:
    analysis = drawing_engine.analyze(plan.read_text(encoding="utf-8"))
    nodes = analysis.nodes()
    root = svg_root(picture(drawing_engine, plan, fmt="svg", expand=True))
    boxes = node_boxes(root)
    assert len(boxes) == len(nodes)
    for node, box in zip(nodes, boxes, strict=True):
        assert box.get("data-line") == str(node.line)
        assert box.get("data-status") == (node.status or "")
        assert node.label.startswith(label_of(box).rstrip("…").rstrip()), node.line
        assert tooltip_of(box).split("\n")[0] == node.label


def test_reference_plan_counts(drawing_engine: Engine) -> None:
    root = svg_root(picture(drawing_engine, REFERENCE_PLAN, fmt="svg", expand=True))
    boxes = node_boxes(root)
    assert len(boxes) == 233
    stations = [b for b in boxes if "data-station" in b.attrib]
    assert [b.get("data-station") for b in stations] == [str(k) for k in range(1, 31)]
    for box in stations:
        pill = group(box, "pill station")
        assert text_of(pill) == f"S{box.get('data-station')}"
    assert sum(1 for b in boxes if "needed" in b.get("class", "").split()) == 188


def test_path_refs_become_data_refs(drawing_engine: Engine) -> None:
    analysis = drawing_engine.analyze(REFERENCE_PLAN.read_text(encoding="utf-8"))
    assert analysis.path is not None
    root = svg_root(picture(drawing_engine, REFERENCE_PLAN, fmt="svg", expand=True))
    boxes = {b.get("data-ref"): b for b in node_boxes(root)}
    assert len(boxes) == 233  # refs are unique
    needed = {ref for ref, b in boxes.items() if "needed" in b.get("class", "").split()}
    assert needed == set(analysis.path.needed)
    stations = [ref for ref, b in boxes.items() if "data-station" in b.attrib]
    assert stations == list(analysis.path.stations)


def test_effective_status_discrepancies_are_marked(drawing_engine: Engine) -> None:
    root = svg_root(picture(drawing_engine, REFERENCE_PLAN, fmt="svg"))
    marked = [b for b in node_boxes(root) if "data-effective" in b.attrib]
    assert [b.get("data-ref") for b in marked] == list(DISCREPANCIES)
    for box in marked:
        assert (box.get("data-status"), box.get("data-effective")) == ("^", "/")
        pill = next(g for g in box.iter(f"{SVG}g") if "eff" in g.get("class", "").split())
        assert text_of(pill) == "→[/]"
        assert tooltip_of(pill).startswith("effective status: walking skeleton")


def test_status_shows_as_colour_and_as_glyph(drawing_engine: Engine) -> None:
    keys: dict[str, str] = {}
    for plan in fixture_plans():
        root = svg_root(picture(drawing_engine, plan, fmt="svg", expand=True))
        style = text_of(next(root.iter(f"{SVG}style")))
        for box in node_boxes(root):
            code = box.get("data-status", "")
            glyphs = [t for t in box.iter(f"{SVG}text") if t.get("class") == "glyph"]
            assert [text_of(g) for g in glyphs] == ([f"[{code}]"] if code else [])
            keys[code] = next(c for c in box.get("class", "").split() if c.startswith("st-"))
    assert set(keys) == {"", "?", " ", "!", "~", "/", "x", "^", "-"}
    assert keys[""] == "st-neutral"
    for code, key in keys.items():
        fill = COLOURS.get(code, "#FFFFFF")
        assert re.search(rf"\.{key} \.box[^{{]*\{{fill:{fill};", style), key


def test_gates_optional_and_discarded(drawing_engine: Engine) -> None:
    root = svg_root(picture(drawing_engine, LAUNCH, fmt="svg"))
    gates = [text_of(t) for t in root.iter(f"{SVG}text") if t.get("class") == "gate"]
    assert gates == ["all of", "all of", "all of", "any of"]
    optional = [p for p in root.iter(f"{SVG}path") if "optional" in p.get("class", "").split()]
    assert len(optional) == 2  # the reviews edge and the legend's sample
    reviews = box_of(root, "#shop.build.reviews")
    assert "optional" in reviews.get("class", "").split()
    xor = svg_root(picture(drawing_engine, "[ ] P\n  = [ ] A (S)\n  = [-] B (M)\n", fmt="svg"))
    assert "exactly one" in [text_of(t) for t in xor.iter(f"{SVG}text") if t.get("class") == "gate"]
    discarded = box_of(xor, "L3")
    assert {"st-verworfen", "faded"} <= set(discarded.get("class", "").split())


def test_sizes_people_and_assumed_sizes(drawing_engine: Engine) -> None:
    root = svg_root(picture(drawing_engine, LAUNCH, fmt="svg"))
    pay = box_of(root, "#shop.pay")
    assumed = group(pay, "pill size assumed")
    assert text_of(assumed) == "~S"
    assert tooltip_of(assumed).startswith("assumed size S")
    cart = box_of(root, "#shop.build.cart")
    assert [text_of(g) for g in groups(cart, "pill size")] == ["M"]
    stripe = box_of(root, "#shop.pay.stripe")
    people = [text_of(g) for g in groups(stripe, "pill person")]
    assert people == ["@carla"]


def test_warnings_sit_at_their_nodes_with_the_english_text(drawing_engine: Engine) -> None:
    plan = FIXTURES / "example-werkbaum.werkbaum"
    analysis = drawing_engine.analyze(plan.read_text(encoding="utf-8"))
    root = svg_root(picture(drawing_engine, plan, fmt="svg"))
    by_line = {b.get("data-line"): b for b in node_boxes(root)}
    assert analysis.warnings
    for warning in analysis.warnings:
        box = by_line[str(warning.line)]
        pill = group(box, "pill warn")
        assert warning.text in tooltip_of(pill).split("\n")
    listed = group(root, "warnings")
    assert [text_of(t) for t in listed] == [f"⚠ {w.text}" for w in analysis.warnings]


def test_line_less_and_unattached_warnings_are_listed(drawing_engine: Engine) -> None:
    text = "[ ] Plan\n  - [ ] A (S) @anna\n  - [ ] B (L) @anna\n---\n#nobody\n  Text.\n"
    root = svg_root(picture(drawing_engine, text, fmt="svg"))
    listed = [text_of(t) for t in group(root, "warnings")]
    assert any("#nobody" in line for line in listed)  # unknownDesc: a line of no node
    for box in node_boxes(root):
        assert not groups(box, "pill warn")


def test_folded_subtrees_collapse_unless_expanded(drawing_engine: Engine) -> None:
    folded = svg_root(picture(drawing_engine, REFERENCE_PLAN, fmt="svg"))
    boxes = node_boxes(folded)
    assert len(boxes) == 227
    view = box_of(folded, "#idea.view")
    assert view.get("data-hidden") == "6"
    assert "▸ 6 hidden" in [text_of(g) for g in view.iter(f"{SVG}g")]
    # The folded box stands in for its subtree: its hidden station is its own.
    assert view.get("data-station") == "17"
    assert len([b for b in boxes if "data-station" in b.attrib]) == 30
    expanded = svg_root(picture(drawing_engine, REFERENCE_PLAN, fmt="svg", expand=True))
    assert "data-hidden" not in box_of(expanded, "#idea.view").attrib


def test_a_folded_top_stays_open(drawing_engine: Engine) -> None:
    root = svg_root(picture(drawing_engine, "[ ] > Plan\n  - [ ] A\n    - [ ] A1\n", fmt="svg"))
    assert [b.get("data-line") for b in node_boxes(root)] == ["1", "2", "3"]
    inner = svg_root(picture(drawing_engine, "[ ] Plan\n  - [ ] > A\n    - [ ] A1\n", fmt="svg"))
    assert [b.get("data-line") for b in node_boxes(inner)] == ["1", "2"]


def test_a_subtree_by_id(drawing_engine: Engine) -> None:
    root = svg_root(picture(drawing_engine, LAUNCH, fmt="svg", node="shop.build"))
    refs = [b.get("data-ref") for b in node_boxes(root)]
    assert refs == [
        "#shop.build",
        "#shop.build.cart",
        "#shop.build.search",
        "#shop.build.reviews",
    ]
    assert picture(drawing_engine, LAUNCH, fmt="svg", node="#shop.build") == picture(
        drawing_engine, LAUNCH, fmt="svg", node="shop.build"
    )
    with pytest.raises(NotFound):
        picture(drawing_engine, LAUNCH, node="nope")


def test_duplicate_ids_get_the_paths_refs(drawing_engine: Engine) -> None:
    plan = FIXTURES / "example-werkbaum.werkbaum"
    root = svg_root(picture(drawing_engine, plan, fmt="svg", expand=True))
    refs = [b.get("data-ref") for b in node_boxes(root)]
    assert refs.count("#123") == 1
    assert "L101" in refs


HOSTILE = (
    '[ ] <script>alert("x")</script> & \'quoted\' "label" #a\x01b\n'
    "  - [~] </text></g></svg><img src=x onerror=alert(1)> @<b>\n"
    '  - [ ] ]]> <!-- --> (M) :#a\x01b https://example.org/?a="1"&b=<2>\n'
    '    " desc with </title><script>1</script>\n'
)


@pytest.mark.parametrize("fmt", ["svg", "html"])
def test_plan_text_is_only_ever_text(drawing_engine: Engine, fmt: str) -> None:
    drawn = picture(drawing_engine, HOSTILE, fmt=fmt, expand=True)
    assert "<script" not in drawn
    assert "<img" not in drawn
    assert "\x01" not in drawn
    svg = drawn if fmt == "svg" else drawn[drawn.index("<svg") : drawn.index("</svg>") + 6]
    root = svg_root(svg)
    boxes = node_boxes(root)
    assert len(boxes) == 3
    assert tooltip_of(boxes[0]).startswith('<script>alert("x")</script> & \'quoted\' "label"')
    assert "</text></g></svg><img src=x onerror=alert(1)>" in tooltip_of(boxes[1])
    assert "</title><script>1</script>" in tooltip_of(boxes[2])
    if fmt == "html":
        tags = _html_tags(drawn)
        assert "script" not in tags
        assert "img" not in tags


def test_the_picture_loads_nothing_and_runs_nothing(drawing_engine: Engine) -> None:
    html = picture(drawing_engine, REFERENCE_PLAN)
    assert set(_html_tags(html)) <= {
        "html", "head", "meta", "title", "style", "body", "svg", "rect", "g", "text", "tspan",
        "path",
    }  # fmt: skip
    root = svg_root(picture(drawing_engine, REFERENCE_PLAN, fmt="svg"))
    for element in root.iter():
        for name, value in element.attrib.items():
            assert not name.startswith("on"), name
            assert name not in ("href", "src", "{http://www.w3.org/1999/xlink}href"), name
            assert "url(" not in value and "javascript:" not in value, (name, value)
    style = text_of(next(root.iter(f"{SVG}style")))
    assert "url(" not in style and "@import" not in style
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def _html_tags(html: str) -> list[str]:
    tags: list[str] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append(tag)

    Collect().feed(html)
    return tags


def test_labels_wrap_at_32_characters(drawing_engine: Engine) -> None:
    label = "A fairly long label that has to wrap onto more than one line in the box"
    root = svg_root(picture(drawing_engine, f"[ ] {label}\n", fmt="svg"))
    text = next(t for t in node_boxes(root)[0].iter(f"{SVG}text") if t.get("class") == "label")
    lines = list(text.itertext())
    assert len(lines) == 3
    assert all(len(line) <= 32 for line in lines)
    assert " ".join(lines) == label


def test_bad_payloads_are_refused(drawing_engine: Engine) -> None:
    from werkbaum_core.errors import EngineError

    for payload in ({"text": 1}, {"text": "x", "format": "png"}, {"text": "x", "id": 3}):
        with pytest.raises(EngineError, match="picture: "):
            drawing_engine.call("picture", payload)
