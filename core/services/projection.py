"""Projection delivery: the outbox drained into Typesense, Pinecone and the knowledge graph.

Providers are *projections* of canonical Firestore state, never mutation authorities. After each
apply commit a small Pub/Sub message names the user; the drainer takes that user's drain lease (so
concurrent deliveries do not fight over the same outbox documents), leases due events (lease expiry,
epoch, attempt count), projects the **current** state of each memory — not the event payload — and
acknowledges only when every provider confirmed. Failures reschedule with bounded exponential
backoff and dead-letter after ``MAX_ATTEMPTS``. A reclaimed expired lease is simply re-projected
from current state, which repairs whatever a crashed worker left half-done. Restricted items and
accounts under deletion are delete-only.

Fencing. A drain holds the user's drain lease (``DRAIN_LEASE``) and renews it in every round's
leasing commit, so a long drain keeps it. Every outbox write of a round is fenced: leasing events commits only
while this drain still holds the drain lease and each event is as it was read; the acknowledgement
(graph writes plus event deletes) commits only while the drain lease is still this drain's and each
event still carries the lease epoch this drain gave it; a reschedule after a failure only touches
events still at that epoch. Provider writes cannot be fenced, so a drain that outlived its lease
(a round longer than the lease, a pause) may have written older state after a newer drainer: its
acknowledgement is refused, its events go back to ``pending`` (due now, when still at its epoch)
and the drain is nudged again, so the current state is projected once more and nothing is left
stale with no event to repair it.

Round trips. A round's reads that do not depend on each other run at once (the due events, the
drain lease, the incident switch), and its two fenced commits are each one write when nothing
changed since those reads: every guarded document is preconditioned on the version the guard was
checked against (:meth:`core.ports.Store.commit_unchanged`), which implies the guard still holds.
When one changed (a nudge marked the lease dirty, another drain moved an event), the commit falls
back to the guarded transaction, which decides as before. A round is then four or five sequential
Firestore round trips: the reads, the lease, the items (and graph assertions), the acknowledgement.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from core.domain import fence, ids, paths
from core.domain.documents import Lease, OutboxEvent
from core.domain.plan import (
    SCHEDULE_ACTION,
    OutboxAction,
    is_projectable,
    outbox_event,
    projected_context,
    projected_quote,
)
from core.domain.records import MemoryItem, Sensitivity
from core.errors import GenerationChanged, WritesBlocked
from core.ports import Embedder, KeywordIndex, Ports, ProjectionDoc, StoredDoc, VectorIndex, Write
from core.services import controls, graph, scheduling

log = logging.getLogger(__name__)

# A drain batch of 100 fills one Pinecone upsert request (its 100-vector batch) and one Typesense
# import, and its lease and acknowledgement writes stay well inside one Firestore commit.
BATCH = 100
SCAN = 100
COMMIT_LIMIT = 500
EVENT_LEASE = timedelta(seconds=300)
DRAIN_LEASE = timedelta(seconds=120)
MAX_ATTEMPTS = 5
BACKOFF_BASE_S = 30
BACKOFF_MAX_S = 1800


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


def backoff(attempts: int) -> timedelta:
    return timedelta(seconds=min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** max(0, attempts - 1)))


# ----------------------------------------------------------------------------------- user lease
def _lease_ref(uid: str) -> str:
    return paths.projection_lease(uid)


def _release(ctx: Ports, uid: str, holder: str, *, force: bool = False) -> bool:
    """Release the drain lease; True means a skipped nudge left a note: drain once more."""
    return ctx.store.release_lease(_lease_ref(uid), holder, DRAIN_LEASE, honour_dirty=not force)


Guard = Callable[[dict[str, Any] | None], bool]


def _held_by(holder: str) -> Guard:
    """The drain lease is still ``holder``'s (a holder id is unique to one take of the lease)."""
    def guard(data: dict[str, Any] | None) -> bool:
        return data is not None and Lease.from_store(data).holder == holder
    return guard


