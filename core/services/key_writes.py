"""What a key (personal or server) wrote in one user's account: what its revoke lists.

Every write an API request makes records its credential (:mod:`core.domain.credentials`): each ledger
commit carries ``credential.key_id`` and a conversation created through the API carries
``created_by.key_id``. The listing reads those two back with named queries (single-field indexes,
no composite index): the memories the key's commits touched (created, edited, deleted, restored)
and the conversations it created. Memories extracted later from such a conversation are the
capture's own commits (no request made them); the conversation id names them. At most
:data:`MAX_LISTED` of each are listed; ``truncated`` says when there were more.
"""

from __future__ import annotations

from typing import Any

from core.domain import paths
from core.ports import Ports

MAX_LISTED = 1_000


def written(ctx: Ports, uid: str, key_id: str) -> dict[str, Any]:
    """``{commits, memory_ids, conversation_ids, truncated}``: what ``key_id`` wrote for ``uid``."""
    parent = paths.user(uid)
    commits = ctx.store.query("commits_by_credential", {"credential.key_id": key_id}, parent=parent,
                              limit=MAX_LISTED + 1)
    conversations = ctx.store.query("conversations_by_creator", {"created_by.key_id": key_id}, parent=parent,
                                    limit=MAX_LISTED + 1, keys_only=True)
    memory_ids = sorted({m for c in commits[:MAX_LISTED] for m in (c.data or {}).get("memory_ids") or ()
                         if isinstance(m, str)})
    return {"commits": len(commits[:MAX_LISTED]), "memory_ids": memory_ids,
            "conversation_ids": sorted(c.id for c in conversations[:MAX_LISTED]),
            "truncated": len(commits) > MAX_LISTED or len(conversations) > MAX_LISTED}
