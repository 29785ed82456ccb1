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

from core.adapters.rules import sensitivity
from core.domain import deletion_planners, edit_planners, intake_planners
from core.domain.documents import ApplyControl
from core.domain.intake_planners import ExplicitMemory
from core.domain.plan import ApplyView
from core.domain.records import Evidence, MemoryItem, QuoteRef
from core.errors import Conflict, LineageMoved, Locked, NotFound, RetryableError
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
    # Regression pin, from the id contract (core/domain/ids.py: "ev_" + sha256("evidence|" + canonical
    # JSON of source_id, source_type, source_signal, "extractor/version" and the content hash)[:24],
    # worked out by hand once): stored evidence ids must not change.
    assert evidence.evidence_id == "ev_a62e567211773d4862ddb111"
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
    out = intake_planners.settle_pending(view(items), memory_ids=list(items), sensitivity=sensitivity)
    assert out.summary == {"processed": 2}
    by_id = {item.id: item for item in out.items}
    assert set(by_id) == {"plain", "health"}
    assert by_id["plain"].content == "I like tea" and by_id["plain"].processing_state == "processed"
    assert spec_model.restricted(by_id["health"].sensitivity_labels)  # never reaches an index
    assert not spec_model.projectable(by_id["health"].to_store())
    assert all(legal(item) for item in out.items)


def test_content_holding_a_secret_is_hidden_and_cleared_when_processed() -> None:
    out = intake_planners.settle_pending(view({"s": pending("s", "my password is hunter2-Zebra!")}),
                                          memory_ids=["s"], sensitivity=sensitivity)
    [item] = out.items
    assert (item.status, item.content, item.processing_state) == ("hidden", "", "processed")
    assert legal(item) and not spec_model.default_visible(item.to_store())


# ------------------------------------------------------------------------------------------- edits
RECEIPT = {"receipt_id": "rcpt-old", "revision": 3, "planner": "consolidation"}


def long_term(memory_id: str = "m1", **changes: object) -> MemoryItem:
    fields: dict = {"id": memory_id, "uid": "u", "content": "I live in Porto", "layer": "long_term",
                    "processing_state": "processed", "revision": 3, "graph_ready": True,
                    "graph_assertion_id": f"ga_{memory_id}", "graph_plan_hash": "gp",
                    "promotion": {"route": "promote", "admission_receipt": dict(RECEIPT), "graph_plan": {}},
                    "evidence": [Evidence(evidence_id=f"ev_{memory_id}", source_id="c1",
                                          quote_refs=[QuoteRef(segment_id="s0", quote="I live in Porto")])]}
    return MemoryItem(**{**fields, **changes})


ASSERTION = {"assertion_id": "ga_m1", "memory_id": "m1", "revision": 3, "status": "active"}


def test_a_content_edit_of_a_long_term_memory_is_a_new_short_term_assertion_without_its_receipt() -> None:
    out = edit_planners.edit_content(view({"m1": long_term()}, {"memory_graph_assertions/m1": ASSERTION}),
                                     memory_id="m1", content="I live in Lisbon", ttl_days=TTL_DAYS, sensitivity=sensitivity)
    assert out.summary == {"edited": "m1", "was_long_term": True}
    [item] = out.items
    assert (item.content, item.layer, item.status, item.processing_state) == (
        "I live in Lisbon", "short_term", "active", "pending")
    assert item.edited and item.manually_added
    assert (item.promotion, item.graph_ready, item.graph_assertion_id, item.route) == (None, False, None, None)
    assert item.expires_at == NOW + timedelta(days=TTL_DAYS)
    assert [(e.source_signal, [r.quote for r in e.quote_refs]) for e in item.evidence][-1] == (
        "user_edit", ["I live in Lisbon"])
    # Regression pin (the id contract, as for an explicit memory above): stored evidence ids must not change.
    assert (item.evidence[-1].evidence_id, item.evidence[-1].source_id) == ("ev_20761b7ffef9959ed0f87c57", "m1")
    assert out.docs == {"memory_graph_assertions/m1": None}
    assert legal(item)


def test_the_same_text_again_writes_nothing() -> None:
    out = edit_planners.edit_content(view({"m1": long_term()}), memory_id="m1", content="I live in Porto",
                                     ttl_days=TTL_DAYS, sensitivity=sensitivity)
    assert out.empty and out.summary == {}


