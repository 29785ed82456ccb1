"""What a key (personal or server) wrote in one user's account: what its revoke lists.

Every write an API request makes records its credential (:mod:`core.domain.credentials`): each ledger
commit carries ``credential.key_id`` and a conversation created through the API carries
``created_by.key_id``. The listing reads those two back with named queries (single-field indexes,
no composite index): the memories the key's commits touched (created, edited, deleted, restored)
and the conversations it created. Memories extracted later from such a conversation are the
capture's own commits (no request made them); the conversation id names them. At most
:data:`MAX_LISTED` of each are listed; ``truncated`` says when there were more (or, for an app's
conversations collection of another id than ``conversations``, when more than :data:`MAX_SCANNED`
conversations had to be scanned).
"""

from __future__ import annotations

from typing import Any

from core.domain import paths
from core.domain.documents import LedgerCommit
from core.ports import Ports

MAX_LISTED = 1_000
MAX_SCANNED, SCAN_PAGE = 5_000, 500


def written(ctx: Ports, uid: str, key_id: str) -> dict[str, Any]:
    """``{commits, memory_ids, conversation_ids, truncated}``: what ``key_id`` wrote for ``uid``."""
    commits = ctx.store.query("commits_by_credential", {"credential.key_id": key_id}, parent=paths.user(uid),
                              limit=MAX_LISTED + 1)
    conversations, more = _conversations(ctx, uid, key_id)
    memory_ids = sorted({m for c in commits[:MAX_LISTED] for m in LedgerCommit.from_store(c.data).memory_ids
                         if isinstance(m, str)})
    return {"commits": len(commits[:MAX_LISTED]), "memory_ids": memory_ids, "conversation_ids": conversations,
            "truncated": len(commits) > MAX_LISTED or more}


def _conversations(ctx: Ports, uid: str, key_id: str) -> tuple[list[str], bool]:
    """The ids of the conversations ``key_id`` created, and whether there were more than listed.
    The named query serves a conversations collection called ``conversations`` (wherever
    ``STRATA_CONVERSATIONS_PATH`` puts it); an app's collection of another id is scanned, at most
    :data:`MAX_SCANNED` documents."""
    parent, name = paths.conversations_parent(uid)
    if name == paths.CONVERSATIONS:
        rows = ctx.store.query("conversations_by_creator", {"created_by.key_id": key_id}, parent=parent,
                               limit=MAX_LISTED + 1, keys_only=True)
        return sorted(r.id for r in rows[:MAX_LISTED]), len(rows) > MAX_LISTED
    found: list[str] = []
    after: str | None = None
    for _ in range(MAX_SCANNED // SCAN_PAGE):
        page = ctx.store.scan(paths.col(uid, paths.CONVERSATIONS), limit=SCAN_PAGE, after=after)
        found += [d.id for d in page if ((d.data or {}).get("created_by") or {}).get("key_id") == key_id]
        if len(page) < SCAN_PAGE:
            return found[:MAX_LISTED], len(found) > MAX_LISTED
        after = page[-1].id
    return found[:MAX_LISTED], True
