"""``auto``: v8 when installed, else node when on the PATH, else dukpy; the Python API
stays in-process (v8, else dukpy); an explicit choice always wins."""

from __future__ import annotations

import pytest

from werkbaum_core import Engine
from werkbaum_core.engine import choose_executor, v8_executor


@pytest.fixture
def without_v8(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the v8 extra were not installed."""
    monkeypatch.setattr(v8_executor, "available", lambda: False)


@pytest.fixture
def without_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WERKBAUM_NODE", "no-such-node-binary")


def test_an_explicit_choice_wins_over_the_environment() -> None:
    assert choose_executor("dukpy", {"WERKBAUM_ENGINE": "node"}) == "dukpy"
    assert choose_executor(None, {"WERKBAUM_ENGINE": "dukpy"}) == "dukpy"
    assert choose_executor("node", {}) == "node"


def test_auto_is_v8_when_it_is_installed() -> None:
    assert v8_executor.available(), "the dev environment installs the v8 extra"
    assert choose_executor(None, {}) == "v8"
    assert choose_executor("auto", {}) == "v8"
    assert choose_executor(None, {"WERKBAUM_ENGINE": "auto"}) == "v8"
    with Engine.create("auto", frontend="") as engine:
        assert engine.kind == "v8"


@pytest.mark.usefixtures("without_v8", "node_installed")
def test_auto_is_node_without_v8() -> None:
    assert choose_executor(None, {}) == "node"


@pytest.mark.usefixtures("without_v8", "without_node")
def test_auto_falls_back_to_dukpy_without_v8_and_node() -> None:
    assert choose_executor(None, {}) == "dukpy"
    with Engine.create("auto", frontend="") as engine:
        assert engine.kind == "dukpy"


def test_the_python_api_default_is_v8_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WERKBAUM_ENGINE", raising=False)
    with Engine.create(frontend="") as engine:
        assert engine.kind == "v8"


@pytest.mark.usefixtures("without_v8", "node_installed")
def test_the_python_api_default_never_starts_a_subprocess(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("WERKBAUM_ENGINE", raising=False)
    with Engine.create(frontend="") as engine:
        assert engine.kind == "dukpy"
