"""The HTTP routes of the contract (section 4). Each handler translates and calls one service."""

from __future__ import annotations

from typing import Any

from core.api.app import ROUTES, Request, Response, route
from core.api.schemas import ConversationCreate, MemoryBatch, MemoryCreate, MemoryList, ReviewResolve
from core.domain.records import MemoryItem, to_public
from core.errors import BadRequest
from core.services import devices, edits, intake, reads

SCOPE_HEADER = {"X-Omi-Memory-Device-Scope-Supported": "true"}


def _public(req: Request, items: list[MemoryItem]) -> list[dict[str, Any]]:
    now = req.ctx.now()
    return [to_public(item, now) for item in items]


def _device(req: Request) -> str | None:
    """The request's ``{platform}_{hash}`` device id (registered by the dispatcher)."""
    return devices.device_from_headers(req.headers)[0]


def _device_filter(req: Request) -> frozenset[str] | None:
    scope = req.arg("device_scope", "all")
    if scope == "all":
        return None
    if scope == "current":
        current = _device(req)
        if current is None:
            raise BadRequest("device_scope=current needs X-Device-Id-Hash and X-App-Platform headers",
                             code="validation_error")
        return frozenset({current})
    if scope == "explicit":
        wanted = {d for raw in req.query.get("device_ids", []) for d in raw.split(",") if d}
        if not wanted:
            raise BadRequest("device_scope=explicit needs device_ids", code="validation_error")
        return frozenset(wanted)
    raise BadRequest("device_scope must be current, all or explicit", code="validation_error")


# ---------------------------------------------------------------------------------------------- meta
@route("GET", "/healthz", "Liveness", auth=False)
def healthz(req: Request) -> Response:
    return 200, {"status": "ok"}


@route("GET", "/openapi.json", "This document", auth=False)
def openapi(req: Request) -> Response:
    from core.api.openapi import document

    return 200, document(ROUTES)


# ------------------------------------------------------------------------------------ legacy surface
@route("GET", "/v3/memories", "Default-visible memories (legacy surface)", query=("limit", "offset", "categories"))
def v3_list(req: Request) -> Response:
    limit = req.int_arg("limit", 100, 1, 500)
    offset = req.int_arg("offset", 0, 0, 10_000)
    items, _ = reads.list_memories(req.ctx, req.uid, reads.ListQuery(limit=limit, offset=offset))
    wanted = {c for raw in req.query.get("categories", []) for c in raw.split(",") if c}
    public = _public(req, items)
    if wanted:
        public = [m for m in public if m["category"] in wanted]
    return 200, public, SCOPE_HEADER


def _create(req: Request, bodies: list[MemoryCreate]) -> list[MemoryItem]:
    device_id = _device(req)
    key = req.headers.get("idempotency-key", "")[:200]
    requests = [intake.ExplicitMemory(content=b.content, category=b.category or "manual", visibility=b.visibility,
                                      client_device_id=device_id, idempotency_key=key) for b in bodies]
    return intake.create_explicit(req.ctx, req.uid, requests)


@route("POST", "/v3/memories", "Create an explicit memory (enters Short-term)", body=MemoryCreate)
def v3_create(req: Request) -> Response:
    items = _create(req, [req.body])
    return 201, _public(req, items)[0]


@route("POST", "/v3/memories/batch", "Create up to 100 explicit memories", body=MemoryBatch)
def v3_batch(req: Request) -> Response:
    items = _create(req, list(req.body.memories))
    return 201, {"memories": _public(req, items)}


@route("PATCH", "/v3/memories/{memory_id}", "Edit a memory's content (back to Short-term pending)", query=("value",))
def v3_edit(req: Request) -> Response:
    item = edits.edit_content(req.ctx, req.uid, req.params["memory_id"], req.arg("value") or "")
    return 200, _public(req, [item])[0]


@route("PATCH", "/v3/memories/{memory_id}/visibility", "Set visibility", query=("value",))
def v3_visibility(req: Request) -> Response:
    item = edits.set_visibility(req.ctx, req.uid, req.params["memory_id"], req.arg("value") or "")
    return 200, _public(req, [item])[0]


