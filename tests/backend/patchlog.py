"""The idempotency memory of content patches (documents-api §5.5).

An LRU map ``(documentId, clientId) → (last seq, stored 200 body)`` of bounded
size, in memory only (lost on restart, like upstream's).  Only successes are
remembered, so a request that failed may be sent again with the same seq.
Not thread-safe by itself: the store calls it under the store lock.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Remembered:
    seq: int
    outcome: dict[str, Any]


class PatchLog:
    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[tuple[str, str], Remembered] = OrderedDict()

    def get(self, doc_id: str, client_id: str) -> Remembered | None:
        key = (doc_id, client_id)
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def remember(self, doc_id: str, client_id: str, seq: int, outcome: dict[str, Any]) -> None:
        key = (doc_id, client_id)
        self._entries[key] = Remembered(seq, outcome)
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
