"""User edits: content, visibility, category, the user's own review flag.

Every edit is one ledger revision of the item, and every revision is legal:

* Editing content is a new assertion by the user: the item returns to Short-term as
  user-asserted (a Long-term item loses its receipt and its graph assertion until consolidation
  re-admits it), and required processing settles it ``processed`` in the same request, as for an
  explicit create, so the memory stays listed (and projected) with its new words meanwhile.
* A metadata edit (visibility, category, review flag) keeps an admitted Long-term item in
  Long-term. Its admission receipt binds the revision (and the graph plan, which holds the
  category), so the same transaction re-issues the receipt and the graph assertion for the new
  revision (``promotion.reissued_from`` names the receipt it replaces). The admission validator is
  unchanged: it checks these writes exactly as it checks a promotion.
"""

from __future__ import annotations

from collections.abc import Callable

from core.domain import ids, paths
from core.domain.admission import admit
from core.domain.plan import ApplyView, Plan
from core.domain.records import PRIMARY_CATEGORIES, Evidence, MemoryItem, QuoteRef, short_term_deadline
from core.domain.states import Layer, ProcessingState, Status
from core.errors import BadRequest, NotFound, RetryableError
from core.ports import Ports
from core.services import intake, legacy

MAX_CATEGORY = 64


def _editable(view: ApplyView, memory_id: str, plan: Plan, ttl_days: int) -> MemoryItem:
    """The item to edit: the canonical one, else the historical row's successor (same id, same
    ``created_at``), built from the legacy rows this transaction read (``legacy.paths``); a
    canonical tombstone suppresses the row. When a legacy row is still there (materialised now, or
    earlier with a cleanup that failed), ``plan`` is marked so the caller removes it."""
    if any(view.docs.get(path) is not None for path in legacy.paths(memory_id)):
        plan.summary["legacy_rows"] = memory_id
    item = view.items.get(memory_id)
    if item is None:
        item = legacy.successor(view.uid, memory_id, view.docs, ttl_days)
        if item is None:
            raise NotFound("no such memory")
        return item
    if item.record_status == Status.TOMBSTONED:
        raise NotFound("no such memory")
    return item.model_copy(deep=True)


def _cleanup(ctx: Ports, uid: str, summary: dict[str, object]) -> None:
    """After an apply that found historical rows under the edited id: remove them (idempotent,
    best effort; the canonical item suppresses them either way)."""
    memory_id = summary.get("legacy_rows")
    if isinstance(memory_id, str):
        legacy.cleanup(ctx, uid, [memory_id])


def edit_content(ctx: Ports, uid: str, memory_id: str, content: str) -> MemoryItem:
    content = intake.checked_content(ctx, content, "value")
    intake.refuse_secrets(content)
    assertion_path = _assertion_path(memory_id)

    current = intake.get_item(ctx, uid, memory_id)
    if current is not None and current.record_status != Status.TOMBSTONED and current.content == content:
        return current  # the same text again (e.g. a client retry): nothing to change, nothing to journal
    survivor_id = current.superseded_by if current is not None and current.superseded_by != memory_id else None
    item_ids = [memory_id] + ([survivor_id] if survivor_id else [])
    doc_paths = [assertion_path] + ([_assertion_path(survivor_id)] if survivor_id else [])

    def plan(view: ApplyView) -> Plan:
        out = Plan()
        item = _editable(view, memory_id, out, ctx.settings.short_term_ttl_days)
        if item.content == content:
            return Plan()
        was_long_term = item.layer == Layer.LONG_TERM
        out.summary.update(edited=memory_id, was_long_term=was_long_term)
        item.content = content
        item.edited = True
        item.manually_added = True
        item.subject_attribution = "user" if item.subject_attribution == "legacy_assumed" else item.subject_attribution
        item.grandfathered_long_term = False  # a new user assertion: re-admission is checked like any other
        _leave_lineage(view, out, item)
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
        out.items.insert(0, item)
        if was_long_term or view.docs.get(assertion_path) is not None:
            out.docs[assertion_path] = None
        return out

    # The revision edited from is part of the key: editing back to an earlier text (A → B → A) is a
    # new operation, while a retried request against the same revision still replays.
    key = {"id": memory_id, "content_hash": ids.content_hash(content), "from_revision": current.revision if current else 0}
    edit = ctx.store.step(uid, "edit.content", key, plan, item_ids=item_ids,
                          doc_paths=[*doc_paths, *legacy.paths(memory_id)], actor="user")
    # Required processing (normalised, sensitivity-labelled, secret-checked) in the same transaction,
    # its own ledger commit, as for an explicit create: the edited memory stays listed with its new
    # words, as Short-term, while consolidation re-admits it (a former Long-term item has no receipt
    # until then). An edit that changed nothing (the same text again, e.g. a client retry) processes
    # nothing.
    process = intake.process_step(ctx, uid, [memory_id], token=edit.work.mutation.op_id,
                                  when=lambda done: done[0].commit_id is not None)
    item_path = paths.memory_item(uid, memory_id)
    (result, _), docs = ctx.store.apply_steps(uid, [edit, process], read_back=[item_path])
    if result is not None:
        _cleanup(ctx, uid, result.summary)
    data = docs.get(item_path)
    return MemoryItem.from_store(data) if data is not None else _fetch(ctx, uid, memory_id)


