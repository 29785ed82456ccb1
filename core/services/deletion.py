"""Deletes that stick: one memory's lineage, everything, a conversation's contribution.

Every delete is a canonical apply (tombstone, content cleared, evidence scrubbed, graph assertion
removed, review rows redacted); provider cleanup follows through the outbox, so a delete is durable
and reported as done even while Typesense or Pinecone are down — they converge when they return.
"""

from __future__ import annotations

from typing import Any

from core.adapters.firestore.apply import ApplyView, Plan, head_sequence
from core.adapters.firestore.queries import build
from core.bootstrap import Context
from core.domain.records import MemoryItem
from core.domain.states import Status
from core.errors import Conflict, NotFound
from core.services.capture import apply_withdrawal, retract, source_review_rows, withdraw_source

TOMBSTONE_BATCH = 100
MAX_RESCANS = 6


class LineageMoved(Conflict):
    code = "lineage_moved"
    retryable = True


def _item(ctx: Context, uid: str, memory_id: str) -> MemoryItem | None:
    snap = ctx.paths.doc(uid, "memory_items", memory_id).get()
    return MemoryItem.from_store(snap.to_dict()) if snap.exists else None


def scan_lineage(ctx: Context, uid: str, memory_id: str) -> set[str]:
    """Survivor, aliases and superseded ancestors (transitively), read outside the transaction."""
    seen: set[str] = set()
    frontier = [memory_id]
    collection = ctx.paths.col(uid, "memory_items")
    while frontier and len(seen) < 200:
        current = frontier.pop()
        if current in seen:
            continue
        seen.add(current)
        item = _item(ctx, uid, current)
        if item is None:
            continue
        linked = set(item.supersedes)
        if item.canonical_memory_id:
            linked.add(item.canonical_memory_id)
        if item.superseded_by:
            linked.add(item.superseded_by)
        for snap in build(collection, "items_by_canonical", {"canonical_memory_id": current}, limit=200).stream():
            linked.add(snap.id)
        frontier.extend(linked - seen)
    return seen


def _review_rows(ctx: Context, uid: str, memory_ids: set[str]) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for memory_id in memory_ids:
        query = build(ctx.paths.col(uid, "memory_review_queue"), "reviews_by_memory", {"memory_id": memory_id})
        for snap in query.stream():
            rows[snap.id] = snap.to_dict()
    return rows


def _redacted(row: dict[str, Any], now: Any) -> dict[str, Any]:
    return {**row, "content": "", "conflicting": [], "status": "redacted", "redacted_at": now}


def delete_memory(ctx: Context, uid: str, memory_id: str) -> dict[str, Any]:
    """Tombstone the whole lineage of ``memory_id``. A privacy delete re-checks the lineage inside
    the transaction; if it grew since the scan, it rescans the union and tries again."""
    first = _item(ctx, uid, memory_id)
    if first is None or first.record_status == Status.TOMBSTONED:
        raise NotFound("no such memory")
    lineage = scan_lineage(ctx, uid, memory_id)
    for _ in range(MAX_RESCANS):
        reviews = _review_rows(ctx, uid, lineage)
        fixed = frozenset(lineage)

        def plan(view: ApplyView, fixed: frozenset[str] = fixed, reviews: dict = reviews) -> Plan:
            out = Plan(summary={"tombstoned": []})
            for member in view.items.values():
                if member is None:
                    continue
                linked = set(member.supersedes) | {x for x in (member.canonical_memory_id, member.superseded_by) if x}
                if not linked <= fixed:
                    raise LineageMoved("the lineage changed during the delete")
            for alias in view.queried.get("aliases", []):
                if alias not in fixed:
                    raise LineageMoved("the lineage changed during the delete")
            for mid in sorted(fixed):
                member = view.items.get(mid)
                if member is None or member.record_status == Status.TOMBSTONED and not member.content:
                    continue
                member = member.model_copy(deep=True)
                retract(member)
                out.items.append(member)
                out.docs[f"memory_graph_assertions/{mid}"] = None
                out.summary["tombstoned"].append(mid)
            for review_id, row in reviews.items():
                out.docs[f"memory_review_queue/{review_id}"] = _redacted(row, view.now)
            return out

        try:
            result = ctx.engine.apply(
                uid, "delete.memory", {"lineage": sorted(lineage)}, plan, item_ids=lineage,
                item_queries={"aliases": ("items_by_canonical", {"canonical_memory_id": memory_id})},
                doc_paths=[f"memory_review_queue/{r}" for r in reviews], actor="user")
        except LineageMoved:
            lineage |= set().union(*(scan_lineage(ctx, uid, m) for m in list(lineage)))
            continue
        return {"deleted": result.summary.get("tombstoned", []), "commit_id": result.commit_id}
    raise Conflict("the memory kept changing while it was being deleted; try again", code="delete_contended")


