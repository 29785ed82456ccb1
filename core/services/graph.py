"""The shared knowledge graph: ``knowledge_nodes`` / ``knowledge_edges`` projected from active
per-memory graph assertions (the derived-state authority).

An edge cites the memories that assert it (``memory_ids``); when a memory stops being an active,
unrestricted Long-term fact its citations are pruned and edges no memory cites are removed, along
with fact nodes nothing points at. Reads are bounded and referentially closed: an edge whose
endpoint is not in the returned node page is dropped and the page says ``truncated``.
"""

from __future__ import annotations

from typing import Any

from core.adapters.firestore.queries import build
from core.bootstrap import Context
from core.domain.records import MemoryItem
from core.domain.states import Layer, Status

MAX_NODES = 2000
MAX_EDGES = 5000


def _active_fact(item: MemoryItem | None) -> bool:
    return bool(item and item.layer == Layer.LONG_TERM and item.record_status == Status.ACTIVE
                and item.graph_ready and not item.restricted)


def project(ctx: Context, uid: str, memory_ids: list[str], items: dict[str, MemoryItem], fenced: bool) -> None:
    if not memory_ids:
        return
    refs = [ctx.paths.doc(uid, "memory_graph_assertions", mid) for mid in memory_ids]
    assertions = {s.id: s.to_dict() for s in ctx.client.get_all(refs) if s.exists}
    batch = ctx.client.batch()
    writes = 0
    orphan_candidates: set[str] = set()
    for memory_id in memory_ids:
        assertion = assertions.get(memory_id)
        item = items.get(memory_id)
        keep_edge = None
        if (not fenced and assertion and assertion.get("status") == "active" and _active_fact(item)
                and item is not None and assertion.get("assertion_id") == item.graph_assertion_id):
            keep_edge = assertion["edge_id"]
            batch.set(ctx.paths.doc(uid, "knowledge_nodes", assertion["subject_entity_id"]),
                      {"id": assertion["subject_entity_id"], "label": assertion["subject"],
                       "kind": "user" if assertion["subject"] == "user" else "entity"}, merge=True)
            batch.set(ctx.paths.doc(uid, "knowledge_nodes", assertion["object_entity_id"]),
                      {"id": assertion["object_entity_id"], "label": assertion["object"], "kind": "fact"}, merge=True)
            batch.set(ctx.paths.doc(uid, "knowledge_edges", keep_edge), {
                "id": keep_edge, "source": assertion["subject_entity_id"], "target": assertion["object_entity_id"],
                "label": assertion["predicate"], "memory_ids": [memory_id]}, merge=False)
            writes += 3
        for snap in build(ctx.paths.col(uid, "knowledge_edges"), "edges_by_memory", {"memory_ids": memory_id}).stream():
            if snap.id == keep_edge:
                continue
            edge = snap.to_dict()
            remaining = [m for m in edge.get("memory_ids", []) if m != memory_id]
            if remaining:
                batch.update(snap.reference, {"memory_ids": remaining})
            else:
                batch.delete(snap.reference)
                batch.delete(ctx.paths.doc(uid, "knowledge_nodes", edge["target"]))
                orphan_candidates.add(edge["source"])
                writes += 1
            writes += 1
        if writes > 400:
            batch.commit()
            batch, writes = ctx.client.batch(), 0
    if writes:
        batch.commit()
    _prune_orphan_entities(ctx, uid, orphan_candidates - {"user"})


def _prune_orphan_entities(ctx: Context, uid: str, candidates: set[str]) -> None:
    """Entity nodes (people) that lost an edge in this batch and have no edge left are removed."""
    for node_id in sorted(candidates):
        edges = build(ctx.paths.col(uid, "knowledge_edges"), "edges_by_source", {"source": node_id}, limit=1)
        if not list(edges.stream()):
            ctx.paths.doc(uid, "knowledge_nodes", node_id).delete()


def read_page(ctx: Context, uid: str, limit: int) -> dict[str, Any]:
    limit = max(1, min(limit, MAX_NODES))
    node_snaps = list(ctx.paths.col(uid, "knowledge_nodes").order_by("__name__").limit(limit + 1).stream())
    truncated = len(node_snaps) > limit
    nodes = [s.to_dict() for s in node_snaps[:limit]]
    present = {n["id"] for n in nodes}
    edges = []
    for snap in ctx.paths.col(uid, "knowledge_edges").order_by("__name__").limit(MAX_EDGES + 1).stream():
        edge = snap.to_dict()
        if edge["source"] in present and edge["target"] in present:
            edges.append({k: edge[k] for k in ("id", "source", "target", "label", "memory_ids")})
        else:
            truncated = True
    if len(edges) > MAX_EDGES:
        edges, truncated = edges[:MAX_EDGES], True
    return {"nodes": nodes, "edges": edges, "truncated": truncated}
