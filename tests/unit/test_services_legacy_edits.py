"""The historical adapter, edits and search on the in-memory store (no emulator). From the domain
model: legacy flat rows are grandfathered Long-term and retired ``short_term`` rows Short-term,
read-only, and materialised lazily on
mutation (a canonical successor or tombstone suppresses the row); a colliding row is withheld;
search hydrates every provider hit from the canonical store and drops what is not visible."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from core.domain import paths
from core.domain.routing import RouteCandidate, RouteProposal
from core.errors import BadRequest, NotFound
from core.services import consolidation, deletion, edits, export, intake, legacy, projection, reads, search
from tests.unit.fakes.ports import World, world

UID = "u1"


class Promote:
    router_id = "promote"
    router_version = "1"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        return [RouteProposal(c.ref, "promote", "test") for c in candidates]


def _legacy(w: World, collection: str, mid: str, content: str, minutes: int = 0, **extra: Any) -> None:
    when = w.clock.now() - timedelta(days=1) + timedelta(minutes=minutes)
    w.store.put(paths.doc(UID, collection, mid), {"content": content, "created_at": when, "updated_at": when,
                                                   "category": "hobbies", **extra})


def _ids(items: list[Any]) -> list[str]:
    return [i.id for i in items]


def test_legacy_rows_read_in_their_layers_in_list_order() -> None:
    w = world()
    _legacy(w, "memories", "old1", "I like chess", minutes=1)
    _legacy(w, "short_term", "old2", "I like go", minutes=2)
    _legacy(w, "short_term", "gone", "I like draughts", minutes=3, status="rejected")
    _legacy(w, "memories", "del", "I like bridge", minutes=4, deleted=True)
    [new] = intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I like poker")])
    listed, _ = reads.list_memories(w.ctx, UID, reads.ListQuery())
    assert _ids(listed) == [new.id, "old2", "old1"]
    old = reads.get_memory(w.ctx, UID, "old1")
    assert old.layer == "long_term" and old.grandfathered_long_term
    page, cursor = reads.list_memories(w.ctx, UID, reads.ListQuery(limit=2))
    rest, end = reads.list_memories(w.ctx, UID, reads.ListQuery(limit=2, cursor=cursor))
    assert _ids(page + rest) == [new.id, "old2", "old1"] and end is None
    # Spec, canonical mapping: retired short_term rows are Short-term (layer=short_term).
    assert _ids(reads.list_memories(w.ctx, UID, reads.ListQuery(layer="short_term"))[0]) == [new.id, "old2"]
    assert _ids(reads.list_memories(w.ctx, UID, reads.ListQuery(layer="long_term"))[0]) == ["old1"]
    assert reads.get_memory(w.ctx, UID, "old2").layer == "short_term"


def test_a_row_in_both_collections_with_different_text_is_withheld() -> None:
    w = world()
    _legacy(w, "memories", "twin", "I like red")
    _legacy(w, "short_term", "twin", "I like blue")
    assert "twin" not in _ids(reads.list_memories(w.ctx, UID, reads.ListQuery())[0])
    with pytest.raises(Exception):  # noqa: B017,PT011 - LegacyCollision: withheld until reconciled
        reads.get_memory(w.ctx, UID, "twin")
    _legacy(w, "short_term", "same", "I like green")
    _legacy(w, "memories", "same", "I like green")
    assert _ids(reads.list_memories(w.ctx, UID, reads.ListQuery())[0]).count("same") == 1


@pytest.mark.parametrize("edit", [lambda w: edits.edit_content(w.ctx, UID, "old1", "I like chess and go"),
                                  lambda w: edits.set_visibility(w.ctx, UID, "old1", "private")])
def test_an_edit_of_a_legacy_row_removes_the_row_in_its_own_commit(edit: Any) -> None:
    w = world()
    _legacy(w, "memories", "old1", "I like chess")
    batches: list[set[str]] = []
    commit = w.store._commit

    def counted(writes: Any) -> None:
        batches.append({f"{x.op} {x.path}" for x in writes})
        commit(writes)

    w.store._commit = counted  # type: ignore[method-assign]
    edit(w)
    assert w.store.get(paths.doc(UID, "memories", "old1")) is None
    [batch] = batches  # the apply's, nothing after it
    assert f"delete {paths.doc(UID, 'memories', 'old1')}" in batch and f"set {paths.control(UID)}" in batch


def test_delete_all_tombstones_legacy_rows_and_removes_them_in_the_same_commit() -> None:
    w = world()
    _legacy(w, "memories", "old1", "I like chess")
    _legacy(w, "short_term", "old2", "I like go", minutes=1)
    batches: list[set[str]] = []
    commit = w.store._commit

    def counted(writes: Any) -> None:
        batches.append({f"{x.op} {x.path}" for x in writes})
        commit(writes)

    w.store._commit = counted  # type: ignore[method-assign]
    assert deletion.delete_all(w.ctx, UID)["deleted"] == 2
    [batch] = [b for b in batches if any(" " + paths.col(UID, "memories") in x for x in b)]
    assert {f"delete {paths.doc(UID, 'memories', 'old1')}", f"delete {paths.doc(UID, 'short_term', 'old2')}",
            f"set {paths.control(UID)}"} <= batch  # the tombstones' commit removes the rows, no commit after it
    assert all(w.store.get(paths.doc(UID, c, m)) is None for c, m in (("memories", "old1"), ("short_term", "old2")))


def test_editing_a_legacy_row_materialises_its_successor_and_removes_the_row() -> None:
    w = world()
    _legacy(w, "memories", "old1", "I like chess")
    edited = edits.edit_content(w.ctx, UID, "old1", "I like chess and go")
    assert edited.id == "old1" and edited.layer == "short_term" and edited.content == "I like chess and go"
    assert w.store.get(paths.doc(UID, "memories", "old1")) is None
    # The stored successor (a read by id answers as the default read: 404 while it is unprocessed).
    assert reads.get_memory(w.ctx, UID, "old1", include_hidden=True).content == "I like chess and go"
    consolidation.run_pass(w.ctx, UID, router=Promote())  # a new user assertion: back through consolidation
    assert _ids(reads.list_memories(w.ctx, UID, reads.ListQuery())[0]) == ["old1"]


def test_deleting_legacy_rows_tombstones_them() -> None:
    w = world()
    _legacy(w, "memories", "old1", "I like chess", conversation_id="c9")
    _legacy(w, "short_term", "old2", "I like go")
    assert "old1" in deletion.delete_memory(w.ctx, UID, "old1")["deleted"]
    with pytest.raises(NotFound):
        reads.get_memory(w.ctx, UID, "old1")
    deletion.delete_all(w.ctx, UID)
    assert reads.list_memories(w.ctx, UID, reads.ListQuery())[0] == []
    assert legacy.first_ids(w.ctx, UID, 10) == []


def test_a_conversation_delete_retracts_the_legacy_rows_citing_it() -> None:
    w = world()
    _legacy(w, "memories", "old1", "I like chess", conversation_id="c9")
    _legacy(w, "short_term", "old2", "I like go", memory_id="c9")
    _legacy(w, "memories", "old3", "I like cards", conversation_id="c8")
    w.store.put(paths.doc(UID, "conversations", "c9"), {"status": "completed"})
    assert sorted(legacy.ids_citing(w.ctx, UID, "c9", 10)) == ["old1", "old2"]
    out = deletion.cascade_conversation(w.ctx, UID, "c9", remove_document=True)
    assert out["withdrawn"] == 2
    assert _ids(reads.list_memories(w.ctx, UID, reads.ListQuery())[0]) == ["old3"]


def test_export_includes_legacy_memories_unless_suppressed() -> None:
    w = world()
    _legacy(w, "memories", "old1", "I like chess")
    _legacy(w, "memories", "old2", "I like go")
    deletion.delete_memory(w.ctx, UID, "old2")
    memories = [line for line in export.export_lines(w.ctx, UID) if '"kind": "memory"' in line]
    assert len(memories) == 1 and "old1" in memories[0]


# ----------------------------------------------------------------------------------------- edits
def test_edits_validate_and_flip_fields() -> None:
    w = world()
    [item] = intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I like hiking")])
    assert edits.set_visibility(w.ctx, UID, item.id, "public").visibility == "public"
    assert edits.set_category(w.ctx, UID, item.id, "interesting").category == "interesting"
    assert edits.set_user_review(w.ctx, UID, item.id, True).user_review is True
    with pytest.raises(BadRequest):
        edits.set_visibility(w.ctx, UID, item.id, "everyone")
    with pytest.raises(BadRequest):
        edits.set_category(w.ctx, UID, item.id, "not a category!")
    with pytest.raises(BadRequest):
        edits.edit_content(w.ctx, UID, item.id, "")
    with pytest.raises(NotFound):
        edits.set_visibility(w.ctx, UID, "mem_nope", "public")
    unchanged = edits.edit_content(w.ctx, UID, item.id, "I like hiking")
    assert unchanged.revision == reads.get_memory(w.ctx, UID, item.id).revision


def test_flipping_a_long_term_field_reissues_its_admission() -> None:
    w = world()
    [item] = intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I like rowing")])
    consolidation.run_pass(w.ctx, UID, router=Promote())
    flipped = edits.set_category(w.ctx, UID, item.id, "interesting")
    assert flipped.layer == "long_term" and flipped.category == "interesting"
    receipt = (flipped.promotion or {})["admission_receipt"]
    assert receipt["revision"] == flipped.revision and (flipped.promotion or {}).get("reissued_from")


# ---------------------------------------------------------------------------------------- search
def test_search_hydrates_hits_and_drops_what_is_no_longer_visible() -> None:
    w = world()
    made = intake.create_explicit(w.ctx, UID, [intake.ExplicitMemory(content="I like sailing boats"),
                                               intake.ExplicitMemory(content="I like rowing boats")])
    projection.drain_user(w.ctx, UID)
    assert sorted(_ids([s.item for s in search.keyword(w.ctx, UID, "boats")])) == sorted(_ids(made))
    deletion.delete_memory(w.ctx, UID, made[0].id)  # the provider still holds it until the drain
    assert _ids([s.item for s in search.keyword(w.ctx, UID, "boats")]) == [made[1].id]
    assert _ids([s.item for s in search.hybrid(w.ctx, UID, "boats")]) == [made[1].id]
    with pytest.raises(BadRequest):
        search.keyword(w.ctx, UID, "   ")


def test_historical_search_scans_legacy_rows() -> None:
    w = world()
    _legacy(w, "memories", "old1", "I like sailing")
    assert _ids([s.item for s in search.historical(w.ctx, UID, "sailing", 5)]) == ["old1"]
