"""The machine a run happened on: cores, CPU model, RAM, versions, load average, executors."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from bench.paths import REPO


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def ram_gib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024 / 1024
    return float("nan")


def _output(argv: list[str]) -> str:
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=10, cwd=REPO
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unavailable"


def executors() -> list[str]:
    """The JS executors installed here, in the order the sections report them."""
    from werkbaum_core.engine.node_executor import node_binary
    from werkbaum_core.engine.v8_executor import available as v8_available

    return ["dukpy"] + (["node"] if node_binary() else []) + (["v8"] if v8_available() else [])


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def load_average() -> str:
    return " / ".join(f"{v:.2f}" for v in os.getloadavg())


def describe() -> list[tuple[str, str]]:
    """(item, value) rows; call at the start of a run (the load average is taken now)."""
    packages = ("mcp", "dukpy", "uvicorn", "mini-racer")
    versions = ", ".join(f"{p} {v}" for p in packages if (v := _version(p)) is not None)
    return [
        ("nproc", str(len(os.sched_getaffinity(0)))),
        ("CPU", cpu_model()),
        ("RAM", f"{ram_gib():.1f} GiB"),
        ("OS", f"{platform.system()} {platform.release()} {platform.machine()}"),
        ("Python", platform.python_version()),
        ("node", _output(["node", "--version"])),
        ("packages", versions),
        ("commit", _output(["git", "rev-parse", "--short", "HEAD"])),
        ("load average 1/5/15 min at start", load_average()),
    ]
