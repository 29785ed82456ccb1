"""The Model Context Protocol server at ``/mcp`` (streamable HTTP, stateless, JSON responses).

The ``api`` function is a WSGI (Flask) app and the SDK's HTTP transport is ASGI. Each POST to
``/mcp`` is served whole inside the request that carries it: the token is checked here (a
Firebase ID token as on every other route, or a personal API key: a ``read`` key lists, searches
and reads, and its create and delete calls are tool errors ``key_scope``; an unknown or revoked
key is a 401 whose ``WWW-Authenticate`` names the protected-resource metadata), then one event
loop runs the SDK's own stateless session manager in JSON-response mode over that single request
and returns its answer. Stateless JSON mode is what makes this sound on a function: no session
outlives a request, no SSE stream is held open, and any instance can serve any request, so
nothing is shared between workers.

Every tool and resource calls the services the REST routes call (``reads``, ``search``,
``intake``, ``deletion``); reads stay pure. A write tool's ledger commits record the credential
that made it (the personal key's id or the user's ID token, with the requesting device), as a
``/v1`` write's do, so a key's writes listing names what it wrote through ``/mcp``. A service refusal (unknown id, bad value, writes
switched off) is a tool error (``isError``) carrying the same code as the REST answer, and
arguments that do not fit a tool's schema are a tool error too, never a crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import ToolAnnotations
from pydantic import Field

from core.api.auth import authenticate
from core.api.declare import MCP_PATH as PATH
from core.api.edge import valid_id
from core.api.key_routes import metadata_url
from core.api.routes import SEARCH_DEPTH, decode_served, served_page
from core.domain import credentials, fence
from core.domain.records import MemoryItem, to_public
from core.errors import MethodNotAllowed, NotFound, PayloadTooLarge, StrataError, Unauthorized
from core.ports import Ports
from core.services import api_keys, deletion, devices, edits, intake, reads, search, temporal

_CALLER: ContextVar[tuple[Ports, str]] = ContextVar("strata_mcp_caller")
# The personal API key the request came with (None: an ID token), for the write tools' scope check.
_KEY: ContextVar[api_keys.KeyCaller | None] = ContextVar("strata_mcp_key", default=None)
# The requesting device (its X-Device-Id-Hash and X-App-Platform headers), for device_scope=current.
_DEVICE: ContextVar[str | None] = ContextVar("strata_mcp_device", default=None)
T = TypeVar("T")

server: MCPServer[Any] = MCPServer(
    name="strata", version="1",
    instructions="The user's layered memory. Search or list memories, read one and its history, add a fact "
                 "(it enters Short-term and is settled by consolidation), or delete one with its lineage.",
)


def _caller() -> tuple[Ports, str]:
    return _CALLER.get()


def _json(value: Any) -> Any:
    """The exact JSON the REST routes send (timestamps as strings)."""
    return json.loads(json.dumps(value, default=str))


def _public(ctx: Ports, items: list[MemoryItem]) -> list[dict[str, Any]]:
    now = ctx.now()
    return [_json(to_public(item, now)) for item in items]


def _checked_id(memory_id: str) -> str:
    if not valid_id(memory_id):  # what the REST edge answers for an id no document can have
        raise NotFound("no such memory")
    return memory_id


def _service(call: Callable[[], T]) -> T:
    """Run one service call; a refusal becomes a tool error with the REST error's code."""
    try:
        return call()
    except StrataError as exc:
        raise ToolError(f"{exc.code}: {exc.message}") from exc


@contextmanager
def _write(ctx: Ports, uid: str) -> Iterator[None]:
    """A write belongs to the account generation it started in (as the REST dispatcher does), and
    needs a ``read+write`` key when the caller came with a personal key (a tool error otherwise).
    Every commit it makes records the credential it was made with, as on ``/v1``: the personal
    key's id or the user's ID token, with the device the request named."""
    key = _KEY.get()
    _service(lambda: api_keys.require(key, write=True))
    credential = credentials.of_request(key.key_id if key is not None else None, _DEVICE.get())
    with fence.expect(uid, ctx.store.read_fence(uid).generation), credentials.acting_as(credential):
        yield


# ---------------------------------------------------------------------------------------------- tools
# What a host may assume of a tool (MCP tool annotations): reads change nothing and repeat safely.
_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
Limit = Annotated[int, Field(ge=1, le=100, description="at most this many memories")]
MemoryId = Annotated[str, Field(min_length=1, max_length=1_500, description="the memory's public id")]
IdempotencyKey = Annotated[str, Field(max_length=200, description="a retry with the same key replays")]
DeviceScope = Annotated[Literal["current", "all", "explicit"],
                        Field(description="current: the requesting device (X-Device-Id-Hash, X-App-Platform headers); "
                                          "explicit: the devices in device_ids; all: every memory")]
