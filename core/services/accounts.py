"""Account deletion (the export is ``core/services/export.py``).

Deletion is fenced by the durable ``account_deletions/{uid}`` record: while it is set every write
for the user is refused (the apply transaction checks it) and projection delivery is delete-only.
Raising the fence bumps the account generation the record holds (it lives outside ``users/{uid}``,
so the wipe keeps it): captures, passes and drains that started before the wipe are refused even
after it completed (:mod:`core.domain.fence`).
The provider purge waits until no outbox lease is held and fails *retryably* if a provider cannot
be reached; it purges by uid even when Firestore holds no items. Then the Firestore subtree is
wiped. Every step is idempotent, so calling again resumes where a failure stopped.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.bootstrap import Context
from core.domain import paths
from core.errors import LeaseHeld, RetryableError, StrataError

LEASE_SCAN = 100  # a drain leases at most 100 events at a time


def delete_account(ctx: Context, uid: str) -> dict[str, Any]:
    fence = paths.account_deletion(uid)
    record = ctx.store.get(fence)
    state = record or {}
    if state.get("state") == "completed" and not _has_data(ctx, uid):
        return {"state": "completed", "uid": uid}
    if record is None or state.get("state") == "completed":
        ctx.store.set(fence, {"uid": uid, "state": "fenced", "started_at": ctx.now(), "steps": {},
                                     "generation": int(state.get("generation", 0)) + 1})
    steps: dict[str, Any] = dict(state.get("steps", {})) if state.get("state") != "completed" else {}
    if not steps.get("providers_purged"):
        leased = ctx.store.query("outbox_by_state", {"state": ["leased"]}, parent=paths.user(uid), limit=LEASE_SCAN)
        if any(_lease_live(doc.data, ctx.now()) for doc in leased):
            raise LeaseHeld("projection work for this account is still running; retry shortly")
        try:
            ctx.keyword_index.purge_user(uid)
            ctx.vector_index.purge_account(uid)  # the original's namespace too
        except StrataError:
            raise
        except Exception as exc:  # noqa: BLE001 - a provider we cannot reach fails retryably
            raise RetryableError(f"provider purge failed: {exc}", code="provider_unavailable") from exc
        steps["providers_purged"] = ctx.now()
        ctx.store.set(fence, {"state": "purging", "steps": steps}, merge=True)
    ctx.store.delete_tree(paths.user(uid))
    steps["canonical_wiped"] = ctx.now()
    ctx.store.set(fence, {"state": "completed", "steps": steps, "completed_at": ctx.now()}, merge=True)
    return {"state": "completed", "uid": uid}


def _lease_live(event: dict[str, Any] | None, now: datetime) -> bool:
    expires = (event or {}).get("lease_expires_at")
    return bool(expires and expires > now)


def _has_data(ctx: Context, uid: str) -> bool:
    return ctx.store.has_children(paths.user(uid))
