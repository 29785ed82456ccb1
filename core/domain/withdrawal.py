"""Withdrawing a source from the memories it supports — shared by complete-source replacement
(capture), the conversation cascade and the user's deletes: the pure part, which planners call.

A withdrawal tombstones the source's evidence; an item left with no active evidence is retracted:
tombstoned with content, quotes, the route audit / admission receipt and the subject label cleared,
whatever its status was (active, superseded, hidden, expired). A retraction the user asked for is
marked ``deleted_by_user`` so re-extracting the same words from the same source cannot undo it.
"""

from __future__ import annotations

from typing import Any

from core.domain import endings, paths
from core.domain.admission import admit
from core.domain.plan import ApplyView, Plan
from core.domain.records import MemoryItem
from core.domain.review_queue import redact_reviews
from core.domain.states import Layer, ProcessingState, Status


def withdraw_source(item: MemoryItem, source_id: str, *, by_user: bool = False) -> MemoryItem:
    """Tombstone this source's evidence on ``item``; retract the item when nothing else supports it
    (``by_user``: the user deleted the source, so the retraction is the user's delete)."""
    item = item.model_copy(deep=True)
    for evidence in item.evidence:
        if evidence.source_id == source_id:
            evidence.status = "tombstoned"
            evidence.quote_refs = []
    if item.conversation_id == source_id:
        item.conversation_id = next((e.source_id for e in item.evidence if e.status == "active"
                                     and e.source_type == "conversation"), None)
    if not any(e.status == "active" for e in item.evidence):
        retract(item, by_user=by_user)
    return item


def scrubbed(item: MemoryItem) -> bool:
    """Physically tombstoned with nothing left to clear (``hidden`` items still hold content)."""
    return item.status == Status.TOMBSTONED.value and not item.content


def retract(item: MemoryItem, *, by_user: bool = False) -> None:
    """Tombstone with content cleared and evidence scrubbed, whatever the item's status was (active,
    superseded, hidden, expired). The route audit and admission receipt (``promotion``) and the
    subject label and the slot (its value is text) go too: a tombstone keeps no text. ``by_user`` marks a user's delete, which a
    re-extraction of the same words from the same source must not undo."""
    item.status = Status.TOMBSTONED.value
    item.content = ""
    item.route = item.route or None
    item.promotion = None
    item.subject_label = None
    item.slot = None  # its value is the fact's own words
    for evidence in item.evidence:
        evidence.status = "tombstoned"
        evidence.quote_refs = []
    if item.layer == Layer.LONG_TERM or item.layer == Layer.ARCHIVE:
        item.processing_state = ProcessingState.PROCESSED.value
    item.graph_ready = False
    if by_user:
        item.deleted_by_user = True


def apply_withdrawal(view: ApplyView, plan: Plan, changed: dict[str, MemoryItem], planner: str,
                     reviews: dict[str, dict[str, Any]] | None = None) -> None:
    """Finish a plan that withdrew evidence: Long-term survivors are re-admitted (their evidence
    changed), retracted survivors lose their graph assertion and have their review entries redacted
    (settled entries of the others lose any text they still hold), and superseded Long-term items
    they replaced come back when independent active evidence still supports them."""
    redact_reviews(view, plan, reviews or {}, retracted=lambda memory_id: _retracted(changed, memory_id))
    for item in list(changed.values()):
        path = paths.rel(paths.GRAPH_ASSERTIONS, item.id)
        if item.layer == Layer.LONG_TERM and item.record_status == Status.ACTIVE:
            plan.docs[path] = admit(item, revision=view.next_revision(item.id), commit_id=view.commit_id,
                                    now=view.now, planner="capture.readmit")
        elif item.record_status == Status.TOMBSTONED:
            plan.docs[path] = None
            endings.reactivate(view, plan, changed, item.supersedes, planner)
    plan.items = list(changed.values())


def _retracted(changed: dict[str, MemoryItem], memory_id: str | None) -> bool:
    item = changed.get(memory_id or "")
    return item is not None and item.record_status == Status.TOMBSTONED
