"""The outbox drain, a small message bus: the projection topic's messages are handled here, and a
drain leases a batch of a user's due outbox events, hands it to the handler of each kind of work
it asks for, and acknowledges it with the writes those handlers return.

Providers are *projections* of canonical Firestore state, never mutation authorities. After each
apply commit the store that committed publishes a small message naming the user; the drain takes
that user's drain lease (so concurrent deliveries do not fight over the same outbox documents),
leases due events and projects the **current** state of each memory — not the event payload —
acknowledging only when every handler confirmed. Failures reschedule with bounded exponential
backoff and dead-letter after ``MAX_ATTEMPTS``; a reclaimed expired lease is simply re-projected
from current state, which repairs whatever a crashed worker left half-done. Restricted items and
accounts under deletion are delete-only. Who may write what (the drain lease, event epochs, the
dirty note) is :mod:`core.domain.outbox`, applied by the :class:`core.ports.Outbox` port.

The handlers, by the work a batch asks for, run at once: **project** (the keyword and vector
indexes, :mod:`core.services.indexing`, from the plan of :mod:`core.domain.projection`, user
purges included), **graph** (:mod:`core.services.graph`: its writes ride in the acknowledgement)
and **schedule consolidation** (:func:`core.services.scheduling.enqueue_for`: its registry write
rides too). A fourth message, **purge user** (an account wipe's keyword purge), is handled by
:func:`core.services.accounts.purge_keyword_index`: only this function holds the write key.

Fencing. A drain's leasing commit renews its drain lease; its acknowledgement commits only while
the lease is still its own and each event is still at the epoch it leased it with. Provider writes
cannot be fenced, so a drain that outlived its lease may have written older state after a newer
drain: its acknowledgement is refused, its events are requeued and a drain is nudged, so the current
state is projected once more and nothing is left stale with no event to repair it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from core.domain import fence, outbox, paths
from core.domain import projection as plans
from core.domain.documents import OutboxEvent
from core.domain.outbox import BACKOFF_BASE_S, BACKOFF_MAX_S, BATCH, DRAIN_LEASE, MAX_ATTEMPTS, backoff
from core.domain.plan import SCHEDULE_ACTION
from core.domain.records import MemoryItem
from core.ports import Ports, StoredDoc, Write
from core.services import accounts, controls, graph, indexing, scheduling

log = logging.getLogger(__name__)
__all__ = ["BACKOFF_BASE_S", "BACKOFF_MAX_S", "BATCH", "DRAIN_LEASE", "MAX_ATTEMPTS", "backoff"]  # the drain's terms

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
    """One message of the projection topic: the scheduled sweep (no ``uid``), an account wipe's
    purge request (``purge``) or a user's nudge. Returns the line to log."""
    if not isinstance(message.get("uid"), str) or not message["uid"]:
        return {"event": "drain", **sweep(ctx).as_dict()}
    uid: str = message["uid"]
    if message.get("purge") == accounts.PURGE_REQUEST:
        try:
            generation = int(message["generation"])
        except (KeyError, TypeError, ValueError):
            log.error("purge request without a generation acknowledged")
            return {"event": "account_keyword_purge", "outcome": "no_generation"}
        done = accounts.purge_keyword_index(ctx, uid, generation, str(message.get("requested") or ""))
        return {"event": "account_keyword_purge", "generation": generation, "outcome": done}
    return {"event": "drain", **drain_user(ctx, uid).as_dict()}


# ------------------------------------------------------------------------------------------ drain
def due_events(ctx: Ports, uid: str, now: datetime, limit: int = outbox.SCAN) -> list[outbox.Entry]:
    return ctx.outbox.due(uid, now, limit=limit).entries


def drain_user(ctx: Ports, uid: str, *, max_rounds: int = 1000, progress: Any = None) -> DrainReport:
    """Drain ``uid``'s due outbox events until none is due (or all left are backing off)."""
    report = DrainReport(uids=[uid])
    if controls.is_on(ctx, controls.PROJECTION):
        report.skipped = "projection_disabled"  # events stay pending, unattempted, for a later drain
        return report
    # The account generation is read first: a wipe that completes after the due events were seen
    # and before the lease is taken would otherwise leave the lease document in the wiped account,
    # and a drain that outlives a wipe it did not see may only delete from the providers.
    account = ctx.store.read_fence(uid)
    if not due_events(ctx, uid, ctx.now(), limit=1):
        return report  # nothing to do: no lease document is written (a wiped account stays empty)
    holder = uuid.uuid4().hex
    # A nudge that finds the lease held marks it dirty, so the holder drains again before letting go.
    if not ctx.outbox.take(uid, holder):
        report.skipped = "drain_in_progress"
        return report
    if ctx.store.read_fence(uid).generation != account.generation:
        ctx.store.commit([Write("delete", outbox.drain_lease(uid))])
        report.skipped = "account_generation_changed"
        return report
    again = True
    rounds = 0
    try:
        while again:
            again = False
            rounds = _drain_rounds(ctx, uid, account.generation, holder, report, rounds, max_rounds, progress)
            if report.skipped == "lease_lost":
                break  # not ours to release
            again = ctx.outbox.release(uid, holder, honour_dirty=rounds < max_rounds and report.skipped is None)
    except BaseException:
        ctx.outbox.release(uid, holder, honour_dirty=False)
        raise
    report.retry_later = report.retried > 0
    return report


