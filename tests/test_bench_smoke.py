"""The benchmark suite still runs (``python -m bench``); it measures, this only smoke-tests.

One quick section end to end: the command line, a section, the Markdown
report. No timing is asserted here — numbers belong in BENCHMARKS.md.
"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_quick_memory_section_runs_and_prints_the_goal_table() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--only", "memory"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| goal | measured | target | verdict |" in done.stdout
    assert "idle RSS werkbaum-mcp (default: auto = " in done.stdout
    assert "RSS werkbaum-mcp --engine dukpy after 1 inspect (engine loaded) - echo" in done.stdout
    assert "| echo MCPServer |" in done.stdout
