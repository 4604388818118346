"""The MCP App view in a real browser: a minimal host page that speaks the Apps bridge shows
the ``ui://`` resource in a sandboxed frame and hands it ``werkbaum_inspect`` results, both
taken from the real ``werkbaum-mcp`` over stdio.

What a person sees is read from the DOM inside the frame: the boxes (folded as the diagram's
rule says, and all 233 once the view's toggle opens them), the 30 stations, the three
effective-status marks and the colours of every status; the drawing equals the CLI's. The
frame requests nothing, and its CSP refuses what the view does not need. Screenshots go to
``build/screenshots/`` (the test prints their paths).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REFERENCE_PLAN
from tests.render import chromium as shared
from werkbaum_stdio.registration import PLAN_VIEW_URI

SERVER = Path(sys.executable).with_name("werkbaum-mcp")
HOST_PAGE = Path(__file__).with_name("app_host.html")
PLAN = REFERENCE_PLAN.name
CALLS = {
    "plan": {"source": PLAN},
    "no tree": {"source": PLAN, "include": ["path"]},
    "error": {"source": "missing.werkbaum"},
}
BRIDGE_METHODS = {"ui/initialize", "ui/notifications/initialized", "ui/notifications/size-changed"}
MAX_HEIGHT = 900  # the host page's containerDimensions.maxHeight
SVG_OUTER = "() => document.querySelector('svg.wb-diagram').outerHTML"


@attrs.frozen
class Served:
    """What the server gave: the view's HTML and each call's ``CallToolResult`` as on the wire."""

    html: str
    results: dict[str, dict[str, Any]]


async def from_the_server(root: Path) -> Served:
    params = StdioServerParameters(command=str(SERVER), args=["--root", str(root)], cwd=str(root))
    async with Client(params) as client:
        html = (await client.read_resource(PLAN_VIEW_URI)).contents[0].text  # type: ignore[union-attr]
        results = {
            name: (await client.call_tool("werkbaum_inspect", args)).model_dump(
                mode="json", by_alias=True, exclude_none=True
            )
            for name, args in CALLS.items()
        }
    return Served(html, results)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Served:
    root = tmp_path_factory.mktemp("plans")
    shutil.copy(REFERENCE_PLAN, root / PLAN)
    # In a thread of its own: Playwright's sync API keeps an event loop on this one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, from_the_server, root).result(timeout=120)


@pytest.fixture(scope="module")
def host_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The host page (and a file the CSP probe would fetch) on loopback."""
    site = tmp_path_factory.mktemp("host")
    shutil.copy(HOST_PAGE, site / HOST_PAGE.name)
    (site / "probe.txt").write_text("fetched\n", encoding="utf-8")
    with shared.loopback_site(site) as url:
        yield url


