"""A read by id answers what the default read shows (issue 27, point 15).

The spec's default read shows active, processed Short-term and Long-term items and collapses a
lineage to one row (an alias or a superseded item is folded into its survivor); a pending or blocked
item is not shown. ``GET /v1/memories/{id}`` (and the MCP server's ``get_memory``) must not hand back
such an item as if it were a memory like any other: an alias answers the row the list shows for its
lineage, and an unprocessed item answers 404 with a code that says why (``memory_pending``).
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain.records import MemoryItem
from core.services import intake

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"


def _uid() -> str:
    return f"byid-{uuid.uuid4().hex[:12]}"


def _auth(uid: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}", **extra}


def _stored(ctx: Context, uid: str, memory_id: str) -> MemoryItem:
    return MemoryItem.from_store(ctx.paths.doc(uid, "memory_items", memory_id).get().to_dict() or {})


def _mcp_get(stack: dict[str, Any], uid: str, memory_id: str) -> Any:
    async def run() -> Any:
        async with httpx2.AsyncClient(headers=_auth(uid), timeout=60.0) as client, \
                Client(streamable_http_client(stack["api_url"] + "/mcp", http_client=client)) as mcp:
            return await mcp.call_tool("get_memory", {"memory_id": memory_id})

    return anyio.run(run)


def test_an_alias_answers_the_survivor_the_list_shows(stack: dict[str, Any], http: httpx.Client, ctx: Context) -> None:
    uid = _uid()
    fact = "I take my coffee with oat milk"
    made = []
    for key in ("first", "second"):  # the same fact asserted twice: two Short-term items
        response = http.post("/v3/memories", json={"content": fact}, headers=_auth(uid, **{"Idempotency-Key": key}))
        assert response.status_code == 201, response.text
        made.append(response.json()["id"])
    assert made[0] != made[1]
    passed = httpx.post(stack["consolidate_url"], json={"uid": uid}, timeout=120)
    assert passed.status_code == 200, passed.text

    stored = {mid: _stored(ctx, uid, mid) for mid in made}
    aliases = [i for i in stored.values() if i.status == "superseded"]
    assert len(aliases) == 1, [(i.id, i.status, i.canonical_memory_id) for i in stored.values()]
    [alias] = aliases
    listed = http.get("/v1/memories", headers=_auth(uid)).json()["memories"]
    assert [m["content"] for m in listed] == [fact]  # the default read: one row for the lineage
    [shown] = listed
    assert shown["id"] != alias.id

    for memory_id in made:
        one = http.get(f"/v1/memories/{memory_id}", headers=_auth(uid))
        assert one.status_code == 200, one.text
        assert one.json() == shown, memory_id  # the alias answers the row the list shows
        result = _mcp_get(stack, uid, memory_id)
        assert not result.is_error and result.structured_content["id"] == shown["id"], result.content
    # The history is the item's own (a read of the ledger, not of the default view).
    commits = http.get(f"/v1/memories/{alias.id}/history", headers=_auth(uid)).json()["commits"]
    assert commits and commits[-1]["status"] == "superseded"


def test_an_unprocessed_memory_says_so(stack: dict[str, Any], http: httpx.Client, ctx: Context,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """An explicit create whose processing step did not run leaves a pending Short-term item (today
    both steps commit in one transaction; an earlier version ran them as two, and a request that
    died between them left such an item): the list hides it, and the read by id says so."""
    uid = _uid()
    step = intake.process_step  # the processing step, told not to run
    monkeypatch.setattr(intake, "process_step",
                        lambda *args, **kwargs: step(*args, **{**kwargs, "when": lambda _results: False}))
    [item] = intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I sing in a choir")])
    monkeypatch.undo()
    assert (item.layer, item.status, item.processing_state) == ("short_term", "active", "pending")

    assert http.get("/v1/memories", headers=_auth(uid)).json()["memories"] == []
    one = http.get(f"/v1/memories/{item.id}", headers=_auth(uid))
    assert one.status_code == 404, one.text
    assert one.json()["error"]["code"] == "memory_pending"
    assert "I sing" not in one.text
    result = _mcp_get(stack, uid, item.id)
    assert result.is_error and "memory_pending" in result.content[0].text

    intake.process_pending(ctx, uid, [item.id])  # processing completes: now the default read shows it
    listed = http.get("/v1/memories", headers=_auth(uid)).json()["memories"]
    assert [m["id"] for m in listed] == [item.id]
    assert http.get(f"/v1/memories/{item.id}", headers=_auth(uid)).json() == listed[0]
