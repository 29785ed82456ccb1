"""Consolidation: every pending Short-term item settles through exactly one terminal route.

A scheduled fan-out finds users with pending items (nearest deadline first) and enqueues one Cloud
Task per user; the per-user pass selects a server-bounded, deterministically ordered set (overflow
stays eligible for the very next run), asks the router port for proposals in batches, *validates*
them (exactly one of promote | archive | review | reject per selected item, only known refs — the
router never supplies ids) and applies each batch in one transaction that re-checks every item is
still pending at the revision that was selected. Output that is incomplete, duplicated or addressed
to unknown items mutates nothing and records a retry; after three failed attempts an item settles as
``review``. A per-user lease keeps two passes from working at once; the revision fence keeps an item
from being routed twice even if a lease is lost.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any

from core.domain import endings, fence, ids, outbox, paths, planners, review_queue, slots
from core.domain.changes import Change
from core.domain.consolidation import Decision, settle_routes
from core.domain.documents import IncidentSwitches, ReviewRow
from core.domain.records import MemoryItem, expired, valid_since
from core.domain.routing import Neighbour, RouteCandidate, RouteProposal, changes_subject, fact_key
from core.errors import GenerationChanged, InvalidRouterOutput, StrataError, WritesBlocked
from core.ports import Ports, Router, StoredDoc, Write
from core.services import projection, scheduling

log = logging.getLogger(__name__)

BATCH = 20
MAX_BATCHES = 25
NEIGHBOURS = 8
MAX_ATTEMPTS = 3
LEASE_SECONDS = 600
LEASE = timedelta(seconds=LEASE_SECONDS)
ROUTES = ("promote", "archive", "review", "reject")

# A pass's independent requests (its first three queries; the lease's read and release beside the
# schedule's settling) run at once: in a deployment each sequential round trip costs a network
# round trip. Only leaf reads and writes run here, never work that submits more.
# bench pools --rtt-ms 8, sequential -> pooled: a pass of 24, 14 -> 10 round trips, p50 311 -> 271 ms.
_READS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="consolidation-reads")


@dataclass
class PassSummary:
    uid: str
    selected: int = 0
    routes: Counter = field(default_factory=Counter)
    retries: int = 0
    untouched: int = 0
    aged_out: int = 0
    reviews_expired: int = 0
    overflow: bool = False
    skipped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"uid": self.uid, "selected": self.selected, "routes": dict(self.routes), "retries": self.retries,
                "untouched": self.untouched, "aged_out": self.aged_out,
                "reviews_expired": self.reviews_expired, "overflow": self.overflow,
                "skipped": self.skipped}


# ----------------------------------------------------------------------------------------- fan-out
def users_with_pending(ctx: Ports, limit: int = 1000) -> list[str]:
    """Users with pending items found by one collection-group scan over items: the manual CLI's
    backfill for items that predate the schedule registry (the scheduled job never scans items)."""
    uids: dict[str, None] = {}
    for row in ctx.store.query("pending_route_items_all_users", {"pending_route": True}, limit=limit, keys_only=True):
        uids.setdefault(row.owner, None)
    return list(uids)


def fan_out(ctx: Ports) -> dict[str, Any]:
    """The scheduler job: the safety-net walk over users (:func:`scheduling.walk`)."""
    return scheduling.walk(ctx)


# ------------------------------------------------------------------------------------------- lease
def _lease_ref(uid: str) -> str:
    return paths.consolidation_lease(uid)


# -------------------------------------------------------------------------------------------- pass
def run_pass(ctx: Ports, uid: str, *, router: Router | None = None, max_selected: int | None = None,
             settle_outbox: bool = True) -> dict[str, Any]:
    """One user's pass; at most ``max_selected`` items (default: the ``consolidation_pass_limit``
    setting). Afterwards the user's schedule is settled: an overflow continues at once, a pass
    that left nothing clears the user's pending mark (:func:`scheduling.after_pass`). The user's due
    outbox work is drained before the pass reads items and its own events after it
    (``settle_outbox``; the benchmarks that time the pass and the drain apart turn it off)."""
    summary = PassSummary(uid)
    started = ctx.now()
    # The switches, the account generation and the lease in one lookup, before anything is written
    # (the lease is the first write, conditional on the lease as read here). The generation is read
    # again once the lease is held — in the lookup of the selected items' retry counts, or first
    # when the outbox is settled (the drain writes) — since a wipe that ran in between would
    # otherwise leave the lease document behind in the wiped account. Every apply of the pass then
    # requires that generation.
    lease = _lease_ref(uid)
    found = ctx.store.get_all_versioned([paths.CONTROLS_GLOBAL, paths.account_deletion(uid), lease])
    controls = found[paths.CONTROLS_GLOBAL]
    if controls is not None and IncidentSwitches.from_store(controls.data).consolidation_disabled:
        summary.skipped = "consolidation_disabled"
        return summary.as_dict()
    deletion = found[paths.account_deletion(uid)]
    account = fence.of(deletion.data if deletion is not None else None)
    if account.deleting:
        summary.skipped = "account_deleting"
        scheduling.after_pass(ctx, uid, started, False)  # a wipe leaves nothing to route
        return summary.as_dict()
    holder = uuid.uuid4().hex
    if not _take(ctx, lease, holder, found[lease] or StoredDoc.absent(lease)):
        summary.skipped = "lease_held"
        return summary.as_dict()
    limit = ctx.settings.consolidation_pass_limit if max_selected is None else max_selected
    moved = finished = False
    try:
        moved, finished = _leased_pass(ctx, uid, router, account, limit, summary, settle_outbox)
    except GenerationChanged:
        summary.skipped = "account_generation_changed"
    finally:
        if moved:
            ctx.store.write(Change("consolidation.lease_drop", [Write("delete", lease)]))
            summary.skipped = "account_generation_changed"
        elif finished and summary.skipped is None:
            _release_and_reschedule(ctx, uid, holder, started, summary.overflow)
        else:
            _release(ctx, lease, holder)
    return summary.as_dict()


def _take(ctx: Ports, lease: str, holder: str, seen: StoredDoc | None) -> bool:
    """Take the pass lease for ``holder`` (:func:`core.domain.outbox.take`), deciding first on the
    lease as ``seen`` when it was read with its version."""
    return ctx.store.swap(lease, lambda d: outbox.take(d, holder, ctx.now(), LEASE), seen=seen, exhausted=False)


def _release(ctx: Ports, lease: str, holder: str, seen: StoredDoc | None = None) -> bool:
    """Let ``holder``'s pass lease go (:func:`core.domain.outbox.release`)."""
    return ctx.store.swap(lease, lambda d: outbox.release(d, holder, ctx.now(), LEASE), seen=seen, exhausted=False)


