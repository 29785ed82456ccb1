"""The three incident switches of ``memory_controls/global`` on every path they name (issue 12),
and ``strata outbox drain`` waiting out backoff, on the whole local stack.

Each switch test: switch on → drive every path → nothing changed and the held-back work is still
there (events pending and unattempted, items pending, the conversation uncaptured) → switch off →
the same path proceeds. The switches are global to the session's stack, so each test sets and
restores them itself.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.services import capture, controls, projection
from strata_dev.localstack import faults
from tests.support import trace
from tests.support.firestore_checks import assert_nothing_written, canonical_snapshot, user_documents

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]


def _uid() -> str:
    return f"u-switch-{uuid.uuid4().hex[:10]}"


def _headers(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, 'demo-strata')}"}


@contextmanager
def switched_on(ctx: Context, name: str) -> Iterator[None]:
    ref = ctx.paths.global_controls()
    previous = ref.get()
    ref.set({name: True}, merge=True)
    try:
        yield
    finally:
        if previous.exists:
            ref.set(previous.to_dict())
        else:
            ref.delete()


def _wait(predicate: Any, timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.25)
    return value


def _strata(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "strata_dev.cli.main", *args, "--json"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def _push_body(payload: dict[str, Any]) -> dict[str, Any]:
    message_id = f"msg-{uuid.uuid4().hex[:8]}"
    data = base64.b64encode(json.dumps(payload).encode()).decode()
    return {"message": {"data": data, "messageId": message_id, "message_id": message_id,
                        "publishTime": datetime.now(UTC).isoformat(), "attributes": {}},
            "subscription": "projects/demo-strata/subscriptions/strata-projection-push"}


def _user_with_events() -> tuple[Context, str]:
    """A user whose captured memories have outbox events that no drain has touched (nudges are
    recorded, not sent, so only the paths under test drain)."""
    ctx = Context(publisher=trace.QuietPublisher())
    uid = _uid()
    for name in ("c-morning-standup", "c-dinner-plans"):
        doc = trace.sample_conversation(name)
        trace.capture_now(ctx, uid, doc.pop("id"), doc, write_doc=False)
    return ctx, uid


def _outbox(ctx: Context, uid: str) -> dict[str, dict[str, Any]]:
    return {snap.id: event for snap, event in trace.outbox(ctx, uid)}


# ------------------------------------------------------------------------------ projection_disabled
def test_projection_disabled_holds_push_sweep_and_cli_drains(stack: dict[str, Any]) -> None:
    ctx, uid = _user_with_events()
    before = _outbox(ctx, uid)
    assert len(before) >= 8 and all(e["state"] == "pending" and not e.get("attempts") for e in before.values())
    url = stack["function_urls"]["outbox_drain"]
    with switched_on(ctx, controls.PROJECTION):
        push = httpx.post(url, json=_push_body({"uid": uid, "sequence": 1}), timeout=60)
        assert 200 <= push.status_code < 300, push.text  # acknowledged: the work waits in the outbox
        assert _outbox(ctx, uid) == before
        sweep = httpx.post(url, json=_push_body({"sweep": True}), timeout=60)
        assert 200 <= sweep.status_code < 300, sweep.text
        cli = _strata("outbox", "drain", "--uid", uid, "--max-wait", "0")
        assert cli.returncode == 1, cli.stdout + cli.stderr
        printed = json.loads(cli.stdout.splitlines()[-1])
        assert printed["skipped"] == "projection_disabled" and printed["leased"] == 0
        assert printed["remaining"]["pending"] == len(before)
        assert "projection_disabled" in cli.stderr
        assert projection.drain_user(ctx, uid).skipped == "projection_disabled"
        # Nothing was leased, attempted, dead-lettered or projected.
        assert _outbox(ctx, uid) == before
        assert trace.provider_sets(ctx, uid) == (set(), set())
    push = httpx.post(url, json=_push_body({"uid": uid, "sequence": 2}), timeout=60)
    assert 200 <= push.status_code < 300, push.text
    _wait(lambda: not trace.outbox(ctx, uid), 60, "the push drain to empty the outbox once the switch is off")
    assert len(trace.assert_converged(ctx, uid)) >= 8


# --------------------------------------------------------------------------- consolidation_disabled
def test_consolidation_disabled_holds_fan_out_task_pass_and_cli(stack: dict[str, Any]) -> None:
    ctx, uid = _user_with_events()
    pending = [m for m in trace.items(ctx, uid).values() if m.pending_route]
    assert len(pending) >= 8
    before = canonical_snapshot(ctx, uid)
    url = stack["consolidate_url"]
    with switched_on(ctx, controls.CONSOLIDATION):
        scheduled = httpx.post(url, json={}, timeout=60)  # the Cloud Scheduler fan-out
        assert scheduled.status_code == 200 and scheduled.json()["skipped"] == "consolidation_disabled"
        task = httpx.post(url, json={"uid": uid}, timeout=60, headers={  # what a Cloud Task delivers
            "X-CloudTasks-TaskName": "t-switch", "X-CloudTasks-QueueName": "strata-consolidation"})
        assert task.status_code == 200 and task.json()["skipped"] == "consolidation_disabled", task.text
        cli = _strata("consolidate", "--uid", uid)
        assert cli.returncode == 1, cli.stdout + cli.stderr
        assert json.loads(cli.stdout.splitlines()[0])["skipped"] == "consolidation_disabled"
        assert canonical_snapshot(ctx, uid) == before  # every item still pending, nothing routed
        assert not ctx.paths.doc(uid, "memory_state", "last_consolidation").get().exists
    task = httpx.post(url, json={"uid": uid}, timeout=60)
    assert task.status_code == 200, task.text
    summary = task.json()
    assert summary["skipped"] is None and sum(summary["routes"].values()) == len(pending), summary
    assert not [m for m in trace.items(ctx, uid).values() if m.pending_route]


# ---------------------------------------------------------------------------------- writes_disabled
def test_writes_disabled_refuses_api_writes_and_capture(stack: dict[str, Any]) -> None:
    ctx = Context(publisher=trace.QuietPublisher())
    uid = _uid()
    headers = _headers(uid)
    with httpx.Client(base_url=stack["api_url"], headers=headers, timeout=60) as http:
        created = http.post("/v3/memories", json={"content": "I keep bees on the roof"})
        assert created.status_code in (200, 201), created.text
        memory_id = created.json()["id"]
        doc = trace.sample_conversation("c-dinner-plans")
        conversation_id = doc.pop("id")
        trace.capture_now(ctx, uid, conversation_id, doc)
        before = user_documents(ctx, uid)
        new_doc = trace.sample_conversation("c-morning-standup")
        new_id = new_doc.pop("id")
        with switched_on(ctx, controls.WRITES):
            refused = [
                http.post("/v3/memories", json={"content": "I keep goats"}),
                http.post("/v3/memories/batch", json={"memories": [{"content": "I keep goats"}]}),
                http.patch(f"/v3/memories/{memory_id}", params={"value": "I keep wasps on the roof"}),
                http.patch(f"/v3/memories/{memory_id}/visibility", params={"value": "public"}),
                http.delete(f"/v3/memories/{memory_id}"),
                http.post("/v1/conversations", json={"transcript_segments": [
                    {"id": "s1", "text": "I play the cello", "is_user": True}]}),
                http.post(f"/v1/conversations/{conversation_id}/reprocess"),
                http.delete(f"/v1/conversations/{conversation_id}"),
            ]
            for response in refused:
                assert response.status_code == 503, (response.request.url, response.text)
                assert response.json()["error"]["code"] == "writes_disabled", response.text
                # A switch an operator turned on: the answer says when to call again.
                assert int(response.headers["retry-after"]) >= 1, response.headers
            # Capture (what the trigger runs): refused as retryable, so the trigger keeps the work.
            result = capture.capture_conversation(ctx, uid, new_id, new_doc)
            assert result.retry == ["memories"] and not result.created, result
            assert_nothing_written(ctx, uid, before)
            assert not ctx.paths.doc(uid, "capture_runs", new_id).get().exists
        result = capture.capture_conversation(ctx, uid, new_id, new_doc)
        assert not result.retry and result.created, result
        again = http.post("/v3/memories", json={"content": "I keep goats"})
        assert again.status_code in (200, 201), again.text


# ------------------------------------------------------------------------ strata outbox drain (CLI)
def test_outbox_drain_cli_reports_backoff_then_waits_it_out(stack: dict[str, Any]) -> None:
    ctx, uid = _user_with_events()
    written = _outbox(ctx, uid)
    with faults.stopped(stack["state_dir"], "typesense"):
        failed = projection.drain_user(ctx, uid)
        assert failed.acknowledged == 0 and failed.retried == len(written), failed
    backing_off = _outbox(ctx, uid)
    assert all(e["state"] == "pending" and e["attempts"] == 1 for e in backing_off.values())
    due = min(e["due_at"] for e in backing_off.values())
    assert due > ctx.now()  # every event is in backoff: nothing is due yet

    quick = _strata("outbox", "drain", "--uid", uid, "--max-wait", "0")
    assert quick.returncode == 1, quick.stdout + quick.stderr
    report = json.loads(quick.stdout.splitlines()[-1])
    assert report["leased"] == 0 and report["remaining"] == {"pending": len(written), "dead": 0}
    assert datetime.fromisoformat(report["next_due_at"]) == due
    assert f"{len(written)} events still pending" in quick.stderr

    # Time passes: every event becomes due two seconds from now instead of after the 30-second base,
    # so the patient drain below still has a backoff to wait out but the suite does not sit through it.
    soon = ctx.now() + timedelta(seconds=2)
    for snap, _ in trace.outbox(ctx, uid):
        snap.reference.update({"due_at": soon})
    patient = _strata("outbox", "drain", "--uid", uid, "--max-wait", str(projection.BACKOFF_BASE_S * 4))
    assert patient.returncode == 0, patient.stdout + patient.stderr
    report = json.loads(patient.stdout.splitlines()[-1])
    assert report["acknowledged"] == len(written) and report["remaining"] == {"pending": 0, "dead": 0}
    assert not trace.outbox(ctx, uid)
    trace.assert_converged(ctx, uid)
