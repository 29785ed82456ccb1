"""Facts that stay current (issue 32): a later statement that ends a fact supersedes it at
consolidation, the old fact stays as history with its valid time, and a read ``as_of`` a moment
answers what was true then. Services on the in-memory fakes; the stack's version is
tests/e2e/test_as_of.py.

Expectations come from issue 44's rule: a later statement ends an earlier fact only when both are
about the same subject, state the same declared single-valued attribute (or the ending of that very
value), differ, and the new one is later in conversation time; the old fact is valid from its
conversation's day until the day of the conversation that ended it; supersession is not lineage;
an ending can be undone.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.domain import paths
from core.domain.records import MemoryItem, valid_at
from core.domain.slots import Slot, Statement, relation
from core.errors import BadRequest, Conflict
from core.services import capture, consolidation, deletion, edits, projection, reads, temporal
from tests.unit.fakes.ports import World, world

UID = "u1"


def _said(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def _st(attribute: str, value: str, day: str, subject: str | None = "user", ended: bool = False) -> Statement:
    return Statement(Slot(attribute=attribute, value=value, ended=ended), subject, _said(day))


@pytest.mark.parametrize(("new", "old", "expected"), [
    # a different value of a single-valued attribute, said later, ends the earlier fact
    (_st("residence", "Boston", "2026-03-01"), _st("residence", "Seattle", "2025-11-01"), "ends"),
    # said earlier (an older conversation processed later): the current fact ends it instead
    (_st("residence", "Boston", "2019-03-01"), _st("residence", "Seattle", "2025-11-01"), "ended_by"),
    # a statement that the very value ended ends it; another value's ending does not
    (_st("vehicle", "the Volvo", "2026-03-01", ended=True), _st("vehicle", "Volvo XC60", "2025-01-01"), "ends"),
    (_st("employer", "Acme", "2026-03-01", ended=True), _st("employer", "Halden Robotics", "2025-01-01"), None),
    # a multi-valued attribute: a new value stands beside the old; only its ending ends it
    (_st("pet", "Rex", "2026-03-01"), _st("pet", "Max", "2025-01-01"), None),
    (_st("pet", "Max", "2026-03-01", ended=True), _st("pet", "Max", "2025-01-01"), "ends"),
    # the same value said again, another attribute, another subject, an unknown subject: nothing
    (_st("residence", "Seattle, WA", "2026-03-01"), _st("residence", "Seattle", "2025-01-01"), None),
    (_st("employer", "Acme", "2026-03-01"), _st("residence", "Seattle", "2025-01-01"), None),
    (_st("residence", "Paris", "2026-03-01", "person:sister"), _st("residence", "Seattle", "2025-01-01"), None),
    (_st("residence", "Paris", "2026-03-01", None), _st("residence", "Seattle", "2025-01-01"), None),
    # the same day: only the owner can tell
    (_st("residence", "Boston", "2026-03-01"), _st("residence", "Seattle", "2026-03-01"), None),
])
def test_the_ending_rule(new: Statement, old: Statement, expected: str | None) -> None:
    assert relation(new, old) == expected


def test_a_slot_outside_the_vocabulary_is_refused() -> None:
    with pytest.raises(ValueError):
        Slot(attribute="mood", value="happy")


def _conversation(date: str, *owner_lines: str) -> dict:
    segments = [{"id": f"s{i}", "text": text, "speaker": "SPEAKER_0", "is_user": True}
                for i, text in enumerate(owner_lines)]
    return {"status": "completed", "started_at": f"{date}T09:30:00+00:00", "transcript_segments": segments}


def _items(w: World) -> list[MemoryItem]:
    return [MemoryItem.from_store(data) for data in w.store.collection(paths.user(UID) + "/memory_items").values()]


def _settle(w: World) -> None:
    consolidation.run_pass(w.ctx, UID)
    projection.drain_user(w.ctx, UID)


def _volvo_then_sold(w: World) -> tuple[MemoryItem, MemoryItem]:
    capture.capture_conversation(w.ctx, UID, "c1", _conversation("2026-01-10", "I drive an old blue Volvo."))
    _settle(w)
    [volvo] = [i for i in _items(w) if "Volvo" in i.content]
    assert (volvo.layer, volvo.status) == ("long_term", "active")
    w.clock.advance(days=1)
    capture.capture_conversation(w.ctx, UID, "c2", _conversation(
        "2026-03-02", "I sold the Volvo last week, so I take the tram everywhere."))
    _settle(w)
    by_id = {i.id: i for i in _items(w)}
    [sold] = [i for i in by_id.values() if i.content.startswith("User sold the Volvo")]
    return by_id[volvo.id], sold


def test_selling_the_car_ends_the_car_and_keeps_it_as_history() -> None:
    w = world()
    volvo, sold = _volvo_then_sold(w)
    assert (volvo.layer, volvo.status, volvo.superseded_by) == ("long_term", "superseded", sold.id)
    assert volvo.valid_from == datetime(2026, 1, 10, tzinfo=UTC)  # the first conversation's day
    assert volvo.valid_to == datetime(2026, 3, 2, tzinfo=UTC)  # the day of the one that ended it
    assert (sold.layer, sold.status, sold.supersedes) == ("long_term", "active", [volvo.id])
    assert sold.valid_to is None

    current, _ = reads.list_memories(w.ctx, UID, reads.ListQuery())
    assert volvo.id not in {m.id for m in current} and sold.id in {m.id for m in current}
    assert reads.get_memory(w.ctx, UID, volvo.id).id == volvo.id  # readable by id, as itself
    indexed = {d.memory_id for d in w.keyword.rows.values()} | {d.memory_id for d in w.vector.rows.values()}
    assert volvo.id not in indexed and sold.id in indexed  # the projections follow: history is in no index

    then, _ = reads.list_memories(w.ctx, UID, reads.ListQuery(as_of=datetime(2026, 2, 1, tzinfo=UTC)))
    assert [m.id for m in then] == [volvo.id]  # what was true on 1 February
    later, _ = reads.list_memories(w.ctx, UID, reads.ListQuery(as_of=datetime(2026, 3, 2, 12, tzinfo=UTC)))
    assert volvo.id not in {m.id for m in later} and sold.id in {m.id for m in later}


def test_deleting_the_fact_that_ended_another_makes_that_one_current_again() -> None:
    w = world()
    volvo, sold = _volvo_then_sold(w)
    out = deletion.delete_memory(w.ctx, UID, sold.id)
    assert out["deleted"] == [sold.id]  # supersession is not lineage: only what was asked goes
    stored = {i.id: i for i in _items(w)}
    assert stored[sold.id].record_status == "tombstoned" and stored[sold.id].content == ""
    assert (stored[volvo.id].status, stored[volvo.id].valid_to, stored[volvo.id].superseded_by) == ("active", None, None)


def test_deleting_the_ended_fact_removes_only_it() -> None:
    w = world()
    volvo, sold = _volvo_then_sold(w)
    out = deletion.delete_memory(w.ctx, UID, volvo.id)
    assert out["deleted"] == [volvo.id]
    stored = {i.id: i for i in _items(w)}
    assert (stored[sold.id].status, stored[sold.id].supersedes) == ("active", [])
    assert stored[volvo.id].record_status == "tombstoned"


def test_restore_makes_an_ended_fact_current_and_the_same_statement_never_ends_it_again() -> None:
    w = world()
    volvo, sold = _volvo_then_sold(w)
    restored = edits.restore(w.ctx, UID, volvo.id)
    assert (restored.status, restored.valid_to, restored.kept_beside) == ("active", None, [sold.id])
    stored = {i.id: i for i in _items(w)}
    assert (stored[sold.id].status, stored[sold.id].supersedes) == ("active", [])
    capture.capture_conversation(w.ctx, UID, "c2", _conversation(  # the same statement, captured again
        "2026-03-02", "I sold the Volvo last week, so I take the tram everywhere."))
    _settle(w)
    assert {i.id: i for i in _items(w)}[volvo.id].status == "active"
    with pytest.raises(Conflict):
        edits.restore(w.ctx, UID, sold.id)  # nothing ended it


def test_an_older_conversation_imported_later_becomes_history() -> None:
    w = world()
    capture.capture_conversation(w.ctx, UID, "c1", _conversation("2025-11-02", "I live in Seattle now."))
    _settle(w)
    capture.capture_conversation(w.ctx, UID, "c0", _conversation("2019-03-05", "I live in Boston."))
    _settle(w)
    by_value = {i.slot.value: i for i in _items(w) if i.slot is not None}
    seattle, boston = by_value["Seattle"], by_value["Boston"]
    assert (seattle.status, seattle.valid_to) == ("active", None)
    assert (boston.layer, boston.status, boston.superseded_by) == ("long_term", "superseded", seattle.id)
    assert boston.valid_to == datetime(2025, 11, 2, tzinfo=UTC)
    then, _ = reads.list_memories(w.ctx, UID, reads.ListQuery(as_of=datetime(2025, 12, 1, tzinfo=UTC)))
    assert [m.id for m in then] == [seattle.id]
    before, _ = reads.list_memories(w.ctx, UID, reads.ListQuery(as_of=datetime(2020, 1, 1, tzinfo=UTC)))
    assert [m.id for m in before] == [boston.id]


def test_a_third_partys_ending_never_ends_the_users_fact() -> None:
    w = world()
    capture.capture_conversation(w.ctx, UID, "c1", _conversation("2026-01-10", "I drive an old blue Volvo."))
    _settle(w)
    capture.capture_conversation(w.ctx, UID, "c2", _conversation("2026-03-02", "My sister Kate sold her Volvo."))
    capture.capture_conversation(w.ctx, UID, "c3", _conversation("2026-03-03", "My sister lives in Paris."))
    _settle(w)
    [volvo] = [i for i in _items(w) if i.content == "User drives an old blue Volvo"]
    assert (volvo.status, volvo.valid_to) == ("active", None)


def test_as_of_parses_dates_and_refuses_anything_else() -> None:
    assert temporal.parse_as_of("2026-02-01") == datetime(2026, 2, 1, 23, 59, 59, 999999, tzinfo=UTC)
    assert temporal.parse_as_of("2026-02-01T10:00:00+02:00") == datetime(2026, 2, 1, 8, tzinfo=UTC)
    assert temporal.parse_as_of("2026-02-01T10:00") == datetime(2026, 2, 1, 10, tzinfo=UTC)
    assert temporal.parse_as_of(None) is None
    for bad in ("2026-13-01", "yesterday", "2026-02-30T10:00"):
        with pytest.raises(BadRequest):
            temporal.parse_as_of(bad)


def test_valid_time_is_half_open() -> None:
    item = MemoryItem(id="m", uid=UID, content="x", valid_from=datetime(2026, 1, 1, tzinfo=UTC),
                      valid_to=datetime(2026, 2, 1, tzinfo=UTC))
    assert not valid_at(item, datetime(2025, 12, 31, tzinfo=UTC))
    assert valid_at(item, datetime(2026, 1, 1, tzinfo=UTC))
    assert not valid_at(item, datetime(2026, 2, 1, tzinfo=UTC))


class _Eager:
    """A router (as a model might) that proposes to end every Long-term neighbour it is shown."""

    router_id = "eager"
    router_version = "1"

    def route(self, candidates: list) -> list:
        from core.domain.routing import RouteProposal

        return [RouteProposal(c.ref, "promote", "eager", supersedes=tuple(n.ref for n in c.neighbours
                                                                           if n.layer == "long_term"))
                for c in candidates]


def test_an_ending_outside_the_rule_ends_nothing_whichever_router_proposes_it() -> None:
    from core.services import review

    w = world()
    capture.capture_conversation(w.ctx, UID, "c1", _conversation("2026-01-10", "I live in Leeds."))
    consolidation.run_pass(w.ctx, UID, router=_Eager())
    [leeds] = [i for i in _items(w) if i.slot is not None]
    # Someone else's news: the rule refuses (another subject) and the item is promoted beside it.
    capture.capture_conversation(w.ctx, UID, "c2", _conversation("2026-02-01", "My sister Kate lives in Leeds too."))
    consolidation.run_pass(w.ctx, UID, router=_Eager())
    assert {i.id: i for i in _items(w)}[leeds.id].status == "active"
    # The owner's own words about the same place without a slot the rule can read: the owner is
    # asked, the entry naming the fact it would end, and nothing ends before they answer.
    capture.capture_conversation(w.ctx, UID, "c3", _conversation("2026-03-01", "I love the market in Leeds."))
    consolidation.run_pass(w.ctx, UID, router=_Eager())
    assert {i.id: i for i in _items(w)}[leeds.id].status == "active"
    [entry] = [row for row in review.list_open(w.ctx, UID) if row["would_end"]]
    assert entry["would_end"] == [{"id": leeds.id, "content": leeds.content}]
    review.resolve(w.ctx, UID, entry["review_id"], "keep_both")
    after = {i.id: i for i in _items(w)}
    assert after[leeds.id].status == "active" and after[entry["memory_id"]].kept_beside == [leeds.id]


@pytest.mark.parametrize(("new", "old", "expected"), [
    # "has none" conflicts with any value, either way round, single- or multi-valued
    (_st("pet", "Waffles", "2026-03-01"), _st("pet", "none", "2025-01-01"), "ends"),
    (_st("partner", "none", "2026-03-01"), _st("partner", "Rafael", "2025-01-01"), "ends"),
    (_st("habit", "smoking", "2026-03-01", ended=True), _st("habit", "smoking", "2025-01-01"), "ends"),
    (_st("habit", "running", "2026-03-01"), _st("habit", "smoking", "2025-01-01"), None),
])
def test_none_conflicts_with_a_value(new: Statement, old: Statement, expected: str | None) -> None:
    assert relation(new, old) == expected


def test_a_refused_ending_within_one_attribute_is_asked_and_another_attribute_is_not() -> None:
    """A router's ending the rule cannot confirm, though both slots name one attribute (the values
    agree, or an ended value is named otherwise), goes to the owner naming the fact; an ending across
    two read attributes is promoted beside, asking nothing."""
    from core.services import review

    w = world()
    capture.capture_conversation(w.ctx, UID, "c1", _conversation("2026-01-10", "I live in Leeds."))
    consolidation.run_pass(w.ctx, UID, router=_Eager())
    [leeds] = [i for i in _items(w) if i.slot is not None]
    capture.capture_conversation(w.ctx, UID, "c2", _conversation("2026-02-01", "We moved to Leeds."))
    consolidation.run_pass(w.ctx, UID, router=_Eager())
    assert {i.id: i for i in _items(w)}[leeds.id].status == "active"
    [entry] = [row for row in review.list_open(w.ctx, UID) if row["would_end"]]
    assert entry["would_end"] == [{"id": leeds.id, "content": leeds.content}]
    capture.capture_conversation(w.ctx, UID, "c3", _conversation("2026-03-01", "I drive a Volvo."))
    consolidation.run_pass(w.ctx, UID, router=_Eager())
    assert {i.id: i for i in _items(w)}[leeds.id].status == "active"
    assert len([row for row in review.list_open(w.ctx, UID) if row["would_end"]]) == 1
