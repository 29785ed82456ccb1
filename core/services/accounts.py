"""Account deletion (the export is ``core/services/export.py``).

Deletion is fenced by the durable ``account_deletions/{uid}`` record: while it is set every write
for the user is refused (the apply transaction checks it) and projection delivery is delete-only.
Raising the fence bumps the account generation the record holds (it lives outside ``users/{uid}``,
so the wipe keeps it): captures, passes and drains that started before the wipe are refused even
after it completed (:mod:`core.domain.fence`).
The provider purge waits until no outbox lease is held and fails *retryably* if a provider cannot
be reached; it purges by uid even when Firestore holds no items. Then Strata's collections under
``users/{uid}`` are deleted (:func:`owned_collections`): in an app's own project the ``users/{uid}``
document and the app's own subcollections are the app's, and stay. Before any of that, every personal API key is revoked (its lookup document under
``api_key_hashes`` is outside the subtree), so a wiped account's key answers 401. Every step is idempotent, so calling again resumes where a failure stopped.

The keyword-index purge needs Typesense's write key. The api function holds a search-only key
(``STRATA_KEYWORD_PURGE=drain``): it publishes a purge request for (uid, generation) on the
projection topic, the outbox drain (the one function with the write key) purges
(:func:`core.services.drain_handlers.purge_keyword_index`) and records
``keyword_purged: <generation>`` (or ``keyword_purge_error``) on the wipe record, and the api waits
for that at most ``STRATA_ACCOUNT_PURGE_WAIT_S``, else answers the same retryable 503 as for a live
drain lease; calling again publishes again. Operators and tests (``inline``) purge themselves.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from core.domain import paths
from core.domain.changes import Change
from core.domain.documents import AccountDeletion, KeywordPurgeError, OutboxEvent
from core.errors import LeaseHeld, RetryableError, StrataError
from core.ports import Ports, Write
from core.services import api_keys, receipts, server_keys

log = logging.getLogger(__name__)

LEASE_SCAN = 100  # a drain leases at most 100 events at a time
PURGE_POLL_S = 0.1  # how often the api re-reads the wipe record while the drain purges
PURGE_REQUEST = "keyword_purge"  # the projection message's ``purge`` field for this request


def delete_account(ctx: Ports, uid: str) -> dict[str, Any]:
    fence = paths.account_deletion(uid)
    stored = ctx.store.get(fence)
    record = AccountDeletion.from_store(stored)
    if record.completed and not _has_data(ctx, uid):
        return {"state": "completed", "uid": uid, "receipt_id": _receipt_id(ctx, uid, record)}
    if stored is None or record.completed:
        record = AccountDeletion(uid=uid, state="fenced", started_at=ctx.now(), steps={},
                                 generation=int(record.generation or 0) + 1, receipt_id=receipts.new_id())
        ctx.store.write(Change("account.fence_raise", [Write("set", fence, record.to_store())]))
    rid = _receipt_id(ctx, uid, record)
    receipts.open_account_receipt(ctx, uid, rid)  # create-if-absent: a resumed wipe keeps the first
    steps = dict(record.steps or {})
    # Personal API keys stop working first (their global lookup documents live outside the
    # subtree); no key can be created meanwhile, key creation being fenced like every write.
    api_keys.revoke_all(ctx, uid)
    server_keys.forget_user(ctx, uid)  # the operator's keys stay; their note of this user goes
    if not steps.get("providers_purged"):
        leased = ctx.store.query("outbox_by_state", {"state": ["leased"]}, parent=paths.user(uid), limit=LEASE_SCAN)
        if any(OutboxEvent.from_store(doc.data).lease_live(ctx.now()) for doc in leased):
            raise LeaseHeld("projection work for this account is still running; retry shortly")
        generation = ctx.store.read_fence(uid).generation
        try:
            if ctx.settings.keyword_purge == "drain":
                _keyword_purge_by_drain(ctx, uid, generation)
            else:
                ctx.keyword_index.purge_user(uid)
            ctx.vector_index.purge_account(uid)  # the original's namespace too
        except StrataError:
            raise
        except Exception as exc:  # noqa: BLE001 - a provider we cannot reach fails retryably
            raise RetryableError(f"provider purge failed: {exc}", code="provider_unavailable") from exc
        steps["providers_purged"] = ctx.now()
        purging = AccountDeletion(state="purging", steps=steps)
        ctx.store.write(Change("account.providers_purged", [Write("set", fence, purging.to_store(), merge=True)]))
    for collection in _owned_present(ctx, uid):
        ctx.store.write(Change("account.collection_wipe", [Write("purge", paths.col(uid, collection))]))
    steps["canonical_wiped"] = ctx.now()
    receipts.confirm_account_receipt(ctx, uid, rid, steps)  # before the record says done: a retry redoes it
    done = AccountDeletion(state="completed", steps=steps, completed_at=ctx.now())
    ctx.store.write(Change("account.wipe_complete", [Write("set", fence, done.to_store(), merge=True)]))
    return {"state": "completed", "uid": uid, "receipt_id": rid}


def _receipt_id(ctx: Ports, uid: str, record: AccountDeletion) -> str:
    """The wipe's receipt id, kept on its record (``account_deletions/{uid}``: ids only); a record
    from before receipts gets one."""
    rid = record.receipt_id
    if not isinstance(rid, str) or not rid:
        rid = receipts.new_id()
        ctx.store.write(Change("account.receipt_id", [
            Write("set", paths.account_deletion(uid), AccountDeletion(receipt_id=rid).to_store(), merge=True)]))
    return rid


def _keyword_purge_by_drain(ctx: Ports, uid: str, generation: int) -> None:
    """Ask the outbox drain to purge ``uid``'s keyword rows for wipe ``generation`` and wait for it
    to record the purge on the wipe record (see the module docstring)."""
    fence = paths.account_deletion(uid)

    def outcome() -> bool:
        record = AccountDeletion.from_store(ctx.store.get(fence))
        if record.keyword_purged == generation:
            return True
        failed = record.keyword_purge_error
        if isinstance(failed, KeywordPurgeError) and failed.generation == generation and failed.requested == requested:
            raise RetryableError(f"provider purge failed: {failed.error}", code="provider_unavailable")
        return False

    requested = uuid.uuid4().hex  # tells this request's failure from an older one's
    if outcome():
        return
    ctx.publisher.publish(ctx.settings.projection_topic,
                          {"uid": uid, "purge": PURGE_REQUEST, "generation": generation, "requested": requested})
    deadline = time.monotonic() + ctx.settings.account_purge_wait_s
    while not outcome():
        if time.monotonic() >= deadline:
            raise LeaseHeld("the keyword index purge for this account is still running; retry shortly")
        time.sleep(PURGE_POLL_S)


def owned_collections(ctx: Ports) -> tuple[str, ...]:
    """The collections under ``users/{uid}`` that are Strata's and so the wipe's: the ones it writes
    (:data:`core.domain.paths.USER_COLLECTIONS`) and, unless ``STRATA_WIPE_CONVERSATIONS`` is off,
    the conversations. Never the ``users/{uid}`` document (the app's profile) nor another collection."""
    return paths.USER_COLLECTIONS + ((paths.CONVERSATIONS,) if ctx.settings.wipe_conversations else ())


def _owned_present(ctx: Ports, uid: str) -> list[str]:
    """Strata's collections that hold a document for ``uid``: one listing of the user's root, and one
    of the conversations' parent when the app keeps them elsewhere (``STRATA_CONVERSATIONS_PATH``)."""
    owned = set(owned_collections(ctx))
    root = paths.user(uid)
    listed = list(ctx.store.children(root))
    present = [name for name in listed if name in owned - {paths.CONVERSATIONS}]
    if paths.CONVERSATIONS in owned:
        parent, name = paths.conversations_parent(uid)
        if name in (listed if parent == root else list(ctx.store.children(parent))):
            present.append(paths.CONVERSATIONS)
    return present


def _has_data(ctx: Ports, uid: str) -> bool:
    return bool(_owned_present(ctx, uid))
