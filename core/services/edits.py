"""User edits: content, visibility, the user's own review flag.

Editing content is a new assertion by the user: the item returns to Short-term/pending as
user-asserted (a Long-term item loses its receipt, its graph assertion and — through the outbox —
its projections until consolidation re-admits it), then required processing settles it again.
"""

from __future__ import annotations

from core.adapters.firestore.apply import ApplyView, Plan, head_sequence
from core.bootstrap import Context
from core.domain import ids
from core.domain.records import Evidence, MemoryItem, QuoteRef, short_term_deadline
from core.domain.states import Layer, ProcessingState, Status
from core.errors import BadRequest, NotFound
from core.services import intake


def _editable(view: ApplyView, memory_id: str) -> MemoryItem:
    item = view.items.get(memory_id)
    if item is None or item.record_status == Status.TOMBSTONED:
        raise NotFound("no such memory")
    return item.model_copy(deep=True)


def edit_content(ctx: Context, uid: str, memory_id: str, content: str) -> MemoryItem:
    content = " ".join((content or "").split())
    if not content:
        raise BadRequest("value must not be empty", code="validation_error")
    if len(content) > ctx.settings.max_content_chars:
        raise BadRequest(f"value must be at most {ctx.settings.max_content_chars} characters", code="validation_error")
    intake.refuse_secrets(content)
    assertion_path = f"memory_graph_assertions/{memory_id}"

    def plan(view: ApplyView) -> Plan:
        item = _editable(view, memory_id)
        if item.content == content:
            return Plan()
        was_long_term = item.layer == Layer.LONG_TERM
        item.content = content
        item.edited = True
        item.manually_added = True
        item.subject_attribution = "user" if item.subject_attribution == "legacy_assumed" else item.subject_attribution
        item.layer = Layer.SHORT_TERM.value
        item.status = Status.ACTIVE.value
        item.processing_state = ProcessingState.PENDING.value
        item.route, item.route_attempts, item.review_id = None, 0, None
        item.promotion, item.graph_ready, item.graph_assertion_id, item.graph_plan_hash = None, False, None, None
        item.expires_at = short_term_deadline(view.now, ctx.settings.short_term_ttl_days)
        item.evidence.append(Evidence(
            evidence_id=ids.evidence_id(memory_id, "explicit", "user_edit", "api", "1",
                                        {"content_hash": ids.content_hash(content)}),
            source_type="explicit", source_id=memory_id, source_signal="user_edit", extractor_id="api",
            extractor_version="1", quote_refs=[QuoteRef(segment_id="explicit", quote=content)], captured_at=view.now,
        ))
        out = Plan(items=[item], summary={"edited": memory_id, "was_long_term": was_long_term})
        if was_long_term or view.docs.get(assertion_path) is not None:
            out.docs[assertion_path] = None
        return out

    current = intake.get_item(ctx, uid, memory_id)
    # The revision edited from is part of the key: editing back to an earlier text (A → B → A) is a
    # new operation, while a retried request against the same revision still replays.
    key = {"id": memory_id, "content_hash": ids.content_hash(content), "from_revision": current.revision if current else 0}
    result = ctx.engine.apply(uid, "edit.content", key, plan,
                              item_ids=[memory_id], doc_paths=[assertion_path], actor="user")
    if not result.summary.get("was_long_term"):
        # A Short-term edit is processed right away; a Long-term one stays pending (not shown by
        # default, not projected) until consolidation processes and re-admits it.
        intake.process_pending(ctx, uid, [memory_id], token=result.operation_id)
    return _fetch(ctx, uid, memory_id)


def set_visibility(ctx: Context, uid: str, memory_id: str, visibility: str) -> MemoryItem:
    if visibility not in ("public", "private"):
        raise BadRequest("visibility must be public or private", code="validation_error")

    def plan(view: ApplyView) -> Plan:
        item = _editable(view, memory_id)
        if item.visibility == visibility:
            return Plan()
        item.visibility = visibility
        return Plan(items=[item], summary={"visibility": visibility})

    _apply_flag(ctx, uid, memory_id, "edit.visibility", visibility, plan)
    return _fetch(ctx, uid, memory_id)


def set_user_review(ctx: Context, uid: str, memory_id: str, value: bool) -> MemoryItem:
    def plan(view: ApplyView) -> Plan:
        item = _editable(view, memory_id)
        if item.reviewed and item.user_review == value:
            return Plan()
        item.reviewed, item.user_review = True, value
        return Plan(items=[item], summary={"user_review": value})

    _apply_flag(ctx, uid, memory_id, "edit.user_review", value, plan)
    return _fetch(ctx, uid, memory_id)


def _apply_flag(ctx: Context, uid: str, memory_id: str, kind: str, value: object, planner: object) -> None:
    sequence = head_sequence(ctx.client, uid)
    # The head sequence in the key makes a repeated flip after another change a new operation,
    # while a retried request at the same head stays a replay.
    ctx.engine.apply(uid, kind, {"id": memory_id, "value": value, "head": sequence}, planner,  # type: ignore[arg-type]
                     item_ids=[memory_id], actor="user")


def _fetch(ctx: Context, uid: str, memory_id: str) -> MemoryItem:
    item = intake.get_item(ctx, uid, memory_id)
    if item is None:
        raise NotFound("no such memory")
    return item
