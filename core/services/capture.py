"""Conversation capture: a completed conversation becomes grounded Short-term memories.

One conversation revision (its segments / integration text and any reprocess token) is captured
exactly once. Three jobs run separately — memories, action items, goals — so one failing neither
blocks nor rolls back the others; each is idempotent and remembered in
``users/{uid}/capture_runs/{conversation_id}``, a path that does not fire the trigger.

The memories job is a *complete-source replacement* (Q7): the extraction is grounded first (any
candidate without a unique segment binding fails the whole replacement and the prior cohort stays
exactly as it was), then control-fenced applies replace the source's live cohort, walked in cursor
pages (one, usually): unchanged facts keep their ids, vanished ones lose this source's evidence and
are retracted when no evidence survives, superseded Long-term items that still have independent
evidence come back with a fresh admission. A fact the user deleted stays deleted when the same
words are extracted again. An extractor refusal is recorded and acknowledged; a transient failure
is retried. Once a delete of the conversation started (``cascade`` in its marker), nothing of it is
captured any more.

A model-backed extractor (``model_backed``: the LLM) is called at most ``STRATA_LLM_MAX_ATTEMPTS``
times per conversation revision, however often the trigger redelivers: each call is reserved on the
marker (``attempts``: revision, count, last error) in a transaction before it is made. A failed call
whose error is transient is retried by the trigger while attempts remain; a permanent one (a 4xx, a
refusal, a reply whose quotes do not ground) or the last attempt ends the model's turn, and then
``STRATA_LLM_ON_FAILURE`` decides: ``fall_back`` captures the revision with the rule extractor
(the marker's ``fell_back`` says why), ``fail`` records every job as failed with the error's code.
The marker's ``extractor`` names the extractor whose memories the revision holds.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time
from functools import partial
from typing import Any

from core import metering
from core.domain import fence, ids, paths, planners
from core.domain.changes import Change
from core.domain.documents import (
    JOBS,
    ActionItem,
    CaptureRun,
    Document,
    FellBack,
    Goal,
    ModelAttempts,
    WorkflowRow,
    attempts_of,
    conversation_revision,
)
from core.domain.extraction import (
    ExtractionResult,
    GroundedCandidate,
    drop_secret_candidates,
    ground_then_drop_secrets,
    source_from_conversation,
)
from core.domain.plan import MAX_ITEMS_PER_APPLY, Page
from core.domain.records import Evidence, MemoryItem, Sensitivity, short_term_deadline
from core.domain.states import Layer, ProcessingState, Status
from core.errors import (
    CohortMoved,
    Conflict,
    ConversationDeleted,
    GenerationChanged,
    PermanentError,
    StrataError,
    WritesDisabled,
)
from core.ports import Ports, Write
from core.services import controls, deletion
from core.services.withdrawal import live_page, review_rows

log = logging.getLogger(__name__)
COHORT_PAGE = 100  # live-cohort items per replacement transaction (plus the candidates)
MAX_PAGES = 2_000  # 200k derived items: far past any conversation; the loop stays bounded
RELEVANT_FIELDS = ("transcript_segments", "external_data", "reprocess_token", "status", "discarded")
Jobs = dict[str, bool | str]  # the marker's jobs of a revision: True when done, "failed: <code>" when failed for good


@dataclass
class CaptureResult:
    conversation_id: str
    revision: str
    skipped: str | None = None
    created: int = 0
    kept: int = 0
    retracted: int = 0
    suppressed: int = 0  # re-extracted facts the user had deleted: they stay deleted
    action_items: int = 0
    goals: int = 0
    commit_id: str | None = None
    errors: dict[str, str] = field(default_factory=dict)
    retry: list[str] = field(default_factory=list)  # jobs that failed transiently
    read: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # ``also_read``, as first read


def should_capture(doc: dict[str, Any] | None) -> bool:
    return bool(doc) and doc.get("status") == "completed" and not doc.get("discarded")  # type: ignore[union-attr]


def capture_conversation(ctx: Ports, uid: str, conversation_id: str, doc: dict[str, Any], *,
                         from_event: bool = False, also_read: Sequence[str] = ()) -> CaptureResult:
    """Capture ``doc`` (the event's payload, or the document a reprocess read). The account
    generation is read first: nothing is captured while a wipe runs, and every write below is refused
    if a wipe starts before it lands. ``from_event``: once the account has been wiped, an event whose
    conversation is gone or has changed since is stale (a late redelivery of the old generation's
    event) and is acknowledged without writing. ``also_read``: documents the caller needs next (the
    trigger's webhook config), read in the same first lookup and returned in ``result.read`` (empty
    when the capture stopped before reading anything)."""
    revision = conversation_revision(doc)
    result = CaptureResult(conversation_id, revision)
    if not should_capture(doc):
        result.skipped = "not_completed"
        return result
    run_ref = paths.capture_run(uid, conversation_id)
    conversation_ref = paths.conversation(uid, conversation_id)
    refs = [run_ref, paths.account_deletion(uid), *([conversation_ref] if from_event else [])]
    found = ctx.store.get_all([*refs, *also_read])  # one lookup for all of them
    result.read = {path: found[path] for path in also_read}
    account = fence.of(found[refs[1]])
    if account.deleting:
        result.skipped = "account_deleting"
        return result
    if from_event:
        # An event is a snapshot of one write: when the document has changed since (a later write
        # brings its own event) the event is stale and capturing it would bring back an older
        # transcript's facts. A document that is gone after a wipe is stale too (a deleted
        # conversation is refused by its cascade record below).
        current = found[conversation_ref]
        moved = current is not None and conversation_revision(current) != revision
        if moved or (current is None and account.wiped):
            result.skipped = "stale_event"
            return result
    try:
        with fence.expect(uid, account.generation):
            _capture(ctx, uid, conversation_id, doc, revision, run_ref, CaptureRun.from_store(found[run_ref]), result)
    except GenerationChanged:
        result.skipped = "account_generation_changed"
        result.retry = []
    return result


def _capture(ctx: Ports, uid: str, conversation_id: str, doc: dict[str, Any], revision: str, run_ref: str,
             run: CaptureRun, result: CaptureResult) -> None:
    done: Jobs = run.jobs_done(revision)
    skipped = _skipped(run, done)
    if skipped is not None:
        result.skipped = skipped
        return
    # No marker at all (or one that only counts model attempts): nothing of this conversation was
    # ever applied (the marker is written in the same commit as the memories), so there is no cohort
    # to read and no workflow row to merge into.
    first = not run.applied
    # Every capture that writes the marker counts up, so an operation key bound to the count is never
    # reused by a later capture (reverting an edit, A → B → A, captures A again instead of replaying
    # the first A), while a retry of this capture, before its marker is written, replays.
    captures = run.capture_count + 1
    source = source_from_conversation(uid, conversation_id, doc)
    turn = _ModelTurn(attempts_of(run, revision))
    # ``raw`` keeps the secret-bearing candidates: the memories job grounds every candidate before it
    # drops those (an ungrounded candidate fails the replacement whatever it says).
    raw = _extract(ctx, uid, conversation_id, run_ref, revision, captures, done, result, source, turn)
    if raw is None:
        return
    extraction = drop_secret_candidates(raw, sensitivity=ctx.sensitivity)
    device_id = _device_id(doc)
    workflow = {name: _workflow_rows(ctx, uid, conversation_id, revision, name, extraction)
                for name in JOBS[1:] if not done.get(name)}

    def marker(jobs: Jobs) -> CaptureRun:
        return _marker(ctx, revision, jobs, result, captures, extraction, turn)

    if not done.get("memories"):
        # When this is the first capture, the workflow rows and the marker ride in the memories'
        # apply commit: one commit instead of three, and the marker can never lag the memories.
        riders: dict[str, Document] = {}
        if first:
            riders = {**_flatten(workflow),
                      paths.rel(paths.CAPTURE_RUNS, conversation_id): marker({**done, **{job: True for job in JOBS}})}
        outcome = _memories_step(ctx, uid, conversation_id, revision, source, raw, device_id, result, done,
                                 first=first, riders=riders, captures=captures)
        if outcome == "committed":
            _count_workflow(result, workflow)
        if outcome is not None:
            return
    elif controls.is_on(ctx, controls.WRITES):  # no apply ran to check the incident switch
        result.errors["workflow"] = "writes are disabled by an incident switch; try again later"
        result.retry.append("workflow")
        return
    # The workflow jobs and the marker together, in one transaction that is fenced (no write lands
    # once a wipe began) and reads the marker first: once a delete of the conversation started (its
    # progress record is the marker), nothing is written and the delete's progress is not lost. A
    # failure here leaves the memories committed; the redelivered event replays their apply as a
    # no-op and writes these again (idempotent ids).
    for name in workflow:
        done[name] = True
    if not _write_marker(ctx, uid, run_ref, marker(done), _flatten(workflow)):
        result.skipped = "conversation_deleted"
        return
    _count_workflow(result, workflow)


def _skipped(run: CaptureRun, done: Jobs) -> str | None:
    """Why the capture writes nothing: a delete of the conversation began, or every job of this
    revision is done already; None when it goes on."""
    if run.deleting:
        return "conversation_deleted"
    if all(done.get(job) for job in JOBS):
        return "already_captured"
    return None


def _device_id(doc: dict[str, Any]) -> str | None:
    """The conversation's capture device, when it names one."""
    return doc.get("client_device_id") if isinstance(doc.get("client_device_id"), str) else None


def _flatten(workflow: Mapping[str, Mapping[str, WorkflowRow]]) -> dict[str, WorkflowRow]:
    """Every workflow job's rows, by path, in one map."""
    return {path: data for rows in workflow.values() for path, data in rows.items()}


def _marker(ctx: Ports, revision: str, jobs: Jobs, result: CaptureResult, captures: int,
            extraction: ExtractionResult, turn: _ModelTurn) -> CaptureRun:
    """The capture marker (``capture_runs/{conversation_id}``) recording ``jobs`` for ``revision``."""
    return CaptureRun(revision=revision, jobs=jobs, updated_at=ctx.now(), errors=dict(result.errors),
                      captures=captures,
                      extractor={"id": extraction.extractor_id, "version": extraction.extractor_version},
                      attempts=turn.attempts if turn.attempts.count else None,
                      fell_back=turn.fell_back)


def _extract(ctx: Ports, uid: str, conversation_id: str, run_ref: str, revision: str, captures: int,
             done: Jobs, result: CaptureResult, source: Any, turn: _ModelTurn) -> ExtractionResult | None:
    """The raw extraction (secret-bearing candidates kept), from the model within its turn or from
    the extractor; None when the capture stops here (the failure recorded in ``result``)."""
    if getattr(ctx.extractor, "model_backed", False):
        return _model_extraction(ctx, uid, conversation_id, run_ref, revision, captures, done, result, source, turn)
    try:
        return ctx.extractor.extract(source)
    except StrataError as exc:
        _extraction_failed(ctx, uid, conversation_id, run_ref, revision, captures, done, result, exc)
        return None


def _memories_step(ctx: Ports, uid: str, conversation_id: str, revision: str, source: Any, raw: ExtractionResult,
                   device_id: str | None, result: CaptureResult, done: Jobs, *, first: bool,
                   riders: Mapping[str, Document], captures: int) -> str | None:
    """Run the memories job: ``"committed"`` when the workflow rows and the marker rode in its
    commit (the capture is done), ``"stopped"`` when the capture ends here (the conversation is
    being deleted, the incident switch), None to go on with the workflow jobs (``done`` records
    the job, or its permanent failure)."""
    try:
        if _memories_job(ctx, uid, conversation_id, revision, source, raw, device_id, result,
                         first=first, riders=riders, captures=captures):
            return "committed"
        done["memories"] = True
    except GenerationChanged:
        raise
    except ConversationDeleted:
        result.skipped = "conversation_deleted"
        return "stopped"
    except WritesDisabled as exc:  # the incident switch: write nothing; the trigger retries later
        result.errors["memories"] = exc.message
        result.retry.append("memories")
        return "stopped"
    except StrataError as exc:
        result.errors["memories"] = exc.message
        if exc.retryable:
            result.retry.append("memories")
        else:  # permanent (e.g. grounding failed): record, do not retry forever
            done["memories"] = f"failed: {exc.code}"
    return None


# --------------------------------------------------------------------------- bounded model attempts
@dataclass
class _ModelTurn:
    attempts: ModelAttempts
    fell_back: FellBack | None = None


def _reserve_attempt(ctx: Ports, uid: str, run_ref: str, revision: str, turn: _ModelTurn) -> bool | None:
    """Count one model call for ``revision`` on the marker before it is made (compare and set, so
    concurrent deliveries never call more often than the bound). True: reserved; False: the bound
    is reached; None: the conversation is being deleted."""
    limit = ctx.settings.llm_max_attempts
    for _ in range(8):
        seen = turn.attempts.count
        if seen >= limit:
            return False
        now = ctx.now()
        reserved = turn.attempts.but(count=seen + 1, first_at=turn.attempts.first_at or now, last_at=now)

        def moved(stored: Mapping[str, Any] | None, seen: int = seen) -> bool:
            current = CaptureRun.from_store(stored)
            return current.deleting or attempts_of(current, revision).count != seen

        if ctx.store.write(Change("capture.reserve_attempt",
                                  [Write("set", run_ref, CaptureRun(attempts=reserved).to_store(), merge=True)],
                                  fenced=uid, guard=run_ref, refuse=moved)):
            turn.attempts = reserved
            return True
        current = CaptureRun.from_store(ctx.store.get(run_ref))
        if current.deleting:
            return None
        turn.attempts = attempts_of(current, revision)
    raise Conflict("the capture marker kept changing while a model attempt was reserved", code="capture_raced")


def _model_extraction(ctx: Ports, uid: str, conversation_id: str, run_ref: str, revision: str, captures: int,
                      done: Jobs, result: CaptureResult, source: Any,
                      turn: _ModelTurn) -> ExtractionResult | None:
    """The model's extraction, grounded before it is used; or, once the model's turn is over, the
    rule extractor's (``fall_back``). None: nothing more to do in this delivery (retry, recorded
    failure, or a delete started)."""
    reason: StrataError
    reserved = _reserve_attempt(ctx, uid, run_ref, revision, turn)
    if reserved is None:
        result.skipped = "conversation_deleted"
        return None
    if reserved:
        try:
            raw = ctx.extractor.extract(source)
            # A reply whose quotes do not ground is a bad reply, not a capture (grounded as the
            # memories job grounds: every candidate, secret-bearing ones too, without quoting them).
            ground_then_drop_secrets(source, raw, sensitivity=ctx.sensitivity)
            return raw
        except StrataError as exc:
            reason = exc
            metering.record_failure()
        now = ctx.now()
        turn.attempts = turn.attempts.but(last_error=reason.code, last_error_at=now)
        log.warning("model extraction of %s/%s failed (attempt %d of %d): %s: %s", uid, conversation_id,
                    turn.attempts.count, ctx.settings.llm_max_attempts, reason.code, reason.message)
        if reason.retryable and turn.attempts.count < ctx.settings.llm_max_attempts:
            # Remember why, then let the trigger redeliver (the next delivery is the next attempt).
            ctx.store.write(Change("capture.attempt_failed",
                                   [Write("set", run_ref, CaptureRun(attempts=turn.attempts).to_store(), merge=True)],
                                   fenced=uid, guard=run_ref, refuse=deleting))
            for job in JOBS:
                if not done.get(job):
                    result.errors[job] = reason.message
            result.retry = [job for job in JOBS if not done.get(job)]
            return None
    else:
        last = turn.attempts.last_error or "llm_attempts_exhausted"
        reason = PermanentError(f"the model was called {turn.attempts.count} times for this revision ({last})",
                                code=str(last))
    code = reason.code
    if ctx.settings.llm_on_failure == "fail":
        failure = PermanentError(f"model extraction gave up after {turn.attempts.count} attempt(s): "
                                 f"{reason.message}", code=code)
        _extraction_failed(ctx, uid, conversation_id, run_ref, revision, captures, done, result, failure,
                           attempts=turn.attempts)
        return None
    log.error("model extraction of %s/%s gave up after %d attempt(s) (%s); captured with the rule extractor",
              uid, conversation_id, turn.attempts.count, code)
    turn.fell_back = FellBack(reason=code, attempts=turn.attempts.count, at=ctx.now())
    metering.record_fallback()
    return ctx.fallback_extractor.extract(source)


def deleting(run: Mapping[str, Any] | None) -> bool:
    """The stored capture marker says the conversation is being (or was) deleted: no capture may write."""
    return CaptureRun.from_store(run).deleting


def _write_marker(ctx: Ports, uid: str, run_ref: str, run: CaptureRun,
                  rows: Mapping[str, WorkflowRow] | None = None) -> bool:
    """Write the capture marker (and workflow rows) in one transaction that reads the marker first:
    once a delete of the conversation started (the marker is its progress record) nothing is
    written, so the delete's progress is never overwritten. False when refused."""
    writes = [Write("set", paths.doc(uid, *path.split("/")), row.to_store(), merge=True)
              for path, row in (rows or {}).items()]
    return bool(ctx.store.write(Change("capture.marker", [*writes, Write("set", run_ref, run.to_store())],
                                       fenced=uid, guard=run_ref, refuse=deleting)))


def _extraction_failed(ctx: Ports, uid: str, conversation_id: str, run_ref: str, revision: str, captures: int,
                       done: Jobs, result: CaptureResult, exc: StrataError, *,
                       attempts: ModelAttempts | None = None) -> CaptureResult:
    """The extractor failed. Transient: nothing is written, the event is retried. Permanent (e.g.
    ``LLMRejected``): recorded as failed for this revision and acknowledged; the prior memories stay."""
    pending = [job for job in JOBS if not done.get(job)]
    for job in pending:
        result.errors[job] = exc.message
    if exc.retryable:
        result.retry = pending
        return result
    log.warning("extraction of %s/%s refused for good (%s); recorded, not retried", uid, conversation_id, exc.code)
    jobs = {**done, **{job: f"failed: {exc.code}" for job in pending}}
    run = CaptureRun(revision=revision, jobs=jobs, updated_at=ctx.now(), errors=dict(result.errors),
                     captures=captures, attempts=attempts)
    if not _write_marker(ctx, uid, run_ref, run):
        result.skipped = "conversation_deleted"
    return result


def _memories_job(ctx: Ports, uid: str, conversation_id: str, revision: str, source: Any,
                  extraction: ExtractionResult, device_id: str | None, result: CaptureResult, *,
                  first: bool = False, riders: Mapping[str, Document] | None = None, captures: int = 0) -> bool:
    """Apply the extraction; True when ``riders`` were committed with it (False: write them apart).

    Every candidate is grounded before secret-bearing ones are dropped, so an ungrounded one fails
    the replacement whatever it says. An extraction whose candidates all disclosed a secret is not
    an empty result: it states nothing storable, and the source's prior memories stay as they are."""
    grounded, secrets = ground_then_drop_secrets(source, extraction, sensitivity=ctx.sensitivity)  # GroundingError: nothing is applied
    extraction = drop_secret_candidates(extraction, sensitivity=ctx.sensitivity)
    signal = "integration" if source.external_text else "transcription"
    if not grounded and secrets:
        return False  # only secrets: nothing storable, and the source's prior memories stay as they are
    # A successful extraction replaces the source across all stores: the historical rows that cite it
    # too (the original's extraction of the same conversation), first capture or not.
    result.retracted += deletion.retract_historical(ctx, uid, conversation_id, "capture.replace", by_user=False,
                                                    key={"revision": revision, "captures": captures})
    if first and not grounded:
        return False  # nothing to create and, on a first capture, no canonical cohort to retract
    try:
        return replace_source(ctx, uid, conversation_id, revision, grounded, extraction, signal, device_id, result,
                              first=first, riders=riders, captures=captures, valid_from=session_start(source))
    except Conflict as exc:
        if exc.code != "capture_raced":
            raise
        # Another capture of this conversation committed since the marker was read: do it the long way.
        return replace_source(ctx, uid, conversation_id, revision, grounded, extraction, signal, device_id, result,
                              captures=captures, valid_from=session_start(source))


def session_start(source: Any) -> datetime | None:
    """When the facts a conversation states became true, as far as it tells: the start of the day
    it took place (``started_at``), UTC; None when it does not say (capture time is used then)."""
    day = getattr(source, "session_date", None)
    return datetime.combine(day, time.min, tzinfo=UTC) if day is not None else None


def _candidate_item(uid: str, conversation_id: str, g: GroundedCandidate, extraction: ExtractionResult,
                    signal: str, device_id: str | None, now: Any, ttl_days: int,
                    valid_from: datetime | None = None, *, sensitivity: Sensitivity) -> MemoryItem:
    c = g.candidate
    label = c.subject_label if g.subject != "user" else None
    memory_id = ids.extracted_memory_id(uid, conversation_id, c.content, label)
    refs = list(g.quote_refs)
    evidence = Evidence(
        evidence_id=ids.evidence_id(conversation_id, "conversation", signal, extraction.extractor_id,
                                    extraction.extractor_version, [[r.segment_id, r.quote] for r in refs]),
        source_type="conversation", source_id=conversation_id, source_signal=signal,
        extractor_id=extraction.extractor_id, extractor_version=extraction.extractor_version, quote_refs=refs,
        client_device_id=device_id, captured_at=now,
    )
    labels = sorted(set(c.sensitivity) | sensitivity.label_sensitivity(c.content))
    return MemoryItem(
        id=memory_id, uid=uid, content=c.content, layer=Layer.SHORT_TERM, status=Status.ACTIVE,
        processing_state=ProcessingState.PROCESSED, category=c.category, kind=c.kind, evidence=[evidence],
        conversation_id=conversation_id, sensitivity_labels=labels, subject_attribution=g.subject,
        subject_label=c.subject_label, expires_at=short_term_deadline(now, ttl_days),
        valid_from=valid_from if valid_from is not None and valid_from <= now else now, slot=c.slot,
    )


def replace_source(ctx: Ports, uid: str, conversation_id: str, revision: str,
                   grounded: tuple[GroundedCandidate, ...], extraction: ExtractionResult, signal: str,
                   device_id: str | None, result: CaptureResult, *, first: bool = False,
                   riders: Mapping[str, Document] | None = None, captures: int = 0,
                   valid_from: datetime | None = None) -> bool:
    """Replace the source's cohort with ``grounded``; True when ``riders`` (extra documents, on a
    ``first`` capture) were committed with it. ``first`` (the caller saw no capture marker) skips the
    cohort reads; the transaction re-checks the marker and raises ``capture_raced`` if a capture got
    there first. Each transaction's plan is :func:`core.domain.planners.replace_page`.

    The source's live cohort (items its active evidence supports) is walked in cursor pages, one
    bounded control-fenced transaction each; the last page also creates and keeps the candidates,
    so a cohort of any size is replaced (a small one, the usual case, in one transaction). Each page's
    operation key carries the page's cursor: a redelivered capture replays the pages already done and
    resumes after them. A fact the user deleted is not brought back by its re-extraction."""
    now = ctx.now()
    marker_path = paths.rel(paths.CAPTURE_RUNS, conversation_id)
    candidates: dict[str, MemoryItem] = {}
    for g in grounded:
        item = _candidate_item(uid, conversation_id, g, extraction, signal, device_id, now,
                               ctx.settings.short_term_ttl_days, valid_from, sensitivity=ctx.sensitivity)
        candidates.setdefault(item.id, item)
    size = max(10, min(COHORT_PAGE, MAX_ITEMS_PER_APPLY - len(candidates)))

    if first:
        applied = ctx.store.apply(
            uid, "capture.replace", {"source": conversation_id, "revision": revision, "captures": captures},
            partial(planners.replace_page, conversation_id=conversation_id, candidates=candidates, first=True,
                    riders={path: doc.to_store() for path, doc in (riders or {}).items()}),
            item_ids=candidates, follow_lineage=True, doc_paths=[marker_path])
        _add(result, applied)
        # The plan notes whether the riders went with it (notes are empty on a replay).
        return bool(applied.notes.get("riders")) and applied.commit_id is not None and not applied.replayed
    after: str | None = None
    for _page in range(MAX_PAGES):
        for _attempt in range(6):
            page_ids = live_page(ctx, uid, conversation_id, size, after)
            reviews = review_rows(ctx, uid, [*page_ids, *candidates])
            key = {"source": conversation_id, "revision": revision, "captures": captures, "after": after}
            plan = partial(planners.replace_page, conversation_id=conversation_id, candidates=candidates,
                           first=False, seen=frozenset(page_ids), reviews=reviews)
            try:
                applied = ctx.store.apply(
                    uid, "capture.replace", key, plan, item_ids=candidates,
                    item_queries={"cohort": ("items_by_active_source", {"active_source_ids": conversation_id},
                                             Page(size, after))},
                    follow_lineage=True, doc_paths=[marker_path, *(paths.rel(paths.REVIEW_QUEUE, r) for r in reviews)])
                break
            except CohortMoved:
                continue
        else:
            raise CohortMoved("the conversation's memories kept changing during the replacement; try again")
        _add(result, applied)
        if applied.summary.get("last", True):
            return False
        after = applied.summary.get("after")
    raise Conflict("the conversation has more derived memories than one replacement walks", code="too_many_items")


def _add(result: CaptureResult, applied: Any) -> None:
    summary = applied.summary
    result.created += summary.get("created", 0)
    result.kept += summary.get("kept", 0)
    result.retracted += summary.get("retracted", 0)
    result.suppressed += summary.get("suppressed", 0)
    result.commit_id = applied.commit_id or result.commit_id




def _workflow_rows(ctx: Ports, uid: str, conversation_id: str, revision: str, collection: str,
                   extraction: ExtractionResult) -> dict[str, WorkflowRow]:
    """Action items / goals ("collection/id" → row) go to their own workflow collections, never into
    memories; ids are derived from the description, so writing them again changes nothing."""
    kind: type[WorkflowRow] = ActionItem if collection == paths.ACTION_ITEMS else Goal
    now = ctx.now()
    out: dict[str, WorkflowRow] = {}
    for row in extraction.action_items if kind is ActionItem else extraction.goals:
        row_id = ids.contract_hash(collection, {"uid": uid, "conversation": conversation_id,
                                                "description": " ".join(row.description.split()).casefold()})[:24]
        made = kind(id=row_id, conversation_id=conversation_id, description=row.description, quote=row.quote,
                    due=row.due, created_at=now, revision=revision)
        out[paths.rel(collection, row_id)] = made.but(title=row.description) if isinstance(made, Goal) else made
    return out


def _count_workflow(result: CaptureResult, workflow: Mapping[str, Mapping[str, WorkflowRow]]) -> None:
    result.action_items = len(workflow.get("action_items", {}))
    result.goals = len(workflow.get("goals", {}))
