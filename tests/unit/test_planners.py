"""The domain's planners as values: a view built by hand in, a plan out, compared with what the
design says (docs/data-model.md: *Layers and legal states*, a review nobody answers within 72 hours
archives the item and Long-term items not updated for the configured time move to Archive; *What
each delete removes*, a conversation delete withdraws its evidence page by page, retracting what is
left without any and keeping its progress in the capture marker). Each later section says where its
expectations come from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.adapters.rules import sensitivity
from core.domain import ids, planners, review_queue
from core.domain.documents import ApplyControl
from core.domain.plan import ApplyView, Plan, schedule_event
from core.domain.records import Evidence, MemoryItem, QuoteRef
from core.errors import CohortMoved, Conflict, ConversationDeleted, NotFound

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
PATH = "memory_review_queue/review:m1:2:m0"


def view(items: dict[str, MemoryItem | None], docs: dict | None = None) -> ApplyView:
    return ApplyView(uid="u", now=NOW, control=ApplyControl(), items=items, docs=docs or {}, sequence=5,
                     commit_id="c5", operation_id="op")


def in_review(**changes: object) -> MemoryItem:
    fields: dict = {"id": "m1", "uid": "u", "content": "User lives in Porto", "processing_state": "processed",
                    "route": "review", "review_id": "review:m1:2:m0", "revision": 2}
    return MemoryItem(**{**fields, **changes})


def open_row(expires_at: datetime) -> dict:
    return {"review_id": "review:m1:2:m0", "memory_id": "m1", "revision": 2, "commit_id": "c2",
            "content_hash": "h", "content": "User lives in Porto", "conflicting": ["m0"], "reason": "conflict",
            "status": "open", "created_at": expires_at - timedelta(hours=72), "expires_at": expires_at}


def test_an_unanswered_review_archives_its_item_and_keeps_no_text() -> None:
    out = planners.expire_reviews(view({"m1": in_review()}, {PATH: open_row(NOW)}), {"review:m1:2:m0": PATH})
    assert out.summary == {"expired": 1}
    row = out.docs[PATH]
    assert row is not None
    assert (row["status"], row["content"], row["conflicting"], row["expired_at"]) == ("expired", "", [], NOW)
    [item] = out.items
    assert (item.id, item.layer, item.route) == ("m1", "archive", "archive")


def test_a_review_before_its_deadline_is_left_open() -> None:
    out = planners.expire_reviews(view({"m1": in_review()}, {PATH: open_row(NOW + timedelta(seconds=1))}),
                                  {"review:m1:2:m0": PATH})
    assert out.empty and out.summary == {"expired": 0}


def test_an_item_that_moved_on_is_left_alone_but_its_row_expires() -> None:
    moved = in_review(review_id="review:m1:3:m0")  # a later revision re-issued the entry
    out = planners.expire_reviews(view({"m1": moved}, {PATH: open_row(NOW)}), {"review:m1:2:m0": PATH})
    assert out.items == [] and out.docs[PATH]["status"] == "expired"  # type: ignore[index]


def test_a_resolved_or_missing_row_writes_nothing() -> None:
    resolved = {**open_row(NOW), "status": "resolved"}
    assert planners.expire_reviews(view({"m1": in_review()}, {PATH: resolved}), {"review:m1:2:m0": PATH}).empty
    assert planners.expire_reviews(view({"m1": in_review()}, {PATH: None}), {"review:m1:2:m0": PATH}).empty


def test_age_out_moves_active_long_term_to_archive_and_drops_the_statement() -> None:
    items: dict[str, MemoryItem | None] = {
        "lt": MemoryItem(id="lt", uid="u", content="a", layer="long_term", processing_state="processed"),
        "st": MemoryItem(id="st", uid="u", content="b", processing_state="processed"),
        "gone": MemoryItem(id="gone", uid="u", content="", layer="long_term", status="tombstoned",
                           processing_state="processed"),
        "missing": None,
    }
    out = planners.age_out(view(items), ["lt", "st", "gone", "missing"])
    assert [(i.id, i.layer, i.graph_ready) for i in out.items] == [("lt", "archive", False)]
    assert out.docs == {"memory_graph_assertions/lt": None}


def supported(memory_id: str, *sources: str, **changes: object) -> MemoryItem:
    return MemoryItem(id=memory_id, uid="u", content=f"fact {memory_id}", processing_state="processed",
                      evidence=[Evidence(evidence_id=f"ev_{memory_id}_{s}", source_id=s,
                                         quote_refs=[QuoteRef(segment_id="s0", quote=f"fact {memory_id}")])
                                for s in sources], **changes).settle()


def cascade_view(cohort: list[str], items: dict[str, MemoryItem | None], *, more: bool, marker: dict | None,
                 conversation: dict | None = None) -> ApplyView:
    out = view(items, {"capture_runs/c1": marker, "conversations/c1": conversation})
    out.queried, out.more = {"cohort": cohort}, {"cohort": more}
    return out


def test_a_one_page_cascade_retracts_withdraws_records_done_and_removes_the_document() -> None:
    items: dict[str, MemoryItem | None] = {"only": supported("only", "c1"), "both": supported("both", "c1", "c2")}
    marker = {"revision": "r1", "jobs": {"memories": True}, "errors": {}, "captures": 2, "updated_at": NOW}
    out = planners.cascade_page(cascade_view(["both", "only"], items, more=False, marker=marker,
                                             conversation={"status": "completed"}),
                                conversation_id="c1", run_id="run1", seen=frozenset({"both", "only"}), reviews={},
                                remove_document=True)
    by_id = {i.id: i for i in out.items}
    assert by_id["only"].status == "tombstoned" and by_id["only"].content == "" and by_id["only"].deleted_by_user
    assert by_id["both"].status == "active"
    assert {e.source_id: e.status for e in by_id["both"].evidence} == {"c1": "tombstoned", "c2": "active"}
    assert out.summary == {"withdrawn": 2, "retracted": 1, "last": True}
    # the progress record keeps no text: the capture's jobs and errors are gone
    assert out.docs["capture_runs/c1"] == {"captures": 2, "updated_at": NOW, "cascade": {
        "state": "done", "intent": "run1", "pages": 1, "summary": {"withdrawn": 2, "retracted": 1}}}
    assert out.docs["conversations/c1"] is None
    assert out.docs["memory_graph_assertions/only"] is None


def test_a_cascade_redacts_the_review_rows_of_what_it_retracts_and_clears_settled_text() -> None:
    """docs/data-model.md: a retracted memory's review rows are redacted (content and conflicting
    ids cleared, the rest kept); a row of a memory another source keeps is left open, and a settled
    one keeps its status but not the withdrawn words. The row redacted is the one the apply read."""
    items: dict[str, MemoryItem | None] = {"only": supported("only", "c1"), "both": supported("both", "c1", "c2")}
    scanned = {"review_id": "r_only", "memory_id": "only", "content": "fact only", "conflicting": ["x"],
               "reason": "conflict", "status": "open", "expires_at": NOW + timedelta(hours=72)}
    read = {**scanned, "reason": "conflict, re-issued"}
    open_kept = {**scanned, "review_id": "r_both", "memory_id": "both", "content": "fact both"}
    settled = {**open_kept, "review_id": "r_old", "status": "resolved", "resolved_at": NOW}
    cascade = cascade_view(["both", "only"], items, more=False, marker=None)
    cascade.docs.update({"memory_review_queue/r_only": read, "memory_review_queue/r_both": open_kept,
                         "memory_review_queue/r_old": settled})
    out = planners.cascade_page(cascade, conversation_id="c1", run_id="run1", seen=frozenset({"both", "only"}),
                                reviews={"r_only": scanned, "r_both": open_kept, "r_old": settled},
                                remove_document=False)
    assert out.docs["memory_review_queue/r_only"] == {
        **read, "content": "", "conflicting": [], "status": "redacted", "redacted_at": NOW}
    assert "memory_review_queue/r_both" not in out.docs
    assert out.docs["memory_review_queue/r_old"] == {**settled, "content": "", "conflicting": []}


def test_a_middle_page_counts_on_from_the_recorded_progress_and_keeps_the_document() -> None:
    marker = {"captures": 1, "updated_at": NOW, "cascade": {"state": "running", "intent": "first", "pages": 2,
                                                             "summary": {"withdrawn": 5, "retracted": 4}}}
    out = planners.cascade_page(cascade_view(["a"], {"a": supported("a", "c1")}, more=True, marker=marker,
                                             conversation={"status": "completed"}),
                                conversation_id="c1", run_id="ignored", seen=frozenset({"a"}), reviews={},
                                remove_document=True)
    assert out.docs["capture_runs/c1"]["cascade"] == {  # type: ignore[index]
        "state": "running", "intent": "first", "pages": 3, "summary": {"withdrawn": 6, "retracted": 5}}
    assert "conversations/c1" not in out.docs and out.summary["last"] is False


def test_a_cohort_that_moved_since_it_was_read_is_refused() -> None:
    with pytest.raises(CohortMoved):
        planners.cascade_page(cascade_view(["a", "new"], {"a": supported("a", "c1"), "new": supported("new", "c1")},
                                           more=False, marker=None),
                              conversation_id="c1", run_id="r", seen=frozenset({"a"}), reviews={},
                              remove_document=False)


# ------------------------------------------------------------------ complete-source replacement (capture)
# The spec (domain model, Q7 and canonical capture): a successful extraction replaces the source's live
# cohort, walked in bounded pages; an unchanged fact keeps its id, a vanished one loses this source's
# evidence and is retracted (a scrubbed tombstone) when no evidence survives; a fact the user deleted
# stays deleted (docs/data-model.md, ``deleted_by_user``); a conversation being deleted gets no writes.

def candidate(memory_id: str, source: str = "c1", quote: str | None = None) -> MemoryItem:
    text = quote or f"fact {memory_id}"
    return MemoryItem(id=memory_id, uid="u", content=f"fact {memory_id}", processing_state="processed",
                      evidence=[Evidence(evidence_id=f"ev_{memory_id}_{source}_{text}", source_id=source,
                                         quote_refs=[QuoteRef(segment_id="s0", quote=text)])])


def replace_view(cohort: list[str], items: dict[str, MemoryItem | None], *, more: bool = False,
                 marker: dict | None = None) -> ApplyView:
    out = view(items, {"capture_runs/c1": marker})
    out.queried, out.more = {"cohort": cohort}, {"cohort": more}
    return out


MARKER = {"revision": "r1", "jobs": {"memories": True, "action_items": True, "goals": True}, "captures": 1,
          "updated_at": NOW}


def test_a_first_capture_creates_every_candidate_and_carries_its_riders() -> None:
    riders = {"capture_runs/c1": {"revision": "r2"}, "action_items/a1": {"description": "call"}}
    out = planners.replace_page(view({"new": None}, {"capture_runs/c1": None}), conversation_id="c1",
                                candidates={"new": candidate("new")}, first=True, riders=riders)
    assert [(i.id, i.status) for i in out.items] == [("new", "active")]
    assert out.summary == {"created": 1, "kept": 0, "retracted": 0, "suppressed": 0, "after": None, "last": True}
    assert out.docs == riders
    assert out.notes == {"riders": True}


def test_a_first_capture_that_writes_nothing_leaves_its_riders_to_the_caller() -> None:
    deleted = supported("gone", "c1").model_copy(update={"deleted_by_user": True})
    out = planners.replace_page(view({"gone": deleted}, {"capture_runs/c1": None}), conversation_id="c1",
                                candidates={"gone": candidate("gone")}, first=True,
                                riders={"capture_runs/c1": {"revision": "r2"}})
    assert out.empty and out.summary["suppressed"] == 1
    assert "riders" not in out.notes


def test_a_marker_that_appeared_since_the_first_capture_read_is_a_race() -> None:
    with pytest.raises(Conflict) as raised:
        planners.replace_page(view({"new": None}, {"capture_runs/c1": MARKER}), conversation_id="c1",
                              candidates={"new": candidate("new")}, first=True)
    assert raised.value.code == "capture_raced"


def test_a_conversation_being_deleted_is_not_captured() -> None:
    deleting = {"captures": 1, "cascade": {"state": "running", "intent": "r", "pages": 1, "summary": {}}}
    with pytest.raises(ConversationDeleted):
        planners.replace_page(replace_view([], {}, marker=deleting), conversation_id="c1", candidates={},
                              first=False)


def test_the_last_page_keeps_unchanged_facts_withdraws_vanished_ones_and_suppresses_deleted_ones() -> None:
    items: dict[str, MemoryItem | None] = {
        "same": supported("same", "c1"),  # said again, in the same words
        "other": supported("other", "c1", "c2"),  # no longer said here, still said by c2
        "gone": supported("gone", "c1"),  # no longer said anywhere
        "deleted": supported("deleted", "c1").model_copy(update={"deleted_by_user": True, "status": "tombstoned"}),
    }
    same = candidate("same", quote="fact same")
    same.evidence[0].evidence_id = items["same"].evidence[0].evidence_id  # type: ignore[union-attr]
    out = planners.replace_page(replace_view(["gone", "other", "same"], items, marker=MARKER), conversation_id="c1",
                                candidates={"same": same, "deleted": candidate("deleted")}, first=False,
                                seen=frozenset({"gone", "other", "same"}))
    assert out.summary == {"created": 0, "kept": 1, "retracted": 1, "suppressed": 1, "after": "same", "last": True}
    by_id = {i.id: i for i in out.items}
    assert set(by_id) == {"gone", "other"}  # the unchanged fact is not rewritten
    assert by_id["gone"].status == "tombstoned" and by_id["gone"].content == "" and not by_id["gone"].deleted_by_user
    assert by_id["other"].status == "active"
    assert {e.source_id: e.status for e in by_id["other"].evidence} == {"c1": "tombstoned", "c2": "active"}
    assert out.docs == {"memory_graph_assertions/gone": None}


def test_a_kept_fact_with_new_quotes_takes_this_sources_new_evidence() -> None:
    existing = supported("same", "c1", "c2")
    out = planners.replace_page(replace_view(["same"], {"same": existing}, marker=MARKER), conversation_id="c1",
                                candidates={"same": candidate("same", quote="said anew")}, first=False,
                                seen=frozenset({"same"}))
    [item] = out.items
    assert [(e.source_id, e.quote_refs[0].quote) for e in item.evidence] == [("c2", "fact same"), ("c1", "said anew")]
    assert out.summary["kept"] == 1


def test_a_middle_page_only_withdraws_and_names_its_cursor() -> None:
    out = planners.replace_page(replace_view(["a", "b"], {"a": supported("a", "c1"), "b": supported("b", "c1"),
                                                          "new": None}, more=True, marker=MARKER),
                                conversation_id="c1", candidates={"new": candidate("new")}, first=False,
                                seen=frozenset({"a", "b"}), riders={"x/y": {}})
    assert out.summary == {"created": 0, "kept": 0, "retracted": 2, "suppressed": 0, "after": "b", "last": False}
    assert sorted(i.id for i in out.items) == ["a", "b"] and "x/y" not in out.docs


def test_a_cohort_that_moved_since_the_page_was_read_is_refused() -> None:
    with pytest.raises(CohortMoved):
        planners.replace_page(replace_view(["a", "new"], {"a": supported("a", "c1"), "new": supported("new", "c1")},
                                           marker=MARKER), conversation_id="c1", candidates={}, first=False,
                              seen=frozenset({"a"}))


# ------------------------------------------------------------------------------ review resolution
# docs/api.md and the domain model: accept and correct admit the item to Long-term with a fresh
# receipt and graph assertion (a correction's words become the content, cited as the user's own);
# reject hides it without it ever reaching Long-term; the entry must be open, within its deadline and
# bound to the item's current revision (stale_review / already_resolved otherwise); a resolved entry
# keeps the decision, not the text.

REVIEW = "review:m1:2:m0"
ROW = f"memory_review_queue/{REVIEW}"


def reviewed_item(**changes: object) -> MemoryItem:
    fields: dict = {"id": "m1", "uid": "u", "content": "User lives in Porto", "processing_state": "processed",
                    "route": "review", "review_id": REVIEW, "revision": 2, "ledger_commit_id": "c2",
                    "evidence": [Evidence(evidence_id="ev1", source_id="c1",
                                          quote_refs=[QuoteRef(segment_id="s0", quote="I live in Porto")])]}
    return MemoryItem(**{**fields, **changes}).settle()


def review_row(**changes: object) -> dict:
    row = open_row(NOW + timedelta(hours=1))
    row["content_hash"] = reviewed_item().content_hash
    return {**row, **changes}


def resolve(decision: str, item: MemoryItem | None = None, row: dict | None = None,
            correction: str | None = None) -> Plan:
    return planners.resolve_review(view({"m1": item or reviewed_item()}, {ROW: row or review_row()}),
                                   review_id=REVIEW, memory_id="m1", decision=decision, correction=correction, sensitivity=sensitivity)


def test_accepting_a_review_admits_the_item_and_closes_the_entry_without_text() -> None:
    out = resolve("accept")
    [item] = out.items
    assert (item.layer, item.route, item.reviewed, item.user_review) == ("long_term", "promote", True, True)
    assert item.promotion is not None and item.promotion["admission_receipt"]["revision"] == 3
    assert out.docs["memory_graph_assertions/m1"] is not None
    row = out.docs[ROW]
    assert row is not None
    assert (row["status"], row["decision"], row["content"], row["resolved_at"]) == ("resolved", "accept", "", NOW)
    assert out.summary == {"decision": "accept", "memory_id": "m1"}


def test_rejecting_a_review_hides_the_item_outside_long_term() -> None:
    out = resolve("reject")
    [item] = out.items
    assert (item.status, item.route, item.layer, item.user_review) == ("hidden", "reject", "short_term", False)
    assert "memory_graph_assertions/m1" not in out.docs


def test_a_correction_becomes_the_content_cited_as_the_users_words_and_is_labelled() -> None:
    out = resolve("correct", correction="User lives in Lisbon and has diabetes")
    [item] = out.items
    assert (item.content, item.edited, item.layer) == ("User lives in Lisbon and has diabetes", True, "long_term")
    correction = item.evidence[-1]
    assert (correction.source_type, correction.source_signal, correction.quote_refs[0].quote) == (
        "explicit", "review_correction", "User lives in Lisbon and has diabetes")
    # Regression pin, from the id contract (core/domain/ids.py: "ev_" + sha256("evidence|" + canonical
    # JSON of source_id, source_type, source_signal, "extractor/version" and the content hash)[:24],
    # worked out by hand once): stored evidence ids must not change.
    assert (correction.evidence_id, correction.source_id) == ("ev_0f2dea8d41b9233f0a581f9e", "m1")
    assert "health" in item.sensitivity_labels


def test_a_review_that_cannot_be_answered_any_more_is_refused() -> None:
    cases = [(reviewed_item(revision=3), review_row(), "stale_review"),
             (reviewed_item(), review_row(status="superseded"), "stale_review"),
             (reviewed_item(), review_row(status="resolved"), "already_resolved"),
             (reviewed_item(), review_row(expires_at=NOW), "stale_review")]
    for item, row, code in cases:
        with pytest.raises(Conflict) as raised:
            resolve("accept", item, row)
        assert raised.value.code == code


def test_a_review_of_a_missing_item_is_not_found() -> None:
    with pytest.raises(NotFound):
        planners.resolve_review(view({"m1": None}, {ROW: review_row()}), review_id=REVIEW, memory_id="m1",
                                decision="accept", sensitivity=sensitivity)


# ------------------------------------------------------------- what every plan carries: scheduling
# docs/architecture.md: a plan that makes an item pending (new, or not pending before) carries one
# schedule_consolidation outbox event, which the drain turns into the user's consolidation task.

def test_a_plan_that_makes_an_item_pending_asks_for_consolidation_once() -> None:
    fresh = MemoryItem(id="n", uid="u", content="new fact", processing_state="processed")
    out = schedule_event(view({"n": None}), Plan(items=[fresh]))
    assert [(a.memory_id, a.action, a.reason) for a in out.outbox] == [("", "schedule_consolidation",
                                                                         "consolidation_due")]
    assert schedule_event(view({"n": None}), out).outbox == out.outbox  # never twice


def test_a_plan_that_leaves_pending_items_pending_or_settles_them_asks_nothing() -> None:
    before = MemoryItem(id="p", uid="u", content="fact", processing_state="processed").settle()
    settled = before.model_copy(update={"route": "archive", "layer": "archive"})
    assert schedule_event(view({"p": before}), Plan(items=[before.model_copy()])).outbox == []
    assert schedule_event(view({"p": before}), Plan(items=[settled])).outbox == []


# ------------------------------------------------------------ what every plan carries: review re-issue
# docs/architecture.md: a plan that writes a new revision of an item in review re-issues its review
# entry for that revision (same question, conflicting memories and deadline, the current text) and
# closes the old one without its text; it closes the entry when the item leaves review, and leaves
# alone an entry the plan writes itself.

def test_a_new_revision_of_an_item_in_review_reissues_its_entry() -> None:
    before = in_review(promotion={"reason": "conflict", "review_expires_at": (NOW + timedelta(hours=5)).isoformat()})
    revised = before.model_copy(update={"visibility": "public"})
    out = review_queue.reissue_reviews(view({"m1": before}), Plan(items=[revised]))
    new_id = ids.review_id("m1", 3, ["m0"])
    [item] = out.items
    assert item.review_id == new_id and revised.review_id == "review:m1:2:m0"  # the given plan is not changed
    assert out.docs[review_queue.row_path(new_id)] == {
        "review_id": new_id, "memory_id": "m1", "revision": 3, "commit_id": "c5",
        "content_hash": ids.content_hash("User lives in Porto"), "content": "User lives in Porto",
        "conflicting": ["m0"], "reason": "conflict", "status": "open", "created_at": NOW,
        "expires_at": NOW + timedelta(hours=5)}
    assert out.docs[PATH] == {"review_id": "review:m1:2:m0", "memory_id": "m1", "status": "superseded",
                              "superseded_by": new_id, "content": "", "conflicting": [], "closed_at": NOW}


def test_an_item_leaving_review_closes_its_entry_and_a_plan_that_settles_it_is_left_alone() -> None:
    before = in_review()
    edited = before.model_copy(update={"route": None, "processing_state": "pending", "content": "User lives in Faro"})
    out = review_queue.reissue_reviews(view({"m1": before}), Plan(items=[edited]))
    assert out.items == [edited]
    assert out.docs == {PATH: {"review_id": "review:m1:2:m0", "memory_id": "m1", "status": "superseded",
                               "superseded_by": None, "content": "", "conflicting": [], "closed_at": NOW}}
    own = Plan(items=[before.model_copy()], docs={PATH: {"status": "resolved"}})
    assert review_queue.reissue_reviews(view({"m1": before}), own).docs == own.docs
