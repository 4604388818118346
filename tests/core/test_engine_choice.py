"""``auto``: node when installed, else dukpy; an explicit choice always wins."""

from __future__ import annotations

import pytest

from werkbaum_core import Engine
from werkbaum_core.engine import choose_executor


def test_an_explicit_choice_wins_over_the_environment() -> None:
    assert choose_executor("dukpy", {"WERKBAUM_ENGINE": "node"}) == "dukpy"
    assert choose_executor(None, {"WERKBAUM_ENGINE": "dukpy"}) == "dukpy"


@pytest.mark.usefixtures("node_installed")
def test_auto_is_node_when_it_is_installed() -> None:
    assert choose_executor(None, {}) == "node"
    assert choose_executor("auto", {}) == "node"
    assert choose_executor(None, {"WERKBAUM_ENGINE": "auto"}) == "node"


def test_auto_falls_back_to_dukpy_without_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WERKBAUM_NODE", "no-such-node-binary")
    assert choose_executor(None, {}) == "dukpy"
    with Engine.create("auto") as engine:
        assert engine.kind == "dukpy"


def test_the_python_api_default_stays_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WERKBAUM_ENGINE", raising=False)
    with Engine.create() as engine:
        assert engine.kind == "dukpy"
