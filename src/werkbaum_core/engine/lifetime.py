"""An engine closed on every way a server process ends: its work done, or a signal.

A host stops a stdio server by closing its stdin, or with SIGTERM (SIGINT from a
terminal, SIGHUP when the terminal goes). Python's default for SIGTERM and
SIGHUP is to die on the spot, skipping every ``finally`` and ``atexit`` hook;
the engine would then leave its node child running until that child notices
the closed pipe, and the module directory of a load in progress behind.

:func:`close_on_exit` closes the engine when the interpreter exits, and on
those signals closes it (waiting at most :data:`CLOSE_WAIT` for a call in
flight), removes the directories of loads in progress, runs the clean-ups
registered with :func:`on_stop` (the file store's temp files of writes in
flight), and then dies of the signal as the default would (the exit status
still tells the parent what happened).
"""

from __future__ import annotations

import atexit
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Protocol

from werkbaum_core.engine.modules import remove_loading_directories

CLOSE_WAIT = 2.0
"""Seconds a signal waits for the engine to close before the process dies anyway."""

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_ON_STOP: list[Callable[[], None]] = []


def on_stop(cleanup: Callable[[], None]) -> None:
    """Run ``cleanup`` when a stop signal ends the process, just before it dies.

    For what must not outlive the process, from layers above the engine. It
    runs in the signal handler while other threads go on: it must be quick
    and never wait without a bound.
    """
    _ON_STOP.append(cleanup)


class Closable(Protocol):
    def close(self) -> None: ...


def close_on_exit(engine: Closable) -> None:
    """Close ``engine`` at interpreter exit and on a stop signal (call from the main thread)."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        closer = threading.Thread(target=engine.close, name="werkbaum-engine-close", daemon=True)
        closer.start()
        closer.join(CLOSE_WAIT)
        remove_loading_directories()
        for cleanup in _ON_STOP:
            cleanup()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    for sig in SIGNALS:
        signal.signal(sig, stop)
    atexit.register(engine.close)
