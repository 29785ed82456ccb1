"""The first capture of a conversation skips the cohort reads and carries its workflow rows and
capture marker in the memories' commit; a capture that loses the race to another one for the same
conversation falls back to the full replacement, so nothing of the other capture is left behind."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from core.adapters.rules import sensitivity
from core.bootstrap import Context
from core.domain.documents import CaptureRun, conversation_revision
from core.domain.extraction import drop_secret_candidates, source_from_conversation
from core.services import capture, legacy
from strata_dev.bench.counting import counting_client

pytestmark = pytest.mark.integration


class _Quiet:
    def publish(self, topic: str, data: dict[str, Any]) -> None:
        return None


def _conversation(*texts: str) -> dict[str, Any]:
    return {"status": "completed", "transcript_segments": [
        {"id": f"s{i}", "text": text, "speaker": "SPEAKER_0", "is_user": True} for i, text in enumerate(texts)]}


FACTS = ("I live in Lisbon with my two cats.", "I work as a nurse at the city hospital.",
         "I need to renew my passport by Friday.")


def _active(ctx: Context, uid: str) -> dict[str, dict[str, Any]]:
    return {s.id: s.to_dict() for s in ctx.paths.col(uid, "memory_items").stream()
            if (s.to_dict() or {}).get("status") == "active"}


def test_first_capture_is_one_commit_with_its_marker_and_workflow_rows(stack: dict[str, Any]) -> None:
    from core import config

    client = counting_client(config.load().project_id)
    ctx = Context(client=client, publisher=_Quiet())
    uid = f"first-{uuid.uuid4().hex[:10]}"
    client.counts.reset()
    result = capture.capture_conversation(ctx, uid, "c1", _conversation(*FACTS))
    counts = client.counts.snapshot()
    assert result.created >= 2 and result.action_items == 1 and not result.errors
    # One commit; the only queries are the keys-only lookups of historical rows citing the
    # conversation (a capture replaces its source across all stores, those rows included), one per
    # historical collection; one lookup before (the marker) and one in the apply.
    assert counts["commits"] == 1 and counts["queries"] == len(legacy.COLLECTIONS), counts
    assert counts["lookups"] == 2 and counts["rpcs"] == 5, counts
    marker = ctx.paths.doc(uid, "capture_runs", "c1").get().to_dict()
    assert marker["jobs"] == {"memories": True, "action_items": True, "goals": True}
    [row] = [s.to_dict() for s in ctx.paths.col(uid, "action_items").stream()]
    assert row["conversation_id"] == "c1"
    commits = [s.to_dict() for s in ctx.paths.col(uid, "memory_commits").stream()]
    assert len(commits) == 1 and "capture_runs/c1" in commits[0]["doc_writes"]

    # The same event again: skipped on the marker, nothing written.
    client.counts.reset()
    assert capture.capture_conversation(ctx, uid, "c1", _conversation(*FACTS)).skipped == "already_captured"
    assert client.counts.snapshot()["commits"] == 0


def test_small_talk_first_capture_writes_only_the_marker(stack: dict[str, Any]) -> None:
    ctx = Context(publisher=_Quiet())
    uid = f"first-{uuid.uuid4().hex[:10]}"
    result = capture.capture_conversation(ctx, uid, "c1", _conversation("hey", "ok, talk later"))
    assert result.created == 0 and not result.errors
    assert ctx.paths.doc(uid, "capture_runs", "c1").get().exists
    assert not list(ctx.paths.col(uid, "memory_commits").stream())  # no ledger commit for nothing


def test_a_first_capture_that_lost_the_race_does_the_full_replacement(stack: dict[str, Any]) -> None:
    ctx = Context(publisher=_Quiet())
    uid = f"race-{uuid.uuid4().hex[:10]}"
    capture.capture_conversation(ctx, uid, "c1", _conversation(*FACTS))
    before = _active(ctx, uid)
    assert any("Lisbon" in d["content"] for d in before.values())

    # An edited transcript whose capture read "no marker" before the first one committed.
    edited = _conversation(FACTS[1])
    revision = conversation_revision(edited)
    source = source_from_conversation(uid, "c1", edited)
    extraction = drop_secret_candidates(ctx.extractor.extract(source), sensitivity=sensitivity)
    result = capture.CaptureResult("c1", revision)
    rode = capture._memories_job(ctx, uid, "c1", revision, source, extraction, None, result, first=True,
                                 riders={"capture_runs/c1": CaptureRun(revision=revision, jobs={})})
    assert rode is False  # the riders were not written; the caller writes the marker itself
    assert result.retracted >= 1
    after = _active(ctx, uid)
    assert not any("Lisbon" in d["content"] for d in after.values())
    assert any("nurse" in d["content"] for d in after.values())
    assert ctx.paths.doc(uid, "capture_runs", "c1").get().to_dict()["revision"] != revision
