"""Default-read visibility and lineage collapse: one logical memory appears once; and what the
request's credential may read (a key without ``restricted`` sees no restricted memory)."""

from __future__ import annotations

from collections.abc import Iterable

from core.domain import credentials
from core.domain.records import MemoryItem
from core.domain.states import default_visible


def is_default_visible(item: MemoryItem) -> bool:
    return default_visible(item.layer, item.status, item.processing_state)


def readable(item: MemoryItem) -> bool:
    """Whether the running request may be shown ``item``: an unrestricted one always; a restricted
    one (:data:`core.domain.records.RESTRICTED_LABELS`) only by the user's ID token, by a key made with
    ``restricted``, or outside a request (:func:`core.domain.credentials.sees_restricted`). Never a
    projection decision: what the indexes hold does not depend on who asks."""
    return not item.restricted or credentials.sees_restricted()


def lineage_key(item: MemoryItem) -> str:
    return item.canonical_memory_id or item.id


def collapse_lineage(items: Iterable[MemoryItem]) -> list[MemoryItem]:
    """Keep one row per lineage, in input order: the survivor (id == lineage key) when present,
    otherwise the most recently updated member."""
    chosen: dict[str, MemoryItem] = {}
    order: list[str] = []
    for item in items:
        key = lineage_key(item)
        current = chosen.get(key)
        if current is None:
            chosen[key] = item
            order.append(key)
            continue
        if current.id == key:
            continue
        if item.id == key or (item.updated_at and current.updated_at and item.updated_at > current.updated_at):
            chosen[key] = item
    return [chosen[k] for k in order]
