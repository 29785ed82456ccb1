"""Planners as values: module-level pure functions from what a mutation read (an
:class:`~core.domain.plan.ApplyView`) to what it should write (a :class:`~core.domain.plan.Plan`).

A service binds a planner's own arguments (``functools.partial``) and hands it to
``Store.apply``; tests call it on a view built by hand and compare the plan with what the design
says (docs/data-model.md, *Layers and legal states*).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from core.domain import paths, review_queue
from core.domain.documents import CaptureRun, CascadeProgress, ReviewRow
from core.domain.plan import ApplyView, Plan
from core.domain.records import MemoryItem
from core.domain.states import Layer, ProcessingState, Status
from core.domain.withdrawal import apply_withdrawal, scrubbed, withdraw_source
from core.errors import CohortMoved

REVIEW_EXPIRY = "consolidation/review-expiry"


def expire_reviews(view: ApplyView, rows: Mapping[str, str]) -> Plan:
    """Open review rows (review id → row path) past their deadline are marked ``expired`` and keep
    no text; each item still in that review settles in Archive (no answer within the deadline is
    not a durable route, so it never reaches Long-term). Items that moved on are left alone."""
    out = Plan(summary={"expired": 0})
    for review_id, path in rows.items():
        stored = view.docs.get(path)
        row = ReviewRow.from_store(stored)
        if stored is None or row.status != "open" or not row.past_deadline(view.now):
            continue
        out.docs[path] = row.closed("expired", "expired_at", view.now).to_store()
        out.summary["expired"] += 1
        item = view.items.get(row.memory_id or "")
        if item is None or item.review_id != review_id or not review_queue.in_review(item):
            continue
        item = item.model_copy(deep=True)
        item.layer, item.route = Layer.ARCHIVE.value, "archive"
        item.promotion = {"route": "archive", "reason": "review expired unanswered",
                          "decided_at": view.now.isoformat(), "planner": REVIEW_EXPIRY}
        out.items.append(item)
    return out


def age_out(view: ApplyView, memory_ids: Iterable[str]) -> Plan:
    """Active Long-term items among ``memory_ids`` move to Archive and lose their graph statement
    (the caller chose them by age; an item that changed since it was chosen is left alone)."""
    out = Plan()
    for mid in memory_ids:
        item = view.items.get(mid)
        if item is None or item.layer != Layer.LONG_TERM or item.record_status != Status.ACTIVE:
            continue
        item = item.model_copy(deep=True)
        item.layer, item.processing_state = Layer.ARCHIVE.value, ProcessingState.PROCESSED.value
        item.graph_ready = False
        out.docs[paths.rel(paths.GRAPH_ASSERTIONS, mid)] = None
        out.items.append(item)
    return out


def cascade_page(view: ApplyView, *, conversation_id: str, run_id: str, seen: frozenset[str],
                 reviews: Mapping[str, dict[str, Any]], remove_document: bool) -> Plan:
    """One page of a conversation delete: the conversation's evidence is withdrawn from every item of
    the page of its live cohort (``seen``: the ids read before the transaction; the cohort moving
    since is a :class:`CohortMoved`), retracting those left without evidence, and the progress
    record (the capture marker) counts the page. The page that holds the rest of the cohort is the
    last: the record says done and, with ``remove_document``, the conversation document goes in the
    same commit."""
    marker_path, conversation_path = paths.rel(paths.CAPTURE_RUNS, conversation_id), paths.rel(paths.CONVERSATIONS, conversation_id)
    marker = CaptureRun.from_store(view.docs.get(marker_path))
    progress = marker.progress
    cohort = view.queried.get("cohort", [])
    if not set(cohort) <= seen:
        raise CohortMoved("the conversation's memories changed since they were read")
    out = Plan(summary={"withdrawn": 0, "retracted": 0})
    changed: dict[str, MemoryItem] = {}
    for mid in cohort:
        item = view.items.get(mid)
        if item is None:
            continue
        changed[mid] = withdraw_source(item, conversation_id, by_user=True)
        out.summary["withdrawn"] += 1
        if scrubbed(changed[mid]):
            out.summary["retracted"] += 1
    apply_withdrawal(view, out, changed, "delete.conversation", dict(reviews))
    last = not view.more.get("cohort")
    totals = dict(progress.summary)
    for name in ("withdrawn", "retracted"):
        totals[name] = progress.total(name) + out.summary[name]
    # The progress record keeps no text: the capture's errors and jobs went with the first page.
    out.docs[marker_path] = CaptureRun(captures=marker.capture_count, updated_at=view.now, cascade=CascadeProgress(
        state="done" if last else "running", intent=progress.intent or run_id, pages=progress.pages + 1,
        summary=totals)).to_store()
    if last and remove_document and view.docs.get(conversation_path) is not None:
        out.docs[conversation_path] = None
    out.summary.update(last=last)
    return out
