"""The in-memory store honours the port's contract (core/ports.py Store docstring): an apply is all
or nothing, a journaled operation replays, the fences refuse, named queries filter, order and page
as declared in core/domain/queries.py."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from core.domain import fence, ids, outbox, paths
from core.domain.changes import Change, Increment
from core.domain.plan import ApplyView, OutboxAction, Plan
from core.domain.records import MemoryItem
from core.errors import (
    AdmissionRefused,
    Conflict,
    GenerationChanged,
    IllegalState,
    NotFound,
    StrataError,
    WritesBlocked,
    WritesDisabled,
)
from core.ports import Store, StoredDoc, Write
from tests.unit.fakes.ports import FakeClock
from tests.unit.fakes.store import InMemoryStore


def _store() -> tuple[InMemoryStore, FakeClock]:
    clock = FakeClock()
    return InMemoryStore(clock.now), clock


def _new(uid: str, mid: str, content: str = "I grow tomatoes") -> MemoryItem:
    return MemoryItem(id=mid, uid=uid, content=content)


def _creates(*mids: str, docs: dict | None = None):
    def plan(view: ApplyView) -> Plan:
        return Plan(items=[_new(view.uid, m) for m in mids if view.items.get(m) is None], docs=dict(docs or {}))
    return plan


def test_the_fake_is_a_store() -> None:
    assert isinstance(_store()[0], Store)


def test_an_apply_commits_items_outbox_commit_head_and_journal_together() -> None:
    store, _ = _store()
    result = store.apply("u", "t.create", {"k": 1}, _creates("m1", "m2"), item_ids=["m1", "m2"])
    assert (result.sequence, result.replayed, sorted(result.changed_ids)) == (1, False, ["m1", "m2"])
    assert store.head_sequence("u") == 1
    assert set(store.collection("users/u/memory_items")) == {"m1", "m2"}
    outbox = store.collection("users/u/memory_outbox")
    assert sorted(e["memory_id"] for e in outbox.values() if e["action"] in ("upsert", "delete")) == ["m1", "m2"]
    assert all(e["state"] == "pending" and e["sequence"] == 1 for e in outbox.values())
    [commit] = store.collection("users/u/memory_commits").values()
    assert commit["sequence"] == 1 and commit["parent_commit_id"] is None
    item = store.get(paths.doc("u", "memory_items", "m1"))
    assert item is not None and item["revision"] == 1 and item["ledger_sequence"] == 1


def test_a_journaled_operation_replays_without_writing() -> None:
    store, _ = _store()
    first = store.apply("u", "t.create", {"k": 1}, _creates("m1"), item_ids=["m1"])
    before = dict(store.docs)
    again = store.apply("u", "t.create", {"k": 1}, _creates("m9"), item_ids=["m9"])
    assert again.replayed and again.commit_id == first.commit_id and store.docs == before
    assert store.get(paths.operation("u", ids.operation_id("u", "t.create", {"k": 1}))) is not None
    assert store.get(paths.operation("u", ids.operation_id("u", "t.create", {"k": 2}))) is None


def test_sequences_are_gapless_and_chain_commits() -> None:
    store, _ = _store()
    results = [store.apply("u", "t.create", {"k": i}, _creates(f"m{i}"), item_ids=[f"m{i}"]) for i in range(3)]
    assert [r.sequence for r in results] == [1, 2, 3]
    commits = sorted(store.collection("users/u/memory_commits").values(), key=lambda c: c["sequence"])
    assert [c["parent_commit_id"] for c in commits] == [None, results[0].commit_id, results[1].commit_id]


def test_a_failing_validator_writes_nothing() -> None:
    store, _ = _store()
    store.apply("u", "t.create", {"k": 0}, _creates("m0"), item_ids=["m0"])
    before = dict(store.docs)

    def long_term_without_receipt(view: ApplyView) -> Plan:
        item = _new("u", "m1")
        item.layer, item.processing_state = "long_term", "processed"
        return Plan(items=[_new("u", "m2"), item], docs={"notes/x": {"a": 1}})

    with pytest.raises(AdmissionRefused):
        store.apply("u", "t.bad", {"k": 1}, long_term_without_receipt, item_ids=["m1", "m2"])
    assert store.docs == before and store.head_sequence("u") == 1

    def illegal(view: ApplyView) -> Plan:
        item = _new("u", "m3")
        item.layer = "long_term"  # pending in Long-term: not a legal combination (the legal-states table, docs/data-model.md)
        return Plan(items=[_new("u", "m2"), item])

    with pytest.raises(IllegalState):
        store.apply("u", "t.illegal", {}, illegal, item_ids=["m2", "m3"])
    assert store.docs == before


def test_an_undeclared_or_foreign_item_is_refused() -> None:
    store, _ = _store()
    with pytest.raises(StrataError):
        store.apply("u", "t.x", {}, lambda view: Plan(items=[_new("u", "m1")]))
    with pytest.raises(StrataError):
        store.apply("u", "t.y", {}, lambda view: Plan(items=[_new("other", "m1")]), item_ids=["m1"])
    assert store.docs == {}


def test_an_empty_plan_journals_a_noop_only_on_an_existing_account() -> None:
    store, _ = _store()
    result = store.apply("u", "t.none", {}, lambda view: Plan())
    assert result.commit_id is None and store.docs == {}  # a new account stays empty
    store.apply("u", "t.create", {}, _creates("m1"), item_ids=["m1"])
    store.apply("u", "t.none", {}, lambda view: Plan())
    assert (store.get(paths.operation("u", ids.operation_id("u", "t.none", {}))) or {}).get("noop") is True


def test_too_many_items_is_a_conflict() -> None:
    store, _ = _store()
    with pytest.raises(Conflict):
        store.apply("u", "t.big", {}, lambda view: Plan(), item_ids=[f"m{i}" for i in range(201)])


def test_incident_switch_and_account_fence_refuse_applies() -> None:
    store, _ = _store()
    store.put(paths.CONTROLS_GLOBAL, {"writes_disabled": True})
    with pytest.raises(WritesDisabled):
        store.apply("u", "t.create", {}, _creates("m1"), item_ids=["m1"])
    store.put(paths.CONTROLS_GLOBAL, {})
    store.put(paths.account_deletion("u"), {"state": "fenced", "generation": 1})
    with pytest.raises(WritesBlocked):
        store.apply("u", "t.create", {}, _creates("m1"), item_ids=["m1"])
    store.apply("u", "t.create", {}, _creates("m1"), item_ids=["m1"], bypass_account_fence=True)
    store.put(paths.account_deletion("u"), {"state": "completed", "generation": 2})
    with fence.expect("u", 1), pytest.raises(GenerationChanged):
        store.apply("u", "t.create", {"again": 1}, _creates("m2"), item_ids=["m2"])
    with fence.expect("u", 2):
        assert store.apply("u", "t.create", {"again": 2}, _creates("m2"), item_ids=["m2"]).commit_id


def test_plan_outbox_actions_and_documents_land_with_the_commit() -> None:
    store, _ = _store()

    def plan(view: ApplyView) -> Plan:
        return Plan(docs={"notes/a": {"x": 1}}, outbox=[OutboxAction("", "purge_user", "why")])

    store.apply("u", "t.doc", {}, plan, doc_paths=["notes/a"])
    assert store.get("users/u/notes/a") == {"x": 1}
    [event] = store.collection("users/u/memory_outbox").values()
    assert (event["action"], event["reason"]) == ("purge_user", "why")
    store.apply("u", "t.undoc", {}, lambda view: Plan(docs={"notes/a": None}), doc_paths=["notes/a"])
    assert store.get("users/u/notes/a") is None


def test_named_queries_filter_order_and_page() -> None:
    store, clock = _store()
    for i in range(5):
        store.put(f"users/u/memory_review_queue/r{i}", {"status": "open" if i != 2 else "resolved",
                                                      "created_at": clock.now() + timedelta(minutes=i)})
    store.put("users/other/memory_review_queue/r9", {"status": "open", "created_at": clock.now()})
    rows = store.query("review_open", {"status": "open"}, parent="users/u")
    assert [r.id for r in rows] == ["r4", "r3", "r1", "r0"]  # newest created first, u's only
    page = store.query("review_open", {"status": "open"}, parent="users/u", limit=2)
    rest = store.query("review_open", {"status": "open"}, parent="users/u", start_after=page[-1])
    assert [r.id for r in page + rest] == ["r4", "r3", "r1", "r0"]
    for uid in ("a", "b"):
        store.put(f"users/{uid}/memory_outbox/e1", {"state": "dead"})
    dead = store.query("outbox_by_state_all_users", {"state": ["dead"]})
    assert [d.owner for d in dead] == ["a", "b"]
    assert store.query("outbox_by_state_all_users", {"state": ["dead"]}, start_after=dead[0]) == [dead[1]]


def test_a_disjunctive_query_matches_any_of_its_clauses_once() -> None:
    """``legacy_*_citing`` (an ``any_of`` spec): a row citing the conversation under either field
    name, or both, is found once, by id; a row citing another is not."""
    store, _ = _store()
    store.put("users/u/memories/a", {"conversation_id": "c1"})
    store.put("users/u/memories/b", {"memory_id": "c1"})
    store.put("users/u/memories/c", {"conversation_id": "c1", "memory_id": "c1"})
    store.put("users/u/memories/d", {"conversation_id": "c2", "memory_id": "c3"})
    store.put("users/v/memories/e", {"conversation_id": "c1"})
    params = {"conversation_id": "c1", "memory_id": "c1"}
    rows = store.query("legacy_memories_citing", params, parent="users/u", keys_only=True)
    assert [(r.id, r.data) for r in rows] == [("a", {}), ("b", {}), ("c", {})]
    assert [r.id for r in store.query("legacy_memories_citing", params, parent="users/u", limit=2)] == ["a", "b"]


def _swap_if(store: InMemoryStore, condition: Callable[[dict[str, Any] | None], bool], data: dict[str, Any],
             seen: StoredDoc | None = None) -> bool:
    return store.swap("c/a", lambda d: (True, data) if condition(d) else (False, None), seen=seen, exhausted=False)


def test_named_changes_and_swaps() -> None:
    store, _ = _store()
    with pytest.raises(NotFound):
        store.write(Change("test.missing", [Write("set", "c/a", {"v": 1}), Write("update", "c/missing", {"v": 2})]))
    assert store.get("c/a") is None  # all or nothing
    store.write(Change("test.seed", [Write("set", "c/a", {"v": 1}), Write("set", "c/a", {"w": 2}, merge=True)]))
    assert store.get("c/a") == {"v": 1, "w": 2}
    [doc] = store.scan("c", limit=10)
    store.write(Change("test.move", [Write("set", "c/a", {"v": 3})]))
    seen: list[dict[str, Any] | None] = []
    assert _swap_if(store, lambda d: seen.append(d) is None, {"v": 4}, seen=doc)  # stale: decided again
    assert [d and d["v"] for d in seen] == [1, 3] and (store.get("c/a") or {})["v"] == 4
    assert not _swap_if(store, lambda d: False, {"v": 5}, seen=StoredDoc("c/a", {}, store.versions["c/a"]))
    assert _swap_if(store, lambda d: True, {"v": 5}, seen=StoredDoc("c/a", {}, store.versions["c/a"]))
    assert _swap_if(store, lambda d: bool(d and d["v"] == 5), {"seen": True})
    assert not _swap_if(store, lambda d: False, {"seen": False})
    assert (store.get("c/a") or {}).get("seen") is True
    assert not store.write(Change("test.create", [Write("create", "c/a", {})]))
    assert store.write(Change("test.create", [Write("create", "c/b", {})]))
    count = Write("set", "c/n", {"count": Increment(1), "k": "x"}, merge=True)
    assert store.write(Change("test.count", [count])).counts == {"c/n": 1}
    assert store.write(Change("test.count", [count])).counts == {"c/n": 2} and store.get("c/n") == {"count": 2, "k": "x"}
    store.put(paths.account_deletion("u"), {"state": "purging", "generation": 1})
    with pytest.raises(WritesBlocked):
        store.write(Change("test.fenced", [Write("set", "users/u/x/y", {"a": 1})], fenced="u"))
    store.put(paths.account_deletion("u"), {"state": "completed", "generation": 1})
    assert not store.write(Change("test.fenced", [Write("set", "users/u/x/y", {"a": 1})], fenced="u",
                                  guard="c/a", refuse=lambda d: True))
    assert store.write(Change("test.fenced", [Write("set", "users/u/x/y", {"a": 1})], fenced="u"))
    store.write(Change("test.purge", [Write("purge", "users/u")]))
    assert not list(store.children("users/u")) and store.get(paths.account_deletion("u")) is not None


def test_a_change_refuses_what_it_cannot_do() -> None:
    with pytest.raises(ValueError):
        Change("test.purge", [Write("purge", "users/u"), Write("delete", "c/a")])
    with pytest.raises(ValueError):
        Change("test.refuse", [Write("delete", "c/a")], refuse=lambda d: True)
    with pytest.raises(ValueError):
        Change("test.fenced", [Write("create", "c/a", {})], fenced="u")
    with pytest.raises(ValueError):
        Change("test.count", [Write("set", "c/a", {"n": Increment(1)})])  # not a merge


def _take(store: InMemoryStore, holder: str, ttl: timedelta, clock: FakeClock, *, mark_dirty: bool = False,
          seen: StoredDoc | None = None) -> bool:
    return store.swap("l/a", lambda d: outbox.take(d, holder, clock.now(), ttl, mark_dirty=mark_dirty),
                      seen=seen, exhausted=False)


def _release(store: InMemoryStore, holder: str, ttl: timedelta, clock: FakeClock, *, honour_dirty: bool = False) -> bool:
    return store.swap("l/a", lambda d: outbox.release(d, holder, clock.now(), ttl, honour_dirty=honour_dirty),
                      exhausted=honour_dirty)


def test_leases_expire_and_carry_a_dirty_note() -> None:
    store, clock = _store()
    ttl = timedelta(minutes=1)
    assert _take(store, "h1", ttl, clock, seen=StoredDoc.absent("l/a"))
    assert not _take(store, "h2", ttl, clock, seen=StoredDoc.absent("l/a"))  # read before h1 took it: decided again
    assert not _take(store, "h2", ttl, clock, mark_dirty=True)
    assert _release(store, "h1", ttl, clock, honour_dirty=True)  # a note: go round once more
    assert not _release(store, "h1", ttl, clock, honour_dirty=True)
    assert _take(store, "h2", ttl, clock)
    clock.advance(minutes=2)
    assert _take(store, "h3", ttl, clock)  # expired: taken over
    assert not _release(store, "h2", ttl, clock)
