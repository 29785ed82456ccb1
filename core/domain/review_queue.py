"""Review-queue entries, and what keeps an item in review answerable.

A review entry (``memory_review_queue/{id}``) asks the user about one *revision* of an item: its id
names the revision, and resolution checks revision, commit and content hash. Any other revision of
an item in review — a visibility, category or review-flag edit, evidence merged by a re-capture, a
withdrawal of one of its sources that keeps it alive — would leave that entry stale: not listed,
not resolvable, skipped by expiry, while the item (routed ``review``) is never selected by
consolidation again. Stranded for ever.

:func:`reissue_reviews`, added to every plan (:func:`with_review_reissue`), keeps that from
happening. When a plan writes a new revision of an item that is in review and stays in review, the
same transaction re-issues the review: a new open entry for the new revision (same question, same conflicting memories, same
deadline, the current text) and the old entry closed (``superseded``, its text dropped). When the
revision takes the item out of review (a content edit sends it back to pending, a retraction) and
the planner did not settle the entry itself, the old entry is closed the same way. Either way every
item in review has exactly one open entry bound to its current revision, which resolution or
expiry settles.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from core.domain import ids, paths
from core.domain.documents import ReviewRow
from core.domain.plan import ApplyView, Plan, Planner, extended
from core.domain.records import MemoryItem
from core.domain.states import Layer, Status

REVIEW_TTL = timedelta(hours=72)
SUPERSEDED = "superseded"  # an entry closed because its item moved to another revision


def doc_id(review_id: str) -> str:
    """Review ids contain ':' and ','; Firestore ids may too, but not '/'."""
    return review_id.replace("/", "_")


def row_path(review_id: str) -> str:
    return paths.rel(paths.REVIEW_QUEUE, doc_id(review_id))


def conflicting_of(review_id: str) -> list[str]:
    """The conflicting memory ids a review id names (``review:{memory}:r{revision}:{a,b}``)."""
    parts = review_id.split(":", 3)
    return [mid for mid in parts[3].split(",") if mid] if len(parts) == 4 else []


def in_review(item: MemoryItem) -> bool:
    """Routed ``review`` and still waiting for the user: active Short-term with an entry."""
    return (item.route == "review" and bool(item.review_id) and item.layer == Layer.SHORT_TERM
            and item.record_status == Status.ACTIVE)


def open_row(item: MemoryItem, review_id: str, revision: int, commit_id: str, conflicting: list[str],
             reason: str, now: datetime, expires_at: datetime) -> dict[str, Any]:
    """The open entry for ``item`` at ``revision`` (committed as ``commit_id``). ``would_end``: the
    current facts accepting it would end, as its route recorded them (ids only: their text is read
    when the queue is listed, so a deleted fact's words never linger here)."""
    return {
        "review_id": review_id, "memory_id": item.id, "revision": revision, "commit_id": commit_id,
        "content_hash": ids.content_hash(item.content), "content": item.content, "conflicting": list(conflicting),
        "reason": reason, "status": "open", "created_at": now, "expires_at": expires_at,
        **({"would_end": ended} if (ended := would_end(item)) else {}),
    }


def would_end(item: MemoryItem) -> list[str]:
    """The current facts accepting ``item``'s review would end (recorded by its route)."""
    ended = (item.promotion or {}).get("would_end")
    return [mid for mid in ended if isinstance(mid, str)] if isinstance(ended, list) else []


def deadline(item: MemoryItem, now: datetime) -> datetime:
    """The review's deadline as the route recorded it (a re-issue keeps it), else a fresh one."""
    recorded = (item.promotion or {}).get("review_expires_at")
    if isinstance(recorded, str):
        try:
            return datetime.fromisoformat(recorded)
        except ValueError:
            pass
    return now + REVIEW_TTL


def _closed(previous: MemoryItem, now: datetime, successor: str | None) -> dict[str, Any]:
    return {"review_id": previous.review_id, "memory_id": previous.id, "status": SUPERSEDED,
            "superseded_by": successor, "content": "", "conflicting": [], "closed_at": now}


def redact_reviews(view: ApplyView, out: Plan, reviews: Mapping[str, Mapping[str, Any]],
                   retracted: Callable[[str | None], bool] = lambda memory_id: True) -> None:
    """Add to ``out`` the redaction of ``reviews`` (review id → the row read before the apply; the
    apply's own read of it, ``view.docs``, wins, and a row gone since is left gone): the row of a
    retracted memory (``retracted(memory_id)``; every row by default) is closed as ``redacted``
    without its text, and a settled row of any other memory that still holds text loses it (it was
    written before settling cleared it; the withdrawn source's words go with it)."""
    for review_id, read in reviews.items():
        path = row_path(review_id)
        current = view.docs.get(path, read)
        if current is None:
            continue
        row = ReviewRow.from_store(current)
        if retracted(row.memory_id):
            out.docs[path] = row.closed("redacted", "redacted_at", view.now).to_store()
        elif row.status != "open" and (row.content or row.conflicting):
            out.docs[path] = row.but(content="", conflicting=()).to_store()


def with_review_reissue(planner: Planner) -> Planner:
    """``planner``, plus :func:`reissue_reviews`."""
    return partial(extended, planner=planner, addition=reissue_reviews)


def reissue_reviews(view: ApplyView, out: Plan) -> Plan:
    """``out`` plus the re-issue (or close) of the review entry of every item in review it writes a
    new revision of, unless it writes that entry itself (resolution, expiry, redaction)."""
    if not any(_needs_reissue(view.items.get(item.id)) for item in out.items):
        return out
    docs = dict(out.docs)
    items = [_reissued(view, item, docs) for item in out.items]
    return replace(out, items=items, docs=docs)


def _needs_reissue(previous: MemoryItem | None) -> bool:
    """Whether a new revision of ``previous`` moves a review entry along (it is in review, with one)."""
    return previous is not None and in_review(previous) and previous.review_id is not None


def _reissued(view: ApplyView, item: MemoryItem, docs: dict[str, dict[str, Any] | None]) -> MemoryItem:
    """``item`` bound to its re-issued entry (added to ``docs`` with the old one closed), or as it is."""
    previous = view.items.get(item.id)
    if previous is None or not in_review(previous) or previous.review_id is None:
        return item
    old_path = row_path(previous.review_id)
    if old_path in docs:
        return item
    if not (in_review(item) and item.review_id == previous.review_id):
        docs[old_path] = _closed(previous, view.now, None)
        return item
    revision = view.next_revision(item.id)
    new_id = ids.review_id(item.id, revision, conflicting_of(previous.review_id))
    item = item.model_copy(update={"review_id": new_id})
    docs[row_path(new_id)] = open_row(
        item, new_id, revision, view.commit_id, conflicting_of(previous.review_id),
        str((previous.promotion or {}).get("reason") or ""), view.now, deadline(previous, view.now))
    docs[old_path] = _closed(previous, view.now, new_id)
    return item
