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
step are refused from then on. The handler itself only notes the signal and
starts a thread, and returns at once (the event loop goes on answering): a
handler runs on the main thread between two of its bytecodes, wherever that
thread was — inside the stderr queue's lock, say, while it logged a line — so
a handler that took such a lock itself would wait for good (round 26: a
SIGTERM while the event loop logged left the server hanging until SIGKILL).
The thread waits up to :data:`~werkbaum_core.in_flight.STOP_WAIT` for those
writes' audit lines (and up to :data:`ANSWER_WAIT` for their answers,
:func:`before_stop`). Then — or at once when a second signal comes from the
host — it writes the audit line of any write still running (outcome
``stopped``), closes the engine, which stops a call in flight (the child
process killed, V8 interrupted; at most :data:`CLOSE_WAIT`), removes the
directories of loads in progress and runs the clean-ups registered with
:func:`on_stop` (the file store's temp files of writes in flight, the stderr
lines still queued), and signals the main thread again: that delivery dies of
the first signal as the default would (the exit status still tells the parent
what happened). With no write in flight all of that happens at once.
"""

from __future__ import annotations

import atexit
import os
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
    state = _StopState()
    wake_read, wake_write = os.pipe()

    def finish(signum: int) -> None:
        writes.abandon(signal.Signals(signum).name)
        closer = threading.Thread(target=engine.close, name="werkbaum-engine-close", daemon=True)
        closer.start()
        closer.join(CLOSE_WAIT)
        remove_loading_directories()
        for cleanup in _ON_STOP:
            cleanup()

    def wait_for_writes() -> None:
        deadline = time.monotonic() + STOP_WAIT
        while not state.insisted and (left := deadline - time.monotonic()) > 0:
            if writes.wait(min(RESIGNAL_EVERY, left)):
                break
        for wait in list(_ANSWERS):
            if not state.insisted:
                wait(ANSWER_WAIT)

    def stopper() -> None:
        signum = os.read(wake_read, 1)[0]
        try:
            if writes.stop():
                wait_for_writes()
            finish(signum)
        finally:
            state.finished = True
            # Handlers run on the main thread only, and CPython may not run one for a
            # signal that arrived while that thread ran bytecode (another thread can
            # clear the "signal pending" mark first); one arriving in its epoll_wait
            # always runs.
            while True:
                signal.pthread_kill(main_thread, signum)
                time.sleep(RESIGNAL_EVERY)

    def stop(signum: int, _frame: FrameType | None) -> None:
        # No lock, no thread start, no wait here: the handler runs on the main thread
        # wherever that thread was, holding whatever it held. A byte on a pipe wakes the
        # thread that does the work; its last signal ends the process here.
        if state.finished:
            signal.signal(state.first, signal.SIG_DFL)
            signal.raise_signal(state.first)
        elif state.first:  # the host insists: the writes are not waited for any longer
            state.insisted = True
        else:
            state.first = signum
            os.write(wake_write, bytes([signum]))

    threading.Thread(target=stopper, name="werkbaum-stop", daemon=True).start()
    for sig in SIGNALS:
        signal.signal(sig, stop)
    atexit.register(engine.close)


class _StopState:
    """What the stop handler and its thread share: plain attributes, no lock (a handler
    must not take one)."""

    def __init__(self) -> None:
        self.first = 0
        """The first stop signal's number, once one came."""
        self.insisted = False
        """A second signal came: stop waiting for writes."""
        self.finished = False
        """Everything is done: the next delivery ends the process."""