@route("POST", "/v3/memories/{memory_id}/review", "Record the user's own review", query=("value",))
def v3_review(req: Request) -> Response:
    item = edits.set_user_review(req.ctx, req.uid, req.params["memory_id"], req.bool_arg("value", True))
    return 200, _public(req, [item])[0]


# ------------------------------------------------------------------------------------- canonical API
@route("GET", "/v1/memories", "List memories with a stable cursor", response=MemoryList,
       query=("layer", "include_archive", "limit", "cursor", "device_scope", "device_ids"))
def v1_list(req: Request) -> Response:
    query = reads.ListQuery(
        layer=req.arg("layer") or None, include_archive=req.bool_arg("include_archive"),
        limit=req.int_arg("limit", 100, 1, 500), cursor=req.arg("cursor") or None, device_ids=_device_filter(req),
    )
    items, cursor = reads.list_memories(req.ctx, req.uid, query)
    return 200, {"memories": _public(req, items), "next_cursor": cursor}, SCOPE_HEADER


@route("GET", "/v1/memories/{memory_id}", "One memory")
def v1_get(req: Request) -> Response:
    return 200, _public(req, [reads.get_memory(req.ctx, req.uid, req.params["memory_id"])])[0]


@route("GET", "/v1/memories/{memory_id}/history", "The ledger commits that touched a memory")
def v1_history(req: Request) -> Response:
    return 200, {"commits": reads.history(req.ctx, req.uid, req.params["memory_id"])}


# ---------------------------------------------------------------------------------------- deletes
@route("DELETE", "/v3/memories/{memory_id}", "Delete a memory and its whole lineage")
def v3_delete(req: Request) -> Response:
    from core.services import deletion

    return 200, deletion.delete_memory(req.ctx, req.uid, req.params["memory_id"])


@route("DELETE", "/v3/memories", "Delete every memory (succeeds only after a stable empty rescan)")
def v3_delete_all(req: Request) -> Response:
    from core.services import deletion

    return 200, deletion.delete_all(req.ctx, req.uid)


# ----------------------------------------------------------------------------------- conversations
@route("POST", "/v1/conversations", "Create a completed conversation (same path as a Firestore write)",
       body=ConversationCreate)
def v1_conversation_create(req: Request) -> Response:
    from core.services import conversations

    device_id, platform, _ = devices.device_from_headers(req.headers)
    conversation_id = conversations.create(req.ctx, req.uid, req.body.model_dump(mode="json"), device_id, platform)
    return 201, {"id": conversation_id, "status": "completed"}


@route("POST", "/v1/conversations/{conversation_id}/reprocess", "Re-extract: complete replacement of its memories")
def v1_conversation_reprocess(req: Request) -> Response:
    from core.services import conversations

    result = conversations.reprocess(req.ctx, req.uid, req.params["conversation_id"])
    if result.errors.get("memories"):
        code = "extraction_failed" if "memories" in result.retry else "grounding_failed"
        status = 503 if "memories" in result.retry else 422
        return status, {"error": {"code": code, "message": result.errors["memories"] +
                                  " (the conversation's previous memories are unchanged)"}}
    return 200, {"conversation_id": result.conversation_id, "created": result.created, "kept": result.kept,
                 "retracted": result.retracted, "action_items": result.action_items, "goals": result.goals}


@route("DELETE", "/v1/conversations/{conversation_id}", "Delete a conversation (cascade defaults to true)",
       query=("cascade",))
def v1_conversation_delete(req: Request) -> Response:
    from core.services import conversations

    return 200, conversations.delete(req.ctx, req.uid, req.params["conversation_id"], req.bool_arg("cascade", True))


# --------------------------------------------------------------------------------------- account
@route("DELETE", "/v1/users/delete-account", "Wipe the account (resumable; 503 means call again)")
def v1_delete_account(req: Request) -> Response:
    from core.services import accounts

    return 200, accounts.delete_account(req.ctx, req.uid)


@route("GET", "/v1/memories/export", "Everything the user owns, as JSON lines")
def v1_export(req: Request) -> Response:
    from core.services import accounts

    return 200, "".join(accounts.export(req.ctx, req.uid))


