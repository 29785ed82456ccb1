"""Properties of the apply transaction against the real Firestore emulator.

Hypothesis generates sequences of canonical operations (explicit create, content edit, tombstone
through delete, a flag change applied straight through the engine, and replays of earlier
operations with the same kind + key). After every step: every stored item is legal per §1.3, the
ledger is gapless (1..N, parent chain, head) and a replay changed no canonical document.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.adapters.firestore.apply import ApplyView, Plan
from core.bootstrap import Context
from core.domain import ids
from core.domain.records import MemoryItem
from core.domain.states import IllegalState
from core.errors import NotFound, WritesBlocked
from core.services import deletion, edits, intake
from tests.support.firestore_checks import (
    assert_all_items_legal,
    assert_ledger_gapless,
    canonical_snapshot,
    ledger_head,
    user_doc_count,
)

pytestmark = pytest.mark.integration

CONTENTS = (
    "I live in Porto", "My sister is called Ana", "I prefer green tea", "I play the cello on Sundays",
    "I am learning Japanese", "My favourite colour is teal",
)


class QuietPublisher:
    """Records projection nudges instead of publishing them, so background delivery does not run
    for these users (the canonical state is what these properties are about)."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        self.messages.append((topic, payload))


@pytest.fixture
def ctx(stack: dict[str, Any]) -> Context:
    return Context(publisher=QuietPublisher())


def _uid() -> str:
    return f"prop-{uuid.uuid4().hex[:12]}"


# ------------------------------------------------------------------------------------ the model
@dataclass
class Model:
    """What the store should hold: live content per memory id, deleted ids, engine ops run."""

    live: dict[str, str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    explicit: dict[str, str] = field(default_factory=dict)  # created content → its latest memory id
    engine_ops: list[tuple[str, Any, str, str]] = field(default_factory=list)  # kind, key, id, value
    visibility: dict[str, str] = field(default_factory=dict)

    def target(self, index: int, *, include_deleted: bool = False) -> str | None:
        pool = sorted(self.live) + (sorted(self.deleted) if include_deleted else [])
        return pool[index % len(pool)] if pool else None


def _set_visibility_planner(memory_id: str, value: str):  # noqa: ANN202 - a Planner
    def plan(view: ApplyView) -> Plan:
        item = view.items.get(memory_id)
        if item is None or item.record_status == "tombstoned" or item.visibility == value:
            return Plan()
        item = item.model_copy(deep=True)
        item.visibility = value
        return Plan(items=[item], summary={"visibility": value})

    return plan


def _exploding_planner(view: ApplyView) -> Plan:
    raise AssertionError("a replayed operation must not run its planner again")


step = st.one_of(
    st.tuples(st.just("create"), st.integers(0, len(CONTENTS) - 1)),
    st.tuples(st.just("edit"), st.integers(0, 50), st.integers(0, 2)),  # few texts: edits revisit them
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("visibility"), st.integers(0, 50), st.sampled_from(["public", "private"])),
    st.tuples(st.just("replay"), st.integers(0, 50)),
)


