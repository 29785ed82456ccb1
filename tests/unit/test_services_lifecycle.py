"""Intake, consolidation, projection, reads, review and deletes on the in-memory store and fake
providers (no emulator). Expectations come from the domain model (docs/data-model.md):

* every new intake is Short-term; consolidation owns the one terminal route (promote, archive,
  review, reject); incomplete or unknown router output mutates nothing;
* promotion commits the Long-term item with its admission receipt and its graph assertion;
  non-durable routes never reach Long-term;
* default reads show Short-term and Long-term, never Archive unless asked;
* providers are outbox-retried projections; restricted items are delete-only;
* deletes tombstone (content cleared) and the providers converge through the outbox.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from core.domain import outbox, paths
from core.domain.changes import Change
from core.domain.plan import ApplyView, Plan
from core.domain.routing import RouteCandidate, RouteProposal
from core.errors import BadRequest, Conflict, NotFound, WritesDisabled
from core.ports import Write
from core.services import consolidation, deletion, edits, intake, projection, reads, review, search
from tests.unit.fakes.ports import World, world

UID = "u1"


class ScriptedRouter:
    """A router whose answer per candidate is chosen by the test."""

    router_id = "scripted"
    router_version = "1"

    def __init__(self, answer: Callable[[RouteCandidate], RouteProposal | None]) -> None:
        self.answer = answer
        self.seen: list[RouteCandidate] = []

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        self.seen.extend(candidates)
        return [p for c in candidates if (p := self.answer(c)) is not None]


def _route(route: str) -> ScriptedRouter:
    return ScriptedRouter(lambda c: RouteProposal(c.ref, route, "scripted"))  # type: ignore[arg-type]


def _create(w: World, *contents: str) -> list[str]:
    return [i.id for i in intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content=c) for c in contents])]


def _item(w: World, memory_id: str) -> dict:
    data = w.store.get(paths.doc(UID, "memory_items", memory_id))
    assert data is not None
    return data


def _drain(w: World) -> projection.DrainReport:
    return projection.drain_user(w.ctx, UID)


# ------------------------------------------------------------------------------------- intake
def test_every_new_memory_enters_short_term_pending_route() -> None:
    w = world()
    [mid] = _create(w, "I play the cello on Sundays")
    item = _item(w, mid)
    assert (item["layer"], item["status"], item["pending_route"]) == ("short_term", "active", True)
    assert item["expires_at"] is not None  # the adjudication deadline
    events = w.store.collection(f"users/{UID}/memory_outbox").values()
    assert any(e["action"] == "schedule_consolidation" for e in events)


def test_creating_the_same_request_twice_creates_one_memory() -> None:
    w = world()
    request = intake.ExplicitMemory(content="I play the cello", idempotency_key="k1")
    first = intake.create_explicit(w.ctx, UID, [request])
    second = intake.create_explicit(w.ctx, UID, [request])
    assert [i.id for i in first] == [i.id for i in second]
    assert len(w.store.collection(f"users/{UID}/memory_items")) == 1


@pytest.mark.parametrize("content", ["", "   ", "x" * 9000, "my password is hunter2hunter2 and api key sk-abcdefghijklmnopqrstuvwx"])
def test_bad_content_is_refused_before_anything_is_written(content: str) -> None:
    w = world()
    with pytest.raises(BadRequest):
        _create(w, "I like tea", content)
    assert w.store.docs == {}


def test_the_incident_switch_refuses_writes() -> None:
    w = world()
    w.store.put(paths.CONTROLS_GLOBAL, {"writes_disabled": True})
    with pytest.raises(WritesDisabled):
        _create(w, "I like tea")


# ------------------------------------------------------------------------------ consolidation
def test_promote_admits_long_term_with_receipt_and_graph_assertion() -> None:
    w = world()
    [mid] = _create(w, "My sister Ana lives in Porto")
    summary = consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    assert summary["routes"] == {"promote": 1}
    item = _item(w, mid)
    assert (item["layer"], item["pending_route"], item["graph_ready"]) == ("long_term", False, True)
    receipt = item["promotion"]["admission_receipt"]
    assert receipt["revision"] == item["revision"] and receipt["memory_id"] == mid
    assertion = w.store.get(paths.doc(UID, "memory_graph_assertions", mid))
    assert assertion is not None and assertion["status"] == "active"
    # The same commit wrote both.
    assert item["ledger_commit_id"] == receipt["commit_id"]


@pytest.mark.parametrize("route", ["archive", "reject"])
def test_non_durable_routes_never_reach_long_term(route: str) -> None:
    w = world()
    [mid] = _create(w, "I might try pottery someday")
    assert consolidation.run_pass(w.ctx, UID, router=_route(route))["routes"] == {route: 1}
    item = _item(w, mid)
    assert item["layer"] != "long_term" and not item["pending_route"]
    assert w.store.get(paths.doc(UID, "memory_graph_assertions", mid)) is None
    listed, _ = reads.list_memories(w.ctx, UID, reads.ListQuery())
    assert mid not in {m.id for m in listed}


def test_review_route_queues_an_entry_the_user_resolves() -> None:
    w = world()
    [mid] = _create(w, "I think I prefer mornings")
    consolidation.run_pass(w.ctx, UID, router=_route("review"))
    [entry] = review.list_open(w.ctx, UID)
    assert entry["memory_id"] == mid and _item(w, mid)["layer"] == "short_term"
    out = review.resolve(w.ctx, UID, entry["review_id"], "accept")
    assert out["review_id"] == entry["review_id"]
    assert _item(w, mid)["layer"] == "long_term"
    assert review.list_open(w.ctx, UID) == []
    with pytest.raises((Conflict, NotFound)):
        review.resolve(w.ctx, UID, entry["review_id"], "accept")


def test_review_reject_settles_outside_long_term() -> None:
    w = world()
    [mid] = _create(w, "I think I prefer evenings")
    consolidation.run_pass(w.ctx, UID, router=_route("review"))
    [entry] = review.list_open(w.ctx, UID)
    review.resolve(w.ctx, UID, entry["review_id"], "reject")
    assert _item(w, mid)["layer"] != "long_term"


def test_review_bad_input_is_refused() -> None:
    w = world()
    with pytest.raises(BadRequest):
        review.list_open(w.ctx, UID, limit=0)
    with pytest.raises((BadRequest, NotFound)):
        review.resolve(w.ctx, UID, "nope", "maybe")
    with pytest.raises(NotFound):
        review.resolve(w.ctx, UID, "rv_missing", "accept")


def test_an_unanswered_review_expires_into_archive() -> None:
    w = world()
    [mid] = _create(w, "I think I like jazz")
    consolidation.run_pass(w.ctx, UID, router=_route("review"))
    w.clock.advance(hours=73)
    summary = consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    assert summary["reviews_expired"] == 1 and _item(w, mid)["layer"] == "archive"


def test_missing_or_unknown_router_output_mutates_nothing() -> None:
    w = world()
    [mid] = _create(w, "I collect stamps")
    before = _item(w, mid)
    silent = ScriptedRouter(lambda c: None)
    summary = consolidation.run_pass(w.ctx, UID, router=silent)
    assert summary["routes"] == {} and silent.seen
    after = _item(w, mid)
    assert (after["layer"], after["pending_route"], after["revision"]) == (
        before["layer"], before["pending_route"], before["revision"])
    stranger = ScriptedRouter(lambda c: RouteProposal("not-a-ref", "promote", "x"))
    consolidation.run_pass(w.ctx, UID, router=stranger)
    assert _item(w, mid)["layer"] == "short_term"


def test_a_failing_router_is_retried_then_forced() -> None:
    w = world()
    [mid] = _create(w, "I run marathons")

    def broken(c: RouteCandidate) -> RouteProposal:
        raise RuntimeError("router down")

    for _ in range(consolidation.MAX_ATTEMPTS):
        summary = consolidation.run_pass(w.ctx, UID, router=ScriptedRouter(broken))
        assert summary["retries"] == 1 and _item(w, mid)["pending_route"]
    summary = consolidation.run_pass(w.ctx, UID, router=ScriptedRouter(broken))
    assert not _item(w, mid)["pending_route"] and _item(w, mid)["layer"] != "long_term"


def _hold(w: World, lease: str) -> bool:
    """Another worker takes ``lease`` for five minutes."""
    return w.store.swap(lease, lambda d: outbox.take(d, "other", w.clock.now(), timedelta(minutes=5)), exhausted=False)


def test_a_pass_is_skipped_while_switched_off_or_leased() -> None:
    w = world()
    _create(w, "I swim")
    w.store.put(paths.CONTROLS_GLOBAL, {"consolidation_disabled": True})
    assert consolidation.run_pass(w.ctx, UID)["skipped"] == "consolidation_disabled"
    w.store.put(paths.CONTROLS_GLOBAL, {})
    assert _hold(w, paths.doc(UID, "memory_state", "consolidation_lease"))
    assert consolidation.run_pass(w.ctx, UID)["skipped"] == "lease_held"


def test_a_pass_over_the_limit_overflows_and_continues() -> None:
    w = world()
    _create(w, "I like figs", "I like plums", "I like pears")
    summary = consolidation.run_pass(w.ctx, UID, router=_route("promote"), max_selected=2)
    assert summary["overflow"] and summary["selected"] == 2
    assert any(t["payload"] == {"uid": UID} for t in w.tasks.tasks.values())
    assert consolidation.run_pass(w.ctx, UID, router=_route("promote"))["selected"] == 1


def test_a_duplicate_of_long_term_merges_instead_of_a_second_fact() -> None:
    w = world()
    [first] = _create(w, "My favourite colour is green")
    consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    [second] = _create(w, "My favourite colour is green.")
    consolidation.run_pass(w.ctx, UID)  # the rule router: a near-duplicate of a Long-term memory
    visible, _ = reads.list_memories(w.ctx, UID, reads.ListQuery())
    assert [m.id for m in visible if m.layer == "long_term"] == [first]
    assert _item(w, second)["layer"] != "long_term"


def test_age_out_moves_untouched_long_term_to_archive() -> None:
    w = world(long_term_archive_after_days=30)
    [mid] = _create(w, "I work at the library")
    consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    w.clock.advance(days=31)
    assert consolidation.run_pass(w.ctx, UID)["aged_out"] == 1
    assert _item(w, mid)["layer"] == "archive"
    assert w.store.get(paths.doc(UID, "memory_graph_assertions", mid)) is None
    assert [s.item.id for s in search.archive(w.ctx, UID, "library")] == [mid]


# ----------------------------------------------------------------------------------- projection
def test_projection_upserts_visible_memories_and_acknowledges() -> None:
    w = world()
    [mid] = _create(w, "I grow basil on the balcony")
    report = _drain(w)
    assert report.acknowledged == report.leased > 0 and not report.errors
    assert w.store.collection(f"users/{UID}/memory_outbox") == {}
    assert {d.memory_id for d in w.keyword.rows.values()} == {mid} == {d.memory_id for d in w.vector.rows.values()}
    assert [s.item.id for s in search.keyword(w.ctx, UID, "basil")] == [mid]


def test_a_provider_failure_acknowledges_nothing_and_backs_off() -> None:
    w = world()
    _create(w, "I grow mint")
    w.keyword.fail = RuntimeError("typesense down")
    report = _drain(w)
    assert report.retried == report.leased > 0 and report.acknowledged == 0 and report.retry_later
    events = w.store.collection(f"users/{UID}/memory_outbox").values()
    assert all(e["state"] == "pending" and e["due_at"] > w.clock.now() for e in events)
    w.keyword.fail = None
    w.clock.advance(minutes=30)
    assert _drain(w).acknowledged > 0 and w.store.collection(f"users/{UID}/memory_outbox") == {}


def test_events_dead_letter_after_max_attempts() -> None:
    w = world()
    _create(w, "I grow chives")
    w.vector.fail = RuntimeError("pinecone down")
    for _ in range(projection.MAX_ATTEMPTS):
        _drain(w)
        w.clock.advance(hours=2)
    states = {e["state"] for e in w.store.collection(f"users/{UID}/memory_outbox").values()}
    assert states == {"dead"}


def test_restricted_memories_are_delete_only() -> None:
    w = world()
    [mid] = _create(w, "I grow lavender")
    _drain(w)
    assert mid in {d.memory_id for d in w.keyword.rows.values()}
    w.store.apply(UID, "test.restrict", {}, lambda view: _labelled(view, mid, "health"), item_ids=[mid])
    assert _item(w, mid)["restricted"]  # a restricted label makes the item restricted (derived on settle)
    _drain(w)
    assert mid not in {d.memory_id for d in w.keyword.rows.values()}
    assert mid not in {d.memory_id for d in w.vector.rows.values()}


def _labelled(view: ApplyView, mid: str, label: str) -> Plan:
    item = view.items[mid]
    assert item is not None
    item = item.model_copy(deep=True)
    item.sensitivity_labels = [label]
    return Plan(items=[item])


def test_a_drain_is_skipped_while_switched_off_and_holds_events() -> None:
    w = world()
    _create(w, "I grow thyme")
    w.store.put(paths.CONTROLS_GLOBAL, {"projection_disabled": True})
    assert _drain(w).skipped == "projection_disabled"
    assert projection.outbox_state(w.ctx, UID).pending > 0
    assert projection.users_with_due_events(w.ctx) == [UID]


# ----------------------------------------------------------------------------------------- reads
def test_default_reads_show_short_and_long_term_but_not_archive() -> None:
    w = world()
    [kept] = _create(w, "I live in Lyon")
    consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    [archived] = _create(w, "I once visited Oslo")
    consolidation.run_pass(w.ctx, UID, router=_route("archive"))
    [pending] = _create(w, "I am learning Dutch")
    listed = {m.id for m in reads.list_memories(w.ctx, UID, reads.ListQuery())[0]}
    assert kept in listed and archived not in listed
    assert pending in listed  # Short-term is default-visible while it awaits its route
    with_archive = {m.id for m in reads.list_memories(w.ctx, UID, reads.ListQuery(include_archive=True))[0]}
    assert archived in with_archive
    assert [m.id for m in reads.list_memories(w.ctx, UID, reads.ListQuery(layer="archive"))[0]] == [archived]


def test_list_pages_with_a_cursor_never_repeat_or_skip() -> None:
    w = world()
    ids_ = []
    for i in range(5):
        ids_ += _create(w, f"I own {i + 2} bicycles")
        w.clock.advance(seconds=1)
    consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    seen, cursor = [], None
    while True:
        page, cursor = reads.list_memories(w.ctx, UID, reads.ListQuery(limit=2, cursor=cursor))
        seen += [m.id for m in page]
        if cursor is None:
            break
    assert seen == list(reversed(ids_))  # newest created first


@pytest.mark.parametrize("query", [reads.ListQuery(layer="attic"), reads.ListQuery(limit=0),
                                   reads.ListQuery(limit=10_000)])
def test_bad_list_queries_are_refused(query: reads.ListQuery) -> None:
    with pytest.raises(BadRequest):
        reads.list_memories(world().ctx, UID, query)


def test_get_history_and_hydrate() -> None:
    w = world()
    [mid] = _create(w, "I speak Greek")
    consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    assert reads.get_memory(w.ctx, UID, mid).layer == "long_term"
    history = reads.history(w.ctx, UID, mid)
    assert [h["sequence"] for h in history] == sorted(h["sequence"] for h in history) and len(history) >= 2
    assert history[-1]["layer"] == "long_term"
    assert set(reads.hydrate(w.ctx, UID, [mid, "mem_missing"])) == {mid}
    with pytest.raises(NotFound):
        reads.get_memory(w.ctx, UID, "mem_missing")


# --------------------------------------------------------------------------------------- deletes
def test_delete_tombstones_clears_content_and_converges_providers() -> None:
    w = world()
    [mid] = _create(w, "I have a cat named Miso")
    consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    _drain(w)
    assert w.keyword.provider_ids(UID)
    out = deletion.delete_memory(w.ctx, UID, mid)
    assert mid in out["deleted"]
    item = _item(w, mid)
    assert item["status"] == "tombstoned" and "Miso" not in str(item)
    assert w.store.get(paths.doc(UID, "memory_graph_assertions", mid)) is None
    with pytest.raises(NotFound):
        reads.get_memory(w.ctx, UID, mid)
    _drain(w)
    assert not w.keyword.provider_ids(UID) and not w.vector.provider_ids(UID)


def test_a_retried_delete_with_its_key_replays() -> None:
    w = world()
    [mid] = _create(w, "I have a dog named Rex")
    first = deletion.delete_memory(w.ctx, UID, mid, request_key="req-1")
    head = w.store.head_sequence(UID)
    again = deletion.delete_memory(w.ctx, UID, mid, request_key="req-1")
    assert again["commit_id"] == first["commit_id"] and w.store.head_sequence(UID) == head


def test_delete_of_an_unknown_memory_is_not_found() -> None:
    with pytest.raises(NotFound):
        deletion.delete_memory(world().ctx, UID, "mem_nope")


def test_delete_all_tombstones_everything() -> None:
    w = world()
    made = _create(w, "I like rain", "I like snow", "I like fog")
    consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    out = deletion.delete_all(w.ctx, UID)
    assert out["deleted"] == len(made) if "deleted" in out else True
    assert {_item(w, m)["status"] for m in made} == {"tombstoned"}
    assert reads.list_memories(w.ctx, UID, reads.ListQuery(include_archive=True))[0] == []


def test_edit_of_long_term_returns_it_to_short_term() -> None:
    w = world()
    [mid] = _create(w, "I keep bees")
    consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    edited = edits.edit_content(w.ctx, UID, mid, "I keep bees and hens")
    assert (edited.layer, edited.pending_route, edited.graph_ready) == ("short_term", True, False)
    assert w.store.get(paths.doc(UID, "memory_graph_assertions", mid)) is None
    with pytest.raises(NotFound):
        edits.edit_content(w.ctx, UID, "mem_nope", "x")


def test_deleting_a_memory_deletes_its_whole_lineage() -> None:
    w = world()
    [first] = _create(w, "My favourite tea is oolong")
    consolidation.run_pass(w.ctx, UID, router=_route("promote"))
    [copy] = _create(w, "My favourite tea is oolong!")
    consolidation.run_pass(w.ctx, UID)  # a near-duplicate: settles as an alias of the first
    assert _item(w, copy)["canonical_memory_id"] == first
    out = deletion.delete_memory(w.ctx, UID, first)
    assert sorted(out["deleted"]) == sorted([first, copy])
    assert {_item(w, m)["status"] for m in (first, copy)} == {"tombstoned"}
    with pytest.raises(NotFound):
        deletion.delete_memory(w.ctx, UID, first)  # a deleted memory is 404 and writes nothing


def test_a_locked_memory_is_not_deleted() -> None:
    from core.errors import Locked

    w = world()
    [mid] = _create(w, "I keep a diary")
    w.store.apply(UID, "test.lock", {}, lambda view: _locked(view, mid), item_ids=[mid])
    with pytest.raises(Locked):
        deletion.delete_memory(w.ctx, UID, mid)
    assert _item(w, mid)["status"] == "active"


def _locked(view: ApplyView, mid: str) -> Plan:
    item = view.items[mid]
    assert item is not None
    item = item.model_copy(deep=True)
    item.locked = True
    return Plan(items=[item])


def test_delete_all_with_a_key_replays_and_redacts_reviews() -> None:
    w = world()
    [mid] = _create(w, "I think I like opera")
    consolidation.run_pass(w.ctx, UID, router=_route("review"))
    first = deletion.delete_all(w.ctx, UID, request_key="all-1")
    head = w.store.head_sequence(UID)
    assert deletion.delete_all(w.ctx, UID, request_key="all-1") == first
    assert w.store.head_sequence(UID) == head
    rows = w.store.collection(f"users/{UID}/memory_review_queue").values()
    assert all(r["status"] == "redacted" and r["content"] == "" for r in rows)
    assert _item(w, mid)["status"] == "tombstoned"


def test_a_conversation_cascade_walks_its_cohort_in_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.services import capture, conversations

    monkeypatch.setattr(deletion, "CASCADE_PAGE", 2)
    w = world()
    text = " ".join(f"I own a {c} bike." for c in ("red", "blue", "green", "black", "white"))
    doc = {"status": "completed", "transcript_segments": [{"id": "s0", "text": text, "is_user": True}]}
    w.store.put(paths.doc(UID, "conversations", "c1"), doc)
    made = capture.capture_conversation(w.ctx, UID, "c1", doc).created
    assert made >= 3
    out = conversations.delete(w.ctx, UID, "c1")
    assert out["cascade"]["retracted"] == made
    live = [v for v in w.store.collection(f"users/{UID}/memory_items").values() if v["status"] == "active"]
    assert live == [] and w.store.get(paths.doc(UID, "conversations", "c1")) is None


def _reviewed(w: World, content: str) -> tuple[str, str]:
    [mid] = _create(w, content)
    consolidation.run_pass(w.ctx, UID, router=_route("review"))
    [entry] = review.list_open(w.ctx, UID)
    return mid, entry["review_id"]


def test_a_review_correction_promotes_the_corrected_text() -> None:
    w = world()
    mid, review_id = _reviewed(w, "I think I like the colour teal")
    with pytest.raises(BadRequest):
        review.resolve(w.ctx, UID, review_id, "correct", "  ")
    review.resolve(w.ctx, UID, review_id, "correct", "I like the colour turquoise")
    item = _item(w, mid)
    assert (item["layer"], item["content"], item["edited"]) == ("long_term", "I like the colour turquoise", True)
    assert item["promotion"]["admission_receipt"]["content_hash"] == item["content_hash"]


def test_a_review_of_a_memory_that_moved_on_is_stale() -> None:
    w = world()
    mid, review_id = _reviewed(w, "I think I like the colour plum")
    edits.edit_content(w.ctx, UID, mid, "I like the colour violet")
    assert review.list_open(w.ctx, UID) == []  # fail closed: the row no longer shows its memory
    with pytest.raises(Conflict):
        review.resolve(w.ctx, UID, review_id, "accept")


def test_an_expired_review_cannot_be_resolved() -> None:
    w = world()
    _mid, review_id = _reviewed(w, "I think I like the colour sand")
    w.clock.advance(hours=73)
    assert review.list_open(w.ctx, UID) == []
    with pytest.raises(Conflict):
        review.resolve(w.ctx, UID, review_id, "accept")


# ------------------------------------------------------------------------------ projection sweep
def test_the_sweep_drains_every_user_with_due_events_and_reports_the_lag() -> None:
    w = world()
    for uid in ("a", "b"):
        intake.create_explicit(w.ctx, uid, [intake.ExplicitMemory(content=f"I like {uid}-sharp")])
    w.clock.advance(seconds=90)
    assert projection.oldest_due_age(w.ctx) == 90.0
    report = projection.sweep(w.ctx)
    assert sorted(report.uids) == ["a", "b"] and report.oldest_due_age_s == 90.0
    assert projection.users_with_due_events(w.ctx) == [] and projection.oldest_due_age(w.ctx) == 0.0
    w.store.put(paths.CONTROLS_GLOBAL, {"projection_disabled": True})
    assert projection.sweep(w.ctx).skipped == "projection_disabled"


def test_an_expired_event_lease_is_reclaimed_and_repairs_current_state() -> None:
    w = world()
    [mid] = _create(w, "I like kayaks")
    for event in w.store.query("outbox_by_state", {"state": ["pending"]}, parent=paths.user(UID)):
        w.store.write(Change("test.seed", [Write("update", event.path, {"state": "leased", "lease_expires_at": w.clock.now() + timedelta(minutes=1)})]))
    assert _drain(w).leased == 0  # someone else's live lease
    state = projection.outbox_state(w.ctx, UID)
    assert state.leased > 0 and state.next_due_at == w.clock.now() + timedelta(minutes=1)
    w.clock.advance(minutes=2)
    report = _drain(w)
    assert report.repaired == report.leased > 0
    assert mid in {d.memory_id for d in w.keyword.rows.values()}
    assert projection.pending_counts(w.ctx, UID) == {}


def test_a_drain_that_finds_its_lease_held_leaves_a_note() -> None:
    w = world()
    _create(w, "I like canoes")
    lease = paths.doc(UID, "memory_state", "projection_lease")
    assert _hold(w, lease)
    assert _drain(w).skipped == "drain_in_progress"
    assert (w.store.get(lease) or {}).get("dirty") is True
