"""The per-user rate limit on the in-memory store (docs/api.md, *Rate limits*): at most the limit
per fixed window, whatever the random shard picks; a refusal says how long until the window ends;
a new window starts from zero and clears the old one's counters; users and kinds count apart;
0 turns a kind off."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.domain import paths
from core.errors import RateLimited
from core.services import rate_limits
from tests.unit.fakes.ports import World, world


def _admitted(w: World, uid: str, kind: str, tries: int) -> tuple[int, list[int]]:
    admitted, waits = 0, []
    for _ in range(tries):
        try:
            rate_limits.check(w.ctx, uid, kind)
            admitted += 1
        except RateLimited as exc:
            waits.append(exc.retry_after_s)
    return admitted, waits


def _counters(w: World) -> list[str]:
    return sorted(p for p in w.store.docs if p.startswith(paths.RATE_LIMITS + "/"))


@pytest.mark.parametrize("limit", [1, 3, 8, 50])
def test_a_window_admits_at_most_the_limit(limit: int) -> None:
    w = world(rate_limit_writes=limit, rate_window_s=60)
    w.clock.current = datetime(2026, 12, 4, 12, 0, 10, tzinfo=UTC)
    admitted, waits = _admitted(w, "u1", "writes", 4 * limit + 10)
    assert 0 < admitted <= limit
    assert waits and set(waits) == {50}  # 10 s into a 60 s window


def test_the_next_window_starts_from_zero_and_clears_the_window_before() -> None:
    w = world(rate_limit_writes=8, rate_window_s=60)
    w.clock.current = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)
    first, _ = _admitted(w, "u1", "writes", 40)
    old = _counters(w)
    w.clock.advance(seconds=60)
    second, _ = _admitted(w, "u1", "writes", 40)
    assert 0 < first <= 8 and 0 < second <= 8
    rate_limits._CLEANUP.submit(lambda: None).result()
    rate_limits._CLEANUP.submit(lambda: None).result()
    left = _counters(w)
    assert not set(old) & set(left) and left  # the earlier window's counters are gone
    assert all("u1" not in p for p in left)  # counters name a hash of the uid, never the uid


def test_the_limit_is_split_whole_over_the_counters() -> None:
    """Sequential requests until every counter refused: exactly the limit got through, for a limit
    that four counters do not divide."""
    for limit in (5, 7, 2):
        w = world(rate_limit_writes=limit, rate_window_s=60)
        admitted, waits = _admitted(w, "u1", "writes", 60 * limit)
        assert admitted == limit and len(waits) == 59 * limit, (limit, admitted)


def test_users_and_kinds_count_apart_and_zero_is_off() -> None:
    w = world(rate_limit_writes=4, rate_limit_extraction=0, rate_window_s=60)
    a, _ = _admitted(w, "u1", "writes", 20)
    b, _ = _admitted(w, "u2", "writes", 20)
    unlimited, waits = _admitted(w, "u1", "extraction", 50)
    assert 0 < a <= 4 and 0 < b <= 4
    assert (unlimited, waits) == (50, [])
