"""The shared knowledge graph: ``knowledge_nodes`` / ``knowledge_edges`` projected from active
per-memory graph assertions (the derived-state authority).

An edge cites the memories that assert it (``memory_ids``); when a memory stops being an active,
unrestricted Long-term fact its citations are pruned and edges no memory cites are removed, along
with fact nodes nothing points at. Reads are bounded, referentially closed and checked against the
canonical state (the projection may lag it): an edge whose endpoint is not in the returned node page
is dropped and the page says ``truncated``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.domain import paths
from core.domain.changes import Change
from core.domain.documents import Document, GraphAssertion, KnowledgeEdge, KnowledgeNode
from core.domain.records import MemoryItem
from core.domain.states import Layer, Status
from core.ports import Ports, StoredDoc, Write

MAX_PAGE = 2000  # edges scanned for one page of the graph
CITING_CHUNK = 30  # Firestore takes at most 30 values in one array-contains-any filter


@dataclass
class Writes:
    """Graph writes for one drain batch, committed by the caller together with the acknowledgements;
    the last write to a document wins, as in one batch."""

    ops: list[Write] = field(default_factory=list)

    def set(self, path: str, doc: Document, *, merge: bool) -> None:
        self.ops.append(Write("set", path, doc.to_store(), merge))

    def cite(self, path: str, edge: KnowledgeEdge) -> None:
        """Rewrites the stored edge's ``memory_ids`` only (its other fields stay as stored)."""
        self.ops.append(Write("update", path, {"memory_ids": list(edge.memory_ids)}))

    def delete(self, path: str) -> None:
        self.ops.append(Write("delete", path))


def is_fact(item: MemoryItem | None) -> bool:
    """An active, unrestricted Long-term fact with its graph assertion admitted: it belongs in the graph."""
    return bool(item and item.layer == Layer.LONG_TERM and item.record_status == Status.ACTIVE
                and item.graph_ready and not item.restricted)


def fact_assertions(ctx: Ports, uid: str, memory_ids: list[str], items: Mapping[str, MemoryItem]
                    ) -> dict[str, GraphAssertion]:
    """The graph assertions of the ``items`` that are graph facts now, by memory id: the only ones
    :func:`plan` reads an assertion for (one lookup; none when no item is a fact)."""
    refs = [paths.graph_assertion(uid, mid) for mid in memory_ids if is_fact(items.get(mid))]
    return ({paths.doc_id(p): GraphAssertion.from_store(d) for p, d in ctx.store.get_all(refs).items()
             if d is not None} if refs else {})


def _may_be_cited(item: MemoryItem | None) -> bool:
    """False when no edge can cite this memory except the one its current assertion keeps.

    An edge cites a memory only after a projection of that memory as an active fact, and every
    write of an item bumps its revision (an account wipe removes the edges with the items). At
    revision 1 the only state ever projected is the current one, so the per-memory edge query can
    be skipped: it could only find the edge this projection keeps.
    """
    return item is None or item.revision > 1


def plan(ctx: Ports, uid: str, memory_ids: list[str], items: Mapping[str, MemoryItem],
         assertions: Mapping[str, GraphAssertion], fenced: bool) -> Writes:
    """The writes that make the graph match the current state of ``memory_ids``.

    Edges and nodes of active, unrestricted Long-term facts are (re)written; citations of every
    other memory are pruned, and an edge left citing nothing goes with its fact node (and its entity
    node when no other edge leaves that entity).
    """
    writes = Writes()
    kept_sources: set[str] = set()
    edges: dict[str, KnowledgeEdge] = {}  # edges read in this batch, with citations pruned so far
    refs: dict[str, str] = {}
    kept: set[str] = set()
    citing = _edges_citing(ctx, uid, [m for m in memory_ids if _may_be_cited(items.get(m))])
    for memory_id in memory_ids:
        assertion = assertions.get(memory_id, GraphAssertion())
        item = items.get(memory_id)
        keep_edge = None
        if not fenced and _asserted(assertion, item):
            keep_edge = assertion.edge_id
            kept.add(keep_edge)
            kept_sources.add(assertion.subject_entity_id)
            _write_fact(writes, uid, memory_id, assertion)
        if not _may_be_cited(item):
            continue
        for snap in citing.get(memory_id, ()):
            if snap.id == keep_edge:
                continue
            edge = edges[snap.id] if snap.id in edges else KnowledgeEdge.from_store(snap.data)
            edges[snap.id] = edge.without(memory_id)
            refs[snap.id] = snap.path
    removed_from = _prune_edges(writes, uid, edges, refs, kept)
    for source in sorted(set(removed_from) - kept_sources - {"user"}):
        if _orphaned(ctx, uid, source, removed_from[source]):
            writes.delete(paths.doc(uid, paths.KNOWLEDGE_NODES, source))
    return writes


