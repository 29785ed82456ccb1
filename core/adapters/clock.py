"""Clocks for the :class:`core.ports.Clock` port: the system's UTC clock, and any zero-argument
callable returning an aware datetime (how tests shift a context's time)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from core.ports import Clock


class SystemClock(Clock):
    def now(self) -> datetime:
        return datetime.now(UTC)


class CallableClock(Clock):
    def __init__(self, read: Callable[[], datetime]) -> None:
        self._read = read

    def now(self) -> datetime:
        return self._read()
