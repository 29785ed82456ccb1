"""The projection as a plan: what the keyword and vector indexes must do so that they match the
current state of a drain batch's memories. Pure: the batch's events and the items as read in, the
rows to upsert, the memories to delete and the purges out; the provider calls are the project
handler's (:mod:`core.services.indexing`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.domain import ids
from core.domain.documents import OutboxEvent
from core.domain.plan import is_projectable, projected_context, projected_quote
from core.domain.records import MemoryItem, Sensitivity

PURGEABLE = ("typesense", "vector", "graph")


@dataclass(frozen=True)
class ProjectionDoc:
    """What a keyword/vector index stores for one visible, unrestricted memory."""

    provider_id: str  # memproj:<hash(uid, memory_id)>
    uid: str
    memory_id: str
    layer: str
    revision: int
    content: str
    category: str = "interesting"
    updated_at: float = 0.0  # epoch seconds
    quote: str = ""  # the evidence quotes (the user's words), a lower-weighted keyword field
    context: str = ""  # the quoted segments' whole text, embedded beside the content (never stored as text)
    capture_device_ids: tuple[str, ...] = ()  # the client devices it was captured on (device-scoped search)


@dataclass(frozen=True)
class Projection:
    """One batch's plan: per index, its user purge first, then the deletes, then the upserts."""

    upserts: list[ProjectionDoc] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    purged: frozenset[str] = frozenset()  # of PURGEABLE


def memory_ids(events: list[OutboxEvent]) -> list[str]:
    return sorted({e.memory_id for e in events if e.memory_id})


def plan(uid: str, events: list[OutboxEvent], items: dict[str, MemoryItem], fenced: bool, *,
         sensitivity: Sensitivity) -> Projection:
    """A memory is upserted when it exists, is projectable and the account is not fenced; deleted
    otherwise (restricted, hidden, tombstoned, fenced, archived). Purged: what the batch's
    ``purge_user`` events name."""
    upserts, deletes = rows(uid, memory_ids(events), items, fenced, sensitivity=sensitivity)
    return Projection(upserts, deletes, frozenset(purged_providers(events)))


def rows(uid: str, memory_ids: list[str], items: dict[str, MemoryItem], fenced: bool, *,
         sensitivity: Sensitivity) -> tuple[list[ProjectionDoc], list[str]]:
    """(the rows to upsert, the memory ids to delete) of :func:`plan`."""
    upserts: list[ProjectionDoc] = []
    deletes: list[str] = []
    for memory_id in memory_ids:
        item = items.get(memory_id)
        if item is not None and not fenced and is_projectable(item):
            upserts.append(ProjectionDoc(
                provider_id=ids.provider_id(uid, memory_id), uid=uid, memory_id=memory_id, layer=item.layer,
                revision=item.revision, content=item.content, category=item.category,
                updated_at=item.updated_at.timestamp() if item.updated_at else 0.0, quote=projected_quote(item, sensitivity=sensitivity),
                context=projected_context(item), capture_device_ids=tuple(item.capture_device_ids)))
        else:
            deletes.append(memory_id)
    return upserts, deletes


def purged_providers(events: list[OutboxEvent]) -> set[str]:
    """What the batch's ``purge_user`` events purge: the named ``provider`` (a rebuild), or both
    indexes when none is named (an account wipe, the doctor's repair of a uid with no items)."""
    purged: set[str] = set()
    for event in events:
        if event.action == "purge_user":
            provider = event.provider
            purged.update([provider] if provider in PURGEABLE else ["typesense", "vector"])
    return purged


def vector_text(doc: ProjectionDoc) -> str:
    """What the vector index embeds for a memory: its content, then the whole text of the segments
    it quotes (:func:`core.domain.plan.projected_context`). On the LoCoMo development split this
    lifted hybrid recall@10 from 0.596 to 0.647 in an offline replay (docs/benchmarks.md)."""
    return f"{doc.content} {doc.context}" if doc.context else doc.content
