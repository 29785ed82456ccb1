"""Conversation capture: a completed conversation becomes grounded Short-term memories.

One conversation revision (its segments / integration text and any reprocess token) is captured
exactly once. Three jobs run separately — memories, action items, goals — so one failing neither
blocks nor rolls back the others; each is idempotent and remembered in
``users/{uid}/capture_runs/{conversation_id}``, a path that does not fire the trigger.

The memories job is a *complete-source replacement* (Q7): the extraction is grounded first (any
candidate without a unique segment binding fails the whole replacement and the prior cohort stays
exactly as it was), then one control-fenced apply replaces the source's cohort: unchanged facts keep
their ids, vanished ones lose this source's evidence and are retracted when no evidence survives,
superseded Long-term items that still have independent evidence come back with a fresh admission.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from core.adapters.firestore.apply import ApplyView, Plan
from core.adapters.firestore.queries import build
from core.bootstrap import Context
from core.domain import ids
from core.domain.admission import admit
from core.domain.extraction import (
    ExtractionResult,
    GroundedCandidate,
    drop_secret_candidates,
    ground,
    source_from_conversation,
)
from core.domain.records import Evidence, MemoryItem, QuoteRef, short_term_deadline
from core.domain.sensitivity import label_sensitivity
from core.domain.states import Layer, ProcessingState, Status
from core.errors import Conflict, StrataError

log = logging.getLogger(__name__)
JOBS = ("memories", "action_items", "goals")
RELEVANT_FIELDS = ("transcript_segments", "external_data", "reprocess_token", "status", "discarded")


@dataclass
class CaptureResult:
    conversation_id: str
    revision: str
    skipped: str | None = None
    created: int = 0
    kept: int = 0
    retracted: int = 0
    action_items: int = 0
    goals: int = 0
    commit_id: str | None = None
    errors: dict[str, str] = field(default_factory=dict)
    retry: list[str] = field(default_factory=list)  # jobs that failed transiently


def conversation_revision(doc: dict[str, Any]) -> str:
    """What extraction depends on; unrelated edits (title, overview, app results) leave it unchanged."""
    segments = [{"id": s.get("id"), "text": s.get("text"), "is_user": bool(s.get("is_user")),
                 "speaker": s.get("speaker")} for s in doc.get("transcript_segments") or [] if isinstance(s, dict)]
    external = doc.get("external_data") or {}
    return ids.contract_hash("conversation.revision", {
        "segments": segments, "external": external.get("text") if isinstance(external, dict) else None,
        "reprocess_token": doc.get("reprocess_token"),
    })[:32]


def should_capture(doc: dict[str, Any] | None) -> bool:
    return bool(doc) and doc.get("status") == "completed" and not doc.get("discarded")  # type: ignore[union-attr]


def capture_conversation(ctx: Context, uid: str, conversation_id: str, doc: dict[str, Any]) -> CaptureResult:
    revision = conversation_revision(doc)
    result = CaptureResult(conversation_id, revision)
    if not should_capture(doc):
        result.skipped = "not_completed"
        return result
    run_ref = ctx.paths.doc(uid, "capture_runs", conversation_id)
    run_snap = run_ref.get()
    run = run_snap.to_dict() if run_snap.exists else {}
    done: dict[str, Any] = dict(run.get("jobs", {})) if run.get("revision") == revision else {}
    if all(done.get(job) for job in JOBS):
        result.skipped = "already_captured"
        return result
    # No marker at all: nothing of this conversation was ever applied (the marker is written in the
    # same commit as the memories), so there is no cohort to read and no workflow row to merge into.
    first = not run_snap.exists
    source = source_from_conversation(uid, conversation_id, doc)
    extraction = drop_secret_candidates(ctx.extractor.extract(source))
    device_id = doc.get("client_device_id") if isinstance(doc.get("client_device_id"), str) else None
    workflow = {name: _workflow_rows(ctx, uid, conversation_id, revision, name, extraction)
                for name in JOBS[1:] if not done.get(name)}

    def marker(jobs: dict[str, Any]) -> dict[str, Any]:
        return {"revision": revision, "jobs": jobs, "updated_at": ctx.now(), "errors": dict(result.errors)}

    if not done.get("memories"):
        # When this is the first capture, the workflow rows and the marker ride in the memories'
        # apply commit: one commit instead of three, and the marker can never lag the memories.
        riders: dict[str, dict[str, Any]] = {}
        if first:
            riders = {path: data for rows in workflow.values() for path, data in rows.items()}
            riders[f"capture_runs/{conversation_id}"] = marker({**done, **{job: True for job in JOBS}})
        try:
            if _memories_job(ctx, uid, conversation_id, revision, source, extraction, device_id, result,
                             first=first, riders=riders):
                _count_workflow(result, workflow)
                return result
            done["memories"] = True
        except StrataError as exc:
            result.errors["memories"] = exc.message
            if exc.retryable:
                result.retry.append("memories")
            else:  # permanent (e.g. grounding failed): record, do not retry forever
                done["memories"] = f"failed: {exc.code}"
    # The workflow jobs and the marker in one batch. A failure here leaves the memories committed;
    # the redelivered event replays their apply as a no-op and writes these again (idempotent ids).
    batch = ctx.client.batch()
    for name, rows in workflow.items():
        for path, data in rows.items():
            batch.set(ctx.paths.doc(uid, *path.split("/")), data, merge=True)
        done[name] = True
    batch.set(run_ref, marker(done), merge=False)
    batch.commit()
    _count_workflow(result, workflow)
    return result


def _memories_job(ctx: Context, uid: str, conversation_id: str, revision: str, source: Any,
                  extraction: ExtractionResult, device_id: str | None, result: CaptureResult, *,
                  first: bool = False, riders: dict[str, dict[str, Any]] | None = None) -> bool:
    """Apply the extraction; True when ``riders`` were committed with it (False: write them apart)."""
    grounded = ground(source, extraction)  # raises GroundingError: nothing is applied
    signal = "integration" if source.external_text else "transcription"
    if first and not grounded:
        return False  # nothing to create and, on a first capture, nothing to retract
    try:
        return replace_source(ctx, uid, conversation_id, revision, grounded, extraction, signal, device_id, result,
                              first=first, riders=riders)
    except Conflict as exc:
        if exc.code != "capture_raced":
            raise
        # Another capture of this conversation committed since the marker was read: do it the long way.
        return replace_source(ctx, uid, conversation_id, revision, grounded, extraction, signal, device_id, result)


def _candidate_item(uid: str, conversation_id: str, g: GroundedCandidate, extraction: ExtractionResult,
                    signal: str, device_id: str | None, now: Any, ttl_days: int) -> MemoryItem:
    c = g.candidate
    label = c.subject_label if g.subject != "user" else None
    memory_id = ids.extracted_memory_id(uid, conversation_id, c.content, label)
    refs = [QuoteRef(segment_id=r.segment_id, quote=r.quote) for r in g.quote_refs]
    evidence = Evidence(
        evidence_id=ids.evidence_id(conversation_id, "conversation", signal, extraction.extractor_id,
                                    extraction.extractor_version, [[r.segment_id, r.quote] for r in refs]),
        source_type="conversation", source_id=conversation_id, source_signal=signal,
        extractor_id=extraction.extractor_id, extractor_version=extraction.extractor_version, quote_refs=refs,
        client_device_id=device_id, captured_at=now,
    )
    labels = sorted(set(c.sensitivity) | label_sensitivity(c.content))
    return MemoryItem(
        id=memory_id, uid=uid, content=c.content, layer=Layer.SHORT_TERM, status=Status.ACTIVE,
        processing_state=ProcessingState.PROCESSED, category=c.category, kind=c.kind, evidence=[evidence],
        conversation_id=conversation_id, sensitivity_labels=labels, subject_attribution=g.subject,
        subject_label=c.subject_label, expires_at=short_term_deadline(now, ttl_days),
    )


def withdraw_source(item: MemoryItem, source_id: str) -> MemoryItem:
    """Tombstone this source's evidence on ``item``; retract the item when nothing else supports it."""
    item = item.model_copy(deep=True)
    for evidence in item.evidence:
        if evidence.source_id == source_id:
            evidence.status = "tombstoned"
            evidence.quote_refs = []
    if item.conversation_id == source_id:
        item.conversation_id = next((e.source_id for e in item.evidence if e.status == "active"
                                     and e.source_type == "conversation"), None)
    if not any(e.status == "active" for e in item.evidence):
        retract(item)
    return item


