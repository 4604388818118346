"""Lines for stderr that never make a server wait.

A host may start the server with stderr on a pipe and never read it (MCP lets a
client capture, forward or ignore a server's stderr). Blocking writes there
filled the 64 KiB pipe within a session — audit lines, log warnings — and then
every thread that wrote one waited for good: a write call holding the audit
lock, every write call behind it, then all worker threads, and the reader of
stdin itself; the session was dead without a word (round 25 soak, finding 1).

So stderr gets what stdout has (:mod:`werkbaum_stdio.pipes`): one thread does
the blocking writes, behind a bounded queue. A line that finds the queue full
is dropped and counted, and once the host reads again one line says how many
were dropped. At exit, and when a stop signal ends the process, the queue is
written out for up to :data:`EXIT_WAIT` seconds, so a host that reads loses
nothing (a stop signal's flush runs on a thread of its own, never in the signal
handler: the main thread may hold this queue's lock when a signal comes).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import queue
import threading
import time

from werkbaum_core.engine.lifetime import on_stop
from werkbaum_stdio.std_streams import write_waiting

QUEUED_LINES = 4096
"""Lines waiting for stderr before new ones are dropped (a few hundred KiB at most)."""
EXIT_WAIT = 1.0
"""Seconds the interpreter's exit waits for the queued lines to be written."""
SETTLE = 0.05
"""Seconds without a new line after which a stop signal's flush counts the lines as all
there (:meth:`StderrLines.settled`)."""


class StderrLines:
    """The process's stderr lines, written in order by a thread of their own."""

    def __init__(self, fd: int = 2, capacity: int = QUEUED_LINES) -> None:
        self._fd = fd
        self._queue: queue.Queue[bytes] = queue.Queue(capacity)
        self._dropped = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._last = 0.0
        """When the last line was queued (``time.monotonic``)."""

    def write(self, text: str) -> None:
        """Queue ``text`` (whole lines, ending in a newline); never blocks. After lines
        were dropped, the next one that fits says how many, where they were."""
        self._started()
        data = text.encode("utf-8", "backslashreplace")
        self._last = time.monotonic()
        with self._lock:
            if self._dropped:
                data = _dropped_note(self._dropped) + data
            try:
                self._queue.put_nowait(data)
            except queue.Full:
                self._dropped += 1
            else:
                self._dropped = 0

    def written(self, timeout: float) -> None:
        """:meth:`flush` for a clean-up that only needs it done (or the time up)."""
        self.flush(timeout)

    def settled(self, timeout: float) -> None:
        """:meth:`flush` for a stop signal: the calls it just ended (their engine child
        killed) write their audit lines a moment later, from their own threads; so the
        queue counts as written once no line came for :data:`SETTLE` seconds."""
        self.flush(timeout, settle=SETTLE)

    def flush(self, timeout: float, *, settle: float = 0.0) -> bool:
        """Wait up to ``timeout`` seconds until every queued line is written (a count of
        lines dropped at the end included), and none came in the last ``settle`` seconds;
        whether they were."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if self._dropped:
                    with contextlib.suppress(queue.Full):
                        self._queue.put_nowait(_dropped_note(self._dropped))
                        self._dropped = 0
            quiet = time.monotonic() - self._last >= settle
            if not self._queue.unfinished_tasks and quiet:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)

    def _started(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="werkbaum-stderr", daemon=True
                    )
                    self._thread.start()

    def _run(self) -> None:
        while True:
            data = self._queue.get()
            try:
                self._write_all(data)
            finally:
                self._queue.task_done()

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[write_waiting(self._fd, view) :]
            except OSError:  # stderr is closed: there is no one left to tell
                return


def _dropped_note(count: int) -> bytes:
    return (
        f"werkbaum: {count:,} lines for stderr were dropped here while it was not read "
        "(pass --audit-log FILE to keep the audit lines)\n"
    ).encode()


STDERR = StderrLines()
"""The one writer of this process's stderr lines (logs and audit lines)."""
atexit.register(STDERR.written, EXIT_WAIT)
# A stop signal ends the process without atexit: the audit lines of the writes it waited
# for, and its own "stopped" lines, are written out first (as long as the host reads).
on_stop(functools.partial(STDERR.settled, EXIT_WAIT))


class QueuedStderrHandler(logging.Handler):
    """A logging handler that hands its formatted records to :data:`STDERR`."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            STDERR.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)
