"""The user's edits as planners: module-level pure functions from the edit's
:class:`~core.domain.plan.ApplyView` to its :class:`~core.domain.plan.Plan`
(``core.services.edits`` validates the request, binds the arguments and applies them).

* Editing content is a new assertion by the user: the item returns to Short-term, pending,
  user-asserted, with the new words as its evidence (a Long-term item loses its receipt and its
  graph assertion until consolidation re-admits it), and leaves any lineage it was folded into.
* A metadata edit (visibility, category, the user's review flag) keeps the layer; an admitted
  Long-term item gets its receipt and graph assertion re-issued for the new revision in the same
  plan (``promotion.reissued_from`` names the receipt it replaces).

Either edit of an id without a canonical item materialises the historical row's successor from
the rows the apply read (:func:`core.domain.legacy_rows.paths`); the plan's summary then names the
id under ``legacy_rows`` so the service removes those rows afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from core.domain import legacy_rows, paths
from core.domain.admission import admit
from core.domain.plan import ApplyView, Plan
from core.domain.records import MemoryItem, Sensitivity, short_term_deadline, user_words
from core.domain.slots import Slot
from core.domain.states import Layer, ProcessingState, Status
from core.errors import NotFound, RetryableError


def assertion_path(memory_id: str) -> str:
    return paths.rel(paths.GRAPH_ASSERTIONS, memory_id)


def keeps_admission(item: MemoryItem) -> bool:
    """True for an admitted, active Long-term item: any write of it needs a receipt for the new revision."""
    return (item.layer == Layer.LONG_TERM and item.record_status == Status.ACTIVE
            and not item.grandfathered_long_term)


def editable(view: ApplyView, memory_id: str, ttl_days: int, sensitivity: Sensitivity) -> MemoryItem:
    """The item to edit (a copy): the canonical one, else the historical row's successor (same id,
    same ``created_at``), built from the legacy rows the apply read; a canonical tombstone
    suppresses the row (:class:`NotFound`, as for no item at all)."""
    item = view.items.get(memory_id)
    if item is None:
        item = legacy_rows.successor(view.uid, memory_id, view.docs, ttl_days, sensitivity=sensitivity)
        if item is None:
            raise NotFound("no such memory")
        return item
    if item.record_status == Status.TOMBSTONED:
        raise NotFound("no such memory")
    return item.model_copy(deep=True)


def edit_content(view: ApplyView, *, memory_id: str, content: str, ttl_days: int, slot: Slot | None = None,
                 sensitivity: Sensitivity) -> Plan:
    """``memory_id`` with ``content`` (already checked and normalised) as a new user assertion back
    in Short-term, pending, with a ``user_edit`` evidence entry quoting the new words and the slot
    they state (``slot``, read by the service; kept only for the owner's own fact); its graph
    assertion (if it was Long-term or has one) goes. The same text again writes nothing."""
    out = Plan()
    item = editable(view, memory_id, ttl_days, sensitivity)
    if item.content == content:
        return Plan()
    was_long_term = item.layer == Layer.LONG_TERM
    out.summary.update(edited=memory_id, was_long_term=was_long_term)
    item.content = content
    item.edited = True
    item.manually_added = True
    item.subject_attribution = "user" if item.subject_attribution == "legacy_assumed" else item.subject_attribution
    # The new words state what they state: the slot is read from them again (none when unread).
    item.slot = slot if item.subject_attribution == "user" else None
    item.grandfathered_long_term = False  # a new user assertion: re-admission is checked like any other
    _leave_lineage(view, out, item)
    item.layer = Layer.SHORT_TERM.value
    item.status = Status.ACTIVE.value
    item.processing_state = ProcessingState.PENDING.value
    item.route, item.route_attempts, item.review_id = None, 0, None
    item.promotion, item.graph_ready, item.graph_assertion_id, item.graph_plan_hash = None, False, None, None
    item.expires_at = short_term_deadline(view.now, ttl_days)
    item.evidence.append(user_words(memory_id, content, signal="user_edit", extractor_id="api", captured_at=view.now))
    out.items.insert(0, item)
    if was_long_term or view.docs.get(assertion_path(memory_id)) is not None:
        out.docs[assertion_path(memory_id)] = None
    return out


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
        plan.docs[assertion_path(survivor.id)] = admit(survivor, revision=view.next_revision(survivor.id),
                                                       commit_id=view.commit_id, now=view.now,
                                                       planner="edit.content.detach")
    plan.items.append(survivor)


def _set(item: MemoryItem, value: Any, *, field: str) -> bool:
    """Set ``field`` of ``item`` to ``value``; False when it holds that value already."""
    if getattr(item, field) == value:
        return False
    setattr(item, field, value)
    return True


def _user_review(item: MemoryItem, value: Any) -> bool:
    if item.reviewed and item.user_review == value:
        return False
    item.reviewed, item.user_review = True, value
    return True


# What each metadata edit changes on the item (True when it changed something).
METADATA: dict[str, Callable[[MemoryItem, Any], bool]] = {
    "edit.visibility": partial(_set, field="visibility"),
    "edit.category": partial(_set, field="category"),
    "edit.user_review": _user_review,
}


def edit_metadata(view: ApplyView, *, memory_id: str, kind: str, value: Any, ttl_days: int,
                  sensitivity: Sensitivity) -> Plan:
    """The metadata edit ``kind`` (a key of :data:`METADATA`) to ``value`` as one revision of
    ``memory_id`` in its layer; an admitted Long-term item gets its receipt and graph assertion
    re-issued for that revision. A value the item already has writes nothing."""
    out = Plan()
    item = editable(view, memory_id, ttl_days, sensitivity)
    if not METADATA[kind](item, value):
        return Plan()
    out.items.append(item)
    out.summary[kind.split(".", 1)[1]] = value
    if keeps_admission(item):
        previous = ((item.promotion or {}).get("admission_receipt") or {}).get("receipt_id")
        out.docs[assertion_path(memory_id)] = admit(item, revision=view.next_revision(memory_id),
                                                    commit_id=view.commit_id, now=view.now, planner=kind)
        if item.promotion is not None and previous:
            item.promotion["reissued_from"] = previous
    return out
