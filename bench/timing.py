"""Bounded sampling and the statistics every section reports (median, percentiles).

Every loop here stops at whichever comes first: the sample count or the time
budget. A section that ran out of time reports how many samples it has.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence


def ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def sample(
    fn: Callable[[int], object],
    count: int,
    budget_s: float,
    before: Callable[[int], object] | None = None,
) -> list[float]:
    """Milliseconds of up to ``count`` calls ``fn(i)``, stopping once ``budget_s`` is spent;
    ``before(i)`` runs untimed ahead of each call."""
    samples: list[float] = []
    deadline = time.monotonic() + budget_s
    for i in range(count):
        if before is not None:
            before(i)
        start = time.perf_counter()
        fn(i)
        samples.append(ms_since(start))
        if time.monotonic() > deadline:
            break
    return samples


async def sample_async(
    fn: Callable[[int], Awaitable[object]],
    count: int,
    budget_s: float,
    before: Callable[[int], object] | None = None,
) -> list[float]:
    """As :func:`sample` for a coroutine; ``before(i)`` runs untimed ahead of each call."""
    samples: list[float] = []
    deadline = time.monotonic() + budget_s
    for i in range(count):
        if before is not None:
            before(i)
        start = time.perf_counter()
        await fn(i)
        samples.append(ms_since(start))
        if time.monotonic() > deadline:
            break
    return samples


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def fmt_ms(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def fmt_ratio(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}x"
