"""Editing a Long-term memory's content is a new user assertion: the item goes back to Short-term,
loses its admission receipt and graph assertion, and comes back to Long-term only through
consolidation with a fresh receipt. Meanwhile it is processed in the edit's own request, as an
explicit create is (issue 27): listed by default, and projected, with its new words."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from core.adapters.rules import RuleRouter
from core.bootstrap import Context
from core.domain import ids
from core.domain.admission import receipt_problems
from core.services import consolidation, edits, intake, projection, reads

pytestmark = pytest.mark.integration


def _assertion(ctx: Context, uid: str, memory_id: str) -> dict[str, Any] | None:
    snap = ctx.paths.doc(uid, "memory_graph_assertions", memory_id).get()
    return snap.to_dict() if snap.exists else None


def _drain(ctx: Context, uid: str, timeout_s: float = 30.0) -> None:
    """Drain here; the stack's own outbox_drain function may hold the user's drain lease meanwhile,
    so poll until no event is left at all."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        projection.drain_user(ctx, uid)
        if not list(ctx.paths.col(uid, "memory_outbox").limit(1).stream()):
            return
        time.sleep(0.2)
    raise AssertionError("outbox did not drain")


def test_long_term_edit_stays_listed_as_short_term_until_readmitted(stack: dict[str, Any]) -> None:
    ctx = Context(router=RuleRouter())
    uid = f"edit-{uuid.uuid4().hex[:10]}"
    [item] = intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I keep bees on my roof")])
    assert consolidation.run_pass(ctx, uid)["routes"] == {"promote": 1}
    _drain(ctx, uid)
    provider = ids.provider_id(uid, item.id)
    assert provider in ctx.keyword_index.provider_ids(uid)
    assert provider in ctx.vector_index.provider_ids(uid)

    edited = edits.edit_content(ctx, uid, item.id, "I keep bees and chickens on my roof")
    # Processed in the edit's request (spec: every new intake is Short-term; an edit is processed
    # as an explicit create is), unadmitted until consolidation re-admits it.
    assert (edited.layer, edited.processing_state, edited.status) == ("short_term", "processed", "active")
    assert edited.edited and edited.manually_added and edited.subject_attribution == "user"
    assert edited.promotion is None and not edited.graph_ready and _assertion(ctx, uid, item.id) is None
    assert edited.pending_route  # consolidation still owes it its one terminal route
    listed, _ = reads.list_memories(ctx, uid, reads.ListQuery())
    assert [m.content for m in listed if m.id == item.id] == ["I keep bees and chickens on my roof"]
    _drain(ctx, uid)
    assert [h.memory_id for h in ctx.keyword_index.search(uid, "chickens", layers=["short_term"], limit=5)] == [
        item.id]  # the projection holds the new words (and only those)
    assert not ctx.keyword_index.search(uid, "chickens", layers=["long_term"], limit=5)
    assert provider in ctx.vector_index.provider_ids(uid)

    summary = consolidation.run_pass(ctx, uid)
    assert summary["routes"] == {"promote": 1}
    readmitted = intake.get_item(ctx, uid, item.id)
    assert readmitted is not None
    assert (readmitted.layer, readmitted.processing_state) == ("long_term", "processed")
    assert readmitted.content == "I keep bees and chickens on my roof"
    assert receipt_problems(readmitted, _assertion(ctx, uid, item.id)) == []
    _drain(ctx, uid)
    hits = ctx.keyword_index.search(uid, "chickens", layers=["long_term"], limit=5)
    assert [h.memory_id for h in hits] == [item.id]


def test_short_term_edit_is_processed_right_away(stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = f"edit-{uuid.uuid4().hex[:10]}"
    [item] = intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I read on trains")])
    edited = edits.edit_content(ctx, uid, item.id, "I read on long train rides")
    assert (edited.layer, edited.processing_state) == ("short_term", "processed")
    listed, _ = reads.list_memories(ctx, uid, reads.ListQuery())
    assert item.id in {m.id for m in listed}
