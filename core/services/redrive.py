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

from core.adapters.firestore.queries import build
from core.bootstrap import Context

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


def _dead_snapshots(ctx: Context, uid: str | None, since: datetime | None) -> Iterator[Any]:
    """Dead events of ``uid`` (or of every user), page by page; ``since`` keeps those dead at or
    after it."""
    if uid:
        base, name = ctx.paths.col(uid, "memory_outbox"), "outbox_by_state"
    else:
        base, name = ctx.client.collection_group("memory_outbox"), "outbox_by_state_all_users"
    cursor = None
    while True:
        page = list(build(base, name, {"state": ["dead"]}, limit=PAGE, start_after=cursor).stream())
        for snap in page:
            dead_at = (snap.to_dict() or {}).get("dead_at")
            if since is None or (dead_at is not None and dead_at >= since):
                yield snap
        if len(page) < PAGE:
            return
        cursor = page[-1]


def _event(snap: Any) -> DeadEvent:
    data = snap.to_dict() or {}
    return DeadEvent(uid=snap.reference.parent.parent.id, event_id=snap.id, memory_id=data.get("memory_id"),
                     action=data.get("action"), attempts=int(data.get("attempts", 0)),
                     dead_at=data.get("dead_at"), last_error=data.get("last_error"))


def dead_events(ctx: Context, uid: str | None = None, since: datetime | None = None) -> Iterator[DeadEvent]:
    """Every dead-lettered event of ``uid`` (or of all users), dead at or after ``since``."""
    for snap in _dead_snapshots(ctx, uid, since):
        yield _event(snap)


def redrive(ctx: Context, uid: str | None = None, since: datetime | None = None, *,
            progress: Callable[[RedriveReport], None] | None = None) -> RedriveReport:
    """Move dead events back to pending (attempts 0, due now) and nudge each user's drain."""
    from google.api_core import exceptions as gexc
    from google.cloud import firestore

    report = RedriveReport()
    for snap in _dead_snapshots(ctx, uid, since):
        now = ctx.now()
        try:
            snap.reference.update(
                {"state": "pending", "attempts": 0, "due_at": now, "lease_expires_at": None, "dead_at": None,
                 "redriven_at": now, "redrives": firestore.Increment(1)},
                option=ctx.client.write_option(last_update_time=snap.update_time))
        except (gexc.FailedPrecondition, gexc.NotFound):
            report.changed_meanwhile += 1  # another redrive (or a purge) got there first
            continue
        report.redriven += 1
        owner = snap.reference.parent.parent.id
        if owner not in report.uids:
            report.uids.append(owner)
        if progress is not None:
            progress(report)
    for owner in report.uids:
        ctx.nudge_projection(owner, 0)
    return report


__all__ = ["PAGE", "DeadEvent", "RedriveReport", "dead_events", "redrive"]
