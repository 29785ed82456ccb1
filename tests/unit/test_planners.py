"""The domain's planners as values: a view built by hand in, a plan out, compared with what the
design says (docs/data-model.md: *Layers and legal states*, a review nobody answers within 72 hours
archives the item and Long-term items not updated for the configured time move to Archive; *What
each delete removes*, a conversation delete withdraws its evidence page by page, retracting what is
left without any and keeping its progress in the capture marker)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.domain import planners
from core.domain.documents import ApplyControl
from core.domain.plan import ApplyView
from core.domain.records import Evidence, MemoryItem, QuoteRef
from core.errors import CohortMoved

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