def _drain_rounds(ctx: Ports, uid: str, generation: int, holder: str, report: DrainReport, rounds: int,
                  max_rounds: int, progress: Any) -> int:
    """Drain rounds into ``report`` until nothing more is due, a round retried, or ``max_rounds``
    rounds in all; ``report.skipped`` says when the switch or a lost lease stopped it. Returns the
    rounds run so far (``rounds`` before)."""
    while rounds < max_rounds:
        # After the first round, the round checks the incident switch (switched on mid-drain:
        # it stops before leasing) and that the drain lease is still this drain's (another
        # drain took over: it drains what is left), and renews it as it leases.
        round_report, more = _drain_round(ctx, uid, generation, holder, check_switch=rounds > 0)
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


def _drain_round(ctx: Ports, uid: str, generation: int | None = None,
                 holder: str | None = None, *, check_switch: bool = False) -> tuple[DrainReport, bool]:
    """Lease a batch, hand it to the handlers and acknowledge it; the flag says whether more may be
    due. With ``holder`` (the drain lease's), every outbox write requires it and the leasing commit
    renews it (``report.skipped`` is ``lease_lost`` when it is no longer this drain's or a write was
    refused). ``check_switch``: first see whether the projection switch was turned on
    (``report.skipped`` is ``projection_disabled``, nothing leased); it is read beside the events."""
    report = DrainReport()
    now = ctx.now()
    switch = _POOL.submit(controls.is_on, ctx, controls.PROJECTION) if check_switch else None
    due = ctx.outbox.due(uid, now, holder=holder)
    if switch is not None and switch.result():
        report.skipped = "projection_disabled"
        return report, False
    if due.lost(holder):
        report.skipped = "lease_lost"  # another drain took over: it drains what is left
        return report, False
    batch = ctx.outbox.lease(uid, holder, due, now)
    if not batch.entries:
        report.skipped = "lease_lost" if batch.lost else None
        return report, batch.more
    report.leased, report.repaired = len(batch.entries), batch.repaired
    try:
        writes = _handle(ctx, uid, batch.events, report, generation)
    except Exception as exc:  # noqa: BLE001 - any handler failure: nothing is acknowledged
        message = f"{type(exc).__name__}: {exc}"[:500]
        report.errors.append(message)
        counts = ctx.outbox.fail(batch, message, report.partial, now)
        report.retried, report.dead = counts.get("retried", 0), counts.get("dead", 0)
        return report, batch.more
    if not ctx.outbox.acknowledge(batch, writes, ctx.now()):
        report.skipped = "lease_lost"
        ctx.outbox.requeue(batch, generation, ctx.now())  # and a drain projects the current state again
        return report, batch.more
    report.acknowledged = len(batch.entries)
    return report, batch.more


# --------------------------------------------------------------------------------------- handlers
def _handle(ctx: Ports, uid: str, events: list[OutboxEvent], report: DrainReport,
            generation: int | None = None) -> list[Write]:
    """Hand the batch to its handlers, at once: the schedule's enqueue and each index in the pool,
    the graph plan here; once all finished, raise the first failure (the schedule's, then an
    index's, then the graph's). Returns the writes to acknowledge with (the schedule's registry
    row, then the graph's). Delete-only while the account is fenced or no longer at ``generation``."""
    memory_ids = plans.memory_ids(events)
    schedule = [e for e in events if e.action == SCHEDULE_ACTION]
    state = _read_state(ctx, uid, memory_ids, generation, with_schedule=bool(schedule))
    plan = plans.plan(uid, events, state.items, state.fenced, sensitivity=ctx.sensitivity)
    running: dict[str, Future[Any]] = {}
    if schedule and not state.fenced:
        running["schedule"] = _POOL.submit(scheduling.enqueue_for, ctx, uid, schedule, state.registry,
                                           state.consolidation_disabled)
    if "graph" in plan.purged:
        graph.purge(ctx, uid)  # before the plan reads the edges: the plan then only rewrites facts
    keyword, vector, embedder = ctx.keyword_index, ctx.vector_index, ctx.embedder  # built here, not in a worker
    running["typesense"] = _POOL.submit(indexing.sync_keyword, keyword, uid, plan)
    running["vector"] = _POOL.submit(indexing.sync_vector, vector, embedder, uid, plan)
    writes, failures = graph.Writes(), []
    try:
        if memory_ids:
            writes = graph.plan(ctx, uid, memory_ids, state.items, state.assertions, state.fenced)
    except Exception as exc:  # noqa: BLE001 - raised once the others are done, never mid-flight
        failures.append(exc)
    done = _finished(uid, running, report)
    if isinstance(done, Exception) or failures:
        raise done if isinstance(done, Exception) else failures[0]
    report.upserts += len(plan.upserts)
    report.deletes += len(plan.deletes)
    return [*done, *writes.ops]