def _at(state: str | None, epoch: int) -> Guard:
    """The event is still in ``state`` at lease epoch ``epoch``: nobody re-leased, acknowledged or
    reset it since."""
    def guard(data: dict[str, Any] | None) -> bool:
        if data is None:
            return False
        event = OutboxEvent.from_store(data)
        return event.state == state and event.lease_epoch == epoch
    return guard


def _leased_at(epoch: int) -> Guard:
    return _at("leased", epoch)


def _as_read(event: OutboxEvent) -> Guard:
    return _at(event.state, event.lease_epoch)


# ------------------------------------------------------------------------------------------ drain
def due_events(ctx: Ports, uid: str, now: datetime, limit: int = SCAN) -> list[StoredDoc]:
    return ctx.store.query("outbox_due", {"state": ["pending", "leased"], "due_at": now}, parent=paths.user(uid),
                           limit=limit)


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
    if not ctx.store.take_lease(_lease_ref(uid), holder, DRAIN_LEASE, mark_dirty=True):
        report.skipped = "drain_in_progress"
        return report
    if ctx.store.read_fence(uid).generation != account.generation:
        ctx.store.delete(_lease_ref(uid))
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
            again = _release(ctx, uid, holder, force=rounds >= max_rounds or report.skipped is not None)
    except BaseException:
        _release(ctx, uid, holder, force=True)
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
    """Lease, project and acknowledge one batch; the flag says whether more may be due. With
    ``holder`` (the drain lease's), every outbox write is fenced by it and the leasing commit renews
    it (``report.skipped`` is ``lease_lost`` when it is no longer this drain's or a write was
    refused). ``check_switch``: first see whether the projection switch was turned on
    (``report.skipped`` is ``projection_disabled``, nothing leased)."""
    report = DrainReport()
    now = ctx.now()
    report.skipped, candidates, lease = _round_reads(ctx, uid, holder, check_switch, now)
    if report.skipped is not None:
        return report, False
    chosen = _choose(candidates, now)
    # Fewer due events than the scan asked for, all taken: nothing else was due at ``now`` (a later
    # commit's nudge marks the drain lease dirty, which brings the drain round again).
    more = len(candidates) == SCAN or len(chosen) == BATCH
    if not chosen:
        return report, False
    leased, versions, repaired, chosen = _lease_events(ctx, uid, chosen, lease, holder, now)
    if not leased:
        # The drain lease moved on, or another drain leased one of these events since they were
        # read: nothing was leased and this round ends (a drain that lost its lease stops).
        if holder is not None and not _held_by(holder)(ctx.store.get(_lease_ref(uid))):
            report.skipped = "lease_lost"
        return report, True
    report.leased, report.repaired = len(chosen), repaired
    _project_and_acknowledge(ctx, uid, chosen, versions, generation, holder, now, report)
    return report, more


def _round_reads(ctx: Ports, uid: str, holder: str | None, check_switch: bool, now: datetime
                 ) -> tuple[str | None, list[StoredDoc], StoredDoc | None]:
    """Read at once: the due events, the drain lease (with its version) and the incident switch.
    Returns (why the round stops before leasing, or None; the due events; the drain lease)."""
    lease_read = _ROUND_READS.submit(ctx.store.get_versioned, _lease_ref(uid)) if holder is not None else None
    switch_read = _ROUND_READS.submit(controls.is_on, ctx, controls.PROJECTION) if check_switch else None
    candidates = due_events(ctx, uid, now)
    if switch_read is not None and switch_read.result():
        return "projection_disabled", candidates, None
    lease = lease_read.result() if lease_read is not None else None
    if holder is not None and not _held_by(holder)(lease.data if lease is not None else None):
        return "lease_lost", candidates, lease  # another drain took over: it drains what is left
    return None, candidates, lease


