"""Deletion receipts over the in-memory parts: what each store shows before and after the drain,
who may read a receipt, how long, and that a replayed delete answers the same one. The stack's
version (every kind of delete, Typesense stopped) is tests/e2e/test_deletion_receipts.py."""

from __future__ import annotations

from typing import Any

import pytest

from core.domain import ids, paths
from core.errors import NotFound
from core.ports import Write
from core.services import accounts, consolidation, deletion, intake, projection, receipts
from tests.support.seed import seed
from tests.unit.fakes.ports import World, world
from tests.unit.test_services_operations import Promote

UID = "u1"


def _facts(w: World, *contents: str) -> list[str]:
    made = [i.id for i in intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content=c) for c in contents])]
    consolidation.run_pass(w.ctx, UID, router=Promote())
    projection.drain_user(w.ctx, UID)
    return made


def _states(body: dict) -> dict[str, str]:
    return {name: store["state"] for name, store in body["stores"].items()}


def test_a_delete_is_pending_for_the_projections_until_the_drain_acknowledges_it() -> None:
    w = world()
    [memory_id] = _facts(w, "I keep bees on the roof")
    w.clock.advance(seconds=5)
    deleted_at = w.clock.now()
    answer = deletion.delete_memory(w.ctx, UID, memory_id)
    body = receipts.read(w.ctx, UID, answer["receipt_id"])
    assert body["kind"] == "memory" and body["memory_ids"] == [memory_id] and body["state"] == "pending"
    assert _states(body) == {"memory_items": "confirmed", "review_queue": "confirmed", "graph": "pending",
                             "keyword_index": "pending", "vector_index": "pending"}
    assert body["stores"]["memory_items"]["confirmed_at"] == deleted_at.isoformat()
    w.clock.advance(seconds=7)
    drained_at = w.clock.now()
    projection.drain_user(w.ctx, UID)
    body = receipts.read(w.ctx, UID, answer["receipt_id"])
    assert body["state"] == "confirmed"
    assert {body["stores"][name]["confirmed_at"] for name in receipts.PROJECTED} == {drained_at.isoformat()}
    assert body["expires_at"] == (deleted_at + receipts.RETENTION).isoformat()


def test_reading_a_receipt_writes_nothing() -> None:
    w = world()
    [memory_id] = _facts(w, "I keep bees on the roof")
    rid = deletion.delete_memory(w.ctx, UID, memory_id)["receipt_id"]
    docs, versions = dict(w.store.docs), dict(w.store.versions)
    assert receipts.read(w.ctx, UID, rid)["state"] == "pending"
    assert w.store.docs == docs and w.store.versions == versions
    projection.drain_user(w.ctx, UID)
    docs, versions = dict(w.store.docs), dict(w.store.versions)
    w.clock.advance(seconds=3)
    body = receipts.read(w.ctx, UID, rid)  # every store confirmed: the read finds it, and keeps nothing
    assert body["state"] == "confirmed"
    assert {body["stores"][name]["confirmed_at"] for name in receipts.PROJECTED} == {w.clock.now().isoformat()}
    assert receipts.read(w.ctx, UID, rid)["stores"]["memory_items"] == body["stores"]["memory_items"]
    assert w.store.docs == docs and w.store.versions == versions


def test_only_the_owner_reads_a_receipt_and_only_for_30_days() -> None:
    w = world()
    [memory_id] = _facts(w, "I keep bees on the roof")
    rid = deletion.delete_memory(w.ctx, UID, memory_id)["receipt_id"]
    with pytest.raises(NotFound):
        receipts.read(w.ctx, "u2", rid)
    w.clock.advance(days=30)
    with pytest.raises(NotFound):
        receipts.read(w.ctx, UID, rid)


def test_a_replayed_delete_answers_the_same_receipt_and_writes_nothing() -> None:
    w = world()
    _facts(w, "I keep bees on the roof", "I play the cello")
    first = deletion.delete_all(w.ctx, UID, "key-1")
    stored = w.store.get(paths.doc(UID, receipts.COLLECTION, first["receipt_id"]))
    again = deletion.delete_all(w.ctx, UID, "key-1")
    assert again["receipt_id"] == first["receipt_id"]
    assert w.store.get(paths.doc(UID, receipts.COLLECTION, first["receipt_id"])) == stored
    assert (stored or {})["memory_count"] == 2 and (stored or {})["up_to_sequence"] == first["stable_at_sequence"]


