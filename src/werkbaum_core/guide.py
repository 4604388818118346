"""The bundled notation guide for agents (the ``werkbaum://guide`` resource).

``guide.md`` ships inside this package; an adapter serves it unless a
configured Werkbaum checkout provides its own ``llms.md`` (spec §4).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

GUIDE_RESOURCE = "guide.md"
GUIDE_MIME = "text/markdown"


@cache
def bundled_guide() -> str:
    """The guide's Markdown text, read from the installed package."""
    return (
        resources.files(__package__ or "werkbaum_core")
        .joinpath(GUIDE_RESOURCE)
        .read_text(encoding="utf-8")
    )
