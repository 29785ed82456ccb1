"""Deletion receipts: proof, store by store, that a delete has been carried out.

Every user delete (one memory's lineage, delete-all, a conversation cascade, the account wipe)
answers a receipt id. ``GET /v1/deletions/{id}`` shows, for each store, when the removal was
confirmed, or ``pending`` until then:

* ``memory_items`` and ``review_queue``: the delete's own apply transaction tombstoned the items
  and redacted their review rows; the receipt is written with that commit (one memory's delete:
  its apply writes it) or after it (delete-all, a cascade), so both are confirmed when it is issued.
* ``graph``, ``keyword_index`` and ``vector_index``: the outbox drain removes the memories'
  knowledge-graph edges, Typesense documents and vectors, and acknowledges an event (deletes it)
  only once Typesense, the vector index and the graph write all confirmed. A store is confirmed
  when no outbox event of the receipt's memories still waits for it: none is left (pending,
  leased or dead-lettered), or, for an index, each one left records that this index confirmed its
  last attempt (``confirmed_providers``: the drain writes it when the other provider failed; the
  graph is written with the acknowledgement, so it waits for the event to go). That read-back is
  made each time the receipt is read, and a read writes nothing: a projected store's
  ``confirmed_at`` is the time of the read that found it confirmed (the acknowledgement, which
  deletes the events, records no time of its own).

A receipt holds ids, counts and times only (the receipt id, its kind, the deleted memory ids,
the conversation id of a cascade; for delete-all, whose ids may not fit one document, the count
and the ledger sequence it was stable at), never text. It lives at ``users/{uid}/deletion_receipts/{id}``,
so only its owner reads it (another user's id is 404) and the account wipe removes it with the
rest of the account. The wipe's own receipt is the one record that outlives the account: a
top-level ``deletion_receipts/{sha256(uid, id)}`` document with the kind and the times only (no
uid, no memory ids), found again only by a caller who holds both the uid and the receipt id.
Every receipt carries ``expire_at`` (30 days on), the field of the Firestore TTL policy that
removes it; a receipt read after that time is 404 even before the policy ran.

Receipt ids are derived from the delete's operation (its key, its ledger head), so a retried or
replayed delete answers the same receipt and writes nothing new.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from core.domain import paths
from core.domain.changes import Change
from core.domain.documents import DeletionReceipt, OutboxEvent
from core.errors import NotFound
from core.ports import Ports, Write

COLLECTION = paths.DELETION_RECEIPTS  # under users/{uid}; the wipe's hashed receipts: the top-level one
RETENTION = timedelta(days=30)
STORES = ("memory_items", "review_queue", "graph", "keyword_index", "vector_index")
APPLIED = ("memory_items", "review_queue")  # confirmed by the delete's own commit
PROJECTED = ("graph", "keyword_index", "vector_index")  # confirmed by the drain's acknowledgement
KINDS = ("memory", "all", "conversation", "account")
OUTBOX_PAGE = 500
# The provider a projected store's confirmation is recorded under on an outbox event (the drain's
# names); the graph has none: it is written with the acknowledgement itself.
PROVIDER_OF = {"graph": "", "keyword_index": "typesense", "vector_index": "vector"}


def receipt_id(uid: str, kind: str, *parts: Any) -> str:
    """A receipt id bound to one delete operation: the same operation (a retry, a replay) gives the
    same id."""
    raw = json.dumps([uid, kind, *parts], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def new_id() -> str:
    return uuid.uuid4().hex


def _path(uid: str, rid: str) -> str:
    return paths.deletion_receipt(uid, rid)


def _account_path(uid: str, rid: str) -> str:
    """The wipe receipt's top-level document: keyed by a hash of (uid, receipt id), holding neither."""
    return paths.account_receipt(hashlib.sha256(f'{uid}:{rid}'.encode()).hexdigest())


def issue(ctx: Ports, uid: str, kind: str, rid: str, memory_ids: Iterable[str], *,
          conversation_id: str | None = None, up_to_sequence: int | None = None, count: int | None = None) -> str:
    """Record the receipt of a delete whose apply committed (create-if-absent, fenced by the account
    generation like the delete itself); returns its id. Delete-all gives ``up_to_sequence`` (the
    ledger sequence it found stable at, when no memory was left) and its ``count`` instead of the
    ids, which may be more than one document holds: every outbox event of a memory at or before
    that sequence is one of the deleted memories'."""
    receipt = document(rid, kind, memory_ids, ctx.now(), conversation_id=conversation_id,
                       up_to_sequence=up_to_sequence, count=count)
    path = _path(uid, rid)
    ctx.store.write(Change("receipt.issue", [Write("set", path, receipt.to_store())], fenced=uid, guard=path,
                           refuse=lambda found: found is not None))
    return rid


