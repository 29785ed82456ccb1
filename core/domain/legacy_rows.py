"""Historical rows read as canonical memories, in memory only: the pure half of the historical
adapter (``core.services.legacy`` does the reading and the cleanup).

A ``memories`` row is grandfathered historical Long-term, a retired ``short_term`` row is
Short-term, a row's own lifecycle fields hold (``deleted`` hides it; ``superseded_by`` or
``invalid_at`` supersedes it), and the same id in both collections with different text is a
:class:`~core.errors.LegacyCollision` (docs/architecture.md, *Historical rows, read-only*). A
planner that edits or deletes a legacy row builds its successor with :func:`successor` from the
rows its apply read (:func:`paths`).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from core.domain import ids
from core.domain import paths as store_paths
from core.domain.records import Evidence, MemoryItem, Sensitivity
from core.domain.states import SHORT_TERM_TTL_DAYS, Layer, ProcessingState, Status
from core.errors import LegacyCollision

log = logging.getLogger(__name__)

COLLECTIONS = (store_paths.LEGACY_MEMORIES, store_paths.LEGACY_SHORT_TERM)  # precedence order: a ``memories`` row wins a same-text tie
# Retired Short-term rows in these states were settled away from the user in the original.
SHORT_TERM_GONE = frozenset({"rejected", "discarded", "deleted", "pruned", "archived", "expired"})
VISIBILITIES = ("public", "private")
LAYER_OF = {store_paths.LEGACY_MEMORIES: Layer.LONG_TERM.value, store_paths.LEGACY_SHORT_TERM: Layer.SHORT_TERM.value}  # without ``memory_tier``
TIERS = frozenset(layer.value for layer in Layer)
# The Short-term TTL's default, for callers without settings at hand (deletes: a tombstone keeps no deadline).
DEFAULT_TTL_DAYS = SHORT_TERM_TTL_DAYS


def paths(memory_id: str) -> list[str]:
    """The legacy document paths (relative to the user) that may hold ``memory_id``."""
    return [store_paths.rel(collection, memory_id) for collection in COLLECTIONS]


def _when(value: Any) -> datetime | None:
    return value if isinstance(value, datetime) and value.tzinfo is not None else None


def adapt(uid: str, memory_id: str, data: dict[str, Any], collection: str,
          ttl_days: int = DEFAULT_TTL_DAYS, *, sensitivity: Sensitivity) -> MemoryItem | None:
    """One legacy row as the memory it states (layer and status from the row's collection and own
    lifecycle fields), or None when the row is not one the user sees (deleted, pruned, settled
    away, without text, malformed). Builds nothing outside memory."""
    content = data.get("content")
    if not isinstance(content, str) or not content.strip() or data.get("deleted") is True:
        return None
    if collection == store_paths.LEGACY_SHORT_TERM and (data.get("soft_pruned_at") or str(data.get("status", "")) in SHORT_TERM_GONE):
        return None
    created = _when(data.get("created_at"))
    updated = _when(data.get("updated_at")) or created
    # ``memory_id`` is the original's older name for the conversation a row came from.
    conversation = data.get("conversation_id") or data.get("memory_id")
    try:
        layer, status = _lifecycle(memory_id, data, collection)
        item = _item(uid, memory_id, data, content, conversation, created, updated, sensitivity)
        item.layer, item.status = layer, status
        item.grandfathered_long_term = layer == Layer.LONG_TERM  # only a ``memories`` row reaches this
        if layer == Layer.SHORT_TERM:
            item.expires_at = _when(data.get("expires_at")) or (
                created + timedelta(days=ttl_days) if created is not None else None)
        return item.settle()
    except ValueError:  # a malformed row (a field of the wrong type) is not a memory anyone can see
        log.warning("legacy row %s/%s of %s is malformed; skipped", collection, memory_id, uid)
        return None


def _lifecycle(memory_id: str, data: dict[str, Any], collection: str) -> tuple[str, str]:
    """(layer, status) of a row. ``ValueError`` for values no lifecycle has (an unknown tier, a
    superseding id or invalidation date of the wrong type)."""
    layer = LAYER_OF[collection]
    tier = data.get("memory_tier")
    if collection == store_paths.LEGACY_MEMORIES and tier is not None:
        if tier not in TIERS:
            raise ValueError(f"memory_tier {tier!r} is not a layer")
        layer = str(tier)
    superseded_by, invalid_at = data.get("superseded_by"), data.get("invalid_at")
    if superseded_by is not None and not isinstance(superseded_by, str):
        raise ValueError("superseded_by is not an id")
    if invalid_at is not None and _when(invalid_at) is None:
        raise ValueError("invalid_at is not a date")
    superseded = bool(superseded_by and superseded_by != memory_id) or invalid_at is not None
    if superseded and layer == Layer.ARCHIVE:
        raise ValueError("an archived row cannot be superseded")  # no legal state states it (the legal-states table, docs/data-model.md)
    return layer, Status.SUPERSEDED.value if superseded else Status.ACTIVE.value


def _item(uid: str, memory_id: str, data: dict[str, Any], content: str, conversation: Any,
          created: datetime | None, updated: datetime | None, sensitivity: Sensitivity) -> MemoryItem:
    visibility = data.get("visibility")
    user_review = data.get("user_review")
    return MemoryItem(
        id=memory_id, uid=uid, content=content, layer=Layer.LONG_TERM.value, status=Status.ACTIVE.value,
        processing_state=ProcessingState.PROCESSED.value, grandfathered_long_term=True,
        category=str(data.get("category") or "interesting"), subject_attribution="legacy_assumed",
        # Labelled like any content (pure): a restricted old row stays out of every index once materialised.
        sensitivity_labels=sorted(sensitivity.label_sensitivity(content)),
        visibility=visibility if visibility in VISIBILITIES else "public",
        conversation_id=conversation if isinstance(conversation, str) and conversation else None,
        evidence=_evidence(memory_id, conversation, created),
        created_at=created, updated_at=updated,
        reviewed=data.get("reviewed") is True, user_review=user_review if isinstance(user_review, bool) else None,
        manually_added=data.get("manually_added") is True, edited=data.get("edited") is True,
        locked=data.get("is_locked") is True,
    )


def _evidence(memory_id: str, conversation: Any, created: datetime | None) -> list[Evidence]:
    """The row's provenance as one evidence entry of its conversation (no quote: legacy rows kept
    none), so a materialised successor is in that conversation's live cohort and a conversation
    delete withdraws it like any other memory."""
    if not isinstance(conversation, str) or not conversation:
        return []
    return [Evidence(evidence_id=ids.evidence_id(conversation, "conversation", "legacy_row", "legacy", "1",
                                                 {"memory_id": memory_id}),
                     source_type="conversation", source_id=conversation, source_signal="legacy_row",
                     extractor_id="legacy", extractor_version="1", captured_at=created)]


def resolve(uid: str, memory_id: str, rows: dict[str, dict[str, Any] | None],
            ttl_days: int = DEFAULT_TTL_DAYS, *, sensitivity: Sensitivity) -> MemoryItem | None:
    """The one memory the legacy rows under ``memory_id`` state (``rows``: collection → data or
    None), None when they state none; :class:`LegacyCollision` when they state two."""
    found = winner(uid, memory_id, rows, ttl_days, sensitivity=sensitivity)
    return found[1] if found else None


def winner(uid: str, memory_id: str, rows: dict[str, dict[str, Any] | None],
           ttl_days: int = DEFAULT_TTL_DAYS, *, sensitivity: Sensitivity) -> tuple[str, MemoryItem] | None:
    """(collection, memory) of the row :func:`resolve` picks: the first collection of
    :data:`COLLECTIONS` whose row states a memory."""
    stated = [(collection, item) for collection in COLLECTIONS
              if (data := rows.get(collection)) is not None
              and (item := adapt(uid, memory_id, data, collection, ttl_days, sensitivity=sensitivity))]
    if len({item.content for _, item in stated}) > 1:
        raise LegacyCollision(f"memory {memory_id} exists twice in the historical store with different text; "
                              "it is withheld until the rows are reconciled")
    return stated[0] if stated else None


def successor(uid: str, memory_id: str, docs: dict[str, dict[str, Any] | None],
              ttl_days: int = DEFAULT_TTL_DAYS, *, sensitivity: Sensitivity) -> MemoryItem | None:
    """For a planner: the legacy memory ``memory_id`` from the documents an apply read through
    ``doc_paths`` (:func:`paths`), as the canonical successor's starting point (revision 0, same
    id and timestamps, same layer: a retired Short-term row stays Short-term)."""
    rows = {collection: docs.get(store_paths.rel(collection, memory_id)) for collection in COLLECTIONS}
    return resolve(uid, memory_id, rows, ttl_days, sensitivity=sensitivity)
