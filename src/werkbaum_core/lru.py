"""One bounded, thread-safe LRU for the texts the core keeps: analyses by digest
(engine), base texts by document version (documents store) and the texts recently
handed out (conflict explanations).

Bounded by a number of entries and, where values are texts, by the memory they take
(:func:`memory_of`), so that a few huge plans cannot hold what many small ones would
share. Characters were no measure: CPython keeps a text at 1, 2 or 4 bytes a character by
its widest one, so one emoji made a 2,000,000-character plan 8 MB instead of 2 (a worker
kept 525 MB after 70 such documents in round 25's soak).
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def memory_of(text: str) -> int:
    """The bytes ``text`` takes in memory (its characters at their width, and its header)."""
    return sys.getsizeof(text)


class BoundedCache(Generic[K, V]):
    """At most ``entries`` values and, with ``size_of``, at most ``max_size`` in all;
    the least recently used go first. A value larger than ``largest`` (default:
    ``max_size``) is not kept."""

    def __init__(
        self,
        entries: int,
        max_size: int | None = None,
        size_of: Callable[[V], int] | None = None,
        *,
        largest: int | None = None,
    ) -> None:
        self._entries = max(0, entries)
        self._max_size = max_size
        self._largest = largest if largest is not None else max_size
        self._size_of = size_of
        self._items: OrderedDict[K, V] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        size = self._size(value)
        if self._largest is not None and size > self._largest:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._held -= self._size(old)
            self._items[key] = value
            self._held += size
            while len(self._items) > self._entries or (
                self._max_size is not None and self._held > self._max_size
            ):
                _, dropped = self._items.popitem(last=False)
                self._held -= self._size(dropped)

    def discard(self, key: K) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._held -= self._size(old)

    def _size(self, value: V) -> int:
        return 0 if self._size_of is None else self._size_of(value)
