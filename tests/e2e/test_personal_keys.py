"""Personal API keys on the running stack (issue 31's done-when): an MCP client session with a
personal key lists, searches, creates and deletes memories; a revoked key gets 401 on its next
call; a ``read`` key cannot create; a wiped account's key gets 401. The MCP endpoint's 401 names
its protected-resource metadata (``WWW-Authenticate: Bearer resource_metadata="..."``, RFC 9728),
checked against the ``mcp`` SDK's own model of that document."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
import pytest
from google.cloud.firestore_v1.base_query import FieldFilter
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import ProtectedResourceMetadata

from core.api.auth import emulator_token
from core.bootstrap import Context
from tests.e2e.test_mcp import _client, _error_text, _structured
from tests.support.firestore_checks import user_documents, wait_for

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
T = TypeVar("T")
CHALLENGE = re.compile(r'^Bearer resource_metadata="([^"]+)"$')
LIST_CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_memories", "arguments": {}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def _uid() -> str:
    return f"keys-{uuid.uuid4().hex[:12]}"


def _token(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _key(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def _create_key(http: httpx.Client, uid: str, scope: str, name: str = "agent") -> dict[str, Any]:
    answer = http.post("/v1/keys", json={"name": name, "scope": scope}, headers=_token(uid))
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def _session(stack: dict[str, Any], secret: str, body: Callable[[Client], Awaitable[T]]) -> T:
    async def run() -> T:
        async with _client(stack["api_url"] + "/mcp", _key(secret)) as client:
            return await body(client)

    return anyio.run(run)


def test_keys_are_created_listed_and_revoked_with_an_id_token_only(stack: dict[str, Any], http: httpx.Client) -> None:
    uid = _uid()
    created = _create_key(http, uid, "read+write", "desktop agent")
    secret = created["secret"]
    assert secret.startswith("strata_pk_")
    assert (created["name"], created["scope"], created["last_used_at"]) == ("desktop agent", "read+write", None)
    listed = http.get("/v1/keys", headers=_token(uid))
    assert listed.status_code == 200, listed.text
    [entry] = listed.json()["keys"]
    assert set(entry) == {"id", "name", "scope", "restricted", "created_at", "last_used_at"}
    assert entry["id"] == created["id"] and entry["restricted"] is False
    assert secret not in listed.text
    # Stored only as a hash: the secret is in no document of the user, nor in its lookup.
    ctx = Context()
    assert secret not in str(user_documents(ctx, uid))
    assert secret not in str([d.to_dict() for d in ctx.client.collection("api_key_hashes").stream()])
    # A key cannot manage keys, nor call the ID-token routes. (GET /v1/memories was one of them until
    # keys were accepted on /v1 within their scope, issue 45: tests/e2e/test_keys_on_v1.py.)
    for method, path, body in (("GET", "/v1/keys", None), ("POST", "/v1/keys", {"name": "x", "scope": "read"}),
                               ("DELETE", f"/v1/keys/{created['id']}", None), ("GET", "/v1/memories/export", None),
                               ("PUT", "/v1/users/developer/webhooks/memory_created",
                                {"url": "http://127.0.0.1:9/hook", "enabled": False}),
                               ("DELETE", "/v1/users/delete-account", None)):
        assert http.request(method, path, json=body, headers=_key(secret)).status_code == 401, (method, path)
    assert http.get("/v1/tools/memories", headers=_key(secret)).status_code == 200
    used = http.get("/v1/keys", headers=_token(uid)).json()["keys"][0]
    assert used["last_used_at"] is not None
    # Another user cannot revoke it; bad bodies are refused.
    assert http.delete(f"/v1/keys/{created['id']}", headers=_token(_uid())).status_code == 404
    for bad in ({"name": "x", "scope": "write"}, {"name": "", "scope": "read"}, {"scope": "read"},
                {"name": "x", "scope": "read", "secret": "mine"}):
        assert http.post("/v1/keys", json=bad, headers=_token(uid)).status_code == 400, bad
    revoked = http.delete(f"/v1/keys/{created['id']}", headers=_token(uid))
    # The key only read: its revoke lists no writes.
    nothing = {"commits": 0, "memory_ids": [], "conversation_ids": [], "truncated": False}
    assert revoked.status_code == 200 and revoked.json() == {"id": created["id"], "status": "revoked",
                                                             "written": nothing}
    assert http.get("/v1/keys", headers=_token(uid)).json()["keys"] == []
    assert http.get("/v1/tools/memories", headers=_key(secret)).status_code == 401
    assert http.delete(f"/v1/keys/{created['id']}", headers=_token(uid)).status_code == 404


def test_an_mcp_session_with_a_key_lists_searches_creates_and_deletes_then_revoked_gets_401(
        stack: dict[str, Any], http: httpx.Client) -> None:
    uid = _uid()
    secret = _create_key(http, uid, "read+write")["secret"]
    fact = "I keep a sourdough starter called Bubbles in the fridge"

    async def create(client: Client) -> tuple[Any, Any]:
        created = _structured(await client.call_tool("create_memory", {"content": fact}))
        listed = _structured(await client.call_tool("list_memories", {}))
        return created, listed

    created, listed = _session(stack, secret, create)
    assert created["content"] == fact and [m["id"] for m in listed["memories"]] == [created["id"]]
    # The memory belongs to the key's user: the REST API shows it under the user's ID token.
    assert http.get(f"/v1/memories/{created['id']}", headers=_token(uid)).json()["content"] == fact

    async def search(client: Client) -> list[str]:
        found = _structured(await client.call_tool("search_memories", {"query": "sourdough starter"}))
        return [m["id"] for m in found["memories"]]

    wait_for(lambda: created["id"] in _session(stack, secret, search), timeout=120, interval=0.5,
             what="the key's search to find the new memory")

    async def delete(client: Client) -> tuple[Any, Any]:
        deleted = _structured(await client.call_tool("delete_memory", {"memory_id": created["id"]}))
        return deleted, _structured(await client.call_tool("list_memories", {}))

    deleted, after = _session(stack, secret, delete)
    assert created["id"] in str(deleted) and after["memories"] == []
    assert http.get(f"/v1/memories/{created['id']}", headers=_token(uid)).status_code == 404

    key_id = http.get("/v1/keys", headers=_token(uid)).json()["keys"][0]["id"]
    assert http.delete(f"/v1/keys/{key_id}", headers=_token(uid)).status_code == 200
    refused = http.post("/mcp", json=LIST_CALL, headers={**MCP_HEADERS, **_key(secret)})
    assert refused.status_code == 401, refused.text
    assert CHALLENGE.match(refused.headers["www-authenticate"]), refused.headers["www-authenticate"]

    statuses: list[int] = []
    with pytest.raises(Exception):  # noqa: B017 - the SDK raises on the 401, whatever its class
        anyio.run(_session_async, stack, secret, statuses)
    assert statuses and statuses[-1] == 401, statuses


async def _session_async(stack: dict[str, Any], secret: str, statuses: list[int]) -> None:
    """An SDK session with the key, recording the HTTP status of every answer it gets."""
    async def record(response: Any) -> None:
        statuses.append(response.status_code)

    async with httpx2.AsyncClient(headers=_key(secret), timeout=60.0, event_hooks={"response": [record]}) as http, \
            Client(streamable_http_client(stack["api_url"] + "/mcp", http_client=http)) as client:
        await client.call_tool("list_memories", {})


def test_a_read_key_reads_but_cannot_create_or_delete(stack: dict[str, Any], http: httpx.Client) -> None:
    uid = _uid()
    kept = http.post("/v3/memories", json={"content": "My bike is a green Brompton"}, headers=_token(uid))
    assert kept.status_code == 201, kept.text
    memory_id = kept.json()["id"]
    secret = _create_key(http, uid, "read")["secret"]

    async def body(client: Client) -> tuple[Any, Any, Any]:
        listed = _structured(await client.call_tool("list_memories", {}))
        create = await client.call_tool("create_memory", {"content": "I own a red kayak"})
        delete = await client.call_tool("delete_memory", {"memory_id": memory_id})
        return listed, create, delete

    listed, create, delete = _session(stack, secret, body)
    assert [m["id"] for m in listed["memories"]] == [memory_id]
    assert "key_scope" in _error_text(create) and "key_scope" in _error_text(delete)
    # REST adapters: reads pass, writes are 403.
    assert http.get("/v1/mcp/memories", headers=_key(secret)).status_code == 200
    assert http.post("/v1/tools/memories/search", json={"query": "bike"}, headers=_key(secret)).status_code == 200
    for method, path, body_ in (("POST", "/v1/tools/memories", {"content": "I own a red kayak"}),
                                ("POST", "/v1/mcp/memories", {"content": "I own a red kayak"}),
                                ("DELETE", f"/v1/tools/memories/{memory_id}", None),
                                ("DELETE", f"/v1/mcp/memories/{memory_id}", None)):
        answer = http.request(method, path, json=body_, headers=_key(secret))
        assert answer.status_code == 403 and answer.json()["error"]["code"] == "key_scope", (path, answer.text)
    remaining = http.get("/v1/memories", headers=_token(uid)).json()["memories"]
    assert [m["id"] for m in remaining] == [memory_id]


def test_a_key_reads_its_owners_deletion_receipts_only(stack: dict[str, Any], http: httpx.Client) -> None:
    """``GET /v1/deletions/{id}`` takes a personal key (read scope): the owner's receipt is the one an
    ID token reads; another user's key, like another user's token, gets 404; a revoked key 401."""
    uid, other = _uid(), _uid()
    made = http.post("/v1/memories", json={"content": "My locker code is in the blue notebook"}, headers=_token(uid))
    assert made.status_code == 201, made.text
    deleted = http.delete(f"/v1/memories/{made.json()['id']}", headers=_token(uid))
    assert deleted.status_code == 200, deleted.text
    path = f"/v1/deletions/{deleted.json()['receipt_id']}"
    key = _create_key(http, uid, "read")
    by_key = http.get(path, headers=_key(key["secret"]))
    assert by_key.status_code == 200, by_key.text
    by_token = http.get(path, headers=_token(uid)).json()
    assert by_key.json()["receipt_id"] == by_token["receipt_id"] and by_key.json()["kind"] == "memory"
    assert by_key.json()["memory_ids"] == by_token["memory_ids"] == [made.json()["id"]]
    assert http.get(path, headers=_key(_create_key(http, uid, "read+write")["secret"])).status_code == 200
    stranger = http.get(path, headers=_key(_create_key(http, other, "read")["secret"]))
    assert stranger.status_code == 404 and stranger.json()["error"]["code"] == "not_found", stranger.text
    assert http.delete(f"/v1/keys/{key['id']}", headers=_token(uid)).status_code == 200
    assert http.get(path, headers=_key(key["secret"])).status_code == 401
    # The routes that take an ID token only still refuse a key (the other /v1 routes take one since
    # issue 45; this asserted a 401 on GET /v1/memories before).
    assert http.get("/v1/keys", headers=_key(_create_key(http, uid, "read")["secret"])).status_code == 401


def test_a_wiped_accounts_keys_get_401_and_their_lookup_documents_are_gone(
        stack: dict[str, Any], http: httpx.Client) -> None:
    uid = _uid()
    secrets = [_create_key(http, uid, scope)["secret"] for scope in ("read", "read+write")]
    assert http.get("/v1/tools/memories", headers=_key(secrets[0])).status_code == 200
    ctx = Context()
    lookups = ctx.client.collection("api_key_hashes").where(filter=FieldFilter("uid", "==", uid))
    assert len(list(lookups.stream())) == 2
    deadline = time.monotonic() + 120
    while (answer := http.delete("/v1/users/delete-account", headers=_token(uid))).status_code == 503:
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.2)
    assert answer.status_code == 200, answer.text
    for secret in secrets:
        assert http.get("/v1/tools/memories", headers=_key(secret)).status_code == 401
        assert http.post("/mcp", json=LIST_CALL, headers={**MCP_HEADERS, **_key(secret)}).status_code == 401
    assert list(lookups.stream()) == [] and not user_documents(ctx, uid)


def test_the_mcp_401_names_protected_resource_metadata_as_rfc_9728_describes(
        stack: dict[str, Any], http: httpx.Client) -> None:
    for authorization in (None, "Bearer strata_pk_unknown", f"Bearer strata_pk_{'x' * 43}"):
        headers = {**MCP_HEADERS, **({"Authorization": authorization} if authorization else {})}
        answer = http.post("/mcp", json=LIST_CALL, headers=headers)
        assert answer.status_code == 401, answer.text
        match = CHALLENGE.match(answer.headers["www-authenticate"])
        assert match, answer.headers["www-authenticate"]
    url = match.group(1)
    assert url == stack["api_url"] + "/.well-known/oauth-protected-resource/mcp"
    document = httpx.get(url, timeout=30)
    assert document.status_code == 200, document.text
    metadata = ProtectedResourceMetadata.model_validate(document.json())
    assert str(metadata.resource) == stack["api_url"] + "/mcp"
    assert metadata.bearer_methods_supported == ["header"]
    assert set(metadata.scopes_supported or []) == {"read", "read+write"}
    root = ProtectedResourceMetadata.model_validate(http.get("/.well-known/oauth-protected-resource").json())
    assert str(root.resource).rstrip("/") == stack["api_url"]


def test_writes_through_mcp_record_their_credential_and_a_keys_writes_list_them(
        stack: dict[str, Any], http: httpx.Client) -> None:
    """A write through ``/mcp`` records the credential that made it, as ``/v1`` does (issue 45): the
    personal key's id and the device its request named, or the user's ID token; the key's writes
    listing (what its revoke lists) names the memory it created and the one it deleted."""
    ctx, uid = Context(), _uid()
    key = _create_key(http, uid, "read+write")
    device = {"X-App-Platform": "web", "X-Device-Id-Hash": "0a1b2c3d"}

    async def by_token(client: Client) -> Any:
        return _structured(await client.call_tool("create_memory", {"content": "I play the oboe"}))

    async def by_key(client: Client) -> tuple[Any, Any]:
        made = _structured(await client.call_tool("create_memory", {"content": "I keep bees on the roof"}))
        gone = _structured(await client.call_tool("delete_memory", {"memory_id": first["id"]}))
        return made, gone

    async def run(headers: dict[str, str], body: Callable[[Client], Awaitable[T]]) -> T:
        async with _client(stack["api_url"] + "/mcp", headers) as client:
            return await body(client)

    first = anyio.run(run, _token(uid), by_token)
    head = ctx.client.document(f"users/{uid}/memory_state/apply_control").get().to_dict()["sequence"]
    created, _ = anyio.run(run, {**_key(key["secret"]), **device}, by_key)

    commits = sorted((s.to_dict() for s in ctx.client.collection(f"users/{uid}/memory_commits").stream()),
                     key=lambda c: c["sequence"])
    token_commits = [c for c in commits if c["sequence"] <= head]
    key_commits = [c for c in commits if c["sequence"] > head]
    assert token_commits and all(c.get("credential") == {"kind": "id_token"} for c in token_commits), token_commits
    by = {"kind": "personal_key", "key_id": key["id"], "device_id": "web_0a1b2c3d"}
    assert len(key_commits) >= 2 and all(c.get("credential") == by for c in key_commits), key_commits

    listed = http.get(f"/v1/keys/{key['id']}/writes", headers=_token(uid))
    assert listed.status_code == 200, listed.text
    written = listed.json()
    assert set(written["memory_ids"]) == {created["id"], first["id"]}, written
    assert written["commits"] == len(key_commits) and written["truncated"] is False
