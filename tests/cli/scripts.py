"""The installed console scripts, run as a user runs them, and the snapshot files."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
SNAPSHOTS = Path(__file__).with_name("snapshots")
PLAIN_ENV = {
    k: v
    for k, v in os.environ.items()
    if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "GITHUB_WORKSPACE")
}
"""The environment without the variables the CLI reads, so each test sets its own."""


def run(
    *args: str | Path,
    script: str = "werkbaum",
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | int | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``script ARGS…``; ``stdin`` as bytes, an open descriptor, or nothing (``/dev/null``).
    The output is decoded as UTF-8, which the CLI always writes."""
    feed: dict[str, Any] = (
        {"input": stdin}
        if isinstance(stdin, bytes)
        else {"stdin": subprocess.DEVNULL if stdin is None else stdin}
    )
    done = subprocess.run(
        [str(BIN / script), *map(str, args)],
        **feed,
        capture_output=True,
        cwd=cwd,
        env={**PLAIN_ENV, **(env or {})},
        timeout=timeout,
    )
    return _decoded(done)


def _decoded(done: subprocess.CompletedProcess[bytes]) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    )


def matches_snapshot(name: str, actual: str) -> None:
    """``actual`` equals ``snapshots/NAME``; ``WERKBAUM_UPDATE_SNAPSHOT=1`` rewrites it
    (then review the diff)."""
    path = SNAPSHOTS / name
    if os.environ.get("WERKBAUM_UPDATE_SNAPSHOT"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.is_file(), f"no snapshot {path}; run with WERKBAUM_UPDATE_SNAPSHOT=1"
    assert actual == path.read_text(encoding="utf-8"), f"{name} differs from its snapshot"