def test_a_deleted_or_unknown_memory_cannot_be_edited() -> None:
    tombstone = MemoryItem(id="m1", uid="u", content="", status="tombstoned", processing_state="processed")
    for items in ({"m1": tombstone}, {"m1": None}):
        with pytest.raises(NotFound):
            edit_planners.edit_content(view(items), memory_id="m1", content="x", ttl_days=TTL_DAYS, sensitivity=sensitivity)
        with pytest.raises(NotFound):
            edit_planners.edit_metadata(view(items), memory_id="m1", kind="edit.visibility", value="public",
                                        ttl_days=TTL_DAYS, sensitivity=sensitivity)


LEGACY_ROW = {"content": "I sail on weekends", "category": "hobbies", "created_at": NOW - timedelta(days=900)}


def test_editing_a_historical_row_materialises_its_successor() -> None:
    # spec: "Editing or deleting an old row first creates its deterministic canonical successor"
    out = edit_planners.edit_content(view({"m1": None}, {"memories/m1": LEGACY_ROW, "short_term/m1": None}),
                                     memory_id="m1", content="I sail on Sundays", ttl_days=TTL_DAYS, sensitivity=sensitivity)
    [item] = out.items
    assert (item.id, item.content, item.created_at, item.layer) == ("m1", "I sail on Sundays", LEGACY_ROW["created_at"],
                                                                   "short_term")
    assert not item.grandfathered_long_term and item.subject_attribution == "user"
    assert legal(item)


def test_an_edited_alias_leaves_its_lineage_and_its_long_term_survivor_is_re_admitted() -> None:
    alias = MemoryItem(id="a", uid="u", content="I live in Porto", status="superseded", processing_state="processed",
                       superseded_by="m1", canonical_memory_id="m1")
    survivor = long_term(supersedes=["a"])
    out = edit_planners.edit_content(view({"a": alias, "m1": survivor}), memory_id="a", content="I lived in Braga",
                                     ttl_days=TTL_DAYS, sensitivity=sensitivity)
    by_id = {item.id: item for item in out.items}
    assert (by_id["a"].superseded_by, by_id["a"].canonical_memory_id, by_id["a"].status) == (None, None, "active")
    assert by_id["m1"].supersedes == [] and by_id["m1"].layer == "long_term"
    assertion = out.docs["memory_graph_assertions/m1"]
    assert assertion is not None and assertion["revision"] == 4 and assertion["status"] == "active"
    assert by_id["m1"].promotion["admission_receipt"]["supersedes"] == []  # type: ignore[index]
    assert all(legal(item) for item in out.items)


def test_an_alias_whose_survivor_was_not_read_is_a_retry() -> None:
    alias = MemoryItem(id="a", uid="u", content="x", status="superseded", processing_state="processed",
                       superseded_by="m1")
    with pytest.raises(RetryableError):
        edit_planners.edit_content(view({"a": alias}), memory_id="a", content="y", ttl_days=TTL_DAYS, sensitivity=sensitivity)


@pytest.mark.parametrize(("kind", "value", "field", "expected"), [
    ("edit.visibility", "private", "visibility", "private"),
    ("edit.category", "system", "category", "system"),
    ("edit.user_review", False, "user_review", False),
])
def test_a_metadata_edit_keeps_long_term_and_re_issues_the_receipt_for_the_new_revision(
        kind: str, value: object, field: str, expected: object) -> None:
    out = edit_planners.edit_metadata(view({"m1": long_term(visibility="public")}), memory_id="m1", kind=kind,
                                      value=value, ttl_days=TTL_DAYS, sensitivity=sensitivity)
    [item] = out.items
    assert getattr(item, field) == expected and out.summary == {kind.split(".")[1]: value}
    assert (item.layer, item.status, item.revision) == ("long_term", "active", 4)
    receipt = item.promotion["admission_receipt"]  # type: ignore[index]
    assert (receipt["revision"], receipt["planner"], receipt["commit_id"]) == (4, kind, "c5")
    assert item.promotion["reissued_from"] == "rcpt-old"  # type: ignore[index]
    assertion = out.docs["memory_graph_assertions/m1"]
    assert assertion is not None and (assertion["revision"], assertion["source_commit_id"]) == (4, "c5")
    assert legal(item)


