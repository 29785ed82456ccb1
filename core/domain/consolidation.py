"""Consolidation's pure half: the plan that settles one batch of routed items
(:func:`settle_routes`), each through exactly one terminal route — promote (admitted to Long-term,
superseding the memories it replaces, kept as history), archive, review (an entry asks the user)
or reject (hidden). The service (:mod:`core.services.consolidation`) selects the items, asks the
router and validates its output; this module decides what the batch writes."""

from __future__ import annotations

from collections.abc import Mapping

from core.domain import endings, ids, paths, review_queue
from core.domain.admission import admit
from core.domain.plan import ApplyView, Plan
from core.domain.processing import processed
from core.domain.records import MemoryItem, Sensitivity
from core.domain.routing import fact_key, pass_survivors
from core.domain.states import Layer, ProcessingState, Status

Decision = tuple[str, list[str], str | None, str]  # route, supersedes, duplicate of, reason (memory ids)


def settle_routes(view: ApplyView, *, revisions: Mapping[str, int], decisions: Mapping[str, Decision],
                  earlier: Mapping[str, str], planner: str, ended_by: Mapping[str, str] | None = None,
                  sensitivity: Sensitivity) -> Plan:
    """Settle each item of ``revisions`` (memory id → the revision the decision was made on) by its
    decision; an item no longer pending at that revision is left alone (never routed twice), one
    still unprocessed is processed first (and rejected when it held a secret). Items that state the
    same fact end as one Long-term memory: the one already stating it (``earlier``: fact key →
    memory id, when still active in Long-term), else the first promoted here; every other promoted
    or archived copy merges into it as a recognised duplicate does. ``notes["settled"]``: fact key →
    the Long-term memory that states it, for each fact this batch promoted that ``earlier`` did not
    hold (the pass's later batches merge into it). ``ended_by``: memory id → the current fact a
    promoted item was said before (it enters as history that fact ended)."""
    out = Plan(summary={"routes": {}, "untouched": 0})
    changed: dict[str, MemoryItem] = {}
    routable = _routable(view, revisions, changed, out, sensitivity)
    # Promotions first, so a copy that is archived can still merge into this pass's survivor.
    routable.sort(key=lambda i: (decisions[i.id][0] != "promote", i.id))
    known = {key: mid for key, mid in earlier.items() if _usable_neighbour(view, changed, mid) is not None}
    merges = pass_survivors([(i.id, _fact(i), decisions[i.id][0]) for i in routable], known)
    for item in routable:
        route, supersedes, duplicate_of, reason = decisions[item.id]
        if item.id in merges:
            target = merges[item.id]
            into = changed.get(target)
            if into is not None and into.canonical_memory_id:  # the survivor itself merged on
                target = into.canonical_memory_id
            supersedes, duplicate_of = [], target
        _settle(view, out, changed, item, route, supersedes, duplicate_of, reason, planner,
                (ended_by or {}).get(item.id))
        out.summary["routes"][route] = out.summary["routes"].get(route, 0) + 1
    out.notes["settled"] = _settled_facts(routable, changed, decisions, merges)
    out.items = list(changed.values())
    return out


def _fact(item: MemoryItem) -> str:
    return fact_key(item.content, item.subject_attribution, item.subject_label)


def _routable(view: ApplyView, revisions: Mapping[str, int], changed: dict[str, MemoryItem], out: Plan,
              sensitivity: Sensitivity) -> list[MemoryItem]:
    """The items still pending their route at the decided revision, processed; one that held a
    secret is rejected here (hidden, never routed on), the others are returned to route."""
    routable: list[MemoryItem] = []
    for memory_id, revision in sorted(revisions.items()):
        item = view.items.get(memory_id)
        if item is None or not item.pending_route or item.revision != revision:
            out.summary["untouched"] += 1  # routed or changed by someone else: never twice
            continue
        item = item.model_copy(deep=True)
        if item.processing_state == ProcessingState.PENDING:
            item = processed(item, sensitivity=sensitivity)  # required processing before any route (admission needs it)
            if item.record_status != Status.ACTIVE:  # it held a secret: hidden, never routed on
                item.route = "reject"
                changed[item.id] = item
                out.summary["routes"]["reject"] = out.summary["routes"].get("reject", 0) + 1
                continue
        routable.append(item)
    return routable


def _settled_facts(routable: list[MemoryItem], changed: dict[str, MemoryItem],
                   decisions: Mapping[str, Decision], merges: dict[str, str]
                   ) -> dict[str, str]:
    """Fact key → the Long-term memory that states it after this batch (for the later batches)."""
    settled: dict[str, str] = {}
    for item in routable:
        final = changed.get(item.id)
        if final is None or decisions[item.id][0] != "promote" or item.id in merges:
            continue
        if final.layer == Layer.LONG_TERM and final.record_status == Status.ACTIVE:
            settled[_fact(item)] = item.id
        elif final.canonical_memory_id:
            settled[_fact(item)] = final.canonical_memory_id
    return settled


