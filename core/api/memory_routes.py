"""The ``/v1`` memory writes and the review queue: create, batch create, edit, delete, delete-all,
list and resolve reviews, each with a JSON body where it takes input.

Each handler calls the same service as the compatibility route it replaces (``/v3/memories…``,
``/v3/memories/review-queue…``) and answers what the service returns, in the Memory JSON of the
other ``/v1`` reads (no ``is_locked``, no cut content); only the shapes differ.
"""

from __future__ import annotations

from core.api.declare import Request, Response, route
from core.api.params import Query
from core.api.routes import (
    BAD_CURSOR,
    DELETE_ALL,
    DELETE_ONE,
    REVIEW_RESOLVE,
    create_memories,
    decode_offset,
    offset_page,
    public_items,
    request_key,
)
from core.api.schemas import (
    AllDeleted,
    Memory,
    MemoryBatch,
    MemoryCreate,
    MemoryDeleted,
    MemoryEdit,
    MemoryPage,
    ReviewPage,
    ReviewResolve,
    ReviewResolved,
)
from core.errors import BadRequest
from core.services import deletion, edits, review

REVIEW_DEPTH = 500  # the review service's own bound on one read of the queue


@route("POST", "/v1/memories", "Create an explicit memory (enters Short-term)", body=MemoryCreate, response=Memory,
       status=201, operation_id="createMemory")
def v1_create(req: Request) -> Response:
    return 201, public_items(req, create_memories(req, [req.body]))[0]


@route("POST", "/v1/memories/batch", "Create up to 100 explicit memories (all checked before any is written)",
       body=MemoryBatch, response=MemoryPage, status=201, operation_id="createMemories")
def v1_batch(req: Request) -> Response:
    return 201, {"memories": public_items(req, create_memories(req, list(req.body.memories)))}


@route("PATCH", "/v1/memories/{memory_id}", "Edit a memory: content (a new revision, back to Short-term), "
       "visibility, category, the user's review flag", body=MemoryEdit, response=Memory, operation_id="updateMemory")
def v1_edit(req: Request) -> Response:
    memory_id, body = req.params["memory_id"], req.body
    # In this order, each its own revision: the content edit (the one a service may refuse, for a
    # secret or the length) goes first, so a refused edit writes nothing; the body's schema admits
    # only values the metadata edits accept.
    item = None
    if body.content is not None:
        item = edits.edit_content(req.ctx, req.uid, memory_id, body.content)
    if body.visibility is not None:
        item = edits.set_visibility(req.ctx, req.uid, memory_id, body.visibility)
    if body.category is not None:
        item = edits.set_category(req.ctx, req.uid, memory_id, body.category)
    if body.reviewed is not None:
        item = edits.set_user_review(req.ctx, req.uid, memory_id, body.reviewed)
    assert item is not None  # the body's schema requires a field
    return 200, public_items(req, [item])[0]


@route("DELETE", "/v1/memories/{memory_id}", "Delete a memory and its whole lineage (402: locked)",
       response=MemoryDeleted, raises=DELETE_ONE, operation_id="deleteMemory")
def v1_delete(req: Request) -> Response:
    return 200, deletion.delete_memory(req.ctx, req.uid, req.params["memory_id"], request_key(req))


@route("POST", "/v1/memories/{memory_id}/restore", "Undo an ending: a fact a later statement ended is current "
       "again, beside the one that ended it, which never ends it again", response=Memory,
       raises=((409, "not_ended"),), operation_id="restoreMemory")
def v1_restore(req: Request) -> Response:
    return 200, public_items(req, [edits.restore(req.ctx, req.uid, req.params["memory_id"])])[0]


@route("DELETE", "/v1/memories", "Delete every memory (succeeds only after a stable empty rescan)",
       response=AllDeleted, raises=DELETE_ALL, operation_id="deleteAllMemories")
def v1_delete_all(req: Request) -> Response:
    return 200, deletion.delete_all(req.ctx, req.uid, request_key(req))


@route("GET", "/v1/review-queue", "Open review entries, newest first, a page at a time",
       query=(Query("limit", "integer", 100, 1, 500),
              Query("cursor", max_length=2_000, description="the previous page's next_cursor")),
       response=ReviewPage, raises=(BAD_CURSOR,), operation_id="listReviews")
def v1_review_queue(req: Request) -> Response:
    limit = req.value("limit")
    offset = decode_offset(req.value("cursor"), "review-queue")
    if offset >= REVIEW_DEPTH:
        raise BadRequest("cursor is past the review queue's depth limit", code="bad_cursor")
    rows = review.list_open(req.ctx, req.uid, min(offset + limit + 1, REVIEW_DEPTH))
    page, cursor, limited = offset_page(rows, offset, limit, REVIEW_DEPTH, "review-queue")
    return 200, {"reviews": page, "next_cursor": cursor, "depth_limited": limited}


@route("POST", "/v1/review-queue/{review_id}/resolve", "Resolve a review: accept, keep_both, reject or correct",
       body=ReviewResolve, response=ReviewResolved, raises=REVIEW_RESOLVE, operation_id="resolveReview")
def v1_review_resolve(req: Request) -> Response:
    return 200, review.resolve(req.ctx, req.uid, req.params["review_id"], req.body.decision, req.body.correction)



