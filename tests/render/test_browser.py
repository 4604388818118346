"""The CLI's picture of the reference plan in a real browser: headless Chromium (Debian's
package, never a browser Playwright downloads) driven by Playwright's Python API.

It checks what a person sees, through the DOM the browser built: the boxes, stations and
effective-status marks, the computed colours of every status, no overlapping boxes, and
that the page requests and runs nothing. Screenshots are written to
``build/screenshots/`` (the test prints their paths).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REFERENCE_PLAN
from tests.render.chromium import (
    DISCREPANCIES,
    READ_BOXES,
    SCREENSHOTS,
    check_discrepancies,
    check_stations,
    check_status_colours,
    loopback_site,
    png,
    render,
)
from werkbaum_core import Engine
from werkbaum_core.engine.modules import bundled_dir


class Opened:
    """A page showing one picture, with every request and console message it made."""

    def __init__(self, context: Any, path: Path) -> None:
        self.requests: list[str] = []
        self.console: list[str] = []
        self.page = context.new_page()
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda message: self.console.append(message.text))
        self.page.goto(path.as_uri())
        self.url = path.as_uri()
        self.boxes: list[dict[str, Any]] = self.page.evaluate(READ_BOXES)

    def by_ref(self, ref: str) -> dict[str, Any]:
        return next(b for b in self.boxes if b["ref"] == ref)


@pytest.fixture(scope="module")
def expanded(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Opened]:
    opened = Opened(browser, render(tmp_path_factory.mktemp("picture"), "--expand"))
    yield opened
    opened.page.close()


@pytest.fixture(scope="module")
def folded(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Opened]:
    opened = Opened(browser, render(tmp_path_factory.mktemp("picture")))
    yield opened
    opened.page.close()


def test_every_node_is_a_box(expanded: Opened) -> None:
    assert len(expanded.boxes) == 233
    assert len({b["ref"] for b in expanded.boxes}) == 233
    werkbaum = expanded.by_ref("#wb")
    assert werkbaum["label"] == "Werkbaum"
    assert werkbaum["tooltip"].startswith("Werkbaum\n[~] in progress · size XXL")


def test_thirty_stations_in_order(expanded: Opened) -> None:
    check_stations(expanded.boxes)


def test_the_three_discrepancies_are_marked(expanded: Opened) -> None:
    check_discrepancies(expanded.boxes)


def test_box_colours_of_the_statuses(expanded: Opened) -> None:
    check_status_colours(expanded.boxes)


def test_discarded_boxes_are_faded(expanded: Opened) -> None:
    discarded = [b for b in expanded.boxes if b["status"] == "-"]
    assert discarded
    assert all(float(b["opacity"]) < 0.6 for b in discarded)
    assert all(float(b["opacity"]) == 1 for b in expanded.boxes if "faded" not in b["classes"])


def test_no_two_boxes_overlap(expanded: Opened) -> None:
    boxes = sorted(expanded.boxes, key=lambda b: b["rect"][1])
    for i, a in enumerate(boxes):
        ax, ay, aw, ah = a["rect"]
        assert aw > 200 and ah > 30, a["ref"]
        for b in boxes[i + 1 :]:
            bx, by, bw, _ = b["rect"]
            if by >= ay + ah:
                break
            assert bx >= ax + aw or ax >= bx + bw, (a["ref"], b["ref"])


def test_the_page_loads_and_runs_nothing(expanded: Opened) -> None:
    assert expanded.requests == [expanded.url]
    assert expanded.page.evaluate("document.scripts.length") == 0
    assert not [m for m in expanded.console if "Refused" in m or "Content Security" in m]


def test_the_default_picture_folds_and_keeps_the_stations(folded: Opened) -> None:
    assert len(folded.boxes) == 227
    view = folded.by_ref("#idea.view")
    assert view["hidden"] == "6"
    assert len(folded.boxes) + sum(int(b["hidden"] or 0) for b in folded.boxes) == 233
    assert [b["station"] for b in folded.boxes if b["station"]] == [str(k) for k in range(1, 31)]
    assert [b["ref"] for b in folded.boxes if b["effective"]] == DISCREPANCIES


def test_screenshots(expanded: Opened, folded: Opened) -> None:
    """The artifacts: the top of the picture, and the part with #be.docs (its →[/] mark)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    top = SCREENSHOTS / "werkbaum-cli.png"
    folded.page.screenshot(path=str(top))
    x, y, _, _ = expanded.by_ref("#be.docs")["rect"]
    detail = SCREENSHOTS / "werkbaum-cli-discrepancy.png"
    expanded.page.screenshot(
        path=str(detail),
        full_page=True,
        clip={"x": max(0, x - 400), "y": y - 300, "width": 1400, "height": 800},
    )
    for shot in (top, detail):
        assert png(shot)
        print(f"screenshot: {shot}")


PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<script type="application/json" id="analysis">{analysis}</script>
<div id="out"></div>
<script type="module">
import {{ drawPlan }} from './diagram.js';
const analysis = JSON.parse(document.getElementById('analysis').textContent);
window.drawn = drawPlan(analysis, {{ format: 'html', expand: true, title: 'werkbaum.werkbaum' }});
const svg = window.drawn.slice(window.drawn.indexOf('<svg'), window.drawn.indexOf('</svg>') + 6);
document.getElementById('out').innerHTML = svg;
</script></body></html>"""


@pytest.fixture
def module_site(tmp_path: Path) -> Iterator[str]:
    """The bundled modules and a page that imports diagram.js, served on loopback (Chromium
    loads no ES module from file://); the page gets the inspect JSON inline, as an app would."""
    for module in bundled_dir().iterdir():
        if module.suffix == ".js":
            (tmp_path / module.name).write_bytes(module.read_bytes())
    with Engine.create("dukpy", frontend="") as engine:
        analysis = engine.analysis_text(REFERENCE_PLAN.read_text(encoding="utf-8"))
    page = PAGE.format(analysis=analysis.replace("</", "<\\/"))
    (tmp_path / "index.html").write_text(page, encoding="utf-8")
    with loopback_site(tmp_path) as site:
        yield f"{site}/index.html"


def test_the_module_draws_the_same_picture_in_the_browser(
    browser: Any, module_site: str, expanded: Opened
) -> None:
    """diagram.js unchanged in the browser's own engine, fed the inspect JSON: the very
    bytes the CLI wrote, and the same boxes in the DOM (what the MCP App view will do)."""
    page = browser.new_page()
    try:
        page.goto(module_site)
        page.wait_for_function("typeof window.drawn === 'string'")
        drawn = page.evaluate("window.drawn")
        cli = Path(expanded.url.removeprefix("file://")).read_text(encoding="utf-8")
        assert drawn == cli
        boxes = page.evaluate(READ_BOXES)
        assert [b["ref"] for b in boxes] == [b["ref"] for b in expanded.boxes]
        assert [b["fill"] for b in boxes] == [b["fill"] for b in expanded.boxes]
    finally:
        page.close()