def _leased_pass(ctx: Ports, uid: str, router: Router | None, account: fence.AccountFence, limit: int,
                 summary: PassSummary, settle_outbox: bool) -> tuple[bool, bool]:
    """The pass under its lease, every write requiring the account generation read before it, the
    outbox settled around it (``settle_outbox``). Returns (the generation moved, the pass finished)."""
    with fence.expect(uid, account.generation):
        if settle_outbox:
            if ctx.store.read_fence(uid) != account:
                return True, False
            projection.settle(ctx, uid)  # existing outbox work first: the pass reads projected state
        if not _pass(ctx, uid, router, account, limit, summary):
            return True, False
        if settle_outbox:
            projection.settle(ctx, uid)  # then the events of the pass's own commits
        return False, True


def _release_and_reschedule(ctx: Ports, uid: str, holder: str, started: Any, overflow: bool) -> None:
    """Release the lease and settle the user's schedule (:func:`scheduling.after_pass`), which touch
    different documents: the lease is read beside the schedule's reads, and released beside its
    write."""
    lease = _lease_ref(uid)
    read = _READS.submit(ctx.store.get_all_versioned, [lease])
    released: list[Future[bool]] = []

    def release() -> None:
        if not released:
            released.append(_READS.submit(_release, ctx, lease, holder,
                                          read.result()[lease] or StoredDoc.absent(lease)))

    try:
        scheduling.after_pass(ctx, uid, started, overflow, alongside=release)
    finally:
        release()  # (once: after_pass calls it before its write; here if it raised first)
        released[0].result()


