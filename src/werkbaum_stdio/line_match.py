"""Which lines of a new text are lines of the old one: a patience diff with a work bound.

The file store needs this to give untouched lines back their exact bytes
(:mod:`.file_text`). ``difflib.SequenceMatcher`` is too slow for it: 9.4 s
on 50,000 lines with every 50th line changed (measured on this project's
2-core machine). A patience diff matches the lines that occur once in both
texts (plans are full of them: every node line carries an id or a label),
keeps the longest increasing run of those as anchors, and repeats between
them; equal runs at the start and end of each stretch are matched directly.
That is near-linear on plans, and a budget caps the work for adversarial
texts — beyond it, stretches stay unmatched, which costs exactness of line
endings in those stretches only, never correctness of the text.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence

WORK_FACTOR = 20
"""Lines visited per line of input before refinement stops (the work bound)."""


def matching(old: Sequence[str], new: Sequence[str]) -> dict[int, int]:
    """``{new index: old index}`` for lines kept: a common subsequence, increasing in both."""
    pairs: dict[int, int] = {}
    budget = WORK_FACTOR * (len(old) + len(new) + 1)
    stack = [(0, len(old), 0, len(new))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        while alo < ahi and blo < bhi and old[alo] == new[blo]:
            pairs[blo] = alo
            alo += 1
            blo += 1
        while alo < ahi and blo < bhi and old[ahi - 1] == new[bhi - 1]:
            ahi -= 1
            bhi -= 1
            pairs[bhi] = ahi
        if alo == ahi or blo == bhi:
            continue
        budget -= (ahi - alo) + (bhi - blo)
        if budget < 0:
            continue
        start_a, start_b = alo, blo
        for a, b in _anchors(old, new, alo, ahi, blo, bhi):
            pairs[b] = a
            stack.append((start_a, a, start_b, b))
            start_a, start_b = a + 1, b + 1
        if (start_a, start_b) != (alo, blo):
            stack.append((start_a, ahi, start_b, bhi))
    return pairs


def _anchors(
    old: Sequence[str], new: Sequence[str], alo: int, ahi: int, blo: int, bhi: int
) -> list[tuple[int, int]]:
    """Lines unique in both stretches, as the longest run increasing in both (patience)."""
    in_old = Counter(old[alo:ahi])
    in_new = Counter(new[blo:bhi])
    where: dict[str, int] = {}
    for a in range(alo, ahi):
        if in_old[old[a]] == 1:
            where[old[a]] = a
    candidates = [
        (where[new[b]], b) for b in range(blo, bhi) if in_new[new[b]] == 1 and new[b] in where
    ]
    return _longest_increasing(candidates)


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` (sorted by their second) increasing in the first."""
    tops: list[int] = []  # the smallest last ``a`` of a run of each length
    top_index: list[int] = []
    previous: list[int] = []
    for index, (a, _) in enumerate(pairs):
        length = bisect.bisect_left(tops, a)
        if length == len(tops):
            tops.append(a)
            top_index.append(index)
        else:
            tops[length] = a
            top_index[length] = index
        previous.append(top_index[length - 1] if length else -1)
    run: list[tuple[int, int]] = []
    index = top_index[-1] if top_index else -1
    while index >= 0:
        run.append(pairs[index])
        index = previous[index]
    run.reverse()
    return run