class Hosted:
    """The host page showing the view for one call, with every request (and every one the
    browser refused) and console line."""

    def __init__(self, context: Any, site: str, served: Served, call: str) -> None:
        self.requests: list[str] = []
        self.failed: dict[str, str | None] = {}
        self.console: list[str] = []
        self.page = context.new_page()
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on(
            "requestfailed", lambda request: self.failed.update({request.url: request.failure})
        )
        self.page.on("console", lambda message: self.console.append(message.text))
        self.url = f"{site}/{HOST_PAGE.name}"
        self.page.goto(self.url)
        tool_call = {
            "name": "werkbaum_inspect",
            "arguments": CALLS[call],
            "result": served.results[call],
        }
        self.page.evaluate("([html, call]) => showView(html, call)", [served.html, tool_call])
        self.page.wait_for_function("window.host.initialized")
        self.frame = next(f for f in self.page.frames if f != self.page.main_frame)

    def _refused(self, request: Any) -> None:
        self.failed[request.url] = request.failure

    def boxes(self) -> list[dict[str, Any]]:
        self.frame.wait_for_selector("g.node")
        boxes: list[dict[str, Any]] = self.frame.evaluate(shared.READ_BOXES)
        return boxes

    def drawn(self, expand: bool) -> list[dict[str, Any]]:
        """The boxes after setting the view's "open the folded subtrees" toggle (it redraws
        on the change, before the click returns)."""
        self.frame.wait_for_selector("g.node")
        self.frame.set_checked("#expand", expand)
        return self.boxes()

    def note(self) -> str:
        self.frame.wait_for_selector("#note:not([hidden])")
        text: str = self.frame.inner_text("#note")
        return text

    def received(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.page.evaluate("window.host.received")
        return messages


@pytest.fixture(scope="module")
def plan_view(browser: Any, host_site: str, served: Served) -> Iterator[Hosted]:
    hosted = Hosted(browser, host_site, served, "plan")
    yield hosted
    hosted.page.close()


@pytest.fixture(scope="module")
def folded(plan_view: Hosted) -> list[dict[str, Any]]:
    """The boxes as the view first draws them: folded by the diagram's rule."""
    return plan_view.boxes()


@pytest.fixture(scope="module")
def expanded(plan_view: Hosted, folded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The boxes once the view's toggle opened the folded subtrees."""
    return plan_view.drawn(expand=True)


@pytest.fixture(scope="module")
def cli_pictures(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The CLI's pictures of the same plan (folded, expanded) as the browser parsed them."""
    tmp = tmp_path_factory.mktemp("cli")
    page = browser.new_page()
    try:
        outer = {}
        for name, args in (("folded", ()), ("expanded", ("--expand",))):
            page.goto(shared.render(tmp, *args).as_uri())
            outer[name] = page.evaluate(SVG_OUTER)
        return outer
    finally:
        page.close()


def test_the_view_folds_as_the_diagram_does(
    plan_view: Hosted, folded: list[dict[str, Any]]
) -> None:
    assert len(folded) == 227
    assert len(folded) + sum(int(b["hidden"] or 0) for b in folded) == 233
    assert next(b for b in folded if b["ref"] == "#idea.view")["hidden"] == "6"
    shared.check_stations(folded)
    shared.check_discrepancies(folded)


def test_every_node_is_a_box_once_expanded(expanded: list[dict[str, Any]]) -> None:
    assert len(expanded) == 233
    assert len({b["ref"] for b in expanded}) == 233
    shared.check_stations(expanded)
    shared.check_discrepancies(expanded)
    shared.check_status_colours(expanded)


def test_the_view_draws_the_cli_picture(
    plan_view: Hosted, expanded: list[dict[str, Any]], cli_pictures: dict[str, str]
) -> None:
    """The bundled diagram.js in the frame draws the very picture `werkbaum render` wrote."""
    for expand, cli in ((True, cli_pictures["expanded"]), (False, cli_pictures["folded"])):
        plan_view.drawn(expand)
        assert plan_view.frame.evaluate(SVG_OUTER) == cli


def test_the_view_speaks_only_the_bridge(plan_view: Hosted, folded: list[dict[str, Any]]) -> None:
    received = plan_view.received()
    first = received[0]
    assert first["method"] == "ui/initialize"
    assert first["params"]["protocolVersion"] == "2026-01-26"
    assert first["params"]["appInfo"]["name"] == "werkbaum-plan-view"
    assert received[1]["method"] == "ui/notifications/initialized"
    assert {m["method"] for m in received} <= BRIDGE_METHODS  # no tool call, no read
    sizes = plan_view.page.evaluate("window.host.sizes")
    assert sizes, "the view reports its size"
    assert sizes[-1]["width"] >= 960  # the picture's width, for the host to fit
    assert 300 < sizes[-1]["height"] <= MAX_HEIGHT  # within the host's maximum: it scrolls


def test_the_frame_requests_and_runs_nothing_else(
    plan_view: Hosted, expanded: list[dict[str, Any]]
) -> None:
    assert plan_view.requests == [plan_view.url]  # the host page; the view came as srcdoc
    assert plan_view.frame.evaluate("document.scripts.length") == 1
    assert not [m for m in plan_view.console if "Refused" in m or "Content Security" in m]


PROBE = """async (url) => {
  const refused = [];
  document.addEventListener('securitypolicyviolation', (e) => refused.push(e.effectiveDirective));
  let fetched;
  try { fetched = await (await fetch(url)).text(); } catch (e) { fetched = 'blocked: ' + e.name; }
  const img = document.createElement('img');
  const loaded = new Promise((done) => {
    img.onload = () => done('loaded');
    img.onerror = () => done('blocked');
  });
  img.src = url;
  document.body.append(img);
  const script = document.createElement('script');
  script.textContent = 'window.injected = true';
  document.body.append(script);
  return { fetched, image: await loaded, injected: window.injected === true, refused };
}"""


def test_the_csp_refuses_what_the_view_does_not_need(
    browser: Any, host_site: str, served: Served
) -> None:
    hosted = Hosted(browser, host_site, served, "plan")
    try:
        hosted.boxes()
        probe = f"{host_site}/probe.txt"
        outcome = hosted.frame.evaluate(PROBE, probe)
        assert outcome["fetched"].startswith("blocked")
        assert outcome["image"] == "blocked"
        assert outcome["injected"] is False  # an inline script without the view's hash
        assert {"connect-src", "img-src", "script-src-elem"} <= set(outcome["refused"])
        assert hosted.failed == {probe: "csp"}  # refused before it went out
    finally:
        hosted.page.close()


def test_a_result_without_a_tree_says_so(browser: Any, host_site: str, served: Served) -> None:
    hosted = Hosted(browser, host_site, served, "no tree")
    try:
        note = hosted.note()
        assert note.startswith("Nothing to draw: this werkbaum_inspect result has no tree")
        assert "base, path" in note
        assert hosted.frame.evaluate("document.querySelectorAll('g.node').length") == 0
    finally:
        hosted.page.close()


def test_a_tool_error_is_shown_as_its_message(browser: Any, host_site: str, served: Served) -> None:
    assert served.results["error"]["isError"] is True
    hosted = Hosted(browser, host_site, served, "error")
    try:
        note = hosted.note()
        assert note.startswith("werkbaum_inspect failed: ")
        assert "missing.werkbaum" in note
    finally:
        hosted.page.close()


def test_screenshots(plan_view: Hosted, expanded: list[dict[str, Any]]) -> None:
    """The artifacts: the host page with the view as it opens (folded), and the expanded view
    scrolled to #be.docs and its →[/] mark."""
    shared.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    assert len(plan_view.drawn(expand=False)) == 227  # as the view opens
    plan_view.frame.evaluate("document.getElementById('plan').scrollTo(0, 0)")
    top = shared.SCREENSHOTS / "werkbaum-app.png"
    plan_view.page.screenshot(path=str(top))
    assert len(plan_view.drawn(expand=True)) == 233
    plan_view.frame.evaluate(
        """() => {
        const plan = document.getElementById('plan');
        const box = document.querySelector('g.node[data-ref="#be.docs"]').getBoundingClientRect();
        const frame = plan.getBoundingClientRect();
        plan.scrollBy(box.left - frame.left - 500, box.top - frame.top - 300);
        }"""
    )
    detail = shared.SCREENSHOTS / "werkbaum-app-discrepancy.png"
    plan_view.page.screenshot(path=str(detail))
    for shot in (top, detail):
        assert shared.png(shot)
        print(f"screenshot: {shot}")
