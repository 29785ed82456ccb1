"""What a capture stores is built as typed documents and written exactly as the dicts it wrote before.

Each ``legacy_*`` function is the dict the capture service built before its documents were typed;
the typed document's ``to_store()`` must equal it for the same inputs (keys present, values, null vs
absent), and a stored row or marker must read and write back unchanged.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from core.domain import ids, paths
from core.domain.documents import ActionItem, CaptureRun, FellBack, Goal, ModelAttempts, WorkflowRow
from core.domain.extraction import ExtractionResult, WorkflowCandidate
from core.services import capture

T0 = datetime(2026, 12, 1, 18, 30, tzinfo=UTC)
T1 = datetime(2026, 12, 1, 18, 31, tzinfo=UTC)
UID, CID, REVISION = "u1", "c1", "r" * 32


def legacy_workflow_rows(collection: str, extraction: ExtractionResult) -> dict[str, dict[str, Any]]:
    rows = extraction.action_items if collection == paths.ACTION_ITEMS else extraction.goals
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        row_id = ids.contract_hash(collection, {"uid": UID, "conversation": CID,
                                                "description": " ".join(row.description.split()).casefold()})[:24]
        data: dict[str, Any] = {"id": row_id, "conversation_id": CID, "description": row.description,
                                "quote": row.quote, "due": row.due, "created_at": T0, "source": "conversation",
                                "revision": REVISION}
        if collection == paths.ACTION_ITEMS:
            data["completed"] = False
        else:
            data["status"] = "active"
            data["title"] = row.description
        out[paths.rel(collection, row_id)] = data
    return out


def _extraction(*rows: WorkflowCandidate) -> ExtractionResult:
    return ExtractionResult(memories=(), action_items=tuple(r for r in rows if r.kind == "action_item"),
                            goals=tuple(r for r in rows if r.kind == "goal"), extractor_id="rules",
                            extractor_version="3")


ROWS = [
    WorkflowCandidate("action_item", "Call the  bank", "I need to call the bank", due="2026-12-02"),
    WorkflowCandidate("action_item", "Book a table", "book a table", due=None),
    WorkflowCandidate("action_item", "Email Ana", None, due=None),  # type: ignore[arg-type]  # a null quote
    WorkflowCandidate("goal", "Run a marathon", "I want to run a marathon", due="2027-04-01"),
    WorkflowCandidate("goal", "Learn Portuguese", None, due=None),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("collection", [paths.ACTION_ITEMS, paths.GOALS])
def test_workflow_rows_are_written_as_before(collection: str) -> None:
    extraction = _extraction(*ROWS)
    ctx = SimpleNamespace(now=lambda: T0)
    typed = capture._workflow_rows(ctx, UID, CID, REVISION, collection, extraction)  # type: ignore[arg-type]
    legacy = legacy_workflow_rows(collection, extraction)
    assert {path: row.to_store() for path, row in typed.items()} == legacy
    assert all(isinstance(row, ActionItem if collection == paths.ACTION_ITEMS else Goal) for row in typed.values())
    nulls = [row for row in legacy.values() if row["quote"] is None or row["due"] is None]
    assert nulls and all("quote" in row and "due" in row for row in nulls)  # a null is written, not dropped


def test_no_rows_when_the_extraction_has_none() -> None:
    ctx = SimpleNamespace(now=lambda: T0)
    assert capture._workflow_rows(ctx, UID, CID, REVISION, paths.GOALS, _extraction()) == {}  # type: ignore[arg-type]


@pytest.mark.parametrize("kind, stored", [
    (ActionItem, {"id": "a1", "conversation_id": CID, "description": "Call", "quote": None, "due": None,
                  "created_at": T0, "source": "conversation", "revision": REVISION, "completed": True,
                  "completed_at": T1}),  # the app completed it: its own field is kept
    (Goal, {"id": "g1", "conversation_id": CID, "description": "Run", "quote": "q", "due": "2027-01-01",
            "created_at": T0, "source": "conversation", "revision": REVISION, "status": "active", "title": "Run"}),
    (Goal, {"id": "g2", "title": "made in the app", "status": "active"}),  # no quote or due: they stay absent
])
def test_stored_workflow_rows_read_and_write_back_unchanged(kind: type[WorkflowRow], stored: dict[str, Any]) -> None:
    assert kind.from_store(stored).to_store() == stored


def legacy_marker(jobs: dict[str, Any], errors: dict[str, str], captures: int, attempts: dict[str, Any],
                  fell_back: dict[str, Any] | None) -> dict[str, Any]:
    data = {"revision": REVISION, "jobs": jobs, "updated_at": T0, "errors": errors, "captures": captures,
            "extractor": {"id": "rules", "version": "3"}}
    if attempts["count"]:
        data["attempts"] = attempts
    if fell_back is not None:
        data["fell_back"] = fell_back
    return data


ATTEMPTS = {"revision": REVISION, "count": 2, "last_error": "llm_unavailable", "last_error_at": T0, "first_at": T0,
            "last_at": T0}


@pytest.mark.parametrize("jobs, errors, captures, attempts, fell_back", [
    ({"memories": True, "action_items": True, "goals": True}, {}, 1, {**ATTEMPTS, "count": 0}, None),  # first
    ({"memories": "failed: grounding_failed", "action_items": True, "goals": True}, {"memories": "no"}, 4,
     {**ATTEMPTS, "count": 0}, None),  # a later capture
    ({"memories": True, "action_items": True, "goals": True}, {}, 2, ATTEMPTS,
     {"reason": "llm_unavailable", "attempts": 2, "at": T0}),  # the model gave up: fell back
])
def test_the_marker_is_written_as_before(jobs: dict[str, Any], errors: dict[str, str], captures: int,
                                         attempts: dict[str, Any], fell_back: dict[str, Any] | None) -> None:
    ctx = SimpleNamespace(now=lambda: T0)
    result = capture.CaptureResult(CID, REVISION, errors=dict(errors))
    turn = capture._ModelTurn(ModelAttempts(**attempts), FellBack(**fell_back) if fell_back is not None else None)
    run = capture._marker(ctx, REVISION, jobs, result, captures, _extraction(), turn)  # type: ignore[arg-type]
    stored = run.to_store()
    assert stored == legacy_marker(jobs, errors, captures, attempts, fell_back)
    assert CaptureRun.from_store(stored).to_store() == stored


def test_the_failed_extraction_marker_and_attempt_writes_are_written_as_before() -> None:
    jobs = {"memories": "failed: llm_rejected", "action_items": "failed: llm_rejected", "goals": "failed: llm_rejected"}
    failed = CaptureRun(revision=REVISION, jobs=jobs, updated_at=T0, errors={"memories": "x"}, captures=3)
    assert failed.to_store() == {"revision": REVISION, "jobs": jobs, "updated_at": T0, "errors": {"memories": "x"},
                                 "captures": 3}  # no attempts: absent, not null
    assert failed.but(attempts=ModelAttempts(**ATTEMPTS)).to_store()["attempts"] == ATTEMPTS
    assert CaptureRun(attempts=ModelAttempts(**ATTEMPTS)).to_store() == {"attempts": ATTEMPTS}  # the merged record


@pytest.mark.parametrize("stored, deleting", [
    (None, False), ({"attempts": ATTEMPTS}, False), ({"cascade": {"state": "running", "intent": "i", "pages": 1,
                                                                   "summary": {}}}, True),
    ({"cascade": False, "captures": 2}, False),
])
def test_the_stored_marker_is_read_through_its_type(stored: dict[str, Any] | None, deleting: bool) -> None:
    assert capture.deleting(stored) is deleting
