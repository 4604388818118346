"""An engine closed on every way a server process ends: its work done, or a signal.

A host stops a stdio server by closing its stdin, or with SIGTERM (SIGINT from a
terminal, SIGHUP when the terminal goes). Python's default for SIGTERM and
SIGHUP is to die on the spot, skipping every ``finally`` and ``atexit`` hook;
the engine would then leave its node child running until that child notices
the closed pipe, and the module directory of a load in progress behind — and a
document write that had landed would have no mirror commit and no audit line.

:func:`close_on_exit` closes the engine when the interpreter exits. On those
signals it first lets the writes past their store step finish
(:mod:`werkbaum_core.in_flight`): new calls and writes not yet at their store
step are refused from then on, the handler returns at once (the event loop
goes on answering), and a thread waits up to :data:`~werkbaum_core.in_flight.STOP_WAIT`
for those writes' audit lines (and up to :data:`ANSWER_WAIT` for their answers,
:func:`before_stop`), then signals the main thread again. That
second delivery — or a second signal from the host, which stops at once —
writes the audit line of any write still running (outcome ``stopped``), closes
the engine (waiting at most :data:`CLOSE_WAIT` for a call in flight), removes
the directories of loads in progress, runs the clean-ups registered with
:func:`on_stop` (the file store's temp files of writes in flight), and then
dies of the first signal as the default would (the exit status still tells the
parent what happened). With no write in flight all of that happens at once.
"""

from __future__ import annotations

import atexit
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Protocol

from werkbaum_core.engine.modules import remove_loading_directories
from werkbaum_core.in_flight import STOP_WAIT, WRITES, WritesInFlight

CLOSE_WAIT = 2.0
"""Seconds a signal waits for the engine to close before the process dies anyway."""
RESIGNAL_EVERY = 0.1
"""Seconds between the waiting thread's signals to the main thread, until it dies."""
ANSWER_WAIT = 1.0
"""Seconds the answers of the writes a signal waited for get to reach the host."""

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_ON_STOP: list[Callable[[], None]] = []
_ANSWERS: list[Callable[[float], None]] = []


def on_stop(cleanup: Callable[[], None]) -> None:
    """Run ``cleanup`` when a stop signal ends the process, just before it dies.

    For what must not outlive the process, from layers above the engine. It
    runs in the signal handler while other threads go on: it must be quick
    and never wait without a bound.
    """
    _ON_STOP.append(cleanup)


def before_stop(wait: Callable[[float], None]) -> Callable[[], None]:
    """Call ``wait(seconds)`` when a stop signal has waited for writes in flight, before
    the process dies: a transport lets their answers reach the host, for at most
    ``seconds``. Returns the function that takes ``wait`` back (when serving ends)."""
    _ANSWERS.append(wait)
    return lambda: _ANSWERS.remove(wait)


class Closable(Protocol):
    def close(self) -> None: ...


def close_on_exit(engine: Closable, writes: WritesInFlight = WRITES) -> None:
    """Close ``engine`` at interpreter exit and on a stop signal, after the ``writes``
    past their store step (call from the main thread)."""
    main_thread = threading.get_ident()
    first: list[int] = []

    def finish(signum: int) -> None:
        writes.abandon(signal.Signals(signum).name)
        closer = threading.Thread(target=engine.close, name="werkbaum-engine-close", daemon=True)
        closer.start()
        closer.join(CLOSE_WAIT)
        remove_loading_directories()
        for cleanup in _ON_STOP:
            cleanup()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    def wait_then_stop(signum: int) -> None:
        writes.wait(STOP_WAIT)
        for wait in list(_ANSWERS):
            wait(ANSWER_WAIT)
        # Handlers run on the main thread only, and CPython may not run one for a signal
        # that arrived while that thread ran bytecode (another thread can clear the
        # "signal pending" mark first); one arriving in its epoll_wait always runs.
        while True:
            signal.pthread_kill(main_thread, signum)
            time.sleep(RESIGNAL_EVERY)

    def stop(signum: int, _frame: FrameType | None) -> None:
        if len(first) > 1:  # finishing already
            return
        if first:  # our own second delivery, or the host insists
            first.append(signum)
            finish(first[0])
            return
        first.append(signum)
        if writes.stop():
            waiter = threading.Thread(
                target=wait_then_stop, args=(signum,), name="werkbaum-stop", daemon=True
            )
            waiter.start()
            return
        finish(signum)

    for sig in SIGNALS:
        signal.signal(sig, stop)
    atexit.register(engine.close)
