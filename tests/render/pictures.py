"""Shared helpers of the picture tests: draw a plan, read the SVG back as XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from werkbaum_core import Engine
from werkbaum_stdio.render_cli import draw

SVG = "{http://www.w3.org/2000/svg}"
SNAPSHOTS = Path(__file__).with_name("snapshots")


def picture(engine: Engine, plan: Path | str, **options: object) -> str:
    """The picture of a plan file (or plan text) as ``werkbaum render`` draws it."""
    if isinstance(plan, Path):
        text, title = plan.read_text(encoding="utf-8"), plan.name
    else:
        text, title = plan, "plan.werkbaum"
    return draw(engine, text, title=title, **options)  # type: ignore[arg-type]


def svg_root(svg: str) -> ET.Element:
    """The SVG document parsed as XML (fails on anything a standalone .svg may not hold)."""
    return ET.fromstring(svg.encode("utf-8"))


def node_boxes(root: ET.Element) -> list[ET.Element]:
    """Every node box (the ``g`` elements that carry ``data-ref``), in document order."""
    return [g for g in root.iter(f"{SVG}g") if "data-ref" in g.attrib]


def group(element: ET.Element, cls: str) -> ET.Element:
    """The first ``g`` at or below ``element`` whose class attribute is exactly ``cls``."""
    return next(g for g in element.iter(f"{SVG}g") if g.get("class") == cls)


def groups(element: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in element.iter(f"{SVG}g") if g.get("class") == cls]


def box_of(root: ET.Element, ref: str) -> ET.Element:
    found = [g for g in node_boxes(root) if g.get("data-ref") == ref]
    assert len(found) == 1, f"{ref}: {len(found)} boxes"
    return found[0]


def text_of(element: ET.Element) -> str:
    """The text an element shows: everything below it except its tooltips (``title``)."""
    parts = [element.text or ""] if element.tag != f"{SVG}title" else []
    for child in element:
        if child.tag != f"{SVG}title":
            parts.append(text_of(child))
        parts.append(child.tail or "")
    return "".join(parts)


def label_of(box: ET.Element) -> str:
    """The label lines of a node box, joined with spaces."""
    label = next(t for t in box.iter(f"{SVG}text") if t.get("class") == "label")
    return " ".join(part for part in label.itertext())


def tooltip_of(element: ET.Element) -> str:
    title = element.find(f"{SVG}title")
    assert title is not None and title.text is not None
    return title.text