def _run_step(ctx: Context, uid: str, model: Model, action: tuple[Any, ...], n: int) -> bool:
    """Run one step, update the model; returns True when the step must not change anything."""
    kind = action[0]
    if kind == "create":
        content = CONTENTS[action[1]]
        current = model.explicit.get(content)
        items = intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content=content)])
        assert len(items) == 1
        if current is not None and current not in model.deleted:
            assert items[0].id == current
            return True  # the same explicit create again: the journaled operation replays
        # New content, or content whose memory was deleted: a new memory (never the tombstone).
        memory_id = items[0].id
        assert memory_id not in model.live and memory_id not in model.deleted
        if current is None:
            assert memory_id == ids.explicit_memory_id(uid, content)
        assert items[0].processing_state == "processed" and items[0].layer == "short_term"
        assert items[0].content == content
        model.explicit[content] = memory_id
        model.live[memory_id] = content
        model.visibility[memory_id] = "private"
        return False
    if kind == "edit":
        memory_id = model.target(action[1], include_deleted=True)
        if memory_id is None:
            return True
        content = CONTENTS[action[2]] + " now"
        if memory_id in model.deleted:
            with pytest.raises(NotFound):
                edits.edit_content(ctx, uid, memory_id, content)
            return True
        unchanged = model.live[memory_id] == content
        item = edits.edit_content(ctx, uid, memory_id, content)
        assert item.content == content
        assert item.edited and item.layer == "short_term" and item.processing_state == "processed"
        model.live[memory_id] = content
        return unchanged
    if kind == "delete":
        memory_id = model.target(action[1], include_deleted=True)
        if memory_id is None:
            return True
        if memory_id in model.deleted:
            with pytest.raises(NotFound):
                deletion.delete_memory(ctx, uid, memory_id)
            return True
        deletion.delete_memory(ctx, uid, memory_id)
        del model.live[memory_id]
        model.deleted.add(memory_id)
        return False
    if kind == "visibility":
        memory_id = model.target(action[1])
        if memory_id is None:
            return True
        op_key = {"id": memory_id, "value": action[2], "step": n}
        ctx.engine.apply(uid, "test.visibility", op_key, _set_visibility_planner(memory_id, action[2]),
                         item_ids=[memory_id])
        model.engine_ops.append(("test.visibility", op_key, memory_id, action[2]))
        unchanged = model.visibility[memory_id] == action[2]
        model.visibility[memory_id] = action[2]
        return unchanged
    # replay: the same kind + key as an earlier engine operation; the planner must not even run.
    if not model.engine_ops:
        return True
    op_kind, op_key, memory_id, _ = model.engine_ops[action[1] % len(model.engine_ops)]
    result = ctx.engine.apply(uid, op_kind, op_key, _exploding_planner, item_ids=[memory_id])
    assert result.replayed
    return True


def _check_store(ctx: Context, uid: str, model: Model) -> None:
    items = assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)
    for memory_id, content in model.live.items():
        stored = items[memory_id]
        assert stored["content"] == content
        assert stored["status"] == "active" and stored["processing_state"] == "processed"
        assert stored["visibility"] == model.visibility[memory_id]
    for memory_id in model.deleted:
        stored = items[memory_id]
        assert stored["status"] in ("tombstoned", "hidden") and stored["content"] == ""
        assert all(e["status"] == "tombstoned" and e["quote_refs"] == [] for e in stored["evidence"])
    assert set(items) == set(model.live) | model.deleted


@settings(max_examples=20, deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=2, max_size=9))
def test_random_apply_sequences_stay_legal_gapless_and_replay_safe(ctx: Context, steps: list) -> None:
    uid = _uid()
    model = Model()
    for n, action in enumerate(steps):
        before = canonical_snapshot(ctx, uid)
        head_before = ledger_head(ctx, uid)
        unchanged = _run_step(ctx, uid, model, action, n)
        _check_store(ctx, uid, model)
        if unchanged:
            assert ledger_head(ctx, uid) == head_before, f"step {action} moved the head"
            after = canonical_snapshot(ctx, uid)
            # A no-op may journal its operation id (so a retry replays) but changes nothing else.
            new_ops = {p for p in after if p not in before and p.startswith("memory_operations/")}
            assert {p: d for p, d in after.items() if p not in new_ops} == before, f"step {action} changed state"
            assert all(after[p].get("commit_id") is None for p in new_ops)


def test_replaying_the_same_explicit_create_changes_nothing(ctx: Context) -> None:
    uid = _uid()
    first = intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I keep bees")])
    before, head = canonical_snapshot(ctx, uid), ledger_head(ctx, uid)
    for _ in range(3):
        again = intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I keep bees")])
        assert [i.id for i in again] == [i.id for i in first]
    assert ledger_head(ctx, uid) == head
    assert canonical_snapshot(ctx, uid) == before
    commits = assert_ledger_gapless(ctx, uid)
    assert [c["kind"] for c in commits] == ["intake.explicit", "intake.process"]