def test_a_metadata_edit_of_a_short_term_memory_keeps_its_layer_and_writes_no_receipt() -> None:
    item = MemoryItem(id="m1", uid="u", content="I like tea", processing_state="processed")
    out = edit_planners.edit_metadata(view({"m1": item}), memory_id="m1", kind="edit.user_review", value=True,
                                      ttl_days=TTL_DAYS, sensitivity=sensitivity)
    [edited] = out.items
    assert (edited.layer, edited.reviewed, edited.user_review, edited.promotion) == ("short_term", True, True, None)
    assert out.docs == {}


def test_a_metadata_edit_to_the_value_it_has_writes_nothing() -> None:
    out = edit_planners.edit_metadata(view({"m1": long_term(visibility="public")}), memory_id="m1",
                                      kind="edit.visibility", value="public", ttl_days=TTL_DAYS, sensitivity=sensitivity)
    assert out.empty


# ----------------------------------------------------------------------------------------- deletes
def member(memory_id: str, **changes: object) -> MemoryItem:
    return MemoryItem(**{"id": memory_id, "uid": "u", "content": f"fact {memory_id}", "processing_state": "processed",
                         "evidence": [Evidence(evidence_id=f"ev_{memory_id}", source_id="c1",
                                               quote_refs=[QuoteRef(segment_id="s0", quote=f"fact {memory_id}")])],
                         **changes})


def review_row(review_id: str, memory_id: str) -> dict:
    return {"review_id": review_id, "memory_id": memory_id, "revision": 1, "commit_id": "c1", "content_hash": "h",
            "content": f"fact {memory_id}", "conflicting": ["x"], "reason": "conflict", "status": "open",
            "created_at": NOW - timedelta(hours=1), "expires_at": NOW + timedelta(hours=71)}


def retracted(item: MemoryItem) -> bool:
    """A retracted memory as docs/data-model.md describes it: tombstoned, the user's delete, and no
    text left (content, evidence quotes, promotion record)."""
    quotes = [ref.quote for evidence in item.evidence for ref in evidence.quote_refs if ref.quote]
    return (item.status == "tombstoned" and item.deleted_by_user and item.content == "" and quotes == []
            and item.promotion is None and legal(item))


def lineage_view() -> ApplyView:
    # m1 survives; a is an alias merged into it; old is a version it superseded, hidden since
    items: dict[str, MemoryItem | None] = {
        "m1": member("m1", layer="long_term", supersedes=["old"]),
        "a": member("a", status="superseded", superseded_by="m1", canonical_memory_id="m1"),
        "old": member("old", status="hidden", superseded_by="m1"),
    }
    return view(items, queried={"aliases": ["a"]})


def test_a_memory_delete_retracts_its_whole_lineage_and_redacts_its_review_rows() -> None:
    reviews = {"r1": review_row("r1", "a")}
    out = deletion_planners.delete_lineage(lineage_view(), memory_id="m1", lineage=frozenset({"m1", "a", "old"}),
                                           reviews=reviews)
    assert sorted(out.summary["tombstoned"]) == ["a", "m1", "old"]
    assert all(retracted(item) for item in out.items) and len(out.items) == 3
    for mid in ("m1", "a", "old"):
        assert out.docs[f"memory_graph_assertions/{mid}"] is None
    row = out.docs["memory_review_queue/r1"]
    assert row is not None and (row["status"], row["content"], row["conflicting"]) == ("redacted", "", [])


def test_a_deleted_memorys_review_row_is_the_row_the_apply_read_with_its_text_cleared() -> None:
    """docs/data-model.md: a review row is ``memory_id``, ``content``, ``conflicting``, ``reason``,
    ``status`` (open · resolved · expired · redacted), ``expires_at``; a delete redacts it (content
    and conflicting ids cleared) and keeps the rest. The apply's own read of the row is what it
    redacts: here the row was resolved between the scan and the apply."""
    scanned = review_row("r1", "a")
    resolved = {**scanned, "status": "resolved", "decision": "accept", "resolved_at": NOW - timedelta(minutes=1)}
    lineage = lineage_view()
    lineage.docs = {"memory_review_queue/r1": resolved, "memory_review_queue/r2": None}
    out = deletion_planners.delete_lineage(lineage, memory_id="m1", lineage=frozenset({"m1", "a", "old"}),
                                           reviews={"r1": scanned, "r2": review_row("r2", "m1")})
    assert out.docs["memory_review_queue/r1"] == {
        "review_id": "r1", "memory_id": "a", "revision": 1, "commit_id": "c1", "content_hash": "h",
        "content": "", "conflicting": [], "reason": "conflict", "status": "redacted",
        "created_at": NOW - timedelta(hours=1), "expires_at": NOW + timedelta(hours=71),
        "decision": "accept", "resolved_at": NOW - timedelta(minutes=1), "redacted_at": NOW}
    assert "memory_review_queue/r2" not in out.docs  # removed since the scan: left removed


