"""The account export (``GET /v1/memories/export``): everything the user owns, streamed as JSON lines.

Every line is ``{"kind": ..., "id": ..., "data": {...}}`` in the public shape: memories as the
Memory JSON every read returns (no ``processing_state``, ledger fields or receipts), graph
assertions as the fact they state, review rows as the review queue shows them; ledger internals
(commits, operations, the outbox, leases, capture runs) are not the user's data and stay out.
Knowledge nodes and edges are exported as canonical state asserts them (the stored rows are a
projection that may lag a delete). The last line is ``{"kind": "summary", "counts": {...}}``, so a
client can tell a complete export from a cut one.

Collections are read in pages of :data:`PAGE` documents and each line is yielded as soon as it is
built, so memory stays bounded by one page whatever the account size. Reading is pure: historical
rows (``memories``, ``short_term``) are exported as the memories they state, in their own layer and
status (:mod:`core.services.legacy`), never materialised.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from core.domain import paths
from core.domain.records import MemoryItem, to_public
from core.domain.states import ProcessingState
from core.ports import Ports, StoredDoc
from core.services import graph, legacy

PAGE = 500
# Memories the user may see: every layer, active or superseded (a lineage's history, readable by
# id). Tombstoned and rejected rows (physical ``hidden``) are gone for the user and stay out.
VISIBLE = ["active", "superseded"]
CONVERSATION_INTERNAL = frozenset({"reprocess_token", "reprocess_requested_at"})
WORKFLOW_INTERNAL = frozenset({"revision"})
ASSERTION_FIELDS = ("memory_id", "subject", "predicate", "object", "status", "created_at")
REVIEW_FIELDS = ("review_id", "memory_id", "content", "conflicting", "reason", "status", "created_at", "expires_at",
                 "resolved_at", "decision")


def export_lines(ctx: Ports, uid: str) -> Iterator[str]:
    """The export, one JSON line at a time (each ending in a newline)."""
    counts: dict[str, int] = {}
    now = ctx.now()

    graph_view = _GraphView(ctx, uid)

    def col(name: str) -> Callable[[StoredDoc | None], list[StoredDoc]]:
        return lambda last: ctx.store.scan(paths.col(uid, name), limit=PAGE, after=last.id if last else None)

    sections: list[tuple[str, Callable[[StoredDoc | None], list[StoredDoc]],
                         Callable[[Any], dict[str, Any] | None]]] = [
        # Every item document in id order, the hidden and tombstoned ones skipped here: a plain
        # ordered scan pages in time proportional to the page, where a status filter made the
        # emulator scan the whole collection for every page (quadratic in the memories).
        ("memory", col(paths.MEMORY_ITEMS), lambda data: _memory(data, now) if data.get("status") in VISIBLE else None),
        ("conversation", col(paths.CONVERSATIONS), lambda data: _without(data, CONVERSATION_INTERNAL)),
        ("action_item", col(paths.ACTION_ITEMS), lambda data: _without(data, WORKFLOW_INTERNAL)),
        ("goal", col(paths.GOALS), lambda data: _without(data, WORKFLOW_INTERNAL)),
        ("knowledge_node", col(paths.KNOWLEDGE_NODES), graph_view.node),
        ("knowledge_edge", col(paths.KNOWLEDGE_EDGES), graph_view.edge),
        ("graph_assertion", col(paths.GRAPH_ASSERTIONS), _assertion),
        ("review", col(paths.REVIEW_QUEUE), lambda data: _pick(data, REVIEW_FIELDS)),
        ("client_device", col(paths.CLIENT_DEVICES), dict),
    ]
    for kind, query, public in sections:
        for snap in _pages(query):
            try:
                data = public(snap.data)
            except (TypeError, ValueError, KeyError, AttributeError):
                data = None  # a malformed (e.g. legacy) row is skipped, never a failed export
            if data is None:
                continue
            counts[kind] = counts.get(kind, 0) + 1
            yield json.dumps({"kind": kind, "id": snap.id, "data": data}, default=_json) + "\n"
        if kind == "memory":
            # Historical rows, unless a canonical item or tombstone suppresses them: the same
            # memory lines (in the layer and status each row states), never materialised.
            for item in legacy.every(ctx, uid):
                counts[kind] = counts.get(kind, 0) + 1
                yield json.dumps({"kind": kind, "id": item.id, "data": to_public(item, now)}, default=_json) + "\n"
    yield json.dumps({"kind": "summary", "counts": counts}) + "\n"


class _GraphView:
    """The graph as canonical state asserts it, read once when the export reaches the graph: the
    stored nodes and edges are a projection that may lag a delete (or keep its rows for ever when the
    delete event is dead-lettered), so only asserted edges and the nodes they join are exported."""

    def __init__(self, ctx: Ports, uid: str) -> None:
        self._ctx, self._uid = ctx, uid
        self._edges: dict[str, dict[str, Any]] | None = None
        self._ends: set[Any] = set()

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._edges is None:
            self._edges = graph.live_edges(self._ctx, self._uid)
            self._ends = {end for e in self._edges.values() for end in (e.get("source"), e.get("target"))}
        return self._edges

    def node(self, data: dict[str, Any]) -> dict[str, Any] | None:
        self._load()
        return dict(data) if data.get("id") in self._ends else None

    def edge(self, data: dict[str, Any]) -> dict[str, Any] | None:
        return self._load().get(data.get("id", ""))


def _pages(page_after: Callable[[StoredDoc | None], list[StoredDoc]]) -> Iterator[StoredDoc]:
    """Every document ``page_after`` pages through (ordered by document id), :data:`PAGE` at a time."""
    last = None
    while True:
        docs = page_after(last)
        yield from docs
        if len(docs) < PAGE:
            return
        last = docs[-1]


def _memory(data: dict[str, Any], now: datetime) -> dict[str, Any] | None:
    item = MemoryItem.from_store(data)
    if item.processing_state == ProcessingState.BLOCKED:
        return None
    return to_public(item, now)


def _without(data: dict[str, Any], internal: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in internal}


def _pick(data: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {k: data[k] for k in fields if k in data}


def _assertion(data: dict[str, Any]) -> dict[str, Any] | None:
    """An active assertion as the fact it states (ids, hashes and commit links are ledger internals)."""
    return _pick(data, ASSERTION_FIELDS) if data.get("status") == "active" else None


def _json(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)
