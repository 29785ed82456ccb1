"""Named changes (``Store.write``) on the emulator: a batch is all or nothing, a create of an
existing document refuses it, an increment answers its new value, a fenced or guarded change reads
the wipe record and its guard in its transaction, and a purge removes a subtree."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from core.bootstrap import Context
from core.domain import paths
from core.domain.changes import Change, Increment
from core.errors import NotFound, WritesBlocked
from core.ports import Write

pytestmark = pytest.mark.integration


def _uid() -> str:
    return f"change-{uuid.uuid4().hex[:10]}"


def test_a_batch_is_all_or_nothing_and_a_create_refuses_an_existing_document(stack: dict[str, Any]) -> None:
    store = Context().store
    base = f"users/{_uid()}/memory_state"
    with pytest.raises(NotFound):
        store.write(Change("test.missing", [Write("set", f"{base}/a", {"v": 1}), Write("update", f"{base}/gone", {"v": 2})]))
    assert store.get(f"{base}/a") is None
    assert store.write(Change("test.create", [Write("create", f"{base}/a", {"v": 1}), Write("set", f"{base}/b", {"v": 1})]))
    refused = store.write(Change("test.create", [Write("create", f"{base}/a", {"v": 2}), Write("set", f"{base}/b", {"v": 2})]))
    assert not refused and store.get(f"{base}/a") == {"v": 1} and store.get(f"{base}/b") == {"v": 1}


def test_an_increment_answers_the_new_value(stack: dict[str, Any]) -> None:
    store = Context().store
    path = f"users/{_uid()}/memory_state/counter"
    count = Write("set", path, {"count": Increment(1), "kind": "test"}, merge=True)
    assert store.write(Change("test.count", [count])).counts == {path: 1}
    assert store.write(Change("test.count", [count])).counts == {path: 2}
    assert store.get(path) == {"count": 2, "kind": "test"}


def test_a_fenced_change_is_refused_while_a_wipe_runs_and_a_guard_can_refuse(stack: dict[str, Any]) -> None:
    store = Context().store
    uid = _uid()
    row, guard = paths.doc(uid, "memory_state", "row"), paths.doc(uid, "memory_state", "guard")
    store.write(Change("test.wipe", [Write("set", paths.account_deletion(uid), {"state": "purging", "generation": 1})]))
    with pytest.raises(WritesBlocked):
        store.write(Change("test.fenced", [Write("set", row, {"v": 1})], fenced=uid))
    store.write(Change("test.wiped", [Write("set", paths.account_deletion(uid), {"state": "completed", "generation": 1})]))
    assert not store.write(Change("test.guarded", [Write("set", row, {"v": 1})], fenced=uid, guard=guard,
                                  refuse=lambda found: found is None))
    assert store.get(row) is None
    store.write(Change("test.seed", [Write("set", guard, {"ok": True})]))
    assert store.write(Change("test.guarded", [Write("set", row, {"v": 1})], fenced=uid, guard=guard,
                              refuse=lambda found: found is None))
    assert store.get(row) == {"v": 1}


def test_a_purge_removes_the_subtree(stack: dict[str, Any]) -> None:
    store = Context().store
    uid = _uid()
    store.write(Change("test.seed", [Write("set", paths.doc(uid, "memory_state", "a"), {"v": 1}),
                                     Write("set", f"users/{uid}/memory_state/a/deeper/b", {"v": 2})]))
    assert store.write(Change("test.purge", [Write("purge", paths.col(uid, "memory_state"))]))
    assert list(store.children(paths.user(uid))) == []
