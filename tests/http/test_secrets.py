"""The tokens stay out of the JS environment and out of repr/log output.

The HTTP server's process has both tokens in its environment. The notation
modules must never see them: dukpy would expose ``os.environ`` as
``process.env`` (the executor scrubs it), and the node executor is started
with a minimal environment. A spy module reads whatever environment the JS
side has, on every executor the HTTP server may choose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.http.conftest import FULL_TOKEN, READ_TOKEN, TOKENS
from tests.tools import require_tool
from werkbaum_core import Engine
from werkbaum_core.engine import choose_executor
from werkbaum_http.config import ENV_READ_TOKEN, ENV_TOKEN, HttpConfig

SPY = (
    "globalThis.werkbaum.env = () => JSON.stringify("
    "(globalThis.process && globalThis.process.env) || {});\n"
)


@pytest.mark.parametrize("requested", [None, "dukpy", "node"])
def test_js_never_sees_the_tokens(
    requested: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    kind = choose_executor(requested, {})
    if kind == "node":
        require_tool("node")
    monkeypatch.setenv(ENV_TOKEN, FULL_TOKEN)
    monkeypatch.setenv(ENV_READ_TOKEN, READ_TOKEN)
    spy = tmp_path / "spy.js"
    spy.write_text(SPY, encoding="utf-8")
    with Engine.create(kind, frontend="", extra_entries=[spy]) as engine:
        seen = engine.call("env", {})
    assert isinstance(seen, str)
    for secret in (FULL_TOKEN, READ_TOKEN, ENV_TOKEN, ENV_READ_TOKEN):
        assert secret not in seen, kind


def test_tokens_are_not_in_repr_or_the_workers_config() -> None:
    assert FULL_TOKEN not in repr(TOKENS) and READ_TOKEN not in repr(TOKENS)
    shipped = HttpConfig(servers=("http://127.0.0.1:9",)).to_json()
    assert "token" not in shipped.lower()
