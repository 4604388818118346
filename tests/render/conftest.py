"""The engines of the picture tests: the bundled modules plus the ``picture`` entry."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import engine_on
from werkbaum_core import EXECUTORS, Engine
from werkbaum_stdio.render_cli import PICTURES_ENTRY


@pytest.fixture(scope="session", params=EXECUTORS)
def drawing_engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """An engine that draws, on each executor (the same suite runs on all of them)."""
    yield from engine_on(request.param, PICTURES_ENTRY)
