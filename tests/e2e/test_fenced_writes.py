"""The writes outside the apply transaction are fenced too (issue 27, point 16).

The spec fences canonical account deletion with the durable top-level wipe record: while it stands
every write of the account is refused, and work that began before a wipe writes nothing after it
(the README's account-generation fence). Three writes went around it: ``POST /v1/conversations``
(the conversation document), ``DELETE /v1/conversations/{id}?cascade=false`` (its marker) and the
outbox events ``strata rebuild`` and ``strata doctor --repair`` enqueue. Each is refused here in
both cases: while the wipe is in progress (over HTTP where there is a route), and when the wipe
began after the work read the fence (the work's generation is stale).
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import fence
from core.errors import GenerationChanged
from core.services import conversations, doctor, rebuild
from tests.support import trace
from tests.support.firestore_checks import user_documents

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
LINES = ["By the way I moved to Lisbon in March.", "I stopped eating meat about two years ago."]


def _uid() -> str:
    return f"u-fw-{uuid.uuid4().hex[:10]}"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _raise_fence(ctx: Context, uid: str) -> None:
    """A wipe in progress (what ``DELETE /v1/users/delete-account`` writes first)."""
    ctx.paths.account_deletion(uid).set({"uid": uid, "state": "fenced", "generation": 1, "steps": {}})


def _complete_wipe(ctx: Context, uid: str) -> None:
    ctx.paths.account_deletion(uid).set({"state": "completed"}, merge=True)


def test_a_conversation_posted_during_or_after_a_wipe_is_refused(http: httpx.Client, ctx: Context) -> None:
    uid = _uid()
    _raise_fence(ctx, uid)
    body = {"id": "c1", "transcript_segments": [{"id": "s0", "text": LINES[0], "speaker": "SPEAKER_00",
                                                 "is_user": True}]}
    response = http.post("/v1/conversations", json=body, headers=_auth(uid))
    assert response.status_code == 409 and response.json()["error"]["code"] == "writes_blocked", response.text
    assert not user_documents(ctx, uid)

    # A request that read generation 0, then the wipe ran and completed before it wrote.
    _complete_wipe(ctx, uid)
    with fence.expect(uid, 0), pytest.raises(GenerationChanged):
        conversations.create(ctx, uid, dict(body), None, None)
    assert not user_documents(ctx, uid)

    # The account's new generation writes as usual.
    response = http.post("/v1/conversations", json=body, headers=_auth(uid))
    assert response.status_code == 201, response.text
    assert "conversations/c1" in user_documents(ctx, uid)


def test_a_cascade_false_delete_writes_no_marker_during_or_after_a_wipe(http: httpx.Client, ctx: Context) -> None:
    uid = _uid()
    _raise_fence(ctx, uid)  # raised first: the conversation's own capture is refused, so only the doc exists
    ctx.paths.doc(uid, "conversations", "c1").set(trace.conversation_doc("c1", LINES))
    response = http.delete("/v1/conversations/c1", params={"cascade": "false"}, headers=_auth(uid))
    assert response.status_code == 409 and response.json()["error"]["code"] == "writes_blocked", response.text

    def marker() -> dict[str, Any]:
        snap = ctx.paths.doc(uid, "capture_runs", "c1").get()
        return snap.to_dict() or {} if snap.exists else {}

    assert "cascade" not in marker()
    assert ctx.paths.doc(uid, "conversations", "c1").get().exists  # nothing was deleted either

    _complete_wipe(ctx, uid)
    with fence.expect(uid, 0), pytest.raises(GenerationChanged):
        conversations.delete(ctx, uid, "c1", cascade=False)
    assert "cascade" not in marker()
    assert ctx.paths.doc(uid, "conversations", "c1").get().exists


def test_rebuild_and_doctor_enqueue_nothing_once_a_wipe_began(monkeypatch: pytest.MonkeyPatch,
                                                               stack: dict[str, Any]) -> None:
    """Both read the fence, then write outbox events; a wipe that begins in between refuses them.
    The read is replayed as it was before the wipe (not deleting, generation 0)."""
    from core.services import capture

    ctx = Context(publisher=trace.QuietPublisher())  # no drain runs behind the test
    uid = _uid()
    assert capture.capture_conversation(ctx, uid, "c0", trace.conversation_doc("c0", LINES)).created >= 1
    items = sorted(s.id for s in ctx.paths.col(uid, "memory_items").stream())
    for snap, _ in trace.outbox(ctx, uid):
        snap.reference.delete()  # the capture's own events: only what rebuild or doctor write is left
    _raise_fence(ctx, uid)
    monkeypatch.setattr(ctx.store, "read_fence", lambda _uid: fence.AccountFence(0, False, False))
    before = user_documents(ctx, uid)

    report = rebuild.RebuildReport("typesense", run_id="r1")
    rebuild.rebuild_user(ctx, uid, "typesense", "r1", report)
    assert (report.users, report.skipped_users, report.enqueued) == (0, 1, 0), report
    findings = [doctor.Drift("typesense", "missing", uid, mid, "", "test") for mid in items]
    repaired = doctor.repair(ctx, doctor.DoctorReport(findings=findings))
    assert repaired.skipped_repairs == [uid] and repaired.repairs == 0, repaired
    assert user_documents(ctx, uid) == before  # no outbox event, no rebuild state

    # The same calls once the wipe is complete, reading the fence as it is: written as usual.
    monkeypatch.undo()
    _complete_wipe(ctx, uid)
    report = rebuild.RebuildReport("typesense", run_id="r2")
    rebuild.rebuild_user(ctx, uid, "typesense", "r2", report)
    assert report.users == 1 and report.enqueued >= 1, report
    repaired = doctor.repair(ctx, doctor.DoctorReport(findings=findings))
    assert repaired.repairs == len(items) and not repaired.skipped_repairs, repaired
    reasons = sorted({event.get("reason") for _, event in trace.outbox(ctx, uid)})
    assert reasons == ["doctor", "rebuild"], reasons
