"""A router cannot fold a fact about someone else into a fact about the user (issue 27, point 13).

The spec: promotion conserves authoritative subject identity and attribution; it cannot rewrite a
known third-party subject as the user. So whatever a router proposes — here one that links every
third-party fact to the user's Long-term fact it resembles, as a duplicate (a merge) or as a
replacement (a supersession), the way a careless LLM router might — the user's Long-term facts stay
active, their evidence cites only the user's own conversation, and no third-party fact becomes
their alias or their successor; each of those third-party facts still settles by one route.

The user's facts come through the real path (a captured conversation, the consolidate function
with the stack's router); the linking router runs one pass in-process on the same emulators.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain.records import MemoryItem
from core.domain.routing import RouteCandidate, RouteProposal
from core.services import consolidation
from tests.support import trace
from tests.support.firestore_checks import all_docs, assert_all_items_legal, assert_ledger_gapless

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
MINE = ("I work as a teacher at the local school.", "I moved to Lisbon last year.")
THEIRS = ("My brother Tom works as a teacher at the local school.", "My friend Anna moved to Lisbon last year.")


class LinkingRouter:
    """Links each third-party candidate to its most similar Long-term neighbour: a duplicate when
    they share "teacher", a replacement when they share "Lisbon"; everything else is promoted."""

    router_id, router_version = "linking-test-router", "1"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        out = []
        for c in candidates:
            near = {word: n.ref for n in c.neighbours for word in ("teacher", "Lisbon") if word in n.content}
            if c.subject == "third_party" and "teacher" in c.content and "teacher" in near:
                out.append(RouteProposal(c.ref, "archive", "same as the user's job", duplicate_of=near["teacher"]))
            elif c.subject == "third_party" and "Lisbon" in c.content and "Lisbon" in near:
                out.append(RouteProposal(c.ref, "promote", "newer residence", supersedes=(near["Lisbon"],)))
            else:
                out.append(RouteProposal(c.ref, "promote", "durable"))
        return out


def _items(ctx: Context, uid: str) -> dict[str, MemoryItem]:
    return {mid: MemoryItem.from_store(d) for mid, d in all_docs(ctx, uid, "memory_items").items()}


def test_merges_and_supersessions_never_change_the_subject(stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = f"subj-{uuid.uuid4().hex[:12]}"
    trace.capture_now(ctx, uid, "mine", trace.conversation_doc("mine", list(MINE)))
    response = httpx.post(stack["consolidate_url"], json={"uid": uid}, timeout=120)
    assert response.status_code == 200, response.text
    mine = {i.id: i for i in _items(ctx, uid).values()
            if i.layer == "long_term" and i.record_status == "active" and i.subject_attribution == "user"}
    assert {i.content for i in mine.values()} == {"User works as a teacher at the local school",
                                                  "User moved to Lisbon last year"}, mine

    trace.capture_now(ctx, uid, "theirs", trace.conversation_doc("theirs", list(THEIRS)))
    theirs = {i.id for i in _items(ctx, uid).values() if i.subject_attribution == "third_party"}
    assert theirs, "the third-party lines yielded no facts"
    summary = consolidation.run_pass(ctx, uid, router=LinkingRouter())
    assert summary["selected"] == len(theirs), summary

    items = _items(ctx, uid)
    for memory_id, before in mine.items():
        after = items[memory_id]
        assert (after.layer, after.status, after.superseded_by) == ("long_term", "active", None), after
        assert after.active_source_ids == ["mine"], f"{after.content!r} absorbed another subject's evidence"
        assert after.subject_attribution == "user" and after.content == before.content
    for memory_id in theirs:
        item = items[memory_id]
        assert item.subject_attribution == "third_party" and item.subject_label in ("Tom", "Anna"), item
        assert item.canonical_memory_id not in mine and not set(item.supersedes) & set(mine), item
        assert item.route in consolidation.ROUTES, item  # settled once, by one route
    listed = httpx.get(f"{stack['api_url']}/v1/memories", timeout=30,
                       headers={"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}).json()["memories"]
    assert {m["content"] for m in listed} >= {i.content for i in mine.values()}
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)
