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

The decisions are the planners of :mod:`core.domain.edit_planners`; this module checks the
request and names what the apply reads; a historical row an edit replaces is removed in its commit.
"""

from __future__ import annotations

from functools import partial

from core.domain import deletion_planners, edit_planners, endings, ids, legacy_rows, paths
from core.domain.edit_planners import assertion_path
from core.domain.plan import Planner
from core.domain.records import PRIMARY_CATEGORIES, MemoryItem
from core.domain.states import Status
from core.errors import BadRequest, NotFound
from core.ports import Ports, Step
from core.services import intake, legacy

MAX_CATEGORY = 64


def _replacing_rows(planner: Planner, memory_id: str) -> Planner:
    """``planner``, and in its commit the removal of the historical rows under ``memory_id`` the
    apply found (materialised now, or earlier by a write whose cleanup failed)."""
    return partial(deletion_planners.with_rows_removed, planner=planner, rows=legacy_rows.paths(memory_id))


def edit_content(ctx: Ports, uid: str, memory_id: str, content: str) -> MemoryItem:
    content = intake.checked_content(ctx, content, "value")
    intake.refuse_secrets(ctx, content)
    current = intake.get_item(ctx, uid, memory_id)
    if current is not None and current.record_status != Status.TOMBSTONED and current.content == content:
        return current  # the same text again (e.g. a client retry): nothing to change, nothing to journal
    survivor_id = current.superseded_by if current is not None and current.superseded_by != memory_id else None
    item_ids = [memory_id] + ([survivor_id] if survivor_id else [])
    doc_paths = [assertion_path(memory_id)] + ([assertion_path(survivor_id)] if survivor_id else [])

    plan = _replacing_rows(partial(edit_planners.edit_content, memory_id=memory_id, content=content,
                                   ttl_days=ctx.settings.short_term_ttl_days, slot=ctx.read_slot(content),
                                   sensitivity=ctx.sensitivity), memory_id)
    # The revision edited from is part of the key: editing back to an earlier text (A → B → A) is a
    # new operation, while a retried request against the same revision still replays.
    key = {"id": memory_id, "content_hash": ids.content_hash(content), "from_revision": current.revision if current else 0}
    edit = Step.of(uid, "edit.content", key, plan, clock=ctx.now, item_ids=item_ids,
                   doc_paths=[*doc_paths, *legacy_rows.paths(memory_id)], actor="user")
    # Required processing (normalised, sensitivity-labelled, secret-checked) in the same transaction,
    # its own ledger commit, as for an explicit create: the edited memory stays listed with its new
    # words, as Short-term, while consolidation re-admits it (a former Long-term item has no receipt
    # until then). An edit that changed nothing (the same text again, e.g. a client retry) processes
    # nothing.
    process = intake.process_step(ctx, uid, [memory_id], token=edit.work.mutation.op_id,
                                  when=lambda done: done[0].commit_id is not None)
    item_path = paths.memory_item(uid, memory_id)
    _, docs = ctx.store.apply_steps(uid, [edit, process], read_back=[item_path])
    data = docs.get(item_path)
    return MemoryItem.from_store(data) if data is not None else _fetch(ctx, uid, memory_id)


def set_visibility(ctx: Ports, uid: str, memory_id: str, visibility: str) -> MemoryItem:
    if visibility not in ("public", "private"):
        raise BadRequest("visibility must be public or private", code="validation_error")
    return _metadata_edit(ctx, uid, memory_id, "edit.visibility", visibility)


def set_category(ctx: Ports, uid: str, memory_id: str, category: str) -> MemoryItem:
    """Re-file a memory (metadata only; legacy category names are accepted and stored as given)."""
    category = (category or "").strip().lower()
    if not category or len(category) > MAX_CATEGORY or not category.replace("_", "").isalnum():
        raise BadRequest(f"category must be a category name such as {', '.join(PRIMARY_CATEGORIES)}",
                         code="validation_error")
    return _metadata_edit(ctx, uid, memory_id, "edit.category", category)


def set_user_review(ctx: Ports, uid: str, memory_id: str, value: bool) -> MemoryItem:
    return _metadata_edit(ctx, uid, memory_id, "edit.user_review", value)


def _metadata_edit(ctx: Ports, uid: str, memory_id: str, kind: str, value: object) -> MemoryItem:
    """The metadata edit ``kind`` to ``value`` as one revision
    (:func:`core.domain.edit_planners.edit_metadata`); an admitted Long-term item gets its receipt
    and graph assertion re-issued for that revision in the same transaction."""
    plan = _replacing_rows(partial(edit_planners.edit_metadata, memory_id=memory_id, kind=kind, value=value,
                                   ttl_days=ctx.settings.short_term_ttl_days,
                                   sensitivity=ctx.sensitivity), memory_id)
    sequence = ctx.store.head_sequence(uid)
    # The head sequence in the key makes a repeated flip after another change a new operation,
    # while a retried request at the same head stays a replay.
    ctx.store.apply(uid, kind, {"id": memory_id, "value": value, "head": sequence}, plan,
                    item_ids=[memory_id], actor="user",
                    doc_paths=[assertion_path(memory_id), *legacy_rows.paths(memory_id)])
    return _fetch(ctx, uid, memory_id)


def restore(ctx: Ports, uid: str, memory_id: str) -> MemoryItem:
    """The owner's undo of an automatic ending (:func:`core.domain.endings.restore`): the ended fact
    is current again beside the fact that ended it, and that statement never ends it again. 409
    ``not_ended`` for a memory no statement ended; a retried request at the same head replays."""
    item = _fetch(ctx, uid, memory_id)
    plan = partial(endings.restore, memory_id=memory_id)
    ctx.store.apply(uid, "edit.restore", {"id": memory_id, "head": ctx.store.head_sequence(uid)}, plan,
                    item_ids=[memory_id, *([item.superseded_by] if item.superseded_by else [])], actor="user")
    return _fetch(ctx, uid, memory_id)


def _fetch(ctx: Ports, uid: str, memory_id: str) -> MemoryItem:
    item = intake.get_item(ctx, uid, memory_id) or legacy.get(ctx, uid, memory_id)  # legacy: an edit to the same value
    if item is None:
        raise NotFound("no such memory")
    return item