def _usable_neighbour(view: ApplyView, changed: dict[str, MemoryItem], memory_id: str | None) -> MemoryItem | None:
    if memory_id is None:
        return None
    other = changed.get(memory_id) or view.items.get(memory_id)
    if other is None or other.layer != Layer.LONG_TERM or other.record_status != Status.ACTIVE:
        return None
    return other.model_copy(deep=True)


def _settle(view: ApplyView, plan: Plan, changed: dict[str, MemoryItem], item: MemoryItem, route: str,
            supersedes: list[str], duplicate_of: str | None, reason: str, planner: str,
            ended_by: str | None = None) -> None:
    item.route = route
    item.promotion = {"route": route, "reason": reason, "decided_at": view.now.isoformat(), "planner": planner}
    survivor = _usable_neighbour(view, changed, duplicate_of)
    if survivor is not None and route in ("promote", "archive"):
        _merge_into(view, plan, changed, item, survivor, route, planner)
        return
    if route == "promote":
        _promote(view, plan, changed, item, supersedes, planner, ended_by)
    elif route == "archive":
        item.layer = Layer.ARCHIVE.value
    elif route == "review":
        _open_review(view, plan, item, supersedes + ([duplicate_of] if duplicate_of else []), reason, supersedes)
    elif route == "reject":
        item.status = "hidden"
    changed[item.id] = item


def _merge_into(view: ApplyView, plan: Plan, changed: dict[str, MemoryItem], item: MemoryItem,
                survivor: MemoryItem, route: str, planner: str) -> None:
    """A duplicate of a Long-term fact corroborates it: the survivor absorbs the evidence (and is
    re-admitted, since its evidence changed); the item becomes an alias in its lineage."""
    known = {e.evidence_id for e in survivor.evidence}
    survivor.evidence.extend(e for e in item.evidence if e.evidence_id not in known and e.status == "active")
    if survivor.conversation_id is None:
        survivor.conversation_id = item.conversation_id
    plan.docs[paths.rel(paths.GRAPH_ASSERTIONS, survivor.id)] = admit(
        survivor, revision=view.next_revision(survivor.id), commit_id=view.commit_id, now=view.now,
        planner=planner + ".merge")
    changed[survivor.id] = survivor
    item.canonical_memory_id = survivor.id
    if route == "promote":
        item.status = Status.SUPERSEDED.value  # short_term superseded: an alias of the survivor
        item.superseded_by = survivor.id
    else:
        item.layer = Layer.ARCHIVE.value
    changed[item.id] = item


def _promote(view: ApplyView, plan: Plan, changed: dict[str, MemoryItem], item: MemoryItem,
             supersedes: list[str], planner: str, ended_by: str | None = None) -> None:
    """The item enters Long-term; the current facts it ends are kept as history
    (:mod:`core.domain.endings`). ``ended_by``: the item was said before a current fact that
    conflicts with it, so it enters as history that fact ended, never ending it."""
    replaced = [o for o in (_usable_neighbour(view, changed, mid) for mid in supersedes) if o is not None]
    newer = _usable_neighbour(view, changed, ended_by)
    item.supersedes = sorted(o.id for o in replaced)
    plan.docs[paths.rel(paths.GRAPH_ASSERTIONS, item.id)] = admit(
        item, revision=view.next_revision(item.id), commit_id=view.commit_id, now=view.now, planner=planner)
    for old in replaced:
        endings.end(plan, changed, old, item)
    if newer is not None:
        endings.end(plan, changed, item, newer)
        newer.supersedes = sorted({*newer.supersedes, item.id})
        endings.readmit(view, plan, newer, planner + ".history")
        changed[newer.id] = newer


def _open_review(view: ApplyView, plan: Plan, item: MemoryItem, conflicting: list[str], reason: str,
                 would_end: list[str]) -> None:
    """The user decides: a review entry naming the memories the item conflicts with, and among them
    the current facts accepting it would end (``would_end``; their text is read when listed)."""
    review = ids.review_id(item.id, view.next_revision(item.id), conflicting)
    item.review_id = review
    expires_at = view.now + review_queue.REVIEW_TTL
    promotion = item.promotion if item.promotion is not None else {}
    promotion["review_expires_at"] = expires_at.isoformat()  # a re-issued entry keeps the deadline
    promotion["would_end"] = [mid for mid in would_end if endings.current(view.items.get(mid))]  # and this
    item.promotion = promotion
    plan.docs[review_queue.row_path(review)] = review_queue.open_row(
        item, review, view.next_revision(item.id), view.commit_id, conflicting, reason, view.now, expires_at)
