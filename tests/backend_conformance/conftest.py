"""Fixtures of the backend suites: which line-ops implementation the stand-in runs on."""

from __future__ import annotations

import pytest

from tests.tools import require_tool

OPS_IMPLS = ("python", "dukpy", "node")
"""The Python transcription of documents-api §3, then ``live.js`` on each executor."""


def _node_available() -> bool:
    from werkbaum_core.engine.node_executor import node_binary

    return node_binary() is not None


@pytest.fixture(scope="module", params=OPS_IMPLS)
def ops_impl(request: pytest.FixtureRequest) -> str:
    """Run the whole module once per implementation, so the backend is proven on each."""
    if request.param == "node":
        require_tool("node")
    return str(request.param)
