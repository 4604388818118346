"""diagram.js on its own, as an MCP App page will call it: ``drawPlan(toolResult, options)``
with whatever the inspect tool returned (a ``base``, parts left out by ``include``)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import REFERENCE_PLAN, REPO, engine_on
from tests.render.pictures import SVG, label_of, node_boxes, svg_root, text_of, tooltip_of
from werkbaum_core import EXECUTORS, Engine
from werkbaum_core.engine.modules import bundled_dir
from werkbaum_core.errors import EngineError
from werkbaum_stdio.render_cli import PICTURES_ENTRY

PROBE = REPO / "tests" / "js" / "diagram_probe.js"
DIAGRAM = bundled_dir() / "diagram.js"


@pytest.fixture(scope="module", params=EXECUTORS)
def probe(request: pytest.FixtureRequest) -> Iterator[Engine]:
    yield from engine_on(request.param, PICTURES_ENTRY, PROBE)


def draw(engine: Engine, analysis: Any, **options: Any) -> str:
    result: str = engine.call("drawPlan", {"analysis": analysis, "options": options})
    return result


def test_a_tool_result_draws_like_the_cli(probe: Engine) -> None:
    text = REFERENCE_PLAN.read_text(encoding="utf-8")
    result = {"base": {"version": None, "checksum": "sha256:0"}, **probe.analyze_json(text)}
    drawn = draw(probe, result, format="svg", title="werkbaum.werkbaum")
    cli = probe.call("picture", {"text": text, "format": "svg", "title": "werkbaum.werkbaum"})
    assert drawn == cli["picture"]


def test_parts_left_out_by_include_draw_without_them(probe: Engine) -> None:
    text = REFERENCE_PLAN.read_text(encoding="utf-8")
    tree_only = probe.analyze_json(text, include=["tree"])
    root = svg_root(draw(probe, tree_only, format="svg", expand=True))
    boxes = node_boxes(root)
    assert len(boxes) == 233
    assert not any("needed" in b.get("class", "").split() for b in boxes)
    assert not any("data-station" in b.attrib for b in boxes)
    summary = next(t for t in root.iter(f"{SVG}text") if t.get("class") == "summary")
    assert text_of(summary) == "233 nodes · no warnings"


def test_station_summaries_are_read_by_their_ref(probe: Engine) -> None:
    """The inspect tool may list stations as node summaries ({ref, label, …})."""
    analysis = probe.analyze_json("[ ] Plan\n  - [ ] #a: A (S)\n  - [ ] #b: B (S)\n")
    plain = draw(probe, analysis, format="svg")
    analysis["path"]["stations"] = [{"ref": r, "label": "?"} for r in analysis["path"]["stations"]]
    assert draw(probe, analysis, format="svg") == plain
    assert plain.count("data-station=") == 2


@pytest.mark.parametrize(
    ("analysis", "options", "message"),
    [
        (None, {}, "the analysis must be an object with a tree array"),
        ({"tree": {}}, {}, "the analysis must be an object with a tree array"),
        ({"tree": [1]}, {}, "every tree node must be an object"),
        ({"tree": []}, {"format": "png"}, "format must be html or svg"),
    ],
)
def test_bad_input_is_a_clear_error(
    probe: Engine, analysis: Any, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(EngineError, match=re.escape(message)):
        draw(probe, analysis, **options)


def test_an_empty_tree_is_a_header_only(probe: Engine) -> None:
    root = svg_root(draw(probe, {"tree": [], "warnings": []}, format="svg"))
    assert node_boxes(root) == []


def test_unknown_status_codes_and_odd_fields_are_neutral(probe: Engine) -> None:
    node = {"label": 7, "line": "3", "status": "?!", "tags": "anna", "children": None}
    root = svg_root(draw(probe, {"tree": [node]}, format="svg"))
    (box,) = node_boxes(root)
    assert (box.get("data-status"), box.get("data-ref")) == ("", "L3")
    assert "st-neutral" in box.get("class", "").split()


def test_the_module_is_self_contained_es2022() -> None:
    """What an app page can bundle: one import (model.js, itself import-free), no host APIs."""
    source = DIAGRAM.read_text(encoding="utf-8")
    assert re.findall(r"^import .*$", source, re.M) == [
        "import { initialCollapsed } from './model.js';"
    ]
    assert not re.findall(r"^import ", (bundled_dir() / "model.js").read_text("utf-8"), re.M)
    code = re.sub(r"//.*$", "", source, flags=re.M)
    for name in ("Intl", "setTimeout", "setInterval", "crypto", "document", "window", "Date",
                 "Math.random", "localeCompare", "toLocaleString", "globalThis", "require",
                 "process", "eval", "Function", "fetch", "structuredClone", "TextEncoder",
                 "console"):  # fmt: skip
        assert not re.search(rf"\b{re.escape(name)}\b", code), name


def test_node_runs_the_module_without_the_engine(node_installed: str, tmp_path: Any) -> None:
    """In a bare ES module host (as in a browser page), with the tree straight from JSON."""
    script = tmp_path / "draw.mjs"
    script.write_text(
        f"import {{ drawPlan }} from {json.dumps(DIAGRAM.as_uri())};\n"
        "const analysis = JSON.parse(process.argv[2]);\n"
        "process.stdout.write(drawPlan(analysis, { format: 'svg' }));\n",
        encoding="utf-8",
    )
    analysis = {"tree": [{"label": "Plan", "line": 1, "status": "~", "children": []}]}
    out = subprocess.run(
        [node_installed, str(script), json.dumps(analysis)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    (box,) = node_boxes(svg_root(out))
    assert (box.get("data-ref"), box.get("data-status")) == ("L1", "~")


def test_text_xml_cannot_hold_is_replaced(probe: Engine) -> None:
    """Control characters and lone surrogates (possible in JSON from elsewhere) would make
    a standalone .svg unparseable; pairs (emoji) stay."""
    node = {"label": "a\x00b\x1f \ud800 c \U0001f680 \udc00", "line": 1, "id": "x\x0by"}
    svg = draw(probe, {"tree": [node]}, format="svg")
    (box,) = node_boxes(svg_root(svg))
    assert box.get("data-ref") == "#x\ufffdy"
    assert label_of(box) == "a\ufffdb\ufffd \ufffd c \U0001f680 \ufffd"


def test_long_labels_end_in_an_ellipsis(probe: Engine) -> None:
    label = " ".join(f"word{k}" for k in range(60))
    (box,) = node_boxes(
        svg_root(draw(probe, {"tree": [{"label": label, "line": 1}]}, format="svg"))
    )
    label_text = next(t for t in box.iter(f"{SVG}text") if t.get("class") == "label")
    assert len(list(label_text.itertext())) == 4
    shown = label_of(box)
    assert shown.endswith("…")
    assert label.startswith(shown.removesuffix("…").rstrip())
    assert tooltip_of(box).split("\n")[0] == label


def test_inspect_views_show_what_they_left_out(probe: Engine) -> None:
    """A tool result shaped by ``depth`` or ``hideDone`` says so, box by box and above."""
    text = "[ ] P\n  - [ ] A\n    - [ ] A1\n      - [x] A2\n  - [x] B\n    - [x] B1\n"
    cut = probe.call("analyze", {"text": text, "depth": 1, "include": ["tree", "path"]})
    root = svg_root(draw(probe, cut, format="svg"))
    a = next(b for b in node_boxes(root) if b.get("data-line") == "2")
    assert a.get("data-cut") == "2"
    assert "▸ 2 below" in [text_of(g) for g in a.iter(f"{SVG}g")]
    summary = next(t for t in root.iter(f"{SVG}text") if t.get("class") == "summary")
    assert "cut at depth 1 (2 nodes with more below)" in text_of(summary)
    done = probe.call("analyze", {"text": text, "hideDone": True, "include": ["tree", "path"]})
    root = svg_root(draw(probe, done, format="svg"))
    assert [b.get("data-line") for b in node_boxes(root)] == ["1", "2", "3"]
    summary = next(t for t in root.iter(f"{SVG}text") if t.get("class") == "summary")
    assert "2 done or discarded subtrees (3 nodes) left out" in text_of(summary)