def test_a_lineage_that_grew_since_it_was_scanned_is_refused_for_a_rescan() -> None:
    grown = lineage_view()
    grown.queried["aliases"] = ["a", "b"]  # an alias merged into m1 after the scan
    with pytest.raises(LineageMoved):
        deletion_planners.delete_lineage(grown, memory_id="m1", lineage=frozenset({"m1", "a", "old"}), reviews={})


def test_deleting_a_deleted_memory_is_not_found() -> None:
    gone = view({"m1": MemoryItem(id="m1", uid="u", content="", status="tombstoned", processing_state="processed",
                                  deleted_by_user=True)})
    with pytest.raises(NotFound):
        deletion_planners.delete_lineage(gone, memory_id="m1", lineage=frozenset({"m1"}), reviews={})


def test_a_historical_row_is_deleted_as_a_canonical_tombstone_of_the_same_id() -> None:
    out = deletion_planners.delete_historical(view({"m1": None}, {"memories/m1": LEGACY_ROW}), memory_id="m1", sensitivity=sensitivity)
    [item] = out.items
    assert item.id == "m1" and retracted(item) and out.summary == {"tombstoned": ["m1"]}


def test_a_historical_delete_refuses_a_locked_row_and_yields_to_a_canonical_item() -> None:
    with pytest.raises(Locked):  # docs/data-model.md: refused for a locked memory (402)
        deletion_planners.delete_historical(view({"m1": None}, {"memories/m1": {**LEGACY_ROW, "is_locked": True}}),
                                            memory_id="m1", sensitivity=sensitivity)
    with pytest.raises(LineageMoved):
        deletion_planners.delete_historical(view({"m1": member("m1")}, {"memories/m1": LEGACY_ROW}), memory_id="m1", sensitivity=sensitivity)
    with pytest.raises(NotFound):
        deletion_planners.delete_historical(view({"m1": None}, {"memories/m1": None}), memory_id="m1", sensitivity=sensitivity)


def test_bulk_tombstoning_of_historical_rows_covers_locked_rows_and_skips_canonical_and_colliding_ones() -> None:
    docs = {"memories/locked": {**LEGACY_ROW, "is_locked": True},
            "memories/twice": {"content": "I live in Ghent"}, "short_term/twice": {"content": "I live in Bruges"},
            "memories/canon": LEGACY_ROW}
    items: dict[str, MemoryItem | None] = {"locked": None, "twice": None, "canon": member("canon"), "none": None}
    out = deletion_planners.tombstone_historical(view(items, docs), memory_ids=["locked", "twice", "canon", "none"],
                                                 by_user=True, sensitivity=sensitivity)
    assert [item.id for item in out.items] == ["locked"] and out.summary == {"tombstoned": 1}
    assert retracted(out.items[0])
    # a reprocess's retraction is not the user's delete
    again = deletion_planners.tombstone_historical(view(items, docs), memory_ids=["locked"], by_user=False, sensitivity=sensitivity)
    assert again.items[0].status == "tombstoned" and not again.items[0].deleted_by_user


def test_a_delete_all_batch_retracts_every_live_item_it_read_whatever_its_status() -> None:
    items: dict[str, MemoryItem | None] = {
        "st": member("st"), "lt": member("lt", layer="long_term"), "hidden": member("hidden", status="hidden"),
        "done": MemoryItem(id="done", uid="u", content="", status="tombstoned", processing_state="processed"),
        "missing": None,
    }
    out = deletion_planners.tombstone_batch(view(items), reviews={"r1": review_row("r1", "st")})
    assert sorted(item.id for item in out.items) == ["hidden", "lt", "st"] and out.summary == {"tombstoned": 3}
    assert all(retracted(item) for item in out.items)
    assert sorted(out.docs) == ["memory_graph_assertions/hidden", "memory_graph_assertions/lt",
                                "memory_graph_assertions/st", "memory_review_queue/r1"]


def test_delete_alls_answer_is_journaled_without_writing_anything() -> None:
    out = deletion_planners.answer_only(view({}), summary={"deleted": 3, "stable_at_sequence": 9})
    assert out.empty and out.summary == {"deleted": 3, "stable_at_sequence": 9}