def _project_and_acknowledge(ctx: Ports, uid: str, chosen: Chosen, versions: dict[str, Any] | None,
                             generation: int | None, holder: str | None, now: datetime,
                             report: DrainReport) -> None:
    """Project the leased events and acknowledge them with the graph writes; a provider failure
    acknowledges nothing (each event backs off, or goes dead), a refused acknowledgement requeues
    them (``report.skipped`` is ``lease_lost``)."""
    try:
        writes = project(ctx, uid, [event for _, event in chosen], report, generation)
    except Exception as exc:  # noqa: BLE001 - any provider failure: nothing is acknowledged
        _record_failure(ctx, chosen, f"{type(exc).__name__}: {exc}"[:500], now, report)
        return
    epochs = {snap.path: event.lease_epoch for snap, event in chosen}
    if not _acknowledge(ctx, uid, writes, epochs, holder, versions):
        report.skipped = "lease_lost"
        _requeue(ctx, uid, chosen, generation, holder or "")
        return
    report.acknowledged = len(chosen)


Chosen = list[tuple[StoredDoc, OutboxEvent]]


def _choose(candidates: list[StoredDoc], now: datetime) -> Chosen:
    """The first ``BATCH`` due events that are not under someone else's live lease."""
    chosen = []
    for snap in candidates:
        event = OutboxEvent.from_store(snap.data)
        if event.state == "leased" and event.lease_live(now):
            continue  # someone else's live lease
        chosen.append((snap, event))
        if len(chosen) == BATCH:
            break
    return chosen


def _lease_events(ctx: Ports, uid: str, chosen: Chosen, lease: StoredDoc | None, holder: str | None,
                  now: datetime) -> tuple[bool, dict[str, Any] | None, int, Chosen]:
    """Lease the chosen events (each while it is as read) and renew the drain lease, in one commit:
    (leased, the versions a one-write commit gave or None, how many expired leases were reclaimed,
    the events as leased: ``lease_epoch`` and ``attempts`` counted up)."""
    leasing = []
    guards: dict[str, Guard] = {} if holder is None else {_lease_ref(uid): _held_by(holder)}
    repaired = 0
    taken: Chosen = []
    for snap, event in chosen:
        guards[snap.path] = _as_read(event)
        if event.state == "leased":
            repaired += 1  # reclaimed an expired lease: re-project current state below
        event = event.but(lease_epoch=event.lease_epoch + 1, attempts=event.attempts + 1)
        taken.append((snap, event))
        leasing.append(Write("update", snap.path, {"state": "leased", "lease_expires_at": now + EVENT_LEASE,
                                                   "lease_epoch": event.lease_epoch, "attempts": event.attempts}))
    versions = None
    if holder is not None and lease is not None:
        leasing.append(Write("update", _lease_ref(uid), {"expires_at": now + DRAIN_LEASE}))  # the renewal
        # Unchanged since read (the guards held on exactly these versions): one write, no transaction.
        versions = ctx.store.commit_unchanged(
            {_lease_ref(uid): lease.version, **{snap.path: snap.version for snap, _ in chosen}}, leasing)
    return versions is not None or ctx.store.commit_if(guards, leasing), versions, repaired, taken


def _record_failure(ctx: Ports, chosen: Chosen, message: str, now: datetime,
                    report: DrainReport) -> None:
    """A provider failed: nothing is acknowledged; each event goes back to pending after its backoff,
    or dead once it used ``MAX_ATTEMPTS``."""
    report.errors.append(message)
    # The providers that did confirm this attempt (the other one failed): a deletion receipt
    # shows those stores confirmed while the event waits for the rest.
    confirmed = {"confirmed_providers": sorted(report.partial)}
    outcome: dict[str, tuple[str, dict[str, Any], int]] = {}
    for snap, event in chosen:
        if event.attempts >= MAX_ATTEMPTS:
            outcome[snap.path] = ("dead", {"state": "dead", "last_error": message, "lease_expires_at": None,
                                           "dead_at": now, **confirmed}, event.lease_epoch)
        else:
            outcome[snap.path] = ("retried", {"state": "pending", "last_error": message, "lease_expires_at": None,
                                              "due_at": now + backoff(event.attempts), **confirmed},
                                  event.lease_epoch)
    # Each event only while it is still at this drain's epoch: all in one commit, or (one was
    # taken over meanwhile) one by one.
    if ctx.store.commit_if({path: _leased_at(epoch) for path, (_, _, epoch) in outcome.items()},
                           [Write("update", path, update) for path, (_, update, _) in outcome.items()]):
        done = list(outcome)
    else:
        done = [path for path, (_, update, epoch) in outcome.items()
                if ctx.store.update_if(path, _leased_at(epoch), update)]
    for path in done:
        kind = outcome[path][0]
        setattr(report, kind, getattr(report, kind) + 1)


