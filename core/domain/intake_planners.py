"""Explicit intake's planners as values: a memory the user states (API, import, plugin) enters
Short-term, pending, user-asserted, with the user's own words as its evidence; required processing
(normalisation, sensitivity labelling) then settles it ``processed`` in a second apply of the same
transaction (docs/architecture.md, *Explicit intake*). ``core.services.intake`` binds the
arguments (``functools.partial``) and runs both through ``Store.apply_steps``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.domain.plan import ApplyView, Plan
from core.domain.processing import processed
from core.domain.records import MemoryItem, Sensitivity, short_term_deadline, user_words
from core.domain.slots import Slot
from core.domain.states import Layer, ProcessingState, Status
from core.errors import Conflict

# An explicit memory's first id names a deleted memory: its id needs the salted search.
READDED = "explicit_readded"


@dataclass(frozen=True)
class ExplicitMemory:
    content: str
    category: str = "manual"
    visibility: str = "private"
    source_type: str = "explicit"
    client_device_id: str | None = None
    idempotency_key: str = ""


def create_explicit(view: ApplyView, *, requests: Sequence[ExplicitMemory], memory_ids: Sequence[str],
                    first: bool, ttl_days: int, slots: Sequence[Slot | None] | None = None) -> Plan:
    """Each request under its id as a new Short-term, pending, user-asserted fact whose evidence is
    the user's submission (whitespace collapsed), with the slot its words state (``slots``, read by
    the service through its port; none when absent). An id that already holds a memory is a replay and
    writes nothing; on the ``first`` (unsalted) ids, one that holds a tombstone is a
    :class:`Conflict` (``READDED``): re-adding deleted content gets a new id, never the tombstone."""
    out = Plan(summary={"created": 0})
    for index, (request, memory_id) in enumerate(zip(requests, memory_ids, strict=True)):
        current = view.items.get(memory_id)
        if first and current is not None and current.record_status == Status.TOMBSTONED:
            raise Conflict("this memory was deleted; it gets a new id", code=READDED)
        if current is not None:
            continue  # the same explicit memory already exists: a replay, not a new fact
        out.items.append(_new_item(view, request, memory_id, ttl_days, slots[index] if slots else None))
        out.summary["created"] += 1
    return out


def _new_item(view: ApplyView, request: ExplicitMemory, memory_id: str, ttl_days: int,
              slot: Slot | None) -> MemoryItem:
    content = " ".join(request.content.split())
    evidence = user_words(memory_id, content, signal="user_submission", extractor_id="api", captured_at=view.now,
                          source_type=request.source_type, client_device_id=request.client_device_id)
    return MemoryItem(
        id=memory_id, uid=view.uid, content=content, layer=Layer.SHORT_TERM, status=Status.ACTIVE,
        processing_state=ProcessingState.PENDING, category=request.category or "manual",
        visibility=request.visibility, evidence=[evidence], manually_added=True, kind="fact",
        subject_attribution="user", expires_at=short_term_deadline(view.now, ttl_days),
        slot=slot,  # the owner's own words: a plain statement of a declared attribute
    )


def settle_pending(view: ApplyView, *, memory_ids: Sequence[str], sensitivity: Sensitivity) -> Plan:
    """Required processing of ``memory_ids``: each active item still pending is settled
    :func:`processed`; anything else (gone, processed already, hidden, tombstoned) is left alone."""
    out = Plan(summary={"processed": 0})
    for memory_id in memory_ids:
        item = view.items.get(memory_id)
        if item is None or item.processing_state != ProcessingState.PENDING or item.record_status != Status.ACTIVE:
            continue
        out.items.append(processed(item, sensitivity=sensitivity))
        out.summary["processed"] += 1
    return out
