"""Seeding documents in tests through the Store port's two write doors: one named change,
``test.seed`` (:meth:`core.ports.Store.write`), and a lease taken by a compare-and-swap
(:meth:`core.ports.Store.swap`), so no test needs a write method of its own."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from core.domain import outbox
from core.domain.changes import Change, Written
from core.ports import Store, Write


def seed(store: Store, writes: Iterable[Write]) -> Written:
    """Commit ``writes`` in one batch (all or none), as a service's plain change would."""
    return store.write(Change("test.seed", list(writes)))


def take_lease(store: Store, path: str, holder: str, ttl: timedelta) -> bool:
    """Take the lease at ``path`` for ``holder`` (another drain or pass, in a test) at the store's
    time, as :meth:`core.ports.Outbox.open` takes the drain lease; False when another live holder has it."""
    return store.swap(path, lambda data: outbox.take(data, holder, store.clock(), ttl), exhausted=False)
