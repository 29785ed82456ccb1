"""The HTTP routes of the contract (section 4). Each handler translates and calls one service."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable
from typing import Any, TypeVar

from core.api import edge
from core.api.declare import ROUTES, Outcome, Request, Response, route
from core.api.params import Query
from core.api.schemas import (
    AccountDeleted,
    AllDeleted,
    ConversationCreate,
    ConversationCreated,
    Error,
    GraphPage,
    Health,
    History,
    Memory,
    MemoryBatch,
    MemoryCreate,
    MemoryDeleted,
    MemoryList,
    MemoryPage,
    Reprocessed,
    ReviewQueue,
    ReviewResolve,
    ReviewResolved,
    SearchPage,
    SearchResults,
    V3Memory,
    V3MemoryArray,
)
from core.api.schemas import (
    ConversationDeleted as ConversationDeletedBody,
)
from core.domain import ids
from core.domain.records import MemoryItem, to_public
from core.errors import (
    BadRequest,
    CohortMoved,
    KeyReused,
    LeaseHeld,
    LineageMoved,
    Locked,
    ProviderUnavailable,
)
from core.services import devices, edits, intake, reads, temporal

SCOPE_HEADER = {"X-Omi-Memory-Device-Scope-Supported": "true"}


# Empty items are allowed and ignored (``categories=`` is no filter, as in the original); any other
# item must be a lowercase word.
CATEGORIES = Query("categories", "array", max_length=64, pattern=r"^(|[a-z][a-z_]*)$",
                   description="category names (lowercase words), comma-separated; empty items are ignored")


def _limit(default: int, high: int) -> Query:
    return Query("limit", "integer", default, 1, high)


Q_VALUE = Query("value", max_length=8_000, description="the new value")
Q_SEARCH = Query("q", max_length=1_000, description="the search text")
Q_SEARCH_ALT = Query("query", max_length=1_000, description="alias of q")
# The spec's universal retrieval filter, taken by every read and search route (and the MCP tools).
DEVICE_SCOPE = (
    Query("device_scope", enum=devices.SCOPES, default="all",
          description="current: the requesting device (X-Device-Id-Hash, X-App-Platform); explicit: device_ids"),
    Query("device_ids", "array", max_length=200, pattern=r"[a-z]+_[0-9a-f]{8}",
          description="client device ids ({platform}_{hash}), comma-separated"),
)
Q_AS_OF = Query("as_of", max_length=40, pattern=temporal.AS_OF_PATTERN,
                description="what was true then: an ISO-8601 date (its end) or date and time (UTC unless offset)")
SEARCH = (Q_SEARCH, Q_SEARCH_ALT, _limit(10, 100), *DEVICE_SCOPE, Q_AS_OF)
Q_CURSOR = Query("cursor", max_length=2_000, description="the previous page's next_cursor")
SEARCH_V1 = (*SEARCH, Q_CURSOR)
BAD_CURSOR: Outcome = (400, "bad_cursor")  # a cursor this API did not issue (for this query)


def public_items(req: Request, items: list[MemoryItem]) -> list[dict[str, Any]]:
    now = req.ctx.now()
    return [to_public(item, now) for item in items]


LOCKED_PREVIEW = 70  # characters of a locked memory's content the legacy surfaces show


def locked_content(item: MemoryItem) -> str:
    """A locked memory's content as the legacy surfaces show it: the first 70 characters and "..."."""
    if item.locked and len(item.content) > LOCKED_PREVIEW:
        return item.content[:LOCKED_PREVIEW] + "..."
    return item.content


def v3_public(req: Request, items: list[MemoryItem]) -> list[dict[str, Any]]:
    """``/v3``'s memory JSON: the Memory JSON plus ``is_locked``, locked content cut."""
    return [dict(public, content=locked_content(item), is_locked=item.locked)
            for item, public in zip(items, public_items(req, items), strict=True)]


def _device(req: Request) -> str | None:
    """The request's ``{platform}_{hash}`` device id (registered by the dispatcher)."""
    return devices.device_from_headers(req.headers)[0]


def device_filter(req: Request) -> frozenset[str] | None:
    """The request's device scope (``device_scope``, ``device_ids``) as the devices a read keeps."""
    return devices.scope_filter(req.value("device_scope"), req.value("device_ids"), _device(req))


# ---------------------------------------------------------------------------------------------- meta
@route("GET", "/healthz", "Liveness", auth=False, response=Health, operation_id="getHealth")
def healthz(req: Request) -> Response:
    return 200, {"status": "ok"}


