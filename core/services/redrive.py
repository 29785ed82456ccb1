"""Dead-lettered projection events: list them and send them back to the drain.

An outbox event goes ``dead`` after ``projection.MAX_ATTEMPTS`` failed attempts (a provider outage
longer than the backoff ladder). It keeps naming its memory, and the drain projects a memory's
*current* state, so re-driving an old event is always safe: a memory deleted since is deleted from
the providers, never resurrected.

:func:`redrive` moves dead events back to ``pending`` with a fresh attempt budget, due now, and
nudges each touched user's drain. Each event is updated only if it is unchanged since it was read
(its update time is the write's precondition), so a second redrive, or one racing another, changes
nothing. Both sides are read in pages of :data:`PAGE` events, ordered by document path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from core.domain import paths
from core.domain.documents import OutboxEvent
from core.ports import Ports, StoredDoc

PAGE = 200


@dataclass(frozen=True)
class DeadEvent:
    uid: str
    event_id: str
    memory_id: str | None
    action: str | None
    attempts: int
    dead_at: datetime | None
    last_error: str | None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["dead_at"] = self.dead_at.isoformat() if self.dead_at else None
        return data


@dataclass
class RedriveReport:
    redriven: int = 0
    changed_meanwhile: int = 0
    uids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _dead_snapshots(ctx: Ports, uid: str | None, since: datetime | None) -> Iterator[StoredDoc]:
    """Dead events of ``uid`` (or of every user), page by page; ``since`` keeps those dead at or
    after it."""
    name = "outbox_by_state" if uid else "outbox_by_state_all_users"
    cursor = None
    while True:
        page = ctx.store.query(name, {"state": ["dead"]}, parent=paths.user(uid) if uid else "", limit=PAGE,
                               start_after=cursor)
        for snap in page:
            dead_at = snap.data.get("dead_at")
            if since is None or (dead_at is not None and dead_at >= since):
                yield snap
        if len(page) < PAGE:
            return
        cursor = page[-1]


def _event(snap: StoredDoc) -> DeadEvent:
    data = snap.data
    return DeadEvent(uid=snap.owner, event_id=snap.id, memory_id=data.get("memory_id"),
                     action=data.get("action"), attempts=int(data.get("attempts", 0)),
                     dead_at=data.get("dead_at"), last_error=data.get("last_error"))


def dead_events(ctx: Ports, uid: str | None = None, since: datetime | None = None) -> Iterator[DeadEvent]:
    """Every dead-lettered event of ``uid`` (or of all users), dead at or after ``since``."""
    for snap in _dead_snapshots(ctx, uid, since):
        yield _event(snap)


def redrive(ctx: Ports, uid: str | None = None, since: datetime | None = None, *,
            progress: Callable[[RedriveReport], None] | None = None) -> RedriveReport:
    """Move dead events back to pending (attempts 0, due now) and nudge each user's drain."""
    report = RedriveReport()
    for snap in _dead_snapshots(ctx, uid, since):
        now = ctx.now()

        def revive(data: dict[str, Any] | None, now: datetime = now) -> tuple[bool, dict[str, Any] | None]:
            event = OutboxEvent.from_store(data)
            if event.state != "dead":
                return False, None
            redrives = int(event.extra.get("redrives") or 0)  # not a field of the event's type: kept in extra
            return True, {"state": "pending", "attempts": 0, "due_at": now, "lease_expires_at": None,
                          "dead_at": None, "redriven_at": now, "redrives": redrives + 1}

        # Decided on the version read (a lost race decides again), so the count of redrives is current.
        if not ctx.store.swap(snap.path, revive, seen=snap, exhausted=False):
            report.changed_meanwhile += 1  # another redrive (or a purge) got there first
            continue
        report.redriven += 1
        owner = snap.owner
        if owner not in report.uids:
            report.uids.append(owner)
        if progress is not None:
            progress(report)
    for owner in report.uids:
        ctx.outbox.nudge(owner)
    return report


__all__ = ["PAGE", "DeadEvent", "RedriveReport", "dead_events", "redrive"]