def _requeue(ctx: Ports, uid: str, chosen: Chosen, generation: int | None,
             holder: str) -> None:
    """After a refused acknowledgement: this drain lost its lease while it wrote the providers, so
    what it wrote may be older than what a newer drain wrote (and acknowledged). Its events still at
    its epoch go back to pending, due now; for each memory whose event another drain already took,
    a fresh ``repair`` event is written (fenced by the account generation: a wiped account gets
    none). Then a drain is nudged, which projects the current state again."""
    now = ctx.now()
    orphaned: list[str] = []
    for snap, event in chosen:
        reset = ctx.store.update_if(snap.path, _leased_at(event.lease_epoch), {
            "state": "pending", "lease_expires_at": None, "due_at": now,
            "last_error": "acknowledgement refused: the drain lease was lost"})
        if not reset and event.memory_id:
            orphaned.append(event.memory_id)
    writes = []
    for memory_id in sorted(set(orphaned)):
        event_id, doc = outbox_event(uid, f"repair:{holder}", 0, OutboxAction(memory_id, "repair"), None,
                                     "drain_lease_lost", now)
        writes.append((paths.outbox_event(uid, event_id), doc, False))
    if writes:
        try:
            with fence.expect(uid, ctx.store.read_fence(uid).generation if generation is None else generation):
                ctx.store.fenced_write(uid, writes)
        except (GenerationChanged, WritesBlocked):
            log.info("repair events for %s dropped: the account is being deleted", uid)
            return
    _nudge(ctx, uid)


def _nudge(ctx: Ports, uid: str) -> None:
    try:
        ctx.nudge_projection(uid, 0)
    except Exception:  # noqa: BLE001 - the scheduled sweep recovers a lost nudge
        log.warning("projection nudge for %s failed; the sweep will pick it up", uid, exc_info=True)


def _acknowledge(ctx: Ports, uid: str, writes: graph.Writes, epochs: dict[str, int],
                 holder: str | None = None, versions: dict[str, Any] | None = None) -> bool:
    """Commit the graph writes and delete the acknowledged events: one commit unless over the limit.
    False, and the rest left unwritten, when a commit's fence was refused: with ``holder``, every
    commit requires that the drain lease is still its; the events' deletes require each event still
    at the epoch this drain leased it with (``epochs``: event path → epoch).

    Every provider has confirmed by now. When everything fits one commit the graph and the
    acknowledgement land together; otherwise the graph chunks go first, so an event is never gone
    before the graph write it carried.

    ``versions`` (what the leasing commit wrote, by path): when everything fits one commit, it is
    first tried preconditioned on those versions — the lease and every event still exactly as this
    drain left them implies both guards — renewing the lease with it; anything changed since (a
    nudge's note on the lease included) falls back to the guarded transaction.
    """
    ops = [*writes.ops, *(Write("delete", path) for path in epochs)]  # acknowledged: every provider confirmed
    if holder is not None and versions is not None and len(ops) < COMMIT_LIMIT:
        lease_path = _lease_ref(uid)
        expected = {lease_path: versions.get(lease_path), **{path: versions.get(path) for path in epochs}}
        renewal = Write("update", lease_path, {"expires_at": ctx.now() + DRAIN_LEASE})
        if ctx.store.commit_unchanged(expected, [*ops, renewal]) is not None:
            return True
    for start in range(0, len(ops), COMMIT_LIMIT):
        chunk = ops[start:start + COMMIT_LIMIT]
        guards: dict[str, Guard] = {} if holder is None else {_lease_ref(uid): _held_by(holder)}
        guards.update({w.path: _leased_at(epochs[w.path]) for w in chunk if w.op == "delete" and w.path in epochs})
        if not ctx.store.commit_if(guards, chunk):
            return False
    return True


