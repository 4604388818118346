"""An in-memory store: for tests of the write pipeline and for Python programs
that keep plans in their own storage."""

from __future__ import annotations

import threading

from werkbaum_core.errors import Conflict, NotFound
from werkbaum_core.stores.protocol import Base, Op, Snapshot, conflict, current_as_base
from werkbaum_core.text import checksum


class MemoryStore:
    """Plans by name; a write succeeds only if the checksum still matches (compare-and-swap)."""

    def __init__(self, plans: dict[str, str] | None = None) -> None:
        self._plans = dict(plans or {})
        self._lock = threading.Lock()
        self.writes = 0
        self.authors: list[str] = []

    def _snapshot(self, source: str) -> Snapshot:
        try:
            text = self._plans[source]
        except KeyError:
            raise NotFound(f"no plan {source!r}", source=source) from None
        return Snapshot(text=text, base=Base(checksum=checksum(text)))

    def read(self, source: str) -> Snapshot:
        with self._lock:
            return self._snapshot(source)

    def base_text(self, source: str, base: Base) -> tuple[str, Snapshot]:
        with self._lock:
            current = self._snapshot(source)
        return current_as_base(source, current, base)

    def write(
        self, source: str, base: Base, ops: list[Op], new_text: str, *, author: str = "Agent"
    ) -> Snapshot:
        with self._lock:
            current = self._snapshot(source)
            if current.base.checksum != base.checksum:
                raise conflict(source, current)
            self._plans[source] = new_text
            self.writes += 1
            self.authors.append(author)
            return self._snapshot(source)

    def check_new(self, source: str) -> None:
        with self._lock:
            self._check_new(source)

    def create(self, source: str, text: str) -> Snapshot:
        with self._lock:
            self._check_new(source)
            self._plans[source] = text
            self.writes += 1
            return self._snapshot(source)

    def _check_new(self, source: str) -> None:
        if source in self._plans:
            current = self._snapshot(source)
            raise Conflict(
                f"{source} exists already",
                source=source,
                current={"text": current.text, "base": current.base.to_json()},
            )

    def text(self, source: str) -> str:
        return self._plans[source]