DeviceIds = Annotated[list[Annotated[str, Field(pattern=r"^[a-z]+_[0-9a-f]{8}$")]],
                      Field(max_length=200, description="client device ids ({platform}_{hash}) for explicit")]


Cursor = Annotated[str | None, Field(max_length=2_000, description="next_cursor of the previous page")]
AsOf = Annotated[str, Field(max_length=40, description="what was true then: an ISO-8601 date (its end) or date "
                                                       "and time (UTC unless an offset is given)")]


def _scope(scope: str, device_ids: list[str]) -> frozenset[str] | None:
    return _service(lambda: devices.scope_filter(scope, device_ids, _DEVICE.get()))


@server.tool(title="Search memories", annotations=_READ,
             description="Hybrid (keyword + vector) search over the user's memories, a page at a time with a "
                         "cursor, like GET /v1/memories/hybrid-search")
async def search_memories(query: Annotated[str, Field(min_length=1, max_length=1_000, description="the search text")],
                          limit: Limit = 10, device_scope: DeviceScope = "all",
                          device_ids: DeviceIds | None = None, as_of: AsOf | None = None,
                          cursor: Cursor = None) -> dict[str, Any]:
    ctx, uid = _caller()
    scope = _scope(device_scope, device_ids or [])
    when = _service(lambda: temporal.parse_as_of(as_of))
    # The cursor carries what was served, bound to the query, the device scope and as_of (as on
    # the REST searches): each page ranks to its own end, to the search depth, and serves the next.
    bound = f"mcp.search_memories\n{query}\n{','.join(sorted(scope or ()))}\n{as_of or ''}"
    served = _service(lambda: decode_served(cursor, bound))
    if len(served) >= SEARCH_DEPTH:
        raise ToolError("bad_cursor: cursor is past the search's depth limit")
    depth = min(len(served) + limit + 1, SEARCH_DEPTH)
    results = _service(lambda: search.hybrid(ctx, uid, query, depth, devices=scope))
    if when is not None:  # what was true then, as the REST search's as_of
        ended = _service(lambda: temporal.search_history(ctx, uid, query, when, depth, scope))
        results = [search.Scored(item, score) for item, score in temporal.search_as_of(
            [(s.item, s.score) for s in results], ended, when, depth)]
    page, next_cursor, limited = served_page(results, served, limit, SEARCH_DEPTH, bound, lambda s: s.item.id)
    now = ctx.now()
    return {"memories": [_json(dict(to_public(s.item, now), score=round(s.score, 6))) for s in page],
            "next_cursor": next_cursor, "depth_limited": limited}


@server.tool(title="List memories", annotations=_READ,
             description="List memories newest first with a stable cursor, like GET /v1/memories")
async def list_memories(layer: Literal["short_term", "long_term", "archive"] | None = None,
                        include_archive: bool = False,
                        limit: Annotated[int, Field(ge=1, le=500)] = 25,
                        cursor: Cursor = None,
                        device_scope: DeviceScope = "all", device_ids: DeviceIds | None = None,
                        as_of: AsOf | None = None) -> dict[str, Any]:
    ctx, uid = _caller()
    query = reads.ListQuery(layer=layer, include_archive=include_archive, limit=limit, cursor=cursor,
                            as_of=_service(lambda: temporal.parse_as_of(as_of)),
                            device_ids=_scope(device_scope, device_ids or []))
    items, next_cursor = _service(lambda: reads.list_memories(ctx, uid, query))
    return {"memories": _public(ctx, items), "next_cursor": next_cursor}


@server.tool(title="Get a memory", annotations=_READ, description="One memory by id, like GET /v1/memories/{id}")
async def get_memory(memory_id: MemoryId) -> dict[str, Any]:
    ctx, uid = _caller()
    item = _service(lambda: reads.get_memory(ctx, uid, _checked_id(memory_id)))
    return _public(ctx, [item])[0]


@server.tool(title="Add a memory", annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                                idempotent_hint=False, open_world_hint=False),
             description="Add an explicit memory; it enters Short-term like every intake, like POST /v1/memories")
async def create_memory(content: Annotated[str, Field(min_length=1, description="the fact, in the user's words")],
                        category: Annotated[str | None, Field(max_length=64)] = None,
                        visibility: Literal["public", "private"] = "private",
                        idempotency_key: IdempotencyKey = "") -> dict[str, Any]:
    ctx, uid = _caller()
    request = intake.ExplicitMemory(content=content, category=category or "manual", visibility=visibility,
                                    idempotency_key=idempotency_key)
    with _write(ctx, uid):
        items = _service(lambda: intake.create_explicit(ctx, uid, [request]))
    return _public(ctx, items)[0]