def _leave_lineage(view: ApplyView, plan: Plan, item: MemoryItem) -> None:
    """An edited item is a new assertion that stands on its own: it stops being an alias or a
    superseded ancestor (otherwise reads would fold it into its survivor and deleting the survivor
    would delete it). A survivor that listed it in ``supersedes`` drops it, and is re-admitted
    in the same transaction when it is an admitted Long-term item (its receipt binds that set)."""
    survivor_id = item.superseded_by
    item.superseded_by, item.canonical_memory_id = None, None
    if survivor_id is None or survivor_id == item.id:
        return
    if survivor_id not in view.items:  # the lineage moved since the edit read it
        raise RetryableError("the memory changed while it was being edited; retry", code="contended")
    survivor = view.items[survivor_id]
    if survivor is None or item.id not in survivor.supersedes:
        return
    survivor = survivor.model_copy(deep=True)
    survivor.supersedes = [mid for mid in survivor.supersedes if mid != item.id]
    if keeps_admission(survivor):
        plan.docs[_assertion_path(survivor.id)] = admit(survivor, revision=view.next_revision(survivor.id),
                                                        commit_id=view.commit_id, now=view.now,
                                                        planner="edit.content.detach")
    plan.items.append(survivor)


def set_visibility(ctx: Ports, uid: str, memory_id: str, visibility: str) -> MemoryItem:
    if visibility not in ("public", "private"):
        raise BadRequest("visibility must be public or private", code="validation_error")

    def change(item: MemoryItem) -> bool:
        if item.visibility == visibility:
            return False
        item.visibility = visibility
        return True

    return _metadata_edit(ctx, uid, memory_id, "edit.visibility", visibility, change)


def set_category(ctx: Ports, uid: str, memory_id: str, category: str) -> MemoryItem:
    """Re-file a memory (metadata only; legacy category names are accepted and stored as given)."""
    category = (category or "").strip().lower()
    if not category or len(category) > MAX_CATEGORY or not category.replace("_", "").isalnum():
        raise BadRequest(f"category must be a category name such as {', '.join(PRIMARY_CATEGORIES)}",
                         code="validation_error")

    def change(item: MemoryItem) -> bool:
        if item.category == category:
            return False
        item.category = category
        return True

    return _metadata_edit(ctx, uid, memory_id, "edit.category", category, change)


def set_user_review(ctx: Ports, uid: str, memory_id: str, value: bool) -> MemoryItem:
    def change(item: MemoryItem) -> bool:
        if item.reviewed and item.user_review == value:
            return False
        item.reviewed, item.user_review = True, value
        return True

    return _metadata_edit(ctx, uid, memory_id, "edit.user_review", value, change)


def _assertion_path(memory_id: str) -> str:
    return paths.rel(paths.GRAPH_ASSERTIONS, memory_id)


def keeps_admission(item: MemoryItem) -> bool:
    """True for an admitted, active Long-term item: any write of it needs a receipt for the new revision."""
    return (item.layer == Layer.LONG_TERM and item.record_status == Status.ACTIVE
            and not item.grandfathered_long_term)


def _metadata_edit(ctx: Ports, uid: str, memory_id: str, kind: str, value: object,
                   change: Callable[[MemoryItem], bool]) -> MemoryItem:
    """Apply ``change`` (True when it changed something) as one revision; an admitted Long-term item
    gets its receipt and graph assertion re-issued for that revision in the same transaction."""
    assertion_path = _assertion_path(memory_id)

    def plan(view: ApplyView) -> Plan:
        out = Plan()
        item = _editable(view, memory_id, out, ctx.settings.short_term_ttl_days)
        if not change(item):
            return Plan()
        out.items.append(item)
        out.summary[kind.split(".", 1)[1]] = value
        if keeps_admission(item):
            previous = ((item.promotion or {}).get("admission_receipt") or {}).get("receipt_id")
            out.docs[assertion_path] = admit(item, revision=view.next_revision(memory_id), commit_id=view.commit_id,
                                             now=view.now, planner=kind)
            if item.promotion is not None and previous:
                item.promotion["reissued_from"] = previous
        return out

    sequence = ctx.store.head_sequence(uid)
    # The head sequence in the key makes a repeated flip after another change a new operation,
    # while a retried request at the same head stays a replay.
    result = ctx.store.apply(uid, kind, {"id": memory_id, "value": value, "head": sequence}, plan,
                             item_ids=[memory_id], doc_paths=[assertion_path, *legacy.paths(memory_id)], actor="user")
    _cleanup(ctx, uid, result.summary)
    return _fetch(ctx, uid, memory_id)


def _fetch(ctx: Ports, uid: str, memory_id: str) -> MemoryItem:
    item = intake.get_item(ctx, uid, memory_id) or legacy.get(ctx, uid, memory_id)  # legacy: an edit to the same value
    if item is None:
        raise NotFound("no such memory")
    return item
