"""An HTTP worker's app exempts its start-up objects from the garbage collector once it
serves (``served_app``, uvicorn's factory); an app a test builds in its own process does
not. Why: ``tests/stdio/test_collector.py``."""

from __future__ import annotations

import gc

import httpx
import pytest

from tests.backend import Backend
from tests.conftest import walked
from tests.http.conftest import TOKENS, serving
from werkbaum_core.engine import LazyEngine
from werkbaum_http.app import create_app
from werkbaum_http.config import HttpConfig

pytestmark = pytest.mark.usefixtures("unfrozen")


@pytest.mark.parametrize("freeze_heap", [True, False])
def test_the_app_freezes_when_asked_once_it_serves(
    backend: Backend, http_engine: LazyEngine, freeze_heap: bool
) -> None:
    config = HttpConfig(servers=(backend.base_url,))
    app = create_app(config, TOKENS, engine=http_engine, freeze_heap=freeze_heap)
    built = [object()]
    assert gc.get_freeze_count() == 0
    with serving(app) as url:
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
        assert (gc.get_freeze_count() > 0) is freeze_heap
        assert walked(built) is not freeze_heap