@dataclass
class _PassReads:
    """The reads a pass starts with, sent at once: the pending items (one more than it may take,
    to tell an overflow), the Long-term neighbours, and the reviews past their deadline (their
    expiry re-reads every row and item in its own transaction, so rows read before the routing
    are safe to use after it)."""

    pending: Future[list[MemoryItem]]
    long_term: Future[list[MemoryItem]]
    reviews: Future[list[ReviewRow]]

    @classmethod
    def start(cls, ctx: Ports, uid: str, limit: int) -> _PassReads:
        long_term = _READS.submit(_long_term, ctx, uid)
        reviews = _READS.submit(_expiring_reviews, ctx, uid, 100)
        pending: Future[list[MemoryItem]] = Future()
        try:  # the calling thread sends the third while the pool sends those two
            pending.set_result(select_pending(ctx, uid, limit + 1))
        except Exception as exc:  # noqa: BLE001 - kept for whoever asks for it, as the pool would
            pending.set_exception(exc)
        return cls(pending, long_term, reviews)

    def settle(self) -> None:
        """Wait for every read (the pass was dropped: nothing is left running behind it)."""
        reads: list[Future[Any]] = [self.pending, self.long_term, self.reviews]
        wait(reads)


def _pass(ctx: Ports, uid: str, router: Router | None, account: fence.AccountFence, max_selected: int,
          summary: PassSummary) -> bool:
    """Route what is pending; False, routing nothing, when the account's generation has moved
    since ``account`` was read (re-read with the retry counts, before the pass's first write)."""
    reads = _PassReads.start(ctx, uid, max_selected)
    try:
        selected = reads.pending.result()
    except Exception:
        reads.settle()
        raise
    summary.overflow = len(selected) > max_selected
    selected = selected[:max_selected]
    summary.selected = len(selected)
    attempts, current = _attempts(ctx, uid, [i.id for i in selected])
    if current != account:
        reads.settle()
        return False
    neighbours = reads.long_term.result()
    # Fact key → the Long-term memory that states it: the ones already there (so a copy the router
    # did not recognise as a duplicate still merges), then those this pass settles.
    survivors: dict[str, str] = {}
    for memory in sorted(neighbours, key=lambda m: m.id):
        survivors.setdefault(_fact(memory), memory.id)
    for start in range(0, len(selected), BATCH):
        route_batch(ctx, uid, selected[start:start + BATCH], neighbours, attempts, router or ctx.router, summary,
                    survivors)
    summary.aged_out = age_out(ctx, uid)
    summary.reviews_expired = expire_reviews(ctx, uid, rows=reads.reviews.result())
    return True


def record_pass(ctx: Ports, uid: str, summary: dict[str, Any], trigger: dict[str, Any],
                generation: int | None = None) -> None:
    """Keep the last completed pass and what triggered it (``memory_state/last_consolidation``), so
    operators and tests can tell a scheduled (Cloud Tasks) pass from a manual one. Fenced like the
    pass: a wipe since the pass started (``generation``, read by the caller first) drops it."""
    record = {**summary, "trigger": trigger, "finished_at": ctx.now()}  # the shape of PassSummary.as_dict
    ref = paths.last_consolidation(uid)
    try:
        with fence.expect(uid, ctx.store.read_fence(uid).generation if generation is None else generation):
            ctx.store.write(Change("consolidation.record_pass", [Write("set", ref, record)], fenced=uid))
    except (GenerationChanged, WritesBlocked):
        log.info("consolidation record for %s dropped: the account was deleted", uid)


