"""Reading what a withdrawal needs (core/domain/withdrawal.py holds the withdrawal itself): a
source's *live cohort* (the items its active evidence supports, ``active_source_ids``), read in
cursor pages so a cohort of any size is walked in bounded transactions, and the review rows of a
set of memories.
"""

from __future__ import annotations

from typing import Any

from core.domain import paths
from core.ports import Ports

REVIEW_IN_LIMIT = 30  # Firestore's limit on the values of one `in` filter


def review_rows(ctx: Ports, uid: str, memory_ids: Any) -> dict[str, dict[str, Any]]:
    """Review-queue rows that show these memories (read before an apply that reads them again
    through ``doc_paths``), so retracting the memories can redact their reviews."""
    rows: dict[str, dict[str, Any]] = {}
    wanted = list(dict.fromkeys(memory_ids))
    for start in range(0, len(wanted), REVIEW_IN_LIMIT):  # one query per 30 memories, not one per memory
        chunk = wanted[start:start + REVIEW_IN_LIMIT]
        for row in ctx.store.query("reviews_by_memory", {"memory_id": chunk}, parent=paths.user(uid)):
            rows[row.id] = row.data
    return rows


def live_page(ctx: Ports, uid: str, source_id: str, size: int, after: str | None) -> list[str]:
    """Ids of one page of the source's live cohort, read outside the transaction (to find the review
    rows the transaction must read too)."""
    cursor = {"__name__": after} if after else None
    rows = ctx.store.query("items_by_active_source", {"active_source_ids": source_id}, parent=paths.user(uid),
                           limit=size, start_after=cursor, keys_only=True)
    return [row.id for row in rows]