def _prune_edges(writes: Writes, uid: str, edges: dict[str, KnowledgeEdge], refs: dict[str, str],
                 kept: set[str]) -> dict[str, set[str]]:
    """Writes the pruned citations of ``edges``; an edge left citing nothing goes with its fact
    node. Returns the removed edges by their source entity."""
    removed_from: dict[str, set[str]] = {}
    for edge_id, edge in edges.items():
        if edge_id in kept:
            continue  # rewritten above by the memory that asserts it now
        if edge.memory_ids:
            writes.cite(refs[edge_id], edge)
        else:
            writes.delete(refs[edge_id])
            writes.delete(paths.doc(uid, paths.KNOWLEDGE_NODES, edge.target))
            removed_from.setdefault(edge.source, set()).add(edge_id)
    return removed_from


def _asserted(assertion: GraphAssertion, item: MemoryItem | None) -> bool:
    """The memory is an active fact and ``assertion`` is its current, active graph assertion (an
    absent one reads as empty: never)."""
    return bool(assertion.status == "active" and is_fact(item)
                and item is not None and assertion.assertion_id == item.graph_assertion_id)


def _write_fact(writes: Writes, uid: str, memory_id: str, assertion: GraphAssertion) -> None:
    """The subject and object nodes and the edge of an asserted fact, cited by ``memory_id``."""
    subject, fact = assertion.subject_entity_id, assertion.object_entity_id
    writes.set(paths.doc(uid, paths.KNOWLEDGE_NODES, subject), KnowledgeNode(
        id=subject, label=assertion.subject, kind="user" if assertion.subject == "user" else "entity"), merge=True)
    writes.set(paths.doc(uid, paths.KNOWLEDGE_NODES, fact),
               KnowledgeNode(id=fact, label=assertion.object, kind="fact"), merge=True)
    writes.set(paths.doc(uid, paths.KNOWLEDGE_EDGES, assertion.edge_id), KnowledgeEdge(
        id=assertion.edge_id, source=subject, target=fact, label=assertion.predicate, memory_ids=(memory_id,)),
        merge=False)


def _edges_citing(ctx: Ports, uid: str, memory_ids: list[str]) -> dict[str, list[StoredDoc]]:
    """Memory id -> the stored edges whose ``memory_ids`` cite it, in edge-id order, read with one
    ``array-contains-any`` query per ``CITING_CHUNK`` memories instead of one query per memory.

    Each memory's list is what a query for that memory alone returns: membership is decided on the
    edge as stored, before :func:`plan` prunes anything."""
    found: dict[str, StoredDoc] = {}
    for start in range(0, len(memory_ids), CITING_CHUNK):
        chunk = memory_ids[start:start + CITING_CHUNK]
        for snap in ctx.store.query("edges_by_any_memory", {"memory_ids": chunk}, parent=paths.user(uid)):
            found.setdefault(snap.id, snap)
    citing: dict[str, list[StoredDoc]] = {}
    wanted = set(memory_ids)
    for edge_id in sorted(found):
        snap = found[edge_id]
        for memory_id in dict.fromkeys(KnowledgeEdge.from_store(snap.data).memory_ids):
            if memory_id in wanted:
                citing.setdefault(memory_id, []).append(snap)
    return citing


def purge(ctx: Ports, uid: str, page: int = 500) -> int:
    """Delete every edge and node of ``uid`` (a graph rebuild's purge), page by page; returns the
    number deleted. Only the drain calls it, and re-projects the user's facts after it."""
    deleted = 0
    for collection in (paths.KNOWLEDGE_EDGES, paths.KNOWLEDGE_NODES):
        while True:
            rows = ctx.store.scan(paths.col(uid, collection), limit=page, keys_only=True)
            if not rows:
                break
            ctx.store.write(Change("graph.purge_page", [Write("delete", row.path) for row in rows]))
            deleted += len(rows)
    return deleted


def _orphaned(ctx: Ports, uid: str, node_id: str, removing: set[str]) -> bool:
    """True when every edge leaving entity ``node_id`` is among those this batch removes."""
    rows = ctx.store.query("edges_by_source", {"source": node_id}, parent=paths.user(uid), limit=len(removing) + 1)
    return all(row.id in removing for row in rows)