def test_the_wipe_leaves_only_its_hashed_receipt() -> None:
    w = world()
    _facts(w, "I keep bees on the roof")
    rid = deletion.delete_all(w.ctx, UID)["receipt_id"]
    wipe = accounts.delete_account(w.ctx, UID)["receipt_id"]
    assert not list(w.store.children(paths.user(UID)))  # the earlier receipt went with the account
    with pytest.raises(NotFound):
        receipts.read(w.ctx, UID, rid)
    body = receipts.read(w.ctx, UID, wipe)
    assert body["kind"] == "account" and body["state"] == "confirmed" and body["memory_ids"] == []
    stored = w.store.get(receipts._account_path(UID, wipe)) or {}
    assert set(stored) == {"kind", "created_at", "expire_at", "stores"}
    with pytest.raises(NotFound):
        receipts.read(w.ctx, "u2", wipe)


def test_with_the_keyword_index_down_the_vector_index_confirms_on_its_own() -> None:
    w = world()
    [memory_id] = _facts(w, "I keep bees on the roof")
    rid = deletion.delete_memory(w.ctx, UID, memory_id)["receipt_id"]
    w.keyword.fail = RuntimeError("typesense down")
    report = projection.drain_user(w.ctx, UID)
    assert report.retried and not report.acknowledged
    assert _states(receipts.read(w.ctx, UID, rid)) == {
        "memory_items": "confirmed", "review_queue": "confirmed", "graph": "pending",
        "keyword_index": "pending", "vector_index": "confirmed"}
    assert ids.provider_id(UID, memory_id) not in w.vector.provider_ids(UID)  # deleted there indeed
    w.keyword.fail = None
    w.clock.advance(hours=1)  # past the backoff
    assert projection.drain_user(w.ctx, UID).acknowledged
    assert receipts.read(w.ctx, UID, rid)["state"] == "confirmed"


def test_delete_all_waits_for_every_event_up_to_its_sequence_and_no_later_one() -> None:
    w = world()
    _facts(w, "I keep bees on the roof", "I play the cello")
    answer = deletion.delete_all(w.ctx, UID)
    body = receipts.read(w.ctx, UID, answer["receipt_id"])
    assert body["kind"] == "all" and body["memory_count"] == 2 and body["state"] == "pending"
    projection.drain_user(w.ctx, UID)
    # A memory written after the delete-all has its own pending event: the receipt does not wait for it.
    intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I sail on Sundays")])
    assert projection.pending_counts(w.ctx, UID).get("pending")
    assert receipts.read(w.ctx, UID, answer["receipt_id"])["state"] == "confirmed"


def test_delete_all_does_not_wait_for_an_event_no_commit_wrote() -> None:
    """A rebuild's event (a null ``sequence``) of a deleted memory is no event of the delete-all."""
    w = world()
    [memory_id, _] = _facts(w, "I keep bees on the roof", "I play the cello")
    answer = deletion.delete_all(w.ctx, UID)
    projection.drain_user(w.ctx, UID)
    event = {"event_id": "e1", "uid": UID, "memory_id": memory_id, "action": "rebuild", "sequence": None,
             "state": "pending"}
    w.store.put(paths.outbox_event(UID, "e1"), event)
    assert receipts.read(w.ctx, UID, answer["receipt_id"])["state"] == "confirmed"
    w.store.put(paths.outbox_event(UID, "e1"), {**event, "sequence": 1})
    assert receipts.read(w.ctx, UID, answer["receipt_id"])["state"] == "pending"


def test_stored_receipts_keep_their_shape() -> None:
    w = world()
    now = w.clock.now()
    expire = now + receipts.RETENTION
    receipts.issue(w.ctx, UID, "conversation", "rc", ["m2", "m1", "m1"], conversation_id="c1")
    receipts.issue(w.ctx, UID, "all", "ra", [], up_to_sequence=4, count=0)
    projected = dict.fromkeys(receipts.PROJECTED)
    assert w.store.get(paths.doc(UID, receipts.COLLECTION, "rc")) == {
        "receipt_id": "rc", "kind": "conversation", "created_at": now, "expire_at": expire,
        "memory_ids": ["m1", "m2"], "memory_count": 2, "stores": {**dict.fromkeys(receipts.APPLIED, now), **projected},
        "conversation_id": "c1"}
    assert w.store.get(paths.doc(UID, receipts.COLLECTION, "ra")) == {
        "receipt_id": "ra", "kind": "all", "created_at": now, "expire_at": expire, "memory_ids": [],
        "memory_count": 0, "stores": dict.fromkeys(receipts.STORES, now), "up_to_sequence": 4}
    receipts.open_account_receipt(w.ctx, UID, "wipe")
    account = receipts._account_path(UID, "wipe")
    assert w.store.get(account) == {"kind": "account", "created_at": now, "expire_at": expire,
                                    "stores": dict.fromkeys(receipts.STORES)}
    receipts.confirm_account_receipt(w.ctx, UID, "wipe", {"providers_purged": now, "canonical_wiped": None})
    assert (w.store.get(account) or {})["stores"] == {**dict.fromkeys(receipts.STORES), **projected,
                                                     "keyword_index": now, "vector_index": now}
    # A field this version does not know, and a stored null, are read past and kept.
    path = paths.doc(UID, receipts.COLLECTION, "rc")
    w.store.put(path, {**(w.store.get(path) or {}), "note": "an older version", "up_to_sequence": None})
    body = receipts.read(w.ctx, UID, "rc")
    assert body["up_to_sequence"] is None and body["conversation_id"] == "c1" and body["memory_count"] == 2


