"""What stands in the outbox, as the sweep, the CLI and maintenance read it: the users with due
events, the drain lag, and one user's counts per state with the earliest due time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from core.domain import paths
from core.domain.documents import OutboxEvent
from core.ports import Ports, StoredDoc


def users_with_due_events(ctx: Ports, limit: int = 500, *, until: datetime | None = None) -> list[str]:
    """Users with events due by ``until`` (default: now; later includes events backing off)."""
    rows = ctx.store.query("outbox_due_all_users", {"state": ["pending", "leased"], "due_at": until or ctx.now()},
                           limit=limit)
    uids: dict[str, None] = {}
    for row in rows:
        uids.setdefault(row.owner, None)
    return list(uids)


def oldest_due_age(ctx: Ports) -> float:
    """Seconds the oldest due (pending or lease-expired) event has waited, 0 when none is due: the
    drain lag the sweep logs for the alert on it."""
    now = ctx.now()
    first = ctx.store.query("outbox_due_all_users", {"state": ["pending", "leased"], "due_at": now}, limit=1)
    due = OutboxEvent.from_store(first[0].data).due_at if first else None
    return max(0.0, (now - due).total_seconds()) if due else 0.0


def pending_counts(ctx: Ports, uid: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for snap in _outbox(ctx, uid):
        state = OutboxEvent.from_store(snap.data).state
        counts[state] = counts.get(state, 0) + 1
    return counts


@dataclass
class OutboxState:
    """What is left in one user's outbox and when the earliest of it may be drained."""

    pending: int = 0
    leased: int = 0
    dead: int = 0
    next_due_at: datetime | None = None

    @property
    def waiting(self) -> int:
        return self.pending + self.leased


def outbox_state(ctx: Ports, uid: str) -> OutboxState:
    """Counts per state; an event's due time is its ``due_at``, or its live lease's expiry."""
    state, now = OutboxState(), ctx.now()
    for snap in _outbox(ctx, uid):
        event = OutboxEvent.from_store(snap.data)
        kind = event.state
        if kind == "dead":
            state.dead += 1
            continue
        if kind == "leased":
            state.leased += 1
        else:
            state.pending += 1
        due = event.due_at or now
        if kind == "leased" and event.lease_expires_at is not None and event.lease_live(now):
            due = max(due, event.lease_expires_at)
        state.next_due_at = due if state.next_due_at is None else min(state.next_due_at, due)
    return state


def _outbox(ctx: Ports, uid: str, page: int = 500) -> Iterator[StoredDoc]:
    """Every event of the user's outbox, in id order, a page at a time."""
    after = None
    while True:
        rows = ctx.store.scan(paths.col(uid, paths.OUTBOX), limit=page, after=after)
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1].id