def read_page(ctx: Ports, uid: str, limit: int, after: str | None = None) -> dict[str, Any]:
    """One page of the graph: the edges after edge id ``after`` (in id order, at most ``limit`` of
    them scanned), each with the nodes it ends at, checked against canonical state before it is served.

    The stored nodes and edges are a projection that lags the items (and keeps a deleted fact's
    rows for ever when its delete event is dead-lettered), so an edge is served only for the
    memories whose current, active graph assertion names it (its ``memory_ids`` are cut to those),
    and only with both its nodes; a node is served only when a served edge ends at it, so every page
    is referentially closed (a node shared by edges of two pages is on both). ``next_after`` is the
    last scanned edge id when more edges follow (None on the last page): paging on the edge id, a
    walk serves every edge that exists throughout it exactly once.
    """
    limit = max(1, min(limit, MAX_PAGE))
    edge_rows = ctx.store.scan(paths.col(uid, paths.KNOWLEDGE_EDGES), limit=limit + 1, after=after)
    more = len(edge_rows) > limit
    edge_rows = edge_rows[:limit]
    edges = [KnowledgeEdge.from_store(row.data) for row in edge_rows]
    asserted = _asserted_edges(ctx, uid, {m for edge in edges for m in edge.memory_ids})
    live = [edge.but(memory_ids=citing) for edge in edges if (citing := _citing(edge, edge.id, asserted))]
    nodes, closed = _closed(ctx, uid, live)
    return {"nodes": [node.to_store() for node in nodes], "edges": [_served(edge) for edge in closed],
            "next_after": edge_rows[-1].id if more else None}


def _served(edge: KnowledgeEdge) -> dict[str, Any]:
    """An edge as a page of the graph serves it: its stored fields as stored (a null stays null)."""
    stored = edge.to_store()
    return {name: stored[name] for name in ("id", "source", "target", "label", "memory_ids")}


def _citing(edge: KnowledgeEdge, edge_id: str, asserted: dict[str, str]) -> tuple[str, ...]:
    """The edge's memory ids whose current graph assertion names it (``asserted``: memory id → edge id)."""
    return tuple(m for m in dict.fromkeys(edge.memory_ids) if asserted.get(m) == edge_id)


def _closed(ctx: Ports, uid: str, live: list[KnowledgeEdge]) -> tuple[list[KnowledgeNode], list[KnowledgeEdge]]:
    """The stored nodes the ``live`` edges end at (sorted by id), and the edges whose two nodes exist."""
    endpoints = sorted({end for edge in live for end in (edge.source, edge.target)})
    stored = ctx.store.get_all([paths.doc(uid, paths.KNOWLEDGE_NODES, node) for node in endpoints])
    nodes = [KnowledgeNode.from_store(data) for data in stored.values() if data is not None]
    nodes = sorted((node for node in nodes if node.id in endpoints), key=lambda node: node.id)
    present = {node.id for node in nodes}
    edges = [edge for edge in live if edge.source in present and edge.target in present]
    return nodes, edges


def live_edges(ctx: Ports, uid: str, page: int = 500) -> dict[str, dict[str, Any]]:
    """Every stored edge of ``uid`` that canonical state still asserts, with its ``memory_ids`` cut
    to the memories asserting it (the export's check, over all edges in pages of ``page``;
    :func:`read_page` checks its own page)."""
    out: dict[str, dict[str, Any]] = {}
    last = None
    while True:
        rows = ctx.store.scan(paths.col(uid, paths.KNOWLEDGE_EDGES), limit=page, after=last)
        edges = {row.id: KnowledgeEdge.from_store(row.data) for row in rows}
        asserted = _asserted_edges(ctx, uid, {m for edge in edges.values() for m in edge.memory_ids})
        for edge_id, edge in edges.items():
            citing = _citing(edge, edge_id, asserted)
            if citing:
                out[edge_id] = edge.but(memory_ids=citing).to_store()
        if len(rows) < page:
            return out
        last = rows[-1].id


def _asserted_edges(ctx: Ports, uid: str, memory_ids: set[str]) -> dict[str, str]:
    """Memory id → the edge its current graph assertion names, for the ``memory_ids`` that are
    graph facts now (active, unrestricted Long-term, assertion active and of the item's revision)."""
    wanted = sorted(memory_ids)
    items: dict[str, MemoryItem] = {}
    for data in ctx.store.get_all([paths.memory_item(uid, m) for m in wanted]).values():
        if data is not None:
            item = MemoryItem.from_store(data)
            if is_fact(item):
                items[item.id] = item
    refs = [paths.graph_assertion(uid, m) for m in sorted(items)]
    out: dict[str, str] = {}
    for path, data in ctx.store.get_all(refs).items():
        fact = items.get(paths.doc_id(path))
        assertion = GraphAssertion.from_store(data)
        if fact is not None and _asserted(assertion, fact):
            out[fact.id] = assertion.edge_id
    return out