def _finished(uid: str, running: dict[str, Future[Any]], report: DrainReport) -> list[Write] | Exception:
    """Wait for every pooled handler, counting the indexes' calls and which confirmed; the first
    failure, or the schedule's registry write (if any)."""
    failures: list[Exception] = []
    registry: list[Write] = []
    for name, future in running.items():
        try:
            value = future.result()
        except Exception as exc:  # noqa: BLE001 - reported once every handler has finished
            failures.append(exc)
            continue
        if name == "schedule":
            registry.append(Write("set", scheduling.registry_path(uid), value[0], True))
        else:
            report.provider_calls += value
            report.partial.append(name)
    return failures[0] if failures else registry


# Shared by the drains of one process; its threads start on first use.
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="projection")


@dataclass
class _State:
    fenced: bool
    items: dict[str, MemoryItem]
    assertions: dict[str, dict[str, Any]]
    registry: dict[str, Any] = field(default_factory=dict)  # the consolidation schedule's row
    consolidation_disabled: bool = False


def _read_state(ctx: Ports, uid: str, memory_ids: list[str], generation: int | None = None, *,
                with_schedule: bool = False) -> _State:
    """The account fence and the items in one batched lookup (with the batch's scheduling events,
    the user's consolidation registry row and the incident switches too), then the graph
    assertions of the items that are graph facts now (the only ones the graph projection reads an
    assertion for)."""
    fence_ref = paths.account_deletion(uid)
    schedule_refs = [scheduling.registry_path(uid), paths.CONTROLS_GLOBAL] if with_schedule else []
    found = ctx.store.get_all([fence_ref, *schedule_refs, *(paths.memory_item(uid, mid) for mid in memory_ids)])
    registry = (found.pop(schedule_refs[0], None) or {}) if with_schedule else {}
    switches = (found.pop(schedule_refs[1], None) or {}) if with_schedule else {}
    fenced, items = _fenced_and_items(found, fence_ref, generation)
    assertions = {} if fenced else _fact_assertions(ctx, uid, memory_ids, items)
    disabled = bool(ctx.settings.consolidation_on_write and switches.get(controls.CONSOLIDATION))
    return _State(fenced, items, assertions, registry, disabled)


def _fenced_and_items(found: dict[str, dict[str, Any] | None], fence_ref: str, generation: int | None
                      ) -> tuple[bool, dict[str, MemoryItem]]:
    """From the lookup: whether the account is fenced (being wiped, or no longer at ``generation``),
    and the items that exist, by id."""
    fenced = False
    items: dict[str, MemoryItem] = {}
    for path, data in found.items():
        if data is None:
            continue
        if path == fence_ref:
            account = fence.of(data)
            fenced = account.deleting or (generation is not None and account.generation != generation)
        else:
            items[paths.doc_id(path)] = MemoryItem.from_store(data)
    return fenced, items


def _fact_assertions(ctx: Ports, uid: str, memory_ids: list[str], items: dict[str, MemoryItem]
                     ) -> dict[str, dict[str, Any]]:
    """The graph assertions of the items that are graph facts now, by memory id (one lookup; none
    when no item is a fact)."""
    refs = [paths.graph_assertion(uid, mid) for mid in memory_ids if graph.is_fact(items.get(mid))]
    return ({paths.doc_id(p): d for p, d in ctx.store.get_all(refs).items() if d is not None}
            if refs else {})


# ------------------------------------------------------------------------------------------ sweep
def users_with_due_events(ctx: Ports, limit: int = 500, *, until: datetime | None = None) -> list[str]:
    """Users with events due by ``until`` (default: now; later includes events backing off)."""
    rows = ctx.store.query("outbox_due_all_users", {"state": ["pending", "leased"], "due_at": until or ctx.now()},
                           limit=limit)
    uids: dict[str, None] = {}
    for row in rows:
        uids.setdefault(row.owner, None)
    return list(uids)


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

