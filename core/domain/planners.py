"""Planners as values: module-level pure functions from what a mutation read (an
:class:`~core.domain.plan.ApplyView`) to what it should write (a :class:`~core.domain.plan.Plan`).

A service binds a planner's own arguments (``functools.partial``) and hands it to
``Store.apply``; tests call it on a view built by hand and compare the plan with what the design
says (docs/data-model.md, *Layers and legal states*).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from core.domain import endings, paths, review_queue
from core.domain.documents import CaptureRun, CascadeProgress, ReviewRow
from core.domain.plan import ApplyView, Plan
from core.domain.processing import processed
from core.domain.records import MemoryItem, Sensitivity, user_words
from core.domain.states import Layer, ProcessingState, Status
from core.domain.withdrawal import apply_withdrawal, scrubbed, withdraw_source
from core.errors import CohortMoved, Conflict, ConversationDeleted, NotFound

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


def replace_page(view: ApplyView, *, conversation_id: str, candidates: Mapping[str, MemoryItem], first: bool,
                 seen: frozenset[str] = frozenset(), reviews: Mapping[str, dict[str, Any]] | None = None,
                 riders: Mapping[str, dict[str, Any]] | None = None) -> Plan:
    """One page of a complete-source replacement (capture): the page of the source's live cohort
    (``seen``: the ids read before the transaction; the cohort moving since is a
    :class:`CohortMoved`) loses this source's evidence where the extraction no longer says it,
    retracting items left without any; the last page also keeps or creates every candidate (a fact
    the user deleted stays deleted). ``first``: the caller saw no capture marker and read no cohort
    (one page, the last), and a marker that appeared since is a ``capture_raced`` :class:`Conflict`.
    A conversation being deleted (``cascade`` in its marker) is refused. ``riders`` (documents to
    commit with the memories) are written on the last page when it writes an item."""
    marker = CaptureRun.from_store(view.docs.get(paths.rel(paths.CAPTURE_RUNS, conversation_id)))
    if first and marker.applied:
        raise Conflict("another capture of this conversation committed first", code="capture_raced")
    if marker.deleting:
        raise ConversationDeleted("the conversation is being deleted", code="conversation_deleted")
    cohort_ids = view.queried.get("cohort", [])
    if not first and not set(cohort_ids) <= seen:
        raise CohortMoved("the source's cohort changed since it was read")
    last = first or not view.more.get("cohort")
    out = Plan(summary={"created": 0, "kept": 0, "retracted": 0, "suppressed": 0,
                        "after": cohort_ids[-1] if cohort_ids else None, "last": last})
    changed: dict[str, MemoryItem] = {}
    if last:
        _keep_or_create(view, candidates, changed, out)
    _withdraw_cohort(view, cohort_ids, candidates, conversation_id, changed, out)
    apply_withdrawal(view, out, changed, "capture", dict(reviews or {}))
    if last and out.items and riders:
        out.docs.update(riders)
        out.notes["riders"] = True  # the caller learns from the plan itself that they ride along
    return out


def _keep_or_create(view: ApplyView, candidates: Mapping[str, MemoryItem], changed: dict[str, MemoryItem],
                    out: Plan) -> None:
    """Each candidate is created, or kept (absorbing the new evidence) when its fact exists; a fact
    the user deleted stays deleted."""
    for memory_id, fresh in candidates.items():
        existing = view.items.get(memory_id)
        if existing is not None and existing.deleted_by_user:
            out.summary["suppressed"] += 1  # the user deleted this very fact: it stays deleted
            continue
        if existing is not None and not scrubbed(existing):
            updated = _merge_evidence(existing, fresh)
            if updated is not None:
                changed[memory_id] = updated
            out.summary["kept"] += 1
            continue
        changed[memory_id] = fresh.model_copy(deep=True)
        out.summary["created"] += 1


def _withdraw_cohort(view: ApplyView, cohort_ids: list[str], candidates: Mapping[str, MemoryItem],
                     conversation_id: str, changed: dict[str, MemoryItem], out: Plan) -> None:
    """The source withdraws its active evidence from the cohort items it no longer says."""
    for memory_id in cohort_ids:
        existing = view.items.get(memory_id)
        if memory_id in candidates or existing is None:
            continue
        if not any(e.source_id == conversation_id and e.status == "active" for e in existing.evidence):
            continue
        withdrawn = withdraw_source(existing, conversation_id)
        changed[memory_id] = withdrawn
        if scrubbed(withdrawn):
            out.summary["retracted"] += 1


def _merge_evidence(existing: MemoryItem, fresh: MemoryItem) -> MemoryItem | None:
    """An unchanged fact keeps its id; refresh this source's evidence only when it differs."""
    mine = {e.evidence_id for e in existing.evidence if e.status == "active"}
    new = [e for e in fresh.evidence if e.evidence_id not in mine]
    if not new:
        return None
    updated = existing.model_copy(deep=True)
    source = fresh.evidence[0].source_id
    updated.evidence = [e for e in updated.evidence if e.source_id != source] + new
    return updated


