"""Consolidation on the whole local stack, through the path production uses.

The sample conversations are written to Firestore (the trigger captures them into Short-term),
then consolidation is started the way Cloud Scheduler starts it: ``POST {"mode": "fanout"}`` to the
consolidate function, whose safety-net walk enqueues one Cloud Task per user the outbox drain marked
on the Tasks emulator, which delivers ``{"uid"}`` back to the function. The function records the pass with the Cloud Tasks headers it
received (``memory_state/last_consolidation``), which is how the test knows that path ran it.
Afterwards every Long-term item's receipt validates, its graph assertion exists with matching ids,
the ledger is gapless, and third-party facts (Tom) keep their subject.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain.admission import receipt_problems
from core.domain.records import MemoryItem
from core.services import scheduling
from strata_dev.localstack.stack import REPO_ROOT
from tests.support import spec_model
from tests.support.firestore_checks import (
    all_docs,
    assert_all_items_legal,
    assert_ledger_gapless,
    sample_conversations,
    wait_for,
    write_conversation,
)

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"


def _uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _items(ctx: Context, uid: str) -> dict[str, MemoryItem]:
    return {mid: MemoryItem.from_store(d) for mid, d in all_docs(ctx, uid, "memory_items").items()}


def _route_changes(ctx: Context, uid: str) -> Counter[str]:
    seen: Counter[str] = Counter()
    for commit in all_docs(ctx, uid, "memory_commits").values():
        if commit["kind"] == "consolidation.route":
            seen.update(change["memory_id"] for change in commit["changes"])
    return seen


def _last_pass(ctx: Context, uid: str) -> dict[str, Any] | None:
    snap = ctx.paths.doc(uid, "memory_state", "last_consolidation").get()
    return snap.to_dict() if snap.exists else None


def _create_explicit(api_url: str, uid: str, contents: list[str]) -> list[str]:
    response = httpx.post(f"{api_url}/v3/memories/batch", headers=_auth(uid), timeout=30,
                          json={"memories": [{"content": c} for c in contents]})
    assert response.status_code == 201, response.text
    return [m["id"] for m in response.json()["memories"]]


# ----------------------------------------------------------------------- scheduler → tasks → function
@pytest.fixture(scope="module")
def consolidated(stack: dict[str, Any]) -> dict[str, Any]:
    ctx = Context()
    uid = _uid("cons")
    samples = sample_conversations()
    for conversation_id, doc in samples.items():
        write_conversation(ctx, uid, conversation_id, doc)

    def captured() -> bool:
        runs = all_docs(ctx, uid, "capture_runs")
        return len(runs) == len(samples) and all((r.get("jobs") or {}).get("memories") for r in runs.values())

    wait_for(captured, timeout=120, interval=0.25, what="the trigger to capture the sample conversations")
    pending = {mid for mid, item in _items(ctx, uid).items() if item.pending_route}
    assert len(pending) >= 8, "the samples yield Short-term memories awaiting consolidation"
    assert _last_pass(ctx, uid) is None
    # The user joins the schedule when the outbox drain handles its writes' schedule event (the
    # session stack's writes enqueue no task of their own: the walk below schedules the user).
    registry = ctx.client.collection(scheduling.REGISTRY).document(uid)
    wait_for(lambda: (registry.get().to_dict() or {}).get("pending"), timeout=60, interval=0.25,
             what="the outbox drain to mark the user for consolidation")

    started = datetime.now(UTC)
    fanout = httpx.post(stack["consolidate_url"], json={"mode": "fanout"}, timeout=120)
    assert fanout.status_code == 200, fanout.text
    assert fanout.json()["users"] >= 1

    def settled() -> dict[str, Any] | None:
        record = _last_pass(ctx, uid)
        if record is None or any(i.pending_route for i in _items(ctx, uid).values()):
            return None
        return record

    record = wait_for(settled, timeout=90, interval=0.25, what="the Cloud Task to run the user's pass")
    return {"ctx": ctx, "uid": uid, "pending": pending, "record": record, "started": started,
            "samples": samples}


def test_the_scheduler_path_ran_the_pass(consolidated: dict[str, Any]) -> None:
    record, ctx = consolidated["record"], consolidated["ctx"]
    trigger = record["trigger"]
    assert trigger["task_name"] and trigger["task_name"].startswith("consolidate-"), trigger
    assert trigger["queue_name"] and trigger["queue_name"].rsplit("/", 1)[-1] == ctx.settings.tasks_queue
    assert record["finished_at"] >= consolidated["started"]
    assert record["uid"] == consolidated["uid"] and record["skipped"] is None
    assert sum(record["routes"].values()) == record["selected"]
    # The session's stack never fans out on its own (its tick is a day), and the fixture fanned out
    # once: exactly one Cloud Task ran this user's pass and it selected every pending item.
    assert record["selected"] == len(consolidated["pending"])
    assert record["retries"] == 0 and record["overflow"] is False


def test_every_item_was_routed_exactly_once(consolidated: dict[str, Any]) -> None:
    ctx, uid = consolidated["ctx"], consolidated["uid"]
    items = _items(ctx, uid)
    changes = _route_changes(ctx, uid)
    stored = all_docs(ctx, uid, "memory_items")
    assertions = all_docs(ctx, uid, "memory_graph_assertions")
    for mid in consolidated["pending"]:
        assert items[mid].route in ("promote", "archive", "review", "reject")
        # What each route may leave behind, per the spec's boundary rules (the tests' own model).
        assert spec_model.route_outcome_problems(stored[mid], items[mid].route,
                                                 has_graph_assertion=mid in assertions) == [], mid
    # One pass, one batch: every pending item is in exactly one route commit, nothing else is.
    assert changes == Counter({mid: 1 for mid in consolidated["pending"]}), changes
    assert_all_items_legal(ctx, uid)


def test_every_long_term_item_is_validly_admitted(consolidated: dict[str, Any]) -> None:
    ctx, uid = consolidated["ctx"], consolidated["uid"]
    items = _items(ctx, uid)
    assertions = all_docs(ctx, uid, "memory_graph_assertions")
    long_term = [i for i in items.values() if i.layer == "long_term" and i.record_status == "active"]
    assert len(long_term) >= 6, [i.content for i in items.values()]
    for item in long_term:
        assertion = assertions.get(item.id)
        assert receipt_problems(item, assertion) == [], (item.id, item.content)
        assert assertion is not None
        receipt = item.promotion["admission_receipt"]
        assert assertion["memory_id"] == item.id == receipt["memory_id"]
        assert assertion["assertion_id"] == item.graph_assertion_id
        assert assertion["revision"] == item.revision == receipt["revision"]
        assert assertion["source_commit_id"] == item.ledger_commit_id == receipt["commit_id"]
        assert assertion["plan_hash"] == item.graph_plan_hash == receipt["graph_plan_hash"]
        assert assertion["content_hash"] == item.content_hash == receipt["content_hash"]
        assert receipt["evidence_ids"] == item.evidence_ids()
    assert set(assertions) == {i.id for i in long_term}, "no assertion without an admitted Long-term item"
    commits = assert_ledger_gapless(ctx, uid)
    by_id = {c["commit_id"]: c for c in commits}
    for item in long_term:
        assert by_id[item.ledger_commit_id]["sequence"] == item.ledger_sequence


def test_third_party_facts_keep_their_subject(stack: dict[str, Any], consolidated: dict[str, Any]) -> None:
    ctx, uid = consolidated["ctx"], consolidated["uid"]
    items = _items(ctx, uid)
    assertions = all_docs(ctx, uid, "memory_graph_assertions")
    toms = [i for i in items.values() if "Tom" in i.content and i.record_status == "active"]
    assert toms, [i.content for i in items.values()]
    promoted = [i for i in toms if i.layer == "long_term"]
    assert promoted, [(i.content, i.layer, i.route) for i in toms]
    for item in toms:
        assert item.subject_attribution == "third_party" and item.subject_label == "Tom", item
    for item in promoted:
        assert item.promotion["graph_plan"]["subject"] == "Tom"
        assert assertions[item.id]["subject"] == "Tom"
    mine = [i for i in items.values() if i.layer == "long_term" and i.record_status == "active"
            and i.subject_attribution == "user"]
    assert mine and all(i.promotion["graph_plan"]["subject"] == "user" for i in mine)
    # Over HTTP the attribution survives as well.
    for item in promoted:
        body = httpx.get(f"{stack['api_url']}/v1/memories/{item.id}", headers=_auth(uid), timeout=30).json()
        assert body["subject_attribution"] == "third_party" and body["layer"] == "long_term"


# ------------------------------------------------------------------------------------ concurrency
def test_two_concurrent_http_passes_route_every_item_once(stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = _uid("conc")
    created = _create_explicit(stack["api_url"], uid, [f"enjoys bird watching spot {k}" for k in range(30)])
    responses: list[httpx.Response] = []
    barrier = threading.Barrier(2)

    def post() -> None:
        barrier.wait()
        responses.append(httpx.post(stack["consolidate_url"], json={"uid": uid}, timeout=120))

    threads = [threading.Thread(target=post) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=150)
    assert [r.status_code for r in responses] == [200, 200], [r.text for r in responses]
    summaries = [r.json() for r in responses]
    assert sum(sum(s["routes"].values()) for s in summaries) == 30, summaries
    assert _route_changes(ctx, uid) == Counter({mid: 1 for mid in created})
    items = _items(ctx, uid)
    assert not any(i.pending_route for i in items.values())
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)


# -------------------------------------------------------------------------------------------- CLI
def test_cli_consolidate_prints_a_summary(stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = _uid("cli")
    created = _create_explicit(stack["api_url"], uid, ["enjoys fly fishing", "enjoys stamp collecting",
                                                        "enjoys salsa dancing"])
    strata = Path(REPO_ROOT) / ".venv" / "bin" / "strata"
    run = subprocess.run([str(strata), "consolidate", "--uid", uid, "--json"], cwd=REPO_ROOT, env=dict(os.environ),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert len(lines) == 2, run.stdout
    per_user, totals = lines
    assert per_user["uid"] == uid and per_user["selected"] == 3 and per_user["skipped"] is None
    assert totals == {"users": 1, "routes": per_user["routes"]}
    assert sum(totals["routes"].values()) == 3
    items = _items(ctx, uid)
    assert Counter(items[mid].route for mid in created) == Counter(per_user["routes"])
    # Explicit submissions are promoted by the rule router.
    assert per_user["routes"] == {"promote": 3}

    again = subprocess.run([str(strata), "consolidate", "--uid", uid, "--json"], cwd=REPO_ROOT, env=dict(os.environ),
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.splitlines()[-1]) == {"users": 1, "routes": {}}