@route("GET", "/openapi.json", "This document", auth=False, response={"type": "object"}, operation_id="getOpenApi")
def openapi(req: Request) -> Response:
    from core.api.openapi import document

    return 200, document(ROUTES)


# ------------------------------------------------------------------------------------ legacy surface
EDIT = "PATCH /v1/memories/{memory_id} (a JSON body: content, visibility, category, reviewed)"

@route("GET", "/v3/memories", "Default-visible memories (legacy surface)", response=V3MemoryArray,
       query=(_limit(100, 500), Query("offset", "integer", 0, 0, 10_000),
              CATEGORIES, *DEVICE_SCOPE), operation_id="listMemoriesV3", deprecated="GET /v1/memories")
def v3_list(req: Request) -> Response:
    query = reads.ListQuery(limit=req.value("limit"), offset=req.value("offset"), device_ids=device_filter(req))
    items, _ = reads.list_memories(req.ctx, req.uid, query)
    wanted = set(req.value("categories"))
    public = v3_public(req, items)
    if wanted:
        public = [m for m in public if m["category"] in wanted]
    return 200, public, SCOPE_HEADER


def create_memories(req: Request, bodies: list[MemoryCreate]) -> list[MemoryItem]:
    device_id = _device(req)
    key = request_key(req) or ""
    requests = [intake.ExplicitMemory(content=b.content, category=b.category or "manual", visibility=b.visibility,
                                      client_device_id=device_id, idempotency_key=key) for b in bodies]
    return intake.create_explicit(req.ctx, req.uid, requests)


@route("POST", "/v3/memories", "Create an explicit memory (enters Short-term)", body=MemoryCreate, response=V3Memory,
       status=201, operation_id="createMemoryV3", deprecated="POST /v1/memories")
def v3_create(req: Request) -> Response:
    items = create_memories(req, [req.body])
    return 201, v3_public(req, items)[0]


@route("POST", "/v3/memories/batch", "Create up to 100 explicit memories", body=MemoryBatch, response=MemoryPage,
       status=201, operation_id="createMemoriesV3", deprecated="POST /v1/memories/batch")
def v3_batch(req: Request) -> Response:
    items = create_memories(req, list(req.body.memories))
    return 201, {"memories": public_items(req, items)}


@route("PATCH", "/v3/memories/{memory_id}", "Edit a memory's content (back to Short-term until re-admitted)", query=(Q_VALUE,),
       response=V3Memory, operation_id="editMemoryV3", deprecated=EDIT)
def v3_edit(req: Request) -> Response:
    item = edits.edit_content(req.ctx, req.uid, req.params["memory_id"], req.value("value") or "")
    return 200, v3_public(req, [item])[0]


@route("PATCH", "/v3/memories/{memory_id}/visibility", "Set visibility", response=V3Memory,
       query=(Query("value", enum=("public", "private")),), operation_id="setMemoryVisibilityV3", deprecated=EDIT)
def v3_visibility(req: Request) -> Response:
    item = edits.set_visibility(req.ctx, req.uid, req.params["memory_id"], req.value("value") or "")
    return 200, v3_public(req, [item])[0]


@route("POST", "/v3/memories/{memory_id}/review", "Record the user's own review", response=V3Memory,
       query=(Query("value", "boolean", True),), operation_id="reviewMemoryV3", deprecated=EDIT)
def v3_review(req: Request) -> Response:
    item = edits.set_user_review(req.ctx, req.uid, req.params["memory_id"], req.value("value"))
    return 200, v3_public(req, [item])[0]


# ------------------------------------------------------------------------------------- canonical API
@route("GET", "/v1/memories", "List memories with a stable cursor", response=MemoryList,
       query=(Query("layer", enum=tuple(reads.LAYERS)), Query("include_archive", "boolean", False),
              _limit(100, 500), Query("cursor", max_length=2_000), *DEVICE_SCOPE, Q_AS_OF), operation_id="listMemories", raises=(BAD_CURSOR,))
def v1_list(req: Request) -> Response:
    query = reads.ListQuery(
        layer=req.value("layer"), include_archive=req.value("include_archive"),
        limit=req.value("limit"), cursor=req.value("cursor"), device_ids=device_filter(req),
        as_of=temporal.parse_as_of(req.value("as_of")),
    )
    items, cursor = reads.list_memories(req.ctx, req.uid, query)
    return 200, {"memories": public_items(req, items), "next_cursor": cursor}, SCOPE_HEADER