def project(ctx: Ports, uid: str, events: list[OutboxEvent], report: DrainReport,
            generation: int | None = None) -> graph.Writes:
    """Make Typesense and Pinecone match the current state of the events' memories; return the graph
    writes that do the same for the knowledge graph (committed with the acknowledgement). Delete-only
    while the account is fenced or when its generation is no longer ``generation`` (the drain's)."""
    memory_ids = sorted({e.memory_id for e in events if e.memory_id})
    purged = purged_providers(events)
    schedule = [e for e in events if e.action == SCHEDULE_ACTION]
    state = _read_state(ctx, uid, memory_ids, generation, with_schedule=bool(schedule))
    fenced, items, assertions = state.fenced, state.items, state.assertions
    # Not a projection: the user's consolidation task (a failure retries the events). Its reads came
    # with the items; its enqueue runs beside the providers and its registry write rides in the
    # acknowledgement (after the enqueue, as before).
    scheduled = (_PROVIDERS.submit(scheduling.enqueue_for, ctx, uid, schedule, state.registry,
                                   state.consolidation_disabled)
                 if schedule and not fenced else None)
    if "graph" in purged:
        graph.purge(ctx, uid)  # before the plan reads the edges: the plan then only rewrites facts
    upserts, deletes = _projection(uid, memory_ids, items, fenced, ctx.sensitivity)
    keyword, vector, embedder = ctx.keyword_index, ctx.vector_index, ctx.embedder  # built here, not in a worker
    # The two providers are independent: their round trips overlap, and the drain waits for both.
    pending = [_PROVIDERS.submit(_sync_keyword, keyword, uid, "typesense" in purged, deletes, upserts),
               _PROVIDERS.submit(_sync_vector, vector, embedder, uid, "vector" in purged, deletes, upserts)]
    writes, plan_failure = graph.Writes(), None
    try:
        if memory_ids:
            writes = graph.plan(ctx, uid, memory_ids, items, assertions, fenced)
    except Exception as exc:  # noqa: BLE001 - raised once the providers are done, never mid-flight
        plan_failure = exc
    registry_write = _finished(uid, scheduled, pending, plan_failure, report)
    report.upserts += len(upserts)
    report.deletes += len(deletes)
    if registry_write is not None:
        writes.ops.insert(0, registry_write)
    return writes


def _finished(uid: str, scheduled: Future[Any] | None, pending: list[Future[int]], plan_failure: Exception | None,
              report: DrainReport) -> Write | None:
    """Wait for the schedule's enqueue and both providers, counting the providers' calls and which
    confirmed; once all have finished, raise the first failure (the schedule's, then a provider's,
    then the graph plan's). Returns the registry write of the schedule, if any."""
    failures: list[Exception] = []
    registry_write = None
    if scheduled is not None:  # reported first, as when it ran before the providers
        try:
            update, _ = scheduled.result()
            registry_write = Write("set", scheduling.registry_path(uid), update, True)
        except Exception as exc:  # noqa: BLE001 - re-raised below once the providers have finished
            failures.append(exc)
    for name, future in zip(("typesense", "vector"), pending, strict=True):  # then a provider failure
        try:
            report.provider_calls += future.result()
            report.partial.append(name)
        except Exception as exc:  # noqa: BLE001 - re-raised below once both providers have finished
            failures.append(exc)
    if plan_failure is not None:
        failures.append(plan_failure)
    if failures:
        raise failures[0]
    return registry_write


