"""The review queue: consolidation's ``review`` route asks the user, who accepts, rejects or corrects.

Items reach the queue through the real path (explicit intake, then a consolidation pass whose
router proposes ``review``). Resolution is checked in the service (on an isolated Firestore project
so the stack's scheduled fan-out cannot route the items first) and over HTTP against the stack's
``api`` function: accept and correct admit to Long-term with a valid receipt, reject hides without
ever reaching Long-term, a stale revision fails with ``stale_review`` and changes nothing, and a
second resolution is ``already_resolved``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import ids, review_queue
from core.domain.routing import RouteCandidate, RouteProposal
from core.errors import Conflict, NotFound
from core.services import consolidation, edits, review
from tests.integration.test_consolidation_properties import (
    all_items,
    assert_store_sound,
    create,
    docs,
    isolated_context,
    new_uid,
)
from tests.support.firestore_checks import canonical_snapshot

pytestmark = pytest.mark.integration
PROJECT = "demo-strata"


class ReviewAll:
    router_id, router_version = "review-all", "1"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        return [RouteProposal(c.ref, "review", "please decide") for c in candidates]


def to_review(ctx: Context, uid: str, contents: list[str]) -> dict[str, str]:
    """content → review id, for fresh items routed to review."""
    create(ctx, uid, contents)
    summary = consolidation.run_pass(ctx, uid, router=ReviewAll())
    assert summary["routes"] == {"review": len(contents)}
    items = {i.content: i for i in all_items(ctx, uid).values()}
    out = {}
    for content in contents:
        item = items[content]
        assert item.route == "review" and item.layer == "short_term" and item.review_id
        assert item.review_id == ids.review_id(item.id, item.revision)
        out[content] = item.review_id
    return out


def long_term_ever(ctx: Context, uid: str, memory_id: str) -> bool:
    return any(change["memory_id"] == memory_id and change["layer"] == "long_term"
               for commit in docs(ctx, uid, "memory_commits").values() for change in commit["changes"])


# ------------------------------------------------------------------------------------ the service
@pytest.fixture
def ctx(stack: dict[str, Any]) -> Context:
    return isolated_context()


def test_open_entries_are_listed_with_their_item(ctx: Context) -> None:
    uid = new_uid("rv")
    reviews = to_review(ctx, uid, ["enjoys jazz records", "enjoys climbing walls"])
    listed = review.list_open(ctx, uid)
    assert sorted(r["review_id"] for r in listed) == sorted(reviews.values())
    for row in listed:
        assert row["content"] in reviews and reviews[row["content"]] == row["review_id"]
        assert row["reason"] == "please decide"
    queue = docs(ctx, uid, "memory_review_queue")
    for row in queue.values():
        assert (row["expires_at"] - row["created_at"]).total_seconds() == 72 * 3600


def test_accept_admits_to_long_term_with_a_valid_receipt(ctx: Context) -> None:
    uid = new_uid("rv")
    (review_id,) = to_review(ctx, uid, ["enjoys sailing on weekends"]).values()
    result = review.resolve(ctx, uid, review_id, "accept")
    assert result["decision"] == "accept"
    item = all_items(ctx, uid)[result["memory_id"]]
    assert (item.layer, item.status, item.route) == ("long_term", "active", "promote")
    assert item.reviewed and item.user_review is True
    assert item.promotion["admission_receipt"]["planner"] == "review/accept"
    assert_store_sound(ctx, uid)  # receipt validates, assertion doc matches, ledger gapless
    row = next(r for r in docs(ctx, uid, "memory_review_queue").values() if r["review_id"] == review_id)
    assert row["status"] == "resolved" and row["decision"] == "accept"
    assert review.list_open(ctx, uid) == []


def test_reject_hides_and_never_reaches_long_term(ctx: Context) -> None:
    uid = new_uid("rv")
    (review_id,) = to_review(ctx, uid, ["enjoys loud karaoke"]).values()
    result = review.resolve(ctx, uid, review_id, "reject")
    item = all_items(ctx, uid)[result["memory_id"]]
    assert (item.layer, item.status, item.read_class, item.route) == ("short_term", "hidden", "hidden", "reject")
    assert item.reviewed and item.user_review is False
    assert not long_term_ever(ctx, uid, item.id)
    assert docs(ctx, uid, "memory_graph_assertions") == {}
    assert_store_sound(ctx, uid)


def test_correct_admits_the_corrected_content(ctx: Context) -> None:
    uid = new_uid("rv")
    (review_id,) = to_review(ctx, uid, ["enjoys tenis on sundays"]).values()
    result = review.resolve(ctx, uid, review_id, "correct", correction="  enjoys tennis   on sundays ")
    item = all_items(ctx, uid)[result["memory_id"]]
    assert item.content == "enjoys tennis on sundays" and item.edited
    assert (item.layer, item.status) == ("long_term", "active")
    receipt = item.promotion["admission_receipt"]
    assert receipt["content_hash"] == ids.content_hash("enjoys tennis on sundays")
    assert any(e.source_signal == "review_correction" for e in item.evidence)
    assert receipt["evidence_ids"] == item.evidence_ids()
    assertion = docs(ctx, uid, "memory_graph_assertions")[item.id]
    assert assertion["object"] == "enjoys tennis on sundays"
    assert_store_sound(ctx, uid)


def test_resolving_a_stale_revision_fails_and_changes_nothing(ctx: Context) -> None:
    uid = new_uid("rv")
    (review_id,) = to_review(ctx, uid, ["enjoys green tea"]).values()
    memory_id = review_id.split(":")[1]
    edited = edits.edit_content(ctx, uid, memory_id, "enjoys black tea")  # the user changed it meanwhile
    assert edited.revision > int(review_id.split(":")[2][1:])
    before = canonical_snapshot(ctx, uid)
    for decision, correction in (("accept", None), ("reject", None), ("correct", "enjoys oolong tea")):
        with pytest.raises(Conflict) as caught:
            review.resolve(ctx, uid, review_id, decision, correction)
        assert caught.value.code == "stale_review" and caught.value.status == 409
        assert canonical_snapshot(ctx, uid) == before, "a stale resolution changes nothing"
    item = all_items(ctx, uid)[memory_id]
    assert item.content == "enjoys black tea" and item.layer == "short_term" and item.pending_route
    assert not long_term_ever(ctx, uid, memory_id)


def test_a_second_resolution_is_already_resolved(ctx: Context) -> None:
    uid = new_uid("rv")
    reviews = to_review(ctx, uid, ["enjoys board games", "enjoys pottery class"])
    first, second = reviews.values()
    review.resolve(ctx, uid, first, "accept")
    review.resolve(ctx, uid, second, "reject")
    after_first = canonical_snapshot(ctx, uid)
    for review_id in (first, second):
        for decision in ("accept", "reject", "correct"):
            with pytest.raises(Conflict) as caught:
                review.resolve(ctx, uid, review_id, decision, "enjoys something else")
            assert caught.value.code == "already_resolved"
    assert canonical_snapshot(ctx, uid) == after_first
    items = {i.review_id: i for i in all_items(ctx, uid).values()}
    assert items[first].layer == "long_term" and items[second].status == "hidden"


def test_unknown_reviews_are_not_found(ctx: Context) -> None:
    uid = new_uid("rv")
    (review_id,) = to_review(ctx, uid, ["enjoys long walks"]).values()
    before = canonical_snapshot(ctx, uid)
    for bogus in ("nonsense", "review:nope:r1:", review_id.replace(":r", ":r9")):
        with pytest.raises(NotFound):
            review.resolve(ctx, uid, bogus, "accept")
    with pytest.raises(NotFound):
        review.resolve(ctx, new_uid("rv"), review_id, "accept")  # another user's review
    assert canonical_snapshot(ctx, uid) == before


# -------------------------------------------------------------------------------------- over HTTP
@pytest.fixture(scope="module")
def http(stack: dict[str, Any]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack["api_url"], timeout=30.0) as client:
        yield client


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _resolve(http: httpx.Client, uid: str, review_id: str, decision: str, correction: str | None = None
             ) -> httpx.Response:
    body: dict[str, Any] = {"decision": decision}
    if correction is not None:
        body["correction"] = correction
    return http.post(f"/v3/memories/review-queue/{quote(review_id, safe='')}/resolve", json=body, headers=_auth(uid))


def test_review_queue_over_http(stack: dict[str, Any], http: httpx.Client) -> None:
    ctx = Context()  # the stack's own project: the api function reads what this writes
    uid = f"rvh-{uuid.uuid4().hex[:12]}"
    created = http.post("/v3/memories/batch", headers=_auth(uid), json={"memories": [
        {"content": "enjoys cold brew coffee"}, {"content": "enjoys morning runs"},
        {"content": "enjoys sourdough baking"}, {"content": "enjoys rock climbing"}]})
    assert created.status_code == 201, created.text
    summary = consolidation.run_pass(ctx, uid, router=ReviewAll())
    assert summary["routes"] == {"review": 4}, summary

    listed = http.get("/v3/memories/review-queue", headers=_auth(uid))
    assert listed.status_code == 200, listed.text
    rows = {r["content"]: r for r in listed.json()["reviews"]}
    assert set(rows) == {"enjoys cold brew coffee", "enjoys morning runs", "enjoys sourdough baking",
                         "enjoys rock climbing"}
    assert http.get("/v3/memories/review-queue", headers=_auth(f"other-{uid}")).json() == {"reviews": []}

    accept = _resolve(http, uid, rows["enjoys cold brew coffee"]["review_id"], "accept")
    assert accept.status_code == 200, accept.text
    assert accept.json()["decision"] == "accept"
    accepted = http.get(f"/v1/memories/{rows['enjoys cold brew coffee']['memory_id']}", headers=_auth(uid)).json()
    assert accepted["layer"] == "long_term"

    reject = _resolve(http, uid, rows["enjoys morning runs"]["review_id"], "reject")
    assert reject.status_code == 200, reject.text
    hidden = http.get(f"/v1/memories/{rows['enjoys morning runs']['memory_id']}", headers=_auth(uid))
    # the legal-states table: a rejected item is stored ``hidden``, which reads treat as tombstoned, and tombstoned
    # overrides visibility at every layer: the owner's GET answers 404 like a deleted memory.
    assert hidden.status_code == 404, hidden.text

    correct = _resolve(http, uid, rows["enjoys sourdough baking"]["review_id"], "correct", "enjoys rye baking")
    assert correct.status_code == 200, correct.text
    corrected = http.get(f"/v1/memories/{rows['enjoys sourdough baking']['memory_id']}", headers=_auth(uid)).json()
    assert corrected["content"] == "enjoys rye baking" and corrected["layer"] == "long_term"

    again = _resolve(http, uid, rows["enjoys cold brew coffee"]["review_id"], "reject")
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_resolved"

    stale_row = rows["enjoys rock climbing"]
    edit = http.patch(f"/v3/memories/{stale_row['memory_id']}", params={"value": "enjoys bouldering"},
                      headers=_auth(uid))
    assert edit.status_code == 200, edit.text
    before = canonical_snapshot(ctx, uid)
    stale = _resolve(http, uid, stale_row["review_id"], "accept")
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "stale_review", stale.text
    assert canonical_snapshot(ctx, uid) == before

    bad = _resolve(http, uid, stale_row["review_id"], "maybe")
    assert bad.status_code == 400
    assert canonical_snapshot(ctx, uid) == before
    remaining = http.get("/v3/memories/review-queue", headers=_auth(uid)).json()["reviews"]
    assert {r["review_id"] for r in remaining} <= {stale_row["review_id"]}
    assert_store_sound(ctx, uid)


def test_unanswered_review_settles_in_archive_after_72_hours(ctx: Context) -> None:
    uid = new_uid("rx")
    reviews = to_review(ctx, uid, ["enjoys sea kayaking", "enjoys board games"])
    answered = reviews["enjoys board games"]
    review.resolve(ctx, uid, answered, "accept")
    assert consolidation.expire_reviews(ctx, uid) == 0  # nothing is due yet
    later = Context(ctx.settings, client=ctx.client, publisher=ctx.publisher,
                    clock=lambda: ctx.now() + review_queue.REVIEW_TTL + timedelta(minutes=1))
    assert consolidation.expire_reviews(later, uid) == 1
    items = {i.content: i for i in all_items(ctx, uid).values()}
    expired = items["enjoys sea kayaking"]
    assert (expired.layer, expired.status, expired.route) == ("archive", "active", "archive")
    assert not long_term_ever(ctx, uid, expired.id)
    assert items["enjoys board games"].layer == "long_term"  # a resolved review is not touched
    rows = docs(ctx, uid, "memory_review_queue")
    assert sorted(r["status"] for r in rows.values()) == ["expired", "resolved"]
    assert review.list_open(later, uid) == []
    assert consolidation.expire_reviews(later, uid) == 0  # idempotent
    assert_store_sound(ctx, uid)
