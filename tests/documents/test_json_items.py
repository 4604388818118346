"""The history reader's JSON scanner: the same items as ``json.loads``, however the bytes are
cut, one item at a time, and bounded per item."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from werkbaum_core.stores.json_items import ItemTooLarge, JsonItems

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=st.characters(), max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)


def items_of(data: bytes, cuts: list[int], limit: int = 10**9) -> list[Any]:
    reader = JsonItems(limit)
    out: list[Any] = []
    edges = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    for start, end in itertools.pairwise(edges):
        out.extend(reader.feed(data[start:end]))
    reader.close()
    return out


@given(
    st.lists(JSON, max_size=6),
    st.lists(st.integers(min_value=0), max_size=30),
    st.booleans(),
    st.booleans(),
)
@example(["\\", '"\\', "]}", ","], [1, 2, 3, 4, 5, 6, 7, 8], True, False)
@example(["\ud800"], [], False, False)  # found 2026-12: a lone surrogate written as raw bytes
def test_any_array_cut_anywhere_gives_json_loads_items(
    array: list[Any], cuts: list[int], ascii_only: bool, indented: bool
) -> None:
    text = json.dumps(array, ensure_ascii=ascii_only, indent=2 if indented else None)
    data = text.encode("utf-8", "surrogatepass")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate as raw bytes is not UTF-8: refused like any malformed answer
        # (escaped as \ud800, with ensure_ascii, it is valid JSON and read as such).
        with pytest.raises(ValueError):
            items_of(data, cuts)
        return
    assert items_of(data, cuts) == array


@pytest.mark.parametrize(
    "text",
    ["", "  ", "{}", "x[1]", "[1", "[1,]", "[,1]", "[1]x", "[}]", '["a]', "[1 2]"],
)
@pytest.mark.parametrize("cut", [1, 100])
def test_what_is_not_one_json_array_is_refused(text: str, cut: int) -> None:
    with pytest.raises(ValueError):
        items_of(text.encode(), list(range(0, len(text), cut)))


@pytest.mark.parametrize("cut", [7, 10_000])
def test_an_item_over_the_limit_is_refused_as_soon_as_it_is_that_long(cut: int) -> None:
    small, big = {"version": 1}, {"version": 2, "content": "x" * 500}
    data = json.dumps([small, big, small]).encode()
    reader = JsonItems(item_limit=100)
    seen: list[Any] = []
    with pytest.raises(ItemTooLarge):
        for start in range(0, len(data), cut):
            seen.extend(reader.feed(data[start : start + cut]))
    assert seen in ([], [small])  # the small one before it may already have come out
