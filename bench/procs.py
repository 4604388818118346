"""Process facts from /proc: a process's descendants, their resident memory and CPU time."""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")
TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may contain spaces: split after it.
    return raw[raw.rindex(")") + 2 :].split()


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None:
                parents[int(entry.name)] = int(fields[1])
    return parents


def children(pid: int) -> list[int]:
    return [child for child, parent in _parents().items() if parent == pid]


def tree(pid: int) -> list[int]:
    """``pid`` and every live descendant (one scan of /proc)."""
    parents = _parents()
    found = [pid]
    for current in found:
        found.extend(child for child, parent in parents.items() if parent == current)
    return found


def rss_mb(pid: int) -> float:
    """VmRSS of one process in MiB (0 for a process that has gone)."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def tree_rss_mb(pid: int) -> float:
    return sum(rss_mb(p) for p in tree(pid))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one live process."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def tree_cpu_seconds(pid: int) -> float:
    return sum(cpu_seconds(p) for p in tree(pid))


def names(pids: list[int]) -> list[str]:
    out = []
    for pid in pids:
        try:
            out.append((PROC / str(pid) / "comm").read_text().strip())
        except OSError:
            out.append("?")
    return out


def machine_busy_seconds() -> float:
    """CPU seconds spent busy on all cores since boot (user … steal, from /proc/stat)."""
    fields = (PROC / "stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / TICKS
