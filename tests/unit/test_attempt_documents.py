"""The capture marker's model-attempt record (``attempts``) and rules fallback (``fell_back``) are
typed (``ModelAttempts``, ``FellBack``) and stored exactly as the dicts capture wrote before: every
write is pinned here field by field (keys, their order, values, null vs absent). The redrive reads
its outbox events through ``OutboxEvent`` and still merges the same plain dict."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from core.domain import paths
from core.domain.changes import Change
from core.domain.documents import CaptureRun, FellBack, ModelAttempts, attempts_of, conversation_revision
from core.domain.extraction import ExtractionResult, ExtractionSource
from core.errors import LLMRejected, LLMUnavailable, StrataError
from core.services import capture, redrive
from tests.unit.fakes.ports import World, world

UID, CID = "u1", "c1"
DOC = {"status": "completed", "transcript_segments": [
    {"id": "s0", "text": "I live in Lisbon.", "is_user": True, "speaker": "SPEAKER_0"}]}
REVISION = conversation_revision(DOC)
RUN = paths.doc(UID, "capture_runs", CID)
KEYS = ["revision", "count", "last_error", "last_error_at", "first_at", "last_at"]


def record(revision: str, count: int, last_error: str | None, last_error_at: datetime | None,
           first_at: datetime | None, last_at: datetime | None) -> dict[str, Any]:
    """The attempt record as capture stored it before it was typed (all six keys, in this order)."""
    return {"revision": revision, "count": count, "last_error": last_error, "last_error_at": last_error_at,
            "first_at": first_at, "last_at": last_at}


class Failing:
    extractor_id, extractor_version, model_backed = "openai", "1:test", True

    def __init__(self, error: StrataError) -> None:
        self.error = error

    def extract(self, source: ExtractionSource) -> ExtractionResult:
        raise self.error


def _world(error: StrataError, **settings: Any) -> tuple[World, list[tuple[str, str, dict[str, Any] | None, bool]]]:
    """A world whose model fails with ``error``, and the marker writes of its named changes."""
    w = world(**settings)
    w.ctx._overrides["extractor"] = Failing(error)
    writes: list[tuple[str, str, dict[str, Any] | None, bool]] = []
    write: Callable[[Change], Any] = w.store.write

    def recording(change: Change) -> Any:
        writes.extend((change.name, x.path, x.data, x.merge) for x in change.writes if x.path == RUN)
        return write(change)

    w.store.write = recording  # type: ignore[method-assign]
    return w, writes


def test_a_fresh_record_writes_all_six_fields_unset_ones_as_null() -> None:
    fresh = attempts_of(None, REVISION)
    assert isinstance(fresh, ModelAttempts)
    assert fresh.to_store() == record(REVISION, 0, None, None, None, None)
    assert list(fresh.to_store()) == KEYS
    assert CaptureRun(attempts=fresh).to_store() == {"attempts": record(REVISION, 0, None, None, None, None)}


def test_a_transient_failure_writes_each_reservation_and_each_error_then_the_fallback() -> None:
    w, writes = _world(LLMUnavailable("down"), llm_max_attempts=2)
    t0 = w.clock.now()
    assert capture.capture_conversation(w.ctx, UID, CID, DOC).retry
    w.clock.advance(minutes=1)
    t1 = w.clock.now()
    assert not capture.capture_conversation(w.ctx, UID, CID, DOC).retry
    assert writes == [
        ("capture.reserve_attempt", RUN, {"attempts": record(REVISION, 1, None, None, t0, t0)}, True),
        ("capture.attempt_failed", RUN, {"attempts": record(REVISION, 1, "llm_unavailable", t0, t0, t0)}, True),
        ("capture.reserve_attempt", RUN, {"attempts": record(REVISION, 2, "llm_unavailable", t0, t0, t1)}, True),
    ]  # the last attempt's failure is written with the fallback's marker, in the capture's commit
    assert all(list(data["attempts"]) == KEYS for _, _, data, _ in writes if data)
    marker = w.store.get(RUN)
    assert marker is not None
    assert marker["attempts"] == record(REVISION, 2, "llm_unavailable", t1, t0, t1)
    assert list(marker["attempts"]) == KEYS
    assert marker["fell_back"] == {"reason": "llm_unavailable", "attempts": 2, "at": t1}
    assert list(marker["fell_back"]) == ["reason", "attempts", "at"]
    assert list(marker) == ["revision", "jobs", "updated_at", "errors", "captures", "extractor", "attempts",
                            "fell_back"]


def test_a_refusal_with_fail_writes_the_failed_marker_with_its_attempts() -> None:
    w, writes = _world(LLMRejected("HTTP 401"), llm_max_attempts=3, llm_on_failure="fail")
    t0 = w.clock.now()
    assert not capture.capture_conversation(w.ctx, UID, CID, DOC).retry
    failed = {job: "failed: llm_rejected" for job in ("memories", "action_items", "goals")}
    gave_up = "model extraction gave up after 1 attempt(s): HTTP 401"
    assert writes == [
        ("capture.reserve_attempt", RUN, {"attempts": record(REVISION, 1, None, None, t0, t0)}, True),
        ("capture.marker", RUN, {"revision": REVISION, "jobs": failed, "updated_at": t0,
                                 "errors": dict.fromkeys(failed, gave_up), "captures": 1,
                                 "attempts": record(REVISION, 1, "llm_rejected", t0, t0, t0)}, False),
    ]
    assert "fell_back" not in (w.store.get(RUN) or {})


def test_the_record_of_another_revision_is_a_fresh_one_and_a_stored_one_is_read_into_six_fields() -> None:
    t0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    stored = {"attempts": {"revision": REVISION, "count": None, "last_error": "x", "note": "kept only as read"}}
    assert attempts_of(stored, REVISION).to_store() == record(REVISION, 0, "x", None, None, None)
    assert attempts_of(stored, "other").to_store() == record("other", 0, None, None, None, None)
    full = {"attempts": record(REVISION, 2, "llm_unavailable", t0, t0, t0)}
    assert attempts_of(full, REVISION).to_store() == full["attempts"]
    assert attempts_of(CaptureRun.from_store(full), REVISION) == ModelAttempts(**full["attempts"])


@pytest.mark.parametrize("stored", [
    {"attempts": {"count": 1, "revision": "r1"}},  # absent fields stay absent
    {"attempts": {"revision": "r1", "count": None, "last_error": None, "extra": 1}},  # nulls stay null
    {"attempts": "not a map", "fell_back": True},  # kept as stored
    {"revision": "r1", "fell_back": {"reason": "llm_rejected", "attempts": 1, "at": None, "why": "kept"}},
    {"fell_back": {}},
])
def test_stored_attempts_and_fallbacks_read_and_write_back_unchanged(stored: dict[str, Any]) -> None:
    run = CaptureRun.from_store(stored)
    assert run.to_store() == stored
    assert not isinstance(stored.get("attempts"), dict) or isinstance(run.attempts, ModelAttempts)
    assert not isinstance(stored.get("fell_back"), dict) or isinstance(run.fell_back, FellBack)


def test_a_redrive_reads_the_dead_event_typed_and_merges_the_same_plain_dict() -> None:
    w = world()
    path = paths.doc(UID, "memory_outbox", "ob_1")
    dead = {"event_id": "ob_1", "uid": UID, "memory_id": "m1", "action": "upsert", "state": "dead", "attempts": 8,
            "due_at": None, "lease_expires_at": None, "dead_at": w.clock.now(), "last_error": "down",
            "redrives": 2, "note": "kept"}
    w.store.put(path, dead)
    w.clock.advance(hours=1)
    now = w.clock.now()
    assert redrive.redrive(w.ctx).redriven == 1
    assert w.store.get(path) == {**dead, "state": "pending", "attempts": 0, "due_at": now, "lease_expires_at": None,
                                 "dead_at": None, "redriven_at": now, "redrives": 3}
    assert redrive.redrive(w.ctx).redriven == 0
