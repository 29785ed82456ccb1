"""The account wipe record and the rebuild's records, as typed documents: the exact shapes the wipe,
the drain's keyword purge and the rebuild write (field names, nulls, merge flags), and that a
stored record reads and writes back unchanged."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from core.domain import paths
from core.domain.documents import AccountDeletion, KeywordPurgeError, RebuildMarker, RebuildRun
from core.services import accounts, drain_handlers, intake, rebuild
from tests.unit.fakes.ports import World, world

UID = "u-docs"

Written = list[tuple[str, bool, dict[str, Any]]]


def _recording(w: World, monkeypatch: pytest.MonkeyPatch, *wanted: str) -> Written:
    """The documents under ``wanted`` paths written from now on: (path, merge, data)."""
    written: Written = []
    original: Callable[..., None] = w.store._write

    def write(path: str, data: dict[str, Any] | None, merge: bool = False) -> None:
        if data is not None and path in wanted:
            written.append((path, merge, copy.deepcopy(data)))
        original(path, data, merge)

    monkeypatch.setattr(w.store, "_write", write)
    return written


def _memory(w: World, content: str) -> None:
    intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content=content)])


def test_a_wipe_raises_its_record_whole_then_merges_each_step(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    _memory(w, "I like kites")
    ref = paths.account_deletion(UID)
    written = _recording(w, monkeypatch, ref)
    rid = accounts.delete_account(w.ctx, UID)["receipt_id"]
    now = w.clock.now()
    assert written == [
        (ref, False, {"uid": UID, "state": "fenced", "started_at": now, "steps": {}, "generation": 1, "receipt_id": rid}),
        (ref, True, {"state": "purging", "steps": {"providers_purged": now}}),
        (ref, True, {"state": "completed", "steps": {"providers_purged": now, "canonical_wiped": now},
                     "completed_at": now}),
    ]
    written.clear()
    assert accounts.delete_account(w.ctx, UID)["receipt_id"] == rid  # nothing left: no write
    assert written == []
    _memory(w, "I like boats")
    again = accounts.delete_account(w.ctx, UID)["receipt_id"]
    assert written[0] == (ref, False, {"uid": UID, "state": "fenced", "started_at": now, "steps": {},
                                       "generation": 2, "receipt_id": again})


def test_a_record_without_a_receipt_id_gets_one_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    ref = paths.account_deletion(UID)
    w.store.put(ref, {"state": "completed", "generation": 3, "steps": None})
    written = _recording(w, monkeypatch, ref)
    rid = accounts.delete_account(w.ctx, UID)["receipt_id"]
    assert written == [(ref, True, {"receipt_id": rid})]
    assert w.store.get(ref) == {"state": "completed", "generation": 3, "steps": None, "receipt_id": rid}


def test_the_drain_records_its_keyword_purge_or_its_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    ref = paths.account_deletion(UID)
    w.store.put(ref, {"uid": UID, "state": "fenced", "generation": 2, "steps": {}, "receipt_id": "r"})
    written = _recording(w, monkeypatch, ref)
    w.keyword.fail = RuntimeError("typesense down")
    assert drain_handlers.purge_keyword_index(w.ctx, UID, 2, "req-1") == "failed"
    w.keyword.fail = None
    assert drain_handlers.purge_keyword_index(w.ctx, UID, 2, "req-2") == "purged"
    assert drain_handlers.purge_keyword_index(w.ctx, UID, 2, "req-3") == "already_purged"
    assert drain_handlers.purge_keyword_index(w.ctx, UID, 1) == "stale"
    assert written == [
        (ref, True, {"keyword_purge_error": {"generation": 2, "requested": "req-1",
                                             "error": "RuntimeError: typesense down", "at": w.clock.now()}}),
        (ref, True, {"keyword_purged": 2}),
    ]


def test_a_rebuild_writes_its_run_and_each_users_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    _memory(w, "I like tulips")
    marker, run = paths.rebuild_marker(UID, "typesense"), paths.rebuild_run("typesense")
    written = _recording(w, monkeypatch, marker, run)
    report = rebuild.rebuild(w.ctx, "typesense", population=lambda ctx: [UID])
    now, [item] = w.clock.now(), list(w.store.collection(paths.col(UID, paths.MEMORY_ITEMS)))
    assert written == [
        (run, True, {"run_id": report.run_id, "done": False, "started_at": now}),
        (marker, False, {"run_id": report.run_id, "provider": "typesense", "cursor": None, "done": False,
                         "started_at": now, "purge_due_at": now}),
        (marker, True, {"cursor": item}),
        (marker, True, {"done": True, "finished_at": now}),
        (run, True, {"done": True, "finished_at": now}),
    ]


@pytest.mark.parametrize(("kind", "data"), [
    (AccountDeletion, {"uid": "u", "state": "purging", "started_at": None, "steps": {"providers_purged": 1},
                       "generation": 4, "receipt_id": "r", "keyword_purged": None, "later": True,
                       "keyword_purge_error": {"generation": 4, "requested": "q", "error": "x", "at": None, "y": 1}}),
    (AccountDeletion, {"state": "completed", "steps": None, "generation": None, "keyword_purge_error": None}),
    (RebuildMarker, {"run_id": "r", "provider": "graph", "cursor": None, "done": False, "purge_due_at": None}),
    (RebuildRun, {"run_id": None, "done": True, "finished_at": None, "other": 1}),
])
def test_stored_records_read_and_write_back_unchanged(kind: type[AccountDeletion | RebuildRun],
                                                      data: dict[str, Any]) -> None:
    assert kind.from_store(data).to_store() == data


def test_the_typed_reads() -> None:
    record = AccountDeletion.from_store({"state": "completed", "keyword_purge_error": {"generation": 1, "error": "e"}})
    assert record.completed and record.keyword_purge_error == KeywordPurgeError(generation=1, error="e")
    assert not AccountDeletion.from_store(None).completed and AccountDeletion.from_store(None).to_store() == {}
    assert RebuildMarker.from_store({"cursor": None}).cursor is None
