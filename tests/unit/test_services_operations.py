"""Operations services on the in-memory store (no emulator): developer webhooks, devices, account
deletion, export, dead-letter redrive, provider rebuild, the doctor, and consolidation scheduling.
Expectations come from the contract (docs/api.md) and the domain model: deletes are fenced and
resumable, projections are outbox-driven and repairable, every step is idempotent."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from core.domain import paths
from core.domain.changes import Change
from core.domain.routing import RouteCandidate, RouteProposal
from core.errors import BadRequest, DeliveryPending, LeaseHeld, NotFound, RetryableError, WritesBlocked
from core.ports import Write
from core.services import (
    accounts,
    consolidation,
    devices,
    doctor,
    drain_handlers,
    export,
    graph,
    intake,
    projection,
    rebuild,
    redrive,
    scheduling,
    webhooks,
)
from tests.unit.fakes.ports import World, world

UID = "u1"
HOOK = "https://hooks.example.com/strata"


class Promote:
    router_id = "promote"
    router_version = "1"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        return [RouteProposal(c.ref, "promote", "test") for c in candidates]


def _facts(w: World, *contents: str, uid: str = UID) -> list[str]:
    made = [i.id for i in intake.create_explicit(w.ctx, uid, [intake.ExplicitMemory(content=c) for c in contents])]
    consolidation.run_pass(w.ctx, uid, router=Promote())
    projection.drain_user(w.ctx, uid)
    return made


# ------------------------------------------------------------------------------------- webhooks
def test_webhook_config_round_trip_and_refusals() -> None:
    w = world()
    assert webhooks.get_config(w.ctx, UID, "memory_created") == {"type": "memory_created", "url": None,
                                                                  "enabled": False}
    assert webhooks.put_config(w.ctx, UID, "memory_created", HOOK, True)["enabled"]
    assert webhooks.get_config(w.ctx, UID, "memory_created")["url"] == HOOK
    with pytest.raises(BadRequest):
        webhooks.put_config(w.ctx, UID, "memory_created", "http://127.0.0.1/x", True)
    with pytest.raises(NotFound):
        webhooks.get_config(w.ctx, UID, "memory_deleted")
    assert webhooks.delete_config(w.ctx, UID, "memory_created")["deleted"]
    assert not webhooks.delete_config(w.ctx, UID, "memory_created")["deleted"]
    w.store.put(paths.account_deletion(UID), {"state": "fenced", "generation": 1})
    with pytest.raises(WritesBlocked):
        webhooks.put_config(w.ctx, UID, "memory_created", HOOK, True)


def _completed(w: World, cid: str) -> dict[str, Any]:
    doc = {"status": "completed", "transcript_segments": [{"id": "s0", "text": "hi", "is_user": True}]}
    w.store.put(paths.doc(UID, "conversations", cid), doc)
    return doc


def test_a_completed_conversation_enqueues_one_delivery() -> None:
    w = world()
    webhooks.put_config(w.ctx, UID, "memory_created", HOOK, True)
    doc = _completed(w, "c1")
    delivery = webhooks.enqueue_delivery(w.ctx, UID, "c1", None, doc)
    assert delivery is not None and list(w.tasks.tasks) == [delivery]
    assert webhooks.enqueue_delivery(w.ctx, UID, "c1", None, doc) is None  # a retried trigger
    assert webhooks.enqueue_delivery(w.ctx, UID, "c1", doc, doc) is None  # not newly completed
    assert len(w.tasks.tasks) == 1


def test_the_trigger_reads_the_webhook_config_in_captures_first_lookup() -> None:
    """The trigger asks capture to read the config with its marker: the enqueue then decides on
    what that lookup found and makes no read of its own (one round trip fewer per conversation)."""
    from core.services import capture

    w = world()
    webhooks.put_config(w.ctx, UID, "memory_created", HOOK, True)
    doc = _completed(w, "c1")
    also_read = webhooks.read_with_capture(UID, None, doc)
    assert also_read and webhooks.read_with_capture(UID, doc, doc) == []  # only a write that fires reads it
    result = capture.capture_conversation(w.ctx, UID, "c1", doc, from_event=True, also_read=also_read)
    assert result.read == {also_read[0]: w.store.get(also_read[0])}
    reads: list[str] = []
    get = w.store.get

    def counted(path: str) -> dict[str, Any] | None:
        reads.append(path)
        return get(path)

    w.store.get = counted  # type: ignore[method-assign]
    delivery = webhooks.enqueue_delivery(w.ctx, UID, "c1", None, doc, read=result.read)
    assert delivery is not None and list(w.tasks.tasks) == [delivery]
    assert also_read[0] not in reads
    # As read then: a config found off (or absent) in that lookup enqueues nothing.
    assert webhooks.enqueue_delivery(w.ctx, UID, "c2", None, doc, read={also_read[0]: None}) is None
    assert len(w.tasks.tasks) == 1


def test_a_failed_enqueue_lets_the_retried_trigger_enqueue_again() -> None:
    w = world()
    webhooks.put_config(w.ctx, UID, "memory_created", HOOK, True)
    doc = _completed(w, "c1")
    w.tasks.fail = RuntimeError("queue down")
    assert webhooks.enqueue_delivery(w.ctx, UID, "c1", None, doc) is None  # never raises
    w.tasks.fail = None
    assert webhooks.enqueue_delivery(w.ctx, UID, "c1", None, doc) is not None


def test_no_delivery_when_off_or_without_a_worker() -> None:
    w = world(webhook_url="")
    doc = _completed(w, "c1")
    assert webhooks.enqueue_delivery(w.ctx, UID, "c1", None, doc) is None  # not configured
    webhooks.put_config(w.ctx, UID, "memory_created", HOOK, True)
    assert webhooks.enqueue_delivery(w.ctx, UID, "c1", None, doc) is None  # no task worker URL


@pytest.mark.parametrize(("status", "outcome"), [(200, "delivered"), (404, "failed"), (410, "failed")])
def test_delivery_outcomes(status: int, outcome: str) -> None:
    w = world()
    w.sender.status = status
    webhooks.put_config(w.ctx, UID, "memory_created", HOOK, True)
    _completed(w, "c1")
    assert webhooks.deliver_webhook(w.ctx, UID, "memory_created", "c1")["state"] == outcome
    assert webhooks.deliver_webhook(w.ctx, UID, "memory_created", "c1")["duplicate"]  # a re-run task: nothing sent
    assert len(w.sender.posts) == 1
    body = json.loads(w.sender.posts[0][2])
    assert body


def test_a_retry_worthy_answer_is_retried_until_the_last_attempt() -> None:
    w = world()
    w.sender.status = 503
    webhooks.put_config(w.ctx, UID, "memory_created", HOOK, True)
    _completed(w, "c1")
    with pytest.raises(DeliveryPending):
        webhooks.deliver_webhook(w.ctx, UID, "memory_created", "c1")
    last = webhooks.deliver_webhook(w.ctx, UID, "memory_created", "c1", retry_count=webhooks.MAX_ATTEMPTS - 1)
    assert last["state"] == "failed"


def test_the_delivery_record_keeps_its_shape() -> None:
    w = world()
    now = w.clock.now()
    webhooks.put_config(w.ctx, UID, "memory_created", HOOK, True)
    config = paths.doc(UID, webhooks.CONFIG_COLLECTION, "memory_created")
    assert w.store.get(config) == {"type": "memory_created", "url": HOOK, "enabled": True, "updated_at": now}
    doc = _completed(w, "c1")
    delivery_id = webhooks.enqueue_delivery(w.ctx, UID, "c1", None, doc)
    record = paths.doc(UID, webhooks.DELIVERY_COLLECTION, delivery_id or "")
    enqueued = {"type": "memory_created", "conversation_id": "c1", "state": "enqueued", "attempts": 0,
                "enqueued_at": now, "updated_at": now, "expire_at": now + timedelta(days=webhooks.RECORD_DAYS)}
    assert w.store.get(record) == enqueued
    w.sender.status = 503
    with pytest.raises(DeliveryPending):
        webhooks.deliver_webhook(w.ctx, UID, "memory_created", "c1")
    assert w.store.get(record) == {**enqueued, "state": "retrying", "attempts": 1, "last_status": 503,
                                   "last_error": None}
    w.sender.status = 200
    assert webhooks.deliver_webhook(w.ctx, UID, "memory_created", "c1")["state"] == "delivered"
    assert w.store.get(record) == {**enqueued, "state": "delivered", "attempts": 2, "last_status": 200,
                                   "last_error": None, "delivered_at": now}


def test_a_delivery_is_cancelled_when_the_hook_is_off_or_the_conversation_gone() -> None:
    w = world()
    webhooks.put_config(w.ctx, UID, "memory_created", HOOK, False)
    _completed(w, "c1")
    assert webhooks.deliver_webhook(w.ctx, UID, "memory_created", "c1")["reason"] == "webhook_disabled"
    webhooks.put_config(w.ctx, UID, "memory_created", HOOK, True)
    assert webhooks.deliver_webhook(w.ctx, UID, "memory_created", "c2")["reason"] == "conversation_deleted"
    assert w.sender.posts == []


# -------------------------------------------------------------------------------------- devices
def test_devices_are_recorded_at_most_hourly_and_never_during_a_wipe() -> None:
    w = world()
    devices._last_upsert.clear()
    device, platform, version = devices.device_from_headers(
        {"x-device-id-hash": "ABCDEF12", "x-app-platform": "ios", "x-app-version": "2.1"})
    assert (device, platform, version) == ("ios_abcdef12", "ios", "2.1")
    assert devices.device_from_headers({"x-device-id-hash": "zz", "x-app-platform": "ios"})[0] is None
    devices.record_device(w.ctx, UID, device, platform, version, w.clock.now())
    row = w.store.get(paths.doc(UID, "client_devices", "ios_abcdef12")) or {}
    assert row["device_class"] == "mobile" and row["first_seen_at"] == w.clock.now()
    w.store.write(Change("test.seed", [Write("delete", paths.doc(UID, "client_devices", "ios_abcdef12"))]))
    devices.record_device(w.ctx, UID, device, platform, version, w.clock.now())  # throttled
    assert w.store.get(paths.doc(UID, "client_devices", "ios_abcdef12")) is None
    w.store.put(paths.account_deletion("u2"), {"state": "fenced", "generation": 1})
    devices.record_device(w.ctx, "u2", device, platform, version, w.clock.now())
    assert not list(w.store.children(paths.user("u2")))
    devices.record_device(w.ctx, "u3", None, None, None, w.clock.now())
    assert not list(w.store.children(paths.user("u3")))


# ----------------------------------------------------------------------------- account deletion
def test_account_deletion_purges_providers_then_wipes_and_bumps_the_generation() -> None:
    w = world()
    _facts(w, "I like kites")
    assert w.keyword.provider_ids(UID)
    answer = accounts.delete_account(w.ctx, UID)
    assert answer == {"state": "completed", "uid": UID, "receipt_id": answer["receipt_id"]}
    assert not w.keyword.provider_ids(UID) and not w.vector.provider_ids(UID)
    assert not list(w.store.children(paths.user(UID)))
    record = w.store.get(paths.account_deletion(UID)) or {}
    assert (record["state"], record["generation"]) == ("completed", 1)
    assert accounts.delete_account(w.ctx, UID) == answer  # again: nothing to do, the same receipt
    assert (w.store.get(paths.account_deletion(UID)) or {})["generation"] == 1
    _facts(w, "I like boats")
    accounts.delete_account(w.ctx, UID)
    assert (w.store.get(paths.account_deletion(UID)) or {})["generation"] == 2


def test_account_deletion_waits_for_a_live_drain_and_resumes_after_a_provider_failure() -> None:
    w = world()
    intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I like owls")])
    [event] = [e for e in w.store.query("outbox_by_state", {"state": ["pending"]}, parent=paths.user(UID))][:1]
    w.store.write(Change("test.seed", [Write("update", event.path, {"state": "leased", "lease_expires_at": w.clock.now() + timedelta(minutes=1)})]))
    with pytest.raises(LeaseHeld):
        accounts.delete_account(w.ctx, UID)
    w.clock.advance(minutes=2)
    w.keyword.fail = RuntimeError("typesense down")
    with pytest.raises(RetryableError):
        accounts.delete_account(w.ctx, UID)
    assert (w.store.get(paths.account_deletion(UID)) or {})["state"] == "fenced"
    with pytest.raises(WritesBlocked):  # fenced: no write lands meanwhile
        intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I like larks")])
    w.keyword.fail = None
    assert accounts.delete_account(w.ctx, UID)["state"] == "completed"
    assert (w.store.get(paths.account_deletion(UID)) or {})["generation"] == 1


def test_with_a_search_only_key_the_api_asks_the_drain_for_the_keyword_purge() -> None:
    """``STRATA_KEYWORD_PURGE=drain`` (the api function): the wipe publishes a purge request for its
    generation on the projection topic and waits for the drain (the write key's holder) to record
    it; no answer in time is a retryable 503 and calling again asks again; 200 only once the rows
    are gone from both indexes."""
    w = world(keyword_purge="drain", account_purge_wait_s=0)
    _facts(w, "I like kites")
    rows = w.keyword.provider_ids(UID)
    assert rows
    w.publisher.messages.clear()
    with pytest.raises(LeaseHeld):  # nobody drains: the purge is not recorded in time
        accounts.delete_account(w.ctx, UID)
    [(topic, request)] = w.publisher.messages
    assert topic == w.ctx.settings.projection_topic
    assert (request["uid"], request["purge"], request["generation"]) == (UID, accounts.PURGE_REQUEST, 1)
    assert w.keyword.provider_ids(UID) == rows and (w.store.get(paths.account_deletion(UID)) or {})["state"] == "fenced"
    # A request for another generation than the wipe in progress changes nothing.
    assert drain_handlers.purge_keyword_index(w.ctx, UID, 0) == "stale"
    assert w.keyword.provider_ids(UID) == rows

    def drain(topic: str, data: dict[str, Any]) -> None:
        if data.get("purge") == accounts.PURGE_REQUEST:
            drain_handlers.purge_keyword_index(w.ctx, data["uid"], data["generation"], data["requested"])

    w.publisher.deliver = drain
    w.keyword.fail = RuntimeError("typesense down")
    with pytest.raises(RetryableError) as down:  # the drain reports the failure: 503 provider_unavailable
        accounts.delete_account(w.ctx, UID)
    assert down.value.code == "provider_unavailable"
    assert w.keyword.provider_ids(UID) == rows
    w.keyword.fail = None
    assert accounts.delete_account(w.ctx, UID)["state"] == "completed"
    assert not w.keyword.provider_ids(UID) and not w.vector.provider_ids(UID)
    assert not list(w.store.children(paths.user(UID)))
    record = w.store.get(paths.account_deletion(UID)) or {}
    assert (record["state"], record["generation"], record["keyword_purged"]) == ("completed", 1, 1)
    assert drain_handlers.purge_keyword_index(w.ctx, UID, 1) == "stale"  # a late redelivery: the wipe is over


# --------------------------------------------------------------------------------------- export
def test_export_lists_visible_memories_workflow_and_a_summary() -> None:
    w = world()
    made = _facts(w, "I like maps", "I like globes")
    w.store.put(paths.doc(UID, "conversations", "c1"), {"status": "completed", "reprocess_token": "t"})
    w.store.put(paths.doc(UID, "action_items", "a1"), {"description": "buy a map", "revision": "r"})
    lines = [json.loads(line) for line in export.export_lines(w.ctx, UID)]
    kinds = [line["kind"] for line in lines]
    assert sorted(line["id"] for line in lines if line["kind"] == "memory") == sorted(made)
    conversation = next(line for line in lines if line["kind"] == "conversation")
    assert "reprocess_token" not in conversation["data"]  # internal fields stay out
    assert next(line for line in lines if line["kind"] == "action_item")["data"] == {"description": "buy a map"}
    assert kinds[-1] == "summary" and lines[-1]["counts"]["memory"] == 2
    assert "graph_assertion" in kinds and "knowledge_edge" in kinds


# --------------------------------------------------------------------------------------- redrive
def test_dead_events_are_listed_and_redriven_once() -> None:
    w = world()
    intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I like moss")])
    w.keyword.fail = RuntimeError("down")
    for _ in range(projection.MAX_ATTEMPTS):
        projection.drain_user(w.ctx, UID)
        w.clock.advance(hours=2)
    dead = list(redrive.dead_events(w.ctx, UID))
    assert dead and all(e.uid == UID for e in dead)
    assert list(redrive.dead_events(w.ctx, None)) == dead
    assert list(redrive.dead_events(w.ctx, UID, since=w.clock.now())) == []
    w.keyword.fail = None
    report = redrive.redrive(w.ctx)
    assert report.redriven == len(dead) and report.uids == [UID]
    assert redrive.redrive(w.ctx).redriven == 0  # nothing dead any more
    events = w.store.collection(f"users/{UID}/memory_outbox").values()
    assert all(e["state"] == "pending" and e["redrives"] == 1 for e in events)
    assert projection.drain_user(w.ctx, UID).acknowledged == len(dead)


# ----------------------------------------------------------------------------- rebuild & doctor
def test_the_doctor_finds_drift_and_its_repair_converges() -> None:
    w = world()
    made = _facts(w, "I like ferns", "I like cacti")
    report = doctor.run(w.ctx, None)
    assert report.findings == [] and report.users == 1 and report.canonical == 2 and report.facts == 2
    lost = next(pid for pid, d in w.keyword.rows.items() if d.memory_id == made[0])
    del w.keyword.rows[lost]
    w.vector.rows["memproj:stray"] = next(iter(w.vector.rows.values())).__class__(
        "memproj:stray", "ghost", "mem_ghost", "long_term", 1, "x")
    report = doctor.run(w.ctx, None)
    kinds = {(f.provider, f.kind, f.reason) for f in report.findings}
    assert ("typesense", "missing", "not indexed") in kinds
    assert ("vector", "extra", "no_canonical_owner") in kinds
    doctor.repair(w.ctx, doctor.run(w.ctx, UID))
    projection.drain_user(w.ctx, UID)
    assert doctor.run(w.ctx, UID).findings == []


def test_a_rebuild_purges_and_reprojects_every_memory_once() -> None:
    w = world()
    made = _facts(w, "I like tulips", "I like roses")
    w.keyword.rows.clear()
    report = rebuild.rebuild(w.ctx, "typesense")
    assert (report.users, report.enqueued) == (1, 3)  # the purge and one event per memory
    again = rebuild.rebuild(w.ctx, "typesense", [UID])
    assert again.enqueued == 3 and again.run_id != report.run_id
    w.clock.advance(seconds=1)  # item events are due just after their purge
    projection.drain_user(w.ctx, UID)
    assert {d.memory_id for d in w.keyword.rows.values()} == set(made)
    assert rebuild.rebuild(w.ctx, "graph", [UID]).enqueued == 3
    w.clock.advance(seconds=1)
    projection.drain_user(w.ctx, UID)
    assert len(graph.read_page(w.ctx, UID, 100)["edges"]) == 2
    with pytest.raises(ValueError):
        rebuild.rebuild(w.ctx, "nowhere")


# --------------------------------------------------------------------------------- scheduling
def test_writes_schedule_one_task_per_window_and_a_pass_clears_the_mark() -> None:
    w = world()
    intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I like maple")])
    intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I like oak")])
    projection.drain_user(w.ctx, UID)
    assert len(w.tasks.tasks) == 1  # both writes fall in one window
    assert scheduling.pending_users(w.ctx) == [UID]
    consolidation.run_pass(w.ctx, UID, router=Promote())
    assert scheduling.pending_users(w.ctx) == []


def test_the_walk_repairs_overdue_users_round_robin() -> None:
    w = world(consolidation_on_write=False)
    for uid in ("a", "b", "c"):
        intake.create_explicit(w.ctx, uid, [intake.ExplicitMemory(content=f"I like {uid}")])
        projection.drain_user(w.ctx, uid)
    assert w.tasks.tasks == {}  # writes only mark the user
    out = scheduling.walk(w.ctx)
    assert (out["users"], out["enqueued"], out["wrapped"]) == (3, 3, True)
    scheduling.walk(w.ctx)
    assert len(w.tasks.tasks) == 3  # the same window names the same task: no second one
    w.store.put(paths.CONTROLS_GLOBAL, {"consolidation_disabled": True})
    assert scheduling.walk(w.ctx)["skipped"] == "consolidation_disabled"


def test_the_doctor_reports_stale_duplicate_and_foreign_rows_and_graph_drift() -> None:
    w = world()
    made = _facts(w, "I like beech", "I like birch")
    doc = next(d for d in w.keyword.rows.values() if d.memory_id == made[0])
    w.keyword.rows[doc.provider_id] = doc.__class__(doc.provider_id, UID, made[0], "long_term", doc.revision - 1,
                                                    doc.content)
    w.vector.rows["memproj:foreign"] = doc.__class__("memproj:foreign", UID, made[1], "long_term", 1, "x")
    edges = w.store.collection(f"users/{UID}/knowledge_edges")
    edge_id = next(iter(edges))
    w.store.put(f"users/{UID}/knowledge_edges/{edge_id}", {**edges[edge_id], "memory_ids": ["mem_ghost"]})
    found = {(f.provider, f.kind, f.reason.split(" ")[0]) for f in doctor.run(w.ctx, UID).findings}
    assert ("typesense", "stale", "revision") in found
    assert ("vector", "extra", "foreign_id") in found
    assert ("graph", "extra", "orphan") in found and ("graph", "missing", "no") in found
    w.store.put(paths.account_deletion(UID), {"state": "fenced", "generation": 1})
    report = doctor.run(w.ctx, UID)
    assert doctor.repair(w.ctx, report).skipped_repairs == [UID]
