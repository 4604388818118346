"""Fixtures of the agent task suite: the stdio suite's project directory and the HTTP
suite's server on a real socket, as their own test packages define them."""

from __future__ import annotations

import pytest

from tests.http.conftest import base_url, http_engine  # noqa: F401 (fixtures)
from tests.stdio.conftest import project  # noqa: F401 (fixture)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
