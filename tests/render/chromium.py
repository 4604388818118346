"""What the browser tests share: Debian's Chromium under Playwright, the notation's colours as
the browser computes them, one DOM read of every node box, and a quiet loopback site.

Never a browser Playwright downloads: ``executable_path`` is Debian's ``chromium``
(``tests/tools.py`` says how to install it when it is missing).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from tests.conftest import REFERENCE_PLAN, REPO
from tests.tools import require_tool

WERKBAUM = Path(sys.executable).with_name("werkbaum")
SCREENSHOTS = REPO / "build" / "screenshots"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 60_000
DISCREPANCIES = ["#be.docs", "#col.live.http", "#trk.write"]
FILLS = {
    "idee": "rgb(235, 237, 239)",
    "geplant": "rgb(235, 228, 246)",
    "highrisk": "rgb(255, 229, 204)",
    "arbeit": "rgb(250, 221, 228)",
    "durchstich": "rgb(251, 242, 206)",
    "fertig": "rgb(220, 241, 222)",
    "prod": "rgb(219, 234, 248)",
    "verworfen": "rgb(241, 242, 244)",
}
"""notation.md §7 box fills as the browser computes them."""
STROKES = {
    "idee": "rgb(162, 171, 181)",
    "geplant": "rgb(169, 145, 212)",
    "highrisk": "rgb(249, 115, 22)",
    "arbeit": "rgb(216, 151, 168)",
    "durchstich": "rgb(217, 190, 99)",
    "fertig": "rgb(134, 194, 147)",
    "prod": "rgb(133, 172, 215)",
    "verworfen": "rgb(179, 186, 194)",
}

# Everything the DOM says about the node boxes, read in one round trip.
READ_BOXES = """() => [...document.querySelectorAll('g.node[data-ref]')].map((g) => {
  const box = g.querySelector(':scope > rect.box');
  const style = getComputedStyle(box);
  const r = box.getBoundingClientRect();
  const glyph = g.querySelector(':scope > text.glyph');
  const label = g.querySelector(':scope > text.label');
  const pill = (cls) => g.querySelector(':scope > g.meta > g.' + cls);
  const eff = pill('eff');
  return {
    ref: g.dataset.ref, status: g.dataset.status, effective: g.dataset.effective || null,
    station: g.dataset.station || null, hidden: g.dataset.hidden || null,
    classes: [...g.classList], fill: style.fill, stroke: style.stroke,
    opacity: getComputedStyle(g).opacity,
    glyph: glyph ? glyph.textContent : null,
    label: [...label.childNodes].map((n) => n.textContent).join(' '),
    tooltip: g.querySelector(':scope > title').textContent,
    stationPill: pill('station') ? pill('station').querySelector('text').textContent : null,
    effPill: eff ? eff.querySelector('text').textContent : null,
    effFill: eff ? getComputedStyle(eff.querySelector('rect')).fill : null,
    rect: [r.x + scrollX, r.y + scrollY, r.width, r.height],
  };
})"""

Box = dict[str, Any]
"""One node box as READ_BOXES reads it."""


def check_stations(boxes: list[Box]) -> None:
    """The reference plan's 30 stations, numbered in document order, all on the path."""
    stations = [b for b in boxes if b["station"]]
    assert [b["station"] for b in stations] == [str(k) for k in range(1, 31)]
    assert [b["stationPill"] for b in stations] == [f"S{k}" for k in range(1, 31)]
    assert all("needed" in b["classes"] for b in stations)


def check_discrepancies(boxes: list[Box]) -> None:
    """The three [^] boxes held back to [/] by a dependency, each with its →[/] mark."""
    marked = [b for b in boxes if b["effective"]]
    assert [b["ref"] for b in marked] == DISCREPANCIES
    for box in marked:
        assert (box["status"], box["effective"]) == ("^", "/")
        assert box["effPill"] == "→[/]"
        assert box["effFill"] == FILLS["durchstich"]  # the effective status's colour
        assert box["fill"] == FILLS["prod"]  # the box keeps its own


def check_status_colours(boxes: list[Box]) -> None:
    """Every status present has the notation's fill and border, and its glyph besides."""
    seen: dict[str, set[tuple[str, str]]] = {}
    for box in boxes:
        key = next(c.removeprefix("st-") for c in box["classes"] if c.startswith("st-"))
        seen.setdefault(key, set()).add((box["fill"], box["stroke"]))
        assert box["glyph"] == f"[{box['status']}]"  # the second signal besides colour
    assert set(seen) == {"idee", "geplant", "highrisk", "arbeit", "durchstich", "prod", "verworfen"}
    for key, colours in seen.items():
        assert colours == {(FILLS[key], STROKES[key])}, key


def render(tmp: Path, *args: str) -> Path:
    """The CLI's HTML picture of the reference plan."""
    target = tmp / ("werkbaum" + "".join(a.strip("-") for a in args) + ".html")
    done = subprocess.run(
        [str(WERKBAUM), "render", str(REFERENCE_PLAN), "-o", str(target), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return target


@contextlib.contextmanager
def chromium(profile: Path) -> Iterator[Any]:
    """A browser context of Debian's Chromium with a fresh profile (a start costs ~1 s)."""
    executable = require_tool("chromium")
    with sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(profile),
            executable_path=executable,
            args=FLAGS,
            headless=True,
            timeout=TIMEOUT_MS,
            viewport={"width": 1600, "height": 1000},
        )
        context.set_default_timeout(TIMEOUT_MS)
        try:
            yield context
        finally:
            context.close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def loopback_site(directory: Path) -> Iterator[str]:
    """``directory`` served on 127.0.0.1 (a free port) for the block; yields the base URL."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def png(path: Path) -> bool:
    """Whether ``path`` holds a PNG image."""
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
