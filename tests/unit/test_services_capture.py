"""Conversation capture and its deletes on the in-memory store (no emulator). Expectations from the
domain model: every extraction enters Short-term citing the conversation; workflow rows are stored
apart from memories; extraction failure preserves prior source state; a successful reprocess
replaces the conversation's contribution (an empty one retracts it all); a conversation delete
cascades to tombstoning what only it supports; a retried capture changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from core.domain import paths
from core.domain.changes import Change
from core.domain.extraction import ExtractionResult, ExtractionSource
from core.errors import Conflict, LLMRejected, LLMUnavailable, NotFound, WritesDisabled
from core.ports import Write
from core.services import capture, conversations, reads
from tests.unit.fakes.ports import World, world

UID = "u1"
LISBON = "I live in Lisbon."
NURSE = "I work as a nurse at the hospital."
BANK = "I need to call the bank tomorrow."


def _doc(*texts: str, **extra: Any) -> dict[str, Any]:
    return {"status": "completed", **extra, "transcript_segments": [
        {"id": f"s{i}", "text": t, "is_user": True, "speaker": "SPEAKER_0"} for i, t in enumerate(texts)]}


def _capture(w: World, cid: str, doc: dict[str, Any], **kw: Any) -> capture.CaptureResult:
    w.store.put(paths.doc(UID, "conversations", cid), doc)
    return capture.capture_conversation(w.ctx, UID, cid, doc, **kw)


def _items(w: World) -> dict[str, dict[str, Any]]:
    return w.store.collection(f"users/{UID}/memory_items")


def _live(w: World) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in _items(w).items() if v["status"] == "active"}


class FailingExtractor:
    extractor_id = "failing"
    extractor_version = "1"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def extract(self, source: ExtractionSource) -> ExtractionResult:
        raise self.exc


def test_a_first_capture_creates_short_term_memories_and_workflow_rows() -> None:
    w = world()
    result = _capture(w, "c1", _doc(f"{LISBON} {NURSE}", BANK))
    assert result.skipped is None and result.created == 2 and result.action_items == 1
    live = _live(w)
    assert len(live) == 2
    for item in live.values():
        assert item["layer"] == "short_term" and item["pending_route"]
        assert item["source_ids"] == ["c1"] and item["conversation_id"] == "c1"
    assert len(w.store.collection(f"users/{UID}/action_items")) == 1  # workflow, not memory
    marker = w.store.get(paths.doc(UID, "capture_runs", "c1"))
    assert marker is not None and all(marker["jobs"].values())


def test_a_retried_capture_changes_nothing() -> None:
    w = world()
    doc = _doc(LISBON, BANK)
    _capture(w, "c1", doc)
    before = dict(w.store.docs)
    assert _capture(w, "c1", doc).skipped == "already_captured"
    assert w.store.docs == before


@pytest.mark.parametrize("doc", [{"status": "in_progress", "transcript_segments": []},
                                 {"status": "completed", "discarded": True}])
def test_an_incomplete_or_discarded_conversation_is_not_captured(doc: dict[str, Any]) -> None:
    w = world()
    assert _capture(w, "c1", doc).skipped == "not_completed"
    assert _items(w) == {}


def test_a_reprocess_replaces_the_conversation_contribution() -> None:
    w = world()
    _capture(w, "c1", _doc(LISBON, NURSE))
    result = _capture(w, "c1", _doc(LISBON))
    assert (result.kept, result.retracted, result.created) == (1, 1, 0)
    assert [v["content"] for v in _live(w).values()] == ["User lives in Lisbon"]
    gone = [v for v in _items(w).values() if v["status"] != "active"]
    assert len(gone) == 1 and gone[0]["content"] == ""


def test_an_empty_reprocess_retracts_everything_the_conversation_said() -> None:
    w = world()
    _capture(w, "c1", _doc(LISBON, NURSE))
    result = _capture(w, "c1", _doc("Hmm, okay."))
    assert result.retracted == 2 and _live(w) == {}


def test_deleting_one_conversation_leaves_what_another_conversation_said() -> None:
    w = world()
    _capture(w, "c1", _doc(LISBON))
    _capture(w, "c2", _doc(LISBON, NURSE))
    conversations.delete(w.ctx, UID, "c1")
    live = _live(w).values()
    assert sorted(v["content"] for v in live) == ["User lives in Lisbon", "User works as a nurse at the hospital"]
    assert all(v["active_source_ids"] == ["c2"] for v in live)


def test_a_transient_extraction_failure_writes_nothing_and_asks_for_a_retry() -> None:
    w = world()
    _capture(w, "c1", _doc(LISBON))
    before = dict(w.store.docs)
    w.ctx._overrides["extractor"] = FailingExtractor(LLMUnavailable("llm down"))
    result = _capture(w, "c1", _doc(LISBON, NURSE))
    assert result.retry and result.created == 0
    w.store.docs.pop(paths.doc(UID, "conversations", "c1"))
    before.pop(paths.doc(UID, "conversations", "c1"))
    assert w.store.docs == before  # prior source state preserved


def test_a_permanent_extraction_failure_keeps_prior_memories_and_records_it() -> None:
    w = world()
    _capture(w, "c1", _doc(LISBON))
    w.ctx._overrides["extractor"] = FailingExtractor(LLMRejected("refused"))
    result = _capture(w, "c1", _doc(NURSE))
    assert not result.retry and result.errors
    assert [v["content"] for v in _live(w).values()] == ["User lives in Lisbon"]
    marker = w.store.get(paths.doc(UID, "capture_runs", "c1")) or {}
    assert any(str(v).startswith("failed") for v in marker["jobs"].values())


def _legacy_row(w: World, collection: str, mid: str, cid: str) -> None:
    w.store.put(paths.doc(UID, collection, mid), {"content": f"legacy fact {mid}", "conversation_id": cid,
                                                   "created_at": w.clock.now()})


@pytest.mark.parametrize("exc", [LLMUnavailable("llm down"), LLMRejected("refused")])
def test_an_extraction_failure_keeps_the_legacy_rows_citing_the_conversation(exc: Exception) -> None:
    """Q7: extraction failure preserves prior state — the historical rows of the source too."""
    w = world()
    _capture(w, "c1", _doc(LISBON))
    _legacy_row(w, "memories", "old1", "c1")
    _legacy_row(w, "short_term", "old2", "c1")
    w.ctx._overrides["extractor"] = FailingExtractor(exc)
    _capture(w, "c1", _doc(LISBON, NURSE))
    listed = {i.id for i in reads.list_memories(w.ctx, UID, reads.ListQuery())[0]}
    assert {"old1", "old2"} <= listed
    assert w.store.get(paths.doc(UID, "memories", "old1")) is not None


def test_a_successful_capture_retracts_the_legacy_rows_citing_the_conversation() -> None:
    """Q7: a successful result replaces the source across all stores, an empty one too."""
    w = world()
    _legacy_row(w, "memories", "old1", "c1")
    _legacy_row(w, "short_term", "old2", "c1")
    _legacy_row(w, "memories", "old3", "c2")
    result = _capture(w, "c1", _doc("Hmm."))  # a first capture here, extracting nothing
    assert result.retracted == 2
    assert {i.id for i in reads.list_memories(w.ctx, UID, reads.ListQuery())[0]} == {"old3"}
    assert w.store.get(paths.doc(UID, "memories", "old1")) is None
    tombstone = _items(w)["old1"]
    assert (tombstone["status"], tombstone["content"], tombstone["deleted_by_user"]) == ("tombstoned", "", False)
    _legacy_row(w, "memories", "old4", "c2")
    assert _capture(w, "c2", _doc(LISBON)).retracted == 2  # a capture with facts, too
    assert {i.content for i in reads.list_memories(w.ctx, UID, reads.ListQuery())[0]} == {"User lives in Lisbon"}


def test_nothing_is_captured_while_the_account_is_being_deleted() -> None:
    w = world()
    w.store.put(paths.account_deletion(UID), {"state": "fenced", "generation": 1})
    assert _capture(w, "c1", _doc(LISBON)).skipped == "account_deleting"
    assert _items(w) == {}


def test_a_stale_event_after_a_wipe_is_acknowledged_without_writing() -> None:
    w = world()
    w.store.put(paths.account_deletion(UID), {"state": "completed", "generation": 1})
    doc = _doc(LISBON)
    result = capture.capture_conversation(w.ctx, UID, "c1", doc, from_event=True)  # the document is gone
    assert result.skipped == "stale_event" and _items(w) == {}
    w.store.put(paths.doc(UID, "conversations", "c1"), _doc(NURSE))  # changed since the event
    assert capture.capture_conversation(w.ctx, UID, "c1", doc, from_event=True).skipped == "stale_event"


def test_the_incident_switch_stops_capture() -> None:
    w = world()
    w.store.put(paths.CONTROLS_GLOBAL, {"writes_disabled": True})
    result = _capture(w, "c1", _doc(LISBON, BANK))
    assert _items(w) == {} and (result.retry or result.errors or result.skipped)


# ------------------------------------------------------------------------------- conversations
def test_create_reprocess_and_delete_through_the_service() -> None:
    w = world()
    cid = conversations.create(w.ctx, UID, _doc(LISBON, BANK), "ios_12345678", "ios")
    stored = w.store.get(paths.doc(UID, "conversations", cid)) or {}
    assert stored["client_device_id"] == "ios_12345678" and stored["status"] == "completed"
    result = conversations.reprocess(w.ctx, UID, cid)
    assert result.created == 1
    assert (w.store.get(paths.doc(UID, "conversations", cid)) or {}).get("reprocess_token")
    out = conversations.delete(w.ctx, UID, cid)
    assert out["deleted"] and out["cascade"]["retracted"] == 1 and out["cascade"]["workflow_removed"] == 1
    assert _live(w) == {} and w.store.get(paths.doc(UID, "conversations", cid)) is None
    assert reads.list_memories(w.ctx, UID, reads.ListQuery())[0] == []
    # The delete trigger that follows finds the cascade done and writes nothing.
    before = dict(w.store.docs)
    assert (conversations.cascade_from_trigger(w.ctx, UID, cid) or {}).get("already_done")
    assert w.store.docs == before


def test_delete_without_cascade_keeps_the_memories() -> None:
    w = world()
    _capture(w, "c1", _doc(LISBON))
    assert conversations.delete(w.ctx, UID, "c1", cascade=False) == {"deleted": True, "cascade": False}
    assert len(_live(w)) == 1
    assert conversations.cascade_from_trigger(w.ctx, UID, "c1") is None  # the caller's choice holds


def test_unknown_conversations_are_not_found_and_switches_refuse() -> None:
    w = world()
    with pytest.raises(NotFound):
        conversations.reprocess(w.ctx, UID, "nope")
    with pytest.raises(NotFound):
        conversations.delete(w.ctx, UID, "nope")
    w.store.put(paths.CONTROLS_GLOBAL, {"writes_disabled": True})
    with pytest.raises(WritesDisabled):
        conversations.create(w.ctx, UID, _doc(LISBON), None, None)


def test_a_trigger_during_an_account_wipe_does_nothing() -> None:
    w = world()
    _capture(w, "c1", _doc(LISBON))
    w.store.put(paths.account_deletion(UID), {"state": "purging", "generation": 1})
    assert conversations.cascade_from_trigger(w.ctx, UID, "c1") is None


def test_a_capture_after_a_delete_started_writes_nothing() -> None:
    w = world()
    _capture(w, "c1", _doc(LISBON))
    w.store.write(Change("test.seed", [Write("set", paths.doc(UID, "capture_runs", "c1"), {"cascade": {"state": "running"}}, merge=True)]))
    assert _capture(w, "c1", _doc(NURSE)).skipped == "conversation_deleted"
    with pytest.raises(Conflict):
        conversations.reprocess(w.ctx, UID, "c1")


# --------------------------------------------------------------------------- withdrawal revival
class _Router:
    """Promotes every candidate; a candidate about Madrid supersedes the Long-term neighbours it sees."""

    router_id = "test"
    router_version = "1"

    def route(self, candidates: list[Any]) -> list[Any]:
        from core.domain.routing import RouteProposal

        return [RouteProposal(c.ref, "promote", "test",
                              supersedes=tuple(n.ref for n in c.neighbours if "Lisbon" in (n.content or ""))
                              if "Madrid" in c.content else ()) for c in candidates]


def test_withdrawing_a_superseding_fact_brings_back_the_one_it_replaced() -> None:
    from core.services import consolidation

    w = world()
    _capture(w, "c1", _doc(LISBON))
    consolidation.run_pass(w.ctx, UID, router=_Router())
    [lisbon] = _live(w)
    w.clock.advance(days=1)  # said later: only a later statement ends a fact
    _capture(w, "c2", _doc("I live in Madrid."))
    consolidation.run_pass(w.ctx, UID, router=_Router())
    assert _items(w)[lisbon]["status"] == "superseded"
    conversations.delete(w.ctx, UID, "c2")  # the newer statement is withdrawn
    revived = _items(w)[lisbon]
    assert (revived["status"], revived["layer"], revived["superseded_by"]) == ("active", "long_term", None)
    assertion = w.store.get(paths.doc(UID, "memory_graph_assertions", lisbon)) or {}
    assert assertion.get("status") == "active"
    assert [v["content"] for v in _live(w).values()] == ["User lives in Lisbon"]


def test_a_long_term_fact_losing_one_of_two_sources_is_readmitted() -> None:
    from core.services import consolidation

    w = world()
    _capture(w, "c1", _doc(LISBON))
    _capture(w, "c2", _doc(LISBON))
    consolidation.run_pass(w.ctx, UID, router=_Router())
    [survivor] = [k for k, v in _live(w).items() if v["layer"] == "long_term"]
    before = (_items(w)[survivor]["promotion"] or {})["admission_receipt"]["revision"]
    conversations.delete(w.ctx, UID, "c1")
    item = _items(w)[survivor]
    assert item["status"] == "active" and item["layer"] == "long_term" and "c1" not in item["active_source_ids"]
    assert item["promotion"]["admission_receipt"]["revision"] == item["revision"] > before