@route("GET", "/v1/memories/{memory_id}",
       "One memory as the default read shows it (an alias answers its survivor, an ended fact itself; 404 memory_pending: "
       "not processed yet)", response=Memory, raises=((404, "memory_pending"), (404, "memory_blocked")), operation_id="getMemory")
def v1_get(req: Request) -> Response:
    return 200, public_items(req, [reads.get_memory(req.ctx, req.uid, req.params["memory_id"])])[0]


@route("GET", "/v1/memories/{memory_id}/history", "The ledger commits that touched a memory, oldest first",
       query=(_limit(100, 500), Q_CURSOR), response=History, operation_id="getMemoryHistory", raises=(BAD_CURSOR,))
def v1_history(req: Request) -> Response:
    # Paged on the commit sequence, which only grows: a walk sees every commit once, later ones too.
    memory_id = req.params["memory_id"]
    after = decode_key(req.value("cursor"), f"history\n{memory_id}", int)
    commits = [c for c in reads.history(req.ctx, req.uid, memory_id) if after is None or c["sequence"] > after]
    page = commits[:req.value("limit")]
    more = len(commits) > len(page)
    return 200, {"commits": page,
                 "next_cursor": encode_key(page[-1]["sequence"], f"history\n{memory_id}") if more else None}


# ---------------------------------------------------------------------------------------- deletes
# A one-memory delete: locked (402), or its lineage kept moving under it (409).
DELETE_ONE: tuple[Outcome, ...] = (Locked, LineageMoved, (409, "delete_contended"), (503, "legacy_cleanup_pending"))
DELETE_ALL: tuple[Outcome, ...] = ((409, "delete_all_contended"), (503, "legacy_cleanup_pending"))


def request_key(req: Request) -> str | None:
    """The client's ``Idempotency-Key``: a retried request with the same key replays its answer. Never
    cut: one over :data:`core.api.edge.MAX_IDEMPOTENCY_KEY` characters is a 400 (the dispatcher
    refuses it on every write before the handler runs; checked here again for any other caller)."""
    return edge.idempotency_key(req.headers)


@route("DELETE", "/v3/memories/{memory_id}", "Delete a memory and its whole lineage (402: locked)",
       response=MemoryDeleted, raises=DELETE_ONE, operation_id="deleteMemoryV3",
       deprecated="DELETE /v1/memories/{memory_id}")
def v3_delete(req: Request) -> Response:
    from core.services import deletion

    return 200, deletion.delete_memory(req.ctx, req.uid, req.params["memory_id"], request_key(req))


@route("DELETE", "/v3/memories", "Delete every memory (succeeds only after a stable empty rescan)",
       response=AllDeleted, raises=DELETE_ALL, operation_id="deleteAllMemoriesV3", deprecated="DELETE /v1/memories")
def v3_delete_all(req: Request) -> Response:
    from core.services import deletion

    return 200, deletion.delete_all(req.ctx, req.uid, request_key(req))


# ----------------------------------------------------------------------------------- conversations
@route("POST", "/v1/conversations", "Create a completed conversation (same path as a Firestore write)",
       body=ConversationCreate, response=ConversationCreated, status=201, operation_id="createConversation",
       raises=(KeyReused,), rate="extraction")
def v1_conversation_create(req: Request) -> Response:
    from core.services import conversations

    device_id, platform, _ = devices.device_from_headers(req.headers)
    conversation_id = conversations.create(req.ctx, req.uid, req.body.model_dump(mode="json"), device_id, platform,
                                           idempotency_key=request_key(req))
    return 201, {"id": conversation_id, "status": "completed"}


@route("POST", "/v1/conversations/{conversation_id}/reprocess", "Re-extract: complete replacement of its memories",
       response=Reprocessed,
       raises=((409, "conversation_deleted"), (422, "grounding_failed"), (503, "extraction_failed")),
       operation_id="reprocessConversation", rate="extraction")
def v1_conversation_reprocess(req: Request) -> Response:
    from core.services import conversations

    result = conversations.reprocess(req.ctx, req.uid, req.params["conversation_id"])
    if result.errors.get("memories"):
        code = "extraction_failed" if "memories" in result.retry else "grounding_failed"
        status = 503 if "memories" in result.retry else 422
        return status, {"error": {"code": code, "message": result.errors["memories"] +
                                  " (the conversation's previous memories are unchanged)"}}
    return 200, {"conversation_id": result.conversation_id, "created": result.created, "kept": result.kept,
                 "retracted": result.retracted, "suppressed": result.suppressed, "action_items": result.action_items, "goals": result.goals}


