"""The Clock port: a context reads its time through it, whether given a Clock, a callable or nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from core.adapters.clock import CallableClock, SystemClock
from core.bootstrap import Context
from core.ports import Clock

MOMENT = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


class Frozen(Clock):
    def now(self) -> datetime:
        return MOMENT


def test_a_clock_override_is_used_as_is() -> None:
    clock = Frozen()
    ctx = Context(clock=clock)
    assert ctx.clock is clock and ctx.now() == MOMENT


def test_a_callable_override_is_wrapped() -> None:
    ctx = Context(clock=lambda: MOMENT)
    assert isinstance(ctx.clock, CallableClock) and ctx.now() == MOMENT


def test_the_default_is_the_system_utc_clock() -> None:
    ctx = Context()
    before = datetime.now(UTC)
    now = ctx.now()
    assert isinstance(ctx.clock, SystemClock) and now.tzinfo is not None and before <= now


def test_a_clock_given_as_none_is_the_system_clock() -> None:
    from datetime import UTC, datetime

    from core.bootstrap import Context

    before = datetime.now(UTC)
    assert Context(clock=None).now() >= before