def select_pending(ctx: Ports, uid: str, limit: int) -> list[MemoryItem]:
    """Deterministic order: nearest adjudication deadline first, then id."""
    rows = ctx.store.query("pending_route_items", {"pending_route": True}, parent=paths.user(uid), limit=limit)
    return [MemoryItem.from_store(row.data) for row in rows]


def _long_term(ctx: Ports, uid: str, limit: int = 500) -> list[MemoryItem]:
    rows = ctx.store.query("items_by_read_class_and_layer", {"read_class": ["default"], "layer": "long_term"},
                           parent=paths.user(uid), limit=limit)
    return [MemoryItem.from_store(row.data) for row in rows]


def _attempts(ctx: Ports, uid: str, memory_ids: list[str]) -> tuple[dict[str, int], fence.AccountFence]:
    """The retry counts of ``memory_ids``, and the account fence read in the same lookup."""
    refs = [paths.doc(uid, paths.CONSOLIDATION_ATTEMPTS, mid) for mid in memory_ids]
    found = ctx.store.get_all([paths.account_deletion(uid), *refs])
    counts = {paths.doc_id(p): int(d.get("attempts", 0)) for p in refs if (d := found[p]) is not None}
    return counts, fence.of(found[paths.account_deletion(uid)])


def _record_retry(ctx: Ports, uid: str, items: list[MemoryItem], attempts: dict[str, int], reason: str) -> None:
    writes = []
    for item in items:
        attempts[item.id] = attempts.get(item.id, 0) + 1
        writes.append(Write("set", paths.doc(uid, paths.CONSOLIDATION_ATTEMPTS, item.id),
                            {"attempts": attempts[item.id], "revision": item.revision, "last_error": reason[:500],
                             "updated_at": ctx.now()}))
    # fenced: a pass of a wiped account records nothing
    ctx.store.write(Change("consolidation.retry_count", writes, fenced=uid))


class _Pool:
    """A pass's Long-term memories, indexed by content word once, so that a candidate's nearest are
    scored among the memories that share a word with it (the only ones with a similarity above
    zero), not among all of them. The choice is the same as scoring every memory."""

    def __init__(self, pool: list[MemoryItem], ctx: Ports) -> None:
        content_words, self.ctx = ctx.content_words, ctx

        self.by_word: dict[str, list[MemoryItem]] = {}
        for other in pool:
            for word in content_words(other.content):
                self.by_word.setdefault(word, []).append(other)

    def nearest(self, item: MemoryItem) -> list[MemoryItem]:
        content_words, similarity = self.ctx.content_words, self.ctx.similarity

        sharing = {other.id: other for word in content_words(item.content) for other in self.by_word.get(word, ())
                   if other.id != item.id}
        scored = sorted(((similarity(item.content, other.content), other.id, other) for other in sharing.values()),
                        key=lambda t: (-t[0], t[1]))
        return [other for score, _, other in scored[:NEIGHBOURS] if score > 0]


