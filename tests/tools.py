"""The programs the tests need besides Python, and what to do when one is missing.

A missing tool fails the test that needs it with one line naming the install
(never a skip, which would let a machine without node pass the node executor's
suite, and never a raw ``FileNotFoundError``). ``nox -s tests`` installs what it can
(uv, the MCP Inspector) and checks the rest before pytest starts.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from werkbaum_core.engine.node_executor import node_binary

INSTALL = {
    "node": "node 20 or newer on the PATH (Debian/Ubuntu: `apt install nodejs`, or "
    "https://nodejs.org; WERKBAUM_NODE may name the binary)",
    "git": "git on the PATH (Debian/Ubuntu: `apt install git`)",
    "uv": "uv on the PATH (`pip install uv`; the README's test command installs it)",
    "npm": "npm on the PATH (it comes with node: `apt install npm` on Debian/Ubuntu)",
    "mcp-inspector": "the MCP Inspector CLI in node_modules: run `npm install --no-save` "
    "(`nox -s tests` does)",
    "chromium": "Debian's chromium at /usr/bin/chromium (`apt-get install chromium`; "
    "`nox -s tests` installs it when run as root; WERKBAUM_CHROMIUM may name another binary)",
}


INSPECTOR = Path(__file__).resolve().parents[1] / "node_modules" / ".bin" / "mcp-inspector"
"""The MCP Inspector CLI, pinned in package-lock.json (an independent TypeScript client)."""


def find_tool(name: str) -> str | None:
    """The tool's path, or None; ``node`` honours ``WERKBAUM_NODE`` like the executor,
    ``chromium`` ``WERKBAUM_CHROMIUM`` (default: Debian's ``/usr/bin/chromium``)."""
    if name == "node":
        return node_binary()
    if name == "mcp-inspector":
        return str(INSPECTOR) if INSPECTOR.exists() else None
    if name == "chromium":
        path = os.environ.get("WERKBAUM_CHROMIUM") or "/usr/bin/chromium"
        return path if os.access(path, os.X_OK) else None
    return shutil.which(name)


def require_tool(name: str) -> str:
    """The tool's path; fails the calling test with one line when it is missing."""
    path = find_tool(name)
    if path is None:
        pytest.fail(f"this test needs {INSTALL[name]}", pytrace=False)
    return path