@server.tool(title="Delete a memory", annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                                   idempotent_hint=True, open_world_hint=False),
             description="Delete a memory and its aliases everywhere, like DELETE /v1/memories/{id}")
async def delete_memory(memory_id: MemoryId, idempotency_key: IdempotencyKey = "") -> dict[str, Any]:
    ctx, uid = _caller()
    with _write(ctx, uid):
        result = _service(lambda: deletion.delete_memory(ctx, uid, _checked_id(memory_id), idempotency_key or None))
    return _json(result)


@server.tool(title="Restore an ended memory",
             annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                         open_world_hint=False),
             description="Undo an automatic ending: a fact a later statement ended is current again, beside "
             "the fact that ended it, which never ends it again; like POST /v1/memories/{id}/restore")
async def restore_memory(memory_id: MemoryId) -> dict[str, Any]:
    ctx, uid = _caller()
    with _write(ctx, uid):
        item = _service(lambda: edits.restore(ctx, uid, _checked_id(memory_id)))
    return _public(ctx, [item])[0]


# ------------------------------------------------------------------------------------------ resources
def _resource(call: Callable[[], T]) -> T:
    try:
        return call()
    except NotFound as exc:
        raise ResourceNotFoundError(exc.message) from exc


@server.resource("strata://memories/{memory_id}", name="memory", mime_type="application/json",
                 description="One memory (the Memory JSON of GET /v1/memories/{id})")
async def memory_resource(memory_id: str) -> str:
    ctx, uid = _caller()
    item = _resource(lambda: reads.get_memory(ctx, uid, _checked_id(memory_id)))
    return json.dumps(_public(ctx, [item])[0])


@server.resource("strata://memories/{memory_id}/history", name="memory_history", mime_type="application/json",
                 description="The ledger commits that touched a memory (GET /v1/memories/{id}/history)")
async def history_resource(memory_id: str) -> str:
    ctx, uid = _caller()
    commits = _resource(lambda: reads.history(ctx, uid, _checked_id(memory_id)))
    return json.dumps({"commits": commits}, default=str)


# ----------------------------------------------------------------------------------- WSGI → ASGI bridge
Answer = tuple[int, list[tuple[str, str]], bytes]


def _error(exc: StrataError, extra: list[tuple[str, str]] | None = None) -> Answer:
    return exc.status, [("content-type", "application/json"), *(extra or [])], json.dumps(exc.to_json()).encode()


async def _exchange(method: str, headers: dict[str, str], body: bytes) -> Answer:
    """One HTTP request through the SDK's stateless JSON-response transport, as an ASGI call."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "https",
        "path": PATH, "raw_path": PATH.encode(), "root_path": "", "query_string": b"",
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        "client": None, "server": None,
    }
    answered = anyio.Event()
    delivered = False
    status = 500
    out_headers: list[tuple[str, str]] = []
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client stays connected until the answer is complete
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            out_headers.extend((k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    manager = StreamableHTTPSessionManager(app=server._lowlevel_server, json_response=True, stateless=True)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return status, out_headers, b"".join(chunks)


def handle(ctx: Ports, method: str, headers: dict[str, str], body: bytes, content_length: int | None) -> Answer:
    """Serve one request to ``/mcp``: method (405), token (401), size (413), then the SDK's transport
    (which answers a bad Accept or content type, malformed JSON-RPC and protocol errors itself)."""
    if method != "POST":  # stateless: no SSE stream to GET, no session to DELETE
        return _error(MethodNotAllowed(f"{method} is not allowed on {PATH}; MCP messages are POSTed", ["POST"]),
                      [("allow", "POST")])
    try:
        uid, key = authenticate(headers.get("authorization"), ctx, "read")
    except Unauthorized as exc:
        # The MCP authorization spec: the 401 names the protected-resource metadata (RFC 9728).
        challenge = f'Bearer resource_metadata="{metadata_url(ctx.settings, headers)}"'
        return _error(exc, [("www-authenticate", challenge)])
    except StrataError as exc:  # the key lookup could not be read: 503, retry
        return _error(exc)
    limit = ctx.settings.max_body_bytes
    if (content_length or 0) > limit or len(body) > limit:
        return _error(PayloadTooLarge(f"request body is larger than {limit} bytes"))
    token = _CALLER.set((ctx, uid))
    scoped = _KEY.set(key)
    device = _DEVICE.set(devices.device_from_headers(headers)[0])
    try:
        with credentials.reading_as(key):  # a key's reads show restricted memories only if it may
            return anyio.run(_exchange, method, headers, body)
    finally:
        _DEVICE.reset(device)
        _KEY.reset(scoped)
        _CALLER.reset(token)
