"""The canonical memory record (docs/data-model.md, "The memory record") and its evidence.

A :class:`MemoryItem` is what ``users/{uid}/memory_items/{id}`` stores. Derived fields
(``source_ids``, ``content_hash``, ``read_class``, ``pending_route``, ``restricted``) are recomputed by
:meth:`MemoryItem.settle` so they can never drift from the axes they summarise.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from core.domain import ids
from core.domain.slots import Slot, slot_key
from core.domain.states import (
    Layer,
    ProcessingState,
    Status,
    assert_legal_state,
    physical_status_to_record_status,
    read_class,
)

PRIMARY_CATEGORIES = ("interesting", "system", "manual", "workflow")
LEGACY_CATEGORY_MAP = {
    "core": "system", "hobbies": "system", "lifestyle": "system", "interests": "system", "habits": "system",
    "work": "system", "skills": "system", "learnings": "interesting", "other": "system", "auto": "system",
}
# Sensitivity labels (the detector, core.adapters.rules.sensitivity, says which a text carries):
# a secret (credential, secret) is never stored; any restricted label keeps a memory off every index.
RESTRICTED_LABELS = frozenset({
    "credential", "secret", "financial", "health", "intimate", "minor", "workplace_confidential",
    "identity_authentication",
})
SECRET_LABELS = frozenset({"credential", "secret"})
REDACTED = "[REDACTED]"
SUBJECT_ATTRIBUTIONS = ("user", "third_party", "unknown", "legacy_assumed")
Visibility = Literal["public", "private"]


def primary_category(category: str | None) -> str:
    """Legacy taxonomy → the primary four used by UI filters; unknown → interesting."""
    value = (category or "").strip().lower()
    if value in PRIMARY_CATEGORIES:
        return value
    return LEGACY_CATEGORY_MAP.get(value, "interesting")


def is_restricted(labels: Any) -> bool:
    """True when any label is in :data:`RESTRICTED_LABELS`."""
    return bool(set(labels or ()) & RESTRICTED_LABELS)


class Sensitivity(Protocol):
    """The secret detector a planner is handed (``Ports.sensitivity``); ``contains_secret(t)`` is
    exactly ``bool(label_sensitivity(t) & SECRET_LABELS)``, only cheaper."""

    def label_sensitivity(self, text: str) -> frozenset[str]: ...

    def contains_secret(self, text: str) -> bool: ...


class QuoteRef(BaseModel):
    """The words of one transcript segment a memory quotes: grounding yields it, evidence keeps it.

    ``segment`` is that segment's whole text, kept for vector search (the projection embeds it
    beside the content: the words around a fact are what a question about it shares); empty when
    the segment carries a secret or any restricted label, or where there is no transcript (an
    explicit memory). It goes wherever the quote goes: a withdrawal or retraction clears both. The
    public view and the export show ``segment_id`` and ``quote`` only."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    segment_id: str
    quote: str
    segment: str = ""


class Evidence(BaseModel):
    model_config = ConfigDict(extra="ignore")
    evidence_id: str
    source_type: str = "conversation"  # conversation | explicit | import | api | integration
    source_id: str
    source_signal: str = "transcription"
    extractor_id: str = ""
    extractor_version: str = ""
    quote_refs: list[QuoteRef] = Field(default_factory=list)
    client_device_id: str | None = None
    status: Literal["active", "tombstoned"] = "active"
    captured_at: datetime | None = None


def user_words(memory_id: str, content: str, *, signal: str, extractor_id: str, captured_at: datetime,
               source_type: str = "explicit", client_device_id: str | None = None) -> Evidence:
    """The user's own words as evidence for ``memory_id`` (an explicit memory, a content edit, a
    review's correction): the memory is its own source and ``content`` its one quote. The id binds
    the source, ``signal``, the extractor (version 1) and the content's hash, never the device, so
    the same words stated the same way again give the same evidence."""
    return Evidence(
        evidence_id=ids.evidence_id(memory_id, source_type, signal, extractor_id, "1",
                                    {"content_hash": ids.content_hash(content)}),
        source_type=source_type, source_id=memory_id, source_signal=signal, extractor_id=extractor_id,
        extractor_version="1", quote_refs=[QuoteRef(segment_id="explicit", quote=content)],
        client_device_id=client_device_id, captured_at=captured_at)