def delete_all(ctx: Context, uid: str) -> dict[str, Any]:
    """Bounded tombstone transactions, then a control-fenced rescan until a stable empty set."""
    total = 0
    collection = ctx.paths.col(uid, "memory_items")
    for _round in range(MAX_RESCANS):
        head_before = head_sequence(ctx.client, uid)
        ours = 0
        while True:
            snaps = list(build(collection, "items_by_status", {"status": ["active", "superseded"]},
                               limit=TOMBSTONE_BATCH).stream())
            if not snaps:
                break
            batch_ids = [s.id for s in snaps]
            reviews = _review_rows(ctx, uid, set(batch_ids))

            def plan(view: ApplyView, reviews: dict = reviews) -> Plan:
                out = Plan(summary={"tombstoned": 0})
                for member in view.items.values():
                    if member is None or member.record_status == Status.TOMBSTONED:
                        continue
                    member = member.model_copy(deep=True)
                    retract(member)
                    out.items.append(member)
                    out.docs[f"memory_graph_assertions/{member.id}"] = None
                    out.summary["tombstoned"] += 1
                for review_id, row in reviews.items():
                    out.docs[f"memory_review_queue/{review_id}"] = _redacted(row, view.now)
                return out

            result = ctx.engine.apply(uid, "delete.all", {"ids": sorted(batch_ids)}, plan, item_ids=batch_ids,
                                      doc_paths=[f"memory_review_queue/{r}" for r in reviews], actor="user")
            total += int(result.summary.get("tombstoned", 0))
            ours += 0 if result.replayed or result.commit_id is None else 1
        # The fence: the rescan is empty and no commit but our own tombstones landed this round.
        remaining = list(build(collection, "items_by_status", {"status": ["active", "superseded"]}, limit=1).stream())
        head_after = head_sequence(ctx.client, uid)
        if not remaining and head_after == head_before + ours:
            return {"deleted": total, "stable_at_sequence": head_after}
    raise Conflict("memories kept being written during delete-all; nothing was reported deleted that is not, "
                   "but some memories may remain — try again", code="delete_all_contended")


def cascade_conversation(ctx: Context, uid: str, conversation_id: str) -> dict[str, Any]:
    """Tombstone the conversation's evidence on every memory, retract memories with no surviving
    evidence and — in the same transaction — bring back superseded Long-term items that still have
    independent active evidence. Workflow rows derived from the conversation are removed too."""

    def plan(view: ApplyView) -> Plan:
        out = Plan(summary={"withdrawn": 0, "retracted": 0})
        changed: dict[str, MemoryItem] = {}
        for mid in view.queried.get("cohort", []):
            item = view.items.get(mid)
            if item is None or item.record_status == Status.TOMBSTONED:
                continue
            if not any(e.source_id == conversation_id and e.status == "active" for e in item.evidence):
                continue
            changed[mid] = withdraw_source(item, conversation_id)
            out.summary["withdrawn"] += 1
            if changed[mid].record_status == Status.TOMBSTONED:
                out.summary["retracted"] += 1
        apply_withdrawal(view, out, changed, "delete.conversation", reviews)
        return out

    summary: dict[str, Any] = {"withdrawn": 0, "retracted": 0}
    commit_id = None
    supported = build(ctx.paths.col(uid, "memory_items"), "items_by_source", {"source_ids": conversation_id},
                      limit=1).stream()
    # Nothing cites the conversation (e.g. the delete trigger of an account wipe): no apply, so no
    # operation record is written back under a user whose subtree was just removed.
    if any(True for _ in supported):
        reviews = source_review_rows(ctx, uid, conversation_id)
        result = ctx.engine.apply(uid, "delete.conversation", {"source": conversation_id}, plan,
                                  item_queries={"cohort": ("items_by_source", {"source_ids": conversation_id})},
                                  follow_lineage=True, doc_paths=[f"memory_review_queue/{r}" for r in reviews])
        summary, commit_id = result.summary, result.commit_id
    removed = 0
    for collection, query in (("action_items", "action_items_by_conversation"), ("goals", "goals_by_conversation")):
        for snap in build(ctx.paths.col(uid, collection), query, {"conversation_id": conversation_id}).stream():
            snap.reference.delete()
            removed += 1
    ctx.paths.doc(uid, "capture_runs", conversation_id).delete()
    return {**summary, "workflow_removed": removed, "commit_id": commit_id}
