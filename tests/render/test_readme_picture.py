"""The README's picture is the current drawing of the bundled example."""

from __future__ import annotations

from tests.conftest import REPO
from tests.render.pictures import picture
from werkbaum_core import Engine

EXAMPLE = REPO / "examples" / "launch.werkbaum"
CHECKED_IN = REPO / "docs" / "launch.svg"


def test_docs_launch_svg_is_current(drawing_engine: Engine) -> None:
    current = picture(drawing_engine, EXAMPLE, fmt="svg")
    assert CHECKED_IN.read_bytes() == current.encode("utf-8"), (
        f"{CHECKED_IN.relative_to(REPO)} is stale: run `nox -s pictures` and commit it"
    )


def test_readme_shows_it() -> None:
    assert "](docs/launch.svg)" in (REPO / "README.md").read_text(encoding="utf-8")
