"""The outbox drain, a small message bus. A message of the projection topic is a user's nudge, the
scheduled sweep or an account wipe's keyword purge (:func:`handle`). A drain leases a batch of a
user's due outbox events, hands it to one handler per kind of work (:mod:`core.services.drain_handlers`:
schedule consolidation, project on the keyword and vector indexes, graph; the purge message's handler
is there too) and closes it with what they came to: acknowledged with their writes, failed, or
requeued (:meth:`core.ports.Outbox.conclude`).

Providers are *projections* of canonical Firestore state, never mutation authorities. After each
apply commit the store that committed publishes a small message naming the user; the drain takes
that user's drain lease (so concurrent deliveries do not fight over the same outbox documents),
leases due events and projects the **current** state of each memory — not the event payload —
acknowledging only when every handler confirmed. Failures reschedule with bounded exponential
backoff and dead-letter after ``MAX_ATTEMPTS``; a reclaimed expired lease is simply re-projected
from current state, which repairs whatever a crashed worker left half-done. Restricted items and
accounts under deletion are delete-only. Who may write what (the drain lease, event epochs, the
dirty note) is :mod:`core.domain.outbox`, applied by the :class:`core.ports.Outbox` port.

Fencing. A drain's leasing commit renews its drain lease; its acknowledgement commits only while
the lease is still its own and each event is still at the epoch it leased it with. Provider writes
cannot be fenced, so a drain that outlived its lease may have written older state after a newer
drain: its acknowledgement is refused, its events are requeued and a drain is nudged, so the current
state is projected once more and nothing is left stale with no event to repair it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from core.domain import outbox
from core.domain.outbox import BACKOFF_BASE_S, BACKOFF_MAX_S, BATCH, DRAIN_LEASE, MAX_ATTEMPTS, backoff
from core.ports import Ports
from core.services import accounts, controls, drain_handlers
from core.services.outbox_reads import (
    OutboxState,
    oldest_due_age,
    outbox_state,
    pending_counts,
    users_with_due_events,
)

log = logging.getLogger(__name__)
__all__ = ["BACKOFF_BASE_S", "BACKOFF_MAX_S", "BATCH", "DRAIN_LEASE", "MAX_ATTEMPTS", "OutboxState",  # the drain's terms
           "backoff", "oldest_due_age", "outbox_state", "pending_counts", "users_with_due_events"]

@dataclass
class DrainReport:
    uids: list[str] = field(default_factory=list)
    leased: int = 0
    acknowledged: int = 0
    retried: int = 0
    dead: int = 0
    repaired: int = 0
    upserts: int = 0
    deletes: int = 0
    provider_calls: int = 0
    skipped: str | None = None
    oldest_due_age_s: float | None = None  # the sweep: how long the oldest due event has waited
    # A failed round: the providers that did confirm it (recorded on its events for deletion receipts)
    partial: list[str] = field(default_factory=list)
    retry_later: bool = False
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def add(self, other: DrainReport) -> None:
        for name in ("leased", "acknowledged", "retried", "dead", "repaired", "upserts", "deletes", "provider_calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.uids.extend(other.uids)
        self.retry_later = self.retry_later or other.retry_later
        self.errors.extend(other.errors)


# --------------------------------------------------------------------------------------- messages
def handle(ctx: Ports, message: Mapping[str, Any]) -> dict[str, Any]:
    """One message of the projection topic: a user's nudge (drain that user), the scheduled sweep
    (no ``uid``: drain every user with due events) or an account wipe's purge request (``purge``:
    the purge user handler). Returns the line to log."""
    uid = message.get("uid")
    if not isinstance(uid, str) or not uid:
        return {"event": "drain", **sweep(ctx).as_dict()}
    if message.get("purge") != accounts.PURGE_REQUEST:
        return {"event": "drain", **drain_user(ctx, uid).as_dict()}
    try:
        generation = int(message["generation"])
    except (KeyError, TypeError, ValueError):
        log.error("purge request without a generation acknowledged")
        return {"event": "account_keyword_purge", "outcome": "no_generation"}
    done = drain_handlers.purge_keyword_index(ctx, uid, generation, str(message.get("requested") or ""))
    return {"event": "account_keyword_purge", "generation": generation, "outcome": done}


def sweep(ctx: Ports) -> DrainReport:
    """The scheduled safety net: drain every user that has due events whose nudge was lost."""
    report = DrainReport()
    if controls.is_on(ctx, controls.PROJECTION):
        report.skipped = "projection_disabled"
        return report
    report.oldest_due_age_s = oldest_due_age(ctx)
    for uid in users_with_due_events(ctx):
        report.add(drain_user(ctx, uid))
    return report


def settle(ctx: Ports, uid: str) -> DrainReport | None:
    """Maintenance's drain: a consolidation pass, the doctor and a rebuild drain the user's existing
    outbox work before they parse rows, and the events their own commits added afterwards (the
    spec's rule), so they read projected state and leave none of their own work waiting. A failure
    is logged, not raised: the Pub/Sub push and the scheduled sweep deliver what it could not."""
    try:
        return drain_user(ctx, uid)
    except Exception:  # noqa: BLE001 - maintenance goes on; the outbox keeps the work
        log.warning("maintenance drain for %s failed; the outbox keeps its events", uid, exc_info=True)
        return None


# ------------------------------------------------------------------------------------------ drain
def drain_user(ctx: Ports, uid: str, *, max_rounds: int = 1000, progress: Any = None) -> DrainReport:
    """Drain ``uid``'s due outbox events until none is due (or all left are backing off): open the
    drain (:meth:`core.ports.Outbox.open`), run rounds, close it; a note left meanwhile by a nudge
    that found the lease held brings the rounds once more before the lease goes."""
    report = DrainReport(uids=[uid])
    if controls.is_on(ctx, controls.PROJECTION):
        report.skipped = "projection_disabled"  # events stay pending, unattempted, for a later drain
        return report
    drain = ctx.outbox.open(uid)
    report.skipped = drain.skipped
    again, rounds = drain.holder is not None, 0
    try:
        while again:
            rounds = _drain_rounds(ctx, drain, report, rounds, max_rounds, progress)
            # a lost lease is not ours to let go
            again = report.skipped != "lease_lost" and ctx.outbox.close(
                drain, honour_dirty=rounds < max_rounds and report.skipped is None)
    except BaseException:
        ctx.outbox.close(drain, honour_dirty=False)
        raise
    report.retry_later = report.retried > 0
    return report


def _drain_rounds(ctx: Ports, drain: outbox.Drain, report: DrainReport, rounds: int, max_rounds: int,
                  progress: Any) -> int:
    """Drain rounds into ``report`` until nothing more is due, a round retried, or ``max_rounds``
    rounds in all; ``report.skipped`` says when the switch or a lost lease stopped it. Returns the
    rounds run so far (``rounds`` before)."""
    while rounds < max_rounds:
        # After the first round, the round checks the incident switch (switched on mid-drain:
        # it stops before leasing) and that the drain lease is still this drain's (another
        # drain took over: it drains what is left), and renews it as it leases.
        round_report, more = _drain_round(ctx, drain, check_switch=rounds > 0)
        if round_report.skipped == "projection_disabled":
            report.skipped = "projection_disabled"
            break
        rounds += 1
        report.add(DrainReport(**{**round_report.as_dict(), "uids": []}))
        if progress is not None:
            progress(report)
        if round_report.skipped == "lease_lost":
            report.skipped = "lease_lost"
            break
        if round_report.leased == 0 or round_report.retried or not more:
            break
    return rounds


def _drain_round(ctx: Ports, drain: outbox.Drain, *, check_switch: bool = False) -> tuple[DrainReport, bool]:
    """One round of the bus: lease a batch, hand it to the handlers (:func:`drain_handlers.run`) and
    close it with what they came to (acknowledge, fail, or requeue when the lease was lost); the
    flag says whether more may be due. Every outbox write requires the drain's lease and the
    leasing commit renews it (``report.skipped`` is ``lease_lost`` when it is no longer this
    drain's or a write was refused). ``check_switch``: first see whether the projection switch was
    turned on (``report.skipped`` is ``projection_disabled``, nothing leased); it is read beside
    the events."""
    report = DrainReport()
    now = ctx.now()
    switch = drain_handlers.POOL.submit(controls.is_on, ctx, controls.PROJECTION) if check_switch else None
    due = ctx.outbox.due(drain.uid, now, holder=drain.holder)
    if switch is not None and switch.result():
        report.skipped = "projection_disabled"
        return report, False
    batch = ctx.outbox.lease(drain, due, now)
    if not batch.entries:
        report.skipped = "lease_lost" if batch.lost else None  # another drain took over: it drains the rest
        return report, batch.more
    report.leased, report.repaired = len(batch.entries), batch.repaired
    outcome = drain_handlers.run(ctx, batch, drain.generation)
    report.provider_calls, report.partial = outcome.calls, list(outcome.confirmed)
    report.upserts, report.deletes = outcome.upserts, outcome.deletes
    report.errors.extend([outcome.error] if outcome.error is not None else [])
    closed = ctx.outbox.conclude(batch, outcome, drain.generation, ctx.now() if outcome.error is None else now)
    report.acknowledged = closed.get("acknowledged", 0)
    report.retried, report.dead = closed.get("retried", 0), closed.get("dead", 0)
    report.skipped = "lease_lost" if "requeued" in closed else None
    return report, batch.more
