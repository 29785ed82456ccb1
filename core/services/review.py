"""The review queue: consolidation's ``review`` route asks the user.

Resolution validates, in the same transaction that mutates the item, that the item is still at the
revision, commit and content hash the review was opened for (``stale_review`` otherwise) and that
nobody decided already (``already_resolved``). Accept and correct admit the item to Long-term with a
fresh receipt and graph assertion; reject hides it without it ever reaching Long-term.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.domain import ids, paths, review_queue
from core.domain.admission import admit
from core.domain.documents import ReviewRow
from core.domain.plan import ApplyView, Plan
from core.domain.records import Evidence, QuoteRef
from core.errors import BadRequest, Conflict, NotFound
from core.ports import Ports
from core.services import intake
from core.services.consolidation import _doc_id
from core.services.reads import hydrate


def list_open(ctx: Ports, uid: str, limit: int = 100) -> list[dict[str, Any]]:
    if not 1 <= limit <= 500:
        raise BadRequest("limit must be between 1 and 500", code="validation_error")
    now = ctx.now()
    rows = ctx.store.query("review_open", {"status": "open"}, parent=paths.user(uid), limit=limit)
    rows_list = [ReviewRow.from_store(doc.data) for doc in rows]
    items = hydrate(ctx, uid, [r.memory_id for r in rows_list if r.memory_id])
    out = []
    for row in rows_list:
        if row.past_deadline(now) or row.memory_id is None:
            continue
        item = items.get(row.memory_id)
        # Fail closed: a row whose memory moved on (edited, deleted, routed) is not shown.
        if item is None or item.revision != row.revision or item.review_id != row.review_id:
            continue
        out.append({"review_id": row.review_id, "memory_id": row.memory_id, "content": row.content or "",
                    "conflicting": list(row.conflicting or ()), "reason": row.reason or "",
                    "created_at": _iso(row.created_at), "expires_at": _iso(row.expires_at)})
    return out


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def resolve(ctx: Ports, uid: str, review_id: str, decision: str, correction: str | None = None) -> dict[str, Any]:
    if decision not in ("accept", "reject", "correct"):
        raise BadRequest("decision must be accept, reject or correct", code="validation_error")
    if decision == "correct":
        if not (correction or "").strip():
            raise BadRequest("a correction needs the corrected text", code="validation_error")
        correction = intake.checked_content(ctx, correction, "correction")
        intake.refuse_secrets(correction)
    parts = review_id.split(":")
    if len(parts) < 3 or parts[0] != "review":
        raise NotFound("no such review")
    memory_id = parts[1]
    doc_path = paths.rel(paths.REVIEW_QUEUE, _doc_id(review_id))

    def plan(view: ApplyView) -> Plan:
        stored = view.docs.get(doc_path)
        item = view.items.get(memory_id)
        if stored is None or item is None:
            raise NotFound("no such review")
        row = ReviewRow.from_store(stored)
        if row.status == review_queue.SUPERSEDED:  # the memory moved to another revision
            raise Conflict("the memory changed since this review was opened", code="stale_review")
        if row.status != "open":
            raise Conflict("this review was already resolved", code="already_resolved")
        if (item.revision != row.revision or item.ledger_commit_id != row.commit_id
                or item.content_hash != row.content_hash or item.review_id != review_id):
            raise Conflict("the memory changed since this review was opened", code="stale_review")
        if row.past_deadline(view.now):
            raise Conflict("this review expired", code="stale_review")
        item = item.model_copy(deep=True)
        out = Plan(summary={"decision": decision, "memory_id": memory_id})
        if decision == "reject":
            item.status = "hidden"
            item.route = "reject"
        else:
            if decision == "correct" and correction:
                item.content = correction
                item.edited = True
                item.evidence.append(Evidence(
                    evidence_id=ids.evidence_id(memory_id, "explicit", "review_correction", "review", "1",
                                                {"content_hash": ids.content_hash(correction)}),
                    source_type="explicit", source_id=memory_id, source_signal="review_correction",
                    extractor_id="review", extractor_version="1",
                    quote_refs=[QuoteRef(segment_id="explicit", quote=correction)], captured_at=view.now))
                item = intake.processed(item)  # the corrected text is labelled like any new content
            item.route = "promote"
            out.docs[paths.rel(paths.GRAPH_ASSERTIONS, memory_id)] = admit(
                item, revision=view.next_revision(memory_id), commit_id=view.commit_id, now=view.now,
                planner=f"review/{decision}")
        item.reviewed, item.user_review = True, decision != "reject"
        out.items.append(item)
        # A resolved row keeps the decision, not the text: the item holds the words that stand.
        out.docs[doc_path] = row.closed("resolved", "resolved_at", view.now, decision=decision).to_store()
        return out

    result = ctx.store.apply(uid, "review.resolve", {"review_id": review_id}, plan, item_ids=[memory_id],
                             doc_paths=[doc_path], actor="user")
    if result.replayed:
        raise Conflict("this review was already resolved", code="already_resolved")
    return {"review_id": review_id, **result.summary}
