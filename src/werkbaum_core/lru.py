"""One bounded, thread-safe LRU for the texts the core keeps: analyses by digest
(engine), base texts by document version (documents store) and the texts recently
handed out (conflict explanations).

Bounded by a number of entries and, where values are texts, by their total size, so
that a few huge plans cannot hold the memory that many small ones would share.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """At most ``entries`` values and, with ``size_of``, at most ``max_size`` in all;
    the least recently used go first. A value larger than ``max_size`` is not kept."""

    def __init__(
        self,
        entries: int,
        max_size: int | None = None,
        size_of: Callable[[V], int] | None = None,
    ) -> None:
        self._entries = max(0, entries)
        self._max_size = max_size
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
        if self._max_size is not None and size > self._max_size:
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
