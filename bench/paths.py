"""Where things are: the repository, the fixture plans (tests/data), the console scripts."""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "data" / "plans"
REFERENCE_PLAN = FIXTURES / "werkbaum.werkbaum"
BIN = Path(sys.executable).parent
STDIO_SERVER = BIN / "werkbaum-mcp"
HTTP_SERVER = BIN / "werkbaum-mcp-http"
ECHO_SERVER = Path(__file__).with_name("echo_server.py")
ECHO_ARGV = [sys.executable, "-P", str(ECHO_SERVER)]
"""``-P``: bench/ must not shadow standard modules of the script (it has ``stdio.py`` …)."""
V8_FLOOR = Path(__file__).with_name("v8_floor.mjs")
REPLAY_SERVER = Path(__file__).with_name("replay_server.py")


def reference_text() -> str:
    return REFERENCE_PLAN.read_text(encoding="utf-8")


def with_comment(text: str, tag: str) -> str:
    """``text`` plus a ``%%`` comment line: a different text (no cache hit), same plan."""
    return text + ("" if text.endswith("\n") else "\n") + f"%% bench {tag}\n"


def clean_env(**extra: str) -> dict[str, str]:
    """A server environment with nothing inherited but PATH and HOME (no engine override)."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    env.update(extra)
    return env
