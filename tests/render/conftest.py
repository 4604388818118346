"""The engines of the picture tests (the bundled modules plus the ``picture`` entry) and
the browser of the browser tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import engine_on
from tests.render.chromium import chromium
from werkbaum_core import EXECUTORS, Engine
from werkbaum_stdio.render_cli import PICTURES_ENTRY


@pytest.fixture(scope="session", params=EXECUTORS)
def drawing_engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """An engine that draws, on each executor (the same suite runs on all of them)."""
    yield from engine_on(request.param, PICTURES_ENTRY)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's Chromium with a fresh profile, one per test module (a start costs ~1 s)."""
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context
