"""Issue 12: an extractor that refuses for good (``LLMRejected``, a PermanentError) is recorded as
failed for that conversation revision and acknowledged; a transient failure is retried and writes
nothing. Either way the conversation's earlier memories stay exactly as they were."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from core.adapters.llm import LLMRejected, LLMUnavailable
from core.bootstrap import Context
from core.domain.documents import JOBS, conversation_revision
from core.services import capture
from tests.support.firestore_checks import canonical_snapshot

pytestmark = pytest.mark.integration


class _Quiet:
    def publish(self, topic: str, data: dict[str, Any]) -> None:
        return None


class _Failing:
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def extract(self, source: Any) -> Any:
        self.calls += 1
        raise self.error


def _conversation(*texts: str) -> dict[str, Any]:
    return {"status": "completed", "transcript_segments": [
        {"id": f"s{i}", "text": text, "speaker": "SPEAKER_0", "is_user": True} for i, text in enumerate(texts)]}


FIRST = _conversation("I live in Lisbon with my two cats.", "I work as a nurse at the city hospital.")
EDITED = _conversation("I live in Porto with my two cats.", "I work as a nurse at the city hospital.")


def _captured_user(stack: dict[str, Any]) -> str:
    uid = f"capfail-{uuid.uuid4().hex[:10]}"
    result = capture.capture_conversation(Context(publisher=_Quiet()), uid, "c1", FIRST)
    assert result.created >= 2 and not result.errors
    return uid


def test_permanent_extractor_refusal_is_recorded_and_acknowledged(stack: dict[str, Any]) -> None:
    uid = _captured_user(stack)
    extractor = _Failing(LLMRejected("the model refused this input"))
    ctx = Context(publisher=_Quiet(), extractor=extractor)
    before = canonical_snapshot(ctx, uid)
    result = capture.capture_conversation(ctx, uid, "c1", EDITED)
    assert result.retry == [], "a permanent refusal must not be retried"
    assert set(result.errors) == set(JOBS)
    marker = ctx.paths.doc(uid, "capture_runs", "c1").get().to_dict()
    assert marker["revision"] == conversation_revision(EDITED)
    assert all(str(marker["jobs"][job]).startswith("failed: llm_rejected") for job in JOBS), marker
    assert canonical_snapshot(ctx, uid) == before, "the earlier memories changed"
    # The redelivered event is acknowledged without calling the extractor again.
    again = capture.capture_conversation(ctx, uid, "c1", EDITED)
    assert again.skipped == "already_captured" and extractor.calls == 1


def test_transient_extractor_failure_is_retried_and_writes_nothing(stack: dict[str, Any]) -> None:
    uid = _captured_user(stack)
    ctx = Context(publisher=_Quiet(), extractor=_Failing(LLMUnavailable("the model is down")))
    before = canonical_snapshot(ctx, uid)
    marker_before = ctx.paths.doc(uid, "capture_runs", "c1").get().to_dict()
    result = capture.capture_conversation(ctx, uid, "c1", EDITED)
    assert sorted(result.retry) == sorted(JOBS)
    assert canonical_snapshot(ctx, uid) == before
    assert ctx.paths.doc(uid, "capture_runs", "c1").get().to_dict() == marker_before