# ------------------------------------------------------------------------------------ review queue
@route("GET", "/v3/memories/review-queue", "Open review entries", query=("limit",))
def v3_review_queue(req: Request) -> Response:
    from core.services import review

    return 200, {"reviews": review.list_open(req.ctx, req.uid, req.int_arg("limit", 100, 1, 500))}


@route("POST", "/v3/memories/review-queue/{review_id}/resolve", "Resolve a review: accept, reject or correct",
       body=ReviewResolve)
def v3_review_resolve(req: Request) -> Response:
    from core.services import review

    return 200, review.resolve(req.ctx, req.uid, req.params["review_id"], req.body.decision, req.body.correction)


# ------------------------------------------------------------------------------------------ search
def _search(req: Request, kind: str) -> Response:
    from core.services import search

    q = req.arg("q") or req.arg("query") or ""
    limit = req.int_arg("limit", 10, 1, 100)
    fn = {"keyword": search.keyword, "vector": search.vector, "archive": search.archive,
          "hybrid": search.hybrid}[kind]
    results = fn(req.ctx, req.uid, q, limit)
    now = req.ctx.now()
    return 200, {"memories": [dict(to_public(s.item, now), score=round(s.score, 6)) for s in results]}


@route("GET", "/v1/memories/search", "Keyword search (Typesense), hydrated from Firestore", query=("q", "limit"))
def v1_search(req: Request) -> Response:
    return _search(req, "keyword")


@route("GET", "/v1/memories/vector-search", "Vector search (Pinecone), hydrated from Firestore",
       query=("q", "limit"))
def v1_vector_search(req: Request) -> Response:
    return _search(req, "vector")


@route("GET", "/v1/memories/hybrid-search", "Keyword + vector, reciprocal-rank fused", query=("q", "limit"))
def v1_hybrid_search(req: Request) -> Response:
    return _search(req, "hybrid")


@route("GET", "/v1/memories/archive/search", "Search the Archive layer only", query=("q", "limit"))
def v1_archive_search(req: Request) -> Response:
    return _search(req, "archive")


@route("GET", "/memory/memory/search", "Alias of /v1/memories/search", query=("q", "limit"))
def alias_search(req: Request) -> Response:
    return _search(req, "keyword")


@route("GET", "/memory/vector/search", "Alias of /v1/memories/vector-search", query=("q", "limit"))
def alias_vector_search(req: Request) -> Response:
    return _search(req, "vector")


@route("GET", "/memory/archive/search", "Alias of /v1/memories/archive/search", query=("q", "limit"))
def alias_archive_search(req: Request) -> Response:
    return _search(req, "archive")


@route("GET", "/v1/mcp/memories", "MCP adapter: search if q is given, else list", query=("q", "limit"))
def mcp_memories(req: Request) -> Response:
    if req.arg("q"):
        return _search(req, "hybrid")
    items, _ = reads.list_memories(req.ctx, req.uid, reads.ListQuery(limit=req.int_arg("limit", 25, 1, 100)))
    return 200, {"memories": _public(req, items)}


@route("GET", "/v1/tools/memories", "Tool adapter: search if q is given, else list", query=("q", "limit"))
def tool_memories(req: Request) -> Response:
    return mcp_memories(req)


# ------------------------------------------------------------------------------------ knowledge graph
@route("GET", "/v1/knowledge-graph", "A bounded, referentially closed page of the graph", query=("limit",))
def v1_graph(req: Request) -> Response:
    from core.services import graph

    return 200, graph.read_page(req.ctx, req.uid, req.int_arg("limit", 500, 1, 2000))


@route("DELETE", "/v1/knowledge-graph", "Refused: the graph is derived from graph assertions")
def v1_graph_delete(req: Request) -> Response:
    return 409, {"error": {"code": "derived_state", "message":
                           "the knowledge graph is derived from memories; delete memories instead"}}


@route("POST", "/v1/knowledge-graph/rebuild", "Refused: projections rebuild themselves from assertions")
def v1_graph_rebuild(req: Request) -> Response:
    return 409, {"error": {"code": "derived_state", "message":
                           "the knowledge graph is rebuilt by projection delivery, not on request"}}
