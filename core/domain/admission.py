"""Atomic Long-term admission: graph plans, admission receipts and graph assertions.

Every write of an *active* Long-term item (promotion, review acceptance, re-admission after its
evidence changed, reactivation of a superseded item) carries a fresh server-authored receipt that
binds the revision being written, its content hash, its sorted active evidence ids, its supersedes
set and its graph plan hash, and a matching ``memory_graph_assertions/{memory_id}`` document in the
same transaction. :func:`receipt_problems` is the validator the apply transaction runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.domain import ids, paths
from core.domain.documents import GraphAssertion
from core.domain.plan import ApplyView, Plan
from core.domain.records import MemoryItem
from core.domain.states import Layer, ProcessingState, Status
from core.errors import AdmissionRefused

RECEIPT_VERSION = 1
MAX_SUBJECT = 200
MAX_PREDICATE = 64
MAX_ARG_KEYS = 16
MAX_ARGS_JSON = 8 * 1024

PREDICATES = {"fact": "states", "preference": "prefers", "relationship": "related_to", "plan": "plans"}


def graph_plan(item: MemoryItem) -> dict[str, Any]:
    """Deterministic per-memory graph plan. A third-party fact keeps its subject: never the user."""
    if item.subject_attribution == "user":
        subject = "user"
    else:
        subject = (item.subject_label or "unknown")[:MAX_SUBJECT]
    arguments = {"object": item.content[:MAX_SUBJECT], "category": item.category}
    plan = {"subject": subject, "predicate": PREDICATES.get(item.kind, "states")[:MAX_PREDICATE],
            "arguments": arguments}
    if len(arguments) > MAX_ARG_KEYS or len(ids.canonical_json(arguments)) > MAX_ARGS_JSON:
        raise ValueError("graph plan arguments exceed their bounds")
    return plan


def receipt_payload(item: MemoryItem, plan_hash: str, planner: str, decision: str = "promote") -> dict[str, Any]:
    return {
        "receipt_version": RECEIPT_VERSION, "planner": planner, "decision": decision, "memory_id": item.id,
        "revision": item.revision, "content_hash": ids.content_hash(item.content),
        "evidence_ids": item.evidence_ids(), "graph_plan_hash": plan_hash, "supersedes": sorted(item.supersedes),
    }


def admit(item: MemoryItem, *, revision: int, commit_id: str, now: datetime, planner: str,
          decision: str = "promote") -> dict[str, Any]:
    """Turn ``item`` (already processed, with its final content/evidence/supersedes) into an
    admitted active Long-term item and return its graph assertion document."""
    if item.processing_state != ProcessingState.PROCESSED:
        raise ValueError("only processed items can be admitted to Long-term")
    if item.id in item.supersedes:
        raise ValueError("an item may not supersede itself")
    item.layer = Layer.LONG_TERM.value
    item.status = Status.ACTIVE.value
    item.revision = revision
    item.expires_at = None
    plan = graph_plan(item)
    plan_h = ids.graph_plan_hash(plan)
    payload = receipt_payload(item, plan_h, planner, decision)
    receipt = dict(payload, receipt_id=ids.receipt_id(payload), issued_at=now.isoformat(), commit_id=commit_id)
    assertion_id = ids.graph_assertion_id(item.uid, item.id, revision, payload["content_hash"], plan_h)
    item.promotion = {"route": decision, "admission_receipt": receipt, "graph_plan": plan}
    item.graph_plan_hash = plan_h
    item.graph_assertion_id = assertion_id
    item.graph_ready = True
    subject_entity = ids.entity_id(plan["subject"])
    object_label = plan["arguments"]["object"]
    object_entity = ids.entity_id("fact:" + object_label)
    return GraphAssertion(
        assertion_id=assertion_id, memory_id=item.id, uid=item.uid, revision=revision,
        content_hash=payload["content_hash"], plan_hash=plan_h, status="active",
        subject=plan["subject"], subject_entity_id=subject_entity, predicate=plan["predicate"],
        object=object_label, object_entity_id=object_entity,
        edge_id=ids.edge_id(subject_entity, object_entity, plan["predicate"]),
        source_commit_id=commit_id, created_at=now,
    ).to_store()


def receipt_problems(item: MemoryItem, assertion: dict[str, Any] | None) -> list[str]:
    """Why an active Long-term item's admission does not validate (empty list = valid)."""
    if item.layer != Layer.LONG_TERM or item.record_status != Status.ACTIVE or item.grandfathered_long_term:
        return []
    problems: list[str] = []
    promotion = item.promotion or {}
    receipt = promotion.get("admission_receipt")
    plan = promotion.get("graph_plan")
    if not receipt or not plan:
        return ["missing admission receipt or graph plan"]
    payload = {k: receipt.get(k) for k in ("receipt_version", "planner", "decision", "memory_id", "revision",
                                           "content_hash", "evidence_ids", "graph_plan_hash", "supersedes")}
    if ids.receipt_id(payload) != receipt.get("receipt_id"):
        problems.append("receipt id does not match its payload")
    expected = {
        "memory_id": item.id, "revision": item.revision, "content_hash": ids.content_hash(item.content),
        "evidence_ids": item.evidence_ids(), "graph_plan_hash": item.graph_plan_hash,
        "supersedes": sorted(item.supersedes),
    }
    for key, value in expected.items():
        if payload.get(key) != value:
            problems.append(f"receipt {key} is stale")
    if ids.graph_plan_hash(plan) != item.graph_plan_hash:
        problems.append("graph plan hash mismatch")
    return problems + _record_problems(item, assertion)


