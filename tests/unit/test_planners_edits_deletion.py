"""The user's own writes as planners: explicit intake, edits and deletes, each a view built by hand
in and a plan out, compared with what the design says (docs/data-model.md: *Layers and legal
states*, every intake enters Short-term pending and required processing settles it ``processed``;
a content edit is a new revision back in Short-term, a metadata edit keeps the layer and, in
Long-term, re-issues the receipt; *What each delete removes*, a deleted memory is retracted with
its whole lineage, its graph assertion deleted and its review rows redacted) and with the
reference model of legal states (``tests/support/spec_model.py``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.domain import intake_planners
from core.domain.documents import ApplyControl
from core.domain.intake_planners import ExplicitMemory
from core.domain.plan import ApplyView
from core.domain.records import MemoryItem
from core.errors import Conflict
from tests.support import spec_model

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
TTL_DAYS = 7


def view(items: dict[str, MemoryItem | None], docs: dict | None = None, *, queried: dict | None = None) -> ApplyView:
    return ApplyView(uid="u", now=NOW, control=ApplyControl(), items=items, docs=docs or {}, sequence=5,
                     commit_id="c5", operation_id="op", queried=queried or {})


def legal(item: MemoryItem) -> bool:
    return spec_model.item_legal(item.to_store())


# ------------------------------------------------------------------------------------ explicit intake
def test_an_explicit_memory_enters_short_term_pending_with_the_users_words_as_evidence() -> None:
    request = ExplicitMemory(content="  I keep   bees ", category="", visibility="public", client_device_id="d1")
    out = intake_planners.create_explicit(view({"m1": None}), requests=[request], memory_ids=["m1"], first=True,
                                          ttl_days=TTL_DAYS)
    assert out.summary == {"created": 1} and out.docs == {} and out.outbox == []
    [item] = out.items
    assert (item.id, item.uid, item.content, item.layer, item.status, item.processing_state) == (
        "m1", "u", "I keep bees", "short_term", "active", "pending")
    assert (item.category, item.visibility, item.manually_added, item.subject_attribution) == (
        "manual", "public", True, "user")
    assert item.expires_at == NOW + timedelta(days=TTL_DAYS)  # the Short-term adjudication deadline
    [evidence] = item.evidence
    assert (evidence.source_type, evidence.source_id, evidence.client_device_id, evidence.captured_at) == (
        "explicit", "m1", "d1", NOW)
    assert [ref.quote for ref in evidence.quote_refs] == ["I keep bees"]
    assert legal(item)


def test_an_explicit_memory_that_exists_already_is_a_replay_that_writes_nothing() -> None:
    existing = MemoryItem(id="m1", uid="u", content="I keep bees", processing_state="processed")
    out = intake_planners.create_explicit(view({"m1": existing}), requests=[ExplicitMemory(content="I keep bees")],
                                          memory_ids=["m1"], first=True, ttl_days=TTL_DAYS)
    assert out.empty and out.summary == {"created": 0}


def test_re_adding_deleted_content_under_its_first_id_is_refused_so_it_gets_a_new_id() -> None:
    tombstone = MemoryItem(id="m1", uid="u", content="", status="tombstoned", processing_state="processed")
    with pytest.raises(Conflict) as refused:
        intake_planners.create_explicit(view({"m1": tombstone}), requests=[ExplicitMemory(content="I keep bees")],
                                        memory_ids=["m1"], first=True, ttl_days=TTL_DAYS)
    assert refused.value.code == intake_planners.READDED
    # under a salted id found for it, the tombstone is left alone rather than revived
    again = intake_planners.create_explicit(view({"m1": tombstone}), requests=[ExplicitMemory(content="I keep bees")],
                                            memory_ids=["m1"], first=False, ttl_days=TTL_DAYS)
    assert again.empty


def pending(memory_id: str, content: str, **changes: object) -> MemoryItem:
    return MemoryItem(id=memory_id, uid="u", content=content, **changes)


def test_required_processing_settles_pending_items_processed_and_labels_them() -> None:
    items: dict[str, MemoryItem | None] = {
        "plain": pending("plain", "I  like   tea"),
        "health": pending("health", "I was diagnosed with diabetes"),
        "done": pending("done", "I like coffee", processing_state="processed"),
        "gone": pending("gone", "", status="tombstoned"),
        "missing": None,
    }
    out = intake_planners.process_pending(view(items), memory_ids=list(items))
    assert out.summary == {"processed": 2}
    by_id = {item.id: item for item in out.items}
    assert set(by_id) == {"plain", "health"}
    assert by_id["plain"].content == "I like tea" and by_id["plain"].processing_state == "processed"
    assert spec_model.restricted(by_id["health"].sensitivity_labels)  # never reaches an index
    assert not spec_model.projectable(by_id["health"].to_store())
    assert all(legal(item) for item in out.items)


def test_content_holding_a_secret_is_hidden_and_cleared_when_processed() -> None:
    out = intake_planners.process_pending(view({"s": pending("s", "my password is hunter2-Zebra!")}),
                                          memory_ids=["s"])
    [item] = out.items
    assert (item.status, item.content, item.processing_state) == ("hidden", "", "processed")
    assert legal(item) and not spec_model.default_visible(item.to_store())