def retract(item: MemoryItem) -> None:
    """Tombstone with content cleared and evidence scrubbed."""
    item.status = Status.TOMBSTONED.value
    item.content = ""
    item.route = item.route or None
    for evidence in item.evidence:
        evidence.status = "tombstoned"
        evidence.quote_refs = []
    if item.layer == Layer.LONG_TERM or item.layer == Layer.ARCHIVE:
        item.processing_state = ProcessingState.PROCESSED.value
    item.graph_ready = False


def source_review_rows(ctx: Context, uid: str, source_id: str) -> dict[str, dict[str, Any]]:
    """Review-queue rows of the memories a source supports (read before the apply; the apply reads
    them again through ``doc_paths``), so retracting those memories can redact their reviews."""
    rows: dict[str, dict[str, Any]] = {}
    cohort = build(ctx.paths.col(uid, "memory_items"), "items_by_source", {"source_ids": source_id}).stream()
    for item in cohort:
        query = build(ctx.paths.col(uid, "memory_review_queue"), "reviews_by_memory", {"memory_id": item.id})
        for snap in query.stream():
            rows[snap.id] = snap.to_dict()
    return rows


def apply_withdrawal(view: ApplyView, plan: Plan, changed: dict[str, MemoryItem], planner: str,
                     reviews: dict[str, dict[str, Any]] | None = None) -> None:
    """Finish a plan that withdrew evidence: Long-term survivors are re-admitted (their evidence
    changed), retracted survivors lose their graph assertion and have their review entries redacted,
    and superseded Long-term items they replaced come back when independent active evidence still
    supports them."""
    for review_id, row in (reviews or {}).items():
        path = f"memory_review_queue/{review_id}"
        current = view.docs.get(path, row)
        retracted = changed.get((current or {}).get("memory_id", ""))
        if current and retracted is not None and retracted.record_status == Status.TOMBSTONED:
            plan.docs[path] = {**current, "content": "", "conflicting": [], "status": "redacted",
                               "redacted_at": view.now}
    for item in list(changed.values()):
        path = f"memory_graph_assertions/{item.id}"
        if item.layer == Layer.LONG_TERM and item.record_status == Status.ACTIVE:
            plan.docs[path] = admit(item, revision=view.next_revision(item.id), commit_id=view.commit_id,
                                    now=view.now, planner="capture.readmit")
        elif item.record_status == Status.TOMBSTONED:
            plan.docs[path] = None
            for ancestor_id in item.supersedes:
                ancestor = changed.get(ancestor_id) or view.items.get(ancestor_id)
                if (ancestor is None or ancestor.layer != Layer.LONG_TERM
                        or ancestor.record_status != Status.SUPERSEDED
                        or not any(e.status == "active" for e in ancestor.evidence)):
                    continue
                ancestor = ancestor.model_copy(deep=True)
                ancestor.status = Status.ACTIVE.value
                ancestor.superseded_by = None
                ancestor.canonical_memory_id = None
                plan.docs[f"memory_graph_assertions/{ancestor.id}"] = admit(
                    ancestor, revision=view.next_revision(ancestor.id), commit_id=view.commit_id, now=view.now,
                    planner=planner + ".reactivate")
                changed[ancestor.id] = ancestor
    plan.items = list(changed.values())


