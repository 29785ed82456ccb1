"""The chat client on Vertex AI's OpenAI-compatible endpoint, authenticated as the function's own
service account, against two real local servers: the metadata server google-auth takes the token
from (``tests/support/metadata_server.py``) and the endpoint (``tests/support/vertex_chat_server.py``,
which accepts only the tokens that metadata server issued and answers Vertex's own error bodies).

Expectations come from the providers' documented behaviour: the token is fetched from
``instance/service-accounts/default/token`` with the cloud-platform scope and reused until
google-auth's refresh threshold before its expiry (3 min 45 s); 401 and 403 are refusals (permanent),
429 RESOURCE_EXHAUSTED and 503 UNAVAILABLE are retryable; and from the settings (the bound on model
calls per revision, the request timeout). No assertion reads a clock.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core import metering
from core.adapters.llm import ChatClient, LLMExtractor, build_extractor, build_router
from core.config import Settings
from core.domain.extraction import ExtractionSource, Segment
from core.domain.routing import RouteCandidate
from core.errors import LLMMalformedReply, LLMRejected, LLMUnavailable

if str(Path(__file__).resolve().parents[2]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.json_server import Reply  # noqa: E402
from tests.support.metadata_server import MetadataServer  # noqa: E402
from tests.support.vertex_chat_server import (  # noqa: E402
    VertexChatServer,
    completion,
    permission_denied,
    resource_exhausted,
    unauthenticated,
    unavailable,
)

MODEL = "google/gemini-2.5-flash"
SOURCE = ExtractionSource("u1", "c1", (
    Segment("s0", "Where do you live now?", "SPEAKER_01", False),
    Segment("s1", "I moved to Lisbon in March.", "SPEAKER_00", True),
))
REPLY = {"memories": [{"content": "User moved to Lisbon in March", "kind": "fact", "category": "lifestyle",
                       "subject": "user", "subject_label": None, "quotes": ["I moved to Lisbon in March"],
                       "sensitivity": []}], "action_items": [], "goals": []}


@pytest.fixture
def metadata(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[MetadataServer]:
    with MetadataServer() as server:
        server.point_google_auth(monkeypatch, str(tmp_path))
        yield server


@pytest.fixture
def vertex(metadata: MetadataServer) -> Iterator[VertexChatServer]:
    with VertexChatServer(accepted=lambda: metadata.issued) as server:
        yield server


def _settings(vertex: VertexChatServer, **changes: object) -> Settings:
    return Settings(extractor="openai", router="openai", llm_auth="google", llm_base_url=vertex.base_url,
                    llm_model=MODEL, llm_timeout_s=5.0, **changes)


def _extract(vertex: VertexChatServer, **changes: object) -> None:
    LLMExtractor(ChatClient.from_settings(_settings(vertex, **changes))).extract(SOURCE)


def test_the_service_accounts_token_is_sent_and_reused_until_near_expiry(vertex: VertexChatServer,
                                                                         metadata: MetadataServer) -> None:
    vertex.script(completion(REPLY), completion(REPLY))
    extractor = build_extractor(_settings(vertex))
    assert len(extractor.extract(SOURCE).memories) == 1
    assert len(extractor.extract(SOURCE).memories) == 1
    first, second = vertex.chat_requests()
    assert first.headers["Authorization"] == second.headers["Authorization"] == "Bearer ya29.local-1"
    assert first.body["model"] == MODEL
    assert metadata.token_requests == 1  # a token valid for an hour is fetched once
    assert metadata.token_scopes == ["https://www.googleapis.com/auth/cloud-platform"]
    assert "/computeMetadata/v1/instance/service-accounts/default/token" in metadata.paths or any(
        p.endswith(f"/service-accounts/{metadata.email}/token") for p in metadata.paths)


def test_a_token_about_to_expire_is_refreshed_before_the_next_call(vertex: VertexChatServer,
                                                                   metadata: MetadataServer) -> None:
    metadata.expires_in = 60  # inside google-auth's 3 min 45 s refresh threshold: stale at once
    vertex.script(completion(REPLY), completion(REPLY))
    extractor = build_extractor(_settings(vertex))
    extractor.extract(SOURCE)
    extractor.extract(SOURCE)
    assert [r.headers["Authorization"] for r in vertex.chat_requests()] == ["Bearer ya29.local-1",
                                                                            "Bearer ya29.local-2"]
    assert metadata.token_requests == 2


def test_an_unauthenticated_answer_is_permanent_and_names_the_credential(vertex: VertexChatServer) -> None:
    vertex.script(unauthenticated())
    with pytest.raises(LLMRejected) as refused:
        _extract(vertex)
    assert not refused.value.retryable and refused.value.code == "llm_unauthenticated"
    assert "HTTP 401" in refused.value.message and "UNAUTHENTICATED" in refused.value.message
    assert "STRATA_LLM_AUTH=google" in refused.value.message


def test_a_token_the_endpoint_does_not_accept_is_refused_as_unauthenticated(metadata: MetadataServer) -> None:
    # the endpoint knows none of the tokens
    with VertexChatServer(accepted=lambda: ()) as vertex, pytest.raises(LLMRejected) as refused:
        _extract(vertex)
    assert refused.value.code == "llm_unauthenticated" and not refused.value.retryable


def test_permission_denied_is_permanent_and_says_which_role(vertex: VertexChatServer) -> None:
    vertex.script(permission_denied(vertex.project, vertex.location))
    with pytest.raises(LLMRejected) as refused:
        _extract(vertex)
    assert not refused.value.retryable and refused.value.code == "llm_permission_denied"
    assert "PERMISSION_DENIED" in refused.value.message and "aiplatform.endpoints.predict" in refused.value.message
    assert "roles/aiplatform.user" in refused.value.message


@pytest.mark.parametrize(("reply", "status"), [(resource_exhausted(), "RESOURCE_EXHAUSTED"),
                                               (unavailable(), "UNAVAILABLE")])
def test_quota_and_unavailable_are_retryable_with_the_providers_words(vertex: VertexChatServer, reply: object,
                                                                       status: str) -> None:
    vertex.script(reply)  # type: ignore[arg-type]
    with pytest.raises(LLMUnavailable) as unavailable_error:
        _extract(vertex)
    assert unavailable_error.value.retryable and status in unavailable_error.value.message


def test_calls_tokens_and_cost_are_counted_per_unit_of_work(vertex: VertexChatServer) -> None:
    vertex.script(completion(REPLY, prompt_tokens=1000, completion_tokens=200), resource_exhausted())
    extractor = build_extractor(_settings(vertex))
    with metering.metered() as usage:
        extractor.extract(SOURCE)
        with pytest.raises(LLMUnavailable):
            extractor.extract(SOURCE)
    # Both calls count; whether an answer was usable is counted by its reader (capture, the router).
    assert (usage.calls, usage.failures, usage.prompt_tokens, usage.completion_tokens) == (2, 0, 1000, 200)
    rates = metering.PRICES_PER_MTOK[MODEL]
    assert usage.log_fields()["model_cost_usd"] == pytest.approx((1000 * rates[0] + 200 * rates[1]) / 1e6)


def test_a_model_router_failure_routes_the_batch_with_the_rules_and_counts_the_fallback(
        vertex: VertexChatServer) -> None:
    vertex.script(unavailable())
    router = build_router(_settings(vertex))
    candidate = RouteCandidate(ref="i0", content="User moved to Lisbon", subject="user", subject_label=None,
                               category="lifestyle", kind="fact", source_ids=("c1",), independent_sources=1,
                               manually_added=False, expired=False, restricted=False, neighbours=())
    with metering.metered() as usage:
        proposals = router.route([candidate])
    assert [p.item_ref for p in proposals] == ["i0"] and len(vertex.chat_requests()) == 1
    assert (usage.calls, usage.failures, usage.fallbacks) == (1, 1, 1)


def test_with_on_failure_fail_the_router_raises_instead(vertex: VertexChatServer) -> None:
    vertex.script(unavailable())
    router = build_router(_settings(vertex, llm_on_failure="fail"))
    candidate = RouteCandidate(ref="i0", content="User moved to Lisbon", subject="user", subject_label=None,
                               category="lifestyle", kind="fact", source_ids=("c1",), independent_sources=1,
                               manually_added=False, expired=False, restricted=False, neighbours=())
    with metering.metered() as usage, pytest.raises(LLMUnavailable):
        router.route([candidate])
    assert (usage.calls, usage.failures, usage.fallbacks) == (1, 1, 0)


# --------------------------------------------------------------------------- a model outage in capture
OUTAGE_DOC = {"status": "completed", "transcript_segments": [
    {"id": "s0", "text": "I live in Lisbon.", "is_user": True, "speaker": "SPEAKER_0"},
    {"id": "s1", "text": "I work as a nurse at the hospital.", "is_user": True, "speaker": "SPEAKER_0"}]}


@pytest.mark.parametrize("outage", ["unavailable", "timeout"])
def test_a_model_outage_costs_capture_the_attempt_bound_then_the_rules_capture(
        vertex: VertexChatServer, outage: str) -> None:
    """How long capture waits on a dead model is bounded by the settings: at most
    ``llm_max_attempts`` calls per revision (one per trigger delivery; an outage fails the first
    window's call), each cut off by ``llm_timeout_s``; then the rule extractor captures it."""
    from core.domain import paths
    from core.services import capture
    from tests.unit.fakes.ports import world

    bound, timeout_s = 3, 0.3
    if outage == "unavailable":
        vertex.responder = lambda body: unavailable()
    else:  # the endpoint accepts the request and never answers within the timeout
        vertex.responder = lambda body: _hang()
    settings = dict(extractor="openai", llm_auth="google", llm_base_url=vertex.base_url, llm_model=MODEL,
                    llm_timeout_s=timeout_s, llm_max_attempts=bound)
    w = world(**settings)
    extractor = build_extractor(w.ctx.settings)
    client = extractor._client  # type: ignore[attr-defined]
    assert client._http.timeout.read == client._http.timeout.connect == timeout_s  # every phase is cut off
    w.ctx._overrides["extractor"] = extractor
    w.store.put(paths.doc("u1", "conversations", "c1"), OUTAGE_DOC)
    deliveries = []
    with metering.metered() as usage:
        while len(deliveries) < 10:
            deliveries.append(capture.capture_conversation(w.ctx, "u1", "c1", OUTAGE_DOC))
            if not deliveries[-1].retry:
                break
    assert len(deliveries) == bound and len(vertex.chat_requests()) == bound
    assert (usage.calls, usage.failures, usage.fallbacks) == (bound, bound, 1)
    marker = w.store.get(paths.doc("u1", "capture_runs", "c1"))
    assert marker["extractor"]["id"] == "rules" and marker["attempts"]["count"] == bound
    assert marker["fell_back"]["reason"] == ("llm_unavailable" if outage == "unavailable" else "llm_timeout")
    assert w.store.collection("users/u1/memory_items")  # the rules captured the revision


def _hang() -> Reply:
    return Reply(delay_s=30.0, body={})  # cut short when the server stops


def test_the_reasoning_effort_is_sent_only_when_set(vertex: VertexChatServer) -> None:
    """Gemini 2.5's thinking counts against ``max_tokens``: Terraform bounds it with ``low``."""
    vertex.script(completion(REPLY), completion(REPLY))
    _extract(vertex, llm_reasoning_effort="low")
    _extract(vertex)
    bounded, default = vertex.chat_requests()
    assert bounded.body["reasoning_effort"] == "low" and "reasoning_effort" not in default.body
    assert bounded.body["max_tokens"] == default.body["max_tokens"] == 4096


@pytest.mark.parametrize("content", ["{not json", json.dumps({"memories": "not a list"})])
def test_a_reply_that_cannot_be_used_still_counts_its_call_and_tokens(vertex: VertexChatServer, content: str) -> None:
    vertex.script(completion(content, prompt_tokens=500, completion_tokens=30))
    with metering.metered() as usage, pytest.raises(LLMMalformedReply):
        _extract(vertex)
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (1, 500, 30)
