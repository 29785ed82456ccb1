"""Consolidation's batch planner as a value (:func:`core.domain.consolidation.settle_routes`): a view
built by hand in, a plan out, compared with the design (domain model: every pending Short-term item
settles through exactly one terminal route; promotion admits to Long-term with a receipt and a graph
assertion in the same commit and keeps what it supersedes as history, valid until the new statement;
an item not pending at the decided revision is never routed twice; copies of one fact end as one
Long-term memory; docs/data-model.md: a review nobody answers expires after 72 hours)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.adapters.rules import sensitivity
from core.domain import ids
from core.domain.consolidation import settle_routes
from core.domain.documents import ApplyControl
from core.domain.plan import ApplyView
from core.domain.records import Evidence, MemoryItem, QuoteRef
from core.domain.routing import fact_key

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
PLANNER = "consolidation/test"


def view(*items: MemoryItem) -> ApplyView:
    return ApplyView(uid="u", now=NOW, control=ApplyControl(), items={i.id: i for i in items}, docs={},
                     sequence=7, commit_id="c7", operation_id="op")


def pending(memory_id: str, content: str = "", *, revision: int = 1, **changes: object) -> MemoryItem:
    text = content or f"fact {memory_id}"
    return MemoryItem(id=memory_id, uid="u", content=text, processing_state="processed", revision=revision,
                      evidence=[Evidence(evidence_id=f"ev_{memory_id}", source_id="c1",
                                         quote_refs=[QuoteRef(segment_id="s0", quote=text)])],
                      **changes).settle()


def long_term(memory_id: str, content: str = "") -> MemoryItem:
    return pending(memory_id, content, layer="long_term", route="promote", valid_from=NOW - timedelta(days=30))


def settle(v: ApplyView, decisions: dict, *, revisions: dict | None = None, earlier: dict | None = None):  # noqa: ANN201
    return settle_routes(v, revisions=revisions or dict.fromkeys(decisions, 1), decisions=decisions,
                         earlier=earlier or {}, planner=PLANNER, sensitivity=sensitivity)


def test_each_route_settles_its_item_once() -> None:
    v = view(pending("p"), pending("a"), pending("r"), pending("x"))
    out = settle(v, {"p": ("promote", [], None, "new"), "a": ("archive", [], None, "old"),
                     "r": ("review", [], None, "unsure"), "x": ("reject", [], None, "noise")})
    by_id = {i.id: i for i in out.items}
    assert (by_id["p"].layer, by_id["a"].layer, by_id["r"].layer) == ("long_term", "archive", "short_term")
    assert by_id["x"].status == "hidden"
    assert {i.id: i.route for i in out.items} == {"p": "promote", "a": "archive", "r": "review", "x": "reject"}
    assert out.summary == {"routes": {"promote": 1, "archive": 1, "review": 1, "reject": 1}, "untouched": 0}
    # promotion: the admission receipt and the graph assertion in the same plan
    assert by_id["p"].promotion is not None and by_id["p"].promotion["admission_receipt"]["revision"] == 2
    assert set(out.docs) == {"memory_graph_assertions/p", f"memory_review_queue/{by_id['r'].review_id}"}
    assert out.notes == {"settled": {fact_key("fact p", "user", None): "p"}}


def test_a_review_asks_about_the_next_revision_for_72_hours() -> None:
    out = settle(view(pending("r"), long_term("lt")), {"r": ("review", ["lt"], None, "conflict")})
    [item] = out.items
    assert item.review_id == ids.review_id("r", 2, ["lt"])
    row = out.docs[f"memory_review_queue/{item.review_id}"]
    assert row is not None
    assert (row["status"], row["revision"], row["commit_id"], row["conflicting"], row["reason"]) == (
        "open", 2, "c7", ["lt"], "conflict")
    assert row["expires_at"] == NOW + timedelta(hours=72)


def test_a_promotion_keeps_what_it_supersedes_as_history() -> None:
    moved = NOW - timedelta(days=2)  # the conversation that says so took place then
    out = settle(view(pending("new", "User lives in Lisbon", valid_from=moved), long_term("old", "User lives in Porto")),
                 {"new": ("promote", ["old"], None, "moved")})
    by_id = {i.id: i for i in out.items}
    assert by_id["new"].supersedes == ["old"] and by_id["new"].layer == "long_term"
    old = by_id["old"]
    assert (old.status, old.superseded_by, old.canonical_memory_id, old.graph_ready) == (
        "superseded", "new", None, False)  # an ending is not lineage: the old fact keeps its own
    assert old.valid_to == moved  # true from its own beginning until the statement that ended it
    assert out.docs["memory_graph_assertions/old"] is None and out.docs["memory_graph_assertions/new"] is not None


def test_an_item_not_pending_at_the_decided_revision_is_untouched() -> None:
    out = settle(view(pending("moved", revision=3), pending("done", layer="long_term", route="promote")),
                 {"moved": ("promote", [], None, ""), "done": ("archive", [], None, "")},
                 revisions={"moved": 2, "done": 1})
    assert out.empty and out.summary == {"routes": {}, "untouched": 2}


def test_an_unprocessed_item_holding_a_secret_is_rejected_not_routed() -> None:
    secret = MemoryItem(id="s", uid="u", content="my password is hunter2hunter2", processing_state="pending",
                        revision=1).settle()
    out = settle(view(secret), {"s": ("promote", [], None, "")})
    [item] = out.items
    assert (item.status, item.route, item.content, item.processing_state) == ("hidden", "reject", "", "processed")
    assert out.summary["routes"] == {"reject": 1} and out.docs == {}


def test_copies_of_one_fact_end_as_one_long_term_memory() -> None:
    out = settle(view(pending("b", "User has a cat"), pending("a", "User has a cat")),
                 {"a": ("promote", [], None, ""), "b": ("archive", [], None, "")})
    by_id = {i.id: i for i in out.items}
    assert by_id["a"].layer == "long_term" and by_id["a"].record_status == "active"
    assert (by_id["b"].layer, by_id["b"].canonical_memory_id) == ("archive", "a")
    assert sorted(e.evidence_id for e in by_id["a"].evidence) == ["ev_a", "ev_b"]  # the survivor absorbs it
    assert out.notes["settled"] == {fact_key("User has a cat", "user", None): "a"}


def test_a_fact_already_in_long_term_absorbs_the_new_copy() -> None:
    key = fact_key("User has a cat", "user", None)
    out = settle(view(pending("copy", "User has a cat"), long_term("known", "User has a cat")),
                 {"copy": ("promote", [], None, "")}, earlier={key: "known"})
    by_id = {i.id: i for i in out.items}
    assert (by_id["copy"].status, by_id["copy"].superseded_by) == ("superseded", "known")
    assert "ev_copy" in {e.evidence_id for e in by_id["known"].evidence}
    assert out.docs["memory_graph_assertions/known"] is not None  # re-admitted: its evidence changed
    assert out.notes["settled"] == {}  # the pass already knows the survivor; nothing new settled
