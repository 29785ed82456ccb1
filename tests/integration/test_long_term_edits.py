"""Edits of Long-term memories through the real services against the Firestore emulator (issue 12).

Hypothesis generates sequences of user edits (visibility, review flag, category, content — within
and over the configured content limit), consolidation passes (the rule router, or routers that send
everything to review, supersede the neighbours or merge into one) and review resolutions (accept,
reject, correct — within and over the limit) on two memories that start in Long-term. A small reference model tracks what the user asked for.
After every step:

* nothing raised except the refusals the model expects (400 over the limit, 404 once rejected), and
  a refused step changed no canonical document;
* the stored user-facing fields match the model; a metadata edit kept the layer, a content edit
  sent the item to Short-term, processed in the edit's own request (issue 27: it stays listed);
* every stored item is a legal combination of the legal-states table (docs/data-model.md), and every active Long-term item has a receipt that
  validates for its current revision and a graph assertion for that revision (no other item has
  one), no admitted item is an alias or ancestor, and lineage links agree both ways (an edited
  alias or superseded ancestor leaves its lineage); the ledger is gapless.

The limit comes from ``Settings.max_content_chars`` (set small here), for every path that writes
content. Runs on its own Firestore project so the stack's scheduled passes stay out of the way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import config
from core.adapters.rules import RuleRouter
from core.bootstrap import Context
from core.domain.admission import receipt_problems
from core.domain.plan import ApplyView, Plan
from core.domain.records import MemoryItem
from core.domain.routing import RouteCandidate, RouteProposal
from core.domain.states import Layer, Status
from core.errors import AdmissionRefused, BadRequest, NotFound, StrataError
from core.services import consolidation, deletion, edits, intake, reads, review
from core.services.intake import ExplicitMemory
from tests.integration.test_consolidation_properties import ISOLATED_PROJECT, RecordingPublisher, new_uid
from tests.support.firestore_checks import assert_all_items_legal, assert_ledger_gapless, canonical_snapshot

pytestmark = pytest.mark.integration

LIMIT = 120
START = ("I keep bees on my roof", "I play the cello on Sundays")
# Per memory, texts that share words with the other memory's texts, so consolidation finds it as a
# neighbour (the supersede and merge routers then tie the two into one lineage).
TEXTS = (("I keep bees and a cello on my roof", "I keep three beehives in my garden", "I keep bees on my roof"),
         ("I play the cello on my roof", "I practise the cello every evening", "I play the cello on Sundays"))
CATEGORIES = ("system", "interesting", "hobbies", "workflow")
TOO_LONG = "I keep " + "very " * 30 + "many notes"  # > LIMIT once whitespace is collapsed
HYPOTHESIS = settings(max_examples=20, deadline=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


class ReviewAll:
    router_id, router_version = "review-all", "1"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        return [RouteProposal(c.ref, "review", "please decide") for c in candidates]


class SupersedeAll:
    """Promotes every candidate, superseding each Long-term neighbour the server offered."""

    router_id, router_version = "supersede-all", "1"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        return [RouteProposal(c.ref, "promote", "newer statement",
                              supersedes=tuple(n.ref for n in c.neighbours if n.layer == "long_term"))
                for c in candidates]


class MergeAll:
    """Promotes every candidate as a duplicate of its first Long-term neighbour (it becomes an alias)."""

    router_id, router_version = "merge-all", "1"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        out = []
        for c in candidates:
            long_term = [n.ref for n in c.neighbours if n.layer == "long_term"]
            out.append(RouteProposal(c.ref, "promote", "duplicate", duplicate_of=long_term[0] if long_term else None))
        return out


ROUTERS = {"review": ReviewAll(), "supersede": SupersedeAll(), "merge": MergeAll()}


def limited_context() -> Context:
    settings_ = config.load(project_id=ISOLATED_PROJECT, max_content_chars=LIMIT)
    return Context(settings_, publisher=RecordingPublisher(), router=RuleRouter())


@pytest.fixture
def ctx(stack: dict[str, Any]) -> Context:
    return limited_context()


def _items(ctx: Context, uid: str) -> dict[str, MemoryItem]:
    return {s.id: MemoryItem.from_store(s.to_dict()) for s in ctx.paths.col(uid, "memory_items").stream()}


def _assertions(ctx: Context, uid: str) -> dict[str, dict[str, Any]]:
    return {s.id: s.to_dict() for s in ctx.paths.col(uid, "memory_graph_assertions").stream()}


def assert_admissions_sound(ctx: Context, uid: str) -> dict[str, MemoryItem]:
    """Every active Long-term item validates for its current revision; nothing else has an assertion."""
    items, assertions = _items(ctx, uid), _assertions(ctx, uid)
    for memory_id, item in items.items():
        assertion = assertions.get(memory_id)
        if item.layer == Layer.LONG_TERM and item.record_status == Status.ACTIVE:
            assert receipt_problems(item, assertion) == [], memory_id
            assert assertion is not None and assertion["revision"] == item.revision
            assert item.promotion and item.promotion["admission_receipt"]["revision"] == item.revision
            # An admitted fact is nobody's alias or ancestor (reads would fold it away).
            assert item.superseded_by is None and item.canonical_memory_id is None, memory_id
        else:
            assert assertion is None, (memory_id, item.layer, item.status)
        if item.record_status != Status.TOMBSTONED:
            # Lineage is consistent both ways: whatever an item supersedes points back at it.
            for ancestor in item.supersedes:
                assert items[ancestor].superseded_by == memory_id, (memory_id, ancestor)
    return items


@dataclass
class Model:
    """What the user asked for, per memory (independent of the code under test)."""

    content: str
    visibility: str = "private"
    category: str = "system"
    reviewed: bool = False
    user_review: bool | None = None
    alive: bool = True


def _start(ctx: Context, uid: str) -> list[str]:
    items = intake.create_explicit(ctx, uid, [ExplicitMemory(content=c, category="system") for c in START])
    assert consolidation.run_pass(ctx, uid)["routes"] == {"promote": len(START)}
    return [i.id for i in items]


STEP = st.one_of(
    st.tuples(st.just("visibility"), st.integers(0, 1), st.sampled_from(["public", "private"])),
    st.tuples(st.just("review"), st.integers(0, 1), st.booleans()),
    st.tuples(st.just("category"), st.integers(0, 1), st.sampled_from(CATEGORIES)),
    st.tuples(st.just("content"), st.integers(0, 1), st.integers(0, len(TEXTS[0]) - 1)),
    st.tuples(st.just("content_too_long"), st.integers(0, 1), st.none()),
    st.tuples(st.just("consolidate"), st.none(), st.sampled_from(["rules", "review", "supersede", "merge"])),
    st.tuples(st.just("resolve"), st.integers(0, 1), st.sampled_from(["accept", "reject", "correct",
                                                                       "correct_too_long"])),
)


def _step(ctx: Context, uid: str, ids_: list[str], models: list[Model], step: tuple[str, Any, Any]) -> None:
    kind, index, value = step
    memory_id = ids_[index] if index is not None else ""
    model = models[index] if index is not None else None
    before = _items(ctx, uid).get(memory_id)
    if kind == "consolidate":
        consolidation.run_pass(ctx, uid, router=ROUTERS.get(value))
        return
    assert model is not None and before is not None
    if kind == "resolve":
        if before.route != "review" or not before.review_id or before.layer != Layer.SHORT_TERM:
            return  # nothing open for this memory
        decision = "correct" if value == "correct_too_long" else value
        correction = {"correct": TEXTS[index][0] + " daily", "correct_too_long": TOO_LONG}.get(value)
        if value == "correct_too_long":
            snapshot = canonical_snapshot(ctx, uid)
            with pytest.raises(BadRequest):
                review.resolve(ctx, uid, before.review_id, decision, correction)
            assert canonical_snapshot(ctx, uid) == snapshot
            return
        review.resolve(ctx, uid, before.review_id, decision, correction)
        after = _items(ctx, uid)[memory_id]
        model.reviewed, model.user_review = True, decision != "reject"
        if decision == "reject":
            model.alive = False
            return
        model.content = correction or model.content
        assert (after.layer, after.status) == ("long_term", "active")
        return
    if not model.alive:
        with pytest.raises(NotFound):
            _edit(ctx, uid, memory_id, kind, value, index)
        return
    if kind == "content_too_long":
        snapshot = canonical_snapshot(ctx, uid)
        with pytest.raises(BadRequest):
            edits.edit_content(ctx, uid, memory_id, TOO_LONG)
        assert canonical_snapshot(ctx, uid) == snapshot
        return
    returned = _edit(ctx, uid, memory_id, kind, value, index)
    after = _items(ctx, uid)[memory_id]
    assert returned.revision == after.revision
    if kind == "content":
        text = TEXTS[index][value]
        if text != model.content:
            # Back to Short-term, processed in the edit's request (issue 27: it stays listed) and
            # unadmitted: a former Long-term item waits for consolidation to re-admit it.
            assert (after.layer, after.status, after.processing_state) == ("short_term", "active", "processed")
            assert after.pending_route and after.promotion is None
        model.content = text
    else:
        # A metadata edit never moves the item: same layer, status and content.
        assert (after.layer, after.status, after.processing_state, after.content) == (
            before.layer, before.status, before.processing_state, before.content)
        if kind == "visibility":
            model.visibility = value
        elif kind == "category":
            model.category = value
        else:
            model.reviewed, model.user_review = True, value


def _edit(ctx: Context, uid: str, memory_id: str, kind: str, value: Any, index: int) -> MemoryItem:
    if kind == "visibility":
        return edits.set_visibility(ctx, uid, memory_id, value)
    if kind == "review":
        return edits.set_user_review(ctx, uid, memory_id, value)
    if kind == "category":
        return edits.set_category(ctx, uid, memory_id, value)
    if kind == "content":
        return edits.edit_content(ctx, uid, memory_id, TEXTS[index][value])
    return edits.edit_content(ctx, uid, memory_id, TOO_LONG)


@HYPOTHESIS
@given(steps=st.lists(STEP, min_size=1, max_size=8))
def test_any_sequence_of_edits_on_long_term_memories_stays_legal_and_admitted(ctx: Context,
                                                                              steps: list[tuple[str, Any, Any]]) -> None:
    uid = new_uid("lte")
    ids_ = _start(ctx, uid)
    models = [Model(content=c) for c in START]
    assert_admissions_sound(ctx, uid)
    for step in steps:
        try:
            _step(ctx, uid, ids_, models, step)
        except StrataError as exc:
            raise AssertionError(f"{step} raised {exc.status} {exc.code}: {exc.message}") from exc
        assert_all_items_legal(ctx, uid)
        items = assert_admissions_sound(ctx, uid)
        for memory_id, model in zip(ids_, models, strict=True):
            item = items[memory_id]
            if not model.alive:
                assert item.record_status == Status.TOMBSTONED
                continue
            assert (item.content, item.visibility, item.category, item.reviewed, item.user_review) == (
                model.content, model.visibility, model.category, model.reviewed, model.user_review), step
    assert_ledger_gapless(ctx, uid)


# ------------------------------------------------------------------------- the one content limit
def test_the_content_limit_comes_from_settings_on_every_path(ctx: Context) -> None:
    uid = new_uid("lim")
    at_limit = ("I keep " + "many " * 40)[:LIMIT - 1] + "s"
    assert len(at_limit) == LIMIT and len(" ".join(TOO_LONG.split())) > LIMIT
    snapshot = canonical_snapshot(ctx, uid)
    for attempt in (
        lambda: intake.create_explicit(ctx, uid, [ExplicitMemory(content=TOO_LONG)]),
        lambda: intake.create_explicit(ctx, uid, [ExplicitMemory(content="I like plums"),
                                                  ExplicitMemory(content=TOO_LONG)]),
    ):
        with pytest.raises(BadRequest, match=f"at most {LIMIT} characters"):
            attempt()
    assert canonical_snapshot(ctx, uid) == snapshot == {}

    ids_ = _start(ctx, uid)
    assert all(i.layer == "long_term" for i in _items(ctx, uid).values())
    edits.edit_content(ctx, uid, ids_[0], "I keep bees and a dog")
    consolidation.run_pass(ctx, uid, router=ReviewAll())
    [pending] = [i for i in _items(ctx, uid).values() if i.route == "review"]
    snapshot = canonical_snapshot(ctx, uid)
    with pytest.raises(BadRequest, match=f"at most {LIMIT} characters"):
        edits.edit_content(ctx, uid, ids_[1], TOO_LONG)
    with pytest.raises(BadRequest, match=f"at most {LIMIT} characters"):
        review.resolve(ctx, uid, str(pending.review_id), "correct", TOO_LONG)
    assert canonical_snapshot(ctx, uid) == snapshot

    # Exactly the limit is accepted everywhere, and a correction is admitted with a valid receipt.
    assert review.resolve(ctx, uid, str(pending.review_id), "correct", at_limit)["decision"] == "correct"
    assert edits.edit_content(ctx, uid, ids_[1], at_limit).content == at_limit
    [created] = intake.create_explicit(ctx, uid, [ExplicitMemory(content=at_limit + " ")])
    assert created.content == at_limit
    items = assert_admissions_sound(ctx, uid)
    assert (items[ids_[0]].content, items[ids_[0]].layer) == (at_limit, "long_term")
    assert_all_items_legal(ctx, uid)


# ------------------------------------------------------------------ legacy rows and strict admission
def test_a_grandfathered_long_term_row_is_edited_without_a_fabricated_receipt(ctx: Context) -> None:
    uid = new_uid("gf")
    memory_id = "legacy_row_1"

    # The materialisation of a historical ``memories`` row, read in the same transaction (the only
    # thing the grandfathered exemption covers).
    ctx.paths.doc(uid, "memories", memory_id).set({"content": "I sail on weekends", "category": "hobbies"})

    def legacy(view: ApplyView) -> Plan:
        return Plan(items=[MemoryItem(id=memory_id, uid=uid, content="I sail on weekends", layer="long_term",
                                      processing_state="processed", grandfathered_long_term=True,
                                      category="hobbies")])

    ctx.store.apply(uid, "test.legacy_row", {"id": memory_id}, legacy, item_ids=[memory_id],
                     doc_paths=[f"memories/{memory_id}"])
    for edit in (lambda: edits.set_visibility(ctx, uid, memory_id, "public"),
                 lambda: edits.set_user_review(ctx, uid, memory_id, True),
                 lambda: edits.set_category(ctx, uid, memory_id, "system")):
        item = edit()
        assert (item.layer, item.status, item.grandfathered_long_term, item.promotion) == (
            "long_term", "active", True, None)
        assert _assertions(ctx, uid) == {}
    # Editing its content is a new user assertion: it is re-admitted like any other item, with a
    # receipt the validator checks (the legacy marker is gone).
    edited = edits.edit_content(ctx, uid, memory_id, "I sail on weekends and holidays")
    assert (edited.layer, edited.processing_state, edited.grandfathered_long_term) == (
        "short_term", "processed", False)
    assert consolidation.run_pass(ctx, uid)["routes"] == {"promote": 1}
    items = assert_admissions_sound(ctx, uid)
    assert items[memory_id].layer == "long_term" and not items[memory_id].grandfathered_long_term
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)


def test_the_historical_exemption_covers_only_a_memories_row(ctx: Context) -> None:
    """Issue 27: a retired ``short_term`` row is Short-term (spec, canonical mapping), so claiming
    the grandfathered exemption for it — or for nothing — is refused, and nothing is written."""
    uid = new_uid("gfst")
    ctx.paths.doc(uid, "short_term", "st1").set({"content": "I am learning Dutch", "status": "pending_consolidation"})
    ctx.paths.doc(uid, "memories", "m1").set({"content": "I row", "memory_tier": "short_term"})

    def claim(memory_id: str) -> Any:
        def plan(view: ApplyView) -> Plan:
            return Plan(items=[MemoryItem(id=memory_id, uid=uid, content="I am learning Dutch", layer="long_term",
                                          processing_state="processed", grandfathered_long_term=True)])
        return plan

    before = canonical_snapshot(ctx, uid)
    for memory_id in ("st1", "m1", "nowhere"):
        with pytest.raises(AdmissionRefused, match="grandfathered Long-term without the historical memories row"):
            ctx.store.apply(uid, "test.claim", {"id": memory_id}, claim(memory_id), item_ids=[memory_id],
                             doc_paths=[f"short_term/{memory_id}", f"memories/{memory_id}"])
    assert canonical_snapshot(ctx, uid) == before
    # Materialised through an edit, the retired row is an ordinary Short-term item.
    item = edits.set_visibility(ctx, uid, "st1", "private")
    assert (item.layer, item.grandfathered_long_term, item.pending_route) == ("short_term", False, True)


def test_the_validator_still_refuses_an_unreceipted_long_term_write(ctx: Context) -> None:
    """Edits pass because they re-issue the admission, not because the validator got weaker."""
    uid = new_uid("strict")
    [memory_id, _] = _start(ctx, uid)
    before = canonical_snapshot(ctx, uid)

    def bare_flag(view: ApplyView) -> Plan:
        item = view.items[memory_id]
        assert item is not None
        item = item.model_copy(deep=True)
        item.visibility = "public"
        return Plan(items=[item])

    with pytest.raises(AdmissionRefused, match="receipt revision is stale"):
        ctx.store.apply(uid, "test.bare_flag", {"id": memory_id}, bare_flag, item_ids=[memory_id])
    assert canonical_snapshot(ctx, uid) == before


def test_editing_a_superseded_ancestor_takes_it_out_of_the_lineage(ctx: Context) -> None:
    uid = new_uid("lin")
    # Two statements of where the user lives, the second later: the one the rule lets end the other.
    [old] = intake.create_explicit(ctx, uid, [ExplicitMemory(content="I live in Leeds", category="system")])
    assert consolidation.run_pass(ctx, uid)["routes"] == {"promote": 1}
    [new] = intake.create_explicit(ctx, uid, [ExplicitMemory(content="I live in York", category="system")])
    assert consolidation.run_pass(ctx, uid, router=SupersedeAll())["routes"] == {"promote": 1}
    old_id, new_id = old.id, new.id
    items = assert_admissions_sound(ctx, uid)
    assert (items[old_id].status, items[old_id].superseded_by, items[new_id].supersedes) == (
        "superseded", new_id, [old_id])
    survivor_revision = items[new_id].revision

    edited = edits.edit_content(ctx, uid, old_id, "I keep bees and hens on my roof")
    assert (edited.layer, edited.status, edited.processing_state) == ("short_term", "active", "processed")
    assert edited.superseded_by is None and edited.canonical_memory_id is None
    items = assert_admissions_sound(ctx, uid)
    # The survivor no longer claims it, and was re-admitted in the edit's commit (its receipt binds
    # supersedes); the edited item's next commit is its processing.
    assert items[new_id].supersedes == [] and items[new_id].revision == survivor_revision + 1
    commit = ctx.paths.doc(uid, "memory_commits", str(items[new_id].ledger_commit_id)).get().to_dict()
    assert commit["kind"] == "edit.content" and old_id in commit["memory_ids"]

    assert consolidation.run_pass(ctx, uid)["routes"] == {"promote": 1}
    items = assert_admissions_sound(ctx, uid)
    assert {i.layer for i in items.values()} == {"long_term"}
    listed, _ = reads.list_memories(ctx, uid, reads.ListQuery())
    assert sorted(i.id for i in listed) == sorted([old_id, new_id])  # both shown: neither folds into the other
    # Deleting the former survivor no longer takes the edited memory with it.
    assert deletion.delete_memory(ctx, uid, new_id)["deleted"] == [new_id]
    assert _items(ctx, uid)[old_id].record_status == "active"
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)
