"""The one bounded LRU of the core: by entries, by the total size of its values, least
recently used first, from several threads at once."""

from __future__ import annotations

import threading

from werkbaum_core.lru import BoundedCache, memory_of


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: BoundedCache[str, int] = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # now b is the oldest
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)


def test_the_total_size_is_bounded_and_a_value_over_it_is_not_kept() -> None:
    cache: BoundedCache[str, str] = BoundedCache(10, 10, len)
    cache.put("a", "xxxx")
    cache.put("b", "yyyy")
    cache.put("c", "zzzz")  # 12 characters: a goes
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, "yyyy", "zzzz")
    cache.put("huge", "h" * 11)
    assert cache.get("huge") is None
    assert (cache.get("b"), cache.get("c")) == ("yyyy", "zzzz")


def test_a_replaced_value_counts_once() -> None:
    cache: BoundedCache[str, str] = BoundedCache(10, 8, len)
    for _ in range(5):
        cache.put("a", "xxxx")
    cache.put("b", "yyyy")
    assert (cache.get("a"), cache.get("b")) == ("xxxx", "yyyy")


def test_no_entry_bound_is_broken_by_threads() -> None:
    cache: BoundedCache[int, str] = BoundedCache(16, 1_000, len)

    def fill(start: int) -> None:
        for key in range(start, start + 2_000):
            cache.put(key, "v" * (key % 50))
            cache.get(key - 3)

    threads = [threading.Thread(target=fill, args=(n * 10_000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    kept = [cache.get(key) for n in range(4) for key in range(n * 10_000, n * 10_000 + 2_000)]
    found = [value for value in kept if value is not None]
    assert 0 < len(found) <= 16
    assert sum(map(len, found)) <= 1_000


def test_a_discarded_value_frees_its_size() -> None:
    cache: BoundedCache[str, str] = BoundedCache(10, 10, len)
    cache.put("a", "xxxx")
    cache.put("b", "yyyy")
    cache.discard("a")
    cache.discard("never there")
    cache.put("c", "zzzzz")  # 9 characters with b: b stays only if a no longer counts
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, "yyyy", "zzzzz")


def test_memory_counts_a_text_at_the_width_of_its_widest_character() -> None:
    """CPython keeps a text at 1, 2 or 4 bytes a character: caches bounded in characters
    held four times what they meant with one emoji in a plan (round 25 soak F3)."""
    ascii_text, wide_text = "a" * 1000, "a" * 999 + "\U0001f600"
    assert memory_of(wide_text) > 3 * memory_of(ascii_text)
    cache: BoundedCache[str, str] = BoundedCache(10, 2 * memory_of(ascii_text), memory_of)
    cache.put("a", ascii_text)
    cache.put("wide", wide_text)  # as long, four times the memory: over the bound alone
    assert (cache.get("a"), cache.get("wide")) == (ascii_text, None)


def test_a_value_over_the_largest_kept_is_not_kept_though_it_fits() -> None:
    cache: BoundedCache[str, str] = BoundedCache(10, 100, len, largest=5)
    cache.put("small", "xxxxx")
    cache.put("big", "y" * 6)
    assert (cache.get("small"), cache.get("big")) == ("xxxxx", None)
