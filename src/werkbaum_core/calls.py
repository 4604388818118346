"""Whose engine call runs now: so that a cancelled request stops its own JS call, no other.

One engine serves every request of a server, and its executor runs one call at a time:
a runaway call a client cancelled (``notifications/cancelled``) kept the engine for the
rest of its time limit, and every other request waited behind it (round 26, process F9:
20 s). The code that runs a request's work names it as the owner of the engine calls it
makes (:func:`on_behalf_of`, in the worker thread); the executor notes the owner of the
call in flight, and :meth:`~werkbaum_core.engine.Engine.interrupt` with that owner stops
exactly that call (the executor stays usable: the next call starts afresh).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator


class Owner:
    """A token for one request: compared by identity only."""

    __slots__ = ()


_current = threading.local()


@contextlib.contextmanager
def on_behalf_of(owner: Owner) -> Iterator[None]:
    """Engine calls this thread makes inside are ``owner``'s."""
    previous = getattr(_current, "owner", None)
    _current.owner = owner
    try:
        yield
    finally:
        _current.owner = previous


def current() -> Owner | None:
    """The owner this thread's engine calls are made for, if any."""
    owner: Owner | None = getattr(_current, "owner", None)
    return owner


class InFlight:
    """The owner of an executor's call in flight, and whether it asked to stop it.

    ``begin`` and ``end`` bracket a call (under the executor's own call lock);
    ``stop_if`` runs the executor's way of stopping, only while that owner's call is in
    flight — under a lock of its own, so a call that ends meanwhile, and the next
    caller's, are never stopped in its place.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: Owner | None = None
        self.cancelled = False

    def begin(self) -> None:
        with self._lock:
            self._owner, self.cancelled = current(), False

    def end(self) -> None:
        with self._lock:
            self._owner = None

    def stop_if(self, owner: Owner, stop: Callable[[], object]) -> bool:
        """Call ``stop`` if ``owner``'s call is in flight; whether it was."""
        with self._lock:
            if self._owner is not owner:  # not in flight (None: no call is)
                return False
            self.cancelled = True
            stop()
            return True
