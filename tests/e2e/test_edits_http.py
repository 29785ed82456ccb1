"""Edits of Long-term memories over HTTP, on the whole local stack (issue 12).

A memory is created through the API and consolidated to Long-term the way Cloud Tasks runs a
per-user pass (``POST {"uid"}`` to the consolidate function). Then every edit the API offers is
applied to it: visibility and the user's review flag keep it in Long-term as a new revision whose
admission receipt and graph assertion are re-issued for that revision (legal per docs/data-model.md, the receipt
validates); a content edit sends it back to Short-term without receipt or assertion, processed
in the edit's own request as an explicit create is (issue 27), so it stays listed — and searchable —
with its new words, never the old ones, while consolidation re-admits it.
No edit answers a 5xx. Content longer than the one configured limit (``STRATA_MAX_CONTENT_CHARS``,
8,000 on the stack) is refused with a 400 that writes nothing, on every HTTP path that writes content.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import ids
from core.domain.admission import receipt_problems
from core.domain.records import MemoryItem
from tests.support.firestore_checks import (
    assert_all_items_legal,
    assert_ledger_gapless,
    assert_nothing_written,
    user_documents,
    wait_for,
)

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
LIMIT = 8_000  # the stack runs with the default STRATA_MAX_CONTENT_CHARS


def _uid() -> str:
    return f"lte-{uuid.uuid4().hex[:12]}"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _item(ctx: Context, uid: str, memory_id: str) -> MemoryItem:
    snap = ctx.paths.doc(uid, "memory_items", memory_id).get()
    assert snap.exists
    return MemoryItem.from_store(snap.to_dict())


def _assertion(ctx: Context, uid: str, memory_id: str) -> dict[str, Any] | None:
    snap = ctx.paths.doc(uid, "memory_graph_assertions", memory_id).get()
    return snap.to_dict() if snap.exists else None


def _consolidate(stack: dict[str, Any], uid: str) -> dict[str, Any]:
    response = httpx.post(stack["consolidate_url"], json={"uid": uid}, timeout=120)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _assert_admitted(ctx: Context, uid: str, memory_id: str) -> MemoryItem:
    item = _item(ctx, uid, memory_id)
    assert (item.layer, item.status, item.processing_state) == ("long_term", "active", "processed")
    assertion = _assertion(ctx, uid, memory_id)
    assert receipt_problems(item, assertion) == []
    assert assertion is not None
    receipt = (item.promotion or {})["admission_receipt"]
    # Bound to this very revision and content (recomputed here, not read from the code under test).
    assert receipt["revision"] == item.revision == assertion["revision"]
    assert receipt["content_hash"] == ids.content_hash(item.content) == assertion["content_hash"]
    assert receipt["commit_id"] == item.ledger_commit_id == assertion["source_commit_id"]
    return item


def _long_term_memory(http: httpx.Client, stack: dict[str, Any], uid: str, contents: list[str]) -> list[str]:
    created = http.post("/v3/memories/batch", headers=_auth(uid), json={"memories": [{"content": c} for c in contents]})
    assert created.status_code == 201, created.text
    memory_ids = [m["id"] for m in created.json()["memories"]]
    summary = _consolidate(stack, uid)
    assert summary["routes"] == {"promote": len(contents)}, summary
    for memory_id in memory_ids:
        body = http.get(f"/v1/memories/{memory_id}", headers=_auth(uid)).json()
        assert body["layer"] == "long_term"
    return memory_ids


def test_metadata_edits_of_a_long_term_memory_are_legal_revisions(http: httpx.Client, stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = _uid()
    [memory_id] = _long_term_memory(http, stack, uid, ["I keep bees on my roof"])
    before = _assert_admitted(ctx, uid, memory_id)
    path = f"/v3/memories/{memory_id}"
    steps = [("PATCH", f"{path}/visibility", "public", ("visibility", "public")),
             ("POST", f"{path}/review", "false", ("user_review", False)),
             ("POST", f"{path}/review", "true", ("user_review", True)),
             ("PATCH", f"{path}/visibility", "private", ("visibility", "private"))]
    revision = before.revision
    for method, url, value, (field, expected) in steps:
        response = http.request(method, url, params={"value": value}, headers=_auth(uid))
        assert response.status_code == 200, (url, value, response.text)
        body = response.json()
        assert body["layer"] == "long_term" and body[field] == expected
        item = _assert_admitted(ctx, uid, memory_id)
        assert item.revision == revision + 1  # one edit, one revision
        revision = item.revision
        assert getattr(item, field) == expected and item.content == before.content
    assert item.reviewed is True
    assert_all_items_legal(ctx, uid)
    commits = assert_ledger_gapless(ctx, uid)
    assert [c["kind"] for c in commits][-4:] == ["edit.visibility", "edit.user_review", "edit.user_review",
                                                 "edit.visibility"]
    # Every edit commit wrote the re-issued assertion with the item.
    assert all(c["doc_writes"] == [f"memory_graph_assertions/{memory_id}"] for c in commits[-4:])
    # The memory stays projected (the providers converge on its current state).
    provider = ids.provider_id(uid, memory_id)
    wait_for(lambda: provider in ctx.keyword_index.provider_ids(uid) and provider in ctx.vector_index.provider_ids(uid),
             timeout=60, interval=0.25, what="the memory to stay projected")
    hits = http.get("/v1/memories/search", params={"q": "bees"}, headers=_auth(uid)).json()["memories"]
    assert [h["id"] for h in hits] == [memory_id]


def test_content_edit_of_a_long_term_memory_is_a_readmission(http: httpx.Client, stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = _uid()
    [memory_id] = _long_term_memory(http, stack, uid, ["I restore antique gramophones"])
    provider = ids.provider_id(uid, memory_id)

    def projected() -> bool:
        return provider in ctx.keyword_index.provider_ids(uid) and provider in ctx.vector_index.provider_ids(uid)

    wait_for(projected, timeout=60, interval=0.25, what="the Long-term memory to be projected")

    edited = http.patch(f"/v3/memories/{memory_id}", params={"value": "I restore vintage typewriters"},
                        headers=_auth(uid))
    assert edited.status_code == 200, edited.text
    assert edited.json()["layer"] == "short_term" and edited.json()["edited"] is True
    # Issue 27: the owner's list shows the memory with its new words as soon as the edit answered
    # (the spec's default read: eligible Short-term + Long-term), not only after a later pass.
    listed = http.get("/v1/memories", headers=_auth(uid)).json()["memories"]
    assert [(m["id"], m["content"], m["layer"]) for m in listed] == [
        (memory_id, "I restore vintage typewriters", "short_term")]
    assert http.get(f"/v1/memories/{memory_id}", headers=_auth(uid)).json()["content"] == \
        "I restore vintage typewriters"
    assert [m["content"] for m in http.get("/v3/memories", headers=_auth(uid)).json()] == [
        "I restore vintage typewriters"]
    item = _item(ctx, uid, memory_id)
    assert (item.layer, item.status, item.processing_state) == ("short_term", "active", "processed")
    assert item.pending_route and item.route is None  # consolidation owes it its terminal route
    assert item.promotion is None and not item.graph_ready and item.graph_assertion_id is None
    assert _assertion(ctx, uid, memory_id) is None
    # Flags on the unadmitted item are ordinary revisions too.
    assert http.post(f"/v3/memories/{memory_id}/review", params={"value": "true"},
                     headers=_auth(uid)).status_code == 200

    def new_words_only() -> bool:
        found = ctx.keyword_index.search(uid, "typewriters", layers=["short_term", "long_term"], limit=5)
        old = ctx.keyword_index.search(uid, "gramophones", layers=["short_term", "long_term"], limit=5)
        return [h.memory_id for h in found] == [memory_id] and not old

    wait_for(new_words_only, timeout=60, interval=0.25, what="the projection to hold the new words only")
    hits = http.get("/v1/memories/search", params={"q": "typewriters"}, headers=_auth(uid)).json()["memories"]
    assert [h["id"] for h in hits] == [memory_id]
    assert http.get("/v1/memories/search", params={"q": "gramophones"}, headers=_auth(uid)).json()["memories"] == []

    summary = _consolidate(stack, uid)
    assert summary["routes"] == {"promote": 1}, summary
    readmitted = _assert_admitted(ctx, uid, memory_id)
    assert readmitted.content == "I restore vintage typewriters" and readmitted.user_review is True
    listed = http.get("/v1/memories", headers=_auth(uid)).json()["memories"]
    assert [(m["id"], m["content"], m["layer"]) for m in listed] == [
        (memory_id, "I restore vintage typewriters", "long_term")]
    # Projected before, so the wait is on the re-admitted (Long-term) revision in both providers.
    vector = ctx.embedder.embed(["I restore vintage typewriters"])[0]

    def readmission_projected() -> bool:
        keyword = ctx.keyword_index.search(uid, "typewriters", layers=["long_term"], limit=5)
        vectors = ctx.vector_index.search(uid, vector, layers=["long_term"], limit=5)
        return [h.memory_id for h in keyword] == [memory_id] == [h.memory_id for h in vectors]

    wait_for(readmission_projected, timeout=60, interval=0.25, what="the re-admitted memory to be projected")
    assert ctx.keyword_index.search(uid, "gramophones", layers=["short_term", "long_term"], limit=5) == []
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)


def _words(n: int) -> str:
    text = ("I keep notes on birds " * (n // 20 + 1))[:n]
    return text[:-1] + "x"  # no trailing space: the stored (whitespace-collapsed) length is n


def test_content_over_the_limit_is_refused_everywhere_and_writes_nothing(http: httpx.Client,
                                                                         stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = _uid()
    [memory_id] = _long_term_memory(http, stack, uid, ["I collect sea glass"])
    wait_for(lambda: ids.provider_id(uid, memory_id) in ctx.keyword_index.provider_ids(uid), timeout=60,
             interval=0.25, what="the first projection")
    too_long = _words(LIMIT + 1)
    assert len(" ".join(too_long.split())) == LIMIT + 1
    before = user_documents(ctx, uid)
    for method, url, kwargs in [
        ("POST", "/v3/memories", {"json": {"content": too_long}}),
        ("POST", "/v3/memories/batch", {"json": {"memories": [{"content": "I like plums"}, {"content": too_long}]}}),
        ("PATCH", f"/v3/memories/{memory_id}", {"params": {"value": too_long}}),
    ]:
        response = http.request(method, url, headers=_auth(uid), **kwargs)
        assert response.status_code == 400, (url, response.status_code, response.text)
        assert response.json()["error"]["code"] == "validation_error"
        assert str(LIMIT) in response.json()["error"]["message"]
    assert_nothing_written(ctx, uid, before)
    at_limit = http.post("/v3/memories", headers=_auth(uid), json={"content": _words(LIMIT)})
    assert at_limit.status_code == 201, at_limit.text
    assert len(at_limit.json()["content"]) == LIMIT


def test_review_correction_over_the_limit_is_refused_then_a_correction_is_admitted(
        http: httpx.Client, stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = _uid()
    _long_term_memory(http, stack, uid, ["I love jazz records"])
    created = http.post("/v3/memories", headers=_auth(uid), json={"content": "I hate jazz records"})
    assert created.status_code == 201, created.text
    memory_id = created.json()["id"]
    summary = _consolidate(stack, uid)
    assert summary["routes"] == {"review": 1}, summary  # a like/dislike flip asks the user
    [entry] = http.get("/v3/memories/review-queue", headers=_auth(uid)).json()["reviews"]
    assert entry["memory_id"] == memory_id
    resolve = f"/v3/memories/review-queue/{entry['review_id']}/resolve"
    before = user_documents(ctx, uid)
    refused = http.post(resolve, headers=_auth(uid), json={"decision": "correct", "correction": _words(LIMIT + 1)})
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "validation_error"
    assert_nothing_written(ctx, uid, before)
    corrected = http.post(resolve, headers=_auth(uid),
                          json={"decision": "correct", "correction": "I used to hate jazz records"})
    assert corrected.status_code == 200, corrected.text
    item = _assert_admitted(ctx, uid, memory_id)
    assert item.content == "I used to hate jazz records" and item.user_review is True
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)