def document(rid: str, kind: str, memory_ids: Iterable[str], now: datetime, *, conversation_id: str | None = None,
             up_to_sequence: int | None = None, count: int | None = None) -> DeletionReceipt:
    """The receipt of a delete whose apply committed at ``now`` (pure: :func:`issue` writes it
    after the apply, a one-memory delete inside its apply, see
    :func:`core.domain.deletion_planners.with_receipt`)."""
    ids = tuple(sorted(set(memory_ids)))
    count = len(ids) if count is None else count
    stores: dict[str, datetime | None] = {name: now for name in APPLIED}
    # Nothing was deleted that a projection holds: nothing for the drain to confirm either.
    stores.update({name: (None if count else now) for name in PROJECTED})
    return DeletionReceipt(receipt_id=rid, kind=kind, created_at=now, expire_at=now + RETENTION, memory_ids=ids,
                           memory_count=count, stores=stores, up_to_sequence=up_to_sequence,
                           conversation_id=conversation_id)


# ----------------------------------------------------------------------------------- the account wipe
def open_account_receipt(ctx: Ports, uid: str, rid: str) -> None:
    """The wipe's receipt, written when its fence goes up: every store pending."""
    now = ctx.now()
    receipt = DeletionReceipt(kind="account", created_at=now, expire_at=now + RETENTION, stores=dict.fromkeys(STORES))
    ctx.store.write(Change("receipt.account_open", [Write("create", _account_path(uid, rid), receipt.to_store())]))


def confirm_account_receipt(ctx: Ports, uid: str, rid: str, steps: dict[str, Any]) -> None:
    """Record the wipe's steps on its receipt: both indexes purged (``providers_purged``), then the
    Firestore subtree (items, review queue, graph) removed (``canonical_wiped``)."""
    purged, wiped = steps.get("providers_purged"), steps.get("canonical_wiped")
    stores = {"keyword_index": purged, "vector_index": purged,
              "memory_items": wiped, "review_queue": wiped, "graph": wiped}
    ctx.store.write(Change("receipt.account_confirm", [Write("set", _account_path(uid, rid),
                                                             DeletionReceipt(stores=stores).to_store(), merge=True)]))


# ------------------------------------------------------------------------------------------- reading
def read(ctx: Ports, uid: str, rid: str) -> dict[str, Any]:
    """The receipt as ``GET /v1/deletions/{id}`` answers it; 404 when it is not the caller's, or
    past its 30 days."""
    now = ctx.now()
    stored = ctx.store.get(_path(uid, rid))
    wipe = stored is None  # then the account wipe's receipt, if it is one
    if wipe:
        stored = ctx.store.get(_account_path(uid, rid))
    receipt = DeletionReceipt.from_store(stored)
    if stored is None or receipt.expired(now):
        raise NotFound("no such deletion receipt")
    if wipe:
        return _public(rid, receipt, [])
    stores = dict(receipt.stores or {})
    ids = list(receipt.memory_ids or ())
    waiting = [name for name in PROJECTED if stores.get(name) is None]
    unconfirmed = _unconfirmed(ctx, uid, set(ids), receipt.up_to_sequence) if waiting else set()
    stores.update({name: now for name in waiting if name not in unconfirmed})
    return _public(rid, receipt.but(stores=stores), ids)


def _unconfirmed(ctx: Ports, uid: str, memory_ids: set[str], up_to_sequence: int | None = None) -> set[str]:
    """The projected stores some outbox event (pending, leased or dead) of these memories (or, with
    ``up_to_sequence``, of any memory at or before that ledger sequence) still waits for: the graph
    for any such event (its write is the acknowledgement), an index unless the event's last failed
    attempt recorded that index's confirmation (the other one failed)."""
    waiting: set[str] = set()
    if not memory_ids and up_to_sequence is None:
        return waiting

    def covered(event: OutboxEvent) -> bool:
        if event.memory_id in memory_ids:
            return True
        sequence = event.ledger_sequence
        return (up_to_sequence is not None and bool(event.memory_id) and sequence is not None
                and sequence <= up_to_sequence)

    after = None
    while True:
        rows = ctx.store.scan(paths.col(uid, paths.OUTBOX), limit=OUTBOX_PAGE, after=after)
        for event in (OutboxEvent.from_store(row.data) for row in rows):
            if not covered(event):
                continue
            done = set(event.confirmed_providers or ()) if event.state != "leased" else set()
            waiting.update(store for store, provider in PROVIDER_OF.items() if provider not in done)
        if len(rows) < OUTBOX_PAGE or len(waiting) == len(PROJECTED):
            return waiting
        after = rows[-1].id


def _iso(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else None


def _public(rid: str, receipt: DeletionReceipt, memory_ids: list[str]) -> dict[str, Any]:
    stores = receipt.stores or {}
    shown = {name: {"state": "confirmed" if stores.get(name) else "pending",
                    "confirmed_at": _iso(stores.get(name))} for name in STORES}
    count = len(memory_ids) if receipt.memory_count is None else receipt.memory_count
    return {"receipt_id": rid, "kind": "memory" if receipt.kind is None else receipt.kind,
            "state": "confirmed" if all(s["state"] == "confirmed" for s in shown.values()) else "pending",
            "created_at": _iso(receipt.created_at), "expires_at": _iso(receipt.expire_at),
            "conversation_id": receipt.conversation_id, "memory_ids": memory_ids, "memory_count": int(count),
            "up_to_sequence": receipt.up_to_sequence, "stores": shown}
