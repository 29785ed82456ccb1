"""Withdrawal and retraction on plain records (no servers): what a tombstone keeps, whatever the
status it had, and which sources still support an item."""

from __future__ import annotations

from core.domain.records import Evidence, MemoryItem, QuoteRef
from core.domain.states import Layer, ProcessingState, Status
from core.domain.withdrawal import retract, scrubbed, withdraw_source


def _item(status: str = "active", layer: str = Layer.SHORT_TERM, sources: tuple[str, ...] = ("c1",)) -> MemoryItem:
    return MemoryItem(
        id="mem_x", uid="u", content="User trains for the Lisbon half marathon", layer=layer, status=status,
        processing_state=ProcessingState.PROCESSED, subject_label="Sarah", route="reject",
        promotion={"route": "reject", "reason": "contradicts the Lisbon half marathon fact"},
        evidence=[Evidence(evidence_id=f"ev_{s}", source_id=s,
                           quote_refs=[QuoteRef(segment_id="s0", quote="the Lisbon half marathon")]) for s in sources],
    ).settle()


def test_retract_keeps_no_text_whatever_the_status() -> None:
    for status, layer in (("active", Layer.SHORT_TERM), ("hidden", Layer.SHORT_TERM),
                          ("superseded", Layer.LONG_TERM), ("active", Layer.ARCHIVE)):
        item = _item(status, layer)
        retract(item, by_user=True)
        item.settle()
        assert item.status == Status.TOMBSTONED and scrubbed(item)
        assert "marathon" not in item.model_dump_json().casefold(), (status, layer)
        assert item.deleted_by_user and item.active_source_ids == []


def test_withdrawing_one_source_keeps_an_item_another_source_supports() -> None:
    item = _item(sources=("c1", "c2"))
    assert item.active_source_ids == ["c1", "c2"]
    kept = withdraw_source(item, "c1", by_user=True).settle()
    assert kept.status == Status.ACTIVE and kept.content and not kept.deleted_by_user
    assert kept.active_source_ids == ["c2"] and kept.source_ids == ["c1", "c2"]
    gone = withdraw_source(kept, "c2", by_user=True).settle()
    assert scrubbed(gone) and gone.deleted_by_user and gone.active_source_ids == []


def test_a_withdrawal_that_is_not_a_user_delete_leaves_no_user_delete_mark() -> None:
    gone = withdraw_source(_item(), "c1").settle()
    assert scrubbed(gone) and not gone.deleted_by_user