# Every way the store writes: the port's doors and the fake's own batch (the fake outbox commits through
# it); a call made inside another (the apply's transaction commits) is not counted.
_WRITES = ("_transact", "write", "swap", "_commit")


def _count_writes(w: World, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The store's outermost write calls from now on, by name (each one commit on Firestore)."""
    calls: list[str] = []
    depth = [0]
    for name in _WRITES:
        original = getattr(w.store, name)

        def counted(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            if depth[0] == 0:
                calls.append(_name)
            depth[0] += 1
            try:
                return _original(*args, **kwargs)
            finally:
                depth[0] -= 1

        monkeypatch.setattr(w.store, name, counted)
    return calls


def test_a_delete_commits_once_with_its_receipt(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    [memory_id] = _facts(w, "I keep bees on the roof")
    # A historical row an earlier materialisation left behind (its cleanup failed) goes in the same commit.
    leftover = paths.doc(UID, paths.LEGACY_MEMORIES, memory_id)
    seed(w.store, [Write("set", leftover, {"content": "I keep bees on the roof"})])
    writes = _count_writes(w, monkeypatch)
    answer = deletion.delete_memory(w.ctx, UID, memory_id)
    assert writes == ["_transact"]
    [commit] = [a for a in w.store.applies if a.commit_id == answer["commit_id"]]
    receipt_path = paths.doc(UID, receipts.COLLECTION, answer["receipt_id"])
    stored = w.store.get(receipt_path)
    assert stored is not None and stored["memory_ids"] == [memory_id] == commit.changed_ids
    assert w.store.get(leftover) is None
    body = receipts.read(w.ctx, UID, answer["receipt_id"])
    assert body["memory_ids"] == [memory_id] and body["stores"]["memory_items"]["state"] == "confirmed"


@pytest.mark.parametrize("collection", [paths.LEGACY_MEMORIES, "short_term"])
def test_a_historical_delete_commits_once_with_its_receipt_and_the_rows_removal(
        monkeypatch: pytest.MonkeyPatch, collection: str) -> None:
    w = world()
    row = paths.doc(UID, collection, "old1")
    w.store.put(row, {"content": "I sail on weekends", "created_at": w.clock.now()})
    writes = _count_writes(w, monkeypatch)
    answer = deletion.delete_memory(w.ctx, UID, "old1")
    assert writes == ["_transact"]
    assert answer["deleted"] == ["old1"] and w.store.get(row) is None
    [commit] = [a for a in w.store.applies if a.commit_id == answer["commit_id"]]
    assert commit.changed_ids == ["old1"]
    tombstone = w.store.get(paths.memory_item(UID, "old1")) or {}
    assert tombstone.get("deleted_by_user") is True
    stored = w.store.get(paths.doc(UID, receipts.COLLECTION, answer["receipt_id"])) or {}
    assert stored["memory_ids"] == ["old1"] and stored["created_at"] == w.clock.now()
    events = w.store.collection(paths.col(UID, paths.OUTBOX)).values()
    assert [e for e in events if e.get("memory_id") == "old1"], "no outbox event clears the indexes"


def test_a_delete_replayed_by_its_key_answers_the_same_receipt_and_commits_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    [memory_id] = _facts(w, "I keep bees on the roof")
    first = deletion.delete_memory(w.ctx, UID, memory_id, request_key="key-1")
    stored = w.store.get(paths.doc(UID, receipts.COLLECTION, first["receipt_id"]))
    versions = dict(w.store.versions)
    again = deletion.delete_memory(w.ctx, UID, memory_id, request_key="key-1")
    assert again == first and w.store.versions == versions
    assert w.store.get(paths.doc(UID, receipts.COLLECTION, first["receipt_id"])) == stored
