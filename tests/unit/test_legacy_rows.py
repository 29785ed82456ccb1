"""The historical adapter's row mapping (``core.services.legacy``): pure, no servers.

Expected values come from the original's row shapes (``is_locked``, the ``memory_id`` conversation
mirror, ``deleted``, retired Short-term ``status`` / ``soft_pruned_at``) and the spec's Q2/Q4: a
legacy row is a grandfathered Long-term memory or nothing, and two different texts under one id
are refused rather than guessed between.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.services import legacy

WHEN = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)


def test_a_legacy_memory_row_is_a_grandfathered_long_term_memory() -> None:
    item = legacy.adapt("u1", "m1", {"content": "I sail on weekends", "category": "hobbies", "memory_id": "conv-9",
                                     "is_locked": True, "reviewed": True, "user_review": False, "edited": True,
                                     "created_at": WHEN, "scoring": "01_998_1709285400", "tags": ["x"]}, "memories")
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
    assert legacy.adapt("u1", "m1", row, collection) is None


def test_wrongly_typed_fields_fall_back_instead_of_failing_the_read() -> None:
    item = legacy.adapt("u1", "m1", {"content": "I like jazz", "created_at": "2024-03-01", "user_review": "yes",
                                     "visibility": "friends", "conversation_id": 12, "category": None}, "short_term")
    assert item is not None
    assert (item.created_at, item.user_review, item.visibility, item.conversation_id, item.category) == (
        None, None, "public", None, "interesting")


def test_two_collections_agreeing_are_one_memory_and_disagreeing_are_refused() -> None:
    same = {"memories": {"content": "I drink tea", "category": "habits"}, "short_term": {"content": "I drink tea"}}
    item = legacy.resolve("u1", "m1", same)
    assert item is not None and item.category == "habits"  # the memories row wins a tie
    assert legacy.resolve("u1", "m1", {"memories": None, "short_term": {"content": "I drink tea"}}) is not None
    assert legacy.resolve("u1", "m1", {"memories": {"content": "x", "deleted": True}, "short_term": None}) is None
    with pytest.raises(legacy.LegacyCollision):
        legacy.resolve("u1", "m1", {"memories": {"content": "I live in Antwerp"},
                                    "short_term": {"content": "I live in Brussels"}})
    # The apply-side reader sees the same rows through the document paths an apply reads.
    docs = {path: same[path.split("/")[0]] for path in legacy.paths("m1")}
    assert legacy.successor("u1", "m1", docs) == item
