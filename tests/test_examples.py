"""The runnable examples under ``examples/`` run as the README says and print what they claim."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_the_mcp_client_example_reads_writes_and_meets_a_conflict() -> None:
    """``uv run --no-dev python examples/mcp_client.py``: ``werkbaum-mcp`` on the PATH (as
    ``uv run`` puts the environment's scripts there), the official client, one write, then
    the same write on the old base refused; the example plan itself is not touched."""
    plan = REPO / "examples" / "launch.werkbaum"
    before = plan.read_bytes()
    scripts = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": scripts + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "mcp_client.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "5 stations; the first not begun: #shop.build.search Product search",
        "written: +    - [~] #shop.build.search: Product search (S) :#shop.data",
        "again with the old base: conflict: launch.werkbaum changed since your base: "
        "current.diff shows what changed from your base. Apply your change again with "
        "current.base.",
    ]
    assert lines[3].startswith("the server's current base: {'version': None, 'checksum': ")
    assert '"displayName":"example-agent"' in done.stderr  # the audit line names the client
    assert plan.read_bytes() == before