def route_batch(ctx: Ports, uid: str, batch: list[MemoryItem], long_term: list[MemoryItem],
                attempts: dict[str, int], router: Router, summary: PassSummary,
                survivors: dict[str, str] | None = None) -> None:
    now = ctx.now()
    forced = [i for i in batch if attempts.get(i.id, 0) >= MAX_ATTEMPTS]
    asked = [i for i in batch if attempts.get(i.id, 0) < MAX_ATTEMPTS]
    decisions: dict[str, Decision] = {
        i.id: ("review", [], None, "router failed three times") for i in forced}
    neighbour_refs: dict[str, str] = {}
    ended_by: dict[str, str] = {}
    if asked:
        mates = slot_mates(ctx, uid, asked)
        candidates, item_refs, neighbour_refs = _candidates(asked, long_term, batch, now, mates, ctx=ctx)
        try:
            proposals = router.route(candidates)
            valid = validate(proposals, item_refs, neighbour_refs, candidates)
            _judge_all(valid, asked, long_term, mates, decisions, ended_by)
        except StrataError as exc:
            summary.retries += len(asked)
            _record_retry(ctx, uid, asked, attempts, f"{exc.code}: {exc.message}")
            if not forced:
                return
        except Exception as exc:  # noqa: BLE001 - a router bug must not crash the pass
            summary.retries += len(asked)
            _record_retry(ctx, uid, asked, attempts, f"router error: {exc}")
            if not forced:
                return
    apply_routes(ctx, uid, {i.id: i.revision for i in batch if i.id in decisions}, decisions, summary,
                 planner=f"consolidation/{getattr(router, 'router_id', 'router')}@{getattr(router, 'router_version', '1')}",
                 survivors=survivors, facts={i.id: _fact(i) for i in batch}, ended_by=ended_by)


def slot_mates(ctx: Ports, uid: str, items: list[MemoryItem], limit: int = 200) -> dict[str, list[MemoryItem]]:
    """Every current Long-term fact that shares a candidate's subject and attribute, by slot key:
    one query per key in the batch, whatever the account's size (the router sees them all)."""
    out: dict[str, list[MemoryItem]] = {}
    for key in sorted({i.slot_key for i in items if i.slot_key}):
        rows = ctx.store.query("items_by_slot_key", {"slot_key": key}, parent=paths.user(uid), limit=limit)
        out[key] = [m for m in (MemoryItem.from_store(row.data) for row in rows) if endings.current(m)]
    return out


def _judge_all(valid: dict[str, Decision], asked: list[MemoryItem], long_term: list[MemoryItem],
               mates: dict[str, list[MemoryItem]], decisions: dict[str, Decision], ended_by: dict[str, str]) -> None:
    """:func:`judged` over every validated decision of a batch, into ``decisions`` and ``ended_by``."""
    shown = {m.id: m for m in [*long_term, *(x for group in mates.values() for x in group)]}
    by_id = {i.id: i for i in asked}
    for memory_id, decision in valid.items():
        item = by_id[memory_id]
        decisions[memory_id], later = judged(decision, item, shown, mates.get(item.slot_key or "", []))
        if later is not None:
            ended_by[memory_id] = later


def judged(decision: Decision, item: MemoryItem, shown: dict[str, MemoryItem], mates: list[MemoryItem]
           ) -> tuple[Decision, str | None]:
    """The server's ending rule (:mod:`core.domain.slots`) over one validated decision, whichever
    router made it: a proposed ending the rule allows stands; one it refuses ends nothing (the owner
    is asked, naming the fact, when it is about the same subject and not plainly about another
    attribute; otherwise the item is promoted beside it); a fact the owner kept beside the item is never ended. A promoted item said before a
    current fact it conflicts with enters as history that fact ended (the second value)."""
    route, supersedes, duplicate_of, reason = decision
    mine = endings.statement(item)
    allowed, ask = _proposed_endings(item, mine, supersedes, shown)
    if route != "promote":
        return (route, allowed + ask if route == "review" else [], duplicate_of, reason), None
    if ask:
        return ("review", ask, None, "a later statement may end this fact; the owner decides"), None
    return (route, allowed, duplicate_of, reason), _ended_by(item, mine, mates)


