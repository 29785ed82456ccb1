"""Items in review are never stranded (issue 27, point 8), on the whole local stack.

The spec: every pending item is conserved through one terminal consolidation route, and canonical
review ids include the source item revision, which resolution validates. So a revision of an item
waiting in review that is not a content edit (visibility, the user's review flag, category) must
leave it answerable: the queue lists one entry for it, named by its *current* revision, with its
text; resolving that entry settles the item; the entry of the earlier revision answers 409
``stale_review`` and changes nothing; and an unanswered entry still expires into Archive (the review
route's non-durable outcome) after its deadline, which a metadata edit does not extend.

A memory reaches review the way a user's memories do: "I love jazz records" is promoted first, then
"I hate jazz records" is created and a per-user pass (the consolidate function, as Cloud Tasks
calls it) routes the like/dislike flip to review.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import review_queue
from core.domain.records import MemoryItem
from core.services import consolidation, edits
from tests.support.firestore_checks import (
    all_docs,
    assert_all_items_legal,
    assert_ledger_gapless,
    assert_nothing_written,
    user_documents,
)

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
LIKE, DISLIKE = "I love jazz records", "I hate jazz records"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _consolidate(stack: dict[str, Any], uid: str) -> dict[str, Any]:
    response = httpx.post(stack["consolidate_url"], json={"uid": uid}, timeout=120)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _item(ctx: Context, uid: str, memory_id: str) -> MemoryItem:
    snap = ctx.paths.doc(uid, "memory_items", memory_id).get()
    assert snap.exists
    return MemoryItem.from_store(snap.to_dict())


def _queue(http: httpx.Client, uid: str) -> list[dict[str, Any]]:
    response = http.get("/v3/memories/review-queue", headers=_auth(uid))
    assert response.status_code == 200, response.text
    return list(response.json()["reviews"])


def _resolve(http: httpx.Client, uid: str, review_id: str, decision: str) -> httpx.Response:
    return http.post(f"/v3/memories/review-queue/{quote(review_id, safe='')}/resolve", headers=_auth(uid),
                     json={"decision": decision})


def _in_review(http: httpx.Client, stack: dict[str, Any], uid: str) -> str:
    """A memory waiting in review (its id)."""
    liked = http.post("/v3/memories", headers=_auth(uid), json={"content": LIKE})
    assert liked.status_code == 201, liked.text
    assert _consolidate(stack, uid)["routes"] == {"promote": 1}
    created = http.post("/v3/memories", headers=_auth(uid), json={"content": DISLIKE})
    assert created.status_code == 201, created.text
    summary = _consolidate(stack, uid)
    assert summary["routes"] == {"review": 1}, summary
    return str(created.json()["id"])


def _one_entry_for_the_current_revision(http: httpx.Client, ctx: Context, uid: str, memory_id: str
                                        ) -> dict[str, Any]:
    [entry] = _queue(http, uid)
    item = _item(ctx, uid, memory_id)
    assert entry["memory_id"] == memory_id and entry["content"] == DISLIKE
    assert f":r{item.revision}:" in entry["review_id"], (entry["review_id"], item.revision)
    assert item.layer == "short_term" and item.status == "active"
    return entry


def test_metadata_edits_of_an_item_in_review_keep_it_answerable(http: httpx.Client, stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = f"rvr-{uuid.uuid4().hex[:12]}"
    memory_id = _in_review(http, stack, uid)
    first = _one_entry_for_the_current_revision(http, ctx, uid, memory_id)
    entries = [first]
    path = f"/v3/memories/{memory_id}"
    for method, url, value in (("PATCH", f"{path}/visibility", "public"), ("POST", f"{path}/review", "false")):
        response = http.request(method, url, params={"value": value}, headers=_auth(uid))
        assert response.status_code == 200, (url, response.text)
        entry = _one_entry_for_the_current_revision(http, ctx, uid, memory_id)
        assert entry["review_id"] not in {e["review_id"] for e in entries}
        assert entry["expires_at"] == first["expires_at"], "a metadata edit does not extend the review's deadline"
        entries.append(entry)
    edits.set_category(ctx, uid, memory_id, "workflow")  # no HTTP route re-files a memory; the service does
    current = _one_entry_for_the_current_revision(http, ctx, uid, memory_id)
    # A pass does not route an item that waits for the user.
    assert _consolidate(stack, uid)["routes"] == {}
    before = user_documents(ctx, uid)
    for stale in entries:
        refused = _resolve(http, uid, stale["review_id"], "accept")
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "stale_review", refused.text
    assert_nothing_written(ctx, uid, before)
    accepted = _resolve(http, uid, current["review_id"], "accept")
    assert accepted.status_code == 200, accepted.text
    item = _item(ctx, uid, memory_id)
    assert (item.layer, item.status, item.visibility, item.category) == ("long_term", "active", "public", "workflow")
    assert _queue(http, uid) == []
    rows = all_docs(ctx, uid, "memory_review_queue").values()
    assert sorted(r["status"] for r in rows) == ["resolved"] + ["superseded"] * len(entries)
    assert all(r["content"] == "" for r in rows if r["status"] == "superseded"), "a closed entry keeps no text"
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)


def test_an_edited_item_in_review_still_expires_into_archive(http: httpx.Client, stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = f"rvx-{uuid.uuid4().hex[:12]}"
    memory_id = _in_review(http, stack, uid)
    response = http.patch(f"/v3/memories/{memory_id}/visibility", params={"value": "public"}, headers=_auth(uid))
    assert response.status_code == 200, response.text
    entry = _one_entry_for_the_current_revision(http, ctx, uid, memory_id)
    # Before the deadline nothing expires; after it (a clock 72 h and a minute on) the item settles.
    assert consolidation.expire_reviews(ctx, uid) == 0
    later = Context(clock=lambda: ctx.now() + review_queue.REVIEW_TTL + timedelta(minutes=1))
    assert consolidation.expire_reviews(later, uid) == 1
    item = _item(ctx, uid, memory_id)
    assert (item.layer, item.status, item.route) == ("archive", "active", "archive")
    rows = all_docs(ctx, uid, "memory_review_queue")
    assert [r["status"] for r in rows.values() if r["review_id"] == entry["review_id"]] == ["expired"]
    assert _queue(http, uid) == []
    listed = http.get("/v1/memories", headers=_auth(uid)).json()["memories"]
    assert [m["content"] for m in listed] == [LIKE], "Archive is not default-visible"
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)
