"""Run a console entry point under cProfile in every thread; write one pstats file at exit.

    python -m bench.profiled OUT.pstats werkbaum_stdio.server_cli:main --root DIR

``python -m cProfile`` sees only the main thread, but the MCP servers run tool
handlers in worker threads (``anyio.to_thread``). Here every thread gets its
own profiler, and all are merged at exit (stdin closed or SIGTERM).

Profiling starts only on ``SIGUSR1``, so start-up and warm-up stay out of the
numbers: until then a light hook in each thread waits for the flag, and on
the thread's next call event it starts that thread's profiler. The profilers
count each thread's CPU time (``time.thread_time``), not wall time: a thread
waiting for the GIL, a lock or I/O accrues nothing, so the threads' profiles
add up to the work done instead of counting waits once per thread.
"""

from __future__ import annotations

import atexit
import cProfile
import importlib
import pstats
import signal
import sys
import threading
import time
from types import FrameType
from typing import Any

_profiles: list[cProfile.Profile] = []
_lock = threading.Lock()
_active = threading.Event()


def _hook(*_: Any) -> None:
    if not _active.is_set():
        return
    profile = cProfile.Profile(time.thread_time)
    with _lock:
        _profiles.append(profile)
    profile.enable()  # replaces this hook for the thread


def _dump(path: str) -> None:
    with _lock:
        profiles = list(_profiles)
    for profile in profiles:
        profile.disable()
    stats: pstats.Stats | None = None
    for profile in profiles:
        try:
            stats = pstats.Stats(profile) if stats is None else stats.add(profile)
        except TypeError:  # a thread that never ran Python code while active
            continue
    if stats is not None:
        stats.dump_stats(path)


def _activate(signum: int, frame: FrameType | None) -> None:
    _active.set()


def _exit_on_term(signum: int, frame: FrameType | None) -> None:
    sys.exit(0)


def main() -> None:
    out, target, *args = sys.argv[1:]
    module_name, _, function_name = target.partition(":")
    atexit.register(_dump, out)
    signal.signal(signal.SIGTERM, _exit_on_term)
    signal.signal(signal.SIGUSR1, _activate)
    threading.setprofile(_hook)
    sys.setprofile(_hook)
    sys.argv = [module_name, *args]
    entry = getattr(importlib.import_module(module_name), function_name)
    entry()


if __name__ == "__main__":
    main()
