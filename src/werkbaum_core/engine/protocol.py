"""The executor protocol: the only thing the core needs from a JS runtime."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:
    from werkbaum_core.calls import Owner

JSON = Any
"""A JSON value as the ``json`` module produces it."""

CALL_TIMEOUT = 30.0
"""Seconds one call may run on an executor that can stop it (node, v8; dukpy only
on the main thread)."""
START_TIMEOUT = 30.0
"""Seconds an executor may take to load the modules (dukpy: on the main thread only)."""


@attrs.frozen
class Limits:
    """The time limits an executor keeps (tests shorten them)."""

    call: float = CALL_TIMEOUT
    start: float = START_TIMEOUT


LIMITS = Limits()
"""The limits every executor keeps unless told otherwise."""


class Executor(Protocol):
    """A JS runtime with the module set loaded.

    ``call_text`` runs ``globalThis.werkbaum[entry](payload)`` and returns its
    result as JSON text (callers that cache results keep the text, which is
    immutable, and parse a fresh copy per use); it raises
    :class:`~werkbaum_core.errors.EngineError` when the JS throws or the runtime
    dies. Implementations serialise calls themselves.
    """

    name: str

    def call_text(self, entry: str, payload: JSON) -> str: ...

    def exports(self) -> dict[str, list[str]]: ...

    def interrupt(self, owner: Owner) -> bool:
        """Stop ``owner``'s call if it is in flight (see :mod:`werkbaum_core.calls`);
        whether it was. The executor stays usable."""
        ...

    def close(self) -> None: ...
