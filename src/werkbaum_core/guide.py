"""The bundled notation guide for agents (the ``werkbaum://guide`` resource).

``guide.md`` ships inside this package; an adapter serves it unless a
configured Werkbaum checkout provides its own ``llms.md`` (spec §4).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path

GUIDE_RESOURCE = "guide.md"
GUIDE_MIME = "text/markdown"
GUIDE_URI = "werkbaum://guide"
"""The guide's resource URI; ``werkbaum_read`` takes it as a source too (tools-only hosts)."""


@cache
def bundled_guide() -> str:
    """The guide's Markdown text, read from the installed package."""
    return (
        resources.files(__package__ or "werkbaum_core")
        .joinpath(GUIDE_RESOURCE)
        .read_text(encoding="utf-8")
    )


def checkout_guide(frontend: str | Path | None) -> Path | None:
    """The agent guide of a Werkbaum checkout, when ``frontend`` is its ``frontend/src``.

    Upstream keeps its English guide for agents in ``frontend/public/llms.md``;
    with a checkout configured, agents get the editor's own text.
    """
    if not frontend:
        return None
    candidate = Path(frontend).expanduser().resolve().parent / "public" / "llms.md"
    return candidate if candidate.is_file() else None


def guide_for(frontend: str | Path | None) -> Callable[[], str]:
    """The guide reader to serve: the checkout's ``llms.md`` if there is one, else ours."""
    own = checkout_guide(frontend)
    if own is None:
        return bundled_guide
    return lambda: own.read_text(encoding="utf-8")
