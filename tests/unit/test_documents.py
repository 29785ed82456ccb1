"""Typed documents map to and from the store without changing a byte.

Each stored document below is written from the storage layout (docs/data-model.md, *Firestore
layout*) in the shape the store holds today; the test checks that it reads into its typed document
with the values the layout describes and writes back exactly as it was.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.domain.documents import (
    ApplyControl,
    CaptureRun,
    CascadeProgress,
    DeletionReceipt,
    GraphAssertion,
    KnowledgeEdge,
    KnowledgeNode,
    Lease,
    OutboxEvent,
    ReviewRow,
    WebhookConfig,
    WebhookDelivery,
)

T0 = datetime(2026, 12, 1, 18, 30, tzinfo=UTC)


def roundtrip(kind, stored):
    doc = kind.from_store(stored)
    assert doc.to_store() == stored
    return doc


def test_apply_control_reads_the_ledger_head():
    stored = {"sequence": 7, "head_commit_id": "c7", "updated_at": T0, "account_generation": 2,
              "writes_blocked": False}
    control = roundtrip(ApplyControl, stored)
    assert (control.sequence, control.head_commit_id, control.account_generation) == (7, "c7", 2)
    assert not control.writes_blocked


def test_an_absent_apply_control_is_the_empty_head():
    control = ApplyControl.from_store(None)
    assert (control.sequence, control.head_commit_id, control.account_generation, control.writes_blocked) == (
        0, None, 0, False)
    assert control.to_store() == {}


def test_outbox_event_pending_and_after_a_failed_attempt():
    pending = {"event_id": "e1", "uid": "u1", "memory_id": "m1", "action": "upsert", "revision": 3,
               "content_hash": "h", "reason": "capture", "commit_id": "c1", "sequence": 4, "state": "pending",
               "attempts": 0, "due_at": T0, "lease_expires_at": None, "lease_epoch": 0, "created_at": T0,
               "last_error": None}
    event = roundtrip(OutboxEvent, pending)
    assert (event.action, event.state, event.revision, event.lease_expires_at) == ("upsert", "pending", 3, None)
    failed = {**pending, "state": "pending", "attempts": 2, "lease_epoch": 2, "last_error": "typesense: 503",
              "confirmed_providers": ["vector"]}
    event = roundtrip(OutboxEvent, failed)
    assert event.confirmed_providers == ("vector",) and event.attempts == 2


def test_a_purge_event_has_no_revision():
    stored = {"event_id": "e2", "uid": "u1", "memory_id": "", "action": "purge_user", "revision": None,
              "content_hash": None, "reason": "account", "commit_id": "c2", "sequence": 9, "state": "leased",
              "attempts": 1, "due_at": T0, "lease_expires_at": T0 + timedelta(minutes=2), "lease_epoch": 1,
              "created_at": T0, "last_error": None}
    event = roundtrip(OutboxEvent, stored)
    assert event.revision is None and event.state == "leased"
    assert event.ledger_sequence == 9


def test_an_event_no_commit_wrote_has_no_ledger_sequence():
    rebuild = {"event_id": "e3", "uid": "u1", "memory_id": "m1", "action": "rebuild", "provider": "vector",
               "revision": None, "content_hash": None, "reason": "rebuild", "commit_id": None, "sequence": None,
               "state": "pending", "attempts": 0, "due_at": T0, "lease_expires_at": None, "lease_epoch": 0,
               "created_at": T0, "last_error": None}
    assert OutboxEvent.from_store(rebuild).ledger_sequence is None
    assert OutboxEvent.from_store({"memory_id": "m1"}).ledger_sequence is None


@pytest.mark.parametrize("stored", [
    {"holder": "h1", "expires_at": T0, "dirty": False},
    {"holder": "h1", "expires_at": T0, "dirty": True},
    {"holder": None, "expires_at": None, "dirty": False},  # released
])
def test_lease(stored):
    lease = roundtrip(Lease, stored)
    assert lease.held(T0 - timedelta(seconds=1)) == (stored["holder"] is not None)
    assert not lease.held(T0)


def test_capture_marker_of_a_finished_capture():
    stored = {"revision": "r1", "jobs": {"memories": True, "action_items": True, "goals": True},
              "updated_at": T0, "errors": {}, "captures": 2, "extractor": {"id": "rules", "version": "3"}}
    run = roundtrip(CaptureRun, stored)
    assert run.jobs_done("r1") == {"memories": True, "action_items": True, "goals": True}
    assert run.jobs_done("r2") == {}
    assert run.captures == 2 and run.applied and not run.deleting and not run.cascade_declined


def test_capture_marker_with_model_attempts_only_is_not_applied():
    stored = {"attempts": {"count": 1, "revision": "r1"}}
    run = roundtrip(CaptureRun, stored)
    assert not run.applied


@pytest.mark.parametrize("state, deleting", [("running", True), ("done", True)])
def test_capture_marker_as_cascade_progress(state, deleting):
    stored = {"captures": 1, "updated_at": T0,
              "cascade": {"state": state, "intent": "i1", "pages": 2, "summary": {"withdrawn": 3, "retracted": 1}}}
    run = roundtrip(CaptureRun, stored)
    assert run.deleting is deleting
    assert isinstance(run.cascade, CascadeProgress)
    assert (run.progress.intent, run.progress.pages, run.progress.total("withdrawn")) == ("i1", 2, 3)


def test_capture_marker_of_a_delete_without_cascade():
    run = roundtrip(CaptureRun, {"cascade": False})
    assert run.cascade_declined and not run.deleting and run.progress.pages == 0


def test_review_rows_in_each_state():
    opened = {"review_id": "m1:2:m0", "memory_id": "m1", "revision": 2, "commit_id": "c2", "content_hash": "h",
              "content": "User moved to Lisbon", "conflicting": ["m0"], "reason": "contradiction",
              "status": "open", "created_at": T0, "expires_at": T0 + timedelta(hours=72)}
    row = roundtrip(ReviewRow, opened)
    assert row.conflicting == ("m0",) and not row.past_deadline(T0) and row.past_deadline(T0 + timedelta(hours=72))
    resolved = {**opened, "content": "", "conflicting": [], "status": "resolved", "decision": "accept",
                "resolved_at": T0}
    assert row.closed("resolved", "resolved_at", T0, decision="accept").to_store() == resolved
    roundtrip(ReviewRow, resolved)
    expired = {**opened, "content": "", "conflicting": [], "status": "expired", "expired_at": T0}
    assert row.closed("expired", "expired_at", T0).to_store() == expired
    redacted = {**opened, "content": "", "conflicting": [], "status": "redacted", "redacted_at": T0}
    assert row.closed("redacted", "redacted_at", T0).to_store() == redacted
    superseded = {"review_id": "m1:2:m0", "memory_id": "m1", "status": "superseded", "superseded_by": None,
                  "content": "", "conflicting": [], "closed_at": T0}
    assert roundtrip(ReviewRow, superseded).superseded_by is None


def test_unknown_fields_are_kept():
    stored = {"holder": "h", "expires_at": T0, "dirty": False, "note": {"by": "an older version"}}
    assert roundtrip(Lease, stored).extra == {"note": {"by": "an older version"}}


def test_a_null_stays_null_even_where_the_field_has_another_default():
    stored = {"holder": "h", "expires_at": T0, "dirty": None}
    lease = roundtrip(Lease, stored)
    assert lease.dirty is False  # reads as the default
    assert lease.but(dirty=True).to_store() == {**stored, "dirty": True}


# ---------------------------------------------------------------------------------- knowledge graph
EDGE = {"id": "edge_1", "source": "ent_user", "target": "ent_fact", "label": "prefers",
        "memory_ids": ["mem_1", "mem_2"]}


def test_a_knowledge_edge_as_the_drain_writes_it():
    edge = roundtrip(KnowledgeEdge, EDGE)
    assert (edge.id, edge.source, edge.target, edge.label, edge.memory_ids) == (
        "edge_1", "ent_user", "ent_fact", "prefers", ("mem_1", "mem_2"))
    assert KnowledgeEdge(id="edge_1", source="ent_user", target="ent_fact", label="prefers",
                         memory_ids=("mem_1", "mem_2")).to_store() == EDGE
    assert edge.without("mem_1").to_store() == {**EDGE, "memory_ids": ["mem_2"]}
    assert edge.without("mem_1").without("mem_2").to_store() == {**EDGE, "memory_ids": []}


@pytest.mark.parametrize("stored", [
    {**EDGE, "weight": 0.5, "note": {"by": "an older version"}},  # fields the type does not name
    {**EDGE, "label": None},  # a null where the type reads a string
    {**EDGE, "memory_ids": None},
    {k: v for k, v in EDGE.items() if k != "label"},  # absent stays absent
    {"id": "edge_1", "memory_ids": []},
])
def test_a_knowledge_edge_keeps_its_stored_bytes(stored):
    edge = roundtrip(KnowledgeEdge, stored)
    assert edge.extra == {k: v for k, v in stored.items() if k not in EDGE}


def test_an_edge_left_null_or_absent_cites_nothing_and_a_pruned_one_writes_its_list():
    for stored in ({**EDGE, "memory_ids": None}, {"id": "edge_1"}):
        edge = roundtrip(KnowledgeEdge, stored)
        assert edge.memory_ids == ()
        assert edge.without("mem_1").to_store() == {**stored, "memory_ids": []}


@pytest.mark.parametrize("stored", [
    {"id": "ent_user", "label": "user", "kind": "user"},
    {"id": "ent_ana", "label": "Ana", "kind": "entity"},
    {"id": "ent_fact", "label": "tea over coffee", "kind": "fact", "pinned": True},
    {"id": "ent_fact", "label": None, "kind": "fact"},
])
def test_knowledge_nodes(stored):
    node = roundtrip(KnowledgeNode, stored)
    assert node.id == stored["id"]


ASSERTION = {
    "assertion_id": "mga_1", "memory_id": "mem_1", "uid": "u1", "revision": 3, "content_hash": "h",
    "plan_hash": "p", "status": "active", "subject": "user", "subject_entity_id": "ent_user",
    "predicate": "prefers", "object": "tea over coffee", "object_entity_id": "ent_fact", "edge_id": "edge_1",
    "source_commit_id": "c3", "created_at": T0,
}


@pytest.mark.parametrize("stored", [
    ASSERTION,
    {**ASSERTION, "status": "retracted", "retracted_at": T0},
    {**ASSERTION, "assertion_id": None},
    {k: v for k, v in ASSERTION.items() if k != "created_at"},
])
def test_graph_assertions(stored):
    assertion = roundtrip(GraphAssertion, stored)
    assert (assertion.edge_id, assertion.subject_entity_id, assertion.predicate) == ("edge_1", "ent_user", "prefers")


def test_an_absent_graph_assertion_reads_as_an_empty_one():
    assertion = GraphAssertion.from_store(None)
    assert (assertion.assertion_id, assertion.status, assertion.edge_id) == (None, "", "")
    assert assertion.to_store() == {}


# ------------------------------------------------------------------------------ deletion receipts
DAYS_30 = timedelta(days=30)
RECEIPT = {"receipt_id": "r1", "kind": "memory", "created_at": T0, "expire_at": T0 + DAYS_30,
           "memory_ids": ["m1", "m2"], "memory_count": 2,
           "stores": {"memory_items": T0, "review_queue": T0, "graph": None, "keyword_index": None,
                      "vector_index": None}}


@pytest.mark.parametrize("stored", [
    RECEIPT,  # one memory's lineage
    {**RECEIPT, "kind": "conversation", "conversation_id": "c1"},  # a cascade
    {**RECEIPT, "kind": "all", "memory_ids": [], "memory_count": 5, "up_to_sequence": 12},  # delete-all
    {**RECEIPT, "memory_ids": [], "memory_count": 0,  # nothing deleted that a projection holds
     "stores": {"memory_items": T0, "review_queue": T0, "graph": T0, "keyword_index": T0, "vector_index": T0}},
    {"kind": "account", "created_at": T0, "expire_at": T0 + DAYS_30,  # the wipe's, when its fence goes up
     "stores": dict.fromkeys(("memory_items", "review_queue", "graph", "keyword_index", "vector_index"))},
    {"kind": "account", "created_at": T0, "expire_at": T0 + DAYS_30,  # the wipe's, done
     "stores": {"keyword_index": T0, "vector_index": T0, "memory_items": T0, "review_queue": T0, "graph": T0}},
    {**RECEIPT, "conversation_id": None, "note": "an older version"},  # a stored null, an unknown field
])
def test_deletion_receipts(stored):
    receipt = roundtrip(DeletionReceipt, stored)
    assert receipt.kind == stored["kind"] and receipt.stores == stored["stores"]
    assert receipt.memory_ids == (tuple(stored["memory_ids"]) if "memory_ids" in stored else None)
    assert not receipt.expired(T0 + DAYS_30 - timedelta(seconds=1)) and receipt.expired(T0 + DAYS_30)


def test_a_new_receipt_writes_the_fields_it_has():
    stores = {"memory_items": T0, "review_queue": T0, "graph": None, "keyword_index": None, "vector_index": None}
    receipt = DeletionReceipt(receipt_id="r1", kind="memory", created_at=T0, expire_at=T0 + DAYS_30,
                              memory_ids=("m1", "m2"), memory_count=2, stores=stores)
    assert receipt.to_store() == RECEIPT
    assert "up_to_sequence" not in receipt.to_store() and "conversation_id" not in receipt.to_store()
    assert DeletionReceipt(stores={"graph": T0}).to_store() == {"stores": {"graph": T0}}  # the wipe's merge
    stored = {**RECEIPT, "note": {"by": "an older version"}, "conversation_id": None}
    confirmed = DeletionReceipt.from_store(stored).but(stores={**stores, "graph": T0})
    assert confirmed.to_store() == {**stored, "stores": {**stores, "graph": T0}}


# ---------------------------------------------------------------------------------------- webhooks
@pytest.mark.parametrize("stored", [
    {"type": "memory_created", "url": "https://hooks.example.com/x", "enabled": True, "updated_at": T0},
    {"type": "memory_created", "url": "https://hooks.example.com/x", "enabled": False, "updated_at": T0},
    {"url": "https://hooks.example.com/x", "enabled": None, "set_by": "console"},  # a null, an unknown field
])
def test_webhook_configs(stored):
    config = roundtrip(WebhookConfig, stored)
    assert config.url == stored["url"] and config.enabled == stored["enabled"]


ENQUEUED = {"type": "memory_created", "conversation_id": "c1", "state": "enqueued", "attempts": 0,
            "enqueued_at": T0, "updated_at": T0, "expire_at": T0 + DAYS_30}


@pytest.mark.parametrize("stored", [
    ENQUEUED,
    {**ENQUEUED, "state": "retrying", "attempts": 1, "last_status": 503, "last_error": None},
    {**ENQUEUED, "state": "retrying", "attempts": 2, "last_status": None, "last_error": "timed out"},
    {**ENQUEUED, "state": "delivered", "attempts": 3, "last_status": 200, "last_error": "timed out",
     "delivered_at": T0},
    {**ENQUEUED, "state": "cancelled", "attempts": 1, "reason": "webhook_disabled"},
    # an attempt's outcome on a record whose creation it overtook; an unknown field
    {"type": "memory_created", "conversation_id": "c1", "state": "refused", "attempts": 1, "updated_at": T0,
     "reason": "10.0.0.1 is not a public address", "trace": "t1"},
])
def test_webhook_deliveries(stored):
    delivery = roundtrip(WebhookDelivery, stored)
    assert delivery.state == stored["state"] and delivery.attempts == stored["attempts"]


def test_an_attempts_outcome_writes_a_missing_status_as_null():
    outcome = WebhookDelivery(type="memory_created", conversation_id="c1", state="failed", attempts=5,
                              updated_at=T0, last_status=None, last_error="timed out",
                              nulls=frozenset({"last_status"}))
    assert outcome.to_store() == {"type": "memory_created", "conversation_id": "c1", "state": "failed",
                                  "attempts": 5, "updated_at": T0, "last_status": None, "last_error": "timed out"}