def _proposed_endings(item: MemoryItem, mine: endings.Statement, supersedes: list[str], shown: dict[str, MemoryItem]
                      ) -> tuple[list[str], list[str]]:
    """The proposed endings the rule allows, and those it cannot tell about the same subject (and
    not plainly another attribute), which the owner is asked about; a fact kept beside the item is
    neither."""
    allowed, ask = [], []
    for memory_id in supersedes:
        old = shown.get(memory_id)
        if old is None or endings.kept_apart(item, old):
            continue
        theirs = endings.statement(old)
        verdict = slots.relation(mine, theirs)
        if verdict == "ends":
            allowed.append(memory_id)
        elif verdict is None and mine.subject is not None and mine.subject == theirs.subject and (
                mine.slot is None or theirs.slot is None or mine.slot.attribute == theirs.slot.attribute):
            ask.append(memory_id)  # the rule cannot tell (a slot unread, or one attribute's values agree): the owner can
    return allowed, ask


def _ended_by(item: MemoryItem, mine: endings.Statement, mates: list[MemoryItem]) -> str | None:
    """The earliest current fact the promoted item was said before and conflicts with: it enters as
    history that fact ended."""
    later = sorted((m for m in mates if m.id != item.id and not endings.kept_apart(item, m)
                    and slots.relation(mine, endings.statement(m)) == "ended_by"),
                   key=lambda m: (endings.statement(m).said or item.created_at, m.id))
    return later[0].id if later else None


def _candidates(items: list[MemoryItem], long_term: list[MemoryItem], batch: list[MemoryItem], now: Any,
                mates: dict[str, list[MemoryItem]] | None = None, *, ctx: Ports):
    item_refs: dict[str, str] = {}
    neighbour_refs: dict[str, str] = {}
    candidates: list[RouteCandidate] = []
    pool = _Pool(long_term, ctx)
    for index, item in enumerate(items):
        ref = f"i{index}"
        item_refs[ref] = item.id
        near = pool.nearest(item)
        near += [m for m in (mates or {}).get(item.slot_key or "", []) if m.id != item.id and m not in near]
        neighbours = [_neighbour(other, neighbour_refs) for other in near]
        sources = tuple(sorted({e.source_id for e in item.evidence if e.status == "active"}))
        corroborating = _corroborating(item, batch)
        candidates.append(RouteCandidate(
            ref=ref, content=item.content, subject=item.subject_attribution, subject_label=item.subject_label,
            category=item.category, kind=item.kind, source_ids=sources,
            independent_sources=len(set(sources) | corroborating), manually_added=item.manually_added,
            expired=expired(item, now), restricted=item.restricted, neighbours=tuple(neighbours),
            slot=item.slot, said=valid_since(item),
        ))
    return candidates, item_refs, neighbour_refs


def _neighbour(other: MemoryItem, neighbour_refs: dict[str, str]) -> Neighbour:
    """``other`` as a neighbour shown to the router, under its ref (a new one the first time it is
    shown, recorded in ``neighbour_refs``)."""
    nref = next((r for r, mid in neighbour_refs.items() if mid == other.id), None)
    if nref is None:
        nref = f"n{len(neighbour_refs)}"
        neighbour_refs[nref] = other.id
    return Neighbour(ref=nref, content=other.content, layer=other.layer, subject_label=other.subject_label,
                     restricted=other.restricted, subject=other.subject_attribution, slot=other.slot,
                     said=valid_since(other))


def _corroborating(item: MemoryItem, batch: list[MemoryItem]) -> set[str]:
    """The active sources of the batch's other items with the same words (case aside)."""
    return {e.source_id for other in batch if other.id != item.id
            and ids.content_hash(other.content.casefold()) == ids.content_hash(item.content.casefold())
            for e in other.evidence if e.status == "active"}


def validate(proposals: Any, item_refs: dict[str, str], neighbour_refs: dict[str, str],
             candidates: list[RouteCandidate]) -> dict[str, Decision]:
    """Server-side validation of router output: one known route per selected item, nothing else."""
    if not isinstance(proposals, list):
        raise InvalidRouterOutput("router output is not a list")
    seen: dict[str, RouteProposal] = {}
    allowed_neighbours = {c.ref: {n.ref for n in c.neighbours} for c in candidates}
    for proposal in proposals:
        _check_proposal(proposal, item_refs, seen, allowed_neighbours)
        seen[proposal.item_ref] = proposal
    missing = set(item_refs) - set(seen)
    if missing:
        raise InvalidRouterOutput(f"router left {len(missing)} item(s) without a route")
    decisions: dict[str, Decision] = {}
    by_ref = {c.ref: c for c in candidates}
    for ref, p in seen.items():
        decisions[item_refs[ref]] = _decision(p, by_ref.get(ref), neighbour_refs)
    return decisions