class MemoryItem(BaseModel):
    """One canonical memory. ``status`` may physically be ``hidden`` (maps to tombstoned)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    uid: str
    content: str
    layer: str = Layer.SHORT_TERM.value
    status: str = Status.ACTIVE.value
    processing_state: str = ProcessingState.PENDING.value
    category: str = "interesting"
    kind: str = "fact"
    visibility: str = "private"
    evidence: list[Evidence] = Field(default_factory=list)
    source_ids: list[str] = Field(default_factory=list)
    # Sources of the *active* evidence only: a source's live cohort (replacement and cascade page
    # through it, and an item leaves it once that source is withdrawn, so it does not grow for ever).
    active_source_ids: list[str] = Field(default_factory=list)
    conversation_id: str | None = None
    canonical_memory_id: str | None = None
    superseded_by: str | None = None
    supersedes: list[str] = Field(default_factory=list)
    # Consolidation.
    route: str | None = None  # promote | archive | review | reject once settled
    route_attempts: int = 0
    pending_route: bool = False
    review_id: str | None = None
    promotion: dict[str, Any] | None = None  # route audit + admission_receipt + graph_plan
    ledger_commit_id: str | None = None
    ledger_sequence: int | None = None
    graph_ready: bool = False
    graph_assertion_id: str | None = None
    graph_plan_hash: str | None = None
    grandfathered_long_term: bool = False
    expires_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    # Contract additions.
    revision: int = 0
    content_hash: str = ""
    sensitivity_labels: list[str] = Field(default_factory=list)
    restricted: bool = False
    subject_attribution: str = "user"
    subject_label: str | None = None
    capture_device_ids: list[str] = Field(default_factory=list)
    primary_capture_device: str | None = None
    manually_added: bool = False
    edited: bool = False
    reviewed: bool = False
    user_review: bool | None = None
    read_class: str = "hidden"
    # Set when the user deleted this memory (no content is kept): a re-extraction of the same source
    # with the same words derives the same id and is suppressed instead of bringing the fact back.
    deleted_by_user: bool = False
    # A historical row's paywall lock (``is_locked``), carried over when it is materialised: /v3
    # shows a locked memory's content truncated and refuses to delete it (402).
    locked: bool = False
    # Valid time (bi-temporal): when the fact became true (the day of the conversation that stated
    # it; unset: its ``created_at``) and when a later statement ended it (set by the supersession).
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    # The single- or multi-valued attribute the fact states (core.domain.slots), when one was read;
    # ``slot_key`` (subject and attribute, derived) lets consolidation find every current fact a
    # candidate could end, however large the account.
    slot: Slot | None = None
    slot_key: str | None = None
    # Facts the owner kept beside this one (a restore, or "keep both" in review): they never end it.
    kept_beside: list[str] = Field(default_factory=list)

    # ------------------------------------------------------------------ derived state
    @property
    def record_status(self) -> str:
        return physical_status_to_record_status(self.status)

    def settle(self) -> MemoryItem:
        """Recompute every derived field and check legality; returns self."""
        assert_legal_state(self.layer, self.status, self.processing_state)
        active_evidence = [e for e in self.evidence if e.status == "active"]
        sources = {e.source_id for e in self.evidence}
        if self.conversation_id:
            sources.add(self.conversation_id)
        self.source_ids = sorted(sources)
        self.active_source_ids = sorted({e.source_id for e in active_evidence})
        self.content_hash = ids.content_hash(self.content) if self.content else ""
        self.restricted = is_restricted(self.sensitivity_labels)
        self.read_class = read_class(self.layer, self.status, self.processing_state)
        # Awaiting its one terminal route: an active, unrouted Short-term item, processed or still
        # pending processing (consolidation processes the latter first, e.g. an edited Long-term fact).
        self.pending_route = (
            self.layer == Layer.SHORT_TERM and self.record_status == Status.ACTIVE
            and self.processing_state in (ProcessingState.PROCESSED, ProcessingState.PENDING)
            and self.route is None
        )
        devices = sorted({e.client_device_id for e in active_evidence if e.client_device_id})
        self.capture_device_ids = devices
        self.primary_capture_device = devices[0] if devices else None
        if self.layer != Layer.SHORT_TERM:
            self.expires_at = None
        self.slot_key = slot_key(self.slot, self.subject_attribution, self.subject_label)
        return self

    def evidence_ids(self) -> list[str]:
        return sorted(e.evidence_id for e in self.evidence if e.status == "active")

    def to_store(self) -> dict[str, Any]:
        return self.model_dump(mode="python")

    @classmethod
    def from_store(cls, data: dict[str, Any]) -> MemoryItem:
        return cls.model_validate(data)


def valid_since(item: MemoryItem) -> datetime | None:
    """When the fact became true: its ``valid_from``, else when it was recorded."""
    return item.valid_from or item.created_at


def valid_at(item: MemoryItem, when: datetime) -> bool:
    """Whether the fact was true at ``when``: begun by then and not yet ended (a fact with no known
    beginning counts as begun)."""
    since = valid_since(item)
    return (since is None or since <= when) and (item.valid_to is None or when < item.valid_to)


def expired(item: MemoryItem, now: datetime) -> bool:
    """TTL is an adjudication deadline, not a route: an unrouted active Short-term item past its
    deadline stays visible and is reported ``expired: true``."""
    return bool(
        item.layer == Layer.SHORT_TERM and item.route is None and item.expires_at is not None
        and item.expires_at <= now
    )


def short_term_deadline(now: datetime, ttl_days: int) -> datetime:
    return now + timedelta(days=ttl_days)


PUBLIC_FIELDS = (
    "id", "content", "layer", "category", "visibility", "created_at", "updated_at", "conversation_id",
    "source_ids", "canonical_memory_id", "expires_at", "reviewed", "user_review", "manually_added", "edited",
    "capture_device_ids",
)


def to_public(item: MemoryItem, now: datetime) -> dict[str, Any]:
    """The memory JSON every read returns. Internal axes, ledger fields and receipts stay inside."""
    out: dict[str, Any] = {}
    for name in PUBLIC_FIELDS:
        value = getattr(item, name)
        out[name] = value.isoformat() if isinstance(value, datetime) else value
    out["category"] = primary_category(item.category)
    out["expired"] = expired(item, now)
    out["subject_attribution"] = item.subject_attribution
    out["restricted"] = item.restricted
    since = valid_since(item)
    out["valid_from"] = since.isoformat() if since else None
    out["valid_to"] = item.valid_to.isoformat() if item.valid_to else None
    out["superseded_by"] = item.superseded_by if item.valid_to else None
    out["slot"] = item.slot.model_dump() if item.slot is not None else None
    out["evidence"] = [
        {
            "evidence_id": e.evidence_id, "source_type": e.source_type, "source_id": e.source_id,
            "quote_refs": [{"segment_id": q.segment_id, "quote": q.quote} for q in e.quote_refs], "client_device_id": e.client_device_id,
        }
        for e in item.evidence if e.status == "active"
    ]
    return out