@route("DELETE", "/v1/conversations/{conversation_id}", "Delete a conversation (cascade defaults to true)",
       query=(Query("cascade", "boolean", True),), response=ConversationDeletedBody,
       raises=(CohortMoved, (409, "cascade_incomplete")), operation_id="deleteConversation")
def v1_conversation_delete(req: Request) -> Response:
    from core.services import conversations

    return 200, conversations.delete(req.ctx, req.uid, req.params["conversation_id"], req.value("cascade"))


# --------------------------------------------------------------------------------------- account
@route("DELETE", "/v1/users/delete-account", "Wipe the account (resumable; 503 means call again)",
       response=AccountDeleted, raises=(LeaseHeld, ProviderUnavailable), operation_id="deleteAccount",
       rate="", key_scope=None)  # never limited: a user can always wipe, and the wipe asks to be called again
def v1_delete_account(req: Request) -> Response:
    from core.services import accounts

    return 200, accounts.delete_account(req.ctx, req.uid)


@route("GET", "/v1/memories/export", "Everything the user owns, as JSON lines", media_type="application/x-ndjson",
       response={"type": "string", "description": "one JSON object per line"}, operation_id="exportMemories",
       key_scope=None)  # everything the user owns, restricted memories included: the user's own token
def v1_export(req: Request) -> Response:
    from core.services import export

    lines = export.export_lines(req.ctx, req.uid)
    first = next(lines)  # the first page is read before the status is sent: a failure here is a JSON error
    return 200, itertools.chain([first], lines)


# ------------------------------------------------------------------------------------ review queue
REVIEW_RESOLVE: tuple[Outcome, ...] = ((409, "already_resolved"), (409, "stale_review"))

@route("GET", "/v3/memories/review-queue", "Open review entries", query=(_limit(100, 500),), response=ReviewQueue,
       operation_id="listReviewsV3", deprecated="GET /v1/review-queue")
def v3_review_queue(req: Request) -> Response:
    from core.services import review

    return 200, {"reviews": review.list_open(req.ctx, req.uid, req.value("limit"))}


@route("POST", "/v3/memories/review-queue/{review_id}/resolve", "Resolve a review: accept, reject or correct",
       body=ReviewResolve, response=ReviewResolved,
       raises=REVIEW_RESOLVE, operation_id="resolveReviewV3", deprecated="POST /v1/review-queue/{review_id}/resolve")
def v3_review_resolve(req: Request) -> Response:
    from core.services import review

    return 200, review.resolve(req.ctx, req.uid, req.params["review_id"], req.body.decision, req.body.correction)


# ------------------------------------------------------------------------------------------ search
def _ranked(req: Request, kind: str, q: str, limit: int) -> list[Any]:
    """The ranking of search ``kind`` to ``limit`` hits, in the device scope, and with ``as_of`` what
    was true then (hits that had begun, and the ended facts true then)."""
    from core.services import search

    kinds: dict[str, Callable[..., list[search.Scored]]] = {
        "keyword": search.keyword, "vector": search.vector, "archive": search.archive, "hybrid": search.hybrid}
    devices = device_filter(req)
    results = kinds[kind](req.ctx, req.uid, q, limit, devices=devices)
    as_of = temporal.parse_as_of(req.value("as_of"))
    if as_of is not None:
        ended = (temporal.search_history(req.ctx, req.uid, q, as_of, limit, devices) if kind != "archive" else [])
        results = [search.Scored(item, score) for item, score in temporal.search_as_of(
            [(s.item, s.score) for s in results], ended, as_of, limit)]
    return results


def _search(req: Request, kind: str) -> Response:
    q = req.value("q") or req.values.get("query") or ""
    results = _ranked(req, kind, q, req.value("limit"))
    now = req.ctx.now()
    return 200, {"memories": [dict(to_public(s.item, now), score=round(s.score, 6)) for s in results]}, SCOPE_HEADER


# Searches and the review queue rank their results in the request, so their cursor is a position in
# that ranking (bound to the query it came from) rather than a key: each page re-runs the ranking to
# the page's end, up to a depth limit (the service's own bound), and says when it stopped there.
SEARCH_DEPTH = 100


def _tag(scope: str) -> str:
    """What binds a cursor to the route and query (or resource) it was issued for."""
    return hashlib.sha256(scope.encode()).hexdigest()[:16]


