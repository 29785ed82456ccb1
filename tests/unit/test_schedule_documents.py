"""The consolidation schedule's registry row, the walk's cursor, the last pass's record and the
graph assertion an admission writes, as typed documents: they read and write back exactly as
stored, and every write of them stores the shape it always stored (the same fields, in the same
order, nulls as nulls and nothing more)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.domain import ids, paths
from core.domain.admission import admit
from core.domain.documents import ScheduleEntry, WalkCursor
from core.domain.records import MemoryItem
from core.domain.routing import RouteCandidate, RouteProposal
from core.domain.states import Layer, ProcessingState, Status
from core.services import consolidation, intake, projection, scheduling
from tests.unit.fakes.ports import World, world

UID = "u1"
T0 = datetime(2026, 12, 1, 18, 30, tzinfo=UTC)
ROW = paths.schedule_entry(UID)


def roundtrip(kind: Any, stored: dict[str, Any]) -> Any:
    doc = kind.from_store(stored)
    assert doc.to_store() == stored
    assert list(doc.to_store()) == list(stored)
    return doc


def _writes(w: World, monkeypatch: pytest.MonkeyPatch, path: str) -> list[tuple[dict[str, Any] | None, bool]]:
    """Every write to ``path`` from here on, as the store received it (data, merge)."""
    seen: list[tuple[dict[str, Any] | None, bool]] = []
    write = w.store._write

    def record(at: str, data: dict[str, Any] | None, merge: bool = False) -> None:
        if at == path:
            seen.append((None if data is None else dict(data), merge))
        write(at, data, merge)

    monkeypatch.setattr(w.store, "_write", record)
    return seen


def _remember(w: World, *contents: str) -> None:
    intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content=c) for c in contents])


class Promote:
    router_id, router_version = "promote", "1"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        return [RouteProposal(c.ref, "promote", "test") for c in candidates]


# ----------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("stored", [
    {"uid": UID, "pending": True, "marked_at": T0, "write_window": 7, "due_at": T0},
    {"uid": UID, "pending": False, "marked_at": T0, "write_window": 7, "due_at": T0, "cleared_at": T0},
    {"pending": True, "marked_at": T0},  # marked only (no task on write)
    {"uid": UID, "pending": None, "marked_at": None, "due_at": None, "later": 1},  # nulls and a field it does not name
])
def test_schedule_rows(stored: dict[str, Any]) -> None:
    roundtrip(ScheduleEntry, stored)


def test_an_absent_schedule_row_is_empty_and_never_cleared() -> None:
    row = ScheduleEntry.from_store(None)
    assert (row.pending, row.write_window, row.due_at, row.to_store()) == (None, None, None, {})
    assert not row.unmarked_since(T0)
    assert ScheduleEntry(pending=True, marked_at=T0).unmarked_since(T0)
    assert not ScheduleEntry(pending=True, marked_at=T0 + timedelta(seconds=1)).unmarked_since(T0)
    assert not ScheduleEntry(pending=False, marked_at=T0).unmarked_since(T0)


@pytest.mark.parametrize("stored", [
    {"after": "u9", "walked_at": T0, "wrapped": False},
    {"after": None, "walked_at": T0, "wrapped": True},
])
def test_walk_cursors(stored: dict[str, Any]) -> None:
    roundtrip(WalkCursor, stored)
    assert WalkCursor(after=stored["after"], walked_at=T0, wrapped=stored["wrapped"]).to_store() == stored


SUMMARY = {"uid": UID, "selected": 2, "routes": {"promote": 2}, "retries": 0, "untouched": 0, "aged_out": 0,
           "reviews_expired": 0, "overflow": False, "skipped": None}
TRIGGER = {"task_name": None, "queue_name": None, "retry_count": None}


# ------------------------------------------------------------------------ what the writes store
def test_a_drained_write_marks_the_user_and_names_its_window(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    writes = _writes(w, monkeypatch, ROW)
    _remember(w, "I like maple")
    projection.drain_user(w.ctx, UID)
    now = w.clock.now()
    window = scheduling.window(w.ctx, now)
    due = now + timedelta(seconds=w.ctx.settings.schedule_interval_s)
    assert writes == [({"uid": UID, "pending": True, "marked_at": now, "write_window": window, "due_at": due}, True)]
    assert list(writes[0][0] or {}) == ["uid", "pending", "marked_at", "write_window", "due_at"]

    _remember(w, "I like oak")  # the same window: marked again, no second task
    projection.drain_user(w.ctx, UID)
    assert writes[1:] == [({"uid": UID, "pending": True, "marked_at": now}, True)]
    assert len(w.tasks.tasks) == 1

    consolidation.run_pass(w.ctx, UID, router=Promote())
    assert writes[2:] == [({"pending": False, "cleared_at": now}, True)]
    assert list(writes[2][0] or {}) == ["pending", "cleared_at"]


def test_an_overflowing_pass_continues_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    _remember(w, "I like maple", "I like oak")
    projection.drain_user(w.ctx, UID)
    writes = _writes(w, monkeypatch, ROW)
    consolidation.run_pass(w.ctx, UID, router=Promote(), max_selected=1)
    now = w.clock.now()
    assert writes[-1] == ({"uid": UID, "pending": True, "marked_at": now, "due_at": now}, True)
    assert list(writes[-1][0] or {}) == ["uid", "pending", "marked_at", "due_at"]


def test_the_walk_repairs_the_row_and_keeps_its_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(consolidation_on_write=False)
    rows = _writes(w, monkeypatch, ROW)
    _remember(w, "I like maple")
    projection.drain_user(w.ctx, UID)
    now = w.clock.now()
    assert rows == [({"uid": UID, "pending": True, "marked_at": now}, True)]  # marked only
    cursor = _writes(w, monkeypatch, paths.WALK_CURSOR)
    assert scheduling.walk(w.ctx) == {"users": 1, "enqueued": 1, "wrapped": True}
    assert rows[1:] == [({"due_at": now}, True)]
    assert cursor == [({"after": None, "walked_at": now, "wrapped": True}, False)]
    assert list(cursor[0][0] or {}) == ["after", "walked_at", "wrapped"]


def test_the_pass_record_stores_the_summary_its_trigger_and_when(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    ref = paths.last_consolidation(UID)
    writes = _writes(w, monkeypatch, ref)
    consolidation.record_pass(w.ctx, UID, dict(SUMMARY), dict(TRIGGER))
    expected = {**SUMMARY, "trigger": TRIGGER, "finished_at": w.clock.now()}
    assert writes == [(expected, False)]
    assert list(writes[0][0] or {}) == list(expected)


def test_an_admission_writes_every_field_of_its_graph_assertion() -> None:
    item = MemoryItem(id="mem_1", uid=UID, content="User likes tea", kind="preference", category="food",
                      layer=Layer.SHORT_TERM.value, status=Status.ACTIVE.value,
                      processing_state=ProcessingState.PROCESSED.value, subject_attribution="user")
    stored = admit(item, revision=3, commit_id="mc_1", now=T0, planner="test")
    fact = ids.entity_id("fact:User likes tea")
    assert stored == {
        "assertion_id": item.graph_assertion_id, "memory_id": "mem_1", "uid": UID, "revision": 3,
        "content_hash": ids.content_hash("User likes tea"), "plan_hash": item.graph_plan_hash, "status": "active",
        "subject": "user", "subject_entity_id": ids.entity_id("user"), "predicate": "prefers",
        "object": "User likes tea", "object_entity_id": fact,
        "edge_id": ids.edge_id(ids.entity_id("user"), fact, "prefers"),
        "source_commit_id": "mc_1", "created_at": T0,
    }
    assert list(stored) == ["assertion_id", "memory_id", "uid", "revision", "content_hash", "plan_hash", "status",
                            "subject", "subject_entity_id", "predicate", "object", "object_entity_id", "edge_id",
                            "source_commit_id", "created_at"]
