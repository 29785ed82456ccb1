"""The assistant adapters: ``/v1/mcp/memories`` and ``/v1/tools/memories`` (list, search, create,
delete) in the original's request and response shapes.

They are thin: each handler calls the same service as ``/v3`` and ``/v1`` (reads, search, intake,
deletion), so the same visibility rules apply and historical rows are included the same way.
``/v1/mcp/memories`` answers the original's compact memories (``id``, ``content``, ``category``);
``/v1/tools/memories`` answers the original's tool envelope (``tool_name``, ``result_text``,
``is_error``), the result written as text for an agent. Locked memories show 70 characters of
content and cannot be deleted one by one (402), as on ``/v3``.
"""

from __future__ import annotations

from core.api.declare import Request, Response, route
from core.api.params import Query
from core.api.routes import (
    CATEGORIES,
    DELETE_ONE,
    DEVICE_SCOPE,
    SCOPE_HEADER,
    create_memories,
    device_filter,
    locked_content,
    request_key,
)
from core.api.schemas import McpMemoryArray, Memory, MemoryCreate, StatusOk, ToolResult, ToolSearch
from core.domain.records import MemoryItem, primary_category, to_public
from core.services import deletion, reads, search

OFFSET = Query("offset", "integer", 0, 0, 10_000)


def _compact(items: list[MemoryItem]) -> list[dict[str, str]]:
    return [{"id": i.id, "content": locked_content(i), "category": primary_category(i.category)} for i in items]


def _in_categories(req: Request, items: list[MemoryItem]) -> list[MemoryItem]:
    wanted = set(req.value("categories"))
    return [i for i in items if primary_category(i.category) in wanted] if wanted else items


# ------------------------------------------------------------------------------------------- MCP
@route("GET", "/v1/mcp/memories", "MCP adapter: memories (a search when q is given), compact",
       response=McpMemoryArray,
       query=(Query("limit", "integer", 25, 1, 500), OFFSET, CATEGORIES,
              Query("q", max_length=1_000, description="search text: ranked search instead of the list"),
              *DEVICE_SCOPE), key_scope="read", operation_id="listMcpMemories",
       deprecated="GET /v1/memories or GET /v1/memories/hybrid-search (/mcp's list_memories and search_memories "
                  "with a personal key)")
def mcp_list(req: Request) -> Response:
    scope = device_filter(req)
    if req.value("q"):
        items = [s.item for s in search.hybrid(req.ctx, req.uid, req.value("q"), min(req.value("limit"), 100),
                                               devices=scope)]
    else:
        items, _ = reads.list_memories(req.ctx, req.uid, reads.ListQuery(limit=req.value("limit"),
                                                                           offset=req.value("offset"), device_ids=scope))
    return 200, _compact(_in_categories(req, items)), SCOPE_HEADER


@route("POST", "/v1/mcp/memories", "MCP adapter: create a memory (enters Short-term)", body=MemoryCreate,
       response=Memory, key_scope="read+write", operation_id="createMcpMemory",
       deprecated="POST /v1/memories (/mcp's create_memory with a personal key)")
def mcp_create(req: Request) -> Response:
    [item] = create_memories(req, [req.body])
    return 200, to_public(item, req.ctx.now())


@route("DELETE", "/v1/mcp/memories/{memory_id}", "MCP adapter: delete a memory (402: locked)", response=StatusOk,
       raises=DELETE_ONE, key_scope="read+write", operation_id="deleteMcpMemory",
       deprecated="DELETE /v1/memories/{memory_id} (/mcp's delete_memory with a personal key)")
def mcp_delete(req: Request) -> Response:
    deletion.delete_memory(req.ctx, req.uid, req.params["memory_id"], request_key(req))
    return 200, {"status": "ok"}


# ----------------------------------------------------------------------------------------- tools
def _text(items: list[MemoryItem]) -> str:
    lines = []
    for item in items:
        day = item.created_at.date().isoformat() if item.created_at else "undated"
        lines.append(f"- {locked_content(item)} ({primary_category(item.category)}, {day}, id {item.id})")
    return "\n".join(lines)


@route("GET", "/v1/tools/memories", "Tool adapter: the user's memories as text (a search when q is given)",
       response=ToolResult,
       query=(Query("limit", "integer", 50, 1, 500), OFFSET,
              Query("q", max_length=1_000, description="search text: ranked search instead of the list"),
              *DEVICE_SCOPE), key_scope="read", operation_id="listToolMemories",
       deprecated="GET /v1/memories or GET /v1/memories/hybrid-search (/mcp with a personal key)")
def tools_list(req: Request) -> Response:
    if req.value("q"):
        return _search_envelope(req, req.value("q"), min(req.value("limit"), 100))
    items, _ = reads.list_memories(req.ctx, req.uid, reads.ListQuery(limit=req.value("limit"),
                                                                       offset=req.value("offset"),
                                                                       device_ids=device_filter(req)))
    text = f"{len(items)} memories:\n{_text(items)}" if items else "No memories found."
    return 200, {"tool_name": "get_memories", "result_text": text, "is_error": False}, SCOPE_HEADER


def _search_envelope(req: Request, query: str, limit: int) -> Response:
    """The hybrid search answered as the original's ``search_memories`` tool envelope."""
    items = [s.item for s in search.hybrid(req.ctx, req.uid, query, limit, devices=device_filter(req))]
    text = (f"{len(items)} memories match '{query}':\n{_text(items)}" if items
            else f"No memories found matching '{query}'.")
    return 200, {"tool_name": "search_memories", "result_text": text, "is_error": False}, SCOPE_HEADER


@route("POST", "/v1/tools/memories/search", "Tool adapter: search the user's memories", body=ToolSearch,
       response=ToolResult, query=DEVICE_SCOPE, key_scope="read", operation_id="searchToolMemories",
       deprecated="GET /v1/memories/hybrid-search (/mcp's search_memories with a personal key)", rate="search")
def tools_search(req: Request) -> Response:
    return _search_envelope(req, req.body.query, req.body.limit)


@route("POST", "/v1/tools/memories", "Tool adapter: create a memory (enters Short-term)", body=MemoryCreate,
       response=ToolResult, key_scope="read+write", operation_id="createToolMemory",
       deprecated="POST /v1/memories (/mcp's create_memory with a personal key)")
def tools_create(req: Request) -> Response:
    [item] = create_memories(req, [req.body])
    text = f"Saved memory {item.id}: {item.content}"
    return 200, {"tool_name": "create_memory", "result_text": text, "is_error": False}


@route("DELETE", "/v1/tools/memories/{memory_id}", "Tool adapter: delete a memory (402: locked)",
       response=ToolResult, raises=DELETE_ONE, key_scope="read+write", operation_id="deleteToolMemory",
       deprecated="DELETE /v1/memories/{memory_id} (/mcp's delete_memory with a personal key)")
def tools_delete(req: Request) -> Response:
    deletion.delete_memory(req.ctx, req.uid, req.params["memory_id"], request_key(req))
    text = f"Deleted memory {req.params['memory_id']}."
    return 200, {"tool_name": "delete_memory", "result_text": text, "is_error": False}
