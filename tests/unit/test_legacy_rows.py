"""The historical adapter's row mapping (``core.domain.legacy_rows``): pure, no servers.

Expected values come from the original's row shapes (``is_locked``, the ``memory_id`` conversation
mirror, ``deleted``, retired Short-term ``status`` / ``soft_pruned_at``, the lifecycle fields
``memory_tier`` / ``superseded_by`` / ``invalid_at``) and the spec's Q2/Q4 and canonical mapping
table: a ``memories`` row is a grandfathered Long-term memory, a retired ``short_term`` row is
Short-term (with the Short-term deadline), a row its own fields invalidated is superseded, and two
different texts under one id are refused rather than guessed between.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.adapters.rules import sensitivity
from core.domain import legacy_rows
from core.domain.records import expired, to_public
from core.errors import LegacyCollision

WHEN = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)


def test_a_legacy_memory_row_is_a_grandfathered_long_term_memory() -> None:
    item = legacy_rows.adapt("u1", "m1", {"content": "I sail on weekends", "category": "hobbies", "memory_id": "conv-9",
                                     "is_locked": True, "reviewed": True, "user_review": False, "edited": True,
                                     "created_at": WHEN, "scoring": "01_998_1709285400", "tags": ["x"]}, "memories", sensitivity=sensitivity)
    assert item is not None
    assert (item.id, item.uid, item.layer, item.status, item.processing_state) == (
        "m1", "u1", "long_term", "active", "processed")
    assert item.grandfathered_long_term and item.subject_attribution == "legacy_assumed"
    assert (item.conversation_id, item.source_ids, item.locked, item.category) == ("conv-9", ["conv-9"], True, "hobbies")
    assert (item.created_at, item.updated_at, item.visibility) == (WHEN, WHEN, "public")  # the original's default
    assert (item.reviewed, item.user_review, item.edited, item.manually_added) == (True, False, True, False)
    assert item.read_class == "default" and not item.pending_route
    [evidence] = item.evidence  # its conversation, as evidence: a conversation delete withdraws it
    assert (evidence.source_type, evidence.source_id, evidence.status, evidence.quote_refs) == (
        "conversation", "conv-9", "active", [])
    assert item.active_source_ids == ["conv-9"]


@pytest.mark.parametrize(("collection", "row"), [
    ("memories", {"content": "gone", "deleted": True}),
    ("memories", {"content": "   "}),
    ("memories", {"content": 7}),
    ("memories", {"category": "core"}),
    ("short_term", {"content": "no", "status": "rejected"}),
    ("short_term", {"content": "pruned", "soft_pruned_at": WHEN}),
])
def test_rows_the_user_does_not_see_are_no_memory(collection: str, row: dict) -> None:
    assert legacy_rows.adapt("u1", "m1", row, collection, sensitivity=sensitivity) is None


def test_wrongly_typed_fields_fall_back_instead_of_failing_the_read() -> None:
    item = legacy_rows.adapt("u1", "m1", {"content": "I like jazz", "created_at": "2024-03-01", "user_review": "yes",
                                     "visibility": "friends", "conversation_id": 12, "category": None}, "short_term", sensitivity=sensitivity)
    assert item is not None
    assert (item.created_at, item.user_review, item.visibility, item.conversation_id, item.category) == (
        None, None, "public", None, "interesting")


def test_two_collections_agreeing_are_one_memory_and_disagreeing_are_refused() -> None:
    same = {"memories": {"content": "I drink tea", "category": "habits"}, "short_term": {"content": "I drink tea"}}
    item = legacy_rows.resolve("u1", "m1", same, sensitivity=sensitivity)
    assert item is not None and item.category == "habits"  # the memories row wins a tie
    assert legacy_rows.resolve("u1", "m1", {"memories": None, "short_term": {"content": "I drink tea"}}, sensitivity=sensitivity) is not None
    assert legacy_rows.resolve("u1", "m1", {"memories": {"content": "x", "deleted": True}, "short_term": None}, sensitivity=sensitivity) is None
    with pytest.raises(LegacyCollision):
        legacy_rows.resolve("u1", "m1", {"memories": {"content": "I live in Antwerp"},
                                    "short_term": {"content": "I live in Brussels"}}, sensitivity=sensitivity)
    # The apply-side reader sees the same rows through the document paths an apply reads.
    docs = {path: same[path.split("/")[0]] for path in legacy_rows.paths("m1")}
    assert legacy_rows.successor("u1", "m1", docs, sensitivity=sensitivity) == item


def test_a_retired_short_term_row_is_short_term_with_its_deadline() -> None:
    """Spec, canonical mapping: "Shadow short_term (retired) → Short-term in unified Memories
    (layer=short_term)"; TTL is an adjudication deadline reported as ``expired``."""
    row = {"content": "I am learning Dutch", "status": "pending_consolidation", "conversation_id": "c1",
           "created_at": WHEN, "allowed_uses": ["chat"], "scope": "user"}
    item = legacy_rows.adapt("u1", "st1", row, "short_term", ttl_days=30, sensitivity=sensitivity)
    assert item is not None
    assert (item.layer, item.status, item.processing_state) == ("short_term", "active", "processed")
    assert not item.grandfathered_long_term and item.promotion is None  # never Long-term without a receipt
    assert item.read_class == "default" and item.pending_route  # default-visible; only consolidation settles it
    assert item.expires_at == WHEN + timedelta(days=30)
    assert not expired(item, WHEN + timedelta(days=29)) and expired(item, WHEN + timedelta(days=30))
    assert to_public(item, WHEN + timedelta(days=31))["expired"] is True
    assert legacy_rows.adapt("u1", "st1", row, "short_term", ttl_days=7, sensitivity=sensitivity).expires_at == WHEN + timedelta(days=7)
    # A deadline the row carries is its own.
    own = legacy_rows.adapt("u1", "st1", {**row, "expires_at": WHEN + timedelta(days=2)}, "short_term", sensitivity=sensitivity)
    assert own is not None and own.expires_at == WHEN + timedelta(days=2)
    # ``memory_tier`` does not lift a retired Short-term row into Long-term.
    lifted = legacy_rows.adapt("u1", "st1", {**row, "memory_tier": "long_term"}, "short_term", sensitivity=sensitivity)
    assert lifted is not None and (lifted.layer, lifted.grandfathered_long_term) == ("short_term", False)


