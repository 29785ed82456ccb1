"""The ledger commit and the operation journal as the apply stores them, field by field (names,
values, lists, nulls, absent fields), their typed documents keeping the stored bytes, and the
answers the services build from them (history, a key's writes, a replayed delete)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from core.domain import credentials, ids
from core.domain.documents import (
    ApplyControl,
    GraphAssertion,
    IncidentSwitches,
    LedgerChange,
    LedgerCommit,
    OperationJournal,
)
from core.domain.plan import ApplyView, Plan
from core.domain.records import MemoryItem
from core.services import deletion, intake, key_writes, reads
from tests.unit.fakes.ports import FakeClock, world
from tests.unit.fakes.store import InMemoryStore

UID = "u"
KEY = {"kind": "personal_key", "key_id": "key_a"}


def _store() -> tuple[InMemoryStore, FakeClock]:
    clock = FakeClock()
    return InMemoryStore(clock.now), clock


def _creates(mid: str, summary: dict[str, Any] | None = None):
    def plan(view: ApplyView) -> Plan:
        return Plan(items=[MemoryItem(id=mid, uid=view.uid, content="I grow tomatoes")], summary=dict(summary or {}))
    return plan


def _nothing(summary: dict[str, Any]):
    return lambda view: Plan(summary=summary)


def _commit(store: InMemoryStore, commit_id: str) -> dict[str, Any]:
    data = store.get(f"users/{UID}/memory_commits/{commit_id}")
    assert data is not None
    return data


def _journal(store: InMemoryStore, operation_id: str) -> dict[str, Any]:
    data = store.get(f"users/{UID}/memory_operations/{operation_id}")
    assert data is not None
    return data


def test_a_commit_and_its_journal_entry_are_stored_exactly() -> None:
    store, clock = _store()
    first = store.apply(UID, "t.create", {"k": 1}, _creates("m1", {"created": 1}), item_ids=["m1"])
    item = store.get(f"users/{UID}/memory_items/m1")
    assert item is not None and first.commit_id is not None
    commit = _commit(store, first.commit_id)
    assert list(commit) == ["commit_id", "sequence", "parent_commit_id", "operation_id", "kind", "actor", "changes",
                            "doc_writes", "created_at", "memory_ids"]  # no credential outside a request
    assert commit == {
        "commit_id": first.commit_id, "sequence": 1, "parent_commit_id": None, "operation_id": first.operation_id,
        "kind": "t.create", "actor": "system",
        "changes": [{"memory_id": "m1", "revision": 1, "layer": "short_term", "status": "active",
                     "processing_state": item["processing_state"], "content_hash": item["content_hash"],
                     "action": "create"}],
        "doc_writes": [], "created_at": clock.now(), "memory_ids": ["m1"],
    }
    assert type(commit["changes"]) is list and type(commit["memory_ids"]) is list
    assert _journal(store, first.operation_id) == {
        "operation_id": first.operation_id, "kind": "t.create", "commit_id": first.commit_id, "sequence": 1,
        "changed_ids": ["m1"], "summary": {"created": 1}, "created_at": clock.now(), "outbox_events": 2,
    }


def test_a_request_commit_carries_its_credential_and_parent() -> None:
    store, _ = _store()
    first = store.apply(UID, "t.create", {"k": 1}, _creates("m1"), item_ids=["m1"])
    with credentials.acting_as(KEY):
        second = store.apply(UID, "t.create", {"k": 2}, _creates("m2"), item_ids=["m2"], actor="user")
    assert second.commit_id is not None
    commit = _commit(store, second.commit_id)
    assert (commit["parent_commit_id"], commit["actor"], commit["credential"]) == (first.commit_id, "user", KEY)
    assert list(commit)[-1] == "credential"


def test_an_empty_plan_journals_a_noop_and_a_replay_answers_the_journal() -> None:
    store, clock = _store()
    store.apply(UID, "t.create", {"k": 1}, _creates("m1"), item_ids=["m1"])
    noop = store.apply(UID, "t.none", {"k": 2}, _nothing({"deleted": 0}))
    journal = _journal(store, noop.operation_id)
    assert list(journal) == ["operation_id", "kind", "commit_id", "sequence", "changed_ids", "summary", "created_at",
                             "noop"]
    assert journal == {"operation_id": noop.operation_id, "kind": "t.none", "commit_id": None, "sequence": None,
                       "changed_ids": [], "summary": {"deleted": 0}, "created_at": clock.now(), "noop": True}
    first_again = store.apply(UID, "t.create", {"k": 1}, _creates("m9"), item_ids=["m9"])
    assert (first_again.replayed, first_again.sequence, first_again.changed_ids, first_again.outbox_events) == (
        True, 1, ["m1"], 2)
    noop_again = store.apply(UID, "t.none", {"k": 2}, _nothing({"other": 1}))
    assert (noop_again.replayed, noop_again.commit_id, noop_again.sequence, noop_again.summary,
            noop_again.outbox_events) == (True, None, None, {"deleted": 0}, 0)


def test_the_typed_documents_keep_stored_bytes() -> None:
    at = datetime(2026, 1, 2, tzinfo=UTC)
    commit = {"commit_id": "mc_1", "sequence": 2, "parent_commit_id": None, "operation_id": "op_1", "kind": "k",
              "actor": "user", "changes": [{"memory_id": "m1", "revision": None, "layer": "archive", "future": 1}],
              "doc_writes": ["a/b"], "created_at": at, "memory_ids": ["m1"], "credential": KEY, "later": "x"}
    typed = LedgerCommit.from_store(commit)
    assert typed.to_store() == commit and typed.memory_ids == ("m1",) and typed.credential == KEY
    assert typed.change_of("m1") == LedgerChange(memory_id="m1", layer="archive")
    assert typed.change_of("m2") == LedgerChange() and LedgerCommit.from_store({}).to_store() == {}
    for journal in ({"operation_id": "op_1", "kind": "k", "commit_id": None, "sequence": None, "changed_ids": [],
                     "summary": {"n": 1}, "created_at": at, "noop": True},
                    {"operation_id": "op_2", "commit_id": "mc_2", "summary": None, "outbox_events": 0}):
        assert OperationJournal.from_store(journal).to_store() == journal
    assert OperationJournal.from_store({"summary": None}).summary == {}
    for switches in ({}, {"writes_disabled": None, "consolidation_disabled": True, "other": 1}):
        assert IncidentSwitches.from_store(switches).to_store() == switches
    assert ApplyControl.from_store(None).sequence == 0


def test_history_a_keys_writes_and_a_replayed_delete_answer_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    with credentials.acting_as(KEY):
        [mid] = [i.id for i in intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I speak Greek")])]
    created_at = w.clock.now()
    w.clock.advance(seconds=60)
    first = deletion.delete_memory(w.ctx, UID, mid, request_key="req-1")
    assert deletion.delete_memory(w.ctx, UID, mid, request_key="req-1") == first
    commits = sorted(w.store.collection(f"users/{UID}/memory_commits").values(), key=lambda c: c["sequence"])
    assert [(c["kind"], c.get("credential")) for c in commits] == [
        ("intake.explicit", KEY), ("intake.process", KEY), ("delete.memory", None)]
    assert first == {"deleted": [mid], "commit_id": commits[2]["commit_id"], "receipt_id": first["receipt_id"]}
    assert reads.history(w.ctx, UID, mid) == [
        {"commit_id": commits[0]["commit_id"], "sequence": 1, "kind": "intake.explicit",
         "created_at": created_at.isoformat(), "revision": 1, "layer": "short_term", "status": "active"},
        {"commit_id": commits[1]["commit_id"], "sequence": 2, "kind": "intake.process",
         "created_at": created_at.isoformat(), "revision": 2, "layer": "short_term", "status": "active"},
        {"commit_id": commits[2]["commit_id"], "sequence": 3, "kind": "delete.memory",
         "created_at": w.clock.now().isoformat(), "revision": 3, "layer": "short_term", "status": "tombstoned"},
    ]
    query = w.store.query

    def by_credential(name: str, params: dict[str, Any], **kw: Any) -> Any:  # the fake matches no dotted field
        if name != "commits_by_credential":
            return query(name, params, **kw)
        rows = query("commits_by_memory", {"memory_ids": mid}, parent=kw["parent"])
        return [r for r in rows if (r.data.get("credential") or {}).get("key_id") == params["credential.key_id"]]
    monkeypatch.setattr(w.store, "query", by_credential)
    assert key_writes.written(w.ctx, UID, "key_a") == {"commits": 2, "memory_ids": [mid], "conversation_ids": [],
                                                       "truncated": False}
    assert key_writes.written(w.ctx, UID, "key_b") == {"commits": 0, "memory_ids": [], "conversation_ids": [],
                                                       "truncated": False}


def test_an_assertion_is_read_as_stored() -> None:
    stored = {"assertion_id": ids.commit_id(UID, 1, "op"), "memory_id": "m1", "status": "active", "edge_id": "e1"}
    assertion = GraphAssertion.from_store(stored)
    assert (assertion.status, assertion.edge_id, assertion.to_store()) == ("active", "e1", stored)
