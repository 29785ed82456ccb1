"""The review queue: consolidation's ``review`` route asks the user.

Resolution validates, in the same transaction that mutates the item, that the item is still at the
revision, commit and content hash the review was opened for (``stale_review`` otherwise) and that
nobody decided already (``already_resolved``). Accept and correct admit the item to Long-term with a
fresh receipt and graph assertion and end the current facts the entry names (``would_end``, listed
with their text); keep_both admits it beside them, and neither ends the other again; reject hides it
without it ever reaching Long-term.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from core.domain import paths, planners, review_queue
from core.domain.documents import ReviewRow
from core.domain.visibility import readable
from core.errors import BadRequest, Conflict, NotFound
from core.ports import Ports
from core.services import intake
from core.services.reads import hydrate

# accept: the item is admitted and the facts it would end are ended; keep_both: admitted beside them,
# and the pair is never asked about again; correct: admitted with the corrected text; reject: hidden.
DECISIONS = ("accept", "keep_both", "reject", "correct")


def list_open(ctx: Ports, uid: str, limit: int = 100) -> list[dict[str, Any]]:
    if not 1 <= limit <= 500:
        raise BadRequest("limit must be between 1 and 500", code="validation_error")
    now = ctx.now()
    rows = ctx.store.query("review_open", {"status": "open"}, parent=paths.user(uid), limit=limit)
    rows_list = [ReviewRow.from_store(doc.data) for doc in rows]
    items = hydrate(ctx, uid, [mid for r in rows_list for mid in (r.memory_id, *(r.would_end or ())) if mid])
    out = []
    for row in rows_list:
        if row.past_deadline(now) or row.memory_id is None:
            continue
        item = items.get(row.memory_id)
        # Fail closed: a row whose memory moved on (edited, deleted, routed) is not shown.
        if item is None or item.revision != row.revision or item.review_id != row.review_id:
            continue
        if not readable(item):  # a key without the restricted scope sees no restricted memory
            continue
        out.append(_entry(row, items))
    return out


def _entry(row: ReviewRow, items: dict[str, Any]) -> dict[str, Any]:
    """One open entry as listed, with the current facts accepting it would end (id and text)."""
    ends = [items[mid] for mid in row.would_end or () if mid in items]
    return {"review_id": row.review_id, "memory_id": row.memory_id, "content": row.content or "",
            "conflicting": list(row.conflicting or ()), "reason": row.reason or "",
            "would_end": [{"id": other.id, "content": other.content} for other in ends
                          if other.layer == "long_term" and other.record_status == "active" and readable(other)],
            "created_at": _iso(row.created_at), "expires_at": _iso(row.expires_at)}


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def resolve(ctx: Ports, uid: str, review_id: str, decision: str, correction: str | None = None) -> dict[str, Any]:
    if decision not in DECISIONS:
        raise BadRequest("decision must be accept, keep_both, reject or correct", code="validation_error")
    if decision == "correct":
        if not (correction or "").strip():
            raise BadRequest("a correction needs the corrected text", code="validation_error")
        correction = intake.checked_content(ctx, correction, "correction")
        intake.refuse_secrets(ctx, correction)
    parts = review_id.split(":")
    if len(parts) < 3 or parts[0] != "review":
        raise NotFound("no such review")
    memory_id = parts[1]
    plan = partial(planners.resolve_review, review_id=review_id, memory_id=memory_id, decision=decision,
                   correction=correction, sensitivity=ctx.sensitivity)
    result = ctx.store.apply(uid, "review.resolve", {"review_id": review_id}, plan,
                             item_ids=[memory_id, *review_queue.conflicting_of(review_id)],
                             doc_paths=[review_queue.row_path(review_id)], actor="user")
    if result.replayed:
        raise Conflict("this review was already resolved", code="already_resolved")
    return {"review_id": review_id, **result.summary}