def encode_offset(offset: int, scope: str) -> str:
    """An opaque cursor: the position ``offset`` in the results of ``scope`` (the route and query)."""
    raw = json.dumps({"o": offset, "s": _tag(scope)})
    return ids.to_token(raw.encode())


def decode_offset(cursor: str | None, scope: str) -> int:
    """The position a cursor of :func:`encode_offset` names; 0 without one; 400 ``bad_cursor`` for a
    cursor this API did not issue for the same route and query."""
    if not cursor:
        return 0
    try:
        data = json.loads(ids.from_token(cursor))
        offset = data["o"]
        if not isinstance(offset, int) or offset < 0 or data["s"] != _tag(scope):
            raise ValueError("not this query's cursor")
    except (ValueError, KeyError, TypeError) as exc:
        raise BadRequest("cursor is not one this API issued for this query", code="bad_cursor") from exc
    return offset


K = TypeVar("K", str, int)
T = TypeVar("T")


def encode_key(key: str | int, scope: str) -> str:
    """An opaque key cursor: the last key of a page of ``scope`` (a route and its resource)."""
    raw = json.dumps({"k": key, "s": _tag(scope)})
    return ids.to_token(raw.encode())


def decode_key(cursor: str | None, scope: str, kind: type[K]) -> K | None:
    """The key a cursor of :func:`encode_key` names; None without one; 400 ``bad_cursor`` for a
    cursor this API did not issue for the same route and resource."""
    if not cursor:
        return None
    try:
        data = json.loads(ids.from_token(cursor))
        key = data["k"]
        if type(key) is not kind or data["s"] != _tag(scope):
            raise ValueError("not this resource's cursor")
    except (ValueError, KeyError, TypeError) as exc:
        raise BadRequest("cursor is not one this API issued for this resource", code="bad_cursor") from exc
    return key  # type: ignore[no-any-return]


def offset_page(rows: list[Any], offset: int, limit: int, depth: int, scope: str) -> tuple[list[Any], str | None, bool]:
    """The page ``[offset, offset + limit)`` of ``rows`` (ranked to at most ``depth``, one past the
    page when it could): the page, the next cursor and whether the depth limit stopped the walk."""
    page = rows[offset:offset + limit]
    end = offset + len(page)
    more = len(rows) > end
    if more and end < depth:
        return page, encode_offset(end, scope), False
    return page, None, end >= depth


def _mark(memory_id: str) -> bytes:
    """A memory's short fingerprint in a search cursor (6 bytes: a page walk of 100 stays small)."""
    return hashlib.sha256(memory_id.encode()).digest()[:6]


def encode_served(served: list[bytes], scope: str) -> str:
    """An opaque search cursor: the fingerprints of the memories already served for ``scope``."""
    raw = hashlib.sha256(scope.encode()).digest()[:8] + b"".join(served)
    return ids.to_token(raw)


def decode_served(cursor: str | None, scope: str) -> list[bytes]:
    """The fingerprints a cursor of :func:`encode_served` carries; none without one; 400
    ``bad_cursor`` for a cursor this API did not issue for the same route and query."""
    if not cursor:
        return []
    try:
        raw = ids.from_token(cursor)
    except ValueError as exc:
        raise BadRequest("cursor is not one this API issued for this query", code="bad_cursor") from exc
    if raw[:8] != hashlib.sha256(scope.encode()).digest()[:8] or (len(raw) - 8) % 6 or len(raw) == 8:
        raise BadRequest("cursor is not one this API issued for this query", code="bad_cursor")
    return [raw[i:i + 6] for i in range(8, len(raw), 6)]


def served_page(rows: list[T], served: list[bytes], limit: int, depth: int, scope: str,
                key: Callable[[T], str]) -> tuple[list[T], str | None, bool]:
    """The next page of a ranking re-run for this request (to ``len(served) + limit + 1``, at most
    ``depth``): its first ``limit`` rows not served before, the next cursor, and whether the depth
    limit stopped the walk. A ranking may reorder between pages (a fusion of two rankings to a
    deeper cut, or a write in between): a walk still serves a memory at most once, and one walked
    to its end misses none that stayed ranked."""
    seen = set(served)
    fresh = [row for row in rows if _mark(key(row)) not in seen]
    page = fresh[:limit]
    total = len(served) + len(page)
    if len(fresh) > len(page) and total < depth:
        return page, encode_served(served + [_mark(key(row)) for row in page], scope), False
    return page, None, total >= depth