def resolve_review(view: ApplyView, *, review_id: str, memory_id: str, decision: str,
                   correction: str | None = None, sensitivity: Sensitivity) -> Plan:
    """The user's answer to review ``review_id`` of ``memory_id``: ``accept`` and ``correct`` (with
    the corrected text, which becomes the content, cited as the user's own words) admit the item to
    Long-term with a fresh receipt and graph assertion and end the current facts the entry would end;
    ``keep_both`` admits it beside them (kept apart for good); ``reject`` hides it. The entry must still be
    open, within its deadline and bound to the item's current revision, commit and content
    (``stale_review``, ``already_resolved`` otherwise); it is closed keeping the decision, not the text."""
    path = review_queue.row_path(review_id)
    stored, current = view.docs.get(path), view.items.get(memory_id)
    if stored is None or current is None:
        raise NotFound("no such review")
    row = ReviewRow.from_store(stored)
    if row.status == review_queue.SUPERSEDED:  # the memory moved to another revision
        raise Conflict("the memory changed since this review was opened", code="stale_review")
    if row.status != "open":
        raise Conflict("this review was already resolved", code="already_resolved")
    if (current.revision != row.revision or current.ledger_commit_id != row.commit_id
            or current.content_hash != row.content_hash or current.review_id != review_id):
        raise Conflict("the memory changed since this review was opened", code="stale_review")
    if row.past_deadline(view.now):
        raise Conflict("this review expired", code="stale_review")
    item = current.model_copy(deep=True)
    out = Plan(summary={"decision": decision, "memory_id": memory_id})
    changed: dict[str, MemoryItem] = {}
    if decision == "reject":
        item.status, item.route = "hidden", "reject"
    else:
        if decision == "correct" and correction:
            item = _corrected(item, correction, view.now, sensitivity)
        item.route = "promote"
        changed = endings.resolve_conflicts(view, out, item, row.would_end or (), keep_both=decision == "keep_both",
                                            planner=f"review/{decision}")
    item.reviewed, item.user_review = True, decision != "reject"
    out.items.append(item)
    out.items.extend(changed.values())
    # A resolved row keeps the decision, not the text: the item holds the words that stand.
    out.docs[path] = row.closed("resolved", "resolved_at", view.now, decision=decision).to_store()
    return out


def _corrected(item: MemoryItem, correction: str, now: datetime, sensitivity: Sensitivity) -> MemoryItem:
    """``item`` stating ``correction`` instead, cited as the user's correction and labelled like any
    new content."""
    item.content, item.edited = correction, True
    item.evidence.append(user_words(item.id, correction, signal="review_correction", extractor_id="review",
                                    captured_at=now))
    return processed(item, sensitivity=sensitivity)
