"""Time for the stand-in backend, injectable so tests never sleep for the spec's pauses.

Everything the documents API derives from *wall-clock* time goes through a
:class:`Clock`: history timestamps, the 30 s milestone pause and 5 min sync
compaction (documents-api §5.4), and the master-password lockout (§9).  A test
moves an :class:`AdjustableClock` forward instead of waiting 31 seconds.

Long-poll deadlines (§2.11) deliberately do *not* use this clock: a waiting
feed request is real time spent by a real HTTP client, so it uses
``time.monotonic`` and always ends within the clamped ``wait``.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """The one question the backend asks about time."""

    def now(self) -> datetime:
        """The current instant, timezone-aware (UTC)."""
        ...


class SystemClock:
    """Real UTC wall-clock time: what a demo or a production-like run wants."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class AdjustableClock:
    """Real time plus an offset that only ever grows.

    Timestamps stay realistic and strictly ordered (a frozen clock would give
    every write the same instant), while :meth:`advance` lets a test jump over
    the milestone pause, the sync retention or a lockout in no time.
    """

    def __init__(self) -> None:
        self._offset = timedelta(0)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            offset = self._offset
        return datetime.now(UTC) + offset

    def advance(self, delta: timedelta) -> datetime:
        """Move time forward by ``delta`` (never backward) and return the new now."""
        if delta < timedelta(0):
            raise ValueError("a clock only moves forward")
        with self._lock:
            self._offset += delta
        return self.now()


def iso(instant: datetime) -> str:
    """ISO-8601 with an offset, UTC written as ``Z`` (the way Jackson writes it)."""
    return instant.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