def _search_page(req: Request, kind: str) -> Response:
    """A ``/v1`` search: a page of the ranking and a cursor to the next, to a depth of 100."""
    q = req.value("q") or req.values.get("query") or ""
    limit = req.value("limit")
    scope = f"{kind}\n{q}\n{','.join(sorted(device_filter(req) or ()))}\n{req.value('as_of') or ''}"
    served = decode_served(req.value("cursor"), scope)
    if len(served) >= SEARCH_DEPTH:
        raise BadRequest("cursor is past the search's depth limit", code="bad_cursor")
    results = _ranked(req, kind, q, min(len(served) + limit + 1, SEARCH_DEPTH))
    page, cursor, limited = served_page(results, served, limit, SEARCH_DEPTH, scope, lambda s: s.item.id)
    now = req.ctx.now()
    return 200, {"memories": [dict(to_public(s.item, now), score=round(s.score, 6)) for s in page],
                 "next_cursor": cursor, "depth_limited": limited}, SCOPE_HEADER


@route("GET", "/v1/memories/search", "Keyword search (Typesense), hydrated from Firestore", query=SEARCH_V1,
       response=SearchPage, operation_id="searchMemories", raises=(BAD_CURSOR,))
def v1_search(req: Request) -> Response:
    return _search_page(req, "keyword")


@route("GET", "/v1/memories/vector-search", "Vector search (Pinecone), hydrated from Firestore",
       query=SEARCH_V1, response=SearchPage, operation_id="vectorSearchMemories", raises=(BAD_CURSOR,), rate="search")
def v1_vector_search(req: Request) -> Response:
    return _search_page(req, "vector")


@route("GET", "/v1/memories/hybrid-search", "Keyword + vector, reciprocal-rank fused", query=SEARCH_V1,
       response=SearchPage, operation_id="hybridSearchMemories", raises=(BAD_CURSOR,), rate="search")
def v1_hybrid_search(req: Request) -> Response:
    return _search_page(req, "hybrid")


@route("GET", "/v1/memories/archive/search", "Search the Archive layer only", query=SEARCH_V1, response=SearchPage,
       operation_id="searchArchive", raises=(BAD_CURSOR,))
def v1_archive_search(req: Request) -> Response:
    return _search_page(req, "archive")


@route("GET", "/memory/memory/search", "Alias of /v1/memories/search", query=SEARCH, response=SearchResults,
       operation_id="searchMemoriesAlias", deprecated="GET /v1/memories/search")
def alias_search(req: Request) -> Response:
    return _search(req, "keyword")


@route("GET", "/memory/vector/search", "Alias of /v1/memories/vector-search", query=SEARCH,
       response=SearchResults, operation_id="vectorSearchMemoriesAlias", deprecated="GET /v1/memories/vector-search",
       rate="search")
def alias_vector_search(req: Request) -> Response:
    return _search(req, "vector")


@route("GET", "/memory/archive/search", "Alias of /v1/memories/archive/search", query=SEARCH,
       response=SearchResults, operation_id="searchArchiveAlias", deprecated="GET /v1/memories/archive/search")
def alias_archive_search(req: Request) -> Response:
    return _search(req, "archive")


# ------------------------------------------------------------------------------------ knowledge graph
@route("GET", "/v1/knowledge-graph", "A page of the graph's edges with the nodes they end at (referentially closed)",
       query=(_limit(500, 2000), Q_CURSOR), response=GraphPage, operation_id="getKnowledgeGraph",
       raises=(BAD_CURSOR,))
def v1_graph(req: Request) -> Response:
    from core.services import graph

    page = graph.read_page(req.ctx, req.uid, req.value("limit"), decode_key(req.value("cursor"), "knowledge-graph", str))
    after = page.pop("next_after")
    cursor = encode_key(after, "knowledge-graph") if after is not None else None
    return 200, {**page, "next_cursor": cursor, "truncated": cursor is not None}


@route("DELETE", "/v1/knowledge-graph", "Refused: the graph is derived from graph assertions", status=409,
       response=Error, operation_id="deleteKnowledgeGraph")
def v1_graph_delete(req: Request) -> Response:
    return 409, {"error": {"code": "derived_state", "message":
                           "the knowledge graph is derived from memories; delete memories instead"}}


@route("POST", "/v1/knowledge-graph/rebuild", "Refused: projections rebuild themselves from assertions", status=409,
       response=Error, operation_id="rebuildKnowledgeGraph")
def v1_graph_rebuild(req: Request) -> Response:
    return 409, {"error": {"code": "derived_state", "message":
                           "the knowledge graph is rebuilt by projection delivery, not on request"}}
