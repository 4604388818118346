"""Sources for catalogue tests: every source names one plan of one in-memory store."""

from __future__ import annotations

from werkbaum_core.rules.catalogue import Resolved
from werkbaum_core.stores import MemoryStore


class OneStore:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def resolve(self, source: str) -> Resolved:
        return Resolved(store=self.store, key=source)
