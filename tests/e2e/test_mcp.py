"""The MCP server at ``/mcp`` of the running stack, driven by the ``mcp`` SDK's own client over
streamable HTTP: tool listing, every tool and resource against the REST answer for the same
request, the token (401, no data), another user's id (not found) and bad arguments (a tool error,
the session keeps working)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import ids
from core.services import controls
from tests.support.firestore_checks import assert_nothing_written, user_doc_count, user_documents, wait_for

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
TOOLS = {"search_memories", "list_memories", "get_memory", "create_memory", "delete_memory", "restore_memory"}
T = TypeVar("T")


def _uid() -> str:
    return f"mcp-{uuid.uuid4().hex[:12]}"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


@asynccontextmanager
async def _client(url: str, headers: dict[str, str], mode: str = "auto") -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers=headers, timeout=60.0) as http, \
            Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


def _session(stack: dict[str, Any], uid: str, body: Callable[[Client], Awaitable[T]], mode: str = "auto") -> T:
    """Run ``body`` with an SDK client connected to the stack's ``/mcp`` as ``uid``: ``auto`` speaks the
    current protocol (no handshake), ``legacy`` the initialize handshake of earlier revisions."""
    async def run() -> T:
        async with _client(stack["api_url"] + "/mcp", _auth(uid), mode) as client:
            return await body(client)

    return anyio.run(run)


def _structured(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def _error_text(result: Any) -> str:
    assert result.is_error, result
    return " ".join(block.text for block in result.content)


MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])


@MODES
def test_tools_and_resource_templates_are_listed(stack: dict[str, Any], mode: str) -> None:
    async def body(client: Client) -> tuple[Any, Any]:
        return await client.list_tools(), await client.list_resource_templates()

    tools, templates = _session(stack, _uid(), body, mode)
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == TOOLS
    assert by_name["search_memories"].input_schema["required"] == ["query"]
    assert by_name["create_memory"].input_schema["properties"]["visibility"]["enum"] == ["public", "private"]
    assert {t.uri_template for t in templates.resource_templates} == {
        "strata://memories/{memory_id}", "strata://memories/{memory_id}/history"}
    # Issue 46: every tool has a title and annotations a host can trust; reads are read-only and
    # idempotent, delete is destructive; no description names a deprecated /v3 route.
    for tool in tools.tools:
        assert tool.title and tool.annotations is not None, tool.name
        assert "/v3" not in (tool.description or ""), tool.name
    for name in ("search_memories", "list_memories", "get_memory"):
        hints = by_name[name].annotations
        assert hints.read_only_hint is True and hints.idempotent_hint is True and hints.destructive_hint is False
    assert by_name["delete_memory"].annotations.destructive_hint is True
    assert by_name["create_memory"].annotations.read_only_hint is False


def test_every_tool_answers_what_the_http_api_answers(stack: dict[str, Any], http: httpx.Client) -> None:
    ctx = Context()
    uid = _uid()
    fact = "I grow chillies on the balcony"

    async def create(client: Client) -> Any:
        return _structured(await client.call_tool("create_memory", {"content": fact, "category": "interests"}))

    created = _session(stack, uid, create)
    assert created["content"] == fact and created["layer"] == "short_term"  # an intake like every other
    memory_id = created["id"]
    wait_for(lambda: ids.provider_id(uid, memory_id) in ctx.keyword_index.provider_ids(uid)
             and ids.provider_id(uid, memory_id) in ctx.vector_index.provider_ids(uid),
             timeout=60, interval=0.25, what="the new memory to be projected")

    before = user_documents(ctx, uid)

    async def reads(client: Client) -> dict[str, Any]:
        found = await client.call_tool("search_memories", {"query": "chillies balcony"})
        listed = await client.call_tool("list_memories", {})
        one = await client.call_tool("get_memory", {"memory_id": memory_id})
        resource = await client.read_resource(f"strata://memories/{memory_id}")
        history = await client.read_resource(f"strata://memories/{memory_id}/history")
        return {"search": _structured(found), "list": _structured(listed), "get": _structured(one),
                "resource": json.loads(resource.contents[0].text), "history": json.loads(history.contents[0].text)}

    got = _session(stack, uid, reads)
    assert_nothing_written(ctx, uid, before)  # reads stay pure
    rest = {
        "search": http.get("/v1/mcp/memories", params={"q": "chillies balcony"}, headers=_auth(uid)).json(),
        "list": http.get("/v1/memories", params={"limit": 25}, headers=_auth(uid)).json(),
        "get": http.get(f"/v1/memories/{memory_id}", headers=_auth(uid)).json(),
        "history": http.get(f"/v1/memories/{memory_id}/history", headers=_auth(uid)).json(),
    }
    assert [m["id"] for m in got["search"]["memories"]] == [m["id"] for m in rest["search"]] == [memory_id]
    assert got["list"] == rest["list"]
    assert got["get"] == rest["get"] == got["resource"]
    # The resource is the whole history; the HTTP page holds all of it here (one page, no next cursor).
    assert rest["history"]["next_cursor"] is None
    assert got["history"]["commits"] == rest["history"]["commits"]
    assert [c["kind"] for c in got["history"]["commits"]][0] == "intake.explicit"

    async def delete(client: Client) -> tuple[Any, Any, Any]:
        deleted = _structured(await client.call_tool("delete_memory", {"memory_id": memory_id}))
        after = await client.call_tool("get_memory", {"memory_id": memory_id})
        listed = _structured(await client.call_tool("list_memories", {}))
        return deleted, after, listed

    deleted, after, listed = _session(stack, uid, delete)
    assert memory_id in json.dumps(deleted)
    receipt = http.get(f"/v1/deletions/{deleted['receipt_id']}", headers=_auth(uid))  # the tool's receipt
    assert receipt.status_code == 200 and receipt.json()["memory_ids"] == deleted["deleted"], receipt.text
    assert "not_found" in _error_text(after) and listed["memories"] == []
    assert http.get(f"/v1/memories/{memory_id}", headers=_auth(uid)).status_code == 404


def test_search_memories_pages_with_a_cursor_bound_to_its_query(stack: dict[str, Any]) -> None:
    """Issue 46: ``search_memories`` pages as ``GET /v1/memories/hybrid-search`` does (docs/api.md):
    each page at most ``limit`` hits, ``next_cursor`` to the next, none after the last; the walk
    yields every match once; a cursor of another query is a ``bad_cursor`` tool error."""
    ctx, uid = Context(), _uid()
    facts = ["I keep bees in the orchard", "The bees swarmed in May", "I sell honey from the bees",
             "My neighbour is afraid of bees", "I bought a new hive for the bees"]

    async def create(client: Client) -> list[str]:
        return [_structured(await client.call_tool("create_memory", {"content": fact}))["id"] for fact in facts]

    made = _session(stack, uid, create)
    wait_for(lambda: {ids.provider_id(uid, m) for m in made} <= ctx.keyword_index.provider_ids(uid)
             and {ids.provider_id(uid, m) for m in made} <= ctx.vector_index.provider_ids(uid),
             timeout=120, interval=0.25, what="the five memories to be projected")

    async def walk(client: Client) -> tuple[list[dict[str, Any]], dict[str, Any], str, str]:
        pages, cursor = [], None
        while True:
            arguments: dict[str, Any] = {"query": "bees", "limit": 2, **({"cursor": cursor} if cursor else {})}
            page = _structured(await client.call_tool("search_memories", arguments))
            pages.append(page)
            cursor = page["next_cursor"]
            if cursor is None or len(pages) > len(facts):
                break
        whole = _structured(await client.call_tool("search_memories", {"query": "bees", "limit": 10}))
        second = pages[0]["next_cursor"]
        other = _error_text(await client.call_tool("search_memories", {"query": "honey", "cursor": second}))
        unknown = _error_text(await client.call_tool("search_memories", {"query": "bees", "cursor": "not-a-cursor"}))
        return pages, whole, other, unknown

    pages, whole, other, unknown = _session(stack, uid, walk)
    walked = [m["id"] for page in pages for m in page["memories"]]
    assert [len(page["memories"]) for page in pages] == [2, 2, 1]
    assert all(page["depth_limited"] is False for page in pages) and pages[-1]["next_cursor"] is None
    assert sorted(walked) == sorted(made) and len(set(walked)) == len(made)
    assert whole["next_cursor"] is None and sorted(m["id"] for m in whole["memories"]) == sorted(made)
    assert "bad_cursor" in other and "bad_cursor" in unknown


def test_a_wrong_token_gets_401_and_no_data(stack: dict[str, Any], http: httpx.Client) -> None:
    uid = _uid()
    secret = "My locker code is in the blue notebook"
    assert http.post("/v3/memories", json={"content": secret}, headers=_auth(uid)).status_code == 201
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "list_memories", "arguments": {}}}
    other_project = f"Bearer {emulator_token(uid, 'another-project')}"
    for authorization in (None, "Bearer not-a-token", other_project):
        headers = {"Accept": "application/json, text/event-stream"}
        if authorization:
            headers["Authorization"] = authorization
        response = http.post("/mcp", json=message, headers=headers)
        assert response.status_code == 401, response.text
        assert set(response.json()["error"]) == {"code", "message", "request_id"} and "notebook" not in response.text
        assert response.json()["error"]["request_id"] == response.headers["x-request-id"]
        assert response.headers["www-authenticate"] == (
            f'Bearer resource_metadata="{stack["api_url"]}/.well-known/oauth-protected-resource/mcp"')

    async def refused() -> None:
        async with _client(stack["api_url"] + "/mcp", {"Authorization": other_project}) as client:
            await client.call_tool("list_memories", {})

    with pytest.raises(Exception) as raised:  # noqa: B017 - whatever the SDK raises, nothing is answered
        anyio.run(refused)
    assert "notebook" not in str(raised.value)


@MODES
def test_another_users_memory_is_not_found(stack: dict[str, Any], http: httpx.Client, mode: str) -> None:
    ctx = Context()
    owner, other = _uid(), _uid()
    memory = http.post("/v3/memories", json={"content": "I am learning the cello"}, headers=_auth(owner)).json()

    async def probe(client: Client) -> tuple[Any, Any, list[str]]:
        got = await client.call_tool("get_memory", {"memory_id": memory["id"]})
        deleted = await client.call_tool("delete_memory", {"memory_id": memory["id"]})
        errors = []
        for uri in (f"strata://memories/{memory['id']}", f"strata://memories/{memory['id']}/history"):
            with pytest.raises(MCPError) as raised:
                await client.read_resource(uri)
            errors.append(str(raised.value))
        return got, deleted, errors

    got, deleted, errors = _session(stack, other, probe, mode)
    assert "not_found" in _error_text(got) and "not_found" in _error_text(deleted)
    assert all("cello" not in e for e in errors) and "cello" not in _error_text(got)
    assert http.get(f"/v1/memories/{memory['id']}", headers=_auth(owner)).json()["content"] == "I am learning the cello"
    assert user_doc_count(ctx, other) == 0


BAD_CALLS = [
    ("search_memories", {}),                                  # required argument missing
    ("search_memories", {"query": "tea", "limit": 0}),        # out of range
    ("search_memories", {"query": "   "}),                    # empty once collapsed: the service refuses
    ("list_memories", {"layer": "attic"}),                    # not an enum value
    ("list_memories", {"cursor": "not-a-cursor"}),            # a cursor this API never issued
    ("get_memory", {"memory_id": ".."}),                      # an id no document can have
    ("get_memory", {"memory_id": 42}),                        # wrong type
    ("create_memory", {"content": "x" * 9_000}),              # over the content limit
    ("create_memory", {"content": "tea", "visibility": "shared"}),
    ("delete_memory", {"memory_id": "__reserved__"}),
    ("restore_memory", {"memory_id": "__reserved__"}),
    ("no_such_tool", {}),
]


def test_bad_arguments_are_tool_errors_and_write_nothing(stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = _uid()

    async def body(client: Client) -> tuple[list[str], Any]:
        errors = [_error_text(await client.call_tool(name, arguments)) for name, arguments in BAD_CALLS]
        return errors, await client.call_tool("list_memories", {})  # the session still works

    errors, listed = _session(stack, uid, body)
    assert all(errors)
    assert "validation_error" in errors[2] and "bad_cursor" in errors[4] and "not_found" in errors[5]
    assert _structured(listed) == {"memories": [], "next_cursor": None}
    assert user_doc_count(ctx, uid) == 0


def test_what_is_not_an_mcp_message_is_a_4xx(stack: dict[str, Any], http: httpx.Client) -> None:
    uid = _uid()
    accept = {"Accept": "application/json, text/event-stream"}
    for method in ("GET", "DELETE", "PUT"):  # stateless: no stream to open, no session to end
        response = http.request(method, "/mcp", headers=_auth(uid))
        assert response.status_code == 405 and response.headers["allow"] == "POST", response.text
        assert response.json()["error"]["code"] == "method_not_allowed"
    too_big = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"a" * 1_100_000 + b'"}}'
    response = http.post("/mcp", content=too_big, headers={**_auth(uid), **accept, "Content-Type": "application/json"})
    assert response.status_code == 413 and response.json()["error"]["code"] == "payload_too_large"
    for body in (b"{not json", b"[]", b'{"jsonrpc": "2.0", "id": 1}', b'{"jsonrpc": "2.0", "id": 1, "method": 7}'):
        response = http.post("/mcp", content=body, headers={**_auth(uid), **accept, "Content-Type": "application/json"})
        assert 400 <= response.status_code < 500, (body, response.status_code, response.text)
    assert user_doc_count(Context(), uid) == 0


def test_writes_switched_off_are_tool_errors_that_write_nothing(stack: dict[str, Any], http: httpx.Client) -> None:
    """The incident switch holds MCP writes back like API writes (docs/configuration.md, incident switches)."""
    ctx = Context()
    uid = _uid()
    memory = http.post("/v3/memories", json={"content": "I keep bees on the roof"}, headers=_auth(uid)).json()
    before = user_documents(ctx, uid)
    switches = ctx.paths.global_controls()
    previous = switches.get()
    switches.set({controls.WRITES: True}, merge=True)
    try:
        async def body(client: Client) -> tuple[Any, Any, Any]:
            return (await client.call_tool("create_memory", {"content": "I keep goats"}),
                    await client.call_tool("delete_memory", {"memory_id": memory["id"]}),
                    await client.call_tool("get_memory", {"memory_id": memory["id"]}))

        created, deleted, kept = _session(stack, uid, body)
    finally:
        if previous.exists:
            switches.set(previous.to_dict())
        else:
            switches.delete()
    assert "writes_disabled" in _error_text(created) and "writes_disabled" in _error_text(deleted)
    assert _structured(kept)["content"] == "I keep bees on the roof"  # reads still answer
    assert_nothing_written(ctx, uid, before)
