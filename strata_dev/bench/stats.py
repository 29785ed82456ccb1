"""Small, pure statistics the benchmarks share: percentiles, rates, recall@k."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100) by linear interpolation between closest ranks; None if empty."""
    if not values:
        return None
    if not 0 <= q <= 100:
        raise ValueError("q must be within 0..100")
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = math.ceil(position)
    fraction = position - low
    return float(ordered[low] + (ordered[high] - ordered[low]) * fraction)


def latency_ms(values_s: Sequence[float]) -> dict[str, float | None]:
    """p50/p95/max of durations given in seconds, reported in milliseconds."""
    def ms(value: float | None) -> float | None:
        return None if value is None else round(value * 1000.0, 1)

    return {"p50_ms": ms(percentile(values_s, 50)), "p95_ms": ms(percentile(values_s, 95)),
            "max_ms": ms(max(values_s) if values_s else None), "samples": len(values_s)}


def rate(count: float, seconds: float) -> float | None:
    return round(count / seconds, 3) if seconds > 0 else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 3)


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float | None:
    """Share of ``relevant`` ids found among the first ``k`` distinct ids of ``ranked``.

    None when nothing is relevant (such a question says nothing about recall)."""
    wanted = set(relevant)
    if not wanted:
        return None
    top: list[str] = []
    for item in ranked:
        if item not in top:
            top.append(item)
        if len(top) == k:
            break
    return len(wanted & set(top)) / len(wanted)


def mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 4) if present else None
