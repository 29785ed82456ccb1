"""Bounded model attempts in capture, on the in-memory store (issue 29). A model-backed extractor
is called at most ``llm_max_attempts`` times per conversation revision, however often the capture
is delivered; then the rule extractor captures the revision (``fall_back``) or it is recorded as
failed (``fail``). A permanent refusal or a reply whose quotes do not ground ends the model's turn
at once. Expectations come from the settings, not from the code under test."""

from __future__ import annotations

from typing import Any

import pytest

from core.adapters.rules.extractor import RuleExtractor
from core.domain import paths
from core.domain.documents import attempts_of, conversation_revision
from core.domain.extraction import Candidate, ExtractionResult, ExtractionSource
from core.errors import LLMMalformedReply, LLMRejected, StrataError
from core.services import capture, capture_status
from tests.unit.fakes.ports import World, world

UID = "u1"
DOC = {"status": "completed", "transcript_segments": [
    {"id": "s0", "text": "I live in Lisbon.", "is_user": True, "speaker": "SPEAKER_0"},
    {"id": "s1", "text": "I work as a nurse at the hospital.", "is_user": True, "speaker": "SPEAKER_0"}]}


class Model:
    """A model-backed extractor whose every call raises ``error`` (or answers ``result``)."""

    extractor_id = "openai"
    extractor_version = "1:test"
    model_backed = True

    def __init__(self, error: StrataError | None = None, result: ExtractionResult | None = None) -> None:
        self.error, self.result, self.calls = error, result, 0

    def extract(self, source: ExtractionSource) -> ExtractionResult:
        self.calls += 1
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


def _world(model: Model, **settings: Any) -> World:
    w = world(**settings)
    w.ctx._overrides["extractor"] = model
    w.store.put(paths.doc(UID, "conversations", "c1"), DOC)
    return w


def _deliver_until_acknowledged(w: World, doc: dict[str, Any], limit: int = 20) -> list[capture.CaptureResult]:
    results = []
    while len(results) < limit:
        results.append(capture.capture_conversation(w.ctx, UID, "c1", doc))
        if not results[-1].retry:
            break
    return results


def _rule_contents() -> set[str]:
    from core.domain.extraction import source_from_conversation

    return {m.content for m in RuleExtractor().extract(source_from_conversation(UID, "c1", DOC)).memories}


@pytest.mark.parametrize("bound", [1, 3, 5])
def test_malformed_replies_use_exactly_the_bound_then_the_rules_capture(bound: int) -> None:
    model = Model(LLMMalformedReply("not json"))
    w = _world(model, llm_max_attempts=bound)
    results = _deliver_until_acknowledged(w, DOC)
    assert len(results) == bound and model.calls == bound
    for _ in range(3):  # redeliveries after the acknowledgement
        assert capture.capture_conversation(w.ctx, UID, "c1", DOC).skipped == "already_captured"
    assert model.calls == bound
    live = {v["content"] for v in w.store.collection(f"users/{UID}/memory_items").values()}
    assert live == _rule_contents() and live
    marker = w.store.get(paths.doc(UID, "capture_runs", "c1"))
    assert marker["fell_back"]["reason"] == "llm_malformed_reply" and marker["attempts"]["count"] == bound
    assert marker["extractor"]["id"] == "rules"
    status = capture_status.conversation_status(w.ctx, UID, "c1")
    assert (status["state"], status["last_error_code"], status["memory_count"]) == (
        "fell_back", "llm_malformed_reply", len(live))


def test_with_fail_the_revision_is_recorded_failed_after_the_bound() -> None:
    model = Model(LLMMalformedReply("not json"))
    w = _world(model, llm_max_attempts=2, llm_on_failure="fail")
    results = _deliver_until_acknowledged(w, DOC)
    assert len(results) == 2 and model.calls == 2 and results[-1].errors
    assert w.store.collection(f"users/{UID}/memory_items") == {}
    status = capture_status.conversation_status(w.ctx, UID, "c1")
    assert (status["state"], status["last_error_code"], status["attempts"]) == ("failed", "llm_malformed_reply", 2)


def test_a_refusal_ends_the_models_turn_at_once() -> None:
    model = Model(LLMRejected("HTTP 401: bad key"))
    w = _world(model, llm_max_attempts=3)
    assert len(_deliver_until_acknowledged(w, DOC)) == 1 and model.calls == 1
    assert capture_status.conversation_status(w.ctx, UID, "c1")["last_error_code"] == "llm_rejected"


def test_a_reply_whose_quotes_do_not_ground_falls_back_instead_of_failing_the_revision() -> None:
    invented = ExtractionResult((Candidate("User drinks tea", "fact", "lifestyle", "user", None,
                                           ("I only drink tea",)),), (), (), "openai", "1:test")
    model = Model(result=invented)
    w = _world(model)
    assert len(_deliver_until_acknowledged(w, DOC)) == 1 and model.calls == 1
    status = capture_status.conversation_status(w.ctx, UID, "c1")
    assert (status["state"], status["last_error_code"]) == ("fell_back", "grounding_failed")


def test_each_revision_has_its_own_bound_and_a_good_reply_is_captured_by_the_model() -> None:
    model = Model(LLMMalformedReply("not json"))
    w = _world(model, llm_max_attempts=2)
    _deliver_until_acknowledged(w, DOC)
    good = ExtractionResult((Candidate("User lives in Lisbon", "fact", "lifestyle", "user", None,
                                       ("I live in Lisbon",)),), (), (), "openai", "1:test")
    model.error, model.result = None, good
    edited = dict(DOC, reprocess_token="t2")
    w.store.put(paths.doc(UID, "conversations", "c1"), edited)
    assert len(_deliver_until_acknowledged(w, edited)) == 1 and model.calls == 3
    status = capture_status.conversation_status(w.ctx, UID, "c1")
    assert (status["state"], status["extractor"]["id"], status["attempts"], status["last_error_code"]) == (
        "captured", "openai", 1, None)


def test_a_concurrent_delivery_cannot_take_an_attempt_already_taken() -> None:
    """Two deliveries that read the same marker: the second's reservation is refused and re-read."""
    model = Model(LLMMalformedReply("not json"))
    w = _world(model, llm_max_attempts=1)
    run_ref = paths.doc(UID, "capture_runs", "c1")
    revision = conversation_revision(DOC)
    stale = capture._ModelTurn(attempts_of(None, revision))
    assert capture._reserve_attempt(w.ctx, UID, run_ref, revision, capture._ModelTurn(stale.attempts))
    assert capture._reserve_attempt(w.ctx, UID, run_ref, revision, stale) is False
    assert w.store.get(run_ref)["attempts"]["count"] == 1