# --------------------------------------------------------------------------------- refusals
@pytest.mark.parametrize(("layer", "status", "state"), [
    ("long_term", "active", "pending"), ("long_term", "active", "blocked"), ("archive", "superseded", "processed"),
    ("context_only", "active", "processed"), ("archive", "active", "pending"),
])
def test_an_illegal_plan_is_refused_and_writes_nothing(ctx: Context, layer: str, status: str, state: str) -> None:
    uid = _uid()
    intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I grow tomatoes")])
    before, count = canonical_snapshot(ctx, uid), user_doc_count(ctx, uid)
    illegal_id = ids.explicit_memory_id(uid, "an illegal one")

    def plan(view: ApplyView) -> Plan:
        return Plan(items=[MemoryItem(id=illegal_id, uid=uid, content="an illegal one", layer=layer,
                                      status=status, processing_state=state)])

    with pytest.raises(IllegalState):
        ctx.engine.apply(uid, "test.illegal", {"layer": layer, "status": status, "state": state}, plan,
                         item_ids=[illegal_id])
    assert canonical_snapshot(ctx, uid) == before
    assert user_doc_count(ctx, uid) == count
    assert_ledger_gapless(ctx, uid)


def test_a_fresh_user_illegal_plan_leaves_no_document(ctx: Context) -> None:
    uid = _uid()
    memory_id = "mem_illegal"

    def plan(view: ApplyView) -> Plan:
        return Plan(items=[MemoryItem(id=memory_id, uid=uid, content="x", layer="long_term",
                                      processing_state="pending")])

    with pytest.raises(IllegalState):
        ctx.engine.apply(uid, "test.illegal", {"fresh": True}, plan, item_ids=[memory_id])
    assert user_doc_count(ctx, uid) == 0


def test_writes_are_refused_while_the_account_is_being_deleted(ctx: Context) -> None:
    uid = _uid()
    intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I own a kayak")])
    before = canonical_snapshot(ctx, uid)
    fence = ctx.paths.account_deletion(uid)
    fence.set({"uid": uid, "state": "fenced"})
    try:
        with pytest.raises(WritesBlocked):
            intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I own a canoe")])
        memory_id = ids.explicit_memory_id(uid, "I own a kayak")
        with pytest.raises(WritesBlocked):
            edits.edit_content(ctx, uid, memory_id, "I own two kayaks")
        with pytest.raises(WritesBlocked):
            deletion.delete_memory(ctx, uid, memory_id)
        assert canonical_snapshot(ctx, uid) == before
        # A completed deletion no longer fences (the account may start over).
        fence.set({"uid": uid, "state": "completed"})
        intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I own a canoe")])
    finally:
        fence.delete()
    assert_ledger_gapless(ctx, uid)


def test_writes_blocked_flag_on_the_control_doc_refuses_writes(ctx: Context) -> None:
    uid = _uid()
    intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I speak Greek")])
    ctx.paths.control(uid).update({"writes_blocked": True})
    before = canonical_snapshot(ctx, uid)
    with pytest.raises(WritesBlocked):
        intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I speak Dutch")])
    assert canonical_snapshot(ctx, uid) == before


def test_global_incident_switch_refuses_every_write(ctx: Context) -> None:
    """Affects every user of the shared emulator, so it is set and cleared within this test."""
    uid = _uid()
    intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I like jazz")])
    before, count = canonical_snapshot(ctx, uid), user_doc_count(ctx, uid)
    switch = ctx.paths.global_controls()
    previous = switch.get()
    try:
        switch.set({"writes_disabled": True}, merge=True)
        with pytest.raises(WritesBlocked):
            intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I like blues")])
        with pytest.raises(WritesBlocked):
            intake.create_explicit(ctx, _uid(), [intake.ExplicitMemory(content="I like soul")])
    finally:
        if previous.exists:
            switch.set(previous.to_dict())
        else:
            switch.delete()
    assert canonical_snapshot(ctx, uid) == before
    assert user_doc_count(ctx, uid) == count
    intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I like blues")])
    assert_ledger_gapless(ctx, uid)


def test_editing_back_and_forth_applies_every_edit(ctx: Context) -> None:
    uid = _uid()
    [item] = intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content="I run on Mondays")])
    for content in ("I run on Tuesdays", "I run on Fridays", "I run on Tuesdays", "I run on Mondays"):
        assert edits.edit_content(ctx, uid, item.id, content).content == content
        assert all_items_content(ctx, uid)[item.id] == content
    assert_ledger_gapless(ctx, uid)


def all_items_content(ctx: Context, uid: str) -> dict[str, str]:
    return {mid: d["content"] for mid, d in assert_all_items_legal(ctx, uid).items()}
