"""How the bench's RPC counter tells sequential round trips from overlapping ones
(strata_dev.bench.counting.Counts.sequential): intervals are set by hand, no clock involved."""

from __future__ import annotations

from strata_dev.bench.counting import Counts


def _counts(*intervals: tuple[float, float]) -> Counts:
    counts = Counts()
    counts.intervals = [list(i) for i in intervals]
    return counts


def test_no_rpcs_no_round_trips() -> None:
    assert Counts().sequential() == 0


def test_one_after_another_each_count() -> None:
    assert _counts((0, 1), (1, 2), (2.5, 3)).sequential() == 3


def test_overlapping_rpcs_count_once() -> None:
    # a fence read and two queries sent together, then a commit after all of them answered
    assert _counts((0, 1), (0.1, 1.2), (0.2, 0.9), (1.3, 2)).sequential() == 2


def test_a_long_stream_does_not_hide_a_chain_beside_it() -> None:
    # a stream consumed lazily (open 0..10) beside three sequential lookups: three round trips
    assert _counts((0, 10), (1, 2), (3, 4), (5, 6)).sequential() == 3


def test_reset_forgets_intervals() -> None:
    counts = _counts((0, 1))
    counts.reset()
    assert counts.sequential() == 0 and counts.snapshot()["rpcs"] == 0
