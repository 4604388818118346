"""Writes past their store step, so that a stop signal lets them finish (spec §6.5).

Once a write's store step has begun, the rest — the store's answer, the mirror
commit, the audit line — is to happen even if the process is told to stop: a
host stops a stdio server with SIGTERM, and a document write that landed
without its audit line is a change nobody can account for. So the catalogue
registers each write here when it passes its checkpoint (right before the
store step) and leaves when its audit line is written, and the stop handler
(:mod:`werkbaum_core.engine.lifetime`) asks :meth:`WritesInFlight.stop` first:

- from then on a call not yet at its store step is refused (:class:`Stopping`;
  a write is audited as ``cancelled``, nothing written), and so is any new call;
- the handler waits up to :data:`STOP_WAIT` for the registered writes to end;
- a write still running then gets its audit line from :meth:`abandon`, with
  outcome ``stopped`` and what was not done (``applied: "unknown"`` while the
  store had not answered, the mirror commit after it). Exactly one line per
  write: the write's own and the abandoning one are claimed, first come.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from werkbaum_core.errors import SourceUnavailable

STOP_WAIT = 5.0
"""Seconds a stop signal waits for writes past their store step (a document write
with its mirror commit takes well under that; the store's own bound is 30 s)."""

STORE = "store"
MIRROR = "mirror"
"""What a registered write is doing: waiting for its store, or committing its mirror."""

Event = dict[str, Any]


class Stopping(SourceUnavailable):
    """A call refused because the server is stopping: nothing of it was written."""

    def __init__(self) -> None:
        super().__init__(
            "the server is stopping; nothing was written: retry once the host has restarted it",
            stopping=True,
        )


class Commitment:
    """One write past its store step: its audit event, and who writes its audit line."""

    def __init__(self, event: Event, audit: Callable[[Event], None], started: float) -> None:
        self.event = event
        self.stage = STORE
        self._audit = audit
        self._started = started
        self._claimed = False
        self._lock = threading.Lock()

    def claim(self) -> bool:
        """True for the first caller only: that one writes the write's audit line."""
        with self._lock:
            first, self._claimed = not self._claimed, True
            return first

    def audit(self, event: Event) -> None:
        """Write ``event`` as this write's audit line, unless another one was written."""
        if self.claim():
            self._audit(event)

    def abandoned(self, signal_name: str) -> Event:
        """The audit line of this write when the process stops before it ends."""
        event = {**self.event, "outcome": "stopped", "stoppedBy": signal_name}
        event["ms"] = round((time.time() - self._started) * 1000, 1)
        if self.stage == STORE:
            event["applied"] = "unknown"
        else:
            event["mirror"] = {"error": f"not committed: the server got {signal_name} first"}
        return event


class WritesInFlight:
    """The writes of a process that are past their store step (thread-safe)."""

    def __init__(self) -> None:
        self._writes: set[Commitment] = set()
        self._stopping = False
        self._changed = threading.Condition()

    @property
    def stopping(self) -> bool:
        return self._stopping

    def refuse_if_stopping(self) -> None:
        if self._stopping:
            raise Stopping()

    def begin(self, event: Event, audit: Callable[[Event], None], started: float) -> Commitment:
        """Register a write (called at ``started``, a ``time.time()``) whose store step
        begins now; :class:`Stopping` if it may not."""
        with self._changed:
            self.refuse_if_stopping()
            commitment = Commitment(event, audit, started)
            self._writes.add(commitment)
            return commitment

    def end(self, commitment: Commitment) -> None:
        with self._changed:
            self._writes.discard(commitment)
            self._changed.notify_all()

    def stop(self) -> bool:
        """Refuse what has not begun; True on the first call, with writes still to wait for."""
        with self._changed:
            first = not self._stopping
            self._stopping = True
            return first and bool(self._writes)

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every registered write to end; True if all did."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._writes:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def abandon(self, signal_name: str) -> int:
        """Write the audit line of every write still running (the process ends now);
        returns how many there were. Called from a signal handler: it does not wait."""
        with self._changed:
            running = list(self._writes)
        for commitment in running:
            commitment.audit(commitment.abandoned(signal_name))
        return len(running)


WRITES = WritesInFlight()
"""The process's writes: the servers register theirs here, the stop handler reads it."""
