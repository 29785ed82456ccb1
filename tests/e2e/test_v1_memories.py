"""The ``/v1`` memory writes over HTTP (issue 31): a JSON edit whose content is refused writes
nothing, not even its metadata fields; an empty edit is a 400; a search cursor is bound to its
query; the review queue pages; delete-all answers what the service counts and leaves the list
empty. Expectations come from docs/api.md."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from core.bootstrap import Context
from strata_dev.localstack.tokens import emulator_token
from tests.support.firestore_checks import canonical_snapshot, wait_for

pytestmark = pytest.mark.e2e


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid)}"}


def test_a_refused_json_edit_writes_nothing(stack: dict[str, Any], http: httpx.Client) -> None:
    ctx, uid = Context(), f"v1-edit-{uuid.uuid4().hex[:12]}"
    made = http.post("/v1/memories", json={"content": "I walk by the river every morning"}, headers=_auth(uid))
    assert made.status_code == 201, made.text
    memory = made.json()
    assert "is_locked" not in memory and memory["visibility"] == "private"
    before = canonical_snapshot(ctx, uid)  # projection bookkeeping may change meanwhile; this may not
    refused = http.patch(f"/v1/memories/{memory['id']}", headers=_auth(uid),
                         json={"content": "my bank password is hunter22", "visibility": "public", "reviewed": True})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "secret_content", refused.text
    assert canonical_snapshot(ctx, uid) == before
    empty = http.patch(f"/v1/memories/{memory['id']}", headers=_auth(uid), json={})
    assert empty.status_code == 400 and empty.json()["error"]["code"] == "validation_error"
    assert http.get(f"/v1/memories/{memory['id']}", headers=_auth(uid)).json() == memory


def test_search_and_review_cursors(stack: dict[str, Any], http: httpx.Client) -> None:
    uid = f"v1-pages-{uuid.uuid4().hex[:12]}"
    contents = ["I keep bees in the orchard", "The bees swarmed in May", "I sell honey from the bees"]
    made = http.post("/v1/memories/batch", json={"memories": [{"content": c} for c in contents]}, headers=_auth(uid))
    assert made.status_code == 201, made.text
    ids = {m["id"] for m in made.json()["memories"]}

    def first_page() -> dict[str, Any] | None:
        page = http.get("/v1/memories/search", params={"q": "bees", "limit": 2}, headers=_auth(uid)).json()
        return page if page["next_cursor"] else None

    page = wait_for(first_page, timeout=120, interval=0.3, what="three keyword hits for bees")
    assert page is not None and len(page["memories"]) == 2 and page["depth_limited"] is False
    rest = http.get("/v1/memories/search", params={"q": "bees", "limit": 2, "cursor": page["next_cursor"]},
                    headers=_auth(uid)).json()
    assert rest["next_cursor"] is None and rest["depth_limited"] is False
    assert {m["id"] for m in page["memories"] + rest["memories"]} == ids
    other = http.get("/v1/memories/search", params={"q": "honey", "cursor": page["next_cursor"]}, headers=_auth(uid))
    assert other.status_code == 400 and other.json()["error"]["code"] == "bad_cursor"
    reviews = http.get("/v1/review-queue", params={"limit": 1}, headers=_auth(uid))
    assert reviews.status_code == 200
    assert reviews.json() == {"reviews": [], "next_cursor": None, "depth_limited": False}

    wiped = http.delete("/v1/memories", headers=_auth(uid))
    assert wiped.status_code == 200 and wiped.json()["deleted"] == len(contents), wiped.text
    assert http.get("/v1/memories", headers=_auth(uid)).json()["memories"] == []