def _check_proposal(proposal: Any, item_refs: dict[str, str], seen: dict[str, RouteProposal],
                    allowed_neighbours: dict[str, set[str]]) -> None:
    """One router proposal is a known route for an item it was shown, once, linking only the
    neighbours it was shown; else the whole output is refused."""
    if not isinstance(proposal, RouteProposal):
        raise InvalidRouterOutput("router output has an entry of the wrong type")
    if not _well_typed(proposal):
        raise InvalidRouterOutput("router output has a field of the wrong type")
    if proposal.item_ref not in item_refs:
        raise InvalidRouterOutput(f"router addressed an unknown item {proposal.item_ref!r}")
    if proposal.item_ref in seen:
        raise InvalidRouterOutput(f"router routed {proposal.item_ref!r} twice")
    if proposal.route not in ROUTES:
        raise InvalidRouterOutput(f"unknown route {proposal.route!r}")
    refs = list(proposal.supersedes) + ([proposal.duplicate_of] if proposal.duplicate_of else [])
    if any(r not in allowed_neighbours[proposal.item_ref] for r in refs):
        raise InvalidRouterOutput("router referenced a neighbour it was not shown")
    if len(set(proposal.supersedes)) != len(proposal.supersedes):
        raise InvalidRouterOutput("duplicate supersedes entries")
    if proposal.duplicate_of and proposal.duplicate_of in proposal.supersedes:
        raise InvalidRouterOutput("an item cannot both duplicate and supersede one neighbour")


def _decision(p: RouteProposal, candidate: RouteCandidate | None,
              neighbour_refs: dict[str, str]) -> Decision:
    """A valid proposal as a decision on memory ids (route, supersedes, duplicate of, reason)."""
    shown = {n.ref: n for n in candidate.neighbours} if candidate is not None else {}
    linked = [shown[r] for r in [*p.supersedes, *([p.duplicate_of] if p.duplicate_of else [])] if r in shown]
    if candidate is not None and p.route in ("promote", "archive") and any(
            changes_subject(candidate.subject, candidate.subject_label, n.subject, n.subject_label)
            for n in linked):
        # Promotion conserves subject identity: a merge into, or a supersession of, a memory
        # about someone else is refused; the user decides instead.
        return ("review", [], None, "the router linked a memory about another subject")
    return (p.route, [neighbour_refs[r] for r in p.supersedes],
            neighbour_refs[p.duplicate_of] if p.duplicate_of else None, p.reason[:300])


def _well_typed(proposal: RouteProposal) -> bool:
    """A router is not bound by the dataclass annotations: check the field types before using them."""
    return (isinstance(proposal.item_ref, str) and isinstance(proposal.route, str)
            and isinstance(proposal.reason, str)
            and (proposal.duplicate_of is None or isinstance(proposal.duplicate_of, str))
            and isinstance(proposal.supersedes, tuple | list)
            and all(isinstance(ref, str) for ref in proposal.supersedes))


def _fact(item: MemoryItem) -> str:
    return fact_key(item.content, item.subject_attribution, item.subject_label)


