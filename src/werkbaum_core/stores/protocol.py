"""The store protocol the write pipeline is written against (pure: no I/O here).

A store reads a source into a :class:`Snapshot` and writes a change against a
:class:`Base`. It never decides what to write — that is the pipeline's job —
and it never writes without checking the base: a stale base is a
:class:`~werkbaum_core.errors.Conflict` carrying the current snapshot.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import attrs

from werkbaum_core.errors import Conflict

Op = dict[str, Any]
"""A line operation exactly as the documents API defines it (``LineOperation``)."""


@attrs.frozen
class Base:
    """What an agent read: the document version (None for files) and the checksum."""

    checksum: str
    version: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "checksum": self.checksum}


@attrs.frozen
class Snapshot:
    """A read: the text, its base and line count (and the document a mirror file stands for)."""

    text: str
    base: Base
    mirror_of: str | None = None

    @property
    def lines(self) -> int:
        return self.text.count("\n") + 1

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "base": self.base.to_json(), "lines": self.lines}
        if self.mirror_of:
            out["mirrorOf"] = self.mirror_of
        return out


class Store(Protocol):
    """A place plans live. Every method may raise the core's typed errors."""

    def read(self, source: str) -> Snapshot:
        """The current snapshot (``NotFound``/``SourceUnavailable``/``ForbiddenSource``)."""
        ...

    def base_text(self, source: str, base: Base) -> tuple[str, Snapshot]:
        """The text the agent's ``base`` names, and the current snapshot.

        Raises ``Conflict`` (with the current text and base) when the base text
        is no longer available to diff against.
        """
        ...

    def write(
        self, source: str, base: Base, ops: list[Op], new_text: str, *, author: str = "Agent"
    ) -> Snapshot:
        """Store the change (``ops`` against the base, giving ``new_text``) atomically.

        ``author`` is the display name a shared document records for the change
        (files have no such field and ignore it).

        Returns the snapshot the store holds afterwards (a backend may have
        merged concurrent edits into it). Raises ``Conflict`` on a stale base.
        """
        ...


@runtime_checkable
class Creates(Protocol):
    """A store that can make a new plan (the file store; shared documents are made in the
    editor, spec §15). A create never replaces anything."""

    def check_new(self, source: str) -> None:
        """Raise what :meth:`create` would raise for the name alone (it exists:
        ``Conflict``; no such directory: ``NotFound``; not a plan name:
        ``ForbiddenSource``), writing nothing: a dry run's answer."""
        ...

    def create(self, source: str, text: str) -> Snapshot:
        """Make ``source`` with ``text`` atomically, or ``Conflict`` if it exists (also
        when another creator was first); the snapshot of what it now holds."""
        ...


def conflict(source: str, current: Snapshot) -> Conflict:
    """The error for a stale base: it carries what the agent needs to re-apply its intent."""
    return Conflict(
        f"{source} changed since your base; re-read and apply your change again",
        source=source,
        current={"text": current.text, "base": current.base.to_json()},
    )


def current_as_base(source: str, current: Snapshot, base: Base) -> tuple[str, Snapshot]:
    """For stores without history: the base text is the current text while it still is the base."""
    if current.base.checksum != base.checksum:
        raise conflict(source, current)
    return current.text, current
