"""The same memories through every surface, historical rows included (issue 14): `/v1`, `/v3`,
`/v1/mcp/memories`, `/v1/tools/memories` and the MCP server at `/mcp` (the SDK's own client) list,
search and get the same items for an account holding legacy rows and a canonical memory; a legacy
row deleted through the MCP server is then gone from every surface, the export and both indexes,
and its legacy document is removed; a locked row refuses a single delete on every surface."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx
import pytest
from mcp import Client

from core.bootstrap import Context
from core.domain import ids
from tests.e2e.test_mcp import _auth, _error_text, _session, _structured
from tests.integration.test_legacy_adapter import CELLO, SHOWN, seed
from tests.support.firestore_checks import wait_for

pytestmark = pytest.mark.e2e
CANONICAL = "I keep three beehives behind the allotment shed"


def _listed(http: httpx.Client, uid: str) -> dict[str, set[str]]:
    """Every REST surface's listing of the account, as ids."""
    headers = _auth(uid)
    tools = http.get("/v1/tools/memories", headers=headers).json()
    assert not tools["is_error"], tools
    exported = {json.loads(line)["id"] for line in http.get("/v1/memories/export", headers=headers).text.splitlines()
                if json.loads(line)["kind"] == "memory"}
    return {
        "v1": {m["id"] for m in http.get("/v1/memories", params={"limit": 100}, headers=headers).json()["memories"]},
        "v3": {m["id"] for m in http.get("/v3/memories", headers=headers).json()},
        "v1_mcp": {m["id"] for m in http.get("/v1/mcp/memories", headers=headers).json()},
        "tools": set(re.findall(r"\bid ([^)\s,]+)\)", tools["result_text"])),
        "export": exported,
    }


def _mcp_listed(stack: dict[str, Any], uid: str) -> set[str]:
    async def body(client: Client) -> Any:
        return _structured(await client.call_tool("list_memories", {"limit": 100}))

    return {m["id"] for m in _session(stack, uid, body)["memories"]}


def test_every_surface_returns_the_same_memories_legacy_rows_included(stack: dict[str, Any],
                                                                       http: httpx.Client) -> None:
    ctx = Context()
    uid = f"parity-{uuid.uuid4().hex[:12]}"
    seed(ctx, uid)
    created = http.post("/v3/memories", json={"content": CANONICAL}, headers=_auth(uid))
    assert created.status_code == 201, created.text
    canonical_id = created.json()["id"]
    wait_for(lambda: ids.provider_id(uid, canonical_id) in ctx.keyword_index.provider_ids(uid),
             timeout=60, interval=0.25, what="the canonical memory to be projected")

    expected = SHOWN | {canonical_id}  # the dated legacy rows the list order reaches, and the new memory
    listed = _listed(http, uid)
    assert listed["v1"] == listed["v3"] == listed["v1_mcp"] == listed["tools"] == expected, listed
    assert listed["export"] == expected | {"leg-nodate"}  # the export also holds the undated row
    assert _mcp_listed(stack, uid) == expected

    async def reads(client: Client) -> dict[str, Any]:
        ghent = await client.call_tool("search_memories", {"query": "Where did I live, Ghent?"})
        bees = await client.call_tool("search_memories", {"query": "beehives allotment"})
        cello = await client.call_tool("get_memory", {"memory_id": "leg-cello"})
        return {"ghent": _structured(ghent), "bees": _structured(bees), "cello": _structured(cello)}

    got = _session(stack, uid, reads)
    for query, top in (("Where did I live, Ghent?", "leg-ghent"), ("beehives allotment", canonical_id)):
        rest = http.get("/v1/mcp/memories", params={"q": query}, headers=_auth(uid)).json()
        mcp_ids = [m["id"] for m in got["ghent" if top == "leg-ghent" else "bees"]["memories"]]
        assert mcp_ids[:1] == [m["id"] for m in rest][:1] == [top], (query, mcp_ids, rest)
        # /v1/tools/memories searches with q, as the tool adapter's search does
        tools = http.get("/v1/tools/memories", params={"q": query}, headers=_auth(uid)).json()
        assert tools["tool_name"] == "search_memories" and not tools["is_error"], tools
        assert re.findall(r"\bid ([^)\s,]+)\)", tools["result_text"])[:1] == [top], tools
        v1 = http.get("/v1/memories/hybrid-search", params={"q": query}, headers=_auth(uid)).json()
        assert [m["id"] for m in v1["memories"]][:1] == [top], v1
    assert got["cello"] == http.get("/v1/memories/leg-cello", headers=_auth(uid)).json()
    assert got["cello"]["content"] == CELLO

    # A locked historical row refuses a single delete everywhere (402 on REST, a tool error on MCP).
    assert http.delete("/v3/memories/leg-cello", headers=_auth(uid)).status_code == 402
    assert http.delete("/v1/memories/leg-cello", headers=_auth(uid)).status_code == 402

    async def delete(client: Client) -> tuple[str, Any]:
        locked = _error_text(await client.call_tool("delete_memory", {"memory_id": "leg-cello"}))
        return locked, _structured(await client.call_tool("delete_memory", {"memory_id": "leg-ghent"}))

    locked, deleted = _session(stack, uid, delete)
    assert "locked" in locked and "leg-ghent" in json.dumps(deleted)
    listed = _listed(http, uid)
    for surface, seen in {**listed, "mcp": _mcp_listed(stack, uid)}.items():
        assert "leg-ghent" not in seen and "leg-cello" in seen, (surface, seen)
    assert http.get("/v1/memories/leg-ghent", headers=_auth(uid)).status_code == 404
    assert not ctx.paths.doc(uid, "memories", "leg-ghent").get().exists  # the legacy row itself is gone
    provider_id = ids.provider_id(uid, "leg-ghent")
    assert provider_id not in ctx.keyword_index.provider_ids(uid)
    assert provider_id not in ctx.vector_index.provider_ids(uid)
    search = http.get("/v1/memories/hybrid-search", params={"q": "Ghent"}, headers=_auth(uid)).json()
    assert "leg-ghent" not in {m["id"] for m in search["memories"]}