def apply_routes(ctx: Ports, uid: str, revisions: dict[str, int],
                 decisions: dict[str, Decision], summary: PassSummary,
                 planner: str, *, survivors: dict[str, str] | None = None,
                 facts: dict[str, str] | None = None, ended_by: dict[str, str] | None = None) -> None:
    """Apply one batch's validated decisions (:func:`core.domain.consolidation.settle_routes`). Items
    that state the same fact (``facts``: memory id → fact key) end as one Long-term memory: the one
    already stating it (``survivors``: fact key → memory id, Long-term before the pass or settled by
    an earlier batch; updated here), else the first one promoted here, survives, and every other
    promoted or archived copy merges into it exactly as a duplicate the router recognised does — the
    survivor absorbs its evidence and is re-admitted, the copy becomes an alias in its lineage."""
    survivors = survivors if survivors is not None else {}
    facts = facts or {}
    earlier = {key: survivors[key] for key in {facts.get(m) for m in revisions} if key in survivors}
    linked = {n for route, sup, dup, _ in decisions.values() for n in [*sup, *([dup] if dup else [])]}
    linked |= set((ended_by or {}).values())
    read_ids = set(revisions) | linked | set(earlier.values())
    result = ctx.store.apply(uid, "consolidation.route", {"revisions": revisions, "decisions": decisions},
                             partial(settle_routes, revisions=revisions, decisions=decisions, earlier=earlier,
                                     planner=planner, ended_by=ended_by or {}, sensitivity=ctx.sensitivity), item_ids=read_ids)
    if result.replayed:
        # The same decisions on the same revisions were already applied (by another pass or an
        # earlier delivery of this task): this pass routed nothing itself.
        summary.untouched += len(revisions)
        return
    survivors.update(result.notes.get("settled", {}))
    for route, count in result.summary.get("routes", {}).items():
        summary.routes[route] += count
    summary.untouched += int(result.summary.get("untouched", 0))


# ---------------------------------------------------------------------------------- review expiry
def _expiring_reviews(ctx: Ports, uid: str, limit: int) -> list[ReviewRow]:
    return [ReviewRow.from_store(row.data) for row in ctx.store.query(
        "reviews_expiring", {"status": "open", "expires_at": ctx.now()}, parent=paths.user(uid), limit=limit)]


def expire_reviews(ctx: Ports, uid: str, limit: int = 100, *, rows: list[ReviewRow] | None = None) -> int:
    """A review nobody answered within 72 h settles the item in Archive (a non-durable route never
    reaches Long-term); the entry is marked ``expired`` and keeps no text. Items that moved on are left
    alone: the entry must still be the item's (its review id), and the item still in review. The
    revision is not compared: a later revision re-issues the entry under a new id, so an item whose
    entry still names an older revision was stranded before re-issue existed, and expiry settles it.
    ``rows``: the expiring rows already read (the pass reads them beside its first queries)."""
    rows = _expiring_reviews(ctx, uid, limit) if rows is None else rows
    if not rows:
        return 0
    doc_paths = {r.review_id: review_queue.row_path(r.review_id) for r in rows if r.review_id}

    result = ctx.store.apply(uid, "consolidation.review_expiry", {"reviews": sorted(doc_paths)},
                             partial(planners.expire_reviews, rows=doc_paths),
                             item_ids=[r.memory_id for r in rows if r.memory_id], doc_paths=list(doc_paths.values()))
    return int(result.summary.get("expired", 0))


# ----------------------------------------------------------------------------------------- age-out
def age_out(ctx: Ports, uid: str) -> int:
    """Long-term items untouched for ``long_term_archive_after_days`` move to Archive (0 = never)."""
    days = ctx.settings.long_term_archive_after_days
    if days <= 0:
        return 0
    cutoff = ctx.now() - timedelta(days=days)
    old = [row.id for row in ctx.store.query("long_term_by_age",
                                             {"read_class": "default", "layer": "long_term", "updated_at": cutoff},
                                             parent=paths.user(uid), limit=100, keys_only=True)]
    if not old:
        return 0

    return len(ctx.store.apply(uid, "consolidation.age_out", {"ids": old, "cutoff": cutoff.isoformat()},
                               partial(planners.age_out, memory_ids=old), item_ids=old).changed_ids)
