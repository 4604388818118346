"""What the terminal allows: colour or not, how many columns, and wrapping to them.

Colour follows the conventions other tools honour: ``NO_COLOR`` (no-color.org)
switches it off, ``FORCE_COLOR`` on (for CI logs that render ANSI), otherwise
only a terminal gets it. Widths count terminal cells, so a label with CJK
characters or emoji wraps where it really reaches the edge. What is laid out is
plan text and file names, foreign data: :func:`wrap` prints every piece in its
terminal form (:func:`display.terminal`: ``ESC`` as ``\\x1b``), so a label cannot
set the window title, hide text or rewrite the line it is on.
"""

from __future__ import annotations

import os
import shutil
import unicodedata
from collections.abc import Sequence
from typing import TextIO

from werkbaum_core import display

DEFAULT_WIDTH = 80
MIN_WIDTH = 20
"""Narrower output cannot show a tree line's prefix and a word beside it."""


def is_terminal(stream: TextIO | None) -> bool:
    """``stream`` is a terminal; a closed stream (None) is not."""
    return stream is not None and stream.isatty()


def use_colour(stream: TextIO | None) -> bool:
    """Colour for ``stream``: ``NO_COLOR`` wins, then ``FORCE_COLOR``, then a tty."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return is_terminal(stream) and os.environ.get("TERM") != "dumb"


def width(requested: int | None) -> int:
    """``--width``, else ``$COLUMNS``, else the terminal's width, else 80."""
    if requested is not None:
        return max(requested, MIN_WIDTH)
    return max(shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns, MIN_WIDTH)


def cells(text: str) -> int:
    """Terminal cells ``text`` takes: wide East Asian characters two, combining marks none."""
    total = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def wrap(units: Sequence[str], first: str, rest: str, width: int) -> list[str]:
    """Lay ``units`` (words, or tokens that must stay whole) out after ``first``.

    The first line starts with ``first``, continuation lines with ``rest``
    (usually spaces up to where the first line's text starts); lines break only
    between units. A unit wider than the room left stands alone on its line.
    Every piece is taken in its terminal form, and measured as it is printed.
    """
    first, rest = display.terminal(first), display.terminal(rest)
    lines: list[str] = []
    current, used = first, cells(first)
    empty = True
    for unit in map(display.terminal, units):
        size = cells(unit)
        if not empty and used + 1 + size > width:
            lines.append(current)
            current, used, empty = rest, cells(rest), True
        if empty:
            current, used, empty = current + unit, used + size, False
        else:
            current, used = current + " " + unit, used + 1 + size
    lines.append(current)
    return lines
