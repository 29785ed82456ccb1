"""Pure parts of `strata bench`: percentiles, rates, recall@k."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strata_dev.bench import stats


def test_percentile_interpolates_between_closest_ranks():
    assert stats.percentile([1, 2, 3, 4], 50) == 2.5
    assert stats.percentile([10], 95) == 10.0
    assert stats.percentile([5, 1, 3], 0) == 1.0
    assert stats.percentile([5, 1, 3], 100) == 5.0
    assert stats.percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert stats.percentile([], 50) is None
    with pytest.raises(ValueError):
        stats.percentile([1], 101)


@given(st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=50))
def test_percentiles_are_ordered_and_bounded(values):
    p50, p95 = stats.percentile(values, 50), stats.percentile(values, 95)
    assert min(values) <= p50 <= p95 <= max(values)


def test_latency_ms_reports_milliseconds():
    out = stats.latency_ms([0.1, 0.2, 0.3])
    assert out == {"p50_ms": 200.0, "p95_ms": 290.0, "max_ms": 300.0, "samples": 3}
    assert stats.latency_ms([])["p50_ms"] is None


def test_rate_and_ratio_guard_against_zero():
    assert stats.rate(10, 4) == 2.5
    assert stats.rate(10, 0) is None
    assert stats.ratio(1, 4) == 0.25
    assert stats.ratio(None, 4) is None
    assert stats.ratio(3, 0) is None


def test_recall_at_k_counts_distinct_ids_in_the_first_k():
    ranked = ["a", "a", "b", "c", "d"]
    assert stats.recall_at_k(ranked, {"c"}, 2) == 0.0  # first two distinct are a, b
    assert stats.recall_at_k(ranked, {"c"}, 3) == 1.0
    assert stats.recall_at_k(ranked, {"b", "z"}, 10) == 0.5
    assert stats.recall_at_k(ranked, set(), 5) is None


def test_mean_skips_missing_values():
    assert stats.mean([1.0, None, 0.0]) == 0.5
    assert stats.mean([None]) is None