def replace_source(ctx: Context, uid: str, conversation_id: str, revision: str,
                   grounded: tuple[GroundedCandidate, ...], extraction: ExtractionResult, signal: str,
                   device_id: str | None, result: CaptureResult, *, first: bool = False,
                   riders: dict[str, dict[str, Any]] | None = None) -> bool:
    """Replace the source's cohort with ``grounded``; True when ``riders`` (extra documents) were
    committed with it. ``first`` (the caller saw no capture marker) skips the cohort reads; the
    transaction re-checks the marker and raises ``capture_raced`` if a capture got there first."""
    now = ctx.now()
    marker_path = f"capture_runs/{conversation_id}"
    rode = False
    candidates: dict[str, MemoryItem] = {}
    for g in grounded:
        item = _candidate_item(uid, conversation_id, g, extraction, signal, device_id, now,
                               ctx.settings.short_term_ttl_days)
        candidates.setdefault(item.id, item)
    def plan(view: ApplyView) -> Plan:
        nonlocal rode
        if first and view.docs.get(marker_path) is not None:
            raise Conflict("another capture of this conversation committed first", code="capture_raced")
        cohort_ids = set(view.queried.get("cohort", []))
        out = Plan(summary={"created": 0, "kept": 0, "retracted": 0})
        changed: dict[str, MemoryItem] = {}
        for memory_id, fresh in candidates.items():
            existing = view.items.get(memory_id)
            if existing is not None and existing.record_status != Status.TOMBSTONED:
                updated = _merge_evidence(existing, fresh)
                if updated is not None:
                    changed[memory_id] = updated
                out.summary["kept"] += 1
                continue
            changed[memory_id] = fresh.model_copy(deep=True)
            out.summary["created"] += 1
        for memory_id in sorted(cohort_ids - set(candidates)):
            existing = view.items.get(memory_id)
            if existing is None or existing.record_status == Status.TOMBSTONED:
                continue
            if not any(e.source_id == conversation_id and e.status == "active" for e in existing.evidence):
                continue
            withdrawn = withdraw_source(existing, conversation_id)
            changed[memory_id] = withdrawn
            if withdrawn.record_status == Status.TOMBSTONED:
                out.summary["retracted"] += 1
        apply_withdrawal(view, out, changed, "capture", reviews)
        rode = bool(out.items and riders)
        if rode:
            out.docs.update(riders or {})
        return out

    if first:
        reviews: dict[str, dict[str, Any]] = {}
        applied = ctx.engine.apply(
            uid, "capture.replace", {"source": conversation_id, "revision": revision}, plan, item_ids=candidates,
            follow_lineage=True, doc_paths=[marker_path])
    else:
        reviews = source_review_rows(ctx, uid, conversation_id)
        applied = ctx.engine.apply(
            uid, "capture.replace", {"source": conversation_id, "revision": revision}, plan, item_ids=candidates,
            item_queries={"cohort": ("items_by_source", {"source_ids": conversation_id})}, follow_lineage=True,
            doc_paths=[f"memory_review_queue/{r}" for r in reviews])
    result.created = applied.summary.get("created", 0)
    result.kept = applied.summary.get("kept", 0)
    result.retracted = applied.summary.get("retracted", 0)
    result.commit_id = applied.commit_id
    return rode and applied.commit_id is not None and not applied.replayed


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


def _workflow_rows(ctx: Context, uid: str, conversation_id: str, revision: str, collection: str,
                   extraction: ExtractionResult) -> dict[str, dict[str, Any]]:
    """Action items / goals ("collection/id" → row) go to their own workflow collections, never into
    memories; ids are derived from the description, so writing them again changes nothing."""
    rows = extraction.action_items if collection == "action_items" else extraction.goals
    now = ctx.now()
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        row_id = ids.contract_hash(collection, {"uid": uid, "conversation": conversation_id,
                                                "description": " ".join(row.description.split()).casefold()})[:24]
        data: dict[str, Any] = {"id": row_id, "conversation_id": conversation_id, "description": row.description,
                                "quote": row.quote, "due": row.due, "created_at": now, "source": "conversation",
                                "revision": revision}
        if collection == "action_items":
            data["completed"] = False
        else:
            data["status"] = "active"
            data["title"] = row.description
        out[f"{collection}/{row_id}"] = data
    return out


def _count_workflow(result: CaptureResult, workflow: dict[str, dict[str, dict[str, Any]]]) -> None:
    result.action_items = len(workflow.get("action_items", {}))
    result.goals = len(workflow.get("goals", {}))
