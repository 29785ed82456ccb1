"""Default-read visibility and lineage collapse: one logical memory appears once."""

from __future__ import annotations

from collections.abc import Iterable

from core.domain.records import MemoryItem
from core.domain.states import default_visible


def is_default_visible(item: MemoryItem) -> bool:
    return default_visible(item.layer, item.status, item.processing_state)


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