def _record_problems(item: MemoryItem, stored: dict[str, Any] | None) -> list[str]:
    """Beside the receipt: the item's own lineage and ledger fields, and its graph assertion."""
    problems: list[str] = []
    if item.id in item.supersedes:
        problems.append("item supersedes itself")
    if not item.ledger_commit_id or item.ledger_sequence is None:
        problems.append("missing ledger commit")
    assertion = None if stored is None else GraphAssertion.from_store(stored)
    if assertion is None:
        problems.append("missing graph assertion")
    elif (assertion.assertion_id != item.graph_assertion_id or assertion.memory_id != item.id
          or assertion.revision != item.revision or assertion.status != "active"):
        problems.append("graph assertion does not match the item")
    return problems


def grandfather_problems(item: MemoryItem, view: ApplyView) -> list[str]:
    """Why an active Long-term write may not claim the historical exemption (empty list = it may).

    Only a historical ``memories`` row is grandfathered Long-term (spec: "Legacy flat memories";
    the retired ``short_term`` rows are Short-term), so the exemption holds for an item that already
    had it, or for the materialisation of a ``memories`` row (without a ``memory_tier`` saying
    otherwise) that this very transaction read. It is never a direct path into Long-term."""
    if not item.grandfathered_long_term or item.layer != Layer.LONG_TERM or item.record_status != Status.ACTIVE:
        return []
    previous = view.items.get(item.id)
    if previous is not None and previous.grandfathered_long_term and previous.layer == Layer.LONG_TERM:
        return []
    row = view.docs.get(paths.rel(paths.LEGACY_MEMORIES, item.id))
    if row is not None and row.get("memory_tier") in (None, Layer.LONG_TERM.value):
        return []
    return ["grandfathered Long-term without the historical memories row it materialises"]


def admission_validator(item: MemoryItem, view: ApplyView, plan: Plan) -> None:
    """The apply's item validator: refuse an active Long-term write without its receipt and graph
    assertion for that very revision in the same transaction (atomic admission, docs/architecture.md), and one that
    claims the historical exemption without a historical Long-term row to claim it for."""
    assertion = plan.docs.get(paths.rel(paths.GRAPH_ASSERTIONS, item.id))
    problems = receipt_problems(item, assertion) + grandfather_problems(item, view)
    if problems:
        raise AdmissionRefused(f"Long-term write of {item.id} refused: {'; '.join(problems)}")