def _projection(uid: str, memory_ids: list[str], items: dict[str, MemoryItem], fenced: bool, sensitivity: Sensitivity,
                ) -> tuple[list[ProjectionDoc], list[str]]:
    """(the rows to upsert, the memory ids to delete): a memory is upserted when it exists, is
    projectable and the account is not fenced; deleted otherwise (restricted, hidden, tombstoned,
    fenced, archived)."""
    upserts: list[ProjectionDoc] = []
    deletes: list[str] = []
    for memory_id in memory_ids:
        item = items.get(memory_id)
        if item is not None and not fenced and is_projectable(item):
            upserts.append(ProjectionDoc(
                provider_id=ids.provider_id(uid, memory_id), uid=uid, memory_id=memory_id, layer=item.layer,
                revision=item.revision, content=item.content, category=item.category,
                updated_at=item.updated_at.timestamp() if item.updated_at else 0.0, quote=projected_quote(item, sensitivity=sensitivity),
                context=projected_context(item), capture_device_ids=tuple(item.capture_device_ids)))
        else:
            deletes.append(memory_id)
    return upserts, deletes


PURGEABLE = ("typesense", "vector", "graph")


def purged_providers(events: list[OutboxEvent]) -> set[str]:
    """What the batch's ``purge_user`` events purge: the named ``provider`` (a rebuild), or both
    indexes when none is named (an account wipe, the doctor's repair of a uid with no items)."""
    purged: set[str] = set()
    for event in events:
        if event.action == "purge_user":
            provider = event.provider
            purged.update([provider] if provider in PURGEABLE else ["typesense", "vector"])
    return purged


# Shared by the drains of one process; its threads start on first use.
_PROVIDERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="projection")
_ROUND_READS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="projection-reads")


def _remove(index: KeywordIndex | VectorIndex, uid: str, purge: bool, deletes: list[str]) -> int:
    """What every provider does first: the user purge, then the deletes; returns calls."""
    calls = 0
    if purge:
        index.purge_user(uid)
        calls += 1
    if deletes:
        index.delete(uid, deletes)
        calls += 1
    return calls


def _sync_keyword(index: KeywordIndex, uid: str, purge: bool, deletes: list[str], upserts: list[ProjectionDoc]) -> int:
    """Typesense: purge, deletes, then upserts (each upsert clears legacy rows first); returns calls."""
    calls = _remove(index, uid, purge, deletes)
    if upserts:
        index.upsert(upserts)
        calls += 1
    return calls


def vector_text(doc: ProjectionDoc) -> str:
    """What the vector index embeds for a memory: its content, then the whole text of the segments
    it quotes (:func:`core.domain.plan.projected_context`). On the LoCoMo development split this
    lifted hybrid recall@10 from 0.596 to 0.647 in an offline replay (docs/benchmarks.md)."""
    return f"{doc.content} {doc.context}" if doc.context else doc.content


def _sync_vector(index: VectorIndex, embedder: Embedder, uid: str, purge: bool, deletes: list[str],
                 upserts: list[ProjectionDoc]) -> int:
    """Pinecone: purge, deletes, then embeddings and upserts; returns calls (embedding counts as one)."""
    calls = _remove(index, uid, purge, deletes)
    if upserts:
        index_dim = getattr(index, "dimension", None)
        if isinstance(index_dim, int) and index_dim != embedder.dim:
            from core.errors import DimensionMismatch

            raise DimensionMismatch(f"the {embedder.name} embedder makes {embedder.dim}-dimensional vectors "
                                    f"but the vector index has dimension {index_dim}; set STRATA_EMBEDDING_DIM")
        index.upsert(upserts, embedder.embed([vector_text(d) for d in upserts]))
        calls += 2
    return calls


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


def _lease_live(event: dict[str, Any], now: datetime) -> bool:
    return OutboxEvent.from_store(event).lease_live(now)
