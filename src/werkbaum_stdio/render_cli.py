"""``werkbaum render``: the plan as a picture, drawn by the engine's ``picture`` entry.

The drawing lives in ``diagram.js`` (the same module an MCP App page can bundle);
this module only chooses the format, makes the one engine call and writes the
result byte for byte, so that every executor gives the same file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from werkbaum_core import Engine
from werkbaum_core.engine import check_text_size
from werkbaum_core.engine.modules import bundled_dir
from werkbaum_core.errors import InvalidArgument, NotFound

PICTURES_ENTRY = bundled_dir() / "pictures.js"
"""The engine entry ``picture``; loaded only by engines that draw (``Engine.create(…,
extra_entries=(PICTURES_ENTRY,))``), so the servers' engines start without the drawing code."""
FORMATS = ("html", "svg")
SUFFIXES = {".html": "html", ".htm": "html", ".svg": "svg"}


def picture_format(output: Path | None, requested: str | None) -> str:
    """The format: as requested, else from the output's suffix, else HTML (stdout)."""
    if requested is not None:
        if requested not in FORMATS:
            raise InvalidArgument(f"--format {requested}: choose html or svg", allowed=FORMATS)
        return requested
    if output is None:
        return "html"
    fmt = SUFFIXES.get(output.suffix.lower())
    if fmt is None:
        raise InvalidArgument(
            f"{output}: cannot tell the format from the suffix; name it .html or .svg, "
            "or pass --format",
            allowed=FORMATS,
        )
    return fmt


def draw(
    engine: Engine,
    text: str,
    *,
    title: str,
    node: str | None = None,
    expand: bool = False,
    fmt: str = "html",
) -> str:
    """The picture of ``text`` (the subtree of ``node`` if given) as one string.

    ``engine`` must have loaded :data:`PICTURES_ENTRY`.
    """
    check_text_size(text)
    payload: dict[str, Any] = {"text": text, "title": title, "format": fmt, "expand": expand}
    if node is not None:
        payload["id"] = node.removeprefix("#")
    answer = engine.call("picture", payload)
    if "error" in answer:
        error = answer["error"]
        raise NotFound(error.get("message", f"no node with id {node!r}"), id=node)
    picture: str = answer["picture"]
    return picture


def write_picture(picture: str, stream: BinaryIO) -> None:
    """Write the picture as UTF-8 bytes (whatever the locale) to ``stream``, flushed."""
    stream.write(picture.encode("utf-8"))
    stream.flush()