@pytest.mark.parametrize(("tier", "layer", "read_class"), [
    (None, "long_term", "default"), ("long_term", "long_term", "default"),
    ("short_term", "short_term", "default"), ("archive", "archive", "archive"),
])
def test_a_memories_row_keeps_its_own_tier(tier: str | None, layer: str, read_class: str) -> None:
    item = legacy_rows.adapt("u1", "m1", {"content": "I sail", "created_at": WHEN, "memory_tier": tier}, "memories", sensitivity=sensitivity)
    assert item is not None
    assert (item.layer, item.read_class, item.grandfathered_long_term) == (layer, read_class, layer == "long_term")


@pytest.mark.parametrize("row", [
    {"superseded_by": "m2"}, {"invalid_at": WHEN}, {"superseded_by": "m2", "invalid_at": WHEN},
    {"memory_tier": "short_term", "invalid_at": WHEN},
])
def test_a_row_its_own_fields_invalidated_is_superseded_not_active(row: dict) -> None:
    for collection in legacy_rows.COLLECTIONS:
        item = legacy_rows.adapt("u1", "m1", {"content": "I live in Ghent", "created_at": WHEN, **row}, collection, sensitivity=sensitivity)
        assert item is not None
        assert (item.status, item.read_class, item.pending_route) == ("superseded", "hidden", False), collection


@pytest.mark.parametrize("row", [
    {"memory_tier": "context_only"}, {"memory_tier": 2}, {"superseded_by": 5}, {"invalid_at": "2024-01-01"},
    {"memory_tier": "archive", "invalid_at": WHEN},  # no legal state says "superseded in Archive"
])
def test_lifecycle_fields_no_lifecycle_has_make_the_row_no_memory(row: dict) -> None:
    assert legacy_rows.adapt("u1", "m1", {"content": "I live in Ghent", "created_at": WHEN, **row}, "memories", sensitivity=sensitivity) is None


def test_lifecycle_fields_that_say_nothing_leave_the_row_active() -> None:
    for row in ({"superseded_by": None, "invalid_at": None}, {"superseded_by": ""}, {"superseded_by": "m1"}):
        item = legacy_rows.adapt("u1", "m1", {"content": "I live in Ghent", "created_at": WHEN, **row}, "memories", sensitivity=sensitivity)
        assert item is not None and item.status == "active", row
